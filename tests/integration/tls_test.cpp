// TLS on the daemon's port ([tls] cert_file and key_file): wss:// chat and https:// endpoints
// through a client that verifies the daemon's self-signed certificate, made by this test;
// large messages and fan-out across TLS records; clients that do not speak TLS are closed while
// the daemon keeps serving; SIGHUP reads renewed certificate files for new connections only;
// a missing key file stops the start with a message that names it.
#include "http_response.hpp"
#include "test_support.hpp"
#include "tls_support.hpp"

#include <openssl/ssl.h>
#include <signal.h>

#include <filesystem>
#include <future>
#include <thread>

namespace parley::integration {
namespace {

class TlsTest : public parley_test {
protected:
    TlsTest() { write_self_signed("parley-test-one", cert_file_, key_file_); }

    std::string daemon_config() const override {
        std::string text = "[tls]\ncert_file = \"";
        text.append(cert_file_).append("\"\nkey_file = \"").append(key_file_).append("\"\n");
        return text.append(extra_config());
    }
    // More configuration for a fixture (TOML sections after [tls]).
    virtual std::string extra_config() const { return {}; }

    client_options tls_options(const std::string& trust) const { return {.tls_trust_file = trust}; }
    client_options tls_options() const { return tls_options(cert_file_); }

    ws_client tls_login(const std::string& user) { return login(user, tls_options()); }

    temp_dir dir_;
    std::string cert_file_ = dir_.file("cert.pem");
    std::string key_file_ = dir_.file("key.pem");
};

std::string get_request(const std::string& path) {
    return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
}

TEST_F(TlsTest, ChatOverWssAndHealthOverHttps) {
    ws_client alice = tls_login("alice");
    ws_client bob = tls_login("bob");
    EXPECT_EQ(alice.peer_common_name(), "parley-test-one");
    join_room(alice, "lobby");
    join_room(bob, "lobby");
    alice.send_json({{"type", "say"}, {"room", "lobby"}, {"text", "hello over tls"}, {"id", 1}});
    EXPECT_EQ(wait_reply(alice, 1).value("type", ""), "ack");
    expect_message_object(wait_type(bob, "message"), "lobby", "alice", "hello over tls");

    ws_client https(port(), tls_options());
    const http_response health = parse_http_response(https.raw_http(get_request("/healthz")));
    EXPECT_EQ(health.status, 200);
    EXPECT_EQ(health.body, "ok");
    // Keep-alive works through TLS too: a second request on the same connection.
    const http_response ready = parse_http_response(https.raw_http(get_request("/readyz")));
    EXPECT_EQ(ready.status, 200);
}

TEST_F(TlsTest, Tls12ClientsChatWithTls13Clients) {
    // Both versions the daemon accepts, in one room: each has its own record layer.
    client_options old_client = tls_options();
    old_client.tls_max_version = TLS1_2_VERSION;
    ws_client alice = login("alice", old_client);
    ws_client bob = tls_login("bob");
    EXPECT_EQ(alice.tls_version(), "TLSv1.2");
    EXPECT_EQ(bob.tls_version(), "TLSv1.3");
    join_room(alice, "r");
    join_room(bob, "r");
    for (int i = 0; i < 50; ++i) {
        alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "a" + std::to_string(i)}});
        bob.send_json({{"type", "say"}, {"room", "r"}, {"text", "b" + std::to_string(i)}});
    }
    for (ws_client* c : {&alice, &bob}) {
        int next_a = 0;
        int next_b = 0;
        while (next_a < 50 || next_b < 50) {
            const json m = wait_type(*c, "message");
            const std::string text = m.value("text", "");
            int& next = text.starts_with("a") ? next_a : next_b;
            ASSERT_EQ(text.substr(1), std::to_string(next)) << "out of order";
            ++next;
        }
    }
}

TEST_F(TlsTest, ClientThatDoesNotTrustTheCertificateIsRefusedByItsOwnCheck) {
    // The client side of verification works, so the tests above do verify the daemon: a client
    // trusting another certificate fails the handshake.
    temp_dir other;
    write_self_signed("someone-else", other.file("cert.pem"), other.file("key.pem"));
    EXPECT_THROW(ws_client(port(), tls_options(other.file("cert.pem"))), std::runtime_error);
    EXPECT_NO_THROW(tls_login("alice"));
}

class TlsLargeTest : public TlsTest {
protected:
    std::string extra_config() const override {
        return "[limits]\nmax_message_bytes = 262144\nmax_text_bytes = 200000\n";
    }
};

