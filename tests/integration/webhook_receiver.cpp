#include "webhook_receiver.hpp"

#include "loopback_listener.hpp"
#include "tls_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <stdexcept>

namespace parley::integration {
namespace {

// The value of header `name` (any case) in an HTTP head, or "".
std::string header_of(const std::string& head, std::string name) {
    std::string lower_head = head;
    std::transform(lower_head.begin(), lower_head.end(), lower_head.begin(), [](unsigned char c) { return std::tolower(c); });
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    const std::string key = "\r\n" + name + ":";
    const auto at = lower_head.find(key);
    if (at == std::string::npos) {
        return {};
    }
    auto start = at + key.size();
    const auto end = head.find("\r\n", start);
    while (start < end && head[start] == ' ') {
        ++start;
    }
    return head.substr(start, end - start);
}

}  // namespace

bool webhook_receiver::signature_valid(const std::string& secret, const std::string& signature,
                                       const std::string& body, long max_age_s) {
    const auto comma = signature.find(",v1=");
    if (signature.rfind("t=", 0) != 0 || comma == std::string::npos) {
        return false;
    }
    const std::string t = signature.substr(2, comma - 2);
    const std::string given = signature.substr(comma + 4);
    long sent_at = 0;
    try {
        sent_at = std::stol(t);
    } catch (const std::exception&) {
        return false;
    }
    if (std::labs(static_cast<long>(std::time(nullptr)) - sent_at) > max_age_s) {
        return false;
    }
    const std::string text = t + "." + body;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac, &size);
    std::string expected;
    char hex[3];
    for (unsigned int i = 0; i < size; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", mac[i]);
        expected += hex;
    }
    return expected.size() == given.size() &&
           CRYPTO_memcmp(expected.data(), given.data(), expected.size()) == 0;
}

webhook_receiver::webhook_receiver(const std::string& tls_dir) : tls_(!tls_dir.empty()) {
    if (tls_) {
        cert_path_ = tls_dir + "/receiver-cert.pem";
        key_path_ = tls_dir + "/receiver-key.pem";
        write_self_signed("localhost", cert_path_, key_path_);
    }
    listener_ = listen_on_loopback(port_, "webhook_receiver");
    thread_ = std::thread([this] { serve(); });
}

webhook_receiver::~webhook_receiver() {
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
}

std::string webhook_receiver::url() const {
    return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + "/hooks/chat";
}

void webhook_receiver::answer(int status) {
    std::lock_guard lock(mutex_);
    status_ = status;
}

void webhook_receiver::stall(int count, std::chrono::milliseconds hold) {
    std::lock_guard lock(mutex_);
    stalls_ = count;
    stall_hold_ = hold;
}

std::vector<webhook_receiver::request> webhook_receiver::requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
}

template <typename Read, typename Write>
void webhook_receiver::handle(Read read_some, Write write_all) {
    std::string data;
    char chunk[16384];
    std::size_t head_end = std::string::npos;
    std::size_t need = 0;
    for (;;) {
        if (head_end == std::string::npos) {
            head_end = data.find("\r\n\r\n");
            if (head_end != std::string::npos) {
                const std::string length = header_of(data.substr(0, head_end + 2), "content-length");
                need = head_end + 4 + (length.empty() ? 0 : std::stoul(length));
            }
        }
        if (head_end != std::string::npos && data.size() >= need) {
            break;
        }
        const long got = read_some(chunk, sizeof chunk);
        if (got <= 0) {
            return;  // closed or timed out before the request was whole
        }
        data.append(chunk, static_cast<std::size_t>(got));
    }
    const std::string head = data.substr(0, head_end + 2);
    request r;
    r.method = head.substr(0, head.find(' '));
    const auto target_start = head.find(' ') + 1;
    r.target = head.substr(target_start, head.find(' ', target_start) - target_start);
    r.signature = header_of(head, "X-Parley-Signature");
    r.content_type = header_of(head, "Content-Type");
    r.body = data.substr(head_end + 4, need - head_end - 4);
    std::string reply;
    std::chrono::milliseconds hold{0};
    {
        std::lock_guard lock(mutex_);
        if (stalls_ > 0) {
            --stalls_;
            hold = stall_hold_;
            requests_.push_back(std::move(r));  // answered 0
        }
    }
    if (hold.count() > 0) {
        changed_.notify_all();
        std::this_thread::sleep_for(hold);
        return;
    }
    {
        std::lock_guard lock(mutex_);
        r.answered = status_;
        reply = "HTTP/1.1 " + std::to_string(status_) + " Receiver\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        requests_.push_back(std::move(r));
    }
    write_all(reply);
    changed_.notify_all();
}

void webhook_receiver::serve() {
    std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(nullptr, &SSL_CTX_free);
    if (tls_) {
        ctx.reset(SSL_CTX_new(TLS_server_method()));
        if (SSL_CTX_use_certificate_file(ctx.get(), cert_path_.c_str(), SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_use_PrivateKey_file(ctx.get(), key_path_.c_str(), SSL_FILETYPE_PEM) != 1) {
            return;
        }
    }
    while (!stopping_) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) {
            return;  // shut down
        }
        timeval limit{5, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
        if (!tls_) {
            handle([fd](char* buf, std::size_t n) { return static_cast<long>(::recv(fd, buf, n, 0)); },
                   [fd](const std::string& s) { (void)::send(fd, s.data(), s.size(), MSG_NOSIGNAL); });
        } else {
            std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), &SSL_free);
            SSL_set_fd(ssl.get(), fd);
            if (SSL_accept(ssl.get()) == 1) {
                SSL* s = ssl.get();
                handle([s](char* buf, std::size_t n) { return static_cast<long>(SSL_read(s, buf, static_cast<int>(n))); },
                       [s](const std::string& text) {
                           SSL_write(s, text.data(), static_cast<int>(text.size()));
                           SSL_shutdown(s);
                       });
            }
        }
        ::close(fd);
    }
}

}  // namespace parley::integration
