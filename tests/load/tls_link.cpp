#include "tls_link.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <stdexcept>

namespace parley::load {
namespace {

tls_status status_of(SSL* ssl, int result) {
    switch (SSL_get_error(ssl, result)) {
    case SSL_ERROR_WANT_READ:
        return tls_status::want_read;
    case SSL_ERROR_WANT_WRITE:
        return tls_status::want_write;
    case SSL_ERROR_ZERO_RETURN:
        return tls_status::closed;
    default:
        return tls_status::failed;
    }
}

}  // namespace

SSL_CTX* tls_client_context() {
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == nullptr) {
        throw std::runtime_error("TLS: cannot make a client context: " + tls_error_text());
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    // A connection's output buffer grows between attempts of one write.
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    return ctx;
}

void tls_free_context(SSL_CTX* ctx) { SSL_CTX_free(ctx); }

SSL* tls_session(SSL_CTX* ctx, int fd) {
    SSL* ssl = SSL_new(ctx);
    if (ssl == nullptr) {
        return nullptr;
    }
    if (SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        return nullptr;
    }
    SSL_set_connect_state(ssl);
    return ssl;
}

void tls_free(SSL* ssl) { SSL_free(ssl); }

tls_status tls_handshake(SSL* ssl) {
    const int r = SSL_do_handshake(ssl);
    return r == 1 ? tls_status::done : status_of(ssl, r);
}

tls_status tls_read(SSL* ssl, char* data, std::size_t size, std::size_t& bytes) {
    const int r = SSL_read_ex(ssl, data, size, &bytes);
    return r == 1 ? tls_status::done : status_of(ssl, r);
}

tls_status tls_write(SSL* ssl, const char* data, std::size_t size, std::size_t& bytes) {
    const int r = SSL_write_ex(ssl, data, size, &bytes);
    return r == 1 ? tls_status::done : status_of(ssl, r);
}

std::string tls_error_text() {
    std::string text;
    while (const unsigned long e = ERR_get_error()) {
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        text += text.empty() ? "" : "; ";
        text += buf;
    }
    return text.empty() ? "no detail" : text;
}

}  // namespace parley::load
