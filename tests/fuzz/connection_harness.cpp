#include "tests/fuzz/connection_harness.hpp"

#include "config/settings.hpp"
#include "protocol/frame_encoder.hpp"
#include "protocol/frame_parser.hpp"
#include "protocol/handshake.hpp"
#include "protocol/origin.hpp"
#include "rooms/chat_hub.hpp"
#include "rooms/chat_session.hpp"
#include "rooms/worker_context.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/reply_rules.hpp"
#include "tests/fuzz/server_frames.hpp"
#include "tests/unit/rooms/fakes.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <memory>
#include <optional>
#include <utility>

namespace parley::fuzz {
namespace {

namespace http = boost::beast::http;
using json = nlohmann::json;
using protocol::close_code;
using protocol::shared_frame;
using rooms::tests::manual_executor;
using rooms::tests::recording_output;

constexpr std::int64_t fuzz_epoch = 1'700'000'000'000;

// Limits small enough for short inputs to reach them. No rate limit: the token bucket reads the
// clock, and a crash must replay the same way.
config::settings fuzz_settings() {
    config::settings s;
    s.motd = "fuzzing";
    s.max_request_header_bytes = 2048;
    s.max_message_bytes = 4096;
    s.max_text_bytes = 64;
    s.max_rooms_per_connection = 4;
    s.rate_limit_per_second = 1e9;
    s.rate_limit_burst = 1e9;
    s.max_room_members = 3;  // "crowd" is full
    s.presence_max_members = 3;
    s.history_per_room = 8;
    s.joined_history = 4;
    s.history_default_limit = 4;
    s.history_max_limit = 16;
    s.permanent_rooms = {{"lobby", "the front room"}};
    require(config::validate(s).empty(), "the fuzz settings are invalid", config::validate(s));
    return s;
}

std::string_view to_view(boost::beast::string_view s) { return {s.data(), s.size()}; }

// Makes this thread the given worker's for the scope, as each worker thread marks itself in the
// daemon (a room then serves the caller's own worker without a task).
class acting_as {
public:
    explicit acting_as(rooms::worker_context& worker) : previous_(rooms::worker_context::current()) {
        rooms::worker_context::set_current(&worker);
    }
    ~acting_as() { rooms::worker_context::set_current(previous_); }
    acting_as(const acting_as&) = delete;
    acting_as& operator=(const acting_as&) = delete;

private:
    rooms::worker_context* previous_;
};

// A hub with two workers whose tasks run when run() is called, on this thread.
class chat_world {
public:
    chat_world() : settings_(fuzz_settings()) {
        std::vector<rooms::worker_context*> pointers;
        for (std::uint32_t i = 0; i < executors_.size(); ++i) {
            contexts_.push_back(std::make_unique<rooms::worker_context>(i, executors_[i]));
            pointers.push_back(contexts_.back().get());
        }
        hub_ = std::make_unique<rooms::chat_hub>(
            settings_, rooms::make_memory_history_store(settings_.history_per_room, fuzz_epoch), pointers);
    }
    chat_world(const chat_world&) = delete;
    chat_world& operator=(const chat_world&) = delete;

    const config::settings& settings() const { return settings_; }
    rooms::chat_hub& hub() { return *hub_; }
    rooms::worker_context& worker(std::uint32_t index) { return *contexts_.at(index); }
    manual_executor& executor(std::uint32_t index) { return executors_.at(index); }

    // Runs every worker's tasks, each as that worker, until none is left anywhere.
    void run() {
        for (bool ran = true; ran;) {
            ran = false;
            for (std::uint32_t i = 0; i < executors_.size(); ++i) {
                acting_as as(*contexts_[i]);
                ran = executors_[i].run_all() > 0 || ran;
            }
        }
    }

private:
    config::settings settings_;
    std::array<manual_executor, 2> executors_;
    std::vector<std::unique_ptr<rooms::worker_context>> contexts_;
    std::unique_ptr<rooms::chat_hub> hub_;
};

// Another user, online and in its rooms before the fuzzed client connects.
class peer {
public:
    peer(chat_world& world, std::uint32_t worker, std::string_view name, std::vector<std::string_view> rooms)
        : worker_(world.worker(worker)), session_(worker_, output_), room_count_(rooms.size()) {
        acting_as as(worker_);
        session_.on_text(std::string(R"({"type":"login","user":")").append(name).append(R"("})"));
        for (std::string_view room : rooms) {
            session_.on_text(std::string(R"({"type":"join","room":")").append(room).append(R"("})"));
        }
    }
    peer(const peer&) = delete;
    peer& operator=(const peer&) = delete;

