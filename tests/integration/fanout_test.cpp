// Fan-out under load: 200 clients in 20 rooms, several senders per room; every member gets
// every message of its room exactly once, in seq order.
#include "test_support.hpp"

#include <mutex>

namespace parley::integration {
namespace {

constexpr int room_count = 20;
constexpr int members_per_room = 10;
constexpr int senders_per_room = 3;
constexpr int messages_per_sender = 30;
constexpr int messages_per_room = senders_per_room * messages_per_sender;
constexpr int driver_threads = 4;

class FanoutTest : public parley_test {};

std::string room_name(int room) {
    return "room" + std::to_string(room);
}

std::string user_name(int room, int member) {
    return "u" + std::to_string(room) + "_" + std::to_string(member);
}

std::string text_of(int room, int sender, int n) {
    return room_name(room) + " from " + std::to_string(sender) + " #" + std::to_string(n);
}

// Reads one member's messages of its room: exactly the expected set, seq 1..messages_per_room in order, and
// each sender's messages in the order it sent them. Other message types are skipped. Returns
// what went wrong, or an empty string.
std::string check_member(ws_client& client, int room, int member) {
    const std::string who = user_name(room, member) + ": ";
    std::vector<int> next_from_sender(senders_per_room, 0);
    for (int expected_seq = 1; expected_seq <= messages_per_room;) {
        const json m = next_message(client, milliseconds(10000));
        const std::string type = m.value("type", "");
        if (type == "error") {
            return who + "error " + m.dump();
        }
        if (type != "message") {
            continue;
        }
        if (m.value("room", "") != room_name(room) || m["seq"] != expected_seq) {
            return who + "expected seq " + std::to_string(expected_seq) + " of " + room_name(room) + ", got " +
                   m.dump();
        }
        int sender = -1;
        for (int s = 0; s < senders_per_room; ++s) {
            if (m.value("from", "") == user_name(room, s)) {
                sender = s;
            }
        }
        if (sender < 0 || m.value("text", "") != text_of(room, sender, next_from_sender[sender]++)) {
            return who + "unexpected message " + m.dump();
        }
        ++expected_seq;
    }
    return {};
}

TEST_F(FanoutTest, EveryMemberGetsEveryMessageOnceInOrder) {
    std::vector<std::vector<ws_client>> rooms(room_count);
    for (int room = 0; room < room_count; ++room) {
        for (int member = 0; member < members_per_room; ++member) {
            rooms[room].push_back(login(user_name(room, member)));
            join_room(rooms[room].back(), room_name(room));
        }
    }
    const auto started = std::chrono::steady_clock::now();

    std::mutex failures_mutex;
    std::vector<std::string> failures;
    auto drive = [&](int first_room) {
        try {
            // Senders of all this driver's rooms interleave, so rooms are busy at the same time.
            for (int n = 0; n < messages_per_sender; ++n) {
                for (int room = first_room; room < room_count; room += driver_threads) {
                    for (int s = 0; s < senders_per_room; ++s) {
                        rooms[room][s].send_json(
                            {{"type", "say"}, {"room", room_name(room)}, {"text", text_of(room, s, n)}});
                    }
                }
            }
            for (int room = first_room; room < room_count; room += driver_threads) {
                std::string problem;
                for (int member = 0; member < members_per_room && problem.empty(); ++member) {
                    problem = check_member(rooms[room][member], room, member);
                }
                // Exactly once: a marker said after all messages were delivered must be the very next
                // message every member gets, so no duplicate is still on its way.
                ws_client& last = rooms[room][members_per_room - 1];
                if (problem.empty()) {
                    last.send_json({{"type", "say"}, {"room", room_name(room)}, {"text", "end"}});
                }
                for (int member = 0; member < members_per_room && problem.empty(); ++member) {
                    const json m = next_message(rooms[room][member], milliseconds(10000));
                    if (m.value("text", "") != "end" || m["seq"] != messages_per_room + 1) {
                        problem = user_name(room, member) + ": expected the end marker (seq 31), got " + m.dump();
                    }
                }
                if (!problem.empty()) {
                    std::lock_guard lock(failures_mutex);
                    failures.push_back(problem);
                }
            }
        } catch (const std::exception& e) {
            std::lock_guard lock(failures_mutex);
            failures.emplace_back(e.what());
        }
    };
    std::vector<std::thread> drivers;
    for (int t = 0; t < driver_threads; ++t) {
        drivers.emplace_back(drive, t);
    }
    for (std::thread& driver : drivers) {
        driver.join();
    }
    for (const std::string& failure : failures) {
        ADD_FAILURE() << failure;
    }
    const auto elapsed = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
    RecordProperty("fanout_ms", static_cast<int>(elapsed.count()));
}

}  // namespace
}  // namespace parley::integration
