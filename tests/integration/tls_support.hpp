#pragma once

#include "temp_dir.hpp"

#include <string>

namespace parley::integration {

// Writes a new self-signed certificate for 127.0.0.1 and localhost (an EC P-256 key, valid
// from an hour ago for a day, subject CN = common_name) to cert_path and its private key to
// key_path, both PEM, made with OpenSSL's API in this process (no command-line tool needed).
// Throws std::runtime_error on failure.
void write_self_signed(const std::string& common_name, const std::string& cert_path, const std::string& key_path);

// Replaces a file's content at once (a new file renamed over it), as a certificate renewal does.
void replace_file(const std::string& path, const std::string& content);

}  // namespace parley::integration
