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

std::string staged_output_path(const std::string& path) {
  return output_is_staged(path) ? path + ".tpbsim-tmp" : path;
}

}  // namespace tpb::cli
