// Helpers of the co-simulation tests (sc_tests/cosim): run a program as a
// user does, read its files, a scratch directory per run.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sc_tests/scratch_dir.h"

namespace tpb::cosimtest {

struct ToolRun {
  int exit_code = -1;
  std::string out, err;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh scratch directory (removed when the tests exit).
inline std::string scratch(const std::string& name) {
  return testutil::make_scratch_dir("cosim-" + name);
}

// Runs `cmd` in `cwd` (no standard input), capturing stdout and stderr.
inline ToolRun run_cmd(const std::string& cmd, const std::string& cwd = ".") {
  const std::string dir = scratch("out");
  const std::string full =
      "cd '" + cwd + "' && " + cmd + " >" + dir + "/stdout 2>" + dir + "/stderr </dev/null";
  const int status = std::system(full.c_str());
  ToolRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(dir + "/stdout");
  r.err = read_text(dir + "/stderr");
  return r;
}

// Runs `bin run args` in `cwd`.
inline ToolRun run(const std::string& bin, const std::string& args, const std::string& cwd = ".") {
  return run_cmd(bin + " run " + args, cwd);
}

// The stats' "cosim" section, and one block kind's part of it (null when absent).
inline nlohmann::json cosim_section(const std::string& stats_path) {
  const nlohmann::json s = nlohmann::json::parse(read_text(stats_path));
  return s.contains("cosim") ? s.at("cosim") : nlohmann::json();
}
inline nlohmann::json cosim_block(const std::string& stats_path, const std::string& kind) {
  const nlohmann::json c = cosim_section(stats_path);
  if (!c.is_object() || !c.at("blocks").contains(kind)) return nlohmann::json();
  return c.at("blocks").at(kind);
}

// An engine's counter of the stats ("bytes_written", ...).
inline std::uint64_t engine_stat(const std::string& stats_path, const std::string& engine,
                                 const std::string& key) {
  const nlohmann::json s = nlohmann::json::parse(read_text(stats_path));
  for (const nlohmann::json& e : s.at("engines"))
    if (e.at("name") == engine) return e.at(key).get<std::uint64_t>();
  return 0;
}

}  // namespace tpb::cosimtest
