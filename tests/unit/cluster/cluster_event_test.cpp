// The text of the events nodes exchange on the cluster's channel.
#include "rooms/cluster/cluster_event.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parley::cluster {
namespace {

TEST(cluster_event, a_presence_event_reads_back_as_written) {
    std::string text = format_event(event_type::join, "node-a", "lobby", "alice", R"({"type":"presence"})");
    auto e = parse_event(text);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->type, event_type::join);
    EXPECT_EQ(e->origin, "node-a");
    EXPECT_EQ(e->room, "lobby");
    EXPECT_EQ(e->user, "alice");
    EXPECT_EQ(e->body, R"({"type":"presence"})");
}

TEST(cluster_event, a_message_carries_seq_ts_and_ack_before_its_json) {
    // What the say script publishes: the head, then the seq it assigned, the time, the ack.
    std::string text = message_event_head("node-b", "lobby", "bob") + "42\n1700000000000\n0.7.\"x\"\n" +
                       R"({"type":"message","text":"a\nb"})";
    auto e = parse_event(text);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->type, event_type::message);
    EXPECT_EQ(e->seq, 42);
    EXPECT_EQ(e->ts, 1700000000000);
    EXPECT_EQ(e->ack, "0.7.\"x\"");
    EXPECT_EQ(e->body, R"({"type":"message","text":"a\nb"})");
    auto ticket = parse_ack_ticket(e->ack);
    ASSERT_TRUE(ticket);
    EXPECT_EQ(ticket->sender.worker, 0u);
    EXPECT_EQ(ticket->sender.session, 7u);
    EXPECT_EQ(ticket->re, "\"x\"");
}

TEST(cluster_event, a_message_given_its_seq_has_it_spliced_into_its_json) {
    // A say of a batch kept while a sync reads its snapshot: the seq's place on the seq line.
    const std::string json_a = R"({"type":"message","room":"lobby","seq":,"ts":5})";
    const std::string place = std::to_string(json_a.find("\"seq\":") + 6);
    // The event's views point into the text, so the text must outlive it.
    const std::string text = message_event_head("n", "lobby", "") + place + "\n5\n0.1.7\n" + json_a;
    auto e = parse_event(text, 41);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->seq, 41);
    EXPECT_EQ(e->ts, 5);
    EXPECT_EQ(e->ack, "0.1.7");
    EXPECT_EQ(std::string(e->body.substr(0, e->seq_at)) + "41" + std::string(e->body.substr(e->seq_at)),
              R"({"type":"message","room":"lobby","seq":41,"ts":5})");
    const std::string far = message_event_head("n", "lobby", "ann") + "999\n5\n\n" + json_a;
    EXPECT_FALSE(parse_event(far, 41).has_value()) << "an offset past the JSON";
}

