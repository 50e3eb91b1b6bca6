// The user registry against the designs it was chosen over, on the workload it exists for: lookups
// of random names among 10,000 online users, from 1 and 2 threads, plus login/logout churn.
//
//   a_one_mutex       one std::mutex around one std::unordered_map (one server process)
//   b_shared_mutex    64 shards, each a std::unordered_map behind a std::shared_mutex
//   c_snapshot        parley::registry::user_registry (the one kept): per shard, a table of
//                     immutable buckets replaced copy-on-write; lookups take no lock at all
//   d_unsynchronized  one std::unordered_map with no synchronization: the ceiling, reads only
//
// Throughput is items_per_second over wall-clock time (UseRealTime), summed over threads.

#include "registry/user_registry.hpp"

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

using parley::registry::session_handle;
using parley::registry::user_registry;

constexpr std::uint32_t user_count = 10000;

const std::vector<std::string>& user_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        v.reserve(user_count);
        for (std::uint32_t i = 1; i <= user_count; ++i) {
            v.push_back("user_" + std::to_string(i));
        }
        return v;
    }();
    return names;
}

session_handle handle_of(std::uint32_t i) { return {i % 4, i}; }

// xorshift64*: cheap enough not to dominate a lookup, and per thread so threads share nothing.
class random_index {
public:
    explicit random_index(std::uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ULL + 1) {}
    // Uniform in [0, bound).
    std::uint32_t next(std::uint32_t bound) {
        state_ ^= state_ >> 12;
        state_ ^= state_ << 25;
        state_ ^= state_ >> 27;
        const std::uint64_t r = (state_ * 0x2545f4914f6cdd1dULL) >> 32;
        return static_cast<std::uint32_t>((r * bound) >> 32);
    }

private:
    std::uint64_t state_;
};

// a: the baseline, every operation takes the same lock.
class one_mutex_map {
public:
    std::optional<session_handle> lookup(const std::string& name) const {
        std::lock_guard lock(mutex_);
        const auto it = map_.find(name);
        return it == map_.end() ? std::nullopt : std::optional(it->second);
    }
    bool try_register(const std::string& name, session_handle h) {
        std::lock_guard lock(mutex_);
        return map_.try_emplace(name, h).second;
    }
    bool unregister(const std::string& name, session_handle h) {
        std::lock_guard lock(mutex_);
        const auto it = map_.find(name);
        if (it == map_.end() || it->second != h) {
            return false;
        }
        map_.erase(it);
        return true;
    }

private:
    mutable std::mutex mutex_;
    std::unordered_map<std::string, session_handle> map_;
};

// b: readers share a shard's lock, but taking it still writes the lock word, so the cache line
// moves between the cores of readers of one shard.
class shared_mutex_shards {
public:
    std::optional<session_handle> lookup(const std::string& name) const {
        const shard& s = shard_for(name);
        std::shared_lock lock(s.mutex);
        const auto it = s.map.find(name);
        return it == s.map.end() ? std::nullopt : std::optional(it->second);
    }
    bool try_register(const std::string& name, session_handle h) {
        shard& s = shard_for(name);
        std::unique_lock lock(s.mutex);
        return s.map.try_emplace(name, h).second;
    }
    bool unregister(const std::string& name, session_handle h) {
        shard& s = shard_for(name);
        std::unique_lock lock(s.mutex);
        const auto it = s.map.find(name);
        if (it == s.map.end() || it->second != h) {
            return false;
        }
        s.map.erase(it);
        return true;
    }

private:
    static constexpr std::size_t shard_count = 64;
    struct alignas(64) shard {
        mutable std::shared_mutex mutex;
        std::unordered_map<std::string, session_handle> map;
    };
    shard& shard_for(const std::string& name) const {
        // High bits pick the shard; the map uses the low bits of the same hash.
        return shards_[(std::hash<std::string>{}(name) >> 40) % shard_count];
    }
    mutable std::array<shard, shard_count> shards_;
};

// c: the registry itself, with a chosen shard count (64 is its default).
template <std::size_t Shards>
class snapshot_registry : public user_registry {
public:
    snapshot_registry() : user_registry(Shards) {}
    // The candidates' common form: one session per name, true when this call took it.
    bool try_register(std::string_view name, session_handle h) {
        return user_registry::try_register(name, h, 1) == outcome::registered;
    }
};

// d: no synchronization at all; only valid while nobody writes.
class unsynchronized_map {
public:
    std::optional<session_handle> lookup(const std::string& name) const {
        const auto it = map_.find(name);
        return it == map_.end() ? std::nullopt : std::optional(it->second);
    }
    bool try_register(const std::string& name, session_handle h) { return map_.try_emplace(name, h).second; }
    bool unregister(const std::string& name, session_handle h) {
        const auto it = map_.find(name);
        if (it == map_.end() || it->second != h) {
            return false;
        }
        map_.erase(it);
        return true;
    }

private:
    std::unordered_map<std::string, session_handle> map_;
};

