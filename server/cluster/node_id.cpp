#include "server/cluster/node_id.hpp"

#include <unistd.h>

#include <array>

namespace parley::cluster {

std::string default_node_id() {
    std::array<char, 256> buffer{};
    if (gethostname(buffer.data(), buffer.size() - 1) != 0 || buffer[0] == '\0') {
        return "node";
    }
    std::string id(buffer.data());
    if (id.size() > 64) {
        id.resize(64);
    }
    for (char& c : id) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                  c == '-';
        if (!ok) {
            c = '-';
        }
    }
    return id;
}

}  // namespace parley::cluster
