#include "registry/user_registry.hpp"

#include "registry/read_reclaim.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
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

void free_bucket(const void* b) noexcept { bucket::destroy(static_cast<const bucket*>(b)); }
void free_table(const void* t) noexcept { table::destroy(static_cast<const table*>(t)); }

}  // namespace

// ---------------------------------------------------------------------------------------------

// Readers (lookup, lookup_all) load `current` and a slot of it inside a read_section, without the
// mutex. Writers hold the mutex, publish new tables and buckets with seq_cst stores, and hand what
// they replaced to `retired`, which frees it once no reader can still be looking at it (see
// registry/read_reclaim.hpp).
struct user_registry::shard {
    // The only field readers touch, alone on its line so writers' bookkeeping does not evict it.
    alignas(cache_line) std::atomic<table*> current{nullptr};

    alignas(cache_line) std::mutex mutex;
    std::atomic<std::size_t> count{0};     // entries (sessions); written under mutex, read without it
    std::atomic<std::size_t> names{0};     // distinct names; likewise
    retire_list retired;                   // guarded by mutex

    // `retired` is destroyed after this body and frees what still waits in it.
    ~shard() { table::destroy_with_buckets(current.load(std::memory_order_relaxed)); }

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
    void replace_bucket(table& t, std::size_t slot, const bucket* old, const bucket* next) {
        try {
            retired.reserve();
        } catch (...) {
            bucket::destroy(next);
            throw;
        }
        // Readers share the table; a write changes one slot, in one atomic store.
        t.publish(slot, next);
        if (old) {
            retired.retire(retired_block{old, &free_bucket});
        } else {
            retired.reclaim();
        }
    }

    // A new table sized for n entries: the current ones plus `added`, less `removed`.
    void rebuild(std::size_t n, const entry* added, const entry* removed) {
        const table* old = current.load(std::memory_order_relaxed);
        std::vector<entry> entries;
        entries.reserve(n);
        std::vector<retired_block> old_blocks;
        if (old) {
            old_blocks.push_back({old, &free_table});
            for (std::size_t i = 0; i < old->capacity(); ++i) {
                if (const bucket* b = old->peek(i)) {
                    old_blocks.push_back({b, &free_bucket});
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
        retired.reserve();
        current.store(next.release(), std::memory_order_seq_cst);
        count.store(n, std::memory_order_relaxed);
        if (old) {
            retired.retire(std::move(old_blocks));
        } else {
            retired.reclaim();
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
    // opening store for the writers' scan (see registry/read_reclaim.hpp).
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
