// Fuzz target: the cluster's RESP2 reader (rooms/cluster/resp_protocol) on arbitrary bytes from
// a Redis server, which the daemon trusts no more than any peer.
//
// The bytes are scanned in one piece and in pseudo-random pieces (seeded from the input), as a
// connection reads them. Checked:
// - every reply the scanner calls complete is read without fault, and a pub/sub message's views
//   lie inside that reply's bytes;
// - the pieces matter only where a header is cut: the replies found before either scan stops
//   at malformed bytes are the same (a header split across reads may be judged malformed a
//   little earlier, never later: one scan's replies are a prefix of the other's);
// - a scan that reports malformed reports it again on the same bytes (the connection is dropped
//   then; nothing after it is read).

#include "rooms/cluster/resp_protocol.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace parley::fuzz {
namespace {

using cluster::resp::reply_scanner;

struct scanned {
    std::vector<std::string> replies;
    bool malformed = false;
};

void check_reply(std::string_view bytes) {
    const cluster::redis_reply reply = cluster::resp::parse_reply(bytes);
    (void)reply.describe();
    cluster::resp::pubsub_message message;
    if (cluster::resp::as_message(bytes, message)) {
        for (std::string_view part : {message.channel, message.payload}) {
            require(part.data() >= bytes.data() && part.data() + part.size() <= bytes.data() + bytes.size(),
                    "a message's view lies outside its reply");
        }
    }
}

scanned scan_in(std::string_view input, const std::vector<std::size_t>& pieces) {
    scanned out;
    reply_scanner scanner;
    std::string unread;
    std::size_t at = 0;
    for (std::size_t piece : pieces) {
        unread.append(input.substr(at, piece));
        at += piece;
        while (true) {
            std::size_t length = 0;
            const auto status = scanner.scan(unread, length);
            if (status == reply_scanner::status::malformed) {
                reply_scanner again;
                std::size_t ignored = 0;
                require(again.scan(unread, ignored) == reply_scanner::status::malformed,
                        "malformed bytes were not malformed on a second look");
                out.malformed = true;
                return out;
            }
            if (status == reply_scanner::status::incomplete) {
                break;
            }
            require(length > 0 && length <= unread.size(), "a complete reply's length is out of range");
            check_reply(std::string_view(unread).substr(0, length));
            out.replies.push_back(unread.substr(0, length));
            unread.erase(0, length);
        }
    }
    return out;
}

bool is_prefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace
}  // namespace parley::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace parley::fuzz;
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const scanned whole = scan_in(input, {size});
    split_rng rng(hash_bytes(input));
    const scanned pieces = scan_in(input, random_splits(size, rng));
    if (!whole.malformed && !pieces.malformed) {
        require(whole.replies == pieces.replies, "the pieces changed the replies found");
    } else {
        require(is_prefix(whole.replies, pieces.replies) || is_prefix(pieces.replies, whole.replies),
                "the pieces changed the replies found before malformed bytes");
    }
    return 0;
}
