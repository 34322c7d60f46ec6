// Runs the tpbsim binary as a user would and captures what it prints.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <unistd.h>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sc_tests/scratch_dir.h"

namespace tpb::e2e {

struct ToolResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh scratch directory for one test (removed when the tests exit).
inline std::string scratch_dir(const std::string& name) { return testutil::make_scratch_dir(name); }

// `args` is a shell-quoted argument string appended to the tool path.
inline ToolResult run_tool(const std::string& args, const std::string& stdin_text = "") {
  const std::string dir = scratch_dir("run");
  const std::string out = dir + "/stdout", err = dir + "/stderr", in = dir + "/stdin";
  std::ofstream(in) << stdin_text;
  const std::string cmd =
      std::string(TPBSIM_BIN) + " " + args + " <" + in + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  ToolResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

// Runs the tool (run_tool) and expects exit code `code` and `needle` in
// what it printed (stdout or stderr).
inline ToolResult expect_tool(const std::string& args, int code, const std::string& needle) {
  ToolResult r = run_tool(args);
  EXPECT_EQ(r.exit_code, code) << args << "\n" << r.err;
  EXPECT_NE((r.out + r.err).find(needle), std::string::npos) << args << "\n" << r.out << r.err;
  return r;
}

// A VCD's declared signals, read from its $scope / $var lines independently
// of the writer: the dotted scope path with the name, and the width.
struct VcdVar {
  std::string path;  // "tpb.pool.busy"
  int width = 0;
};
inline std::vector<VcdVar> vcd_var_list(const std::string& vcd_text) {
  std::vector<VcdVar> out;
  std::vector<std::string> scope;
  std::istringstream in(vcd_text);
  for (std::string tok; in >> tok;) {
    if (tok == "$enddefinitions") break;
    if (tok == "$scope") {
      std::string kind, name;
      in >> kind >> name;
      scope.push_back(name);
    } else if (tok == "$upscope") {
      if (!scope.empty()) scope.pop_back();
    } else if (tok == "$var") {
      std::string type, id, name;
      int width = 0;
      in >> type >> width >> id >> name;
      std::string full;
      for (const auto& s : scope) full += s + ".";
      out.push_back({full + name, width});
    }
  }
  return out;
}

inline std::string source_path(const std::string& rel) {
  return std::string(TPB_SOURCE_DIR) + "/" + rel;
}

// One line of a retire file (docs/TRACES.md): "END_PS ENGINE INDEX 0xOP NAME".
struct RetireLine {
  std::uint64_t end_ps = 0;
  std::string engine;
  std::size_t index = 0;
  std::string opcode, name;
};
inline std::vector<RetireLine> read_retire_lines(const std::string& path) {
  std::vector<RetireLine> out;
  std::istringstream in(read_text(path));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    RetireLine r;
    f >> r.end_ps >> r.engine >> r.index >> r.opcode >> r.name;
    out.push_back(r);
  }
  return out;
}

// The pipeline workload (traces/workloads/pipeline), which the sweeps run.
inline const std::string& pipeline_workload() {
  static const std::string dir = source_path("traces/workloads/pipeline");
  return dir;
}

}  // namespace tpb::e2e
