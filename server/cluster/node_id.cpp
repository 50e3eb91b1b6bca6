#include "server/cluster/node_id.hpp"

#include "protocol/names.hpp"

#include <unistd.h>

#include <array>

namespace parley::cluster {

std::string default_node_id() {
    std::array<char, 256> buffer{};
    if (gethostname(buffer.data(), buffer.size() - 1) != 0 || buffer[0] == '\0') {
        return "node";
    }
    std::string id(buffer.data());
    // A node id follows the room-name rule (it is part of keys and events).
    if (id.size() > protocol::max_room_name) {
        id.resize(protocol::max_room_name);
    }
    for (char& c : id) {
        if (!protocol::is_name_char(c)) {
            c = '-';
        }
    }
    return id;
}

}  // namespace parley::cluster
