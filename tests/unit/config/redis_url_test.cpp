// cluster.redis: the URL forms accepted, and a reason for each one refused.
#include "config/redis_url.hpp"

#include <gtest/gtest.h>

namespace parley::config {
namespace {

TEST(redis_url, host_and_port) {
    auto e = parse_redis_url("redis://10.0.0.5:6380");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->host, "10.0.0.5");
    EXPECT_EQ(e->port, 6380);
    EXPECT_EQ(e->password, "");
}

TEST(redis_url, port_defaults_to_6379_and_a_trailing_slash_is_fine) {
    auto e = parse_redis_url("redis://cache.internal/");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->host, "cache.internal");
    EXPECT_EQ(e->port, 6379);
}

TEST(redis_url, ipv6_in_brackets) {
    auto e = parse_redis_url("redis://[::1]:7000");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->host, "::1");
    EXPECT_EQ(e->port, 7000);
}

TEST(redis_url, password) {
    auto e = parse_redis_url("redis://:s3cret@redis:6379");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->host, "redis");
    EXPECT_EQ(e->password, "s3cret");
}

TEST(redis_url, refusals_say_why) {
    for (const char* bad : {"http://localhost:6379", "redis://", "redis://host:0", "redis://host:70000",
                            "redis://host:x", "redis://host:6379/2", "redis://user:pw@host", "redis://[::1"}) {
        std::string why;
        EXPECT_FALSE(parse_redis_url(bad, &why)) << bad;
        EXPECT_FALSE(why.empty()) << bad;
    }
}

}  // namespace
}  // namespace parley::config
