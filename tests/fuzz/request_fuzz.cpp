// Fuzz target: protocol::parse_request, the single-pass JSON request reader.
//
// The input is the text of one WebSocket message. Checked on every input:
// - parse_request agrees field for field with the nlohmann::json parser it replaced (the oracle
//   kept in tests/unit/protocol/request_reference.*);
// - parsing into a result reused from an earlier request (as each worker does) gives the same as
//   parsing into a fresh one, whatever the earlier request left behind;
// - what it returns keeps the header's promises: a request carries the fields its type requires
//   (history never both before and after), counts are non-negative, every string is valid UTF-8,
//   and the id is empty or JSON text for a string of at most 64 bytes or an integer of at most 18
//   digits;
// - what the server would send back from it is valid JSON and says the same: the error with its
//   "re", the ack echoing the id, and the message and welcome carrying text, room and user.
// Not covered here: the chat rules applied afterwards (name syntax, lengths, membership), which
// the connection target reaches.

#include "protocol/frame_encoder.hpp"
#include "protocol/request.hpp"
#include "protocol/server_messages.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/unit/protocol/request_reference.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace parley::fuzz {
namespace {

using json = nlohmann::json;
using protocol::parse_result_request;
using protocol::request;
using protocol::request_type;

bool same_request(const request& a, const request& b) {
    return a.type == b.type && a.id == b.id && a.user == b.user && a.token == b.token && a.room == b.room &&
           a.to == b.to && a.text == b.text && a.after == b.after && a.before == b.before && a.epoch == b.epoch &&
           a.limit == b.limit;
}

bool same_result(const parse_result_request& a, const parse_result_request& b) {
    if (a.value.has_value() != b.value.has_value() || (a.value && !same_request(*a.value, *b.value))) {
        return false;
    }
    return a.error == b.error && a.message == b.message && a.id == b.id;
}

// The payload of a server frame as JSON; fails when it is not a JSON object.
json payload_json(const protocol::shared_frame& frame, std::string_view what) {
    json payload = json::parse(protocol::frame_payload(frame.view()), nullptr, false);
    require(!payload.is_discarded() && payload.is_object(), what, "the server frame is not a JSON object");
    return payload;
}

void check_id(std::string_view id) {
    if (id.empty()) {
        return;
    }
    const json value = json::parse(id, nullptr, false);
    require(!value.is_discarded(), "the id echo is not JSON text", id);
    if (value.is_string()) {
        require(value.get_ref<const std::string&>().size() <= 64, "string id over 64 bytes", id);
        return;
    }
    constexpr std::int64_t max_id = 999'999'999'999'999'999;
    require(value.is_number_integer(), "id is neither a string nor an integer", id);
    if (value.is_number_unsigned()) {
        require(value.get<std::uint64_t>() <= static_cast<std::uint64_t>(max_id), "id over 18 digits", id);
    } else {
        const auto v = value.get<std::int64_t>();
        require(v >= -max_id && v <= max_id, "id over 18 digits", id);
    }
}

// "re" in a reply built with id must be the id's JSON value; no "re" without an id.
void check_echo(const json& reply, std::string_view id) {
    if (id.empty()) {
        require(!reply.contains("re"), "a reply without an id carries re");
        return;
    }
    require(reply.contains("re") && reply["re"] == json::parse(id), "re is not the id", id);
}

void check_failure(const parse_result_request& r) {
    require(!r.message.empty(), "an error without a message");
    require(is_utf8(r.message), "error message is not valid UTF-8", r.message);
    check_id(r.id);
    const json reply = payload_json(protocol::encode_error(r.error, r.message, r.id), "error reply");
    require(reply.value("message", "") == r.message, "the error reply changed the message");
    check_echo(reply, r.id);
}

bool is_count(const std::optional<std::int64_t>& value) { return !value || *value >= 0; }

void check_request(const request& q) {
    check_id(q.id);
    for (const std::string* s : {&q.user, &q.token, &q.room, &q.to, &q.with, &q.text, &q.reason, &q.role,
                                 &q.after_name}) {
        require(is_utf8(*s), "a request field is not valid UTF-8", *s);
    }
    for (const auto* count : {&q.after, &q.before, &q.epoch, &q.limit, &q.seq, &q.duration_s, &q.interval_s}) {
        require(is_count(*count), "a negative count was accepted");
    }
    const bool pages = q.type == request_type::history || q.type == request_type::dm_history;
    const bool about_user = q.type == request_type::kick || q.type == request_type::ban ||
                            q.type == request_type::unban || q.type == request_type::mute ||
                            q.type == request_type::unmute || q.type == request_type::set_role;
    const bool changes_message = q.type == request_type::edit || q.type == request_type::delete_message;
    const bool has_room = q.type == request_type::join || q.type == request_type::leave ||
                          q.type == request_type::say || q.type == request_type::history ||
                          q.type == request_type::typing || q.type == request_type::read || about_user ||
                          changes_message || q.type == request_type::set_topic ||
                          q.type == request_type::set_slow_mode || q.type == request_type::members;
    require(has_room || q.room.empty(), "room set on a request without one");
    require(q.type == request_type::login || about_user || q.user.empty(), "user set outside login and moderation");
    require(q.type == request_type::login || q.token.empty(), "token set outside login");
    require(q.type == request_type::kick || q.type == request_type::ban || q.type == request_type::mute ||
                q.reason.empty(),
            "reason set outside kick, ban and mute");
    require(q.type == request_type::ban || q.type == request_type::mute || !q.duration_s,
            "duration_s set outside ban and mute");
    require(q.type == request_type::set_role || q.role.empty(), "role set outside set_role");
    require((q.type == request_type::set_slow_mode) == q.interval_s.has_value(),
            "interval_s set outside set_slow_mode, or missing there");
    require(q.type == request_type::dm || q.to.empty(), "to set outside dm");
    require(q.type == request_type::dm_history || q.type == request_type::read || q.with.empty(),
            "with set outside dm_history and read");
    require(q.type == request_type::read || changes_message || !q.seq, "seq set outside read, edit and delete");
    require(!changes_message || q.seq, "edit or delete without seq");
    require(q.type != request_type::read || (q.seq && q.room.empty() != q.with.empty()),
            "read without seq, or without exactly one of room and with");
    require(q.type == request_type::say || q.type == request_type::dm || q.type == request_type::edit ||
                q.type == request_type::set_topic || q.text.empty(),
            "text set outside say, dm, edit and set_topic");
    require(pages || !q.before, "before set outside history and dm_history");
    require(pages || q.type == request_type::members || !q.limit, "limit set outside the histories and members");
    require(q.type == request_type::members || q.after_name.empty(), "a name for after set outside members");
    require(pages || q.type == request_type::join || !q.after, "after set outside join and the histories");
    require(q.type == request_type::join || !q.epoch, "epoch set outside join");
    require(!(q.before && q.after), "history with both before and after");

    // The replies that carry what the client sent back to it (or to others).
    if (!q.id.empty()) {
        check_echo(payload_json(protocol::encode_ack(q.id, q.room, 7), "ack"), q.id);
    }
    const json welcome = payload_json(protocol::encode_welcome(q.user, q.id), "welcome");
    require(welcome.value("user", "") == q.user, "welcome changed the user");
    check_echo(welcome, q.id);
    const json message = payload_json(protocol::encode_message(q.room, q.to, q.text, 1, 2), "message");
    require(message.value("room", "") == q.room && message.value("text", "") == q.text &&
                message.value("from", "") == q.to,
            "message changed room, text or from");
}

// Earlier requests a worker's reused result may hold: every optional field set, or a failure.
constexpr std::string_view earlier_requests[] = {
    R"({"type":"history","id":"h1","room":"lobby","before":9,"limit":3})",
    R"({"type":"join","id":12,"room":"r","after":4,"epoch":5})",
    R"({"type":"login","id":"x","user":"ann","token":"t"})",
    R"({"type":"dm","to":"bob","text":"hello"})",
    R"({"type":"say","id":"s","room":"lobby"})",
    R"([1,2])",
};

}  // namespace
}  // namespace parley::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace parley::fuzz;
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    const parse_result_request fresh = parley::protocol::parse_request(text);
    const parse_result_request expected = parley::protocol::reference::parse_request_reference(text);
    require(same_result(fresh, expected), "parse_request disagrees with the nlohmann reference");

    for (std::string_view earlier : earlier_requests) {
        parse_result_request reused = parley::protocol::parse_request(earlier);
        parley::protocol::parse_request(text, reused);
        require(same_result(reused, fresh), "a reused result differs from a fresh one", earlier);
    }

    if (fresh.value) {
        check_request(*fresh.value);
    } else {
        check_failure(fresh);
    }
    return 0;
}
