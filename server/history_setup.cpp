#include "server/history_setup.hpp"

#include "rooms/history/memory_history_store.hpp"
#include "rooms/history/sqlite_history_store.hpp"
#include "rooms/history/unix_clock.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>

namespace parley::server {

std::unique_ptr<rooms::history_store> open_history(const config::settings& settings) {
    constexpr double day_ms = 24.0 * 3600 * 1000;
    auto max_age_ms = static_cast<std::int64_t>(std::llround(settings.history_retain_days * day_ms));
    if (settings.history_store == config::history_backend::memory) {
        return rooms::make_memory_history_store(settings.history_per_room, rooms::unix_millis(), max_age_ms,
                                                settings.history_memory_budget_bytes);
    }
    rooms::sqlite_history_options options;
    options.path = settings.history_path;
    options.memory_per_room = settings.history_per_room;
    options.flush_interval = std::chrono::milliseconds(settings.history_flush_interval_ms);
    options.batch_size = settings.history_batch_size;
    options.retain_messages = settings.history_retain_messages;
    options.max_age_ms = max_age_ms;
    options.memory_budget_bytes = settings.history_memory_budget_bytes;
    options.report = [](std::string_view what) { spdlog::error("history: {}", what); };
    return rooms::open_sqlite_history_store(options);
}

}  // namespace parley::server
