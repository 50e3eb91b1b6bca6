#include "temp_dir.hpp"

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace parley::integration {

temp_dir::temp_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "parley-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
        throw std::runtime_error("mkdtemp failed");
    }
    path_ = pattern;
}

temp_dir::~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

std::string temp_dir::file(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }

}  // namespace parley::integration