    // Forgets what the login, joins and says brought, once the world has run. Those frames are
    // not parsed: they are the same for every input, and parsing them cost time on each.
    void settle() {
        require(session_.logged_in() && session_.room_count() == room_count_, "a peer could not log in and join");
        output_.clear();
    }
    // Checks every frame received since settle(); returns those of one room, as sent.
    std::vector<std::string> check_frames(std::string_view room = {}) {
        std::vector<std::string> of_room;
        seq_order order;
        for (const shared_frame& frame : output_.frames) {
            const json message = check_text_frame(frame.view());
            order.see(message);
            if (message.value("room", "") == room) {
                of_room.emplace_back(frame.view());
            }
        }
        require(output_.closes.empty(), "a well-behaved peer was closed");
        return of_room;
    }
    std::size_t frame_count() const { return output_.frames.size(); }
    // Says each line in lobby.
    void say(int lines) {
        acting_as as(worker_);
        for (int i = 0; i < lines; ++i) {
            session_.on_text(R"({"type":"say","room":"lobby","text":"earlier"})");
        }
    }
    void leave() {
        acting_as as(worker_);
        session_.end(true);
    }

private:
    rooms::worker_context& worker_;
    recording_output output_;  // before session_: the session refers to it
    rooms::chat_session session_;
    std::size_t room_count_;
};

// The client's connection: server/http_session's request loop and upgrade, then server/
// ws_connection's reactions to frames, with each write recorded into the transcript.
class buffer_connection final : public rooms::session_output, private protocol::frame_sink {
public:
    buffer_connection(chat_world& world, connection_transcript& transcript)
        : world_(world), transcript_(transcript), parser_(world.settings().max_message_bytes) {}
    buffer_connection(const buffer_connection&) = delete;
    buffer_connection& operator=(const buffer_connection&) = delete;

    // Bytes that arrived in one read.
    void receive(std::string_view bytes) {
        acting_as as(world_.worker(0));
        if (phase_ == phase::http) {
            on_http_bytes(bytes);
        } else {
            std::string buffer(bytes);  // the worker's receive buffer: the parser unmasks in place
            consume(buffer);
        }
    }

    // The end of a pass of the worker's loop: queued frames are written, which completes a close.
    void flush() {
        if (close_queued_ && phase_ == phase::closing) {
            if (peer_closed_) {
                terminate();  // both close frames exchanged (RFC 6455 section 7.1.1)
            } else {
                phase_ = phase::draining;
            }
        }
    }

    // The client hung up.
    void end_of_input() {
        acting_as as(world_.worker(0));
        if (phase_ == phase::http && parser_in_use()) {
            // A request cut off by the end of the stream is a malformed request.
            boost::beast::error_code ec;
            http_parser_->put_eof(ec);
            if (ec) {
                respond(400, false);
            }
        }
        terminate();
    }

    bool upgraded() const { return chat_.has_value(); }
    const rooms::chat_session& chat() const { return *chat_; }

