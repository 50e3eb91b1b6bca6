#include "server/tls_context.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509err.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace parley::server {

namespace {

// OpenSSL's reason for the most recent failure (its queue is cleared), e.g. "no start line"
// for a file that is not PEM or "key values mismatch".
std::string openssl_reason() {
    // The first queued error is the most specific one (e.g. "no start line" before "PEM lib").
    unsigned long last = ERR_get_error();
    ERR_clear_error();
    if (last == 0) {
        return "unknown OpenSSL error";
    }
    const char* reason = ERR_reason_error_string(last);
    return reason ? reason : "OpenSSL error " + std::to_string(last);
}

// The file is tried with fopen first so that the common mistakes (a wrong path, a key readable
// by root only) are named with the system's words rather than OpenSSL's "system lib".
bool readable(const std::string& path, const char* what, std::string& error) {
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) {
        error.append("cannot read the ").append(what).append(" file '").append(path).append("': ");
        error.append(std::strerror(errno));
        return false;
    }
    std::fclose(f);
    return true;
}

std::string describe(SSL_CTX* ctx) {
    X509* cert = SSL_CTX_get0_certificate(ctx);
    if (cert == nullptr) {
        return {};
    }
    std::string text;
    BIO* out = BIO_new(BIO_s_mem());
    if (out == nullptr) {
        return {};
    }
    BIO_puts(out, "subject=");
    X509_NAME_print_ex(out, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
    BIO_puts(out, " not_after=\"");
    ASN1_TIME_print(out, X509_get0_notAfter(cert));
    BIO_puts(out, "\"");
    char* data = nullptr;
    long size = BIO_get_mem_data(out, &data);
    if (size > 0) {
        text.assign(data, static_cast<std::size_t>(size));
    }
    BIO_free(out);
    return text;
}

}  // namespace

std::shared_ptr<const tls_context> tls_context::load(const std::string& cert_file, const std::string& key_file,
                                                     std::string& error) {
    ERR_clear_error();
    if (!readable(cert_file, "certificate", error) || !readable(key_file, "key", error)) {
        return nullptr;
    }
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == nullptr) {
        error = "cannot create a TLS context: " + openssl_reason();
        return nullptr;
    }
    std::shared_ptr<tls_context> result(new tls_context(ctx));
    // TLS 1.0 and 1.1 are deprecated (RFC 8996); every current client speaks 1.2 or 1.3.
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    // Compression invites CRIME-style attacks; renegotiation is a denial-of-service lever and
    // nothing a WebSocket client needs. Our cipher order, not the client's, decides.
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    // Give the record buffers back while a connection is idle: most chat connections are idle
    // most of the time, and each buffer is about 16 KiB.
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
        error = "cannot use the certificate file '" + cert_file + "': " + openssl_reason();
        return nullptr;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
        // OpenSSL compares the key with the certificate here already.
        bool mismatch = ERR_GET_REASON(ERR_peek_error()) == X509_R_KEY_VALUES_MISMATCH;
        std::string reason = openssl_reason();
        if (mismatch) {
            error = "the key file '" + key_file + "' does not belong to the certificate in '" + cert_file + "'";
        } else {
            error = "cannot use the key file '" + key_file + "': " + reason;
        }
        return nullptr;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        error = "the key file '" + key_file + "' does not belong to the certificate in '" + cert_file +
                "': " + openssl_reason();
        return nullptr;
    }
    result->description_ = describe(ctx);
    return result;
}

tls_context::~tls_context() { SSL_CTX_free(ctx_); }

}  // namespace parley::server
