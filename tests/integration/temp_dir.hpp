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
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace parley::integration
