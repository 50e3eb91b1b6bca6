#include "rooms/chat_hub.hpp"

namespace parley::rooms {

chat_hub::chat_hub(const config::settings& settings, std::unique_ptr<history_store> store,
                   std::vector<worker_context*> workers)
    : settings_(settings), store_(std::move(store)), workers_(std::move(workers)), rooms_(*store_, workers_) {}

}  // namespace parley::rooms
