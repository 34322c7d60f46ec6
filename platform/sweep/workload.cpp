#include "platform/sweep/workload.h"

#include <filesystem>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "models/isa/input_file.h"
#include "models/isa/program.h"
#include "models/timing/timing_profile.h"
#include "platform/sweep/sweep_files.h"

namespace tpb::sweep {

namespace {

namespace fs = std::filesystem;

// cmd.txt: the `tpbsim run` arguments, whitespace-separated; `#` lines are
// comments.
std::vector<std::string> cmd_words(const std::string& cmd) {
  std::istringstream in(read_file(cmd, "workload command line"));
  std::vector<std::string> words;
  for (std::string line; std::getline(in, line);) {
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream ls(line);
    for (std::string t; ls >> t;) words.push_back(t);
  }
  return words;
}

fs::path under(const fs::path& dir, const std::string& path) {
  return fs::path(path).is_absolute() ? fs::path(path) : dir / path;
}

// The workload's own profile (merged under the sweep's overrides) and its
// generation, from its cmd.txt's options.
void read_timing_and_arch(Workload& w, const std::string& cmd) {
  const std::string timing_file = w.options.timing;
  w.options.timing.clear();
  if (w.options.program.empty()) throw SweepError(fmt::format("{}: no PROGRAM", shown(cmd)));
  if (!timing_file.empty()) {
    // As `tpbsim run --timing` reads it: at most 16 MiB, strict JSON.
    try {
      w.base_timing = timing::read_timing_file(under(w.dir, timing_file).string());
    } catch (const timing::TimingError& e) {
      throw SweepError(fmt::format("{}: --timing {}", shown(cmd), e.what()));
    }
  }
  const fs::path prog = under(w.dir, w.options.program);
  try {
    const isa::Program p = isa::load_program(prog.string());
    w.arch = p.arch.value_or(isa::Arch::Mariana);
  } catch (const isa::AsmError& e) {
    throw SweepError(fmt::format("{}:{}: {}", shown(e.loc().file), e.loc().line,
                                 isa::excerpt(e.message(), 1000)));
  } catch (const std::exception& e) {
    throw SweepError(fmt::format("{}: {}", shown(prog.string()), isa::excerpt(e.what(), 1000)));
  }
  if (!w.options.arch.empty() && !isa::parse_arch(w.options.arch, w.arch))
    throw SweepError(
        fmt::format("{}: --arch '{}' is not a generation", shown(cmd), shown(w.options.arch)));
}

}  // namespace

Workload load_workload(const std::string& dir_in, const std::string& sweep_file) {
  Workload w;
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(under(fs::path(sweep_file).parent_path(), dir_in), ec);
  const std::string where = fmt::format("{}: workload '{}'", shown(sweep_file), shown(dir_in));
  if (!fs::is_directory(dir))
    throw SweepError(fmt::format("{}: {} is not a directory", where, shown(dir.string())));
  w.dir = dir.string();
  require_one_line(where + ": its directory", w.dir);
  w.name = dir.filename().string();
  const std::string cmd = (dir / "cmd.txt").string();
  if (!fs::exists(cmd)) throw SweepError(fmt::format("{}: no cmd.txt in {}", where, shown(w.dir)));
  // The very options of `tpbsim run` (run::run_option_table), either spelling.
  try {
    w.options = run::parse_run_args(cmd_words(cmd));
  } catch (const run::InputError& e) {
    throw SweepError(fmt::format("{}: {}", shown(cmd), isa::excerpt(e.what(), 1000)));
  }
  if (!w.options.stats.empty())
    throw SweepError(fmt::format("{}: --stats is set by the sweep; remove it", shown(cmd)));
  read_timing_and_arch(w, cmd);
  return w;
}

void name_apart(std::vector<Workload>& workloads) {
  for (std::size_t depth = 2;; ++depth) {
    std::map<std::string, std::vector<std::size_t>> by_name;
    for (std::size_t i = 0; i < workloads.size(); ++i) by_name[workloads[i].name].push_back(i);
    bool clash = false;
    for (const auto& [name, idx] : by_name) {
      if (idx.size() < 2) continue;
      clash = true;
      for (std::size_t i : idx) {
        std::vector<std::string> parts;
        for (const auto& c : fs::path(workloads[i].dir)) parts.push_back(c.string());
        std::string n;
        for (std::size_t k = parts.size() > depth ? parts.size() - depth : 1; k < parts.size(); ++k)
          n += (n.empty() ? "" : "/") + parts[k];
        workloads[i].name = n;
      }
    }
    if (!clash || depth > 64) break;
  }
}

}  // namespace tpb::sweep
