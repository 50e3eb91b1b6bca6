#include "ws_client.hpp"

#include "tests/peer_deflate.hpp"
#include "handshake_key.hpp"
#include "http_response.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace parley::integration {

namespace {

std::runtime_error system_error(const std::string& what) {
    return std::runtime_error(what + ": " + std::strerror(errno));
}

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, left.count()));
}

// Waits for events on fd until deadline; false on timeout.
bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, remaining_ms(deadline));
        if (n > 0) {
            return true;
        }
        if (n == 0) {
            return false;
        }
        if (errno != EINTR) {
            throw system_error("poll");
        }
    }
}

std::string openssl_reason() {
    const unsigned long code = ERR_get_error();
    ERR_clear_error();
    const char* reason = code ? ERR_reason_error_string(code) : nullptr;
    return reason ? reason : "no OpenSSL reason";
}

std::string lowercase(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

}  // namespace

ws_client::ws_client(std::uint16_t port, client_options options)
    : port_(port), headers_(options.headers), rng_(std::random_device{}()) {
    if (!options.extensions.empty()) {
        ext_.offered = options.extensions;
        headers_.push_back("Sec-WebSocket-Extensions: " + options.extensions);
    }
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) {
        throw system_error("socket");
    }
    if (options.receive_buffer > 0) {
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &options.receive_buffer, sizeof options.receive_buffer);
    }
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (!options.source_address.empty()) {
        sockaddr_in local{};
        local.sin_family = AF_INET;
        if (::inet_pton(AF_INET, options.source_address.c_str(), &local.sin_addr) != 1) {
            ::close(fd_);
            throw std::runtime_error("bad source address " + options.source_address);
        }
        // The port is chosen at connect(), per destination, instead of at bind(), where each
        // bound socket would hold a local port of its own: clients that connect often would
        // otherwise run out of ports.
        ::setsockopt(fd_, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        if (::bind(fd_, reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
            const auto error = system_error("bind " + options.source_address);
            ::close(fd_);
            throw error;
        }
    }

    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        if (errno != EINPROGRESS) {
            const auto error = system_error("connect");
            ::close(fd_);
            throw error;
        }
        const auto deadline = clock::now() + default_timeout;
        int error = 0;
        socklen_t length = sizeof error;
        if (!wait_for(fd_, POLLOUT, deadline) ||
            ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
            ::close(fd_);
            throw std::runtime_error("connect to port " + std::to_string(port) + " failed: " +
                                     (error ? std::strerror(error) : "timeout"));
        }
    }
    if (!options.tls_trust_file.empty()) {
        try {
            start_tls(options.tls_trust_file, options.tls_max_version);
        } catch (...) {
            close_socket();
            throw;
        }
    }
}

void ws_client::start_tls(const std::string& trust_file, int max_version) {
    tls_context_ = SSL_CTX_new(TLS_client_method());
    if (tls_context_ == nullptr || SSL_CTX_load_verify_locations(tls_context_, trust_file.c_str(), nullptr) != 1 ||
        (max_version != 0 && SSL_CTX_set_max_proto_version(tls_context_, max_version) != 1)) {
        throw std::runtime_error("TLS client setup with " + trust_file + " failed: " + openssl_reason());
    }
    SSL_CTX_set_verify(tls_context_, SSL_VERIFY_PEER, nullptr);
    tls_ = SSL_new(tls_context_);
    if (tls_ == nullptr || SSL_set_fd(tls_, fd_) != 1 ||
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(tls_), "127.0.0.1") != 1) {
        throw std::runtime_error("TLS client setup failed: " + openssl_reason());
    }
    const auto deadline = clock::now() + default_timeout;
    for (;;) {
        ERR_clear_error();
        const int n = SSL_connect(tls_);
        if (n == 1) {
            return;
        }
        const int error = SSL_get_error(tls_, n);
        if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
            if (!wait_for(fd_, error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
                throw std::runtime_error("TLS handshake timed out");
            }
            continue;
        }
        const long verify = SSL_get_verify_result(tls_);
        throw std::runtime_error("TLS handshake failed: " + openssl_reason() +
                                 (verify != X509_V_OK ? std::string(" (certificate: ") +
                                                            X509_verify_cert_error_string(verify) + ")"
                                                      : std::string()));
    }
}

