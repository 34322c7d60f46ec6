// Staged outputs of the CLI (commands.h): written beside their final name and
// renamed into place when complete; devices and pipes are written in place.
#include <filesystem>
#include <string>
#include <system_error>

#include "platform/cli/commands.h"

namespace tpb::cli {

bool output_is_staged(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  return ec || !std::filesystem::exists(st) || std::filesystem::is_regular_file(st);
}

std::string output_target(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  // Follow a chain of links (the target may not exist yet: a dangling link
  // names the file to create); a loop is left to the open to report.
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec)) || ec) return p.string();
    const fs::path t = fs::read_symlink(p, ec);
    if (ec) return p.string();
    p = t.is_absolute() ? t : p.parent_path() / t;
  }
  return path;
}

std::string staged_output_path(const std::string& path) {
  return output_is_staged(path) ? output_target(path) + ".tpbsim-tmp" : path;
}

}  // namespace tpb::cli
