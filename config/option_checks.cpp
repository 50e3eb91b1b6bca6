#include "config/option_checks.hpp"

#include "config/option_text.hpp"
#include "config/options.hpp"
#include "config/redis_url.hpp"
#include "protocol/names.hpp"
#include "protocol/webhook_events.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>

namespace parley::config {

std::string check_address(std::string_view text) {
    std::string s(text);
    unsigned char buffer[16];
    if (inet_pton(AF_INET, s.c_str(), buffer) == 1 || inet_pton(AF_INET6, s.c_str(), buffer) == 1) {
        return {};
    }
    return "must be an IPv4 or IPv6 address (0.0.0.0 or :: for every interface), got '" + s + "'";
}

std::string check_ws_path(std::string_view text) {
    if (text.empty() || text.front() != '/') {
        return "must start with '/', got '" + std::string(text) + "'";
    }
    if (text.find_first_of(" ?#\t\r\n") != std::string_view::npos) {
        return "must be a plain path without spaces, '?' or '#', got '" + std::string(text) + "'";
    }
    return {};
}

std::string check_origin(std::string_view text) {
    if (text == "*") {
        return {};
    }
    auto scheme_end = text.find("://");
    bool ok = scheme_end != std::string_view::npos && scheme_end > 0 && text.size() > scheme_end + 3 &&
              text.find('/', scheme_end + 3) == std::string_view::npos;
    if (!ok) {
        return "entries must be \"*\" or an origin such as \"https://chat.example.com\" (scheme://host[:port], "
               "no path), got '" +
               std::string(text) + "'";
    }
    return {};
}

std::string check_https_url(std::string_view text) {
    if (text.empty()) {
        return {};
    }
    constexpr std::string_view scheme = "https://";
    const bool ok = text.starts_with(scheme) && text.size() > scheme.size() &&
                    text.find_first_of("/?#", scheme.size()) != scheme.size() &&
                    text.find_first_of(" \t\r\n@") == std::string_view::npos;
    if (!ok) {
        return "must be empty or an https URL such as \"https://id.example.com/.well-known/jwks.json\", got '" +
               std::string(text) + "'";
    }
    return {};
}

std::string check_http_url(std::string_view text) {
    const std::string_view scheme = text.starts_with("https://") ? "https://"
                                    : text.starts_with("http://") ? "http://"
                                                                   : "";
    const std::string_view rest = text.substr(scheme.size());
    const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
    if (authority.find('@') != std::string_view::npos) {
        // Not echoed: the part before '@' is a password. Receivers check the signature instead.
        return "must not carry a user or password (user@host); the receiver checks the "
               "X-Parley-Signature header instead";
    }
    const bool ok = !scheme.empty() && !authority.empty() && authority.front() != ':' &&
                    text.find_first_of(" \t\r\n") == std::string_view::npos;
    if (!ok) {
        return "must be an http:// or https:// URL with a host, such as \"https://hooks.example.com/parley\", got '" +
               std::string(text) + "'";
    }
    return {};
}

std::string webhook_key_name(std::size_t index, std::string_view key) {
    std::string name = "webhooks[" + std::to_string(index + 1) + "]";
    return key.empty() ? name : name + "." + std::string(key);
}

std::string check_webhook_events(std::span<const std::string> events) {
    std::string words;
    std::vector<std::string> candidates;
    for (std::string_view word : protocol::webhook_event_names) {
        words += (words.empty() ? "" : ", ") + std::string(word);
        candidates.emplace_back(word);
    }
    const std::string choices = "the events are " + words + ", or \"" +
                                std::string(protocol::all_webhook_events) + "\" for all of them";
    if (events.empty()) {
        return "must list at least one event; " + choices;
    }
    for (const std::string& word : events) {
        if (word == protocol::all_webhook_events || protocol::webhook_event_of(word)) {
            continue;
        }
        std::string guess = nearest(word, candidates);
        return "unknown event '" + word + "'" + (guess.empty() ? "" : " (did you mean '" + guess + "'?)") + "; " +
               choices;
    }
    return {};
}

std::string check_webhook_secret(std::string_view secret) {
    if (secret.size() < webhook_secret_min_bytes) {
        return "must be at least " + std::to_string(webhook_secret_min_bytes) + " bytes (it is " +
               std::to_string(secret.size()) + "): a short HMAC key can be guessed from the signed requests";
    }
    return {};
}

std::string check_whole_range(std::int64_t n, std::int64_t min, std::int64_t max) {
    if (n < min || n > max) {
        return "must be from " + std::to_string(min) + " to " + std::to_string(max) + ", got " + std::to_string(n);
    }
    return {};
}

namespace {

// A size_t beyond int64 is out of every range either way.
std::int64_t clamped_to_int64(std::size_t n) {
    return static_cast<std::int64_t>(std::min<std::size_t>(n, std::numeric_limits<std::int64_t>::max()));
}

}  // namespace

std::vector<webhook_key_problem> webhook_problems(const webhook_endpoint& hook) {
    std::vector<webhook_key_problem> found;
    const std::pair<std::string_view, std::string> checks[] = {
        {"url", check_http_url(hook.url)},
        {"events", check_webhook_events(hook.events)},
        {"secret", check_webhook_secret(hook.secret)},
        {"timeout_ms", check_whole_range(hook.timeout_ms, webhook_timeout_ms_min, webhook_timeout_ms_max)},
        {"queue_events", check_whole_range(clamped_to_int64(hook.queue_events), webhook_queue_events_min,
                                           webhook_queue_events_max)},
    };
    for (const auto& [key, why] : checks) {
        if (!why.empty()) {
            found.push_back({key, why});
        }
    }
    return found;
}

std::string webhook_url_repeated(std::size_t earlier) {
    return "the same url as " + webhook_key_name(earlier, "") +
           "; give each receiver one table, listing every event it wants";
}

std::string webhooks_problem(std::span<const webhook_endpoint> hooks) {
    for (std::size_t i = 0; i < hooks.size(); ++i) {
        if (auto found = webhook_problems(hooks[i]); !found.empty()) {
            return webhook_key_name(i, found.front().key) + ": " + found.front().message;
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (hooks[j].url == hooks[i].url) {
                return webhook_key_name(i, "url") + ": " + webhook_url_repeated(j);
            }
        }
    }
    return {};
}

std::string check_user_name(std::string_view text) {
    if (!protocol::valid_user_name(text)) {
        return protocol::user_name_rule() + ", got '" + std::string(text) + "'";
    }
    return {};
}

std::string check_redis_url(std::string_view text) {
    std::string why;
    if (parse_redis_url(text, &why)) {
        return {};
    }
    return why;
}

std::string check_node_id(std::string_view text) {
    // Empty: the host name is used. Otherwise the room rule.
    if (!text.empty() && !protocol::valid_room_name(text)) {
        return protocol::name_rule("node ids", protocol::max_room_name) + ", got '" + std::string(text) + "'";
    }
    return {};
}

namespace {

std::string bound_text(const option& o, double v) {
    return o.type == value_type::whole ? std::to_string(static_cast<long long>(v)) : number_text(v);
}

std::string join(std::span<const std::string_view> words) {
    std::string text;
    for (std::size_t i = 0; i < words.size(); ++i) {
        text += (i == 0 ? "" : ", ") + std::string(words[i]);
    }
    return text;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
        text.remove_suffix(1);
    }
    return text;
}

// ---- what set() checks, per value type, before anything is stored ----

std::string type_error(const option& o) { return "expects " + std::string(o.expects()); }

std::string whole_problem(const option& o, const option_value& v) {
    if (!std::holds_alternative<std::int64_t>(v)) {
        return type_error(o);
    }
    auto n = std::get<std::int64_t>(v);
    // Bounds are below 2^53, so comparing as double is exact where it matters.
    if (static_cast<double>(n) < o.min || static_cast<double>(n) > o.max) {
        return "must be " + o.rule() + ", got " + std::to_string(n);
    }
    return {};
}

std::string number_problem(const option& o, const option_value& v) {
    if (!std::holds_alternative<double>(v)) {
        return type_error(o);
    }
    double d = std::get<double>(v);
    if (!(d >= o.min && d <= o.max)) {
        return "must be " + o.rule() + ", got " + number_text(d);
    }
    return {};
}

std::string string_problem(const option& o, const option_value& v) {
    if (!std::holds_alternative<std::string>(v)) {
        return type_error(o);
    }
    const auto& text = std::get<std::string>(v);
    if (!o.allowed.empty() && std::find(o.allowed.begin(), o.allowed.end(), text) == o.allowed.end()) {
        return "must be " + o.rule() + "; got '" + text + "'";
    }
    return o.check != nullptr ? o.check(text) : std::string();
}

std::string strings_problem(const option& o, const option_value& v) {
    if (!std::holds_alternative<std::vector<std::string>>(v)) {
        return type_error(o);
    }
    if (o.check != nullptr) {
        for (const auto& entry : std::get<std::vector<std::string>>(v)) {
            if (std::string why = o.check(entry); !why.empty()) {
                return why;
            }
        }
    }
    return {};
}

std::string rooms_problem(const option& o, const option_value& v) {
    if (!std::holds_alternative<std::vector<permanent_room>>(v)) {
        return type_error(o);
    }
    const auto& rooms = std::get<std::vector<permanent_room>>(v);
    for (std::size_t i = 0; i < rooms.size(); ++i) {
        if (std::string why = room_name_problem(rooms[i].name); !why.empty()) {
            return why;
        }
        for (const auto& [list, key] : {std::pair{&rooms[i].members, "members"}, std::pair{&rooms[i].owners, "owners"},
                                        std::pair{&rooms[i].moderators, "moderators"}}) {
            for (const std::string& member : *list) {
                if (std::string why = check_user_name(member); !why.empty()) {
                    return "room '" + rooms[i].name + "' " + key + ": " + why;
                }
            }
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (rooms[j].name == rooms[i].name) {
                return "room '" + rooms[i].name + "' is declared twice";
            }
        }
    }
    return {};
}

std::string webhook_list_problem(const option& o, const option_value& v) {
    if (!std::holds_alternative<std::vector<webhook_endpoint>>(v)) {
        return type_error(o);
    }
    return webhooks_problem(std::get<std::vector<webhook_endpoint>>(v));
}

std::string value_problem(const option& o, const option_value& v) {
    switch (o.type) {
    case value_type::boolean:
        return std::holds_alternative<bool>(v) ? std::string() : type_error(o);
    case value_type::whole:
        return whole_problem(o, v);
    case value_type::number:
        return number_problem(o, v);
    case value_type::string:
    case value_type::choice:
        return string_problem(o, v);
    case value_type::string_list:
        return strings_problem(o, v);
    case value_type::room_list:
        return rooms_problem(o, v);
    case value_type::webhook_list:
        return webhook_list_problem(o, v);
    }
    return type_error(o);
}

}  // namespace

