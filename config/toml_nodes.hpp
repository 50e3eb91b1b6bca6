#pragma once

#include "config/options.hpp"

#include <toml++/toml.h>

#include <sstream>
#include <string>

// Internal to config/: what the readers of a parsed file (loader.cpp, webhook_tables.cpp) say
// about its nodes in their errors. Pure functions, any thread.
namespace parley::config {

// The 1-based line of `key`, or of its value when the key has no place of its own.
inline int line_of(const toml::key& key, const toml::node& node) {
    auto line = key.source().begin.line;
    return static_cast<int>(line != 0 ? line : node.source().begin.line);
}

// The 1-based line where `node` begins (a [[table]] header for an entry of an array of tables),
// or `fallback` when the node has no place of its own (an entry of an inline array).
inline int line_or(const toml::node& node, int fallback) {
    auto line = node.source().begin.line;
    return line != 0 ? static_cast<int>(line) : fallback;
}

// Whether describe() shows the value: not for a key that holds a secret, whatever its type.
enum class value_shown { yes, no };

// What the file holds, in words: "a string (\"100\")", "a number with a fraction (1.5)"; with
// value_shown::no only "a string", "a number with a fraction".
inline std::string describe(const toml::node& node, value_shown show = value_shown::yes) {
    const auto with = [show](std::string kind, const std::string& value) {
        return show == value_shown::yes ? kind + " (" + value + ")" : kind;
    };
    std::ostringstream shown;
    switch (node.type()) {
    case toml::node_type::string:
        return with("a string", toml_quote(node.as_string()->get()));
    case toml::node_type::integer:
        return with("a whole number", std::to_string(node.as_integer()->get()));
    case toml::node_type::floating_point:
        shown << node.as_floating_point()->get();
        return with("a number with a fraction", shown.str());
    case toml::node_type::boolean:
        return with("a boolean", node.as_boolean()->get() ? "true" : "false");
    case toml::node_type::date:
        return "a date";
    case toml::node_type::time:
        return "a time";
    case toml::node_type::date_time:
        return "a date and time";
    case toml::node_type::array:
        return "a list";
    case toml::node_type::table:
        return "a table";
    case toml::node_type::none:
        break;
    }
    return "nothing";
}

}  // namespace parley::config
