#pragma once

#include "protocol/request.hpp"

#include <string_view>

namespace parley::protocol::reference {

// The request parser as it was before the hand-written reader: nlohmann::json builds a DOM and
// the fields are read from it. Kept only as the oracle the differential test and the benchmark
// compare parse_request with; behaviour must stay identical, so do not "fix" it.
parse_result_request parse_request_reference(std::string_view text);

}  // namespace parley::protocol::reference
