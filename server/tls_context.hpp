#pragma once

#include <memory>
#include <string>

struct ssl_ctx_st;

namespace parley::server {

// The server's TLS configuration: one OpenSSL SSL_CTX holding the certificate chain and the
// private key read from PEM files, with the daemon's fixed policy (TLS 1.2 or newer, the
// server's cipher order, no compression, no renegotiation; session tickets on).
//
// Immutable once loaded. Connections create their SSL objects from it on any worker thread
// (OpenSSL allows that) and each SSL object holds a reference to the SSL_CTX, so a reload can
// replace the server's context while connections made from the old one keep it until they end.
class tls_context {
public:
    // Reads both files. On failure returns null and sets `error` to one sentence naming the file
    // and the reason (missing, unreadable, not PEM, key does not match the certificate).
    static std::shared_ptr<const tls_context> load(const std::string& cert_file, const std::string& key_file,
                                                   std::string& error);

    ~tls_context();
    tls_context(const tls_context&) = delete;
    tls_context& operator=(const tls_context&) = delete;

    ssl_ctx_st* native() const { return ctx_; }
    // The certificate's subject and expiry, for the start-up and reload log lines.
    const std::string& description() const { return description_; }

private:
    explicit tls_context(ssl_ctx_st* ctx) : ctx_(ctx) {}

    ssl_ctx_st* ctx_;
    std::string description_;
};

}  // namespace parley::server
