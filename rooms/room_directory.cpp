#include "rooms/room_directory.hpp"

#include "rooms/room.hpp"

#include <algorithm>
#include <functional>

namespace parley::rooms {

room_directory::room_directory(history_store& store, message_bus& bus, std::vector<worker_context*> workers)
    : store_(store), bus_(bus), workers_(std::move(workers)) {}

room_directory::shard& room_directory::shard_for(std::string_view name) const {
    return shards_[std::hash<std::string_view>{}(name) % shards_.size()];
}

std::shared_ptr<room> room_directory::make_room(std::string_view name, bool permanent) {
    log_handle log = store_.open(name);
    return std::make_shared<room>(std::string(name), std::move(log), bus_, workers_, this, permanent,
                                  store_.room_settings(name), identities_.load(std::memory_order_relaxed));
}

std::shared_ptr<room> room_directory::find(std::string_view name) const {
    shard& s = shard_for(name);
    std::lock_guard lock(s.mutex);
    auto it = s.rooms.find(std::string(name));
    return it == s.rooms.end() ? nullptr : it->second;
}

std::shared_ptr<room> room_directory::find_or_create(std::string_view name) {
    shard& s = shard_for(name);
    std::lock_guard lock(s.mutex);
    auto [it, inserted] = s.rooms.try_emplace(std::string(name));
    if (inserted) {
        it->second = make_room(name, false);
    }
    return it->second;
}

void room_directory::create_permanent(std::string_view name, std::string topic) {
    with_room(name, [&topic](room& r) { return r.set_declared(true, topic); });
}

void room_directory::declare(const std::vector<config::permanent_room>& rooms, bool identities) {
    std::lock_guard lock(declared_mutex_);
    identities_.store(identities, std::memory_order_relaxed);
    for (const std::shared_ptr<room>& r : all()) {
        r->set_identities(identities);
    }
    for (const std::string& old : declared_) {
        bool still = std::any_of(rooms.begin(), rooms.end(), [&](const auto& r) { return r.name == old; });
        if (!still) {
            if (auto r = find(old)) {
                r->set_declared(false, {});
            }
        }
    }
    declared_.clear();
    for (const auto& r : rooms) {
        room_moderation::role_map roles;
        for (const std::string& user : r.moderators) {
            roles[user] = room_role::moderator;
        }
        for (const std::string& user : r.owners) {
            roles[user] = room_role::owner;
        }
        with_room(r.name, [&](room& declared) { return declared.set_declared(true, r.topic, roles); });
        declared_.push_back(r.name);
    }
}

void room_directory::tick(std::int64_t now_ms, cluster_link* cluster, tick_settings counts) {
    for (const std::shared_ptr<room>& r : all()) {
        if (r->needs_care()) {
            r->end_expired_sanctions(now_ms, cluster);
        }
        // member_count() counts sessions, at least one per member: a room it puts at or below
        // the limit is below it, and its lock is not taken.
        if (r->member_count() > counts.presence_max_members) {
            r->show_member_count(now_ms, counts.count_interval_ms, counts.presence_max_members);
        }
    }
}

void room_directory::erase(const room* r) {
    shard& s = shard_for(r->name());
    std::lock_guard lock(s.mutex);
    auto it = s.rooms.find(r->name());
    // Only if the entry is still this room: a newer room of the same name stays.
    if (it != s.rooms.end() && it->second.get() == r) {
        s.rooms.erase(it);
    }
}

std::vector<std::shared_ptr<room>> room_directory::all() const {
    std::vector<std::shared_ptr<room>> out;
    for (const shard& s : shards_) {
        std::lock_guard lock(s.mutex);
        for (const auto& [name, r] : s.rooms) {
            out.push_back(r);
        }
    }
    return out;
}

std::vector<std::pair<std::string, std::size_t>> room_directory::list() const {
    std::vector<std::pair<std::string, std::size_t>> out;
    for (const shard& s : shards_) {
        std::lock_guard lock(s.mutex);
        for (const auto& [name, r] : s.rooms) {
            out.emplace_back(name, r->member_count());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::size_t room_directory::size() const {
    std::size_t n = 0;
    for (const shard& s : shards_) {
        std::lock_guard lock(s.mutex);
        n += s.rooms.size();
    }
    return n;
}

}  // namespace parley::rooms