TEST(cluster_event, a_room_batch_of_stored_says_reads_as_messages_numbered_from_the_first) {
    // What scripts::says publishes on a room's channel: its entry's id (the first seq and the
    // count), then the room's block of says (said_batch.hpp); the room is the channel's.
    std::string block;
    const said_batch::origin origin = said_batch::start(block, "node-2", "1700", 11, 7);
    said_batch::append(block, origin, 11, 7, "0.4.9", "ann", R"("hi \"there\"")");
    said_batch::append(block, origin, 12, 8, "", "bob", R"("")");
    // Numbers and times are offsets from the first line's.
    EXPECT_EQ(block.substr(0, block.find('\n', block.find('\n') + 1)), "node-2:1700:11:7\n0");
    std::vector<std::string> seen;
    std::string scratch;
    EXPECT_TRUE(for_each_said("Y41-2\n" + block, "den", scratch, [&](const cluster_event& e) {
        EXPECT_EQ(e.type, event_type::message);
        EXPECT_EQ(e.room, "den");
        seen.push_back(std::string(e.origin) + " " + std::to_string(e.seq) + " " + std::to_string(e.ts) + " " +
                       std::string(e.ack) + " " + std::string(e.body.substr(0, e.seq_at)) + std::to_string(e.seq) +
                       std::string(e.body.substr(e.seq_at)));
    }));
    // Each JSON is the one the sender's worker made of the say, byte for byte.
    const auto json = [](std::string_view from, std::string_view text, std::int64_t seq, std::int64_t ts) {
        const protocol::message_text_around_seq made = protocol::encode_message_around_seq("den", from, text, ts);
        return made.before + std::to_string(seq) + made.after;
    };
    EXPECT_EQ(seen, (std::vector<std::string>{"node-2 41 7 0.4.9 " + json("ann", "hi \"there\"", 41, 7),
                                              "node-2 42 8  " + json("bob", "", 42, 8)}));
    EXPECT_TRUE(is_said_batch("Y41-2\n" + block));
    // The type letters of single events are followed by a newline: a dead node's event is one.
    EXPECT_FALSE(is_said_batch(format_event(event_type::node_gone, "node-2", {}, {}, {})));
    EXPECT_FALSE(is_said_batch(format_event(event_type::system, "node-2", "den", {}, "{}")));
    const auto ignore = [](const cluster_event&) {};
    EXPECT_FALSE(for_each_said("Y41-1", "den", scratch, ignore)) << "no says";
    EXPECT_FALSE(for_each_said("Y41-2\nnode-2:1700", "den", scratch, ignore)) << "no says";
    EXPECT_FALSE(for_each_said("Y41-2\n" + block, "", scratch, ignore)) << "no room (not a room's channel)";
    EXPECT_FALSE(for_each_said("Y41\n" + block, "den", scratch, ignore)) << "no count";
    EXPECT_FALSE(for_each_said("Y0-2\n" + block, "den", scratch, ignore));
    EXPECT_FALSE(for_each_said("Ya-2\n" + block, "den", scratch, ignore));
    EXPECT_FALSE(for_each_said("Y41-0\n" + block, "den", scratch, ignore));
    EXPECT_FALSE(for_each_said("Y41--2\n" + block, "den", scratch, ignore));
    EXPECT_FALSE(for_each_said("Y41-1\n" + block, "den", scratch, ignore)) << "more says than counted";
    EXPECT_FALSE(for_each_said("Y41-3\n" + block, "den", scratch, ignore)) << "fewer says than counted";
    EXPECT_FALSE(for_each_said("Y1-1\nnocolon\n1\n7\n\nann\n\"t\"", "den", scratch, ignore)) << "no run";
    EXPECT_FALSE(for_each_said("Y1-1\nn:1\nx\n7\n\nann\n\"t\"", "den", scratch, ignore)) << "no number";
    EXPECT_FALSE(for_each_said("Y1-1\nn:1\n1\n-7\n\nann\n\"t\"", "den", scratch, ignore)) << "a bad time";
    EXPECT_FALSE(for_each_said("Y1-1\nn:1\n1\n7\n\n\n\"t\"", "den", scratch, ignore)) << "no sender";
    EXPECT_FALSE(for_each_said("Y1-1\nn:1\n1\n7\n\nann\nt", "den", scratch, ignore)) << "a text not JSON";
    EXPECT_FALSE(for_each_said("Y1-1\nn:1\n1\n7\n", "den", scratch, ignore)) << "cut short";
}

