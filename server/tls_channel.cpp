#include "server/tls_channel.hpp"

#include "server/tls_context.hpp"

#include <openssl/bio.h>
#include <openssl/buffer.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <climits>
#include <new>

namespace parley::server {

namespace {
// Output storage up to this size stays for the next write; more is given back when idle.
constexpr std::size_t kept_output_capacity = 4 * 1024;
}  // namespace

tls_channel::tls_channel(const tls_context& context) : ssl_(SSL_new(context.native())) {
    if (ssl_ == nullptr) {
        throw std::bad_alloc();
    }
    in_ = BIO_new(BIO_s_mem());
    out_bio_ = BIO_new(BIO_s_mem());
    if (in_ == nullptr || out_bio_ == nullptr) {
        BIO_free(in_);
        BIO_free(out_bio_);
        SSL_free(ssl_);
        throw std::bad_alloc();
    }
    // An empty input BIO means "wait for more", not end of stream: the socket's end is seen by
    // whoever reads the socket.
    BIO_set_mem_eof_return(in_, -1);
    SSL_set_bio(ssl_, in_, out_bio_);
    SSL_set_accept_state(ssl_);
}

tls_channel::~tls_channel() { SSL_free(ssl_); }

bool tls_channel::feed(const char* data, std::size_t size) {
    while (size > 0) {
        int chunk = static_cast<int>(std::min<std::size_t>(size, INT_MAX));
        int n = BIO_write(in_, data, chunk);
        if (n <= 0) {
            return false;  // a memory BIO fails only when it cannot grow
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

tls_channel::status tls_channel::read(char* out, std::size_t capacity, std::size_t& size) {
    size = 0;
    if (BIO_ctrl_pending(in_) == 0 && SSL_has_pending(ssl_) == 0) {
        // Nothing to work on: spare the call that would only say "want read".
        return status::need_input;
    }
    ERR_clear_error();
    int n = SSL_read(ssl_, out, static_cast<int>(std::min<std::size_t>(capacity, INT_MAX)));
    int error = n > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl_, n);
    collect_output();
    if (n > 0) {
        size = static_cast<std::size_t>(n);
        return status::data;
    }
    switch (error) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:  // the output BIO is memory and always takes everything
        return status::need_input;
    case SSL_ERROR_ZERO_RETURN:
        return status::closed;
    default:
        note_failure();
        return status::failed;
    }
}

bool tls_channel::write(const char* data, std::size_t size) {
    ERR_clear_error();
    while (size > 0) {
        int n = SSL_write(ssl_, data, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
        if (n <= 0) {
            note_failure();
            collect_output();
            return false;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    collect_output();
    return true;
}

void tls_channel::close_notify() {
    ERR_clear_error();
    SSL_shutdown(ssl_);
    ERR_clear_error();
    collect_output();
}

void tls_channel::consume_output(std::size_t n) {
    out_pos_ += n;
    if (out_pos_ >= out_.size()) {
        out_.clear();
        out_pos_ = 0;
    }
}

namespace {
// A memory BIO's buffer only grows; a fresh BIO is the way to give it back.
bool holds_memory(BIO* bio) {
    BUF_MEM* memory = nullptr;
    BIO_get_mem_ptr(bio, &memory);
    return memory != nullptr && memory->max > 0 && BIO_ctrl_pending(bio) == 0;
}
}  // namespace

void tls_channel::release_idle_buffers() {
    if (!has_output() && out_.capacity() > kept_output_capacity) {
        std::string().swap(out_);
    }
    if (holds_memory(in_)) {
        if (BIO* fresh = BIO_new(BIO_s_mem())) {
            BIO_set_mem_eof_return(fresh, -1);
            SSL_set0_rbio(ssl_, fresh);  // frees the old one
            in_ = fresh;
        }
    }
    if (holds_memory(out_bio_)) {
        if (BIO* fresh = BIO_new(BIO_s_mem())) {
            SSL_set0_wbio(ssl_, fresh);
            out_bio_ = fresh;
        }
    }
}

std::string tls_channel::reason() const {
    if (error_ == 0) {
        return "TLS connection failed";
    }
    const char* text = ERR_reason_error_string(error_);
    return text ? text : "OpenSSL error " + std::to_string(error_);
}

bool tls_channel::plain_http_seen() const {
    return ERR_GET_LIB(error_) == ERR_LIB_SSL && ERR_GET_REASON(error_) == SSL_R_HTTP_REQUEST;
}

// Moves what OpenSSL wrote into the memory BIO to out_, where it waits to be sent.
void tls_channel::collect_output() {
    std::size_t pending = BIO_ctrl_pending(out_bio_);
    if (pending == 0) {
        return;
    }
    if (out_pos_ > 0 && out_pos_ * 2 >= out_.size()) {
        out_.erase(0, out_pos_);
        out_pos_ = 0;
    }
    std::size_t at = out_.size();
    out_.resize(at + pending);
    int n = BIO_read(out_bio_, out_.data() + at, static_cast<int>(std::min<std::size_t>(pending, INT_MAX)));
    out_.resize(at + static_cast<std::size_t>(std::max(n, 0)));
}

void tls_channel::note_failure() {
    // The first queued error is the most specific one (e.g. "no start line" before "PEM lib").
    unsigned long last = ERR_get_error();
    ERR_clear_error();
    error_ = last;
}

}  // namespace parley::server
