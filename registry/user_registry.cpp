#include "registry/user_registry.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <utility>

namespace parley::registry {

namespace {

// Names longer than this are refused; the protocol already limits them, and a fixed bound lets an
// entry hold its name inline, so a lookup reads one entry and never follows a pointer to a string.
constexpr std::size_t max_name_size = 32;
constexpr std::size_t max_shard_count = std::size_t{1} << 16;
constexpr std::size_t cache_line = 64;

// ---------------------------------------------------------------------------------------------
// Hash

std::uint64_t load64(const char* p) noexcept {
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

std::uint32_t load32(const char* p) noexcept {
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Names are at most 32 bytes, so the hash reads whole words (the last one overlapping the one
// before) instead of looping over bytes, and ends with a full-avalanche finalizer because
// different bit ranges of the one hash pick the shard and the slot inside it.
std::uint64_t hash_name(std::string_view name) noexcept {
    constexpr std::uint64_t k1 = 0x9e3779b97f4a7c15ULL;
    constexpr std::uint64_t k2 = 0xc2b2ae3d27d4eb4fULL;
    const char* p = name.data();
    const std::size_t n = name.size();
    std::uint64_t h = n * k1;
    if (n >= 8) {
        for (std::size_t i = 0; i + 8 < n; i += 8) {
            h = std::rotl(h ^ (load64(p + i) * k2), 31) * k1;
        }
        h = std::rotl(h ^ (load64(p + n - 8) * k2), 31) * k1;
    } else if (n >= 4) {
        h ^= ((std::uint64_t{load32(p)} << 32) | load32(p + n - 4)) * k2;
    } else if (n > 0) {
        const auto b = [p](std::size_t i) { return std::uint64_t{static_cast<unsigned char>(p[i])}; };
        h ^= ((b(0) << 16) | (b(n / 2) << 8) | b(n - 1)) * k2;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

// The low byte of the hash is replaced by the length, so one 64-bit compare rejects almost every
// other name before the bytes are compared.
std::uint64_t entry_key(std::uint64_t hash, std::size_t size) noexcept {
    return (hash & ~std::uint64_t{0xff}) | size;
}

bool valid_name(std::string_view name) noexcept {
    return !name.empty() && name.size() <= max_name_size;
}

// ---------------------------------------------------------------------------------------------
// Storage. A shard holds a table of bucket pointers; a bucket is an immutable array of the entries
// whose names fall in that slot. A login or logout builds a new bucket (usually one or two entries)
// and swaps one pointer, so a write copies a few entries instead of the whole shard. Growing or
// shrinking builds a new table with new buckets and swaps the shard's table pointer. Readers never
// see anything half-written: whatever pointer they load was complete before it was published.
// (A flat per-shard snapshot copied whole on every write looked up as fast but managed only about
// a million logins and logouts a second with 64 shards; copying one bucket matches a mutex-guarded
// map's churn rate.)

struct entry {
    std::uint64_t key;  // entry_key(hash, size)
    session_handle handle;
    char name[max_name_size];

    std::size_t size() const noexcept { return key & 0xff; }
    std::string_view view() const noexcept { return {name, size()}; }
    bool matches(std::uint64_t k, std::string_view n) const noexcept {
        return key == k && std::memcmp(name, n.data(), n.size()) == 0;
    }
};
static_assert(sizeof(entry) == 48);

class bucket {
public:
    std::size_t size() const noexcept { return size_; }
    const entry* begin() const noexcept { return entries(); }
    const entry* end() const noexcept { return entries() + size_; }

    const entry* find(std::uint64_t key, std::string_view name) const noexcept {
        for (const entry& e : *this) {
            if (e.matches(key, name)) {
                return &e;
            }
        }
        return nullptr;
    }

    // The entry of this name held by handle.
    const entry* find(std::uint64_t key, std::string_view name, session_handle handle) const noexcept {
        for (const entry& e : *this) {
            if (e.matches(key, name) && e.handle == handle) {
                return &e;
            }
        }
        return nullptr;
    }

    // Sessions holding the name: its entries all share one key, so they share this bucket.
    std::size_t count(std::uint64_t key, std::string_view name) const noexcept {
        std::size_t n = 0;
        for (const entry& e : *this) {
            n += e.matches(key, name) ? 1 : 0;
        }
        return n;
    }

    // The entries of `from` (may be null) plus e.
    static const bucket* with_added(const bucket* from, const entry& e) {
        const std::size_t n = from ? from->size_ : 0;
        bucket* b = make(n + 1);
        if (n != 0) {
            std::memcpy(static_cast<void*>(b->entries()), from->entries(), n * sizeof(entry));
        }
        b->entries()[n] = e;
        return b;
    }

    // The entries of `from` but the victim; null when nothing is left.
    static const bucket* with_removed(const bucket& from, const entry* victim) {
        if (from.size_ == 1) {
            return nullptr;
        }
        bucket* b = make(from.size_ - 1);
        const std::size_t before = static_cast<std::size_t>(victim - from.begin());
        std::memcpy(static_cast<void*>(b->entries()), from.entries(), before * sizeof(entry));
        std::memcpy(static_cast<void*>(b->entries() + before), victim + 1,
                    (from.size_ - before - 1) * sizeof(entry));
        return b;
    }

    static const bucket* copy_of(const entry* first, std::size_t n) {
        bucket* b = make(n);
        std::memcpy(static_cast<void*>(b->entries()), first, n * sizeof(entry));
        return b;
    }

    static void destroy(const bucket* b) noexcept {
        if (b) {
            b->~bucket();
            ::operator delete(const_cast<bucket*>(b));
        }
    }

private:
    explicit bucket(std::size_t size) noexcept : size_(size) {}

    // Header and entries in one allocation: a reader goes from the slot straight to the names.
    static bucket* make(std::size_t size) {
        void* mem = ::operator new(sizeof(bucket) + size * sizeof(entry));
        auto* b = new (mem) bucket(size);
        std::uninitialized_default_construct_n(b->entries(), size);
        return b;
    }

    entry* entries() noexcept {
        return std::launder(reinterpret_cast<entry*>(reinterpret_cast<char*>(this) + sizeof(bucket)));
    }
    const entry* entries() const noexcept {
        return std::launder(reinterpret_cast<const entry*>(reinterpret_cast<const char*>(this) + sizeof(bucket)));
    }

    std::size_t size_;
};
static_assert(sizeof(bucket) % alignof(entry) == 0);

class table {
public:
    std::size_t capacity() const noexcept { return mask_ + 1; }

    // Bits 8 and up pick the slot: the low byte of a key is the length, the top bits the shard.
    std::size_t slot_of(std::uint64_t key) const noexcept { return static_cast<std::size_t>(key >> 8) & mask_; }

    // seq_cst for readers: see read_section.
    const bucket* load(std::size_t slot) const noexcept { return slots()[slot].load(std::memory_order_seq_cst); }

    // Writers only, under the shard's mutex.
    const bucket* peek(std::size_t slot) const noexcept { return slots()[slot].load(std::memory_order_relaxed); }
    void publish(std::size_t slot, const bucket* b) noexcept { slots()[slot].store(b, std::memory_order_seq_cst); }

    // A table of the given capacity (a power of two) holding these entries, or throws bad_alloc
    // having allocated nothing that outlives the call.
    static table* build(std::size_t capacity, std::vector<entry>& entries) {
        std::unique_ptr<table, deleter> t(make(capacity));
        // Group the entries by slot, then give every run its own exactly sized bucket.
        std::sort(entries.begin(), entries.end(), [&t](const entry& a, const entry& b) {
            return t->slot_of(a.key) < t->slot_of(b.key);
        });
        for (std::size_t i = 0; i < entries.size();) {
            const std::size_t slot = t->slot_of(entries[i].key);
            std::size_t j = i + 1;
            while (j < entries.size() && t->slot_of(entries[j].key) == slot) {
                ++j;
            }
            t->slots()[slot].store(bucket::copy_of(&entries[i], j - i), std::memory_order_relaxed);
            i = j;
        }
        return t.release();
    }

    // Frees the table only; its buckets are freed by whoever owns them.
    static void destroy(const table* t) noexcept {
        if (t) {
            t->~table();
            ::operator delete(const_cast<table*>(t), std::align_val_t{alignof(table)});
        }
    }

    // Frees the table and every bucket in it.
    static void destroy_with_buckets(const table* t) noexcept {
        if (t) {
            for (std::size_t i = 0; i < t->capacity(); ++i) {
                bucket::destroy(t->peek(i));
            }
            destroy(t);
        }
    }

private:
    struct deleter {
        void operator()(const table* t) const noexcept { destroy_with_buckets(t); }
    };

    explicit table(std::size_t capacity) noexcept : mask_(capacity - 1) {}

    static table* make(std::size_t capacity) {
        void* mem = ::operator new(sizeof(table) + capacity * sizeof(slot_type), std::align_val_t{alignof(table)});
        auto* t = new (mem) table(capacity);
        std::uninitialized_value_construct_n(t->slots(), capacity);
        return t;
    }

    using slot_type = std::atomic<const bucket*>;
    slot_type* slots() noexcept {
        return std::launder(reinterpret_cast<slot_type*>(reinterpret_cast<char*>(this) + sizeof(table)));
    }
    const slot_type* slots() const noexcept {
        return std::launder(reinterpret_cast<const slot_type*>(reinterpret_cast<const char*>(this) + sizeof(table)));
    }

    std::size_t mask_;
};
static_assert(sizeof(table) % alignof(std::atomic<const bucket*>) == 0);

// A table holds about one entry per slot: it grows past one and shrinks below a quarter.
std::size_t capacity_for(std::size_t count) noexcept { return std::max<std::size_t>(8, std::bit_ceil(count)); }

// ---------------------------------------------------------------------------------------------
// Reclamation. Each reader thread owns a slot whose sequence number is odd while it is inside a
// lookup. A writer that unpublishes a bucket or a table notes which slots are odd right after
// publishing the replacement; the old block is freed once each of those slots has moved on, by a
// later write to the same shard or by the registry's destructor. Readers only write their own
// cache line, so lookups on different threads share nothing that is written, and never wait.

struct alignas(cache_line) reader_slot {
    std::atomic<std::uint64_t> seq{0};
    std::atomic<bool> in_use{false};
    reader_slot* next = nullptr;  // written once before the slot is published, then immutable
};

class reader_domain {
public:
    // Never destroyed: threads may still leave lookups while statics are torn down at exit.
    static reader_domain& instance() {
        static reader_domain* const domain = new reader_domain;
        return *domain;
    }

    reader_slot* acquire() {
        for (reader_slot* s = head_.load(std::memory_order_seq_cst); s; s = s->next) {
            bool expected = false;
            if (!s->in_use.load(std::memory_order_relaxed) &&
                s->in_use.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
                return s;
            }
        }
        auto* s = new reader_slot;
        s->in_use.store(true, std::memory_order_relaxed);
        std::lock_guard lock(append_mutex_);
        s->next = head_.load(std::memory_order_relaxed);
        // seq_cst, like every access to head_: a writer's scan that misses this slot is then ordered
        // before the slot's first read section, which therefore sees the writer's new pointers.
        head_.store(s, std::memory_order_seq_cst);
        return s;
    }

    void release(reader_slot* s) noexcept { s->in_use.store(false, std::memory_order_release); }

    reader_slot* first() const noexcept { return head_.load(std::memory_order_seq_cst); }

private:
    std::mutex append_mutex_;
    std::atomic<reader_slot*> head_{nullptr};
};

// A plain pointer (constant-initialized, so reading it costs one TLS load with no init check); the
// object that hands the slot back at thread exit is only touched on a thread's first lookup.
thread_local reader_slot* this_thread_slot = nullptr;
thread_local bool this_thread_exited = false;

struct slot_owner {
    reader_slot* slot = nullptr;
    ~slot_owner() {
        if (slot) {
            reader_domain::instance().release(slot);
        }
        this_thread_slot = nullptr;
        this_thread_exited = true;
    }
};

reader_slot& register_this_thread() {
    if (this_thread_exited) {
        // A lookup from another thread_local's destructor after ours ran: take a slot for good
        // rather than touch the destroyed owner. It is one cache line, once per such thread.
        this_thread_slot = reader_domain::instance().acquire();
        return *this_thread_slot;
    }
    thread_local slot_owner owner;
    owner.slot = reader_domain::instance().acquire();
    this_thread_slot = owner.slot;
    return *owner.slot;
}

class read_section {
public:
    read_section() : slot_(this_thread_slot ? *this_thread_slot : register_this_thread()) {
        const std::uint64_t seq = slot_.seq.load(std::memory_order_relaxed);
        assert((seq & 1) == 0 && "read sections do not nest");
        seq_ = seq + 1;
        // seq_cst pairs with the writer's seq_cst publish and scan: either the writer sees this
        // slot odd, or this thread's next loads see the new table or bucket.
        slot_.seq.store(seq_, std::memory_order_seq_cst);
    }
    ~read_section() { slot_.seq.store(seq_ + 1, std::memory_order_release); }
    read_section(const read_section&) = delete;
    read_section& operator=(const read_section&) = delete;

private:
    reader_slot& slot_;
    std::uint64_t seq_;
};

// Blocks unpublished by one write, waiting for the read sections that were open when it happened.
struct retired_blocks {
    const table* old_table = nullptr;  // its buckets are listed separately when they go too
    std::vector<const bucket*> buckets;
    std::vector<std::pair<const reader_slot*, std::uint64_t>> readers;

    bool quiescent() const noexcept {
        // acquire: a reader's end-of-section store then happens-before the free.
        return std::all_of(readers.begin(), readers.end(), [](const auto& r) {
            return r.first->seq.load(std::memory_order_acquire) != r.second;
        });
    }

    void free() const noexcept {
        for (const bucket* b : buckets) {
            bucket::destroy(b);
        }
        table::destroy(old_table);
    }
};

}  // namespace

// ---------------------------------------------------------------------------------------------

struct user_registry::shard {
    // The only field readers touch, alone on its line so writers' bookkeeping does not evict it.
    alignas(cache_line) std::atomic<table*> current{nullptr};

    alignas(cache_line) std::mutex mutex;
    std::atomic<std::size_t> count{0};     // entries (sessions); written under mutex, read without it
    std::atomic<std::size_t> names{0};     // distinct names; likewise
    std::vector<retired_blocks> retired;  // guarded by mutex

    ~shard() {
        table::destroy_with_buckets(current.load(std::memory_order_relaxed));
        for (const retired_blocks& r : retired) {
            r.free();
        }
    }

    // The rest runs under mutex. Writers are the only ones to free anything, so under the mutex the
    // current table and its buckets can be read without a read section.

    const bucket* bucket_of(std::uint64_t key) const noexcept {
        const table* t = current.load(std::memory_order_relaxed);
        return t ? t->peek(t->slot_of(key)) : nullptr;
    }

    void insert(const entry& e) {
        const std::size_t n = count.load(std::memory_order_relaxed) + 1;
        table* t = current.load(std::memory_order_relaxed);
        if (!t || n > t->capacity()) {
            rebuild(n, &e, nullptr);
            return;
        }
        const std::size_t slot = t->slot_of(e.key);
        const bucket* old = t->peek(slot);
        const bucket* next = bucket::with_added(old, e);
        replace_bucket(*t, slot, old, next);
        count.store(n, std::memory_order_relaxed);
    }

    void erase(const entry* victim) {
        const std::size_t n = count.load(std::memory_order_relaxed) - 1;
        table* t = current.load(std::memory_order_relaxed);
        if (n < t->capacity() / 4 && t->capacity() > capacity_for(0)) {
            rebuild(n, nullptr, victim);
            return;
        }
        const std::size_t slot = t->slot_of(victim->key);
        const bucket* old = t->peek(slot);
        const bucket* next = bucket::with_removed(*old, victim);
        replace_bucket(*t, slot, old, next);
        count.store(n, std::memory_order_relaxed);
    }

private:
    void reserve_retired() {
        if (retired.size() == retired.capacity()) {
            retired.reserve(std::max<std::size_t>(4, 2 * retired.capacity()));
        }
    }

    void replace_bucket(table& t, std::size_t slot, const bucket* old, const bucket* next) {
        try {
            reserve_retired();
        } catch (...) {
            bucket::destroy(next);
            throw;
        }
        // Readers share the table; a write changes one slot, in one atomic store.
        t.publish(slot, next);
        reclaim();
        if (old) {
            retired_blocks r;
            r.buckets.push_back(old);
            retire(std::move(r));
        }
    }

    // A new table sized for n entries: the current ones plus `added`, less `removed`.
    void rebuild(std::size_t n, const entry* added, const entry* removed) {
        const table* old = current.load(std::memory_order_relaxed);
        std::vector<entry> entries;
        entries.reserve(n);
        std::vector<const bucket*> old_buckets;
        if (old) {
            for (std::size_t i = 0; i < old->capacity(); ++i) {
                if (const bucket* b = old->peek(i)) {
                    old_buckets.push_back(b);
                    for (const entry& e : *b) {
                        if (&e != removed) {
                            entries.push_back(e);
                        }
                    }
                }
            }
        }
        if (added) {
            entries.push_back(*added);
        }
        std::unique_ptr<table, void (*)(const table*)> next(table::build(capacity_for(n), entries),
                                                            table::destroy_with_buckets);
        reserve_retired();
        current.store(next.release(), std::memory_order_seq_cst);
        count.store(n, std::memory_order_relaxed);
        reclaim();
        if (old) {
            retire(retired_blocks{old, std::move(old_buckets), {}});
        }
    }

    // Frees the retired blocks whose readers have all left.
    void reclaim() noexcept {
        std::size_t kept = 0;
        for (std::size_t i = 0; i < retired.size(); ++i) {
            if (retired[i].quiescent()) {
                retired[i].free();
            } else if (kept++ != i) {
                // Never self-move: a vector moved onto itself comes out empty.
                retired[kept - 1] = std::move(retired[i]);
            }
        }
        retired.resize(kept);
    }

    // r's blocks were just unpublished. A read section that opens after the scan below loads the
    // new pointers (both sides are seq_cst), so only the sections seen open here can hold r's
    // blocks. noexcept: they are unreachable already and must not be lost, so running out of
    // memory here ends the process instead.
    void retire(retired_blocks&& r) noexcept {
        for (const reader_slot* s = reader_domain::instance().first(); s; s = s->next) {
            const std::uint64_t seq = s->seq.load(std::memory_order_seq_cst);
            if (seq & 1) {
                r.readers.emplace_back(s, seq);
            }
        }
        if (r.readers.empty()) {
            r.free();
        } else {
            retired.push_back(std::move(r));  // capacity reserved before publishing
        }
    }
};

namespace {

// Bits 40..55 pick the shard; bits 8..39 pick the slot inside it, so the two stay independent.
std::size_t shard_index(std::uint64_t hash, std::size_t shard_count) noexcept {
    return static_cast<std::size_t>(hash >> 40) & (shard_count - 1);
}

}  // namespace

user_registry::user_registry(std::size_t shard_count)
    : shard_count_(std::bit_ceil(std::clamp<std::size_t>(shard_count, 1, max_shard_count))),
      shards_(new shard[shard_count_]) {}

user_registry::~user_registry() { delete[] shards_; }

user_registry::shard& user_registry::shard_for(std::uint64_t hash) const {
    return shards_[shard_index(hash, shard_count_)];
}

user_registry::outcome user_registry::try_register(std::string_view name, session_handle handle,
                                                   std::size_t max_sessions) {
    if (!valid_name(name)) {
        return outcome::invalid_name;
    }
    const std::uint64_t key = entry_key(hash_name(name), name.size());
    shard& s = shard_for(key);
    std::lock_guard lock(s.mutex);
    const bucket* b = s.bucket_of(key);
    const std::size_t held = b ? b->count(key, name) : 0;
    if (held >= std::max<std::size_t>(max_sessions, 1)) {
        return max_sessions > 1 ? outcome::session_limit : outcome::name_taken;
    }
    entry e{key, handle, {}};
    std::memcpy(e.name, name.data(), name.size());
    s.insert(e);
    if (held == 0) {
        s.names.store(s.names.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    return outcome::registered;
}

bool user_registry::unregister(std::string_view name, session_handle handle) {
    if (!valid_name(name)) {
        return false;
    }
    const std::uint64_t key = entry_key(hash_name(name), name.size());
    shard& s = shard_for(key);
    std::lock_guard lock(s.mutex);
    const bucket* b = s.bucket_of(key);
    const entry* e = b ? b->find(key, name, handle) : nullptr;
    if (!e) {
        return false;
    }
    const bool last = b->count(key, name) == 1;
    s.erase(e);
    if (last) {
        s.names.store(s.names.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    }
    return true;
}

std::optional<session_handle> user_registry::lookup(std::string_view name) const {
    if (!valid_name(name)) {
        return std::nullopt;
    }
    const std::uint64_t key = entry_key(hash_name(name), name.size());
    const shard& s = shard_for(key);
    read_section section;
    // Both loads are seq_cst, which costs nothing extra on x86 and orders them after the section's
    // opening store for the writers' scan (see shard::retire).
    const table* t = s.current.load(std::memory_order_seq_cst);
    const bucket* b = t ? t->load(t->slot_of(key)) : nullptr;
    if (b) {
        if (const entry* e = b->find(key, name)) {
            return e->handle;
        }
    }
    return std::nullopt;
}

std::size_t user_registry::lookup_all(std::string_view name, std::vector<session_handle>& out) const {
    if (!valid_name(name)) {
        return 0;
    }
    const std::uint64_t key = entry_key(hash_name(name), name.size());
    const shard& s = shard_for(key);
    read_section section;
    const table* t = s.current.load(std::memory_order_seq_cst);
    const bucket* b = t ? t->load(t->slot_of(key)) : nullptr;
    std::size_t found = 0;
    for (const entry* e = b ? b->begin() : nullptr; b && e != b->end(); ++e) {
        if (e->matches(key, name)) {
            out.push_back(e->handle);
            ++found;
        }
    }
    return found;
}

std::vector<std::string> user_registry::names() const {
    std::vector<std::string> out;
    out.reserve(session_count());
    for (std::size_t i = 0; i < shard_count_; ++i) {
        shard& s = shards_[i];
        std::lock_guard lock(s.mutex);
        const table* t = s.current.load(std::memory_order_relaxed);
        for (std::size_t slot = 0; t && slot < t->capacity(); ++slot) {
            if (const bucket* b = t->peek(slot)) {
                for (const entry& e : *b) {
                    out.emplace_back(e.view());
                }
            }
        }
    }
    std::sort(out.begin(), out.end());
    // A name held by several sessions has an entry for each.
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::size_t user_registry::size() const {
    std::size_t total = 0;
    for (std::size_t i = 0; i < shard_count_; ++i) {
        total += shards_[i].names.load(std::memory_order_relaxed);
    }
    return total;
}

std::size_t user_registry::session_count() const {
    std::size_t total = 0;
    for (std::size_t i = 0; i < shard_count_; ++i) {
        total += shards_[i].count.load(std::memory_order_relaxed);
    }
    return total;
}

}  // namespace parley::registry
