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
        // A root-level array of tables is written [[webhooks]], not [webhooks].
        const std::string name(section);
        md += "### " + (find_option(section, "") != nullptr ? "[[" + name + "]]" : "[" + name + "]") + "\n\n";
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
            // Arrays of tables: [[rooms.permanent]], [[webhooks]]; none of them by default.
            const bool tables = o.type == value_type::room_list || o.type == value_type::webhook_list;
            std::string key = tables ? "`[[" + o.name() + "]]`" : "`" + std::string(o.key) + "`";
            std::string value = tables && o.text(defaults) == "[]" ? std::string("none")
                                                                    : "`" + cell(o.text(defaults)) + "`";
            md += "| " + key + " | " + value + " | " + std::string(o.unit) + " | " + (o.reloadable ? "yes" : "no") +
                  " | " + cell(description) + " |\n";
        }
    }
    return md;
}

}  // namespace parley::config
