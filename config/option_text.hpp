#pragma once

#include <string>

// Internal to config/: how the option table writes numbers, shared by the table's accessors
// (option::text) and the messages of option::set. The public text helpers (toml_quote, nearest)
// are declared in config/options.hpp and defined beside this in option_text.cpp.
namespace parley::config {

// `v` as a TOML number: an integral value without a fraction ("200"), else the shortest form
// that reads back exactly ("0.001"); "nan", "inf", "-inf" for those.
std::string number_text(double v);

}  // namespace parley::config
