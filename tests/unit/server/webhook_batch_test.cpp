// The webhook queue's bound and wake-ups, the batch body, the backoff and the signature.
#include "protocol/server_messages.hpp"
#include "server/webhooks/webhook_batch.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <array>

namespace parley::server {
namespace {

using protocol::webhook_event;
using json = nlohmann::json;

webhook_item item(std::uint64_t id, webhook_event kind = webhook_event::message) {
    return {id, kind, 1700000000000 + static_cast<std::int64_t>(id), "lobby", "alice", {}};
}

TEST(WebhookQueueTest, SignalsTheFirstEventAndAFullBatchAndDropsBeyondTheBound) {
    webhook_queue queue(5);
    EXPECT_EQ(queue.push(item(1), 3), webhook_queue::pushed::first);
    EXPECT_EQ(queue.push(item(2), 3), webhook_queue::pushed::queued);
    EXPECT_EQ(queue.push(item(3), 3), webhook_queue::pushed::full_batch);
    EXPECT_EQ(queue.push(item(4), 3), webhook_queue::pushed::queued);
    EXPECT_EQ(queue.push(item(5), 3), webhook_queue::pushed::queued);
    EXPECT_EQ(queue.push(item(6), 3), webhook_queue::pushed::dropped);
    EXPECT_EQ(queue.size(), 5u);
    EXPECT_EQ(queue.dropped(), 1u);

    const auto batch = queue.take(3);
    ASSERT_EQ(batch.size(), 3u);
    EXPECT_EQ(batch[0].id, 1u);
    EXPECT_EQ(batch[2].id, 3u);
    EXPECT_EQ(queue.push(item(7), 3), webhook_queue::pushed::full_batch);  // 4, 5, 7
    EXPECT_EQ(queue.take(10).back().id, 7u);
    EXPECT_EQ(queue.size(), 0u);
    EXPECT_EQ(queue.push(item(8), 3), webhook_queue::pushed::first);
}

TEST(WebhookQueueTest, ALoweredBoundDropsOnlyNewEvents) {
    webhook_queue queue(4);
    for (std::uint64_t i = 1; i <= 4; ++i) {
        queue.push(item(i), 100);
    }
    queue.set_limit(2);
    EXPECT_EQ(queue.push(item(5), 100), webhook_queue::pushed::dropped);
    EXPECT_EQ(queue.size(), 4u);
    EXPECT_EQ(queue.take(4).size(), 4u);
    EXPECT_NE(queue.push(item(6), 100), webhook_queue::pushed::dropped);
}

TEST(WebhookBodyTest, CarriesEachEventWithTheFrameTheMembersGotAsItsData) {
    std::vector<webhook_item> batch;
    batch.push_back({7, webhook_event::message, 1700000000123, "lobby", "alice",
                     protocol::encode_message("lobby", "alice", "hi \"there\"", 42, 1700000000123)});
    batch.push_back({8, webhook_event::room_vacated, 1700000000200, "lobby", "", {}});
    batch.push_back({9, webhook_event::user_connected, 1700000000300, "", "bob", {}});
    const json body = json::parse(webhook_body(batch, "node-1", "run5"));
    EXPECT_EQ(body.at("node"), "node-1");
    const json& events = body.at("events");
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].at("id"), "run5-7");
    EXPECT_EQ(events[0].at("type"), "message");
    EXPECT_EQ(events[0].at("ts"), 1700000000123);
    EXPECT_EQ(events[0].at("room"), "lobby");
    EXPECT_EQ(events[0].at("user"), "alice");
    EXPECT_EQ(events[0].at("data").at("text"), "hi \"there\"");
    EXPECT_EQ(events[0].at("data").at("seq"), 42);
    EXPECT_EQ(events[1].at("type"), "room_vacated");
    EXPECT_FALSE(events[1].contains("user"));
    EXPECT_FALSE(events[1].contains("data"));
    EXPECT_EQ(events[2].at("type"), "user_connected");
    EXPECT_FALSE(events[2].contains("room"));
    EXPECT_EQ(events[2].at("user"), "bob");
}

TEST(WebhookBackoffTest, DoublesFromHalfASecondUpToAMinute) {
    EXPECT_EQ(webhook_backoff(1).count(), 500);
    EXPECT_EQ(webhook_backoff(2).count(), 1000);
    EXPECT_EQ(webhook_backoff(3).count(), 2000);
    EXPECT_EQ(webhook_backoff(8).count(), 60000);
    EXPECT_EQ(webhook_backoff(1000).count(), 60000);
}

// HMAC-SHA256 through OpenSSL's EVP_MAC interface, not the one the sender uses.
std::string reference_hmac_hex(const std::string& key, const std::string& text) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
    std::size_t size = 0;
    EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(), key.size(),
              reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac.data(), mac.size(), &size);
    std::string hex;
    static constexpr char digits[] = "0123456789abcdef";
    for (std::size_t i = 0; i < size; ++i) {
        hex += digits[mac[i] >> 4];
        hex += digits[mac[i] & 0xf];
    }
    return hex;
}

TEST(WebhookSignatureTest, IsHmacSha256OfTheTimeAndTheBody) {
    const std::string body = R"({"node":"n","events":[]})";
    const std::string header = webhook_signature("s3cret-key-of-16+", 1700000000, body);
    EXPECT_EQ(header, "t=1700000000,v1=" + reference_hmac_hex("s3cret-key-of-16+", "1700000000." + body));
    // The RFC 4231 case 2 key and text, to pin the hash itself.
    EXPECT_EQ(reference_hmac_hex("Jefe", "what do ya want for nothing?"),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    EXPECT_NE(webhook_signature("s3cret-key-of-16+", 1700000001, body), header);
    EXPECT_NE(webhook_signature("another-key-of-16", 1700000000, body), header);
}

}  // namespace
}  // namespace parley::server
