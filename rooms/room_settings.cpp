#include "rooms/room_settings.hpp"

#include <charconv>

namespace parley::rooms {

namespace {

constexpr std::string_view kind_role = "role";
constexpr std::string_view kind_ban = "ban";
constexpr std::string_view kind_mute = "mute";
constexpr std::string_view kind_topic = "topic";
constexpr std::string_view kind_slow_mode = "slow_mode";

std::optional<std::int64_t> read_integer(std::string_view text) {
    std::int64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

std::optional<sanction> read_sanction(std::string_view value) {
    const std::size_t first = value.find('\n');
    if (first == std::string_view::npos) {
        return std::nullopt;
    }
    const std::size_t second = value.find('\n', first + 1);
    if (second == std::string_view::npos) {
        return std::nullopt;
    }
    std::optional<std::int64_t> until = read_integer(value.substr(0, first));
    if (!until) {
        return std::nullopt;
    }
    return sanction{std::string(value.substr(first + 1, second - first - 1)), std::string(value.substr(second + 1)),
                    *until};
}

}  // namespace

room_setting role_setting(std::string_view user, room_role role) {
    return {std::string(kind_role), std::string(user),
            role == room_role::member ? std::string() : std::string(role_name(role))};
}

room_setting sanction_setting(bool ban, std::string_view user, const sanction* s) {
    room_setting row{std::string(ban ? kind_ban : kind_mute), std::string(user), std::string()};
    if (s != nullptr) {
        row.value = std::to_string(s->until_ms);
        row.value.append(1, '\n').append(s->by).append(1, '\n').append(s->reason);
    }
    return row;
}

room_setting topic_setting(std::string_view topic) {
    return {std::string(kind_topic), std::string(), std::string(topic)};
}

room_setting slow_mode_setting(std::int64_t interval_s) {
    return {std::string(kind_slow_mode), std::string(), interval_s > 0 ? std::to_string(interval_s) : std::string()};
}

loaded_settings load_settings(const std::vector<room_setting>& rows) {
    loaded_settings out;
    for (const room_setting& row : rows) {
        if (row.kind == kind_role) {
            if (std::optional<room_role> role = parse_role(row.value)) {
                out.moderation.set_role(row.subject, *role);
            }
        } else if (row.kind == kind_ban || row.kind == kind_mute) {
            if (std::optional<sanction> s = read_sanction(row.value)) {
                if (row.kind == kind_ban) {
                    out.moderation.ban(row.subject, std::move(*s));
                } else {
                    out.moderation.mute(row.subject, std::move(*s));
                }
            }
        } else if (row.kind == kind_topic) {
            out.topic = row.value;
        } else if (row.kind == kind_slow_mode) {
            if (std::optional<std::int64_t> interval = read_integer(row.value); interval && *interval > 0) {
                out.moderation.set_slow_mode(*interval);
            }
        }
    }
    return out;
}

}  // namespace parley::rooms
