#pragma once

// What the SQLite store's tests share: a store on a fresh file in a temporary directory, and
// helpers to say, wait for the writer and read history back.

#include "protocol/server_messages.hpp"
#include "rooms/history/sqlite_history_store.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace parley::rooms::tests {

class sqlite_store_fixture : public ::testing::Test {
protected:
    using shared_frame = protocol::shared_frame;

    void SetUp() override {
        using namespace std::chrono_literals;
        std::string pattern = (std::filesystem::temp_directory_path() / "parley-history-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
        options_.path = (std::filesystem::path(dir_) / "history.db").string();
        options_.flush_interval = 20ms;
        options_.memory_per_room = 100;
        options_.report = [this](std::string_view what) { reports_.emplace_back(what); };
    }
    void TearDown() override {
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }

    static std::int64_t now_ms() {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    }

    std::unique_ptr<history_store> open() { return open_sqlite_history_store(options_); }

    // Appends `count` messages to the room, texts "m<seq>", and returns their frames.
    static std::vector<shared_frame> say(room_log& log, int count, std::int64_t ts = 0) {
        std::vector<shared_frame> frames;
        for (int i = 0; i < count; ++i) {
            std::int64_t seq = log.last_seq() + 1;
            auto frame = protocol::encode_message("r", "ann", "m" + std::to_string(seq), seq, ts ? ts : now_ms());
            log.append(seq, ts ? ts : now_ms(), frame);
            frames.push_back(frame);
        }
        return frames;
    }

    static std::vector<std::string> texts(const std::vector<shared_frame>& frames) {
        std::vector<std::string> out;
        for (const auto& f : frames) {
            out.emplace_back(f.view());
        }
        return out;
    }

    // Waits until everything appended so far is written.
    static void wait_written(history_store& store) {
        using namespace std::chrono_literals;
        for (int i = 0; i < 500 && store.stats().backlog > 0; ++i) {
            std::this_thread::sleep_for(10ms);
        }
        ASSERT_EQ(store.stats().backlog, 0u);
        std::this_thread::sleep_for(50ms);  // the commit after the queue was taken
    }

    // A whole history request, the stored part read on the store's thread.
    static std::vector<shared_frame> history(history_store& store, const log_handle& log,
                                             std::optional<std::int64_t> before, std::optional<std::int64_t> after,
                                             std::size_t limit) {
        using namespace std::chrono_literals;
        std::promise<std::vector<shared_frame>> result;
        store.complete(log, log->query(before, after, limit),
                       [&](std::optional<std::vector<shared_frame>> messages) {
                           EXPECT_TRUE(messages) << "the file could not be read";
                           result.set_value(messages ? std::move(*messages) : std::vector<shared_frame>{});
                       });
        auto future = result.get_future();
        if (future.wait_for(5s) != std::future_status::ready) {
            ADD_FAILURE() << "no answer within 5 s";
            return {};
        }
        return future.get();
    }

    std::string dir_;
    sqlite_history_options options_;
    std::vector<std::string> reports_;
};

}  // namespace parley::rooms::tests
