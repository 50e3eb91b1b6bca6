#include "server/token_key_file.hpp"

#include <fstream>
#include <sstream>

namespace parley::server {

namespace {

// A key file is small; anything larger is not one (and is not read whole into memory).
constexpr std::streamoff most_bytes = 1 << 20;

}  // namespace

std::shared_ptr<const protocol::token_keys> read_token_key_file(const std::string& path, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "auth.public_keys: cannot read '" + path + "'";
        return nullptr;
    }
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size > most_bytes) {
        error = "auth.public_keys: '" + path + "' is larger than 1 MiB, too large for a key file";
        return nullptr;
    }
    in.seekg(0, std::ios::beg);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string content = text.str();
    const std::size_t first = content.find_first_not_of(" \t\r\n");
    auto keys = std::make_shared<protocol::token_keys>();
    const bool jwks = first != std::string::npos && content[first] == '{';
    std::string why = jwks ? keys->add_jwks(content) : keys->add_pem(content);
    if (!why.empty()) {
        error = "auth.public_keys: '" + path + "' (" + (jwks ? "a JWK Set" : "PEM") + "): " + why;
        return nullptr;
    }
    return keys;
}

}  // namespace parley::server
