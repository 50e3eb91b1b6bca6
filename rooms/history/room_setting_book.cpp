#include "rooms/history/room_setting_book.hpp"

#include <algorithm>

namespace parley::rooms {

void room_setting_book::put(std::string_view room, const room_setting& setting) {
    std::optional<std::string> value;
    if (!setting.value.empty()) {
        value = setting.value;
    }
    std::lock_guard lock(mutex_);
    entries_[key{std::string(room), setting.kind, setting.subject}] = std::move(value);
}

void room_setting_book::overlay(std::string_view room, std::vector<room_setting>& stored) const {
    std::lock_guard lock(mutex_);
    // In-flight entries are older than recorded ones: apply them first.
    for (const entries* book : {&in_flight_, &entries_}) {
        for (auto it = book->lower_bound(key{std::string(room), std::string(), std::string()});
             it != book->end() && std::get<0>(it->first) == room; ++it) {
            const std::string& kind = std::get<1>(it->first);
            const std::string& subject = std::get<2>(it->first);
            auto found = std::find_if(stored.begin(), stored.end(), [&](const room_setting& s) {
                return s.kind == kind && s.subject == subject;
            });
            if (!it->second) {
                if (found != stored.end()) {
                    stored.erase(found);
                }
            } else if (found != stored.end()) {
                found->value = *it->second;
            } else {
                stored.push_back({kind, subject, *it->second});
            }
        }
    }
}

room_setting_book::entries room_setting_book::take() {
    std::lock_guard lock(mutex_);
    in_flight_ = entries_;
    entries out;
    out.swap(entries_);
    return out;
}

void room_setting_book::give_back(entries failed) {
    std::lock_guard lock(mutex_);
    for (auto& [k, value] : failed) {
        entries_.emplace(k, std::move(value));  // a newer record for k wins
    }
    in_flight_.clear();
}

void room_setting_book::written() {
    std::lock_guard lock(mutex_);
    in_flight_.clear();
}

void room_setting_book::forget(std::string_view room) {
    std::lock_guard lock(mutex_);
    for (entries* book : {&entries_, &in_flight_}) {
        auto it = book->lower_bound(key{std::string(room), std::string(), std::string()});
        while (it != book->end() && std::get<0>(it->first) == room) {
            it = book->erase(it);
        }
    }
}

bool room_setting_book::empty() const {
    std::lock_guard lock(mutex_);
    return entries_.empty() && in_flight_.empty();
}

}  // namespace parley::rooms
