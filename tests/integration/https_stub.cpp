#include "https_stub.hpp"

#include "loopback_listener.hpp"
#include "tls_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>

namespace parley::integration {

https_stub::https_stub(const std::string& dir) : cert_path_(dir + "/stub-cert.pem"), key_path_(dir + "/stub-key.pem") {
    write_self_signed("localhost", cert_path_, key_path_);
    listener_ = listen_on_loopback(port_, "https_stub");
    thread_ = std::thread([this] { serve(); });
}

https_stub::~https_stub() {
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
}

void https_stub::answer(int status, std::string body) {
    std::lock_guard lock(mutex_);
    status_ = status;
    body_ = std::move(body);
}

void https_stub::serve() {
    std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_server_method()), &SSL_CTX_free);
    if (SSL_CTX_use_certificate_file(ctx.get(), cert_path_.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx.get(), key_path_.c_str(), SSL_FILETYPE_PEM) != 1) {
        return;
    }
    while (!stopping_) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) {
            return;  // shut down
        }
        timeval limit{5, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
        std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), &SSL_free);
        SSL_set_fd(ssl.get(), fd);
        if (SSL_accept(ssl.get()) == 1) {
            std::string request;
            char chunk[4096];
            while (request.find("\r\n\r\n") == std::string::npos) {
                const int got = SSL_read(ssl.get(), chunk, sizeof chunk);
                if (got <= 0) {
                    break;
                }
                request.append(chunk, static_cast<std::size_t>(got));
            }
            if (request.find("\r\n\r\n") != std::string::npos) {
                ++requests_;
                std::string reply;
                {
                    std::lock_guard lock(mutex_);
                    reply = "HTTP/1.1 " + std::to_string(status_) + " Stub\r\nContent-Type: application/json\r\n"
                            "Content-Length: " + std::to_string(body_.size()) + "\r\nConnection: close\r\n\r\n" + body_;
                }
                SSL_write(ssl.get(), reply.data(), static_cast<int>(reply.size()));
                SSL_shutdown(ssl.get());
            }
        }
        ::close(fd);
    }
}

}  // namespace parley::integration