TEST_F(TlsLargeTest, LargeMessagesAndFanOutArriveIntact) {
    std::vector<ws_client> clients;
    for (int i = 0; i < 5; ++i) {
        clients.push_back(tls_login("user" + std::to_string(i)));
        join_room(clients.back(), "big");
    }
    // 100 KB spans several TLS records both ways (at most 16 KiB each); sent in fragments too.
    std::string text;
    for (std::size_t i = 0; text.size() < 100'000; ++i) {
        text.push_back(static_cast<char>('a' + (i * 7 + i / 26) % 26));
    }
    clients[0].send_json({{"type", "say"}, {"room", "big"}, {"text", text}, {"id", "whole"}});
    const std::string other = std::string(text.rbegin(), text.rend());
    clients[1].send_json({{"type", "say"}, {"room", "big"}, {"text", other}, {"id", "pieces"}}, 4000);
    // And many small ones behind them, which the server gathers into shared records.
    for (int i = 0; i < 200; ++i) {
        clients[2].send_json({{"type", "say"}, {"room", "big"}, {"text", "small " + std::to_string(i)}});
    }
    for (ws_client& c : clients) {
        bool got_text = false;
        bool got_other = false;
        int next_small = 0;
        // The three senders' messages interleave in any order; each sender's stay in order.
        while (!got_text || !got_other || next_small < 200) {
            const json m = next_message(c, milliseconds(10000));
            if (m.value("type", "") != "message") {
                continue;
            }
            const std::string got = m.value("text", "");
            if (got.starts_with("small ")) {
                ASSERT_EQ(got, "small " + std::to_string(next_small)) << "out of order";
                ++next_small;
            } else if (got == text && !got_text) {
                got_text = true;
            } else if (got == other && !got_other) {
                got_other = true;
            } else {
                FAIL() << "a large message arrived changed or twice (" << got.size() << " bytes)";
            }
        }
    }

    // Idle TLS connections give their buffers back at the worker's housekeeping tick (every
    // 250 ms); the connections must work the same afterwards.
    std::this_thread::sleep_for(milliseconds(600));
    clients[3].send_json({{"type", "say"}, {"room", "big"}, {"text", other}});
    for (ws_client& c : clients) {
        EXPECT_EQ(wait_type(c, "message").value("text", ""), other);
    }
}

class TlsRefusalTest : public TlsTest {
protected:
    std::string extra_config() const override { return "[server]\nhandshake_timeout_ms = 500\n"; }
};

TEST_F(TlsRefusalTest, ClientsThatDoNotSpeakTlsAreClosedAndTheDaemonKeepsServing) {
    // Plain HTTP to the TLS port: a plain-text 400 that says what to do, then the end.
    ws_client plain(port());
    const std::string answer = plain.raw_http(get_request("/healthz"));
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 400")) << answer;
    EXPECT_NE(answer.find("https://"), std::string::npos) << answer;
    EXPECT_TRUE(plain.wait_eof(milliseconds(2000)));

    // Garbage instead of a ClientHello: closed at once, far sooner than the handshake timeout.
    ws_client garbage(port());
    garbage.send_raw(std::string(64, '\x01'));
    EXPECT_TRUE(garbage.wait_eof(milliseconds(400)));

    // A handshake that stalls (half a record header): closed by the handshake timeout.
    ws_client stalled(port());
    stalled.send_raw(std::string("\x16\x03\x01", 3));
    EXPECT_TRUE(stalled.wait_eof(milliseconds(3000)));

    ws_client alice = tls_login("alice");
    join_room(alice, "still-here");
    ws_client https(port(), tls_options());
    const http_response metrics = parse_http_response(https.raw_http(get_request("/metrics")));
    ASSERT_EQ(metrics.status, 200);
    // The two refused by OpenSSL are counted; the stalled one is a timeout.
    EXPECT_NE(metrics.body.find("parley_handshake_failures_total{reason=\"tls\"} 2"), std::string::npos)
        << metrics.body;
    EXPECT_NE(metrics.body.find("parley_handshake_failures_total{reason=\"timeout\"} 1"), std::string::npos);
}

TEST_F(TlsTest, ReloadGivesNewConnectionsTheRenewedCertificate) {
    ws_client alice = tls_login("alice");
    join_room(alice, "r");
    ASSERT_EQ(alice.peer_common_name(), "parley-test-one");
    std::filesystem::copy_file(cert_file_, dir_.file("one.pem"));

    write_self_signed("parley-test-two", cert_file_, key_file_);
    std::filesystem::copy_file(cert_file_, dir_.file("two.pem"));
    std::size_t from = daemon_->line_count();
    daemon_->send_signal(SIGHUP);
    ASSERT_TRUE(daemon_->wait_for_line("reload: TLS certificate read again", from));

    // A client that trusts only the new certificate gets it; one trusting only the old one no
    // longer connects.
    ws_client bob = login("bob", tls_options(dir_.file("two.pem")));
    EXPECT_EQ(bob.peer_common_name(), "parley-test-two");
    join_room(bob, "r");
    EXPECT_THROW(ws_client(port(), tls_options(dir_.file("one.pem"))), std::runtime_error);

    // The connection made before the reload goes on with its own session.
    alice.send_json({{"type", "say"}, {"room", "r"}, {"text", "still here"}, {"id", 1}});
    EXPECT_EQ(wait_reply(alice, 1).value("type", ""), "ack");
    expect_message_object(wait_type(bob, "message"), "r", "alice", "still here");

    // A broken file keeps the certificate in use and says why.
    replace_file(cert_file_, "not a certificate\n");
    from = daemon_->line_count();
    daemon_->send_signal(SIGHUP);
    ASSERT_TRUE(daemon_->wait_for_line("TLS certificate not replaced", from));
    EXPECT_TRUE(daemon_->wait_for_line(cert_file_, from, milliseconds(0))) << "the error does not name the file";
    ws_client carol(port(), tls_options(dir_.file("two.pem")));
    EXPECT_EQ(carol.peer_common_name(), "parley-test-two");
}

