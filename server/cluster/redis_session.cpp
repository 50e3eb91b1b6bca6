#include "server/cluster/redis_session.hpp"

#include <algorithm>
#include <utility>

namespace parley::cluster::detail {

std::string_view text_of(const redisReply* reply) {
    if (reply == nullptr || reply->str == nullptr) {
        return {};
    }
    return {reply->str, reply->len};
}

redis_reply convert(const redisReply& from) {
    redis_reply to;
    switch (from.type) {
    case REDIS_REPLY_STRING:
        to.type = redis_reply::kind::string;
        to.text = text_of(&from);
        break;
    case REDIS_REPLY_STATUS:
        to.type = redis_reply::kind::status;
        to.text = text_of(&from);
        break;
    case REDIS_REPLY_ERROR:
        to.type = redis_reply::kind::error;
        to.text = text_of(&from);
        break;
    case REDIS_REPLY_INTEGER:
        to.type = redis_reply::kind::integer;
        to.integer = from.integer;
        break;
    case REDIS_REPLY_ARRAY:
        to.type = redis_reply::kind::array;
        to.elements.reserve(from.elements);
        for (std::size_t i = 0; i < from.elements; ++i) {
            to.elements.push_back(from.element[i] != nullptr ? convert(*from.element[i]) : redis_reply{});
        }
        break;
    default:  // REDIS_REPLY_NIL, and RESP3 types, which a RESP2 connection never gets
        break;
    }
    return to;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
        return lower(x) == lower(y);
    });
}

// hiredis files the callbacks of these apart from its reply queue (per channel, or for every

void redis_session::on_connect(const redisAsyncContext* ac, int status) noexcept {
    // On failure hiredis frees the context right after this; the cleanup hook records why.
    auto* session = static_cast<redis_session*>(ac->data);
    if (session != nullptr && status == REDIS_OK) {
        session->tcp_connected = true;
    }
}

void redis_session::on_reply(redisAsyncContext*, void* reply, void* privdata) noexcept {
    auto* session = static_cast<redis_session*>(privdata);
    if (session->pending.empty()) {
        return;  // cannot happen: one entry per command hiredis accepted
    }
    pending_command command = std::move(session->pending.front());
    session->pending.pop_front();
    if (session->owner == nullptr) {
        return;
    }
    try {
        redis_connection::event e;
        e.type = redis_connection::event::kind::reply;
        e.callback = std::move(command.callback);
        if (reply != nullptr) {
            e.reply = convert(*static_cast<const redisReply*>(reply));
        }
        session->owner->ready_.push_back(std::move(e));
    } catch (...) {
        // Out of memory: this one answer is lost (an exception must not cross hiredis's C frames).
    }
}

void redis_session::on_pong(redisAsyncContext*, void* reply, void* privdata) noexcept {
    auto* session = static_cast<redis_session*>(privdata);
    if (reply == nullptr) {
        return;  // the context is going away; the owner sees that after the hiredis call
    }
    session->pong_pending = false;
    const auto* r = static_cast<const redisReply*>(reply);
    if (r->type == REDIS_REPLY_ERROR) {
        try {
            session->handshake_error = text_of(r);
            if (session->handshake_error.empty()) {
                session->handshake_error = "error";
            }
        } catch (...) {
            session->handshake_error.clear();
            session->pong_pending = true;  // no answer, then: the connect timeout ends the attempt
        }
    }
}

void redis_session::on_auth(redisAsyncContext*, void* reply, void* privdata) noexcept {
    auto* session = static_cast<redis_session*>(privdata);
    const auto* r = static_cast<const redisReply*>(reply);
    if (r == nullptr || r->type != REDIS_REPLY_ERROR) {
        return;
    }
    try {
        // The PING or SUBSCRIBE sent after it fails too (NOAUTH); this names the cause.
        session->handshake_error = std::string("AUTH: ").append(text_of(r));
    } catch (...) {
        session->pong_pending = true;  // no answer, then: the connect timeout ends the attempt
    }
}

void redis_session::on_subscription(redisAsyncContext*, void* reply, void* privdata) noexcept {
    auto* session = static_cast<redis_session*>(privdata);
    const auto* r = static_cast<const redisReply*>(reply);
    // hiredis calls each channel's callback with NULL when it frees the context: nothing to do.
    if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements < 3) {
        return;
    }
    const std::string_view type = text_of(r->element[0]);
    if (equals_ignoring_case(type, "subscribe")) {
        if (session->unconfirmed > 0) {
            --session->unconfirmed;
        }
    } else if (equals_ignoring_case(type, "message") && session->owner != nullptr) {
        try {
            redis_connection::event e;
            e.type = redis_connection::event::kind::message;
            e.channel = text_of(r->element[1]);
            e.payload = text_of(r->element[2]);
            session->owner->ready_.push_back(std::move(e));
        } catch (...) {
            // Out of memory: the message is lost, as Redis would drop it for a slow subscriber.
        }
    }
}

}  // namespace parley::cluster::detail
