#pragma once

#include "config/loader.hpp"
#include "config/options.hpp"
#include "config/settings.hpp"

#include <toml++/toml.h>

#include <optional>
#include <string_view>
#include <vector>

// Internal to config/: reading the [[webhooks]] tables of a file, for the loader (loader.cpp).
namespace parley::config {

// The value of the root key `webhooks` (option `o`, whose key is at `line`): an array of tables,
// one per receiver. Every problem is added to `errors` with `file`, its line and a key naming the
// table and its key, counted from 1 ("webhooks[2].url"); the rules are option_checks.hpp's. Returns
// the endpoints when there was none, else nullopt.
std::optional<std::vector<webhook_endpoint>> read_webhook_tables(const option& o, const toml::node& node, int line,
                                                                  std::string_view file,
                                                                  std::vector<config_error>& errors);

}  // namespace parley::config
