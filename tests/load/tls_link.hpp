#pragma once

// TLS for the load generator's connections (--tls, wss://): OpenSSL over the non-blocking
// socket, the handshake driven by the same epoll events as the connect. The server's
// certificate is not checked: the generator measures what the server pays for TLS, and a bench
// daemon's certificate is self-signed.

#include <cstddef>
#include <string>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace parley::load {

// A client context (TLS 1.2 and up, partial writes from a buffer that may move); throws
// std::runtime_error when OpenSSL cannot make one. Free with tls_free_context.
SSL_CTX* tls_client_context();
void tls_free_context(SSL_CTX* ctx);

// A client session over the connected socket fd; null on failure.
SSL* tls_session(SSL_CTX* ctx, int fd);
void tls_free(SSL* ssl);

enum class tls_status { done, want_read, want_write, closed, failed };

// One step of the handshake.
tls_status tls_handshake(SSL* ssl);
// Like recv() and send(): `bytes` is set when the status is done.
tls_status tls_read(SSL* ssl, char* data, std::size_t size, std::size_t& bytes);
tls_status tls_write(SSL* ssl, const char* data, std::size_t size, std::size_t& bytes);

// OpenSSL's last error, in words (empties its error queue).
std::string tls_error_text();

}  // namespace parley::load