    // session_output
    void send(const shared_frame& frame) override {
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
    void close(close_code code, std::string_view reason) override { start_close(code, reason); }

private:
    enum class phase : unsigned char { http, open, closing, draining, closed };
    using request_parser = http::request_parser<http::empty_body>;

    bool parser_in_use() const { return http_parser_.has_value() && http_parser_->got_some(); }

    // http::async_read over the daemon's flat_buffer: put() what has arrived until a request is
    // complete, keeping what it has not consumed.
    void on_http_bytes(std::string_view bytes) {
        http_buffer_.append(bytes);
        while (phase_ == phase::http && !http_buffer_.empty()) {
            if (!http_parser_) {
                http_parser_.emplace();
                http_parser_->header_limit(static_cast<std::uint32_t>(world_.settings().max_request_header_bytes));
            }
            boost::beast::error_code ec;
            const std::size_t used =
                http_parser_->put(boost::asio::buffer(http_buffer_.data(), http_buffer_.size()), ec);
            http_buffer_.erase(0, used);
            if (ec == http::error::need_more) {
                if (used == 0) {
                    return;
                }
                continue;
            }
            if (ec) {
                respond(ec == http::error::header_limit ? 431 : 400, false);
                return;
            }
            if (http_parser_->is_done()) {
                route();
            }
        }
    }

    void route() {
        const auto& settings = world_.settings();
        const auto& req = http_parser_->get();
        const std::string_view target = to_view(req.target());
        const std::string_view path = target.substr(0, target.find('?'));
        const bool keep_alive = req.keep_alive();
        if (path == settings.ws_path) {
            upgrade();
            return;
        }
        const bool read_only = req.method() == http::verb::get || req.method() == http::verb::head;
        if (path == "/healthz" || path == "/readyz" || (path == "/metrics" && settings.metrics_enabled)) {
            respond(read_only ? 200 : 405, keep_alive);
            return;
        }
        respond(404, keep_alive);
    }

    void upgrade() {
        const auto& req = http_parser_->get();
        protocol::upgrade_request check_input;
        check_input.method = to_view(req.method_string());
        check_input.version = req.version();
        check_input.has_host = req.find(http::field::host) != req.end();
        check_input.upgrade = to_view(req[http::field::upgrade]);
        check_input.connection = to_view(req[http::field::connection]);
        check_input.ws_version = to_view(req[http::field::sec_websocket_version]);
        check_input.ws_key = to_view(req[http::field::sec_websocket_key]);
        const protocol::upgrade_check verdict = protocol::check_upgrade(check_input);
        if (verdict.verdict == protocol::upgrade_verdict::upgrade_required) {
            respond(426, false);
            return;
        }
        if (verdict.verdict == protocol::upgrade_verdict::bad_request) {
            respond(400, false);
            return;
        }
        if (!protocol::origin_allowed(to_view(req[http::field::origin]), to_view(req[http::field::host]),
                                      world_.settings().allowed_origins)) {
            respond(403, false);
            return;
        }
        const std::string accept = protocol::websocket_accept(check_input.ws_key);
        std::string digest;
        require(protocol::base64_decode(accept, digest) && digest.size() == 20,
                "Sec-WebSocket-Accept is not base64 of a SHA-1 digest", accept);
        transcript_.http_statuses.push_back(101);
        phase_ = phase::open;
        chat_.emplace(world_.worker(0), *this);
        // Frames the client sent right behind its request.
        std::string leftover;
        leftover.swap(http_buffer_);
        http_parser_.reset();
        if (!leftover.empty()) {
            consume(leftover);
        }
    }

    void respond(unsigned status, bool keep_alive) {
        transcript_.http_statuses.push_back(status);
        http_parser_.reset();
        if (!keep_alive) {
            phase_ = phase::closed;
        }
    }

    void consume(std::string& bytes) {
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

    // frame_sink
    void on_text(std::string_view message) override {
        if (phase_ != phase::open) {
            return;
        }
        replies_.clear();
        handling_request_ = true;
        chat_->on_text(message);
        handling_request_ = false;
        check_replies(message, chat_->user(), replies_, world_.settings());
    }
    void on_ping(std::string_view payload) override {
        if (phase_ == phase::open) {
            write_control(protocol::encode_frame(protocol::opcode::pong, payload));
        }
    }
    void on_pong(std::string_view) override {}
    void on_close(std::uint16_t code, std::string_view) override {
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

    void start_close(close_code code, std::string_view reason) {
        if (phase_ != phase::open) {
            return;
        }
        write_control(protocol::encode_close(code, reason));
        phase_ = phase::closing;
        close_queued_ = true;
        end_chat_later();
    }

    // As the daemon does: from a task of the connection's worker, never inside the chat logic's
    // own handler or a room's delivery loop.
    void end_chat_later() {
        world_.executor(0).post([this] { chat_->end(true); });
    }

    void write_control(const std::string& bytes) {
        const server_frame frame = check_server_frame(bytes);
        if (frame.opcode == 0xA) {
            ++transcript_.pongs;
        } else {
            require(!transcript_.close_sent, "a second close frame");
            const auto* p = reinterpret_cast<const unsigned char*>(frame.payload.data());
            transcript_.close_sent =
                frame.payload.size() >= 2 ? static_cast<std::uint16_t>(p[0] << 8 | p[1]) : std::uint16_t{1005};
        }
    }

    void terminate() {
        if (phase_ == phase::closed) {
            return;
        }
        phase_ = phase::closed;
        if (chat_) {
            chat_->end(true);
        }
    }

    chat_world& world_;
    connection_transcript& transcript_;
    phase phase_ = phase::http;
    std::string http_buffer_;
    std::optional<request_parser> http_parser_;
    protocol::frame_parser parser_;
    std::optional<rooms::chat_session> chat_;
    seq_order order_;
    std::vector<json> replies_;      // what the request being handled was answered
    bool handling_request_ = false;
    bool close_queued_ = false;
    bool peer_closed_ = false;
};

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
