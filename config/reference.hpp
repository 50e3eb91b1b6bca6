#pragma once

#include <string>

namespace parley::config {

// The option table as Markdown for docs/operations.md: per section a heading and a table of
// key, default, unit, reload (yes/no) and description (with the allowed range and the
// command-line flag). The document embeds it between `<!-- options:begin -->` and
// `<!-- options:end -->`; a unit test fails when the two differ. Ends with a newline.
std::string reference_markdown();

}  // namespace parley::config
