#include "config/reference.hpp"

#include "config/options.hpp"

namespace parley::config {
namespace {

// A table cell: '|' would end the cell early.
std::string cell(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '|') {
            out += '\\';
        }
        out += c;
    }
    return out;
}

}  // namespace

std::string reference_markdown() {
    const settings defaults;
    std::string md;
    for (std::string_view section : sections()) {
        md += md.empty() ? "" : "\n";
        md += "### [" + std::string(section) + "]\n\n";
        md += "| key | default | unit | reload | description |\n";
        md += "|---|---|---|---|---|\n";
        for (const auto& o : options()) {
            if (o.section != section) {
                continue;
            }
            std::string description(o.help);
            if (std::string rule = o.rule(); !rule.empty()) {
                description += " Allowed: " + rule + ".";
            }
            if (!o.flag.empty()) {
                description += " Flag: `" + std::string(o.flag) + " " + std::string(o.value_name) + "`.";
            }
            std::string key = o.type == value_type::room_list ? "`[[rooms.permanent]]`" : "`" + std::string(o.key) + "`";
            std::string value = o.type == value_type::room_list && defaults.permanent_rooms.empty()
                                    ? std::string("none")
                                    : "`" + cell(o.text(defaults)) + "`";
            md += "| " + key + " | " + value + " | " + std::string(o.unit) + " | " + (o.reloadable ? "yes" : "no") +
                  " | " + cell(description) + " |\n";
        }
    }
    return md;
}

}  // namespace parley::config
