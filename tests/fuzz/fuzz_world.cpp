#include "tests/fuzz/fuzz_world.hpp"

#include "rooms/history/memory_history_store.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/server_frames.hpp"

namespace parley::fuzz {

namespace {
constexpr std::int64_t fuzz_epoch = 1'700'000'000'000;
}  // namespace

// No rate limit: the token bucket reads the clock, and a crash must replay the same way.
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

acting_as::acting_as(rooms::worker_context& worker) : previous_(rooms::worker_context::current()) {
    rooms::worker_context::set_current(&worker);
}

acting_as::~acting_as() { rooms::worker_context::set_current(previous_); }

chat_world::chat_world() : settings_(fuzz_settings()) {
    std::vector<rooms::worker_context*> pointers;
    for (std::uint32_t i = 0; i < executors_.size(); ++i) {
        contexts_.push_back(std::make_unique<rooms::worker_context>(i, executors_[i]));
        pointers.push_back(contexts_.back().get());
    }
    hub_ = std::make_unique<rooms::chat_hub>(
        settings_, rooms::make_memory_history_store(settings_.history_per_room, fuzz_epoch), pointers);
}

void chat_world::run() {
    for (bool ran = true; ran;) {
        ran = false;
        for (std::uint32_t i = 0; i < executors_.size(); ++i) {
            acting_as as(*contexts_[i]);
            ran = executors_[i].run_all() > 0 || ran;
        }
    }
}

peer::peer(chat_world& world, std::uint32_t worker, std::string_view name, std::vector<std::string_view> rooms)
    : worker_(world.worker(worker)), session_(worker_, output_), room_count_(rooms.size()) {
    acting_as as(worker_);
    session_.on_text(std::string(R"({"type":"login","user":")").append(name).append(R"("})"));
    for (std::string_view room : rooms) {
        session_.on_text(std::string(R"({"type":"join","room":")").append(room).append(R"("})"));
    }
}

void peer::say(int lines) {
    acting_as as(worker_);
    for (int i = 0; i < lines; ++i) {
        session_.on_text(R"({"type":"say","room":"lobby","text":"earlier"})");
    }
}

void peer::settle() {
    require(session_.logged_in() && session_.room_count() == room_count_, "a peer could not log in and join");
    output_.clear();
}

std::vector<std::string> peer::check_frames(std::string_view room) const {
    std::vector<std::string> of_room;
    seq_order order;
    for (const protocol::shared_frame& frame : output_.frames) {
        const nlohmann::json message = check_text_frame(frame.view());
        order.see(message);
        if (message.value("room", "") == room) {
            of_room.emplace_back(frame.view());
        }
    }
    require(output_.closes.empty(), "a well-behaved peer was closed");
    return of_room;
}

void peer::leave() {
    acting_as as(worker_);
    session_.end(true);
}

}  // namespace parley::fuzz