// One populated instance per candidate, built on first use and shared by the benchmark's threads
// (a function-local static is initialized once even when several threads arrive together).
template <class Registry>
Registry& populated() {
    static Registry* const registry = [] {
        auto* r = new Registry;
        const auto& names = user_names();
        for (std::uint32_t i = 0; i < user_count; ++i) {
            r->try_register(names[i], handle_of(i));
        }
        return r;
    }();
    return *registry;
}

template <class Registry>
void lookup(benchmark::State& state) {
    const Registry& registry = populated<Registry>();
    const auto& names = user_names();
    random_index rng(static_cast<std::uint64_t>(state.thread_index()) + 1);
    std::uint64_t misses = 0;
    for (auto _ : state) {
        const auto found = registry.lookup(names[rng.next(user_count)]);
        misses += !found.has_value();
        benchmark::DoNotOptimize(found);
    }
    if (misses != 0) {
        state.SkipWithError("a registered name was not found");
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

// Logout then login again of a random name of this thread's own share of the users, so every call
// succeeds and the population stays at 10,000. Two operations per iteration.
template <class Registry>
void churn(benchmark::State& state) {
    Registry& registry = populated<Registry>();
    const auto& names = user_names();
    const auto threads = static_cast<std::uint32_t>(state.threads());
    const auto me = static_cast<std::uint32_t>(state.thread_index());
    random_index rng(me + 101);
    std::uint64_t failures = 0;
    for (auto _ : state) {
        const std::uint32_t i = me + threads * rng.next(user_count / threads);
        failures += !registry.unregister(names[i], handle_of(i));
        failures += !registry.try_register(names[i], handle_of(i));
    }
    if (failures != 0) {
        state.SkipWithError("churn lost a name");
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(2 * state.iterations()));
}

// Read-mostly: each thread looks up random names and, once every 256 lookups, logs one of its own
// users out and in again (about 0.8% writes). Counts lookups only.
template <class Registry>
void lookup_with_churn(benchmark::State& state) {
    Registry& registry = populated<Registry>();
    const auto& names = user_names();
    const auto threads = static_cast<std::uint32_t>(state.threads());
    const auto me = static_cast<std::uint32_t>(state.thread_index());
    random_index rng(me + 1001);
    std::uint32_t tick = 0;
    for (auto _ : state) {
        const auto found = registry.lookup(names[rng.next(user_count)]);
        benchmark::DoNotOptimize(found);
        if ((++tick & 255) == 0) {
            const std::uint32_t i = me + threads * rng.next(user_count / threads);
            registry.unregister(names[i], handle_of(i));
            registry.try_register(names[i], handle_of(i));
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void on_1_and_2_threads(benchmark::internal::Benchmark* b) { b->Threads(1)->Threads(2)->UseRealTime(); }

BENCHMARK_TEMPLATE(lookup, one_mutex_map)->Name("lookup/a_one_mutex")->Apply(on_1_and_2_threads);
BENCHMARK_TEMPLATE(lookup, shared_mutex_shards)->Name("lookup/b_shared_mutex")->Apply(on_1_and_2_threads);
BENCHMARK_TEMPLATE(lookup, snapshot_registry<64>)->Name("lookup/c_snapshot")->Apply(on_1_and_2_threads);
BENCHMARK_TEMPLATE(lookup, snapshot_registry<256>)->Name("lookup/c_snapshot_256")->Apply(on_1_and_2_threads);
BENCHMARK_TEMPLATE(lookup, unsynchronized_map)->Name("lookup/d_unsynchronized")->Apply(on_1_and_2_threads);

BENCHMARK_TEMPLATE(churn, one_mutex_map)->Name("churn/a_one_mutex")->Apply(on_1_and_2_threads);
BENCHMARK_TEMPLATE(churn, shared_mutex_shards)->Name("churn/b_shared_mutex")->Apply(on_1_and_2_threads);
BENCHMARK_TEMPLATE(churn, snapshot_registry<64>)->Name("churn/c_snapshot")->Apply(on_1_and_2_threads);
BENCHMARK_TEMPLATE(churn, snapshot_registry<256>)->Name("churn/c_snapshot_256")->Apply(on_1_and_2_threads);
BENCHMARK_TEMPLATE(churn, unsynchronized_map)->Name("churn/d_unsynchronized")->Threads(1)->UseRealTime();

BENCHMARK_TEMPLATE(lookup_with_churn, one_mutex_map)->Name("read_mostly/a_one_mutex")->Apply(on_1_and_2_threads);
BENCHMARK_TEMPLATE(lookup_with_churn, shared_mutex_shards)
    ->Name("read_mostly/b_shared_mutex")
    ->Apply(on_1_and_2_threads);
BENCHMARK_TEMPLATE(lookup_with_churn, snapshot_registry<64>)
    ->Name("read_mostly/c_snapshot")
    ->Apply(on_1_and_2_threads);

}  // namespace
