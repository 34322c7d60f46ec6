#include "models/isa/input_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
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

std::string read_input_file(const std::string& path, std::size_t max_bytes, const char* what,
                            std::string& out) {
  if (std::string why = input_file_problem(path); !why.empty()) return why;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string("cannot open: ") + std::strerror(errno);
  out.clear();
  char buf[65536];
  while (in) {
    in.read(buf, sizeof buf);
    const auto n = static_cast<std::size_t>(in.gcount());
    if (out.size() + n > max_bytes)
      return "is larger than " + std::to_string(max_bytes) + " bytes, the most " + what +
             " may hold";
    out.append(buf, n);
  }
  if (in.bad()) return std::string("read error: ") + std::strerror(errno);
  return "";
}

}  // namespace tpb::isa
