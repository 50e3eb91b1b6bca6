#include "rooms/history/history_store.hpp"

#include <utility>

namespace parley::rooms {

using protocol::shared_frame;

void history_store::complete(const log_handle& log, history_answer answer, history_done done) {
    if (!answer.stored) {
        done(join_answer({}, answer));
        return;
    }
    read_stored(log, std::move(answer), std::move(done));
}

void history_store::read_stored(const log_handle& /*log*/, history_answer answer, history_done done) {
    done(join_answer({}, answer));
}

}  // namespace parley::rooms
