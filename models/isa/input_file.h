// Checks an input path before it is opened, so a directory or a missing file
// is an error naming the path and what is wrong instead of a stream failure
// deep inside a reader ("basic_filebuf::underflow"). Pure C++.
#pragma once

#include <cstddef>
#include <string>

namespace tpb::isa {

// "" when `path` names a readable regular file (or a character device such
// as /dev/stdin), else what is wrong: "is a directory", "cannot open: no such file", ...
std::string input_file_problem(const std::string& path);

// Reads the whole of `path` into `out`, at most `max_bytes`: an endless
// device or pipe (/dev/zero) is an error, not a hang that eats memory.
// Returns "" or what is wrong ("is larger than 67108864 bytes, the most a
// program may hold", "cannot open: ...").
std::string read_input_file(const std::string& path, std::size_t max_bytes, const char* what,
                            std::string& out);

}  // namespace tpb::isa