std::string ws_client::tls_version() const {
    return tls_ != nullptr ? SSL_get_version(tls_) : "";
}

std::string ws_client::peer_common_name() const {
    if (tls_ == nullptr) {
        return {};
    }
    X509* cert = SSL_get1_peer_certificate(tls_);
    if (cert == nullptr) {
        return {};
    }
    char name[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, name, sizeof name);
    X509_free(cert);
    return name;
}

ws_client::~ws_client() {
    close_socket();
}

ws_client::ws_client(ws_client&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      tls_context_(std::exchange(other.tls_context_, nullptr)),
      tls_(std::exchange(other.tls_, nullptr)),
      port_(other.port_),
      headers_(std::move(other.headers_)),
      in_(std::move(other.in_)),
      in_pos_(other.in_pos_),
      eof_(other.eof_),
      close_sent_(other.close_sent_),
      close_code_(other.close_code_),
      fragments_(std::move(other.fragments_)),
      in_message_(other.in_message_),
      ext_(std::move(other.ext_)),
      rng_(other.rng_) {}

ws_client& ws_client::operator=(ws_client&& other) noexcept {
    if (this != &other) {
        close_socket();
        fd_ = std::exchange(other.fd_, -1);
        tls_context_ = std::exchange(other.tls_context_, nullptr);
        tls_ = std::exchange(other.tls_, nullptr);
        port_ = other.port_;
        headers_ = std::move(other.headers_);
        in_ = std::move(other.in_);
        in_pos_ = other.in_pos_;
        eof_ = other.eof_;
        close_sent_ = other.close_sent_;
        close_code_ = other.close_code_;
        fragments_ = std::move(other.fragments_);
        in_message_ = other.in_message_;
        rng_ = other.rng_;
        ext_ = std::move(other.ext_);
    }
    return *this;
}

void ws_client::close_socket() {
    if (tls_ != nullptr) {
        SSL_free(tls_);
        tls_ = nullptr;
    }
    if (tls_context_ != nullptr) {
        SSL_CTX_free(tls_context_);
        tls_context_ = nullptr;
    }
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
}

void ws_client::reset_socket() {
    if (fd_ >= 0) {
        const linger abort{1, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
        close_socket();
    }
}

std::string ws_client::upgrade_request(std::string_view path, const std::string& key) const {
    std::string request = "GET " + std::string(path) + " HTTP/1.1\r\n";
    request += "Host: 127.0.0.1:" + std::to_string(port_) + "\r\n";
    request += "Upgrade: websocket\r\nConnection: Upgrade\r\n";
    request += "Sec-WebSocket-Key: " + key + "\r\n";
    request += "Sec-WebSocket-Version: 13\r\n";
    for (const std::string& header : headers_) {
        request += header + "\r\n";
    }
    return request + "\r\n";
}

std::string ws_client::upgrade_request(std::string_view path) {
    return upgrade_request(path, make_websocket_key(rng_));
}

void ws_client::upgrade(std::string_view path, milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    const std::string key = make_websocket_key(rng_);
    send_raw(upgrade_request(path, key), timeout);

    std::size_t head_end = std::string::npos;
    while ((head_end = in_.find("\r\n\r\n", in_pos_)) == std::string::npos) {
        if (!fill(deadline)) {
            throw std::runtime_error("no complete upgrade response (" +
                                     std::string(eof_ ? "connection closed" : "timeout") +
                                     "), got: " + in_.substr(in_pos_));
        }
    }
    const std::string head = in_.substr(in_pos_, head_end + 4 - in_pos_);
    in_pos_ = head_end + 4;  // anything after the head is already frame data

    const http_response response = parse_http_response(head);
    const auto accept = response.header("sec-websocket-accept");
    const auto upgrade_header = response.header("upgrade");
    const auto connection = response.header("connection");
    if (response.status != 101 || !accept || *accept != expected_accept(key) || !upgrade_header ||
        lowercase(*upgrade_header) != "websocket" || !connection ||
        lowercase(*connection).find("upgrade") == std::string::npos) {
        throw std::runtime_error("bad upgrade response for key " + key + ":\n" + head);
    }
    ext_.wire_bytes = in_.size() - in_pos_;
    if (const auto agreed = response.header("sec-websocket-extensions")) {
        // RFC 6455 section 9.1: a server may only answer with what was offered.
        if (ext_.offered.empty() || lowercase(*agreed).find("permessage-deflate") != 0) {
            throw std::runtime_error("server agreed on an extension that was not offered:\n" + head);
        }
        ext_.agreed = *agreed;
        const std::size_t bits = ext_.agreed.find("server_max_window_bits=");
        if (bits != std::string::npos) {
            ext_.server_window_bits = std::stoi(ext_.agreed.substr(bits + 23));
        }
    }
}

void ws_client::send_compressed(std::string_view text, std::size_t fragment_size) {
    if (ext_.agreed.empty()) {
        throw std::logic_error("send_compressed without an agreed permessage-deflate");
    }
    const std::string compressed = tests::client_deflate(text);
    const std::size_t step = fragment_size == 0 ? std::max<std::size_t>(compressed.size(), 1) : fragment_size;
    std::size_t at = 0;
    do {
        const std::size_t n = std::min(step, compressed.size() - at);
        const bool first = at == 0;
        const bool last = at + n >= compressed.size();
        send_frame(first ? opcode::text : opcode::continuation, std::string_view(compressed).substr(at, n),
                   {.fin = last, .rsv = static_cast<std::uint8_t>(first ? 4 : 0)});
        at += n;
    } while (at < compressed.size());
}

std::string ws_client::raw_http(std::string_view request, milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    send_raw(request, timeout);
    for (;;) {
        const std::string_view pending = std::string_view(in_).substr(in_pos_);
        if (const std::size_t size = complete_response_size(pending); size > 0) {
            std::string response(pending.substr(0, size));
            in_pos_ += size;
            return response;
        }
        if (!fill(deadline)) {
            std::string response = in_.substr(in_pos_);
            in_pos_ = in_.size();
            return response;
        }
    }
}

void ws_client::send_raw(std::string_view bytes, milliseconds timeout) {
    if (fd_ < 0) {
        throw std::runtime_error("send on a closed client");
    }
    const auto deadline = clock::now() + timeout;
    while (!bytes.empty() && tls_ != nullptr) {
        ERR_clear_error();
        const int n = SSL_write(tls_, bytes.data(), static_cast<int>(std::min<std::size_t>(bytes.size(), 1 << 30)));
        if (n > 0) {
            bytes.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        const int error = SSL_get_error(tls_, n);
        if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
            if (!wait_for(fd_, error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
                throw std::runtime_error("TLS send timed out with " + std::to_string(bytes.size()) +
                                         " bytes unsent");
            }
            continue;
        }
        throw std::runtime_error("TLS send failed: " + openssl_reason());
    }
    while (!bytes.empty()) {
        const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n > 0) {
            bytes.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!wait_for(fd_, POLLOUT, deadline)) {
                throw std::runtime_error("send timed out with " + std::to_string(bytes.size()) +
                                         " bytes unsent");
            }
            continue;
        }
        throw system_error("send");
    }
}

std::string ws_client::encode_frame(std::uint8_t op, std::string_view payload, frame_options options) {
    std::string frame;
    frame.push_back(static_cast<char>((options.fin ? 0x80 : 0) | ((options.rsv & 7) << 4) | (op & 0x0F)));
    const std::uint8_t mask_bit = options.mask ? 0x80 : 0;
    const std::uint64_t size = payload.size();
    if (size < 126) {
        frame.push_back(static_cast<char>(mask_bit | size));
    } else if (size <= 0xFFFF) {
        frame.push_back(static_cast<char>(mask_bit | 126));
        frame.push_back(static_cast<char>(size >> 8));
        frame.push_back(static_cast<char>(size & 0xFF));
    } else {
        frame.push_back(static_cast<char>(mask_bit | 127));
        for (int shift = 56; shift >= 0; shift -= 8) {
            frame.push_back(static_cast<char>((size >> shift) & 0xFF));
        }
    }
    if (!options.mask) {
        frame.append(payload);
        return frame;
    }
    char key[4];
    std::uniform_int_distribution<int> byte(0, 255);
    for (char& k : key) {
        k = static_cast<char>(byte(rng_));
    }
    frame.append(key, 4);
    const std::size_t start = frame.size();
    frame.append(payload);
    for (std::size_t i = 0; i < payload.size(); ++i) {
        frame[start + i] = static_cast<char>(frame[start + i] ^ key[i % 4]);
    }
    return frame;
}

void ws_client::send_frame(std::uint8_t op, std::string_view payload, frame_options options) {
    send_raw(encode_frame(op, payload, options));
}

void ws_client::send_text(std::string_view text, std::size_t fragment_size) {
    if (fragment_size == 0 || text.size() <= fragment_size) {
        send_frame(opcode::text, text);
        return;
    }
    std::string frames;
    std::uint8_t op = opcode::text;
    while (!text.empty()) {
        const std::string_view piece = text.substr(0, fragment_size);
        text.remove_prefix(piece.size());
        frames += encode_frame(op, piece, {.fin = text.empty()});
        op = opcode::continuation;
    }
    send_raw(frames);
}

void ws_client::send_json(const json& message, std::size_t fragment_size) {
    send_text(message.dump(), fragment_size);
}

void ws_client::send_close(std::uint16_t code, std::string_view reason) {
    std::string payload;
    payload.push_back(static_cast<char>(code >> 8));
    payload.push_back(static_cast<char>(code & 0xFF));
    payload.append(reason);
    close_sent_ = true;
    send_frame(opcode::close, payload);
}

bool ws_client::fill(clock::time_point deadline) {
    if (fd_ < 0 || eof_) {
        return false;
    }
    if (in_pos_ > 0 && in_pos_ * 2 >= in_.size()) {
        in_.erase(0, in_pos_);
        in_pos_ = 0;
    }
    char buffer[65536];
    while (tls_ != nullptr) {
        ERR_clear_error();
        const int n = SSL_read(tls_, buffer, sizeof buffer);
        if (n > 0) {
            in_.append(buffer, static_cast<std::size_t>(n));
            ext_.wire_bytes += static_cast<std::size_t>(n);
            return true;
        }
        const int error = SSL_get_error(tls_, n);
        if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
            if (!wait_for(fd_, error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
                return false;
            }
            continue;
        }
        // close_notify, the end of TCP, a reset or a TLS error: the connection is over.
        ERR_clear_error();
        eof_ = true;
        return false;
    }
    for (;;) {
        const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
        if (n > 0) {
            in_.append(buffer, static_cast<std::size_t>(n));
            ext_.wire_bytes += static_cast<std::size_t>(n);
            return true;
        }
        if (n == 0) {
            eof_ = true;
            return false;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!wait_for(fd_, POLLIN, deadline)) {
                return false;
            }
            continue;
        }
        eof_ = true;  // ECONNRESET and friends: the connection is over
        return false;
    }
}

