#pragma once

#include "config/settings.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace parley::config {

// What kind of value an option holds; fixed by the type of its settings field.
enum class value_type {
    boolean,      // bool
    whole,        // unsigned integer field, bounded by min..max
    number,       // double, bounded by min..max
    string,       // free text, or one of `allowed`, and `check` when set
    choice,       // an enumeration (auth_mode, ...): one of `allowed`, its words, read as a string
    string_list,  // each entry passes `check` when set
    room_list,    // the [[rooms.permanent]] tables {name, topic, private, members}
    webhook_list, // the root-level [[webhooks]] tables {url, events, secret, timeout_ms, ...}
};

// A value as read from the file or the command line, already of the option's value_type (a
// whole number as int64: a negative one is out of range, not of the wrong type), not yet checked
// against the option's bounds.
using option_value = std::variant<bool, std::int64_t, double, std::string, std::vector<std::string>,
                                  std::vector<permanent_room>, std::vector<webhook_endpoint>>;

// One tunable: where it lives in the TOML file, its command-line flag, its rules and its words.
// The table (options()) is the single description of the configuration: the loader, --help, the
// sample-file test, the reference in docs/operations.md and reload planning all read it.
struct option {
    std::string_view section{};    // "limits"
    std::string_view key{};        // "max_connections"; empty for a root-level array of tables
                                   // ([[webhooks]]), whose section is its whole name
    value_type type = value_type::string;
    std::string_view unit{};       // "bytes", "milliseconds", ...; empty when the value has none
    std::string_view help{};       // one or two sentences for an admin; the first is the summary
    bool reloadable = false;       // a reload (SIGHUP) applies a change; else it needs a restart
    std::string_view flag{};       // "--port"; empty: set only by the file or --set
    std::string_view value_name{};  // what --help shows after the flag: "N", "BYTES", "ADDR"
    double min = 0;                // whole, number: the bounds, inclusive
    double max = 0;
    std::span<const std::string_view> allowed{};  // string: the only values accepted; empty: any.
                                                  // choice: filled in by the table (choice_words)
    std::string (*check)(std::string_view) = nullptr;  // string, list entry: what is wrong, or ""
    bool secret = false;           // never written to a log (reloads say only that it changed)
    bool one_or_list = false;      // string_list: the file may give one string for a list of one

    // Accessors of the settings field, filled in by the table.
    std::string (*text_of)(const settings&) = nullptr;
    void (*store)(settings&, const option_value&) = nullptr;
    void (*copy)(settings& to, const settings& from) = nullptr;
    // Whether the field holds the same value in both. text() cannot tell for every option: it
    // writes each webhook's secret as "(secret)".
    bool (*same)(const settings& a, const settings& b) = nullptr;

    // "limits.max_connections"; "webhooks" for a root-level array of tables.
    std::string name() const;
    // The field's value in `s` as a TOML literal: `1000000`, `"0.0.0.0"`, `["*"]`, `true`. A
    // webhook's secret is written as "(secret)", so the text may go to a log.
    std::string text(const settings& s) const { return text_of(s); }
    // Checks `v` (type, bounds, allowed values, check) and stores it into `s`; returns "" or what
    // is wrong ("must be from 1 to 256, got 0"), leaving `s` unchanged.
    std::string set(settings& s, const option_value& v) const;
    // The same from command-line text ("9000", "true", "a,b" for a list); returns "" or what is
    // wrong ("expects a whole number, got 'x'").
    std::string set_from_string(settings& s, std::string_view text) const;
    // "a whole number", "a list of strings", ...: what the option expects, for messages.
    std::string_view expects() const;
    // The bounds or allowed values in words ("from 1 to 256", "one of text, json"); "" when none.
    std::string rule() const;
};

// Every option, grouped by section in the order of sections().
std::span<const option> options();
// The sections of the file, in order: server, tls, limits, rooms, history, auth, admin, log, metrics,
// cluster, and last webhooks (root-level [[webhooks]] tables rather than a [webhooks] section).
std::span<const std::string_view> sections();

// Lookups; nullptr when there is none.
const option* find_option(std::string_view section, std::string_view key);
// A name without a dot finds only a root-level array of tables ("webhooks").
const option* find_option(std::string_view dotted_name);
const option* find_flag(std::string_view flag);

// The candidate nearest to `wrong` by edit distance when it is close enough to be a likely typo;
// "" otherwise.
std::string nearest(std::string_view wrong, std::span<const std::string> candidates);

// What is wrong with a permanent room name ("" when valid): protocol::valid_room_name's rule.
std::string room_name_problem(std::string_view name);

// `text` as a TOML basic string, quoted and escaped.
std::string toml_quote(std::string_view text);

}  // namespace parley::config
