#pragma once

#include "protocol/token_keys.hpp"

#include <memory>
#include <string>

namespace parley::server {

// Reads auth.public_keys: PEM public keys, or a JWK Set when the file's text starts with '{'.
// Null, with `error` naming the file and what is wrong, when it cannot be read or holds no usable
// key. Blocking file I/O: called at start, on a reload and from the main thread's loop, never
// from a worker.
std::shared_ptr<const protocol::token_keys> read_token_key_file(const std::string& path, std::string& error);

}  // namespace parley::server
