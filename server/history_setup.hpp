#pragma once

#include "config/settings.hpp"
#include "rooms/history/history_store.hpp"

#include <memory>

namespace parley::server {

// The history store the settings ask for: the SQLite file (its write failures logged as
// errors) or memory. Throws std::runtime_error naming the file and the reason when the file
// cannot be used.
std::unique_ptr<rooms::history_store> open_history(const config::settings& settings);

}  // namespace parley::server
