#pragma once

#include <cstddef>
#include <string>
#include <string_view>

struct ssl_st;
struct bio_st;

namespace parley::server {

class tls_context;

// The server side of one TLS connection, as a state machine over memory: ciphertext goes in
// with feed() and comes out with output(); plaintext comes out of read() and goes in with
// write(). It does no I/O of its own, so whoever owns the socket decides when to read and
// write: the HTTP phase through Asio (http_stream), the WebSocket phase on the worker's own
// epoll set with gathered writes (ws_connection). The whole TLS state, including records
// received but not yet decrypted, lives in this object and moves with it at the upgrade.
//
// The handshake runs inside read(): the first reads consume the ClientHello and queue the
// server's reply in output().
// Thread: one at a time (the owning connection's worker).
class tls_channel {
public:
    // Throws std::bad_alloc when OpenSSL cannot allocate the connection's state.
    explicit tls_channel(const tls_context& context);
    ~tls_channel();
    tls_channel(const tls_channel&) = delete;
    tls_channel& operator=(const tls_channel&) = delete;

    // Ciphertext received from the peer. False when it cannot be stored (out of memory): the
    // connection cannot go on.
    [[nodiscard]] bool feed(const char* data, std::size_t size);

    enum class status : unsigned char {
        data,        // plaintext was read
        need_input,  // nothing to read until more ciphertext is fed
        closed,      // the peer sent close_notify
        failed,      // a protocol error (garbage, a bad record, a failed handshake): see reason()
    };
    // Decrypts at most `capacity` bytes into `out` (one record at most), continuing the
    // handshake first if needed; `size` is what was read. Whatever must go back to the peer
    // (handshake messages, alerts) is added to output().
    status read(char* out, std::size_t capacity, std::size_t& size);

    // Encrypts all of data into output(); false on failure (see reason()). Only after the
    // handshake, which is complete once read() returned data.
    bool write(const char* data, std::size_t size);

    // Queues a close_notify alert in output().
    void close_notify();

    // Ciphertext to send, in order; consume_output(n) drops the first n bytes once sent.
    std::string_view output() const { return std::string_view(out_).substr(out_pos_); }
    bool has_output() const { return out_pos_ < out_.size(); }
    void consume_output(std::size_t n);

    // Gives back the memory the channel kept from its last burst (its input and output
    // buffers grow to the largest burst and stay), when nothing is waiting in them. For an
    // idle connection's housekeeping: cheap when there is nothing to give back.
    void release_idle_buffers();

    // Why the last failure happened (OpenSSL's reason), and its packed OpenSSL error code.
    std::string reason() const;
    unsigned long error_code() const { return error_; }
    // True when the failure was a plain HTTP request sent to the TLS port.
    bool plain_http_seen() const;

private:
    void collect_output();
    void note_failure();

    ssl_st* ssl_;
    bio_st* in_;   // owned by ssl_
    bio_st* out_bio_;  // owned by ssl_
    std::string out_;
    std::size_t out_pos_ = 0;
    unsigned long error_ = 0;
};

}  // namespace parley::server
