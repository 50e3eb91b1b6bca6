#include "metrics_scrape.hpp"

#include "http_response.hpp"
#include "ws_client.hpp"

#include <cstdlib>
#include <exception>

namespace parley::soak {

metrics_snapshot metrics_snapshot::parse(std::string_view text) {
    metrics_snapshot snapshot;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        if (line.empty() || line.front() == '#') {
            continue;
        }
        // The value follows the last space; label values in parley's metrics hold no spaces.
        const std::size_t space = line.rfind(' ');
        if (space == std::string_view::npos) {
            continue;
        }
        const std::string value(line.substr(space + 1));
        snapshot.values_[std::string(line.substr(0, space))] = std::strtod(value.c_str(), nullptr);
    }
    return snapshot;
}

double metrics_snapshot::get(std::string_view series) const {
    auto it = values_.find(series);
    return it == values_.end() ? 0.0 : it->second;
}

double metrics_snapshot::get(std::string_view name, std::string_view label, std::string_view value) const {
    std::string series(name);
    series.push_back('{');
    series.append(label);
    series.append("=\"");
    series.append(value);
    series.append("\"}");
    return get(series);
}

std::optional<metrics_snapshot> scrape_metrics(std::uint16_t port) {
    try {
        integration::ws_client client(port);
        const std::string raw =
            client.raw_http("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        const integration::http_response response = integration::parse_http_response(raw);
        if (response.status != 200 || response.body.empty()) {
            return std::nullopt;
        }
        return metrics_snapshot::parse(response.body);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace parley::soak
