#include "models/isa/input_file.h"

#include <filesystem>
#include <system_error>

namespace tpb::isa {

std::string input_file_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return "cannot open: no such file";
  if (fs::is_directory(st)) return "is a directory, not a file";
  if (!fs::is_regular_file(st) && !fs::is_character_file(st) && !fs::is_fifo(st))
    return "is not a regular file";
  return "";
}

}  // namespace tpb::isa
