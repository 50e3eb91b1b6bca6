#include "good_room.hpp"

#include <poll.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace parley::soak {

using integration::json;

namespace {

// The room's messages and acks carry seq as an integer; anything else is the server's fault.
std::int64_t seq_of(const json& message) {
    auto it = message.find("seq");
    return it != message.end() && it->is_number_integer() ? it->get<std::int64_t>() : -1;
}

std::string string_field(const json& message, const char* key) {
    auto it = message.find(key);
    return it != message.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

// The reply to the request with id `id`, skipping anything else; throws when none comes.
json reply_to(integration::ws_client& client, const json& id, const std::string& what) {
    auto reply = client.recv_until([&id](const json& m) { return m.contains("re") && m["re"] == id; },
                                   milliseconds(10000));
    if (!reply) {
        throw std::runtime_error(what + ": no reply");
    }
    return *reply;
}

}  // namespace

good_room::good_room(std::uint16_t port, std::size_t index, std::size_t members, std::string source_address,
                     milliseconds say_interval, milliseconds history_interval, std::size_t history_limit)
    : port_(port),
      index_(index),
      name_("soak-" + std::to_string(index)),
      source_address_(std::move(source_address)),
      say_interval_(say_interval),
      history_interval_(history_interval),
      history_limit_(history_limit),
      member_count_(members),
      rng_(static_cast<std::mt19937::result_type>(index * 7919 + 17)),
      // A message frame of about 200 bytes, like a line of chat.
      padding_(80, '.') {
    members_.reserve(members);
}

void good_room::connect() {
    for (std::size_t i = 0; i < member_count_; ++i) {
        // Each TCP connection is made just before its upgrade: the daemon drops one that sends
        // no request within its (short) handshake timeout.
        std::string user = "good-" + std::to_string(index_) + "-" + std::to_string(i);
        member& m = members_.emplace_back(integration::ws_client(port_, {.source_address = source_address_}),
                                          std::move(user));
        m.next_n.assign(member_count_, 1);
        m.client.upgrade();
        m.client.send_json({{"type", "login"}, {"user", m.user}, {"id", "login"}});
        const json welcome = reply_to(m.client, "login", m.user + " login");
        if (welcome.value("type", "") != "welcome") {
            throw std::runtime_error(m.user + " login failed: " + welcome.dump());
        }
        m.client.send_json({{"type", "join"}, {"room", name_}, {"id", "join"}});
        const json joined = reply_to(m.client, "join", m.user + " join");
        if (joined.value("type", "") != "joined") {
            throw std::runtime_error(m.user + " join failed: " + joined.dump());
        }
        // The next message is the one after the newest the joined reply carried (none yet in a
        // fresh room, so seq 1).
        const auto history = joined.find("history");
        m.last_seq = history != joined.end() && history->is_array() && !history->empty() ? seq_of(history->back()) : 0;
        max_seq_ = std::max(max_seq_, m.last_seq);
    }
}

void good_room::run(const std::atomic<bool>& chatting, milliseconds drain_timeout) {
    std::uniform_int_distribution<int> phase(0, static_cast<int>(say_interval_.count()));
    std::uniform_int_distribution<int> history_phase(0, static_cast<int>(history_interval_.count()));
    const auto start = clock::now();
    for (member& m : members_) {
        m.next_say = start + milliseconds(phase(rng_));  // spread over one interval
        m.next_history = start + milliseconds(history_phase(rng_));
    }
    std::vector<pollfd> fds(members_.size());
    bool draining = false;
    clock::time_point deadline{};
    for (;;) {
        const auto now = clock::now();
        if (!draining && !chatting.load(std::memory_order_acquire)) {
            draining = true;
            deadline = now + drain_timeout;
        }
        if (!draining) {
            for (member& m : members_) {
                if (!m.gone && now >= m.next_say) {
                    say(m, now);
                }
                if (!m.gone && now >= m.next_history) {
                    ask_history(m, now);
                }
            }
        } else if (drained()) {
            break;
        } else if (now >= deadline) {
            problem(members_.front(), "the room did not settle within the drain timeout");
            break;
        }
        for (std::size_t i = 0; i < members_.size(); ++i) {
            fds[i] = {members_[i].gone ? -1 : members_[i].client.fd(), POLLIN, 0};
        }
        if (::poll(fds.data(), fds.size(), 10) > 0) {
            for (std::size_t i = 0; i < members_.size(); ++i) {
                if (fds[i].revents != 0 && !members_[i].gone) {
                    read_all(members_[i]);
                }
            }
        }
    }
    for (member& m : members_) {
        if (m.gone) {
            continue;
        }
        if (m.history_unanswered != 0) {
            problem(m, std::to_string(m.history_unanswered) + " history requests never answered");
        }
        if (!m.unacked.empty()) {
            problem(m, std::to_string(m.unacked.size()) + " says never acked (first n=" +
                           std::to_string(m.unacked.begin()->first) + ")");
        }
        if (m.last_seq != max_seq_) {
            problem(m, "ended at seq " + std::to_string(m.last_seq) + " of " + std::to_string(max_seq_));
        }
    }
}

void good_room::say(member& m, clock::time_point now) {
    const std::uint32_t n = ++m.said;
    std::string text = std::to_string(n);
    text.append(" from ");
    text.append(m.user);
    text.push_back(' ');
    text.append(padding_);
    try {
        m.client.send_json({{"type", "say"}, {"room", name_}, {"text", text}, {"id", n}});
    } catch (const std::exception& e) {
        problem(m, std::string("say failed: ") + e.what());
        m.gone = true;
        return;
    }
    m.unacked.emplace(n, now);
    ++says_;
    // The next say one interval later, give or take a fifth, never in a burst to catch up: a
    // well-behaved client stays far below the rate limit even after this thread was descheduled.
    std::uniform_real_distribution<double> jitter(0.8, 1.2);
    const auto step = std::chrono::duration_cast<clock::duration>(say_interval_ * jitter(rng_));
    m.next_say = std::max(m.next_say + step, now + step / 2);
}

void good_room::read_all(member& m) {
    try {
        // A zero timeout takes what has arrived and never waits.
        while (auto message = m.client.recv_json(milliseconds(0))) {
            on_message(m, *message);
        }
    } catch (const std::exception& e) {
        problem(m, std::string("unreadable server data: ") + e.what());
        m.gone = true;
        return;
    }
    if (m.client.close_code()) {
        problem(m, "closed by the server with code " + std::to_string(*m.client.close_code()));
        m.gone = true;
    } else if (m.client.eof()) {
        problem(m, "the server ended the TCP connection");
        m.gone = true;
    }
}

void good_room::on_message(member& m, const json& message) {
    const std::string type = string_field(message, "type");
    if (type == "message") {
        on_chat(m, message);
    } else if (type == "ack") {
        on_ack(m, message);
    } else if (type == "history") {
        on_history(m, message);
    } else if (type == "presence" || type == "system" || type == "typing") {
        // Hostile clients join, leave and type in the busiest room.
        ++other_events_;
    } else {
        problem(m, "unexpected " + message.dump());
    }
}

void good_room::on_chat(member& m, const json& message) {
    const std::int64_t seq = seq_of(message);
    if (string_field(message, "room") != name_ || seq <= 0) {
        problem(m, "malformed message " + message.dump());
        return;
    }
    if (seq != m.last_seq + 1) {
        problem(m, "seq " + std::to_string(seq) + " after " + std::to_string(m.last_seq) +
                       (seq <= m.last_seq ? " (duplicate or reordered)" : " (gap)"));
    }
    m.last_seq = std::max(m.last_seq, seq);
    max_seq_ = std::max(max_seq_, seq);
    deliveries_.fetch_add(1, std::memory_order_relaxed);

    const std::string from = string_field(message, "from");
    const std::int32_t sender = sender_index(from);
    if (sender == room_ledger::hostile) {
        ++hostile_deliveries_;
    } else {
        const std::string text = string_field(message, "text");
        std::uint32_t n = 0;
        std::from_chars(text.data(), text.data() + text.size(), n);
        std::uint32_t& expected = m.next_n[static_cast<std::size_t>(sender)];
        if (n != expected) {
            problem(m, "from " + from + " got message " + std::to_string(n) + ", expected " + std::to_string(expected));
        }
        expected = n + 1;
    }
    if (!record(message, seq)) {
        problem(m, "seq " + std::to_string(seq) + " carries a different message than others saw: " + message.dump());
    }
}

bool good_room::record(const json& message, std::int64_t seq) {
    const std::int32_t sender = sender_index(string_field(message, "from"));
    std::uint32_t n = 0;
    if (sender != room_ledger::hostile) {
        const std::string text = string_field(message, "text");
        std::from_chars(text.data(), text.data() + text.size(), n);
    }
    return ledger_.record(seq, sender, n);
}

void good_room::ask_history(member& m, clock::time_point now) {
    const std::string id = "h" + std::to_string(++m.histories);
    try {
        m.client.send_json({{"type", "history"}, {"room", name_}, {"limit", history_limit_}, {"id", id}});
    } catch (const std::exception& e) {
        problem(m, std::string("history request failed: ") + e.what());
        m.gone = true;
        return;
    }
    ++m.history_unanswered;
    std::uniform_real_distribution<double> jitter(0.8, 1.2);
    m.next_history = now + std::chrono::duration_cast<clock::duration>(history_interval_ * jitter(rng_));
}

void good_room::on_history(member& m, const json& reply) {
    const auto found = reply.find("messages");
    if (string_field(reply, "room") != name_ || found == reply.end() || !found->is_array() ||
        found->size() > history_limit_ || m.history_unanswered == 0) {
        problem(m, "malformed or unrequested history reply: " + reply.dump().substr(0, 200));
        return;
    }
    --m.history_unanswered;
    ++history_replies_;
    // Oldest first, one seq after another, each the message every member saw at that seq.
    std::int64_t previous = 0;
    for (const json& message : *found) {
        const std::int64_t seq = seq_of(message);
        if (seq <= 0 || (previous != 0 && seq != previous + 1)) {
            problem(m, "history reply out of order: seq " + std::to_string(seq) + " after " + std::to_string(previous));
            return;
        }
        previous = seq;
        if (!record(message, seq)) {
            problem(m, "history holds another message at seq " + std::to_string(seq) + " than was delivered");
        }
    }
}

void good_room::on_ack(member& m, const json& message) {
    const std::int64_t seq = seq_of(message);
    auto re = message.find("re");
    if (string_field(message, "room") != name_ || seq <= 0 || re == message.end() || !re->is_number_unsigned()) {
        problem(m, "malformed ack " + message.dump());
        return;
    }
    const auto n = re->get<std::uint32_t>();
    if (m.unacked.erase(n) != 1) {
        problem(m, "ack for a say never sent or acked twice: " + message.dump());
    }
    ++acks_;
    max_seq_ = std::max(max_seq_, seq);
    const auto self = static_cast<std::int32_t>(&m - members_.data());
    if (!ledger_.record(seq, self, n)) {
        problem(m, "ack of say " + std::to_string(n) + " names seq " + std::to_string(seq) +
                       ", which carried another message");
    }
}

bool good_room::drained() const {
    return std::all_of(members_.begin(), members_.end(), [this](const member& m) {
        return m.gone || (m.unacked.empty() && m.history_unanswered == 0 && m.last_seq == max_seq_);
    });
}

std::int32_t good_room::sender_index(const std::string& user) const {
    std::string prefix = "good-" + std::to_string(index_);
    prefix.push_back('-');
    if (!user.starts_with(prefix)) {
        return room_ledger::hostile;
    }
    std::size_t i = 0;
    const char* first = user.data() + prefix.size();
    const char* last = user.data() + user.size();
    auto [end, ec] = std::from_chars(first, last, i);
    if (ec != std::errc{} || end != last || i >= member_count_) {
        return room_ledger::hostile;
    }
    return static_cast<std::int32_t>(i);
}

void good_room::problem(const member& m, const std::string& what) {
    problem_count_.fetch_add(1, std::memory_order_relaxed);
    if (problems_.size() < 20) {
        std::string line = m.user;
        line.append(": ");
        line.append(what);
        problems_.push_back(std::move(line));
    }
}

good_room_report good_room::report() const {
    good_room_report r;
    r.room = name_;
    r.members = member_count_;
    r.members_left = static_cast<std::size_t>(
        std::count_if(members_.begin(), members_.end(), [](const member& m) { return !m.gone; }));
    r.says = says_;
    r.acks = acks_;
    r.deliveries = deliveries_.load();
    r.hostile_deliveries = hostile_deliveries_;
    r.other_events = other_events_;
    r.history_replies = history_replies_;
    r.final_seq = max_seq_;
    r.problem_count = problem_count_.load();
    r.problems = problems_;
    return r;
}

}  // namespace parley::soak
