#pragma once

#include "config/settings.hpp"
#include "protocol/token_keys.hpp"
#include "protocol/request.hpp"
#include "protocol/shared_frame.hpp"
#include "registry/session_handle.hpp"
#include "rooms/room_access.hpp"
#include "rooms/session_output.hpp"
#include "rooms/worker_counters.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace parley::rooms {

class chat_hub;

class chat_session;
class room;

// The chat state that belongs to one worker thread: its sessions by id (for dms posted to it)
// and, per room, which of its sessions are members. A room posts one task per broadcast to each
// worker with members; the task walks this worker's list for the room, so no per-member work
// crosses threads and no lock guards these maps.
// It also holds the worker's own snapshot of the settings (replaced by a posted task when the
// configuration is reloaded, so reading a limit takes no lock and no shared atomic) and the
// worker's counters for /metrics.
// Thread: every method except executor(), index() and counters() runs on the worker's own thread.
class worker_context {
public:
    worker_context(std::uint32_t index, worker_executor& executor) : index_(index), executor_(executor) {}
    worker_context(const worker_context&) = delete;
    worker_context& operator=(const worker_context&) = delete;

    std::uint32_t index() const { return index_; }
    worker_executor& executor() { return executor_; }
    // The hub this worker serves (set by the hub's constructor): sessions reach it from here
    // instead of each keeping a pointer of its own.
    chat_hub& hub() const { return *hub_; }
    void set_hub(chat_hub* hub) { hub_ = hub; }

    // The settings this worker runs with. Set once before the worker runs, then only by
    // tasks posted to it (chat_hub::update_settings).
    const config::settings& settings() const { return *settings_; }
    void set_settings(std::shared_ptr<const config::settings> s) {
        access_ = std::make_shared<const room_access>(*s);
        settings_ = std::move(s);
    }
    // Who may join which room under those settings.
    const room_access& access() const { return *access_; }
    // The keys login tokens are checked with (the settings' secret and the public keys), handed
    // over like the settings (chat_hub::update_settings, update_public_keys).
    const protocol::token_keys& token_keys() const { return *token_keys_; }
    void set_token_keys(std::shared_ptr<const protocol::token_keys> keys) { token_keys_ = std::move(keys); }

    // The rooms a session's token limits it to, kept here rather than in every session so a
    // session without such a claim (most, and all without tokens) pays nothing for it.
    void set_grant(std::uint32_t session, room_grant grant) { grants_.insert_or_assign(session, std::move(grant)); }
    void drop_grant(std::uint32_t session) {
        if (!grants_.empty()) {
            grants_.erase(session);
        }
    }
    // Null when the session's rooms are not limited.
    const room_grant* grant_of(std::uint32_t session) const {
        if (grants_.empty()) {
            return nullptr;
        }
        auto it = grants_.find(session);
        return it == grants_.end() ? nullptr : &it->second;
    }

    // Written only on this worker's thread; read by any thread (see local_counter).
    worker_counters& counters() { return counters_; }
    const worker_counters& counters() const { return counters_; }

    // Gives the session an id unique on this worker.
    std::uint32_t add_session(chat_session* session);
    void remove_session(std::uint32_t id);
    chat_session* find_session(std::uint32_t id) const;
    std::size_t session_count() const { return slots_.size() - free_slots_.size(); }

    // joined_event: the room's event number when the member joined; events up to it were
    // already covered by the `joined` reply and are not delivered again.
    void add_member(const room* r, chat_session* session, std::uint64_t joined_event);
    void remove_member(const room* r, const chat_session* session);

    // Queues frame on every local member of r that joined before `event`, except `except`.
    // posted_at: when the room posted the task (for the fan-out time histogram).
    void deliver(const room* r, const protocol::shared_frame& frame, std::uint64_t event,
                 registry::session_handle except, std::chrono::steady_clock::time_point posted_at);

    // The same, on the worker's own thread, for a broadcast made there: nothing waited in a
    // queue, so the fan-out time recorded is zero (a walk over at most a few dozen members).
    void deliver_now(const room* r, const protocol::shared_frame& frame, std::uint64_t event,
                     registry::session_handle except);

    std::size_t local_members(const room* r) const;

    // Every logged-in session of this worker gets frame (an announcement to all).
    void send_to_all(const protocol::shared_frame& frame);

    // Every local member of r leaves it, told why (the room was closed by an administrator).
    void evict_members(const room* r, std::string_view reason);

    // The worker whose thread this is (set by the thread itself), or null on any other thread:
    // lets a room serve the caller's own worker without a task.
    static worker_context* current();
    static void set_current(worker_context* worker);

    // A parse result reused by every request this worker reads, so parsing keeps the capacity
    // of its strings instead of allocating them per message. Null while a request is being
    // handled (the caller then parses into a result of its own).
    protocol::parse_result_request* borrow_request() { return std::exchange(request_scratch_, nullptr); }
    void give_back_request(protocol::parse_result_request* scratch) { request_scratch_ = scratch; }

private:
    // Queues frame on the matching local members; returns how many.
    std::uint64_t queue_on_members(const room* r, const protocol::shared_frame& frame, std::uint64_t event,
                                   registry::session_handle except);

    struct local_member {
        chat_session* session;
        std::uint64_t joined_event;
    };

    std::uint32_t index_;
    worker_executor& executor_;
    chat_hub* hub_ = nullptr;
    std::shared_ptr<const config::settings> settings_ = std::make_shared<const config::settings>();
    std::shared_ptr<const room_access> access_ = std::make_shared<const room_access>(*settings_);
    std::shared_ptr<const protocol::token_keys> token_keys_ = std::make_shared<const protocol::token_keys>();
    std::unordered_map<std::uint32_t, room_grant> grants_;
    worker_counters counters_;
    // Sessions by id: an id is a slot of this table plus one (low bits; never 0, "nobody") and
    // the slot's generation (high bits; 0 on first use, so a fresh worker's ids read 1, 2, 3).
    // 10 bytes of table per session instead of a 40-byte hash-map node and bucket.
    static constexpr std::uint32_t slot_bits = 22;  // 4M sessions per worker
    static constexpr std::uint32_t slot_mask = (1u << slot_bits) - 1;
    static constexpr std::uint32_t max_generation = (1u << (32 - slot_bits)) - 1;
    std::uint32_t id_of(std::uint32_t slot) const {
        return (static_cast<std::uint32_t>(generations_[slot]) << slot_bits) | (slot + 1);
    }
    std::vector<chat_session*> slots_;          // null when free
    std::vector<std::uint16_t> generations_;    // per slot
    std::vector<std::uint32_t> free_slots_;
    std::unordered_map<const room*, std::vector<local_member>> members_;
    protocol::parse_result_request request_storage_;
    protocol::parse_result_request* request_scratch_ = &request_storage_;
};

}  // namespace parley::rooms
