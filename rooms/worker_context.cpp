#include "rooms/worker_context.hpp"

#include "rooms/chat_session.hpp"

#include <algorithm>
#include <stdexcept>

namespace parley::rooms {

std::uint32_t worker_context::add_session(chat_session* session) {
    std::uint32_t slot;
    if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
        // The generation changes with every reuse of a slot, so an id held by a task still in
        // flight (a dm posted to a session that has since ended) does not find the slot's next
        // session.
        generations_[slot] = static_cast<std::uint16_t>((generations_[slot] + 1) & max_generation);
    } else {
        if (slots_.size() >= slot_mask) {
            throw std::length_error("too many sessions on one worker");
        }
        slot = static_cast<std::uint32_t>(slots_.size());
        slots_.push_back(nullptr);
        generations_.push_back(0);
    }
    slots_[slot] = session;
    return id_of(slot);
}

void worker_context::remove_session(std::uint32_t id) {
    const std::uint32_t slot = (id & slot_mask) - 1;
    if (slot < slots_.size() && slots_[slot] != nullptr && id_of(slot) == id) {
        slots_[slot] = nullptr;
        free_slots_.push_back(slot);
    }
}

chat_session* worker_context::find_session(std::uint32_t id) const {
    const std::uint32_t slot = (id & slot_mask) - 1;  // id 0 ("nobody") wraps to no slot
    if (slot >= slots_.size() || id_of(slot) != id) {
        return nullptr;
    }
    return slots_[slot];
}

void worker_context::add_member(const room* r, chat_session* session, std::uint64_t joined_event) {
    members_[r].push_back({session, joined_event});
}

void worker_context::remove_member(const room* r, const chat_session* session) {
    auto it = members_.find(r);
    if (it == members_.end()) {
        return;
    }
    auto& list = it->second;
    auto pos = std::find_if(list.begin(), list.end(), [&](const local_member& m) { return m.session == session; });
    if (pos != list.end()) {
        *pos = list.back();  // order among members does not matter
        list.pop_back();
    }
    if (list.empty()) {
        members_.erase(it);
    }
}

namespace {
thread_local worker_context* current_worker = nullptr;
}  // namespace

worker_context* worker_context::current() { return current_worker; }

void worker_context::set_current(worker_context* worker) { current_worker = worker; }

std::uint64_t worker_context::queue_on_members(const room* r, const protocol::shared_frame& frame,
                                               std::uint64_t event, registry::session_handle except) {
    auto it = members_.find(r);
    if (it == members_.end()) {
        return 0;
    }
    std::uint64_t delivered = 0;
    // send() never re-enters the chat logic (a slow consumer is closed later, from its own
    // task), so the list cannot change under this loop.
    for (const local_member& m : it->second) {
        if (m.joined_event >= event) {
            continue;
        }
        if (m.session->handle() == except) {
            continue;
        }
        m.session->output().send(frame);
        ++delivered;
    }
    counters_.fanout_deliveries.add(delivered);
    return delivered;
}

void worker_context::deliver(const room* r, const protocol::shared_frame& frame, std::uint64_t event,
                             registry::session_handle except, std::chrono::steady_clock::time_point posted_at) {
    if (queue_on_members(r, frame, event, except) == 0 && !members_.contains(r)) {
        return;
    }
    auto took = std::chrono::steady_clock::now() - posted_at;
    counters_.record_fanout(
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(took).count()));
}

void worker_context::deliver_now(const room* r, const protocol::shared_frame& frame, std::uint64_t event,
                                 registry::session_handle except) {
    queue_on_members(r, frame, event, except);
    counters_.record_fanout(0);
}

void worker_context::send_to_all(const protocol::shared_frame& frame) {
    for (chat_session* session : slots_) {
        if (session != nullptr && session->logged_in()) {
            session->output().send(frame);
        }
    }
}

void worker_context::evict_members(const room* r, std::string_view reason) {
    auto it = members_.find(r);
    if (it == members_.end()) {
        return;
    }
    // Leaving changes the list, so walk a copy.
    std::vector<chat_session*> evicted;
    for (const local_member& m : it->second) {
        evicted.push_back(m.session);
    }
    for (chat_session* session : evicted) {
        session->evict(r, reason);
    }
}

std::size_t worker_context::local_members(const room* r) const {
    auto it = members_.find(r);
    return it == members_.end() ? 0 : it->second.size();
}

}  // namespace parley::rooms
