#include "server/cluster/redis_transport.hpp"

#include "rooms/cluster/cluster_keys.hpp"
#include "rooms/cluster/cluster_node.hpp"
#include "rooms/cluster/cluster_scripts.hpp"

#include <boost/asio/post.hpp>
#include <openssl/sha.h>
#include <spdlog/spdlog.h>

#include <array>

namespace parley::cluster {

namespace asio = boost::asio;

namespace {

std::string sha1_hex(std::string_view text) {
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : digest) {
        out.push_back(hex[b >> 4]);
        out.push_back(hex[b & 15]);
    }
    return out;
}

// Each script's SHA-1, computed once; a script is known by its text (compared whole: the same
// literal need not have one address in every translation unit, as sanitizer builds show).
const std::string& sha_of(std::string_view script) {
    static const std::array<std::string, scripts::all.size()> shas = [] {
        std::array<std::string, scripts::all.size()> out;
        for (std::size_t i = 0; i < scripts::all.size(); ++i) {
            out[i] = sha1_hex(scripts::all[i]);
        }
        return out;
    }();
    for (std::size_t i = 0; i < scripts::all.size(); ++i) {
        if (scripts::all[i] == script) {
            return shas[i];
        }
    }
    static const std::string unknown;
    return unknown;
}

}  // namespace

redis_transport::redis_transport(asio::any_io_executor executor, config::redis_endpoint redis,
                                 std::chrono::milliseconds heartbeat_interval)
    : executor_(std::move(executor)), redis_(std::move(redis)), heartbeat_interval_(heartbeat_interval) {}

redis_transport::~redis_transport() { stop(); }

void redis_transport::start(cluster_node& node) {
    node_ = &node;
    post([this] { connect(); });
}

void redis_transport::connect() {
    if (stopped_) {
        return;
    }
    redis_connection::options opts;
    opts.host = redis_.host;
    opts.port = redis_.port;
    opts.password = redis_.password;
    commands_ = redis_connection::create(executor_, opts, "commands");
    subscriber_ = redis_connection::create(executor_, opts, "events");
    for (auto* c : {&commands_, &subscriber_}) {
        (*c)->on_up([this] { on_up(); });
        (*c)->on_down([this] { on_down(); });
    }
    subscriber_->subscribe({std::string(keys::channel)},
                           [this](std::string_view, std::string_view payload) { node_->on_channel_message(payload); });
    subscriber_->on_subscribed([this](std::string_view channel) { node_->on_subscribed(channel); });
    commands_->start();
    subscriber_->start();
    heartbeat_timer_ = std::make_unique<asio::steady_timer>(executor_);
    schedule_heartbeat();
    spdlog::info("cluster: node {} joining through redis {}:{}", node_->node_id(), redis_.host, redis_.port);
}

void redis_transport::stop() {
    if (stopped_) {
        return;
    }
    stopped_ = true;
    if (heartbeat_timer_) {
        heartbeat_timer_->cancel();
        heartbeat_timer_.reset();
    }
    for (auto* c : {&commands_, &subscriber_}) {
        if (*c) {
            (*c)->stop();
            c->reset();
        }
    }
}

void redis_transport::on_up() {
    if (stopped_ || up_ || !commands_->connected() || !subscriber_->connected()) {
        return;
    }
    // Loaded before anything the node sends (commands go out in order), so EVALSHA finds each.
    for (std::string_view text : scripts::all) {
        commands_->command({"SCRIPT", "LOAD", text}, [](std::optional<redis_reply> reply) {
            if (reply && reply->is_error()) {
                spdlog::error("cluster: loading a script into redis failed: {}", reply->text);
            }
        });
    }
    // Keys of an earlier layout (a cluster upgraded in place) move to their partitions before
    // the node reads or writes any (it is told it is up only now); once moved, this is one GET.
    commands_->command({"EVAL", scripts::migrate_layout, "0", keys::layout_key, keys::layout},
                       [](std::optional<redis_reply> reply) {
                           if (reply && reply->is_error()) {
                               spdlog::error("cluster: moving the keys of an earlier layout failed: {}", reply->text);
                           } else if (reply && reply->is_integer() && reply->integer > 0) {
                               spdlog::info("cluster: moved {} keys of an earlier layout to their partitions",
                                            reply->integer);
                           }
                       });
    up_ = true;
    node_->on_redis_up();
}

void redis_transport::on_down() {
    if (stopped_ || !up_) {
        return;
    }
    up_ = false;
    node_->on_redis_down();  // which logs the loss

}

void redis_transport::schedule_heartbeat() {
    heartbeat_timer_->expires_after(heartbeat_interval_);
    heartbeat_timer_->async_wait([this](boost::system::error_code ec) {
        if (ec || stopped_) {
            return;
        }
        node_->heartbeat();
        schedule_heartbeat();
    });
}

void redis_transport::post(std::function<void()> task) { asio::post(executor_, std::move(task)); }

void redis_transport::refuse(redis_callback done) {
    post([done = std::move(done)] { done(std::nullopt); });
}

void redis_transport::command(std::span<const std::string_view> argv, redis_callback done) {
    if (!commands_) {
        refuse(std::move(done));
        return;
    }
    commands_->command(argv, std::move(done));  // refused or lost: nullopt, by its contract
}

void redis_transport::script(std::string_view text, std::span<const std::string_view> keys,
                             std::span<const std::string_view> args, redis_callback done) {
    const std::string count = std::to_string(keys.size());
    argv_.clear();
    argv_.push_back("EVALSHA");
    argv_.push_back(sha_of(text));
    argv_.push_back(count);
    argv_.insert(argv_.end(), keys.begin(), keys.end());
    argv_.insert(argv_.end(), args.begin(), args.end());
    command(argv_, std::move(done));
}

void redis_transport::subscribe(std::string_view channel) {
    if (subscriber_) {
        subscriber_->subscribe({std::string(channel)});
    }
}

void redis_transport::unsubscribe(std::string_view channel) {
    if (subscriber_) {
        subscriber_->unsubscribe({std::string(channel)});
    }
}

}  // namespace parley::cluster
