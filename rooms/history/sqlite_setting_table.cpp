#include "rooms/history/sqlite_setting_table.hpp"

namespace parley::rooms {

sqlite_setting_table::sqlite_setting_table(sqlite_connection& writer_db)
    : db_(writer_db),
      upsert_(writer_db.prepare("INSERT INTO room_settings(room, kind, subject, value) VALUES(?1, ?2, ?3, ?4) "
                                "ON CONFLICT(room, kind, subject) DO UPDATE SET value = excluded.value")),
      remove_(writer_db.prepare("DELETE FROM room_settings WHERE room = ?1 AND kind = ?2 AND subject = ?3")) {}

void sqlite_setting_table::flush() {
    if (book_.empty()) {
        return;
    }
    room_setting_book::entries writing = book_.take();
    if (writing.empty()) {
        book_.written();
        return;
    }
    try {
        db_.exec("BEGIN IMMEDIATE");
        for (const auto& [key, value] : writing) {
            const auto& [room, kind, subject] = key;
            if (value) {
                upsert_.bind(1, room).bind(2, kind).bind(3, subject).bind(4, *value).run();
            } else {
                remove_.bind(1, room).bind(2, kind).bind(3, subject).run();
            }
        }
        db_.exec("COMMIT");
    } catch (const sqlite_error&) {
        try {
            db_.exec("ROLLBACK");
        } catch (const sqlite_error&) {
            // Nothing left to roll back.
        }
        book_.give_back(std::move(writing));
        throw;
    }
    std::lock_guard settle(settle_mutex_);
    book_.written();
}

}  // namespace parley::rooms
