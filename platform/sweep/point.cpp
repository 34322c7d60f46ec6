#include "platform/sweep/point.h"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "platform/run/stop_signals.h"
#include "platform/sweep/child_process.h"
#include "platform/sweep/sweep_dir.h"
#include "platform/sweep/sweep_files.h"

namespace tpb::sweep {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::size_t point_index(const json& plan, const std::string& index_s) {
  std::size_t idx = 0, pos = 0;
  try {
    idx = std::stoul(index_s, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos == 0 || pos != index_s.size() || idx >= plan["points"].size())
    throw SweepError(
        fmt::format("point '{}' is not 0..{}", shown(index_s), plan["points"].size() - 1));
  return idx;
}

}  // namespace

int run_point(const std::string& out, const std::string& index_s) {
  const json plan = load_plan(out);
  const std::size_t idx = point_index(plan, index_s);
  const json& p = plan["points"][idx];
  const fs::path dir = point_dir(plan["out"].get<std::string>(), idx);
  std::error_code ec;
  fs::remove(dir / "result.json", ec);
  fs::remove(dir / "stats.json", ec);
  ChildSpec run;
  run.argv = p["argv"].get<std::vector<std::string>>();
  run.cwd = p["cwd"].get<std::string>();
  run.stdout_file = (dir / "stdout.txt").string();
  run.stderr_file = (dir / "stderr.txt").string();
  run.label = p["id"].get<std::string>();
  const auto t0 = std::chrono::steady_clock::now();
  if (const int sig = run::stop_signal())
    throw SweepError(fmt::format("point {}: not started ({})", idx, run::signal_name(sig)));
  // A stop signal sent to this process is passed on to the run, whose exit
  // code (130, 143) the result records.
  pid_t pid = spawn(run);
  ChildExit how;
  if (!wait_child(pid, pid, how))
    throw std::runtime_error(fmt::format("point {}: its run was lost (waitpid)", idx));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  json r = {{"wall_seconds", wall}, {"exit", how.code}};
  if (how.signal) r["signal"] = how.signal;
  write_file((dir / "result.json").string(), r.dump(2) + "\n");
  if (const int sig = run::stop_signal()) return 128 + sig;
  return how.code;
}

}  // namespace tpb::sweep
