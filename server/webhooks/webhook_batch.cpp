#include "server/webhooks/webhook_batch.hpp"

#include "protocol/frame_encoder.hpp"
#include "protocol/json_text.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>

namespace parley::server {

webhook_queue::pushed webhook_queue::push(webhook_item&& item, std::size_t batch_size) {
    std::lock_guard lock(mutex_);
    if (items_.size() >= limit_) {
        ++dropped_;
        return pushed::dropped;
    }
    if (items_.empty()) {
        oldest_since_ = std::chrono::steady_clock::now();
    }
    items_.push_back(std::move(item));
    return items_.size() == 1 ? pushed::first : items_.size() == batch_size ? pushed::full_batch : pushed::queued;
}

std::vector<webhook_item> webhook_queue::take(std::size_t max) {
    std::vector<webhook_item> batch;
    std::lock_guard lock(mutex_);
    const std::size_t n = std::min(max, items_.size());
    batch.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(items_.front()));
        items_.pop_front();
    }
    if (!items_.empty()) {
        // The rest waited since before this take; counting from now keeps a steady stream in
        // batches of about the interval instead of sending the remainder at once.
        oldest_since_ = std::chrono::steady_clock::now();
    } else {
        items_.shrink_to_fit();  // a queue that filled behind a dead receiver gives its memory back
    }
    return batch;
}

std::size_t webhook_queue::size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
}

std::chrono::steady_clock::time_point webhook_queue::oldest_since() const {
    std::lock_guard lock(mutex_);
    return oldest_since_;
}

void webhook_queue::set_limit(std::size_t limit) {
    std::lock_guard lock(mutex_);
    limit_ = limit;
}

std::uint64_t webhook_queue::dropped() const {
    std::lock_guard lock(mutex_);
    return dropped_;
}

std::string webhook_body(const std::vector<webhook_item>& batch, std::string_view node, std::string_view run) {
    std::string out = "{\"node\":";
    protocol::append_json_string(out, node);
    out += ",\"events\":[";
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const webhook_item& e = batch[i];
        out += i == 0 ? "{\"id\":\"" : ",{\"id\":\"";
        out.append(run).append("-").append(std::to_string(e.id));
        out += "\",\"type\":";
        protocol::append_json_string(out, protocol::name_of(e.kind));
        out += ",\"ts\":";
        protocol::append_json_integer(out, e.ts_ms);
        if (!e.room.empty()) {
            out += ",\"room\":";
            protocol::append_json_string(out, e.room);
        }
        if (!e.user.empty()) {
            out += ",\"user\":";
            protocol::append_json_string(out, e.user);
        }
        if (e.frame) {
            // The frame's payload is the JSON object the clients were sent, as it is.
            out += ",\"data\":";
            out += protocol::frame_payload(e.frame.view());
        }
        out += '}';
    }
    out += "]}";
    return out;
}

std::chrono::milliseconds webhook_backoff(unsigned failures) {
    constexpr std::chrono::milliseconds first{500};
    constexpr std::chrono::milliseconds longest{60000};
    if (failures == 0) {
        return std::chrono::milliseconds{0};
    }
    const unsigned doublings = std::min(failures - 1, 10u);
    return std::min(longest, first * (1u << doublings));
}

std::string webhook_signature(std::string_view secret, std::int64_t unix_s, std::string_view body) {
    const std::string t = std::to_string(unix_s);
    std::string signed_text;
    signed_text.reserve(t.size() + 1 + body.size());
    signed_text.append(t).append(".").append(body);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_size = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(signed_text.data()), signed_text.size(), mac, &mac_size);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out = "t=" + t + ",v1=";
    for (unsigned int i = 0; i < mac_size; ++i) {
        out += hex[mac[i] >> 4];
        out += hex[mac[i] & 0xf];
    }
    return out;
}

}  // namespace parley::server
