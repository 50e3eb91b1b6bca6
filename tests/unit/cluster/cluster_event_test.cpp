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

TEST(cluster_event, a_batch_gives_its_events_in_order_and_stops_at_a_fault) {
    const std::string one = message_event_head("a", "lobby", "ann") + "1\n5\n\n{}";
    const std::string two = format_event(event_type::join, "a", "lobby", "bob", "{}");
    std::vector<std::string> seen;
    std::vector<std::int64_t> seqs;
    const auto collect = [&seen, &seqs](std::string_view e, std::int64_t seq) {
        seen.emplace_back(e);
        seqs.push_back(seq);
    };
    const std::string batch = "B\n" + std::to_string(one.size()) + "\n" + one + "\n" + std::to_string(two.size()) +
                              "\n" + two;
    EXPECT_TRUE(for_each_published(batch, collect));
    EXPECT_EQ(seen, (std::vector<std::string>{one, two}));
    EXPECT_EQ(seqs, (std::vector<std::int64_t>{0, 0}));

    seen.clear();
    EXPECT_TRUE(for_each_published(two, collect));  // one event alone, as published unbatched
    EXPECT_EQ(seen, (std::vector<std::string>{two}));

    // Cut short, a length that is not a number, one past the end: the events before it only.
    for (const std::string& bad : {batch.substr(0, batch.size() - 1), "B\nx\n" + one,
                                   "B\n" + std::to_string(one.size()) + "\n" + one + "\n99\n" + two}) {
        seen.clear();
        EXPECT_FALSE(for_each_published(bad, collect)) << bad;
        EXPECT_LE(seen.size(), 1u);
    }
}

TEST(cluster_event, a_batch_of_says_gives_each_its_seq_spliced_into_its_json) {
    // What scripts::says publishes: the seqs it gave, then each say with the place of its seq.
    const std::string json_a = R"({"type":"message","room":"lobby","seq":,"ts":5})";
    const std::string json_b = R"({"type":"message","room":"den","seq":})";
    const auto place = [](const std::string& json) { return std::to_string(json.find("\"seq\":") + 6); };
    const std::string a = message_event_head("n", "lobby", "ann") + place(json_a) + "\n5\n0.1.7\n" + json_a;
    const std::string b = message_event_head("n", "den", "bob") + place(json_b) + "\n6\n\n" + json_b;
    const std::string publication = "S41,9\n" + std::to_string(a.size()) + "\n" + a + "\n" +
                                    std::to_string(b.size()) + "\n" + b;
    std::vector<cluster_event> events;
    std::vector<std::string> whole;
    EXPECT_TRUE(for_each_published(publication, [&](std::string_view text, std::int64_t seq) {
        auto e = parse_event(text, seq);
        ASSERT_TRUE(e) << text;
        whole.push_back(std::string(e->body.substr(0, e->seq_at)) + std::to_string(e->seq) +
                        std::string(e->body.substr(e->seq_at)));
        events.push_back(*e);
    }));
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].seq, 41);
    EXPECT_EQ(events[0].ts, 5);
    EXPECT_EQ(events[0].ack, "0.1.7");
    EXPECT_EQ(events[1].seq, 9);
    EXPECT_EQ(whole[0], R"({"type":"message","room":"lobby","seq":41,"ts":5})");
    EXPECT_EQ(whole[1], R"({"type":"message","room":"den","seq":9})");
    // Fewer seqs than events, a seq that is not a number, an offset past the JSON: refused.
    const auto ignore = [](std::string_view, std::int64_t) {};
    EXPECT_FALSE(for_each_published("S41\n" + std::to_string(a.size()) + "\n" + a + "\n" + std::to_string(b.size()) +
                                        "\n" + b,
                                    ignore));
    EXPECT_FALSE(for_each_published("Sx\n" + std::to_string(a.size()) + "\n" + a, ignore));
    const std::string far = message_event_head("n", "lobby", "ann") + "999\n5\n\n" + json_a;
    EXPECT_FALSE(parse_event(far, 41).has_value());
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
