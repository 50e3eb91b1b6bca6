// What a reload applies, and what it leaves for a restart.

#include "config/loader.hpp"
#include "config/options.hpp"

#include <gtest/gtest.h>

namespace parley::config {
namespace {

TEST(plan_reload, nothing_changed) {
    settings running;
    reload_plan plan = plan_reload(running, running);
    EXPECT_TRUE(plan.applied.empty());
    EXPECT_TRUE(plan.needs_restart.empty());
}

TEST(plan_reload, applies_reloadable_and_keeps_restart_only) {
    settings running;
    running.port = 8080;
    settings loaded = running;
    loaded.max_text_bytes = 100;
    loaded.log_level = "debug";
    loaded.allowed_origins = {"*"};
    loaded.port = 9090;
    loaded.history_per_room = 20;
    loaded.log_format = log_format::json;
    loaded.permanent_rooms = {{"lobby", "hi"}};

    reload_plan plan = plan_reload(running, loaded);
    EXPECT_EQ(plan.applied, (std::vector<std::string>{
                                "server.allowed_origins: [] -> [\"*\"]",
                                "limits.max_text_bytes: 4096 -> 100",
                                "rooms.permanent: [] -> [{ name = \"lobby\", topic = \"hi\" }]",
                                "log.level: \"info\" -> \"debug\"",
                            }));
    EXPECT_EQ(plan.needs_restart, (std::vector<std::string>{
                                      "server.port: 8080 -> 9090 (restart to apply)",
                                      "rooms.history_per_room: 1000 -> 20 (restart to apply)",
                                      "log.format: \"text\" -> \"json\" (restart to apply)",
                                  }));
    EXPECT_EQ(plan.next.max_text_bytes, 100u);
    EXPECT_EQ(plan.next.log_level, "debug");
    EXPECT_EQ(plan.next.allowed_origins, (std::vector<std::string>{"*"}));
    EXPECT_EQ(plan.next.permanent_rooms, loaded.permanent_rooms);
    EXPECT_EQ(plan.next.port, 8080) << "the running port stays";
    EXPECT_EQ(plan.next.history_per_room, 1000u);
    EXPECT_EQ(plan.next.log_format, log_format::text);
}

TEST(plan_reload, reloadability_follows_the_table) {
    for (const auto& o : options()) {
        bool expected = !(o.name() == "server.bind" || o.name() == "server.port" || o.name() == "server.threads" ||
                          o.name() == "server.ws_path" || o.name() == "rooms.history_per_room" ||
                          o.name() == "log.format" || o.name() == "log.file" ||
                          // The store, its file and its thread are set up once, at start.
                          o.section == "history" ||
                          // Joining or leaving a cluster, or changing its Redis, is a restart.
                          o.section == "cluster" ||
                          // The files are read again on every reload; a different path needs a restart.
                          o.name() == "tls.cert_file" || o.name() == "tls.key_file");
        EXPECT_EQ(o.reloadable, expected) << o.name();
    }
}

TEST(plan_reload, every_option_is_either_applied_or_listed) {
    // Change every option at once through its own accessor, so no field is forgotten.
    settings running;
    load_result changed = load_text(R"([server]
bind = "127.0.0.1"
port = 1
threads = 3
ws_path = "/chat"
allowed_origins = ["*"]
motd = "hi"
handshake_timeout_ms = 1000
shutdown_timeout_ms = 5000
shutdown_close_window_ms = 1000
max_request_header_bytes = 4096
compression = "on"
compression_min_bytes = 100
[limits]
max_connections = 10
max_connections_per_ip = 2
max_message_bytes = 1000
max_text_bytes = 100
max_rooms_per_connection = 3
write_queue_limit_bytes = 2048
rate_limit_per_second = 1.5
rate_limit_burst = 2
rate_limit_strikes = 3
login_timeout_ms = 0
idle_timeout_ms = 0
ping_interval_ms = 0
[rooms]
max_members = 5
presence_max_members = 3
presence_count_interval_ms = 2000
joined_members_max = 7
history_per_room = 10
joined_history = 5
history_default_limit = 5
history_max_limit = 6
typing_interval_ms = 0
edit_window_s = 60
[[rooms.permanent]]
name = "r"
[history]
store = "memory"
path = "/tmp/h.db"
flush_interval_ms = 7
batch_size = 9
retain_messages = 11
retain_days = 0.5
welcome_conversations = 3
memory_budget_bytes = 1048576
[auth]
mode = "token"
token_secret = "0123456789abcdef0123456789abcdef"
public_keys = "/etc/parley/keys.pem"
jwks_url = "https://id.example/jwks"
jwks_ca_file = "/etc/parley/ca.pem"
issuer = "https://id.example"
audience = "chat"
token_leeway_ms = 1000
max_sessions_per_user = 2
[admin]
token = "admin-token-0123456789"
[tls]
cert_file = "cert.pem"
key_file = "key.pem"
[log]
level = "warn"
format = "json"
file = "x.log"
[metrics]
enabled = false
[cluster]
redis = "redis://10.0.0.1:6379"
mode = "redis-cluster"
node_id = "n1"
name_ttl_ms = 5000
history_messages = 500
[[webhooks]]
url = "https://hooks.example/parley"
events = ["*"]
secret = "0123456789abcdef"
)",
                                    "all.toml");
    ASSERT_TRUE(changed.ok()) << changed.errors.front().text();
    reload_plan plan = plan_reload(running, changed.value);
    EXPECT_EQ(plan.applied.size() + plan.needs_restart.size(), options().size());
    for (const auto& o : options()) {
        EXPECT_EQ(o.text(plan.next), o.reloadable ? o.text(changed.value) : o.text(running)) << o.name();
    }
}

}  // namespace
}  // namespace parley::config
