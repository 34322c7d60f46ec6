// Text from a user's file or command line, made safe to print in a
// diagnostic: control characters and terminal escapes shown as \n, \t, \e,
// \xHH (never sent raw to a terminal or splitting a message into lines), and
// a long text cut, keeping its start and saying how long it was. Pure C++.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tpb::io {

// `s` with every byte below 0x20 and 0x7f escaped (and a backslash kept as
// it is), cut to about `max_bytes` with "... (N bytes)" appended when longer.
std::string printable(std::string_view s, std::size_t max_bytes = 200);

// Whether `s` holds a byte that printable() would escape.
bool has_control_chars(std::string_view s);

}  // namespace tpb::io