TEST(cluster_event, a_block_counts_numbers_and_times_from_its_first_line_either_way_or_reads_them_whole) {
    const auto read_all = [](std::string_view block) {
        std::vector<std::string> out;
        const std::int64_t count = said_batch::read(block, [&](const said_batch::say& say) {
            out.push_back(std::string(say.said) + " " + std::to_string(say.number) + " " + std::to_string(say.ts));
        });
        if (count < 0) {
            out.assign(1, "malformed");
        }
        return out;
    };
    std::string block;
    // A clock that stepped back between two says, and numbers out of order, stay exact.
    const said_batch::origin origin = said_batch::start(block, "n1", "99", 1000, 1700000000500);
    said_batch::append(block, origin, 1000, 1700000000500, "", "ann", R"("a")");
    said_batch::append(block, origin, 1003, 1700000000498, "", "ann", R"("b")");
    said_batch::append(block, origin, 998, 1700000001000, "", "ann", R"("c")");
    EXPECT_EQ(read_all(block), (std::vector<std::string>{"n1:99 1000 1700000000500", "n1:99 1003 1700000000498",
                                                         "n1:99 998 1700000001000"}));
    EXPECT_EQ(block, "n1:99:1000:1700000000500\n0\n0\n\nann\n\"a\"\n3\n-2\n\nann\n\"b\"\n-2\n500\n\nann\n\"c\"");
    // As an earlier version wrote it (kept in streams): no origin, whole numbers, no sign.
    EXPECT_EQ(read_all("n1:99\n1000\n1700000000500\n\nann\n\"a\""),
              std::vector<std::string>{"n1:99 1000 1700000000500"});
    EXPECT_EQ(read_all("n1:99\n-1\n1700000000500\n\nann\n\"a\""), std::vector<std::string>{"malformed"});
    EXPECT_EQ(read_all("n1:99:1000\n0\n0\n\nann\n\"a\""), std::vector<std::string>{"malformed"}) << "no time";
    EXPECT_EQ(read_all("n1:99:x:5\n0\n0\n\nann\n\"a\""), std::vector<std::string>{"malformed"});
    EXPECT_EQ(read_all("n1::1000:5\n0\n0\n\nann\n\"a\""), std::vector<std::string>{"malformed"}) << "no run";
    EXPECT_EQ(read_all("n1:99:1000:5\n0\n+1\n\nann\n\"a\""), std::vector<std::string>{"malformed"});
}

TEST(cluster_event, ack_tickets_round_trip) {
    const std::string text = format_ack_ticket({3, 4096}, "12");  // the ticket's views point into it
    auto t = parse_ack_ticket(text);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->sender.worker, 3u);
    EXPECT_EQ(t->sender.session, 4096u);
    EXPECT_EQ(t->re, "12");
    EXPECT_FALSE(parse_ack_ticket(""));
    EXPECT_FALSE(parse_ack_ticket("1.2."));
    EXPECT_FALSE(parse_ack_ticket("x.2.3"));
}

TEST(cluster_event, a_stored_dm_carries_its_sending_session_before_its_json) {
    // What the dm script publishes: the head with the sending session, then the dm it numbered.
    std::string text = format_event(event_type::stored_dm, "node-a", "bob", "alice", format_session({1, 42}) + "\n") +
                       R"({"type":"dm","seq":3})";
    auto e = parse_event(text);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->type, event_type::stored_dm);
    EXPECT_EQ(e->room, "bob");
    EXPECT_EQ(e->user, "alice");
    EXPECT_EQ(e->body, R"({"type":"dm","seq":3})");
    auto sender = parse_session(e->sender);
    ASSERT_TRUE(sender);
    EXPECT_EQ(*sender, (registry::session_handle{1, 42}));
    EXPECT_FALSE(parse_session("1."));
    EXPECT_FALSE(parse_session("12"));
    EXPECT_FALSE(parse_event("Q\nnode-a\nbob\nalice\n{}")) << "no sender line";
    EXPECT_FALSE(parse_event("Q\nnode-a\n\nalice\n1.2\n{}")) << "no recipient";
}

TEST(cluster_event, text_that_is_not_an_event_is_refused) {
    for (std::string_view bad : {"", "hello", "Z\nnode\n\n\n", "J\n\nroom\nuser\n", "M\nnode\nroom\nu\nx\n1\n\n{}",
                                 "M\nnode\nroom\nu\n0\n1\n\n{}", "M\nnode\n\nu\n1\n1\n\n{}", "J\nnode\nroom"}) {
        EXPECT_FALSE(parse_event(bad)) << bad;
    }
}

}  // namespace
}  // namespace parley::cluster