std::optional<ws_frame> ws_client::take_frame() {
    const std::string_view data = std::string_view(in_).substr(in_pos_);
    if (data.size() < 2) {
        return std::nullopt;
    }
    const auto b0 = static_cast<std::uint8_t>(data[0]);
    const auto b1 = static_cast<std::uint8_t>(data[1]);
    ws_frame frame;
    frame.fin = (b0 & 0x80) != 0;
    frame.rsv = (b0 >> 4) & 7;
    frame.opcode = b0 & 0x0F;
    frame.masked = (b1 & 0x80) != 0;
    std::size_t header = 2;
    std::uint64_t size = b1 & 0x7F;
    if (size == 126) {
        header = 4;
    } else if (size == 127) {
        header = 10;
    }
    if (data.size() < header) {
        return std::nullopt;
    }
    if (header > 2) {
        size = 0;
        for (std::size_t i = 2; i < header; ++i) {
            size = (size << 8) | static_cast<std::uint8_t>(data[i]);
        }
    }
    const std::size_t key_at = header;
    if (frame.masked) {
        header += 4;
    }
    if (data.size() < header || data.size() - header < size) {
        return std::nullopt;
    }
    frame.payload = std::string(data.substr(header, size));
    if (frame.masked) {
        for (std::size_t i = 0; i < frame.payload.size(); ++i) {
            frame.payload[i] = static_cast<char>(frame.payload[i] ^ data[key_at + i % 4]);
        }
    }
    in_pos_ += header + size;
    return frame;
}