TEST_F(TlsTest, ShutdownClosesTlsClientsWithGoingAway) {
    ws_client alice = tls_login("alice");
    join_room(alice, "r");
    // On another thread: the daemon may wait for the client's close reply.
    auto stopped = std::async(std::launch::async, [this] { return daemon_->stop(); });
    EXPECT_EQ(alice.expect_close(milliseconds(10000)), 1001);
    // The close handshake done, the server ends TCP (after its close_notify) at once.
    EXPECT_TRUE(alice.wait_eof(milliseconds(1000)));
    const exit_status status = stopped.get();
    EXPECT_TRUE(status.exited && status.code == 0) << status.describe();
}

class TlsSlowConsumerTest : public TlsTest {
protected:
    std::vector<std::string> daemon_args() const override {
        auto args = relaxed_rate_args();
        args.insert(args.end(), {"--write-queue-limit", "65536"});
        return args;
    }
};

TEST_F(TlsSlowConsumerTest, SlowTlsReaderIsClosedAndTheRoomGoesOn) {
    // Over TLS, what the socket does not take waits as ciphertext and no more frames are
    // encrypted meanwhile, so the frame queue's bound still finds the slow reader.
    client_options slow_options = tls_options();
    slow_options.receive_buffer = 4096;
    ws_client slow = login("slow", slow_options);
    join_room(slow, "r");
    ws_client sender = tls_login("sender");
    ws_client watcher = tls_login("watcher");
    join_room(sender, "r");
    join_room(watcher, "r");

    const std::string filler(3990, 'x');
    bool slow_gone = false;
    for (int i = 1; i <= 4000 && !slow_gone; ++i) {  // 16 MB: far beyond buffers plus the bound
        const std::string text = std::to_string(i) + ":" + filler;
        sender.send_json({{"type", "say"}, {"room", "r"}, {"text", text}});
        read_until(sender, is_chat(text));
        for (const json& m : read_until(watcher, is_chat(text))) {
            if (m.value("type", "") == "presence" && m.value("user", "") == "slow" &&
                m.value("event", "") == "leave") {
                slow_gone = true;
            } else if (m.value("type", "") == "message") {
                ASSERT_EQ(m["seq"], i) << "watcher missed or reordered a message";
            }
        }
    }
    ASSERT_TRUE(slow_gone) << "the slow TLS reader was never closed";
    const auto code = slow.expect_close(milliseconds(10000));
    ASSERT_TRUE(code) << "slow's connection is still open";
    EXPECT_TRUE(*code == 1008 || *code == closed_without_frame) << "close code " << *code;
    EXPECT_EQ(call(watcher, {{"type", "users"}, {"id", 1}})["users"], json({"sender", "watcher"}));
}

TEST(TlsStartTest, MissingKeyFileStopsTheStartNamingTheFile) {
    temp_dir dir;
    write_self_signed("parley-test", dir.file("cert.pem"), dir.file("key.pem"));
    const std::string missing = dir.file("missing-key.pem");
    std::string config = "[tls]\ncert_file = \"" + dir.file("cert.pem") + "\"\nkey_file = \"" + missing + "\"\n";
    try {
        daemon_process daemon({}, config);
        FAIL() << "the daemon started without its key file";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(missing), std::string::npos) << what;
        EXPECT_NE(what.find("No such file"), std::string::npos) << what;
    }
}

TEST(TlsStartTest, KeyOfAnotherCertificateStopsTheStart) {
    temp_dir dir;
    write_self_signed("one", dir.file("cert.pem"), dir.file("key.pem"));
    write_self_signed("two", dir.file("other-cert.pem"), dir.file("other-key.pem"));
    std::string config = "[tls]\ncert_file = \"" + dir.file("cert.pem") + "\"\nkey_file = \"" +
                         dir.file("other-key.pem") + "\"\n";
    try {
        daemon_process daemon({}, config);
        FAIL() << "the daemon started with a key that does not match";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("does not belong to the certificate"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace parley::integration
