#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace parley::soak {

// One scrape of GET /metrics: each sample's value by its series as written in the exposition,
// "parley_connections" or "parley_errors_total{code=\"rate_limited\"}".
class metrics_snapshot {
public:
    // Parses the Prometheus text format (comment lines skipped).
    static metrics_snapshot parse(std::string_view text);

    // The sample's value; 0 when the series is absent.
    double get(std::string_view series) const;
    // get() for a series with one label: get_labelled("parley_errors_total", "code", "bad_json").
    double get(std::string_view name, std::string_view label, std::string_view value) const;
    bool empty() const { return values_.empty(); }

private:
    std::map<std::string, double, std::less<>> values_;
};

// Scrapes the daemon on 127.0.0.1:port over a fresh connection; nullopt when the answer is not
// a 200 with a body.
std::optional<metrics_snapshot> scrape_metrics(std::uint16_t port);

}  // namespace parley::soak
