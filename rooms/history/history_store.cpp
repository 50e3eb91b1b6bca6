#include "rooms/history/history_store.hpp"

#include <utility>

namespace parley::rooms {

using protocol::shared_frame;

void history_store::complete(room_log& log, history_answer answer, history_done done) {
    if (!answer.stored) {
        done(join_answer({}, answer));
        return;
    }
    read_stored(log, std::move(answer), std::move(done));
}

void history_store::read_stored(room_log& /*log*/, history_answer answer, history_done done) {
    done(join_answer({}, answer));
}

}  // namespace parley::rooms
