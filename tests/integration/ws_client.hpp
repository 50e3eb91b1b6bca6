#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

struct ssl_st;
struct ssl_ctx_st;

namespace parley::integration {

using json = nlohmann::json;
using milliseconds = std::chrono::milliseconds;

// Every wait in the suite is bounded; this is the default bound.
inline constexpr milliseconds default_timeout{5000};

// Frame opcodes (RFC 6455 section 5.2).
namespace opcode {
inline constexpr std::uint8_t continuation = 0x0;
inline constexpr std::uint8_t text = 0x1;
inline constexpr std::uint8_t binary = 0x2;
inline constexpr std::uint8_t close = 0x8;
inline constexpr std::uint8_t ping = 0x9;
inline constexpr std::uint8_t pong = 0xA;
}  // namespace opcode

// What expect_close() reports when the connection ended without a close frame (RFC 6455
// section 7.1.5: "abnormal closure").
inline constexpr std::uint16_t closed_without_frame = 1006;

// One frame as received from the server.
struct ws_frame {
    bool fin = true;
    std::uint8_t rsv = 0;  // RSV1..RSV3 as a 3-bit number (RSV1 = 4)
    std::uint8_t opcode = 0;
    bool masked = false;
    std::string payload;
};

// How to write a frame. The defaults are what RFC 6455 requires of a client; tests of
// violations switch them off.
struct frame_options {
    bool fin = true;
    bool mask = true;
    std::uint8_t rsv = 0;  // RSV1..RSV3 as a 3-bit number (RSV1 = 4)
};

struct client_options {
    // SO_RCVBUF in bytes, set before connecting so the advertised window stays small;
    // 0 keeps the system default. Used to build slow consumers.
    int receive_buffer = 0;
    // Extra header lines ("Origin: https://chat.example") sent with the upgrade request.
    std::vector<std::string> headers{};
    // Non-empty: speak TLS, trusting only the certificate(s) in this PEM file and checking
    // that the server's certificate is valid for 127.0.0.1.
    std::string tls_trust_file{};
    // With TLS: the newest protocol version offered (OpenSSL's TLS1_2_VERSION...); 0: the newest.
    int tls_max_version = 0;
    // Non-empty: offered as Sec-WebSocket-Extensions ("permessage-deflate; client_max_window_bits").
    // When the server agrees, compressed messages it sends are inflated by recv_json() and
    // send_compressed() may be used.
    std::string extensions{};
    // Local IPv4 address to connect from, e.g. "127.0.0.2" (on Linux every 127.x.y.z is a
    // loopback address), so the daemon sees a client address of its own (per-address limits);
    // empty: the system's choice (127.0.0.1).
    std::string source_address{};
};

// A blocking WebSocket client over a plain TCP socket, or over TLS (client_options), for tests.
//
// Every wait takes a timeout; a timeout yields nullopt/false, never a hang. Unexpected protocol
// events (a masked or malformed server frame, a binary message, text that is not JSON) throw
// std::runtime_error so the test fails with a description. A slow consumer is simply a client
// whose receive functions are not called. Not thread-safe: one thread per client.
class ws_client {
public:
    // Opens a TCP connection to 127.0.0.1:port, and completes the TLS handshake when asked to.
    // Throws std::runtime_error on failure (for TLS, with OpenSSL's reason).
    explicit ws_client(std::uint16_t port, client_options options = {});
    ~ws_client();
    ws_client(ws_client&& other) noexcept;
    ws_client& operator=(ws_client&& other) noexcept;
    ws_client(const ws_client&) = delete;
    ws_client& operator=(const ws_client&) = delete;

    // Sends the upgrade request (random key) and checks for 101 with the right
    // Sec-WebSocket-Accept. Throws std::runtime_error with the response on failure.
    void upgrade(std::string_view path = "/ws", milliseconds timeout = default_timeout);

    // The request upgrade() sends (with a fresh random key and the headers of the options), for
    // tests that send it with raw_http() to see a refusal (403, 426, 503) as it is.
    std::string upgrade_request(std::string_view path = "/ws");

    // Sends request unchanged and returns the raw response: one complete response, or whatever
    // arrived until the server closed the connection or the timeout passed.
    std::string raw_http(std::string_view request, milliseconds timeout = default_timeout);

    // Writes bytes as they are. Throws if the socket does not accept them within timeout or
    // the connection is gone.
    void send_raw(std::string_view bytes, milliseconds timeout = default_timeout);

    // One frame, encoded per options with a fresh random mask.
    std::string encode_frame(std::uint8_t op, std::string_view payload, frame_options options = {});
    void send_frame(std::uint8_t op, std::string_view payload, frame_options options = {});

