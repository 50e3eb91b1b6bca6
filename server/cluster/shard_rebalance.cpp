#include "server/cluster/shard_rebalance.hpp"

#include "rooms/cluster/cluster_keys.hpp"
#include "server/cluster/redis_connection.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>

namespace parley::cluster {

namespace asio = boost::asio;

namespace {

// Scans one server at a time for room keys and partitions' rooms indexes (SCAN ... MATCH), and for each batch the scan
// returns, MIGRATEs the keys that belong elsewhere before asking for the next batch.
class rebalancer {
public:
    rebalancer(asio::io_context& io, const std::vector<config::redis_endpoint>& shards,
               std::chrono::milliseconds timeout)
        : shards_(shards), connect_deadline_(io), deadline_(io) {
        for (std::size_t i = 0; i < shards_.size(); ++i) {
            redis_connection::options opts;
            opts.host = shards_[i].host;
            opts.port = shards_[i].port;
            opts.password = shards_[i].password;
            opts.command_timeout = std::chrono::seconds(30);  // a MIGRATE waits for the other server
            auto c = redis_connection::create(io.get_executor(), opts, "rebalance of shard " + std::to_string(i + 1));
            c->on_up([this] { begin_if_all_up(); });
            c->on_down([this, i] { fail("lost redis shard " + std::to_string(i + 1)); });
            connections_.push_back(std::move(c));
        }
        // Every server must answer at once: the nodes are stopped, so nothing waits for one.
        connect_deadline_.expires_after(std::chrono::seconds(5));
        connect_deadline_.async_wait([this](boost::system::error_code ec) {
            for (std::size_t i = 0; !ec && i < connections_.size(); ++i) {
                if (!connections_[i]->connected() && !begun_) {
                    fail("cannot reach redis shard " + std::to_string(i + 1) + " (" + shards_[i].host + ":" +
                         std::to_string(shards_[i].port) + ")");
                }
            }
        });
        deadline_.expires_after(timeout);
        deadline_.async_wait([this](boost::system::error_code ec) {
            if (!ec) {
                fail("not done in time (is every server of cluster.redis reachable?)");
            }
        });
        for (auto& c : connections_) {
            c->start();
        }
    }

    rebalance_outcome outcome() const { return outcome_; }

private:
    void begin_if_all_up() {
        for (const auto& c : connections_) {
            if (!c->connected()) {
                return;
            }
        }
        if (!begun_) {
            begun_ = true;
            scan(0, "0");
        }
    }

    bool over() const { return finished_ || !outcome_.error.empty(); }

    void scan(std::size_t shard, const std::string& cursor) {
        connections_[shard]->command(
            {"SCAN", cursor, "MATCH", "parley:{p*}:room*", "COUNT", "500"},
            [this, shard](std::optional<redis_reply> reply) {
                if (over()) {
                    return;
                }
                if (!reply || reply->is_error() || !reply->is_array() || reply->elements.size() != 2) {
                    fail("scanning redis shard " + std::to_string(shard + 1) + " failed" +
                         (reply ? ": " + reply->text : std::string()));
                    return;
                }
                const std::string next = reply->elements[0].text;
                pending_ = 0;
                const auto count = static_cast<std::uint32_t>(shards_.size());
                for (const redis_reply& key : reply->elements[1].elements) {
                    const std::uint32_t owner = keys::shard_of_key(key.text, count);
                    if (owner != shard && keys::room_partition(key.text)) {
                        ++pending_;
                        migrate(shard, owner, key.text, next);
                    }
                }
                if (pending_ == 0) {
                    after_batch(shard, next);
                }
            });
    }

    void migrate(std::size_t source, std::size_t target, const std::string& key, const std::string& next) {
        const config::redis_endpoint& to = shards_[target];
        const std::string port = std::to_string(to.port);
        std::vector<std::string_view> argv = {"MIGRATE", to.host, port, key, "0", "10000"};
        if (!to.password.empty()) {
            argv.insert(argv.end(), {"AUTH", to.password});
        }
        connections_[source]->command(argv, [this, source, key, next](std::optional<redis_reply> reply) {
            if (over()) {
                return;
            }
            if (!reply) {
                fail("lost redis shard " + std::to_string(source + 1) + " while moving " + key);
                return;
            }
            if (reply->is_error()) {
                if (reply->text.find("BUSYKEY") == std::string::npos) {
                    fail("moving " + key + " failed: " + reply->text);
                    return;
                }
                outcome_.conflicts.push_back(key);
            } else if (reply->text == "OK") {
                ++outcome_.moved;  // (NOKEY: gone meanwhile)
            }
            if (--pending_ == 0) {
                after_batch(source, next);
            }
        });
    }

    void after_batch(std::size_t shard, const std::string& next) {
        if (next != "0") {
            scan(shard, next);
        } else if (shard + 1 < shards_.size()) {
            scan(shard + 1, "0");
        } else {
            finished_ = true;
            close();
        }
    }

    void fail(std::string why) {
        if (over()) {
            return;
        }
        outcome_.error = std::move(why);
        close();
    }

    void close() {
        connect_deadline_.cancel();
        deadline_.cancel();
        for (auto& c : connections_) {
            c->stop();
        }
    }

    const std::vector<config::redis_endpoint>& shards_;
    std::vector<std::shared_ptr<redis_connection>> connections_;
    asio::steady_timer connect_deadline_;
    asio::steady_timer deadline_;
    rebalance_outcome outcome_;
    std::size_t pending_ = 0;  // MIGRATEs of the current batch not answered yet
    bool begun_ = false;
    bool finished_ = false;
};

}  // namespace

rebalance_outcome rebalance_shards(const std::vector<config::redis_endpoint>& shards,
                                   std::chrono::milliseconds timeout) {
    if (shards.empty()) {
        return {0, {}, "cluster.redis lists no server"};
    }
    asio::io_context io;
    rebalancer work(io, shards, timeout);
    io.run();
    return work.outcome();
}

}  // namespace parley::cluster
