#pragma once

#include "server/tls_channel.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>

#include <memory>
#include <vector>

namespace parley::server {

// The byte stream of a connection's HTTP phase, as Beast wants it (an Asio AsyncReadStream and
// AsyncWriteStream): the TCP socket itself, or, once use_tls() was called, TLS over it through
// a tls_channel. Reads run the TLS handshake as needed; a write completes when its ciphertext
// is in the socket, so at the upgrade nothing is left in flight and the channel (with any
// records received but not yet decrypted) can move to the ws_connection.
//
// A TLS failure completes the operation with an error of Asio's SSL category whose value is
// OpenSSL's error code. One read and one write at most at a time, like a socket used by Beast.
// Thread: the owning worker's thread.
class http_stream {
public:
    using executor_type = boost::asio::ip::tcp::socket::executor_type;

    explicit http_stream(boost::asio::ip::tcp::socket socket) : socket_(std::move(socket)) {}

    void use_tls(std::unique_ptr<tls_channel> channel) {
        tls_ = std::move(channel);
        cipher_in_.resize(16 * 1024);  // one TLS record
    }
    tls_channel* tls() { return tls_.get(); }
    std::unique_ptr<tls_channel> release_tls() { return std::move(tls_); }

    executor_type get_executor() { return socket_.get_executor(); }
    boost::asio::ip::tcp::socket& socket() { return socket_; }

    template <typename MutableBuffers, typename Handler>
    auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
        return boost::asio::async_initiate<Handler, void(boost::system::error_code, std::size_t)>(
            [this](auto done, const MutableBuffers& b) {
                if (!tls_) {
                    socket_.async_read_some(b, std::move(done));
                    return;
                }
                boost::asio::async_compose<decltype(done), void(boost::system::error_code, std::size_t)>(
                    read_op{*this, first_buffer(b)}, done, socket_);
            },
            handler, buffers);
    }

    template <typename ConstBuffers, typename Handler>
    auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
        return boost::asio::async_initiate<Handler, void(boost::system::error_code, std::size_t)>(
            [this](auto done, const ConstBuffers& b) {
                if (!tls_) {
                    socket_.async_write_some(b, std::move(done));
                    return;
                }
                boost::asio::async_compose<decltype(done), void(boost::system::error_code, std::size_t)>(
                    write_op{*this, b}, done, socket_);
            },
            handler, buffers);
    }

private:
    template <typename MutableBuffers>
    static boost::asio::mutable_buffer first_buffer(const MutableBuffers& buffers) {
        for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers);
             ++it) {
            boost::asio::mutable_buffer b(*it);
            if (b.size() > 0) {
                return b;
            }
        }
        return {};
    }

    boost::system::error_code tls_error() const {
        return {static_cast<int>(tls_->error_code()), boost::asio::error::get_ssl_category()};
    }

    // The steps shared by both operations: send what the channel has for the peer, then finish.
    // An operation that would finish inside its initiating call posts itself first, because
    // Asio's rule is that a handler never runs inside the call that started the operation.
    enum class stage : unsigned char { start, reading, writing, posted };

    struct read_op {
        http_stream& stream;
        boost::asio::mutable_buffer buffer;
        stage at = stage::start;
        bool finished = false;
        boost::system::error_code result{};
        std::size_t got = 0;

        template <typename Self>
        void operator()(Self& self, boost::system::error_code ec = {}, std::size_t n = 0) {
            tls_channel& tls = *stream.tls_;
            switch (at) {
            case stage::posted:
                self.complete(result, got);
                return;
            case stage::reading:
                if (ec) {
                    self.complete(ec, 0);
                    return;
                }
                if (!tls.feed(stream.cipher_in_.data(), n)) {
                    self.complete(boost::asio::error::no_memory, 0);
                    return;
                }
                break;
            case stage::writing:
                if (ec) {
                    self.complete(finished && result ? result : ec, 0);
                    return;
                }
                tls.consume_output(n);
                break;
            case stage::start:
                break;
            }
            if (!finished) {
                if (buffer.size() == 0) {
                    finished = true;
                } else {
                    switch (tls.read(static_cast<char*>(buffer.data()), buffer.size(), got)) {
                    case tls_channel::status::data: finished = true; break;
                    case tls_channel::status::closed: finished = true; result = boost::asio::error::eof; break;
                    case tls_channel::status::failed: finished = true; result = stream.tls_error(); break;
                    case tls_channel::status::need_input: break;
                    }
                }
            }
            if (tls.has_output()) {
                // Handshake messages, or the alert that tells the peer why we give up.
                at = stage::writing;
                std::string_view out = tls.output();
                boost::asio::async_write(stream.socket_, boost::asio::buffer(out.data(), out.size()), std::move(self));
                return;
            }
            if (finished) {
                if (at == stage::start) {
                    at = stage::posted;
                    boost::asio::post(stream.socket_.get_executor(), std::move(self));
                    return;
                }
                self.complete(result, got);
                return;
            }
            at = stage::reading;
            stream.socket_.async_read_some(boost::asio::buffer(stream.cipher_in_), std::move(self));
        }
    };

    template <typename ConstBuffers>
    struct write_op {
        http_stream& stream;
        ConstBuffers buffers;
        stage at = stage::start;
        boost::system::error_code result{};
        std::size_t taken = 0;

        template <typename Self>
        void operator()(Self& self, boost::system::error_code ec = {}, std::size_t n = 0) {
            tls_channel& tls = *stream.tls_;
            switch (at) {
            case stage::posted:
                self.complete(result, taken);
                return;
            case stage::writing:
                if (ec) {
                    self.complete(ec, 0);
                    return;
                }
                tls.consume_output(n);
                self.complete(result, taken);
                return;
            case stage::reading:
            case stage::start:
                break;
            }
            for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers);
                 ++it) {
                boost::asio::const_buffer b(*it);
                if (!tls.write(static_cast<const char*>(b.data()), b.size())) {
                    result = stream.tls_error();
                    taken = 0;
                    break;
                }
                taken += b.size();
            }
            if (tls.has_output()) {
                at = stage::writing;
                std::string_view out = tls.output();
                boost::asio::async_write(stream.socket_, boost::asio::buffer(out.data(), out.size()), std::move(self));
                return;
            }
            at = stage::posted;
            boost::asio::post(stream.socket_.get_executor(), std::move(self));
        }
    };

    boost::asio::ip::tcp::socket socket_;
    std::unique_ptr<tls_channel> tls_;
    std::vector<char> cipher_in_;  // ciphertext read from the socket (TLS only)
};

}  // namespace parley::server
