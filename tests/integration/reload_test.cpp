// SIGHUP reloads the configuration file: applied settings change for connected clients without
// dropping them, a broken file changes nothing, restart-only changes are logged and not applied.
#include "http_response.hpp"
#include "test_support.hpp"

#include <signal.h>

namespace parley::integration {
namespace {

json say_with_id(ws_client& client, const std::string& room, const std::string& text, const json& id) {
    return call(client, {{"type", "say"}, {"room", room}, {"text", text}, {"id", id}});
}

class ReloadTest : public parley_test {
protected:
    // Replaces the config file with text, sends SIGHUP and waits for the log line containing
    // marker that the reload writes.
    void reload(const std::string& text, const std::string& marker = "reload:") {
        const std::size_t from = daemon_->line_count();
        daemon_->write_config(text);
        daemon_->send_signal(SIGHUP);
        ASSERT_TRUE(daemon_->wait_for_line(marker, from, milliseconds(5000)))
            << "no \"" << marker << "\" line after SIGHUP";
    }
};

TEST_F(ReloadTest, LowerTextLimitAppliesToConnectedClients) {
    std::vector<ws_client> clients;
    for (const std::string user : {"alice", "bob", "carol"}) {
        clients.push_back(login(user));
        join_room(clients.back(), "r");
    }
    // The default limit (4096) lets 20 bytes through before the reload.
    ASSERT_EQ(say_with_id(clients[0], "r", std::string(20, 'a'), "before").value("type", ""), "ack");
    for (ws_client& c : clients) {
        ASSERT_EQ(wait_type(c, "message").value("text", ""), std::string(20, 'a'));
    }

    const std::size_t from = daemon_->line_count();
    reload("[limits]\nmax_text_bytes = 10\n");
    EXPECT_TRUE(daemon_->wait_for_line("max_text_bytes", from, milliseconds(0))) << "the change is not logged";

    const json refused = say_with_id(clients[0], "r", std::string(20, 'b'), "long");
    EXPECT_EQ(refused.value("code", ""), "too_large") << refused;
    EXPECT_EQ(say_with_id(clients[1], "r", "hello", "short").value("type", ""), "ack");
    for (ws_client& c : clients) {
        const json message = wait_type(c, "message");
        EXPECT_EQ(message.value("text", ""), "hello") << "the 20-byte say went out: " << message;
        EXPECT_FALSE(c.close_code().has_value()) << "a client was closed by the reload";
        EXPECT_FALSE(c.eof());
    }
}

class ReloadFromTenTest : public ReloadTest {
protected:
    std::string daemon_config() const override { return "[limits]\nmax_text_bytes = 10\n"; }
};

TEST_F(ReloadFromTenTest, BrokenFileIsRejectedAndChangesNothing) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    // A file that would raise the limit, but does not parse.
    reload("[limits]\nmax_text_bytes = 100\n[rooms\n", "reload rejected");
    // Still serving: a new client logs in and chats.
    ws_client bob = login("bob");
    join_room(bob, "r");
    EXPECT_EQ(say_with_id(bob, "r", "hi", 1).value("type", ""), "ack");
    EXPECT_EQ(wait_type(alice, "message").value("text", ""), "hi");
    // The old limit still applies, on the old and on the new connection.
    EXPECT_EQ(say_with_id(alice, "r", std::string(20, 'x'), 2).value("code", ""), "too_large");
    EXPECT_EQ(say_with_id(bob, "r", std::string(20, 'x'), 3).value("code", ""), "too_large");
}

TEST_F(ReloadFromTenTest, InvalidValueIsRejectedToo) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    reload("[limits]\nmax_text_bytes = 0\n", "reload rejected");
    EXPECT_EQ(say_with_id(alice, "r", std::string(11, 'x'), 1).value("code", ""), "too_large");
    EXPECT_EQ(say_with_id(alice, "r", std::string(10, 'x'), 2).value("type", ""), "ack");
}

TEST_F(ReloadTest, RestartOnlyChangeIsLoggedNotApplied) {
    const std::uint16_t before = port();
    const std::size_t from = daemon_->line_count();
    // server.port in the file is overridden by the fixture's --port flag at every load, so it
    // cannot change; ws_path is restart-only and not given on the command line.
    reload("[server]\nport = 1\nws_path = \"/chat\"\n", "restart");
    const auto lines = daemon_->output();
    bool logged = false;
    for (std::size_t i = from; i < lines.size(); ++i) {
        if (lines[i].find("restart") != std::string::npos && lines[i].find("ws_path") != std::string::npos) {
            logged = true;
        }
    }
    EXPECT_TRUE(logged) << "no restart line naming server.ws_path";
    // The daemon keeps its socket and its path.
    ws_client alice = login("alice");  // connects to the old port, upgrades at /ws
    EXPECT_EQ(port(), before);
    ws_client client(port());
    const http_response response =
        parse_http_response(client.raw_http(client.upgrade_request("/chat")));
    EXPECT_EQ(response.status, 404) << "the new ws_path was applied without a restart";
}

TEST_F(ReloadTest, MotdAppliesToTheNextLogin) {
    ws_client before = login("before");
    reload("[server]\nmotd = \"Welcome back\"\n");
    ws_client after = connect();
    after.send_json({{"type", "login"}, {"user", "after"}, {"id", 1}});
    expect_type(after, "welcome");
    EXPECT_EQ(expect_type(after, "system"), json({{"type", "system"}, {"text", "Welcome back"}}));
    // The client that logged in before gets nothing from the reload.
    before.send_json({{"type", "users"}, {"id", 1}});
    EXPECT_EQ(expect_type(before, "users")["re"], 1);
}

TEST_F(ReloadTest, PermanentRoomAddedByReloadIsListed) {
    ws_client alice = login("alice");
    EXPECT_EQ(call(alice, {{"type", "rooms"}, {"id", 1}})["rooms"], json::array());
    reload("[[rooms.permanent]]\nname = \"lobby\"\ntopic = \"Hello\"\n");
    EXPECT_EQ(call(alice, {{"type", "rooms"}, {"id", 2}})["rooms"],
              json::parse(R"([{"name":"lobby","members":0,"topic":"Hello"}])"));
    EXPECT_EQ(join_room(alice, "lobby").value("topic", ""), "Hello");
}

}  // namespace
}  // namespace parley::integration