    // One text message; with fragment_size > 0 it goes as frames of at most that many bytes.
    void send_text(std::string_view text, std::size_t fragment_size = 0);
    void send_json(const json& message, std::size_t fragment_size = 0);

    // One text message compressed with permessage-deflate (RSV1 on its first frame), in frames of
    // at most fragment_size compressed bytes when fragment_size > 0. Needs an agreed extension.
    void send_compressed(std::string_view text, std::size_t fragment_size = 0);

    // The Sec-WebSocket-Extensions value of the 101 response ("" when none).
    const std::string& agreed_extensions() const { return ext_.agreed; }
    // Messages recv_json() received compressed, and all text messages it received.
    std::size_t compressed_received() const { return ext_.compressed_received; }
    std::size_t messages_received() const { return ext_.messages_received; }
    // Bytes of frames read from the socket since the upgrade response (as they crossed the wire,
    // before TLS decryption is not counted: the plaintext frames).
    std::size_t wire_bytes_received() const { return ext_.wire_bytes; }

    // A close frame with code and reason.
    void send_close(std::uint16_t code, std::string_view reason = {});

    // The next frame of any kind, as is (no automatic pong); nullopt on timeout or when the
    // connection has ended.
    std::optional<ws_frame> recv_frame(milliseconds timeout = default_timeout);

    // The next application message as JSON. Answers pings and reassembles fragments on the way.
    // nullopt on timeout, on a close frame (see close_code()) or at the end of the connection.
    std::optional<json> recv_json(milliseconds timeout = default_timeout);

    // Reads messages until one satisfies pred and returns it; the others are dropped.
    // nullopt when the timeout (for the whole search) passes first or the connection ends.
    std::optional<json> recv_until(const std::function<bool(const json&)>& pred,
                                   milliseconds timeout = default_timeout);

    // recv_until for a message whose "type" is type.
    std::optional<json> recv_type(std::string_view type, milliseconds timeout = default_timeout);

    // Reads until the server's close frame, answers it with a close frame and returns its code
    // (1005 when it carried none). Data frames on the way are dropped. Returns
    // closed_without_frame when the connection ended (EOF or reset) without a close frame, and
    // nullopt when the timeout passed first.
    std::optional<std::uint16_t> expect_close(milliseconds timeout = default_timeout);

    // Reads and drops everything until the server ends the TCP connection (EOF or reset).
    // False when the timeout passes first.
    bool wait_eof(milliseconds timeout = default_timeout);

    // Closes the socket without a close frame: an abrupt disconnect.
    void close_socket();

    // Closes the socket with SO_LINGER 0: the kernel discards unsent bytes and sends a TCP
    // reset instead of a FIN (a client that crashes or is killed mid-conversation).
    void reset_socket();

    bool eof() const { return eof_; }
    // The code of the server's close frame, once one was received.
    std::optional<std::uint16_t> close_code() const { return close_code_; }
    // True once this side sent a close frame (send_close, or the answer to the server's).
    bool close_sent() const { return close_sent_; }
    int fd() const { return fd_; }
    // TLS: the common name (CN) of the certificate the server presented, and the protocol
    // version agreed ("TLSv1.3"); empty without TLS.
    std::string peer_common_name() const;
    std::string tls_version() const;

private:
    using clock = std::chrono::steady_clock;

    // Reads what is available into in_, waiting until deadline. False on timeout or end of
    // connection (then eof_ is set).
    bool fill(clock::time_point deadline);
    // Removes and returns one complete frame from in_, if there is one.
    std::optional<ws_frame> take_frame();
    std::optional<ws_frame> next_frame(clock::time_point deadline);
    std::optional<json> next_json(clock::time_point deadline);
    // Records a close frame's code; answers it unless this side already sent one.
    void on_close_frame(const ws_frame& frame);

    std::string upgrade_request(std::string_view path, const std::string& key) const;
    void start_tls(const std::string& trust_file, int max_version);

    int fd_ = -1;
    ssl_ctx_st* tls_context_ = nullptr;  // owned; both null without TLS
    ssl_st* tls_ = nullptr;              // owned
    std::uint16_t port_ = 0;
    std::vector<std::string> headers_;
    std::string in_;
    std::size_t in_pos_ = 0;
    bool eof_ = false;
    bool close_sent_ = false;
    std::optional<std::uint16_t> close_code_;
    std::string fragments_;
    bool in_message_ = false;
    // permessage-deflate and what was received, moved as one.
    struct extension_state {
        std::string offered;
        std::string agreed;
        int server_window_bits = 15;  // the window compressed messages from the server may use
        bool fragments_compressed = false;
        std::size_t compressed_received = 0;
        std::size_t messages_received = 0;
        std::size_t wire_bytes = 0;  // counted from the end of the upgrade response on
    };
    extension_state ext_;
    std::mt19937 rng_;
};

}  // namespace parley::integration
