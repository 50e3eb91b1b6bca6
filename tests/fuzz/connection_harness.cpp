#include "tests/fuzz/connection_harness.hpp"

#include "tests/fuzz/buffer_connection.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/fuzz_world.hpp"

#include <string>
#include <utility>
#include <vector>

namespace parley::fuzz {
namespace {

// Only the peers are online and only their rooms exist, with them alone as members; the sessions
// alive are theirs and `extra` more on worker 0.
void require_only_peers_left(chat_world& world, std::size_t extra) {
    auto& hub = world.hub();
    require(hub.users().names() == std::vector<std::string>{"bob", "carol", "dave"},
            "users left online after a disconnect");
    const std::vector<std::pair<std::string, std::size_t>> expected{{"crowd", 3}, {"lobby", 2}};
    require(hub.rooms().list() == expected, "rooms or members left after a disconnect");
    const auto lobby = hub.rooms().find("lobby");
    const auto crowd = hub.rooms().find("crowd");
    require(world.worker(0).local_members(lobby.get()) == 1 && world.worker(1).local_members(lobby.get()) == 1 &&
                world.worker(0).local_members(crowd.get()) == 1 && world.worker(1).local_members(crowd.get()) == 2,
            "worker member lists left after a disconnect");
    require(world.worker(0).session_count() == 1 + extra && world.worker(1).session_count() == 2,
            "sessions left after a disconnect");
}

}  // namespace

connection_transcript run_connection(std::string_view input) {
    connection_transcript transcript;
    chat_world world;
    peer carol(world, 0, "carol", {"lobby", "crowd"});
    peer bob(world, 1, "bob", {"lobby", "crowd"});
    peer dave(world, 1, "dave", {"crowd"});
    // More than the room retains (history_per_room), so history and `after` meet retention and
    // their limits from the first request on.
    carol.say(5);
    bob.say(4);
    world.run();
    carol.settle();
    bob.settle();
    dave.settle();

    {
        buffer_connection connection(world, transcript);
        const std::size_t piece = input.empty() ? 0 : static_cast<unsigned char>(input[0]);
        std::string_view stream = input.empty() ? input : input.substr(1);
        while (!stream.empty()) {
            const std::size_t take = piece == 0 ? stream.size() : std::min(piece, stream.size());
            connection.receive(stream.substr(0, take));
            stream.remove_prefix(take);
            world.run();
            connection.flush();
            world.run();
        }
        connection.end_of_input();
        world.run();
        if (connection.upgraded()) {
            require(connection.chat().room_count() == 0, "an ended session is still in rooms");
        }
        require_only_peers_left(world, connection.upgraded() ? 1 : 0);
    }
    require_only_peers_left(world, 0);

    // Members throughout saw their rooms' events as the same frames in the same order.
    require(carol.check_frames("lobby") == bob.check_frames("lobby"), "carol and bob saw lobby differently");
    const auto crowd = dave.check_frames("crowd");
    require(carol.check_frames("crowd") == crowd && bob.check_frames("crowd") == crowd,
            "the members of crowd saw it differently");
    transcript.peer_frames = carol.frame_count() + bob.frame_count() + dave.frame_count();

    carol.leave();
    bob.leave();
    dave.leave();
    world.run();
    require(world.hub().users().size() == 0, "users online after everyone left");
    const auto rooms = world.hub().rooms().list();
    require(rooms.size() == 1 && rooms[0].first == "lobby" && rooms[0].second == 0,
            "a room other than the permanent one outlived its members");
    return transcript;
}

}  // namespace parley::fuzz
