#include "rooms/history/sqlite_database.hpp"

namespace parley::rooms {

namespace {
std::string describe(const std::string& path, std::string_view doing, std::string_view reason) {
    std::string text = path;
    text += ": ";
    text += doing;
    text += ": ";
    text += reason;
    return text;
}
}  // namespace

sqlite_statement::sqlite_statement(sqlite3* db, std::string_view sql, const std::string& path) : db_(db), path_(path) {
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                &statement_, nullptr);
    if (rc != SQLITE_OK) {
        fail(rc, "preparing a statement");
    }
}

sqlite_statement::~sqlite_statement() { sqlite3_finalize(statement_); }

void sqlite_statement::fail(int /*code*/, std::string_view doing) const {
    throw sqlite_error(describe(path_, doing, sqlite3_errmsg(db_)));
}

sqlite_statement& sqlite_statement::bind(int index, std::int64_t value) {
    if (int rc = sqlite3_bind_int64(statement_, index, value); rc != SQLITE_OK) {
        fail(rc, "binding a value");
    }
    return *this;
}

sqlite_statement& sqlite_statement::bind(int index, std::string_view text) {
    // SQLITE_STATIC: the caller's text outlives the step that reads it (bound just before).
    if (int rc = sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
        rc != SQLITE_OK) {
        fail(rc, "binding a value");
    }
    return *this;
}

sqlite_statement& sqlite_statement::bind_blob(int index, std::string_view bytes) {
    if (int rc = sqlite3_bind_blob(statement_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_STATIC);
        rc != SQLITE_OK) {
        fail(rc, "binding a value");
    }
    return *this;
}

bool sqlite_statement::step() {
    int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) {
        return true;
    }
    if (rc == SQLITE_DONE) {
        return false;
    }
    sqlite3_reset(statement_);
    fail(rc, "running a statement");
}

void sqlite_statement::run() {
    while (step()) {
    }
    reset();
}

void sqlite_statement::reset() {
    // Bindings are kept: every use binds all parameters again.
    sqlite3_reset(statement_);
}

std::string_view sqlite_statement::blob(int column) const {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(statement_, column));
    int size = sqlite3_column_bytes(statement_, column);
    return data ? std::string_view(data, static_cast<std::size_t>(size)) : std::string_view{};
}

std::string_view sqlite_statement::text(int column) const {
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
    int size = sqlite3_column_bytes(statement_, column);
    return data ? std::string_view(data, static_cast<std::size_t>(size)) : std::string_view{};
}

sqlite_connection::sqlite_connection(std::string path, bool read_only) : path_(std::move(path)) {
    int flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    int rc = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string reason = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close(db_);
        db_ = nullptr;
        throw sqlite_error(describe(path_, "cannot open the database", reason));
    }
    // A locked database (another process writing) is waited for briefly, not failed at once.
    sqlite3_busy_timeout(db_, busy_timeout_ms);
    try {
        // SQLite reads the file's header only now: a file that is not a database fails here.
        exec("SELECT count(*) FROM sqlite_master");
    } catch (const sqlite_error&) {
        std::string reason = sqlite3_errmsg(db_);
        sqlite3_close(db_);
        db_ = nullptr;
        throw sqlite_error(describe(path_, "not a usable database", reason));
    }
}

sqlite_connection::~sqlite_connection() { sqlite3_close(db_); }

void sqlite_connection::exec(std::string_view sql) {
    std::string statements(sql);
    char* message = nullptr;
    int rc = sqlite3_exec(db_, statements.c_str(), nullptr, nullptr, &message);
    if (rc != SQLITE_OK) {
        std::string reason = message ? message : sqlite3_errstr(rc);
        sqlite3_free(message);
        throw sqlite_error(describe(path_, "running SQL", reason));
    }
}

}  // namespace parley::rooms
