// The configuration file: values from it are used, flags beat it, --check-config and a bad
// file at start report FILE:LINE: KEY, the sample file runs as it is, and the settings that
// only the file (or --set) reaches behave as documented.
#include "http_response.hpp"
#include "run_parleyd.hpp"
#include "temp_dir.hpp"
#include "test_support.hpp"
#include "tls_support.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#ifndef PARLEY_SOURCE_DIR
#error "PARLEY_SOURCE_DIR must name the source tree"
#endif

namespace parley::integration {
namespace {

using clock = std::chrono::steady_clock;

// A text of n bytes.
std::string text_of(std::size_t n) { return std::string(n, 'x'); }

// Sends a say with id and returns the reply to it (ack or error).
json say(ws_client& client, const std::string& room, const std::string& text, const json& id) {
    return call(client, {{"type", "say"}, {"room", room}, {"text", text}, {"id", id}});
}

// The response to an upgrade request on a new connection, with extra header lines.
http_response try_upgrade(std::uint16_t port, std::vector<std::string> headers = {}) {
    ws_client client(port, {.headers = std::move(headers)});
    return parse_http_response(client.raw_http(client.upgrade_request()));
}

// A temporary file with text, removed at the end of the test.
class temp_file {
public:
    explicit temp_file(const std::string& text) {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "parley-config-test-XXXXXX.toml").string();
        const int fd = ::mkstemps(pattern.data(), 5);
        if (fd < 0) {
            throw std::runtime_error("mkstemps failed");
        }
        ::close(fd);
        path_ = pattern;
        std::ofstream(path_) << text;
    }
    ~temp_file() { ::unlink(path_.c_str()); }
    temp_file(const temp_file&) = delete;
    temp_file& operator=(const temp_file&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

run_result check_config(const std::string& text) {
    temp_file file(text);
    run_result result = run_parleyd({"--check-config", "--config", file.path()});
    // The file's own name appears in each message; replace it so assertions can name it.
    for (std::size_t at; (at = result.output.find(file.path())) != std::string::npos;) {
        result.output.replace(at, file.path().size(), "FILE");
    }
    return result;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ---------------------------------------------------------------------------------------------

class FileValueTest : public parley_test {
protected:
    std::string daemon_config() const override { return "[limits]\nmax_text_bytes = 10\n"; }
};

TEST_F(FileValueTest, MaxTextBytesFromTheFileIsUsed) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    join_room(bob, "r");
    const json error = say(alice, "r", text_of(11), "long");
    EXPECT_EQ(error.value("type", ""), "error") << error;
    EXPECT_EQ(error.value("code", ""), "too_large") << error;
    EXPECT_EQ(say(alice, "r", text_of(10), "fits").value("type", ""), "ack");
    const json message = wait_type(bob, "message");
    EXPECT_EQ(message.value("text", ""), text_of(10)) << message;
}

class SetFlagTest : public parley_test {
protected:
    std::string daemon_config() const override { return "[limits]\nmax_text_bytes = 10\n"; }
    std::vector<std::string> daemon_args() const override {
        auto args = relaxed_rate_args();
        args.insert(args.end(), {"--set", "limits.max_text_bytes=20"});
        return args;
    }
};

TEST_F(SetFlagTest, SetFlagBeatsTheFile) {
    ws_client alice = login("alice");
    join_room(alice, "r");
    EXPECT_EQ(say(alice, "r", text_of(20), 1).value("type", ""), "ack") << "the file's 10 won over --set 20";
    EXPECT_EQ(say(alice, "r", text_of(21), 2).value("code", ""), "too_large");
}

TEST(CheckConfigTest, GoodFileExitsZero) {
    const run_result result = check_config("[limits]\nmax_text_bytes = 100\n\n[server]\nmotd = \"hi\"\n");
    EXPECT_TRUE(result.exited && result.code == 0) << result.output;
}

TEST(CheckConfigTest, UnknownKeyNamesLineKeyAndSuggestion) {
    const run_result result = check_config("[limits]\nmax_text_bytes = 100\nmax_conections = 5\n");
    EXPECT_TRUE(result.exited && result.code == 1) << result.output;
    EXPECT_TRUE(contains(result.output, "FILE:3: limits.max_conections:")) << result.output;
    EXPECT_TRUE(contains(result.output, "did you mean")) << result.output;
    EXPECT_TRUE(contains(result.output, "max_connections")) << result.output;
}

TEST(CheckConfigTest, WrongTypeNamesLineAndKey) {
    const run_result result = check_config("# comment\n[limits]\nmax_text_bytes = \"many\"\n");
    EXPECT_TRUE(result.exited && result.code == 1) << result.output;
    EXPECT_TRUE(contains(result.output, "FILE:3: limits.max_text_bytes:")) << result.output;
    EXPECT_TRUE(contains(result.output, "whole number")) << result.output;
}

TEST(CheckConfigTest, OutOfRangeNamesLineAndKey) {
    const run_result result = check_config("[server]\n\n[limits]\n\nmax_text_bytes = 0\n");
    EXPECT_TRUE(result.exited && result.code == 1) << result.output;
    EXPECT_TRUE(contains(result.output, "FILE:5: limits.max_text_bytes:")) << result.output;
    EXPECT_TRUE(contains(result.output, "from 1")) << result.output;
}

TEST(CheckConfigTest, TlsFilesAreCheckedToo) {
    temp_dir dir;
    write_self_signed("check", dir.file("cert.pem"), dir.file("key.pem"));
    const std::string tls = "[tls]\ncert_file = \"" + dir.file("cert.pem") + "\"\nkey_file = \"";
    const run_result good = check_config(tls + dir.file("key.pem") + "\"\n");
    EXPECT_TRUE(good.exited && good.code == 0) << good.output;
    // A file the loader cannot judge (it only sees a path): the check reads it.
    const run_result missing = check_config(tls + dir.file("gone.pem") + "\"\n");
    EXPECT_TRUE(missing.exited && missing.code == 1) << missing.output;
    EXPECT_TRUE(contains(missing.output, dir.file("gone.pem"))) << missing.output;
}

TEST(CheckConfigTest, SampleFileIsValid) {
    const run_result result =
        run_parleyd({"--check-config", "--config", std::string(PARLEY_SOURCE_DIR) + "/config/parley.toml"});
    EXPECT_TRUE(result.exited && result.code == 0) << result.output;
}

TEST(BadFileAtStartTest, DaemonRefusesToStart) {
    temp_file file("[limits]\nmax_text_bytes = -3\n");
    const run_result result =
        run_parleyd({"--config", file.path(), "--bind", "127.0.0.1", "--port", "0", "--threads", "1"});
    ASSERT_FALSE(result.timed_out) << "the daemon started on a bad file:\n" << result.output;
    EXPECT_TRUE(result.exited && result.code == 1) << result.output;
    EXPECT_TRUE(contains(result.output, file.path() + ":2: limits.max_text_bytes:")) << result.output;
    EXPECT_FALSE(contains(result.output, "listening on")) << result.output;
}

// ---------------------------------------------------------------------------------------------

class SampleConfigTest : public parley_test {
protected:
    std::string daemon_config() const override {
        std::ifstream in(std::string(PARLEY_SOURCE_DIR) + "/config/parley.toml");
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    }
    // The sample's history file is the system one; this test's goes to a directory of its own.
    std::vector<std::string> daemon_args() const override {
        auto args = parley_test::daemon_args();
        args.push_back("--history-path");
        args.push_back(history_dir_.file("history.db"));
        return args;
    }
    temp_dir history_dir_;
};

TEST_F(SampleConfigTest, DaemonRunsOnTheSampleFileUnchanged) {
    ASSERT_TRUE(contains(daemon_config(), "[limits]")) << "the sample file was not found";
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    join_room(alice, "r");
    join_room(bob, "r");
    EXPECT_EQ(say(alice, "r", "hello", 1).value("type", ""), "ack");
    const json message = wait_type(bob, "message");
    expect_message_object(message, "r", "alice", "hello");
}

class PermanentRoomTest : public parley_test {
protected:
    std::string daemon_config() const override {
        return "[[rooms.permanent]]\nname = \"lobby\"\ntopic = \"General chat\"\n";
    }
};

TEST_F(PermanentRoomTest, ListedEmptyAndJoinedCarriesTopic) {
    ws_client alice = login("alice");
    const json rooms = call(alice, {{"type", "rooms"}, {"id", 1}});
    ASSERT_EQ(rooms.value("type", ""), "rooms") << rooms;
    EXPECT_EQ(rooms["rooms"], json::parse(R"([{"name":"lobby","members":0,"topic":"General chat"}])")) << rooms;
    const json joined = join_room(alice, "lobby");
    EXPECT_EQ(joined.value("topic", ""), "General chat") << joined;
    // An ordinary room has no topic field.
    EXPECT_FALSE(join_room(alice, "other").contains("topic"));
    // The permanent room stays when its last member leaves.
    call(alice, {{"type", "leave"}, {"room", "lobby"}, {"id", 2}});
    call(alice, {{"type", "leave"}, {"room", "other"}, {"id", 3}});
    EXPECT_EQ(call(alice, {{"type", "rooms"}, {"id", 4}})["rooms"],
              json::parse(R"([{"name":"lobby","members":0,"topic":"General chat"}])"));
}

class MotdTest : public parley_test {
protected:
    std::string daemon_config() const override { return "[server]\nmotd = \"Be nice\"\n"; }
};

TEST_F(MotdTest, SystemMessageRightAfterWelcome) {
    ws_client alice = connect();
    alice.send_json({{"type", "login"}, {"user", "alice"}, {"id", 1}});
    expect_type(alice, "welcome");
    const json motd = expect_type(alice, "system");
    EXPECT_EQ(motd, json({{"type", "system"}, {"text", "Be nice"}}));
}

class NoMotdTest : public parley_test {};

TEST_F(NoMotdTest, NoSystemMessageByDefault) {
    ws_client alice = login("alice");
    // The next message is the reply to this request, not a system message.
    alice.send_json({{"type", "users"}, {"id", 1}});
    EXPECT_EQ(expect_type(alice, "users")["re"], 1);
}

class PresenceLimitTest : public parley_test {
protected:
    std::string daemon_config() const override { return "[rooms]\npresence_max_members = 2\n"; }
};

TEST_F(PresenceLimitTest, JoinAboveTheLimitIsNotAnnounced) {
    ws_client alice = login("alice");
    ws_client bob = login("bob");
    ws_client carol = login("carol");
    join_room(alice, "r");
    join_room(bob, "r");
    // Two members: bob's join is announced to alice.
    const json presence = expect_type(alice, "presence");
    EXPECT_EQ(presence.value("user", ""), "bob") << presence;
    EXPECT_EQ(presence.value("event", ""), "join") << presence;
    // The third member's join is not: the next thing alice and bob get is carol's message.
    join_room(carol, "r");
    EXPECT_EQ(say(carol, "r", "after join", 1).value("type", ""), "ack");
    for (ws_client* member : {&alice, &bob}) {
        const json next = expect_type(*member, "message");
        EXPECT_EQ(next.value("text", ""), "after join") << next;
    }
}

// ---------------------------------------------------------------------------------------------

class DefaultOriginTest : public parley_test {};

TEST_F(DefaultOriginTest, SameHostOnly) {
    EXPECT_EQ(try_upgrade(port(), {"Origin: http://evil.example"}).status, 403);
    const std::string same_host = "Origin: http://127.0.0.1:" + std::to_string(port());
    EXPECT_EQ(try_upgrade(port(), {same_host}).status, 101);
    EXPECT_EQ(try_upgrade(port()).status, 101) << "a client without Origin is allowed";
    // And a real session through the headers option.
    ws_client client = connect({.headers = {same_host}});
    client.send_json({{"type", "login"}, {"user", "alice"}, {"id", 1}});
    expect_type(client, "welcome");
}

class AllowedOriginTest : public parley_test {
protected:
    std::string daemon_config() const override {
        return "[server]\nallowed_origins = [\"https://chat.example\"]\n";
    }
};

TEST_F(AllowedOriginTest, OnlyListedOrigins) {
    EXPECT_EQ(try_upgrade(port(), {"Origin: https://chat.example"}).status, 101);
    EXPECT_EQ(try_upgrade(port(), {"Origin: http://evil.example"}).status, 403);
    EXPECT_EQ(try_upgrade(port(), {"Origin: http://chat.example"}).status, 403) << "scheme differs";
    EXPECT_EQ(try_upgrade(port(), {"Origin: http://127.0.0.1:" + std::to_string(port())}).status, 403)
        << "with a list, the same host is not implied";
    EXPECT_EQ(try_upgrade(port()).status, 101) << "a client without Origin is allowed";
}

// ---------------------------------------------------------------------------------------------

// Upgrades on new connections until one gets 101 (a closed connection's place is given back
// asynchronously), up to window; returns the connected client.
ws_client upgrade_when_free(std::uint16_t port, milliseconds window = milliseconds(3000)) {
    const auto deadline = clock::now() + window;
    for (;;) {
        ws_client client(port);
        const http_response response = parse_http_response(client.raw_http(client.upgrade_request()));
        if (response.status == 101) {
            return client;
        }
        if (response.status != 503 || clock::now() >= deadline) {
            throw std::runtime_error("no place freed up: last status " + std::to_string(response.status));
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
}

class PerIpLimitTest : public parley_test {
protected:
    std::string daemon_config() const override { return "[limits]\nmax_connections_per_ip = 2\n"; }
};

TEST_F(PerIpLimitTest, ThirdConnectionFromOneAddressIsRefused) {
    ws_client first = login("alice");
    ws_client second = login("bob");
    const http_response refused = try_upgrade(port());
    EXPECT_EQ(refused.status, 503) << refused.body;
    EXPECT_TRUE(refused.header("retry-after").has_value());
    // The two admitted clients are unaffected.
    EXPECT_EQ(call(first, {{"type", "users"}, {"id", 1}}).value("type", ""), "users");
    first.send_close(1000);
    EXPECT_EQ(first.expect_close(), 1000);
    ws_client third = upgrade_when_free(port());
    third.send_json({{"type", "login"}, {"user", "carol"}, {"id", 1}});
    expect_type(third, "welcome");
    EXPECT_EQ(try_upgrade(port()).status, 503) << "two are open again";
}

class MaxConnectionsTest : public parley_test {
protected:
    std::string daemon_config() const override { return "[limits]\nmax_connections = 3\n"; }
};

TEST_F(MaxConnectionsTest, FourthConnectionIsRefusedUntilOneCloses) {
    ws_client a = login("a");
    ws_client b = login("b");
    ws_client c = login("c");
    EXPECT_EQ(try_upgrade(port()).status, 503);
    // Plain HTTP counts too.
    {
        ws_client http(port());
        const http_response response =
            parse_http_response(http.raw_http("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
        EXPECT_EQ(response.status, 503);
    }
    b.close_socket();  // abrupt: the place is given back all the same
    ws_client d = upgrade_when_free(port());
    d.send_json({{"type", "login"}, {"user", "d"}, {"id", 1}});
    expect_type(d, "welcome");
    EXPECT_EQ(try_upgrade(port()).status, 503);
}

// ---------------------------------------------------------------------------------------------

class LoginTimeoutTest : public parley_test {
protected:
    std::string daemon_config() const override { return "[limits]\nlogin_timeout_ms = 500\n"; }
};

TEST_F(LoginTimeoutTest, AnonymousConnectionIsClosedLoggedInStays) {
    const auto started = clock::now();
    ws_client anonymous = connect();
    ws_client alice = login("alice");
    EXPECT_EQ(anonymous.expect_close(milliseconds(2000)), 1008);
    const auto took = clock::now() - started;
    // Timeouts are checked every 250 ms against a clock of the same resolution, so the close
    // comes between 250 ms and 750 ms after the connect.
    EXPECT_GE(took, milliseconds(240)) << "closed long before the login timeout";
    // Let time pass on purpose: the logged-in client outlives the timeout several times.
    std::this_thread::sleep_for(milliseconds(1000));
    EXPECT_EQ(call(alice, {{"type", "users"}, {"id", 1}}).value("type", ""), "users");
    EXPECT_FALSE(alice.close_code().has_value());
}

class PingIdleTest : public parley_test {
protected:
    std::string daemon_config() const override {
        return "[limits]\nping_interval_ms = 300\nidle_timeout_ms = 1500\n";
    }
};

TEST_F(PingIdleTest, ReaderStaysSilentClientIsClosed) {
    ws_client reader = login("reader");
    ws_client silent = login("silent");
    join_room(reader, "r");
    join_room(silent, "r");
    // For 3 s the reader only reads (its reads answer the server's pings); the silent client
    // neither reads nor writes.
    const auto until = clock::now() + milliseconds(3000);
    while (clock::now() < until) {
        const auto message = reader.recv_json(milliseconds(50));
        if (message) {
            // presence of silent leaving (or its disconnect notice) may arrive; nothing else
            EXPECT_TRUE(message->value("type", "") == "presence" || message->value("type", "") == "system")
                << *message;
        }
        ASSERT_FALSE(reader.close_code().has_value()) << "the reading client was closed";
        ASSERT_FALSE(reader.eof()) << "the reading client was disconnected";
    }
    EXPECT_EQ(say(reader, "r", "still here", 1).value("type", ""), "ack");
    EXPECT_EQ(wait_type(reader, "message").value("text", ""), "still here");

    // The silent client: the server pinged it, got nothing back, and closed it with 1001.
    bool pinged = false;
    std::optional<std::uint16_t> code;
    while (auto frame = silent.recv_frame(milliseconds(2000))) {
        if (frame->opcode == opcode::ping) {
            pinged = true;
        }
        if (frame->opcode == opcode::close) {
            ASSERT_GE(frame->payload.size(), 2u);
            code = static_cast<std::uint16_t>((static_cast<std::uint8_t>(frame->payload[0]) << 8) |
                                              static_cast<std::uint8_t>(frame->payload[1]));
            break;
        }
    }
    EXPECT_TRUE(pinged) << "no ping before the close";
    EXPECT_EQ(code, std::optional<std::uint16_t>(1001));
}

}  // namespace
}  // namespace parley::integration