std::string_view option::expects() const {
    switch (type) {
    case value_type::boolean:
        return "true or false";
    case value_type::whole:
        return "a whole number";
    case value_type::number:
        return "a number";
    case value_type::string:
    case value_type::choice:
        return "a string";
    case value_type::string_list:
        return "a list of strings";
    case value_type::room_list:
        return "[[rooms.permanent]] tables with a name, a topic, private, members, owners and moderators";
    case value_type::webhook_list:
        return "[[webhooks]] tables with a url, events and a secret, and optionally timeout_ms, queue_events "
               "and ca_file";
    }
    return "a value";
}

std::string option::rule() const {
    if (type == value_type::whole || type == value_type::number) {
        return "from " + bound_text(*this, min) + " to " + bound_text(*this, max);
    }
    if (!allowed.empty()) {
        return "one of " + join(allowed);
    }
    return {};
}

std::string option::set(settings& s, const option_value& v) const {
    if (std::string why = value_problem(*this, v); !why.empty()) {
        return why;
    }
    store(s, v);
    return {};
}

std::string option::set_from_string(settings& s, std::string_view text) const {
    const std::string quoted = "'" + std::string(text) + "'";
    switch (type) {
    case value_type::boolean:
        if (text == "true" || text == "yes" || text == "on" || text == "1") {
            return set(s, true);
        }
        if (text == "false" || text == "no" || text == "off" || text == "0") {
            return set(s, false);
        }
        return "expects true or false, got " + quoted;
    case value_type::whole: {
        std::int64_t n = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
        if (ec == std::errc::result_out_of_range) {
            return "must be " + rule() + ", got " + std::string(text);
        }
        if (ec != std::errc{} || end != text.data() + text.size()) {
            return "expects a whole number, got " + quoted;
        }
        return set(s, n);
    }
    case value_type::number: {
        double d = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
        if (ec == std::errc::result_out_of_range) {
            return "must be " + rule() + ", got " + std::string(text);
        }
        if (ec != std::errc{} || end != text.data() + text.size()) {
            return "expects a number, got " + quoted;
        }
        return set(s, d);
    }
    case value_type::string:
    case value_type::choice:
        return set(s, std::string(text));
    case value_type::string_list: {
        // Comma-separated on the command line: "https://a.example,https://b.example".
        std::vector<std::string> entries;
        if (!trim(text).empty()) {
            std::size_t start = 0;
            while (true) {
                auto comma = text.find(',', start);
                entries.emplace_back(trim(text.substr(start, comma - start)));
                if (comma == std::string_view::npos) {
                    break;
                }
                start = comma + 1;
            }
        }
        return set(s, entries);
    }
    case value_type::room_list:
        return "can only be set in the configuration file, as [[rooms.permanent]] tables";
    case value_type::webhook_list:
        return "can only be set in the configuration file, as [[webhooks]] tables";
    }
    return "cannot be set";
}

std::string room_name_problem(std::string_view name) {
    if (name.empty() || name.size() > protocol::max_room_name) {
        return "room name must be 1 to " + std::to_string(protocol::max_room_name) + " characters, got " +
               std::to_string(name.size()) + " ('" + std::string(name) + "')";
    }
    if (!protocol::valid_room_name(name)) {
        return "room name may contain only " + std::string(protocol::name_characters) + ", got '" +
               std::string(name) + "'";
    }
    return {};
}

}  // namespace parley::config
