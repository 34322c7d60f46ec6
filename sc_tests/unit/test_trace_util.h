// Helpers shared by the trace and .npy tests: scratch files and running the
// third-party checkers (GTKWave's vcd2fst / fst2vcd, /usr/bin/python3 + NumPy).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sc_tests/scratch_dir.h"

namespace tpb::testutil {

struct CmdResult {
  int exit_code = -1;
  std::string out;  // stdout (stderr goes to the test log)
};

inline CmdResult run_cmd(const std::string& cmd) {
  CmdResult r;
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline bool have_tool(const std::string& exe) {
  return std::system(("command -v " + exe + " >/dev/null 2>&1").c_str()) == 0;
}

// Empty when usable; otherwise the reason, for a clear test failure.
inline std::string numpy_missing() {
  if (::access("/usr/bin/python3", X_OK) != 0)
    return "/usr/bin/python3 is missing: run `make` (scripts/install-deps.sh installs it)";
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
    return "/usr/bin/python3 cannot import numpy: run `make` (scripts/install-deps.sh "
           "installs python3-numpy)";
  return {};
}

// A fresh scratch directory (removed when the tests exit).
inline std::string scratch(const std::string& name) { return make_scratch_dir(name); }

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace tpb::testutil
