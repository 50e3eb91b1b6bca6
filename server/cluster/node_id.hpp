#pragma once

#include <string>

namespace parley::cluster {

// This machine's host name made into a node id (1-64 characters of A-Z a-z 0-9 _ . -; any other
// character becomes '-'), for a node whose configuration names none. "node" when the host has
// no name.
std::string default_node_id();

}  // namespace parley::cluster
