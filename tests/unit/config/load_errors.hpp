#pragma once
// Every error of a load, one per line: what a failed assertion on a load_result prints.

#include <string>

#include "config/loader.hpp"

namespace parley::config::tests {

inline std::string all_errors(const load_result& r) {
    std::string text;
    for (const auto& e : r.errors) {
        text += e.text() + "\n";
    }
    return text;
}

}  // namespace parley::config::tests
