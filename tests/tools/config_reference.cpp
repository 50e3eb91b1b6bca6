// parley-config-reference: prints the option reference (Markdown) that docs/operations.md
// embeds between <!-- options:begin --> and <!-- options:end -->.

#include "config/reference.hpp"

#include <cstdio>

int main() {
    std::fputs(parley::config::reference_markdown().c_str(), stdout);
    return 0;
}
