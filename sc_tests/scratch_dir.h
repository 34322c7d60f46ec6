// Scratch directories for the tests and benchmarks: each fresh under /tmp,
// and removed with everything in it when the program that made it exits, so
// that runs do not pile up in /tmp (TPBSIM_KEEP_SCRATCH=1 keeps them, to
// look at after a failure).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace tpb::testutil {

class ScratchDirs {
 public:
  static ScratchDirs& instance() {
    static ScratchDirs dirs;
    return dirs;
  }
  // "/tmp/tpbsim-<prefix>-XXXXXX", made; throws if it cannot be.
  std::string make(const std::string& prefix) {
    std::string t = "/tmp/tpbsim-" + prefix + "-XXXXXX";
    if (!::mkdtemp(t.data()))
      throw std::runtime_error("cannot make a scratch directory " + t + ": " +
                               std::error_code(errno, std::generic_category()).message());
    std::lock_guard<std::mutex> l(m_);
    dirs_.push_back(t);
    return t;
  }
  ~ScratchDirs() {
    // Only the process that made them (a death test's child exits too).
    if (::getpid() != owner_) return;
    if (const char* k = std::getenv("TPBSIM_KEEP_SCRATCH"); k && *k && std::string(k) != "0")
      return;
    std::error_code ec;
    for (const std::string& d : dirs_) std::filesystem::remove_all(d, ec);
  }

 private:
  ScratchDirs() : owner_(::getpid()) {}
  pid_t owner_;
  std::mutex m_;
  std::vector<std::string> dirs_;
};

inline std::string make_scratch_dir(const std::string& prefix) {
  return ScratchDirs::instance().make(prefix);
}

}  // namespace tpb::testutil
