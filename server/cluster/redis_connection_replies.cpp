// How a redis_connection reads what Redis sends (replies, pub/sub messages, subscription
// confirmations) and how a subscriber asks for its channels. The rest of the connection (connect,
// write, timers, backoff) is in redis_connection.cpp.

#include "server/cluster/redis_connection.hpp"

#include "rooms/cluster/resp_protocol.hpp"
#include "server/cluster/redis_session.hpp"
#include "server/logging.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <exception>
#include <utility>

namespace parley::cluster {

void redis_connection::subscribe(std::vector<std::string> channels, message_handler on_message) {
    if (state_ == state::stopped) {
        return;
    }
    on_message_ = std::make_shared<const message_handler>(std::move(on_message));
    subscribe(std::move(channels));
}

void redis_connection::subscribe(std::vector<std::string> channels) {
    if (state_ == state::stopped) {
        return;
    }
    subscriber_ = true;
    std::vector<std::string> fresh;
    for (std::string& channel : channels) {
        if (std::find(channels_.begin(), channels_.end(), channel) == channels_.end() &&
            std::find(fresh.begin(), fresh.end(), channel) == fresh.end()) {
            fresh.push_back(std::move(channel));
        }
    }
    if (fresh.empty()) {
        return;
    }
    channels_.insert(channels_.end(), fresh.begin(), fresh.end());
    // Before the handshake the new channels are part of it; after it they go out now (when that
    // fails the connection is going away, and the next one subscribes to them).
    if (session_ && session_->handshake_sent) {
        send_subscribe(*session_, fresh, true);
        queue_write(*session_);
    }
}

void redis_connection::unsubscribe(const std::vector<std::string>& channels) {
    std::vector<std::string> gone;
    for (const std::string& channel : channels) {
        if (auto it = std::find(channels_.begin(), channels_.end(), channel); it != channels_.end()) {
            channels_.erase(it);
            gone.push_back(channel);
        }
    }
    if (!gone.empty() && session_ && session_->handshake_sent && state_ != state::stopped) {
        send_subscribe(*session_, gone, false);
        queue_write(*session_);
    }
}

void redis_connection::send_subscribe(session& s, const std::vector<std::string>& channels, bool subscribe) {
    std::vector<std::string_view> plain;
    plain.reserve(channels.size() + 1);
    plain.emplace_back(subscribe ? "SUBSCRIBE" : "UNSUBSCRIBE");
    for (const std::string& channel : channels) {
        if (options_.sharded && options_.sharded(channel)) {
            const std::array<std::string_view, 2> one = {subscribe ? "SSUBSCRIBE" : "SUNSUBSCRIBE", channel};
            resp::append_command(s.out, one);
        } else {
            plain.emplace_back(channel);
        }
    }
    if (plain.size() > 1) {
        resp::append_command(s.out, plain);
    }
    if (subscribe) {
        s.unconfirmed += channels.size();
    }
}

void redis_connection::consume(const std::shared_ptr<session>& s) {
    while (session_ == s && s->start < s->filled) {
        const std::string_view unread(s->in.data() + s->start, s->filled - s->start);
        std::size_t length = 0;
        const auto status = s->scanner.scan(unread, length);
        if (status == resp::reply_scanner::status::incomplete) {
            break;
        }
        if (status == resp::reply_scanner::status::malformed) {
            session_failed("Redis sent bytes that are not RESP");
            return;
        }
        const std::string_view bytes = unread.substr(0, length);
        s->start += length;
        resp::pubsub_message message;
        if (subscriber_ && resp::as_message(bytes, message)) {
            // Straight from the read buffer to the handler. Answers queued before it go first.
            deliver();
            if (session_ == s && state_ != state::stopped && on_message_) {
                const std::shared_ptr<const message_handler> handler = on_message_;
                try {
                    if (*handler) {
                        (*handler)(message.channel, message.payload);
                    }
                } catch (const std::exception& ex) {
                    spdlog::error("{}",
                                  server::fields("redis callback threw").add("name", name_).add("error", ex.what()));
                }
            }
            continue;
        }
        handle_reply(*s, bytes);
    }
    if (session_ == s && s->start == s->filled) {
        s->start = s->filled = 0;
        if (s->in.size() > redis_kept_buffer) {
            std::vector<char>().swap(s->in);
        }
    }
}

void redis_connection::handle_reply(session& s, std::string_view bytes) {
    redis_reply reply = resp::parse_reply(bytes);
    if (subscriber_ && reply.is_array() && !reply.elements.empty() && reply.elements[0].is_string()) {
        const std::string& kind = reply.elements[0].text;
        if (kind == "subscribe" || kind == "ssubscribe") {
            if (s.unconfirmed > 0) {
                --s.unconfirmed;
            }
            if (state_ == state::up && on_subscribed_ && reply.elements.size() > 1) {
                // In order with the messages: answers queued before go first, as for a message.
                deliver();
                if (session_.get() == &s && state_ == state::up) {
                    const std::string channel = reply.elements[1].text;
                    const std::function<void(std::string_view)> handler = on_subscribed_;
                    try {
                        handler(channel);
                    } catch (const std::exception& ex) {
                        spdlog::error("{}", server::fields("redis callback threw").add("name", name_).add("error",
                                                                                                       ex.what()));
                    }
                }
            }
        }
        else if (kind == "sunsubscribe" && reply.elements.size() > 1 &&
                 std::find(channels_.begin(), channels_.end(), reply.elements[1].text) != channels_.end()) {
            // Redis dropped a sharded channel we still want: a Redis Cluster moved its slot away.
            report_refusal(s, "unsubscribed from " + reply.elements[1].text + " by redis (its slot moved)");
        }
        // "unsubscribe" confirmations, and "pong" in subscribed mode: nothing waits for them.
    } else if (s.expected.empty()) {
        if (reply.is_error() && s.handshake_error.empty() && state_ == state::connecting) {
            s.handshake_error = reply.text;  // a SUBSCRIBE refused (NOAUTH, a cluster's MOVED...)
            report_refusal(s, reply.text);
        } else if (reply.is_error()) {
            spdlog::warn("{}", server::fields("redis error").add("name", name_).add("error", reply.text));
            report_refusal(s, reply.text);
        }
    } else {
        expected_reply e = std::move(s.expected.front());
        s.expected.pop_front();
        switch (e.type) {
        case expected_reply::kind::command:
            ready_.push_back(event{event::kind::reply, std::move(e.callback), std::move(reply)});
            break;
        case expected_reply::kind::auth:
            if (reply.is_error()) {
                // What follows fails too (NOAUTH); this names the cause.
                s.handshake_error = "AUTH: " + reply.text;
            }
            break;
        case expected_reply::kind::ping:
            s.pong_pending = false;
            if (reply.is_error() && s.handshake_error.empty()) {
                s.handshake_error = reply.text.empty() ? std::string("error") : reply.text;
            }
            break;
        }
    }
    if (state_ != state::connecting) {
        return;
    }
    if (!s.handshake_error.empty()) {
        session_failed("Redis answered " + s.handshake_error);
    } else if (s.handshake_sent && !s.pong_pending && s.unconfirmed == 0 &&
               std::none_of(s.expected.begin(), s.expected.end(),
                            [](const expected_reply& e) { return e.type == expected_reply::kind::auth; })) {
        became_up();
    }
}

void redis_connection::report_refusal(session& s, const std::string& what) {
    if (!on_refusal_) {
        return;
    }
    deliver();  // answers queued before go first, as for a message
    if (session_.get() != &s || state_ == state::stopped) {
        return;
    }
    const std::function<void(std::string_view)> handler = on_refusal_;
    try {
        handler(what);
    } catch (const std::exception& ex) {
        spdlog::error("{}", server::fields("redis callback threw").add("name", name_).add("error", ex.what()));
    }
}

}  // namespace parley::cluster
