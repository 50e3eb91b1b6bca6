#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace parley::protocol {

// Cross-site WebSocket hijacking protection: may a handshake with this Origin header proceed?
//
// - No Origin header (origin empty): yes. Browsers always send one; other clients (bots,
//   load tools, native apps) need not, and they cannot be tricked into carrying a user's
//   cookies from another site.
// - allowed empty (the default): only the same host: the Origin's host[:port] must equal the
//   Host header (case-insensitive; default ports 80/443 may be written or left out).
// - otherwise: the Origin must equal one entry exactly (scheme://host[:port], case-insensitive),
//   or an entry is "*" (any origin).
bool origin_allowed(std::string_view origin, std::string_view host, const std::vector<std::string>& allowed);

}  // namespace parley::protocol
