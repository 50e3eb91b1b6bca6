#include "protocol/stored_event.hpp"

#include "protocol/frame_encoder.hpp"

#include <nlohmann/json.hpp>

namespace parley::protocol {

std::optional<stored_event> read_stored_event(const shared_frame& frame) {
    const nlohmann::json payload = nlohmann::json::parse(frame_payload(frame.view()), nullptr, false);
    if (payload.is_discarded() || !payload.is_object()) {
        return std::nullopt;
    }
    stored_event out;
    out.type = payload.value("type", "");
    out.from = payload.value("from", "");
    out.by = payload.value("by", "");
    if (auto text = payload.find("text"); text != payload.end() && text->is_string()) {
        out.text = text->get<std::string>();
    }
    out.ts = payload.value("ts", std::int64_t{0});
    out.target = payload.value("target", std::int64_t{0});
    out.deleted = payload.value("deleted", false);
    out.action = payload.value("action", "");
    out.user = payload.value("user", "");
    out.reason = payload.value("reason", "");
    out.role = payload.value("role", "");
    if (auto topic = payload.find("topic"); topic != payload.end() && topic->is_string()) {
        out.topic = topic->get<std::string>();
    }
    if (auto until = payload.find("until"); until != payload.end() && until->is_number_integer()) {
        out.until_ms = until->get<std::int64_t>();
    }
    if (auto interval = payload.find("interval_s"); interval != payload.end() && interval->is_number_integer()) {
        out.interval_s = interval->get<std::int64_t>();
    }
    return out;
}

}  // namespace parley::protocol
