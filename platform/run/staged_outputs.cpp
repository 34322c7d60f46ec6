#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "platform/run/staged_outputs.h"

namespace tpb::run {

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

std::string StagedOutputs::check(
    const std::vector<std::pair<std::string, std::string>>& inputs) const {
  namespace fs = std::filesystem;
  auto same = [](const std::string& a, const std::string& b) {
    std::error_code e1, e2;
    const fs::path pa = fs::weakly_canonical(a, e1), pb = fs::weakly_canonical(b, e2);
    return e1 || e2 ? a == b : pa == pb;
  };
  std::vector<std::string> bad;
  for (std::size_t i = 0; i < outs_.size(); ++i) {
    const auto& [opt, path] = outs_[i];
    for (const auto& [iopt, ipath] : inputs)
      if (same(path, ipath))
        bad.push_back(fmt::format("{} {} names the input of {}", opt, path, iopt));
    for (std::size_t j = 0; j < i; ++j)
      if (same(path, outs_[j].second))
        bad.push_back(fmt::format("{} {} names the output of {} too", opt, path, outs_[j].first));
  }
  if (bad.empty())
    for (const auto& [opt, path] : outs_) {
      std::error_code ec;
      if (fs::is_directory(path, ec)) {
        bad.push_back(fmt::format("{} {} is a directory", opt, path));
        continue;
      }
      const bool ok = std::ofstream(temp(path), std::ios::app).good();
      if (staged(path)) fs::remove(temp(path), ec);
      if (!ok)
        bad.push_back(fmt::format("{} {}: cannot create ({})", opt, path, std::strerror(errno)));
    }
  if (bad.empty()) return "";
  std::string msg = "refused before running, nothing written:";
  for (const auto& b : bad) msg += "\n  " + b;
  return msg;
}

void StagedOutputs::commit(const std::string& path) {
  if (!staged(path)) return;
  if (std::rename(temp(path).c_str(), output_target(path).c_str()) != 0) {
    const int err = errno;
    std::remove(temp(path).c_str());
    throw std::runtime_error(
        fmt::format("{}: not written (rename failed: {})", path, std::strerror(err)));
  }
}

void StagedOutputs::discard(const std::string& path) {
  if (staged(path)) std::remove(temp(path).c_str());
}

}  // namespace tpb::run
