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
    return out;
}

}  // namespace parley::protocol
