#include "tests/fuzz/buffer_connection.hpp"

#include "protocol/frame_encoder.hpp"
#include "protocol/handshake.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/reply_rules.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

namespace parley::fuzz {

namespace http = boost::beast::http;
using json = nlohmann::json;
using protocol::close_code;

buffer_connection::buffer_connection(chat_world& world, connection_transcript& transcript)
    : world_(world), transcript_(transcript), parser_(world.settings().max_message_bytes) {}

void buffer_connection::receive(std::string_view bytes) {
    acting_as as(world_.worker(0));
    if (phase_ == phase::http) {
        on_http_bytes(bytes);
    } else {
        std::string buffer(bytes);  // the worker's receive buffer: the parser unmasks in place
        consume(buffer);
    }
}

void buffer_connection::flush() {
    if (close_queued_ && phase_ == phase::closing) {
        if (peer_closed_) {
            terminate();  // both close frames exchanged (RFC 6455 section 7.1.1)
        } else {
            phase_ = phase::draining;
        }
    }
}

void buffer_connection::end_of_input() {
    acting_as as(world_.worker(0));
    if (phase_ == phase::http && http_parser_ && http_parser_->got_some()) {
        // A request cut off by the end of the stream is a malformed request.
        boost::beast::error_code ec;
        http_parser_->put_eof(ec);
        if (ec) {
            respond(400, false);
        }
    }
    terminate();
}

void buffer_connection::send(const protocol::shared_frame& frame) {
    if (phase_ != phase::open) {
        return;
    }
    json message = check_text_frame(frame.view());
    order_.see(message);
    if (handling_request_) {
        replies_.push_back(message);
    }
    std::string type = message["type"].get<std::string>();
    if (type == "error") {
        type.append(":").append(message["code"].get<std::string>());
    }
    transcript_.replies.push_back(std::move(type));
}

void buffer_connection::close(close_code code, std::string_view reason) { start_close(code, reason); }

// http::async_read over the daemon's flat_buffer: put() what has arrived until a request is
// complete, keeping what it has not consumed.
void buffer_connection::on_http_bytes(std::string_view bytes) {
    http_buffer_.append(bytes);
    while (phase_ == phase::http && !http_buffer_.empty()) {
        if (!http_parser_) {
            http_parser_.emplace();
            http_parser_->header_limit(static_cast<std::uint32_t>(world_.settings().max_request_header_bytes));
        }
        boost::beast::error_code ec;
        const std::size_t used = http_parser_->put(boost::asio::buffer(http_buffer_.data(), http_buffer_.size()), ec);
        http_buffer_.erase(0, used);
        if (ec == http::error::need_more) {
            if (used == 0) {
                return;
            }
            continue;
        }
        if (ec) {
            answer(server::route_parse_error(ec));
            return;
        }
        if (http_parser_->is_done()) {
            answer(server::route_request(server::view_of(http_parser_->get()), std::nullopt, *this));
        }
    }
}

void buffer_connection::answer(const server::route_decision& decision) {
    if (decision.kind == server::route_kind::upgrade) {
        upgrade(decision);
        return;
    }
    respond(static_cast<unsigned>(decision.status), decision.keep_alive);
}

// What http_session does after the 101, then what ws_connection::start does with the bytes
// behind the request.
void buffer_connection::upgrade(const server::route_decision& decision) {
    const std::string_view accept = decision.header("Sec-WebSocket-Accept");
    std::string digest;
    require(protocol::base64_decode(accept, digest) && digest.size() == 20,
            "Sec-WebSocket-Accept is not base64 of a SHA-1 digest", accept);
    transcript_.http_statuses.push_back(101);
    phase_ = phase::open;
    chat_.emplace(world_.worker(0), *this);
    std::string leftover;  // frames the client sent right behind its request
    leftover.swap(http_buffer_);
    http_parser_.reset();
    if (!leftover.empty()) {
        consume(leftover);
    }
}

const config::settings& buffer_connection::settings() const { return world_.settings(); }

server::admin_reply buffer_connection::admin(http::verb method, std::string_view path, std::string_view authorization,
                                             std::string_view body) {
    return server::handle_admin(method, path, authorization, body, world_.hub(), world_.settings());
}

void buffer_connection::respond(unsigned status, bool keep_alive) {
    transcript_.http_statuses.push_back(status);
    http_parser_.reset();
    if (!keep_alive) {
        phase_ = phase::closed;
    }
}

void buffer_connection::consume(std::string& bytes) {
    if (phase_ == phase::closed) {
        return;
    }
    parser_.set_max_message(world_.settings().max_message_bytes);
    const protocol::parse_result result = parser_.feed(bytes.data(), bytes.size(), *this);
    if (result.ok || phase_ != phase::open) {
        return;
    }
    start_close(result.code, result.reason);
}

void buffer_connection::on_text(std::string_view message) {
    if (phase_ != phase::open) {
        return;
    }
    replies_.clear();
    handling_request_ = true;
    chat_->on_text(message);
    handling_request_ = false;
    check_replies(message, chat_->user(), replies_, world_.settings());
}

void buffer_connection::on_ping(std::string_view payload) {
    if (phase_ == phase::open) {
        write_control(protocol::encode_frame(protocol::opcode::pong, payload));
    }
}

void buffer_connection::on_pong(std::string_view) {}

void buffer_connection::on_close(std::uint16_t code, std::string_view) {
    if (phase_ != phase::open) {
        peer_closed_ = true;
        if (phase_ == phase::draining) {
            terminate();
        }
        return;
    }
    // Echo the client's status; an empty close is answered with an empty close.
    write_control(code == 1005 ? protocol::encode_frame(protocol::opcode::close, {})
                               : protocol::encode_close(static_cast<close_code>(code)));
    phase_ = phase::closing;
    peer_closed_ = true;
    close_queued_ = true;
    end_chat_later();
}

void buffer_connection::start_close(close_code code, std::string_view reason) {
    if (phase_ != phase::open) {
        return;
    }
    write_control(protocol::encode_close(code, reason));
    phase_ = phase::closing;
    close_queued_ = true;
    end_chat_later();
}

// As the daemon does: from a task of the connection's worker, never inside the chat logic's own
// handler or a room's delivery loop.
void buffer_connection::end_chat_later() {
    world_.executor(0).post([this] { chat_->end(true); });
}

void buffer_connection::write_control(const std::string& bytes) {
    const server_frame frame = check_server_frame(bytes);
    if (frame.opcode == 0xA) {
        ++transcript_.pongs;
        return;
    }
    require(!transcript_.close_sent, "a second close frame");
    const auto* p = reinterpret_cast<const unsigned char*>(frame.payload.data());
    transcript_.close_sent =
        frame.payload.size() >= 2 ? static_cast<std::uint16_t>(p[0] << 8 | p[1]) : std::uint16_t{1005};
}

void buffer_connection::terminate() {
    if (phase_ == phase::closed) {
        return;
    }
    phase_ = phase::closed;
    if (chat_) {
        chat_->end(true);
    }
}

}  // namespace parley::fuzz
