#pragma once

#include <string>

namespace parley::integration {

// A fresh directory under the system's temporary directory, removed with its files when the
// object goes. Throws std::runtime_error when it cannot be made.
class temp_dir {
public:
    temp_dir();
    ~temp_dir();
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    // The path of `name` inside the directory.
    std::string file(const std::string& name) const;

private:
    std::string path_;
};

// Writes a new self-signed certificate for 127.0.0.1 and localhost (an EC P-256 key, valid
// from an hour ago for a day, subject CN = common_name) to cert_path and its private key to
// key_path, both PEM, made with OpenSSL's API in this process (no command-line tool needed).
// Throws std::runtime_error on failure.
void write_self_signed(const std::string& common_name, const std::string& cert_path, const std::string& key_path);

// Replaces a file's content at once (a new file renamed over it), as a certificate renewal does.
void replace_file(const std::string& path, const std::string& content);

}  // namespace parley::integration
