#include "rooms/chat_hub.hpp"

#include "rooms/worker_context.hpp"

namespace parley::rooms {

chat_hub::chat_hub(const config::settings& settings, std::unique_ptr<history_store> store,
                   std::vector<worker_context*> workers, std::unique_ptr<message_bus> bus)
    : settings_(std::make_shared<const config::settings>(settings)),
      store_(std::move(store)),
      workers_(std::move(workers)),
      bus_(bus ? std::move(bus) : make_local_bus()),
      rooms_(*store_, *bus_, workers_),
      conversations_(*store_),
      markers_(*store_) {
    // Before any worker runs a task of ours: a plain store is enough.
    auto keys = token_keys_of(*settings_);
    for (worker_context* w : workers_) {
        w->set_hub(this);
        w->set_settings(settings_);
        w->set_token_keys(keys);
    }
    rooms_.declare(settings_->permanent_rooms, settings_->auth_mode == config::auth_mode::token);
}

std::shared_ptr<const protocol::token_keys> chat_hub::token_keys_of(const config::settings& s) const {
    auto keys = std::make_shared<protocol::token_keys>();
    if (!s.auth_token_secret.empty()) {
        keys->add_secret(s.auth_token_secret);
    }
    if (public_keys_) {
        keys->add_all(*public_keys_);
    }
    return keys;
}

void chat_hub::hand_out_token_keys(std::shared_ptr<const protocol::token_keys> keys) {
    for (worker_context* w : workers_) {
        w->executor().post([w, keys] { w->set_token_keys(keys); });
    }
}

void chat_hub::update_public_keys(std::shared_ptr<const protocol::token_keys> keys) {
    std::shared_ptr<const protocol::token_keys> combined;
    {
        std::lock_guard lock(settings_mutex_);
        public_keys_ = std::move(keys);
        combined = token_keys_of(*settings_);
    }
    hand_out_token_keys(std::move(combined));
}

std::shared_ptr<const config::settings> chat_hub::settings() const {
    std::lock_guard lock(settings_mutex_);
    return settings_;
}

void chat_hub::update_settings(const config::settings& next) {
    auto snapshot = std::make_shared<const config::settings>(next);
    std::shared_ptr<const protocol::token_keys> keys;
    {
        std::lock_guard lock(settings_mutex_);
        settings_ = snapshot;
        keys = token_keys_of(*snapshot);
    }
    for (worker_context* w : workers_) {
        w->executor().post([w, snapshot, keys] {
            w->set_settings(snapshot);
            w->set_token_keys(keys);
        });
    }
    rooms_.declare(snapshot->permanent_rooms, snapshot->auth_mode == config::auth_mode::token);
}

}  // namespace parley::rooms
