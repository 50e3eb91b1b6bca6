#include "rooms/chat_hub.hpp"

namespace parley::rooms {

chat_hub::chat_hub(const config::settings& settings, std::unique_ptr<history_store> store,
                   std::vector<worker_context*> workers, std::unique_ptr<message_bus> bus)
    : settings_(settings),
      store_(std::move(store)),
      workers_(std::move(workers)),
      bus_(bus ? std::move(bus) : make_local_bus()),
      rooms_(*store_, *bus_, workers_) {}

}  // namespace parley::rooms
