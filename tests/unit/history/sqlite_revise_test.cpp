// Revising a stored message (an edit or a delete) in the SQLite store: the new frame replaces
// the old in memory and in the file, and the old bytes leave the file altogether, its free space
// and its write-ahead log included. Also the chunk rewriting on its own, and entry()/revise()
// on what memory does not hold.

#include "protocol/frame_encoder.hpp"
#include "protocol/server_messages.hpp"
#include "rooms/history/history_chunk.hpp"
#include "rooms/history/sqlite_chunk_rewrite.hpp"
#include "rooms/history/sqlite_database.hpp"
#include "rooms/history/sqlite_history_store.hpp"
#include "tests/unit/history/sqlite_store_fixture.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace parley::rooms::tests {
namespace {

using namespace std::chrono_literals;

// Distinctive enough that no other bytes of the file hold them by chance.
constexpr std::string_view revise_secret = "hunter2-secret-XYZ";
constexpr std::string_view revise_other_secret = "swordfish-secret-QRS";

class sqlite_revise_test : public sqlite_store_fixture {
protected:
    // The raw bytes of a file, empty when it does not exist.
    static std::string raw_file_bytes(const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }
    // Whether the database file or its write-ahead log holds these bytes anywhere: in a row,
    // in free space, in an old page image.
    bool file_holds(std::string_view bytes) const {
        return raw_file_bytes(options_.path).find(bytes) != std::string::npos ||
               raw_file_bytes(options_.path + "-wal").find(bytes) != std::string::npos;
    }
    // A message of user ann in room r with this seq and text.
    static shared_frame revise_frame(std::int64_t seq, std::string_view text) {
        return protocol::encode_message("r", "ann", text, seq, now_ms());
    }
    // Appends a message with this text; returns its frame.
    static shared_frame say_text(room_log& log, std::string_view text) {
        std::int64_t seq = log.last_seq() + 1;
        std::int64_t ts = now_ms();
        auto frame = protocol::encode_message("r", "ann", text, seq, ts);
        log.append(seq, ts, frame);
        return frame;
    }
    // Copies the write-ahead log into the file and empties it, as the daemon's writer would at
    // some point anyway: the bytes then sit in the database file proper.
    void checkpoint_from_outside() const {
        sqlite_connection db(options_.path, false);
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    // Polls `done` for up to 5 s.
    static bool revise_wait_for(const std::function<bool()>& done) {
        for (int i = 0; i < 500; ++i) {
            if (done()) {
                return true;
            }
            std::this_thread::sleep_for(10ms);
        }
        return done();
    }
};

TEST_F(sqlite_revise_test, a_written_message_revised_leaves_the_file_and_the_revision_survives_a_restart) {
    std::vector<std::string> expected;
    {
        auto store = open();
        log_handle log = store->open("r");
        // First in its chunk and followed by much more text than replaces it: the row shrinks,
        // and where the old cell began is left over as free space in its page (SQLite puts
        // the smaller cell at the end of the space freed). Without secure_delete the secret
        // would stay there.
        say_text(*log, "my password is " + std::string(revise_secret) + std::string(300, '.'));
        expected.push_back("");
        auto after = texts(say(*log, 4));
        expected.insert(expected.end(), after.begin(), after.end());
        wait_written(*store);
        checkpoint_from_outside();
        ASSERT_TRUE(file_holds(revise_secret)) << "the check must see the file's bytes as they are";

        auto deleted = revise_frame(1, "(deleted)");
        ASSERT_TRUE(log->revise(1, deleted));
        expected[0] = std::string(deleted.view());
        EXPECT_EQ(std::string(log->entry(1)->frame.view()), expected[0]) << "memory has it at once";
        // The writer's next pass rewrites the chunk and empties the write-ahead log.
        EXPECT_TRUE(revise_wait_for([&] { return !file_holds(revise_secret); }))
            << "the old text is still somewhere in the file or its log";
        EXPECT_TRUE(file_holds(R"x("text":"(deleted)")x")) << "the new frame is in the file";
        EXPECT_EQ(texts(history(*store, log, std::nullopt, std::nullopt, 10)), expected);
    }
    EXPECT_FALSE(file_holds(revise_secret));
    // A restart, with memory too small for the revised message: it comes from the file.
    options_.memory_per_room = 1;
    auto store = open();
    log_handle log = store->open("r");
    EXPECT_EQ(log->last_seq(), 5);
    EXPECT_EQ(texts(history(*store, log, std::nullopt, std::nullopt, 10)), expected);
    EXPECT_TRUE(reports_.empty());
}

TEST_F(sqlite_revise_test, several_revisions_in_one_pass_rewrite_each_chunk_once_and_the_latest_wins) {
    // A writer that waits: every revision below reaches it in one pass.
    options_.flush_interval = 300ms;
    auto store = open();
    log_handle r = store->open("r");
    log_handle s = store->open("s");
    say(*r, 1);
    say_text(*r, revise_secret);                // r 2
    say_text(*r, revise_other_secret);          // r 3
    say(*r, 1);
    say_text(*s, std::string(revise_secret) + " in s");  // s 1
    wait_written(*store);
    checkpoint_from_outside();
    ASSERT_TRUE(file_holds(revise_secret));
    ASSERT_TRUE(file_holds(revise_other_secret));

    ASSERT_TRUE(r->revise(2, revise_frame(2, "first edit")));
    ASSERT_TRUE(r->revise(3, revise_frame(3, "edited three")));
    ASSERT_TRUE(s->revise(1, revise_frame(1, "edited in s")));
    ASSERT_TRUE(r->revise(2, revise_frame(2, "second edit")));
    EXPECT_TRUE(revise_wait_for([&] { return !file_holds(revise_secret) && !file_holds(revise_other_secret); }));
    EXPECT_TRUE(file_holds("second edit"));
    EXPECT_FALSE(file_holds("first edit")) << "of two revisions in one pass the later is stored";
    EXPECT_TRUE(file_holds("edited three"));
    EXPECT_TRUE(file_holds("edited in s"));

    sqlite_connection check(options_.path, true);
    auto rows = check.prepare("SELECT count(*), sum(count) FROM chunks");
    ASSERT_TRUE(rows.step());
    EXPECT_EQ(rows.integer(0), 2) << "rewritten in place, not added";
    EXPECT_EQ(rows.integer(1), 5);
    EXPECT_TRUE(reports_.empty());
}

TEST_F(sqlite_revise_test, a_large_chunk_revised_leaves_nothing_in_the_pages_it_frees) {
    auto store = open();
    log_handle log = store->open("r");
    // One chunk just over 64 KiB (the writer closes a chunk at that size): more than a page,
    // so most of the row is on an overflow page, the secret (in its last message) among it.
    // Revised, the row fits in its page and that overflow page is freed.
    const std::string padding(2000, '.');
    std::size_t chunk_bytes = 0;  // what the messages so far take in the chunk
    auto in_chunk = [](const shared_frame& f) {
        return history_chunk::header_bytes + protocol::frame_payload(f.view()).size();
    };
    while (chunk_bytes + 2 * in_chunk(revise_frame(1, padding)) < 65536) {
        chunk_bytes += in_chunk(say_text(*log, padding));
    }
    say_text(*log, std::string(revise_secret) + std::string(65536 + 100 - chunk_bytes, '.'));
    const std::int64_t last = log->last_seq();
    wait_written(*store);
    checkpoint_from_outside();
    ASSERT_TRUE(file_holds(revise_secret));
    {
        sqlite_connection check(options_.path, true);
        auto rows = check.prepare("SELECT count(*), max(length(data)) FROM chunks");
        ASSERT_TRUE(rows.step());
        ASSERT_EQ(rows.integer(0), 1);
        ASSERT_GT(rows.integer(1), 65536) << "the chunk must overflow its page";
    }
    for (std::int64_t seq = 1; seq <= last; ++seq) {
        ASSERT_TRUE(log->revise(seq, revise_frame(seq, "(deleted)")));
    }
    EXPECT_TRUE(revise_wait_for([&] { return !file_holds(revise_secret); }));
    EXPECT_EQ(texts(history(*store, log, std::nullopt, std::nullopt, 1)),
              std::vector<std::string>{std::string(log->entry(last)->frame.view())});
    EXPECT_TRUE(reports_.empty());
}

TEST_F(sqlite_revise_test, a_checkpoint_kept_busy_by_a_reader_is_done_once_the_reader_is_gone) {
    auto store = open();
    log_handle log = store->open("r");
    say_text(*log, "my password is " + std::string(revise_secret) + std::string(300, '.'));
    say(*log, 2);
    wait_written(*store);
    checkpoint_from_outside();
    {
        // A reader on the snapshot before the revision: the checkpoint cannot copy the
        // revision's pages into the file, nor empty the log, while it reads.
        sqlite_connection reader(options_.path, true);
        reader.exec("BEGIN");
        auto chunk = reader.prepare("SELECT count(*) FROM chunks");
        ASSERT_TRUE(chunk.step());
        ASSERT_TRUE(log->revise(1, revise_frame(1, "(deleted)")));
        sqlite_connection fresh(options_.path, true);
        ASSERT_TRUE(revise_wait_for([&] {
            auto rows = fresh.prepare("SELECT count(*) FROM chunks WHERE instr(data, '(deleted)') > 0");
            return rows.step() && rows.integer(0) == 1;
        })) << "the rewrite is committed";
        std::this_thread::sleep_for(300ms);  // past the checkpoint's wait, and more passes
        EXPECT_TRUE(file_holds(revise_secret)) << "the old page is still the file's while the reader reads";
        chunk.reset();
        reader.exec("COMMIT");
    }
    EXPECT_TRUE(revise_wait_for([&] { return !file_holds(revise_secret); }))
        << "the owed checkpoint is done with a later pass";
    EXPECT_TRUE(reports_.empty());
}

TEST_F(sqlite_revise_test, a_message_revised_before_it_is_written_never_reaches_the_file) {
    // Nothing is written until three messages wait.
    options_.flush_interval = 3600s;
    options_.batch_size = 3;
    auto store = open();
    log_handle log = store->open("r");
    say_text(*log, revise_secret);
    auto edited = revise_frame(1, "edited before writing");
    ASSERT_TRUE(log->revise(1, edited));
    EXPECT_EQ(store->stats().written, 0u);
    say(*log, 2);  // the third: the writer writes the batch
    ASSERT_TRUE(revise_wait_for([&] { return store->stats().written == 3; }));
    std::this_thread::sleep_for(50ms);  // the commit after the count
    // That pass revised nothing in the file, so it did not checkpoint: had the old text been
    // written, the write-ahead log would still hold it.
    EXPECT_TRUE(file_holds("edited before writing"));
    EXPECT_FALSE(file_holds(revise_secret));
    EXPECT_EQ(std::string(log->entry(1)->frame.view()), std::string(edited.view()));
    log.reset();
    store.reset();
    EXPECT_FALSE(file_holds(revise_secret));
    store = open();
    log = store->open("r");
    ASSERT_EQ(log->last_seq(), 3);
    EXPECT_EQ(std::string(log->entry(1)->frame.view()), std::string(edited.view()));
    EXPECT_TRUE(reports_.empty());
}

TEST_F(sqlite_revise_test, only_what_memory_holds_can_be_revised) {
    options_.memory_per_room = 5;
    auto store = open();
    log_handle log = store->open("r");
    auto said = texts(say(*log, 20));
    wait_written(*store);
    auto newest = say(*log, 1);  // lets the written ones beyond five leave memory
    said.push_back(std::string(newest.front().view()));

    EXPECT_FALSE(log->entry(3)) << "only in the file";
    const std::int64_t bytes = log->memory_bytes();
    EXPECT_FALSE(log->revise(3, revise_frame(3, "too late")));
    EXPECT_FALSE(log->revise(0, revise_frame(0, "no such seq")));
    EXPECT_FALSE(log->revise(99, revise_frame(99, "not yet")));
    EXPECT_FALSE(log->entry(99));
    EXPECT_EQ(log->memory_bytes(), bytes);
    EXPECT_EQ(texts(history(*store, log, std::nullopt, std::nullopt, 100)), said) << "nothing changed";

    std::optional<log_entry> last = log->entry(21);
    ASSERT_TRUE(last);
    EXPECT_EQ(last->seq, 21);
    EXPECT_GT(last->ts, 0);
    EXPECT_EQ(std::string(last->frame.view()), said.back());
    EXPECT_TRUE(reports_.empty());
}

TEST_F(sqlite_revise_test, memory_bytes_follow_the_size_of_the_revised_frame) {
    auto store = open();
    log_handle log = store->open("r");
    say_text(*log, std::string(400, 'x'));
    say(*log, 1);
    const std::int64_t bytes = log->memory_bytes();
    const std::int64_t held = store->stats().log_bytes;
    auto old_size = static_cast<std::int64_t>(log->entry(1)->frame.size());
    auto smaller = revise_frame(1, "");
    ASSERT_TRUE(log->revise(1, smaller));
    const std::int64_t change = old_size - static_cast<std::int64_t>(smaller.size());
    EXPECT_GT(change, 400);
    EXPECT_EQ(log->memory_bytes(), bytes - change);
    EXPECT_EQ(store->stats().log_bytes, held - change) << "the cache's total follows";
    auto larger = revise_frame(1, std::string(400, 'y'));
    ASSERT_TRUE(log->revise(1, larger));
    EXPECT_EQ(log->memory_bytes(), bytes - old_size + static_cast<std::int64_t>(larger.size()));
    EXPECT_EQ(store->stats().log_bytes, held - old_size + static_cast<std::int64_t>(larger.size()));
}

TEST_F(sqlite_revise_test, an_evicted_log_comes_back_revised) {
    options_.memory_budget_bytes = 0;
    auto store = open();
    {
        log_handle log = store->open("r");
        say_text(*log, revise_secret);
        wait_written(*store);
        ASSERT_TRUE(log->revise(1, revise_frame(1, "edited, then evicted")));
    }
    ASSERT_TRUE(revise_wait_for([&] { return store->stats().evictions >= 1; }));
    log_handle log = store->open("r");
    ASSERT_TRUE(log->entry(1));
    EXPECT_NE(std::string(log->entry(1)->frame.view()).find("edited, then evicted"), std::string::npos);
    EXPECT_TRUE(revise_wait_for([&] { return !file_holds(revise_secret); }));
}

// ---- the chunk rewriting on its own ----

TEST(sqlite_chunk_rewrite, replaces_the_listed_payloads_and_keeps_the_rest_and_a_damaged_tail) {
    history_chunk chunk;
    chunk.add(7, 70, "seven");
    chunk.add(8, 80, "eight");
    chunk.add(9, 90, "nine");
    std::string blob(chunk.bytes());
    blob += "\x01\x02tail";  // cut short: not a whole message
    std::size_t replaced = 0;
    std::string rewritten = rewrite_chunk_blob(blob, {{8, "EIGHT!"}, {42, "absent"}}, replaced);
    EXPECT_EQ(replaced, 1u);
    std::vector<std::string> seen;
    bool whole = history_chunk::each(rewritten, [&](std::int64_t seq, std::int64_t ts, std::string_view payload) {
        seen.push_back(std::to_string(seq) + "@" + std::to_string(ts) + ":" + std::string(payload));
        return true;
    });
    EXPECT_FALSE(whole) << "the damaged tail is kept as it was";
    EXPECT_EQ(seen, (std::vector<std::string>{"7@70:seven", "8@80:EIGHT!", "9@90:nine"}));
    EXPECT_EQ(rewritten.substr(rewritten.size() - 6), "\x01\x02tail");
}

TEST_F(sqlite_revise_test, a_seq_no_longer_in_the_file_changes_nothing) {
    {
        auto store = open();
        say(*store->open("r"), 4);
    }
    sqlite_connection db(options_.path, false);
    std::int64_t room = 0;
    {
        auto id = db.prepare("SELECT id FROM rooms WHERE name = 'r'");
        ASSERT_TRUE(id.step());
        room = id.integer(0);
    }
    db.exec("DELETE FROM chunks");  // as retention would
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    auto before = raw_file_bytes(options_.path);
    sqlite_chunk_rewriter rewriter(db);
    std::size_t replaced = 1;
    EXPECT_NO_THROW(db.transaction([&] {
        replaced = rewriter.apply({{room, 2, revise_frame(2, "trimmed")}, {room, 99, revise_frame(99, "never")}});
    }));
    EXPECT_EQ(replaced, 0u);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    EXPECT_EQ(raw_file_bytes(options_.path), before) << "nothing was written";
}

}  // namespace
}  // namespace parley::rooms::tests
