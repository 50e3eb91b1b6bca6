// The connection harness drives the real layers: each committed seed of the connection target
// gets the replies it was written for, so the fuzzer starts from inputs that reach the chat.

#include "tests/fuzz/connection_harness.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace parley::fuzz {
namespace {

using strings = std::vector<std::string>;
using statuses = std::vector<unsigned>;

std::string seed(const std::string& name) {
    std::ifstream in(std::string(PARLEY_FUZZ_DIR) + "/corpus/connection/" + name, std::ios::binary);
    EXPECT_TRUE(in.good()) << "missing seed " << name;
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(connection_harness, chat_seed_reaches_every_request) {
    const auto t = run_connection(seed("chat"));
    EXPECT_EQ(t.http_statuses, statuses{101});
    // The say's ack comes before the sender's copy; a typing hint gets no reply; a dm is echoed.
    EXPECT_EQ(t.replies, (strings{"welcome", "system", "joined", "ack", "message", "dm", "ack", "history", "users",
                                  "rooms", "left"}));
    EXPECT_EQ(t.close_sent, 1000);  // the client's status, echoed
    // carol and bob: ann's join, message, typing and leave each, and bob the dm.
    EXPECT_EQ(t.peer_frames, 9u);
}

TEST(connection_harness, pieces_change_nothing) {
    std::string in_pieces = seed("chat_in_pieces_of_7");
    ASSERT_FALSE(in_pieces.empty());
    EXPECT_EQ(in_pieces[0], '\7');
    in_pieces[0] = '\0';
    EXPECT_EQ(in_pieces, seed("chat"));  // the same stream, so the same transcript must follow
    const auto whole = run_connection(seed("chat"));
    const auto pieces = run_connection(seed("chat_in_pieces_of_7"));
    EXPECT_EQ(pieces.replies, whole.replies);
    EXPECT_EQ(pieces.close_sent, whole.close_sent);
    EXPECT_EQ(pieces.peer_frames, whole.peer_frames);
}

TEST(connection_harness, fragments_pings_and_an_empty_close_byte_by_byte) {
    const auto t = run_connection(seed("fragmented_say_and_ping_byte_by_byte"));
    EXPECT_EQ(t.http_statuses, statuses{101});
    EXPECT_EQ(t.replies, (strings{"welcome", "system", "joined"}));
    EXPECT_EQ(t.pongs, 1u);
    EXPECT_EQ(t.close_sent, 1005);  // answered with an empty close
}

TEST(connection_harness, rejoin_continues_the_rooms_seq) {
    const auto t = run_connection(seed("rejoin_after_seq"));
    EXPECT_EQ(t.replies, (strings{"welcome", "system", "joined", "message", "left", "joined", "joined", "message"}));
    EXPECT_FALSE(t.close_sent);  // the stream just ends
}

TEST(connection_harness, http_before_the_upgrade) {
    EXPECT_EQ(run_connection(seed("keep_alive_then_upgrade")).http_statuses, (statuses{200, 101}));
    EXPECT_EQ(run_connection(seed("bad_key")).http_statuses, statuses{400});
    EXPECT_EQ(run_connection(seed("old_version")).http_statuses, statuses{426});
    const auto foreign = run_connection(seed("foreign_origin"));
    EXPECT_EQ(foreign.http_statuses, statuses{403});
    EXPECT_TRUE(foreign.replies.empty());
}

TEST(connection_harness, limits) {
    // crowd is full; a connection may be in 4 rooms; text is at most 64 bytes and not empty.
    EXPECT_EQ(run_connection(seed("limits")).replies,
              (strings{"welcome", "system", "error:room_full", "joined", "joined", "joined", "joined",
                       "error:too_many_rooms", "error:too_large", "error:bad_request"}));
}

TEST(connection_harness, chat_errors_and_protocol_errors) {
    const auto t = run_connection(seed("errors_before_login"));
    EXPECT_EQ(t.replies, (strings{"error:not_logged_in", "error:bad_json", "error:username_taken",
                                  "error:invalid_name"}));
    EXPECT_EQ(run_connection(seed("protocol_error")).close_sent, 1002);  // an unmasked frame
}

}  // namespace
}  // namespace parley::fuzz
