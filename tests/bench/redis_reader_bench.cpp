// The cluster's subscriber reading pub/sub messages from the bytes Redis sends: parley's RESP
// reader (rooms/cluster/resp_protocol: a scan, then views into the buffer) against hiredis's
// reader (a reply tree of an array and three strings per message, freed after), which the
// daemon used before. Each iteration reads a batch of 64 messages of a typical say's size, as
// one read from the socket may hold them.

#include "rooms/cluster/resp_protocol.hpp"

#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <string>
#include <string_view>

namespace {

constexpr int batch = 64;

std::string batch_bytes() {
    const std::string payload =
        "M\nnode-1\nlobby\nann\n1234\n1733390000000\n\n"
        R"({"type":"message","room":"lobby","from":"ann","text":"a line of chat of about sixty-four bytes, as in the load tests","ts":1733390000000,"seq":1234})";
    std::string one = "*3\r\n$7\r\nmessage\r\n$13\r\nparley:events\r\n$" + std::to_string(payload.size()) + "\r\n" +
                      payload + "\r\n";
    std::string out;
    for (int i = 0; i < batch; ++i) {
        out += one;
    }
    return out;
}

void BM_ParleyReader(benchmark::State& state) {
    const std::string bytes = batch_bytes();
    parley::cluster::resp::reply_scanner scanner;
    std::size_t payload_bytes = 0;
    for (auto _ : state) {
        std::string_view unread = bytes;
        std::size_t length = 0;
        while (scanner.scan(unread, length) == parley::cluster::resp::reply_scanner::status::complete) {
            parley::cluster::resp::pubsub_message m;
            if (parley::cluster::resp::as_message(unread.substr(0, length), m)) {
                payload_bytes += m.payload.size();
            }
            unread.remove_prefix(length);
        }
    }
    benchmark::DoNotOptimize(payload_bytes);
    state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_ParleyReader);

void BM_HiredisReader(benchmark::State& state) {
    const std::string bytes = batch_bytes();
    redisReader* reader = redisReaderCreate();
    std::size_t payload_bytes = 0;
    for (auto _ : state) {
        redisReaderFeed(reader, bytes.data(), bytes.size());
        void* reply = nullptr;
        while (redisReaderGetReply(reader, &reply) == REDIS_OK && reply != nullptr) {
            const auto* r = static_cast<const redisReply*>(reply);
            if (r->type == REDIS_REPLY_ARRAY && r->elements == 3) {
                payload_bytes += r->element[2]->len;
            }
            freeReplyObject(reply);
        }
    }
    redisReaderFree(reader);
    benchmark::DoNotOptimize(payload_bytes);
    state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_HiredisReader);

}  // namespace
