#include "rooms/cluster/slot_map.hpp"

#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/partitions.hpp"

#include <algorithm>
#include <limits>

namespace parley::cluster {

namespace {

bool read_int(const redis_reply& r, long long low, long long high, long long& out) {
    if (r.is_integer()) {
        out = r.integer;
    } else {
        return false;
    }
    return out >= low && out <= high;
}

}  // namespace

std::optional<slot_map> read_cluster_slots(const redis_reply& answer, const std::string& asked_host, std::string& why) {
    if (answer.is_error()) {
        why = "CLUSTER SLOTS answered " + answer.text;
        return std::nullopt;
    }
    if (!answer.is_array()) {
        why = "CLUSTER SLOTS did not answer an array";
        return std::nullopt;
    }
    constexpr std::uint16_t unserved = std::numeric_limits<std::uint16_t>::max();
    slot_map map;
    map.owner.assign(slot_count, unserved);
    // Masters in the order they are met; reordered below.
    std::vector<long long> first_slot;
    for (const redis_reply& range : answer.elements) {
        long long first = 0;
        long long last = 0;
        long long port = 0;
        if (!range.is_array() || range.elements.size() < 3 || !read_int(range.elements[0], 0, slot_count - 1, first) ||
            !read_int(range.elements[1], first, slot_count - 1, last) || !range.elements[2].is_array() ||
            range.elements[2].elements.size() < 2 || !range.elements[2].elements[0].is_string() ||
            !read_int(range.elements[2].elements[1], 1, 65535, port)) {
            why = "CLUSTER SLOTS answered a range that is not [first, last, [host, port, ...], ...]";
            return std::nullopt;
        }
        std::string host = range.elements[2].elements[0].text;
        if (host.empty() || host == "?") {
            host = asked_host;
        }
        const auto found = std::find_if(map.masters.begin(), map.masters.end(), [&](const slot_map::master& m) {
            return m.host == host && m.port == static_cast<std::uint16_t>(port);
        });
        auto index = static_cast<std::size_t>(found - map.masters.begin());
        if (found == map.masters.end()) {
            if (map.masters.size() >= unserved) {
                why = "CLUSTER SLOTS named too many masters";
                return std::nullopt;
            }
            map.masters.push_back({std::move(host), static_cast<std::uint16_t>(port)});
            first_slot.push_back(first);
        } else {
            first_slot[index] = std::min(first_slot[index], first);
        }
        for (long long slot = first; slot <= last; ++slot) {
            map.owner[static_cast<std::size_t>(slot)] = static_cast<std::uint16_t>(index);
        }
    }
    const auto gap = std::find(map.owner.begin(), map.owner.end(), unserved);
    if (gap != map.owner.end()) {
        why = "slot " + std::to_string(gap - map.owner.begin()) + " is served by no master";
        return std::nullopt;
    }
    // The cluster's own slot's master first, then by first slot.
    const std::uint16_t own = map.owner[key_slot(keys::epoch)];
    std::vector<std::size_t> order(map.masters.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if ((a == own) != (b == own)) {
            return a == own;
        }
        return first_slot[a] < first_slot[b];
    });
    std::vector<std::uint16_t> new_index(order.size());
    slot_map sorted;
    for (std::size_t i = 0; i < order.size(); ++i) {
        new_index[order[i]] = static_cast<std::uint16_t>(i);
        sorted.masters.push_back(std::move(map.masters[order[i]]));
    }
    sorted.owner.resize(slot_count);
    for (std::size_t slot = 0; slot < slot_count; ++slot) {
        sorted.owner[slot] = new_index[map.owner[slot]];
    }
    return sorted;
}

}  // namespace parley::cluster
