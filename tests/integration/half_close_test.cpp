// A client that sends its last bytes and its FIN in one TCP segment. The daemon's epoll set is
// edge-triggered and raises one event for both, so the server must read on to the end of the
// stream when the event says the peer hung up, instead of stopping at the short read and
// waiting for a timeout to notice the client is gone.
#include "http_response.hpp"
#include "test_support.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace parley::integration {
namespace {

using clock = std::chrono::steady_clock;

// Writes bytes and then the FIN as one segment: corked, the bytes wait and leave with the FIN.
void send_with_fin(ws_client& client, std::string_view bytes) {
    const int on = 1;
    ASSERT_EQ(::setsockopt(client.fd(), IPPROTO_TCP, TCP_CORK, &on, sizeof on), 0);
    client.send_raw(bytes);
    ASSERT_EQ(::shutdown(client.fd(), SHUT_WR), 0);
}

class HalfCloseTest : public parley_test {};

TEST_F(HalfCloseTest, LastRequestWithFinEndsTheSessionAtOnce) {
    ws_client alice = login("alice");
    send_with_fin(alice, alice.encode_frame(opcode::text, R"({"type":"users","id":1})"));
    // The name comes free when the server sees the end of the stream; missing the FIN, it
    // stayed taken until the next ping found the socket dead (25 s by default).
    ws_client again = connect();
    const json reply = login_retrying(again, "alice", milliseconds(2000));
    EXPECT_EQ(reply.value("type", ""), "welcome") << reply.dump();
}

class HalfCloseLimitTest : public parley_test {
protected:
    std::vector<std::string> daemon_args() const override {
        auto args = relaxed_rate_args();
        args.insert(args.end(), {"--set", "limits.max_connections_per_ip=1"});
        return args;
    }
};

TEST_F(HalfCloseLimitTest, CloseAnsweredWithFinAfterAProtocolErrorFreesTheConnectionAtOnce) {
    ws_client bad = connect();
    bad.send_frame(opcode::text, "{}", {.mask = false});
    const auto close = bad.recv_frame();
    ASSERT_TRUE(close && close->opcode == opcode::close) << "no close frame for an unmasked frame";
    // Our close answer and our FIN in one segment. The server's frame parser stopped at the
    // error, so only the end of the stream can tell it we are gone.
    send_with_fin(bad, bad.encode_frame(opcode::close, close->payload.substr(0, 2)));
    // This address's only slot comes free at once; missing the FIN, it stayed taken for the
    // 3 s the server waits for a closing client.
    const auto deadline = clock::now() + milliseconds(2000);
    int status = 0;
    while (status != 101 && clock::now() < deadline) {
        ws_client next(port());
        status = parse_http_response(next.raw_http(next.upgrade_request())).status;
        if (status != 101) {
            std::this_thread::sleep_for(milliseconds(50));
        }
    }
    EXPECT_EQ(status, 101) << "a new connection from the same address is still refused";
}

}  // namespace
}  // namespace parley::integration
