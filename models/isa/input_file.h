// Checks an input path before it is opened, so a directory or a missing file
// is an error naming the path and what is wrong instead of a stream failure
// deep inside a reader ("basic_filebuf::underflow"). Pure C++.
#pragma once

#include <string>

namespace tpb::isa {

// "" when `path` names a readable regular file (or a character device such
// as /dev/stdin), else what is wrong: "is a directory", "cannot open: no such file", ...
std::string input_file_problem(const std::string& path);

}  // namespace tpb::isa