std::optional<ws_frame> ws_client::next_frame(clock::time_point deadline) {
    for (;;) {
        if (auto frame = take_frame()) {
            if (frame->masked) {
                throw std::runtime_error("server sent a masked frame (RFC 6455 section 5.1)");
            }
            return frame;
        }
        if (!fill(deadline)) {
            return std::nullopt;
        }
    }
}

std::optional<ws_frame> ws_client::recv_frame(milliseconds timeout) {
    return next_frame(clock::now() + timeout);
}

void ws_client::on_close_frame(const ws_frame& frame) {
    close_code_ = frame.payload.size() >= 2
                      ? static_cast<std::uint16_t>((static_cast<std::uint8_t>(frame.payload[0]) << 8) |
                                                   static_cast<std::uint8_t>(frame.payload[1]))
                      : std::uint16_t{1005};
    if (!close_sent_) {
        close_sent_ = true;
        try {
            send_frame(opcode::close, frame.payload.substr(0, 2));
        } catch (const std::exception&) {
            // The server may already have closed the TCP connection; nothing to answer then.
        }
    }
}

std::optional<json> ws_client::next_json(clock::time_point deadline) {
    for (;;) {
        auto frame = next_frame(deadline);
        if (!frame) {
            return std::nullopt;
        }
        // RSV1 marks a compressed message, once permessage-deflate was agreed, on its first
        // frame only (RFC 7692 section 6.1).
        const bool compressed = frame->rsv == 4 && !ext_.agreed.empty() &&
                                (frame->opcode == opcode::text || frame->opcode == opcode::binary);
        if (frame->rsv != 0 && !compressed) {
            throw std::runtime_error("server frame has RSV bits " + std::to_string(frame->rsv) +
                                     (ext_.agreed.empty() ? " set without an extension" : " where they do not belong"));
        }
        switch (frame->opcode) {
        case opcode::ping:
            if (!close_sent_) {
                send_frame(opcode::pong, frame->payload);
            }
            continue;
        case opcode::pong:
            continue;
        case opcode::close:
            on_close_frame(*frame);
            return std::nullopt;
        case opcode::text:
            if (in_message_) {
                throw std::runtime_error("server started a message inside a fragmented one");
            }
            if (!frame->fin) {
                fragments_ = std::move(frame->payload);
                in_message_ = true;
                ext_.fragments_compressed = compressed;
                continue;
            }
            if (compressed) {
                frame->payload = tests::client_inflate(frame->payload, ext_.server_window_bits);
                ++ext_.compressed_received;
            }
            break;
        case opcode::continuation:
            if (!in_message_) {
                throw std::runtime_error("server sent a continuation frame without a message");
            }
            fragments_ += frame->payload;
            if (!frame->fin) {
                continue;
            }
            frame->payload = std::move(fragments_);
            fragments_.clear();
            in_message_ = false;
            if (ext_.fragments_compressed) {
                frame->payload = tests::client_inflate(frame->payload, ext_.server_window_bits);
                ++ext_.compressed_received;
            }
            break;
        default:
            throw std::runtime_error("server sent opcode " + std::to_string(frame->opcode) +
                                     " where a text message was expected");
        }
        ++ext_.messages_received;
        json message = json::parse(frame->payload, nullptr, false);
        if (message.is_discarded()) {
            throw std::runtime_error("server sent text that is not JSON: " + frame->payload);
        }
        return message;
    }
}

std::optional<json> ws_client::recv_json(milliseconds timeout) {
    return next_json(clock::now() + timeout);
}

std::optional<json> ws_client::recv_until(const std::function<bool(const json&)>& pred,
                                          milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    while (auto message = next_json(deadline)) {
        if (pred(*message)) {
            return message;
        }
    }
    return std::nullopt;
}

std::optional<json> ws_client::recv_type(std::string_view type, milliseconds timeout) {
    return recv_until([type](const json& m) { return m.value("type", "") == type; }, timeout);
}

std::optional<std::uint16_t> ws_client::expect_close(milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    while (!close_code_) {
        auto frame = next_frame(deadline);
        if (!frame) {
            if (eof_) {
                return closed_without_frame;
            }
            return std::nullopt;
        }
        if (frame->opcode == opcode::close) {
            on_close_frame(*frame);
        }
    }
    return close_code_;
}

bool ws_client::wait_eof(milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    while (!eof_) {
        in_.clear();
        in_pos_ = 0;
        if (!fill(deadline) && !eof_) {
            return false;
        }
    }
    return true;
}

}  // namespace parley::integration
