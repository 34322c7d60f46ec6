#include "platform/sweep/runners.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "models/isa/input_file.h"
#include "platform/run/stop_signals.h"
#include "platform/sweep/child_process.h"
#include "platform/sweep/collect.h"
#include "platform/sweep/shell_quote.h"
#include "platform/sweep/sweep_files.h"

namespace tpb::sweep {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string collect_command(const json& plan) {
  return sh_quote(plan["tpbsim"].get<std::string>()) + " sweep --collect " +
         sh_quote(plan["out"].get<std::string>());
}

// ------------------------------------------------------------------ local

void progress(bool show, std::size_t done, std::size_t total, std::size_t failed, double seconds) {
  if (!show) return;
  constexpr int kWidth = 30;
  const int fill = total ? static_cast<int>(kWidth * done / total) : kWidth;
  std::fprintf(stderr, "\r[%s%s] %zu/%zu points, %zu failed, %.1f s",
               std::string(fill, '#').c_str(), std::string(kWidth - fill, '.').c_str(), done, total,
               failed, seconds);
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

// Every point, `jobs` child processes at a time. After a stop signal no
// point starts; the running ones were passed the signal and are waited for.
void run_points_here(const json& plan, unsigned jobs, bool show) {
  ChildSpec point;
  point.argv = {self_executable(), "sweep", "--run-point", plan["out"].get<std::string>(), ""};
  const std::size_t n = plan["points"].size();
  std::size_t next = 0, done = 0, failed = 0, running = 0;
  const auto t0 = std::chrono::steady_clock::now();
  progress(show, 0, n, 0, 0);
  while (done < n) {
    for (; running < jobs && next < n && run::stop_signal() == 0; ++running) {
      point.argv.back() = std::to_string(next++);
      spawn(point);
    }
    pid_t pid = 0;
    ChildExit how;
    if (running == 0 || !wait_child(-1, pid, how)) break;
    --running;
    ++done;
    // Exit 5: the point ran and found a race (its row says so), not a failure.
    failed += how.code != 0 && how.code != 5;
    progress(show, done, n, failed,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
}

int run_local(const json& plan, const RunnerOptions& o) {
  const std::string out = plan["out"];
  if (o.dry_run) {
    std::printf("%s\n", (fs::path(out) / "commands.txt").string().c_str());
    return 0;
  }
  run_points_here(plan, o.jobs, o.progress);
  if (const int sig = run::stop_signal()) {
    std::fprintf(stderr,
                 "tpbsim sweep: interrupted (%s): points not yet run were not started; "
                 "`tpbsim sweep --collect %s` merges those that ran\n",
                 run::signal_name(sig), shown(out).c_str());
    return 128 + sig;
  }
  return collect(out, o.metric, o.plot);
}

// ------------------------------------------------------------ GNU parallel

std::vector<std::string> parallel_argv(const json& plan, const RunnerOptions& o) {
  const std::string out = plan["out"];
  std::vector<std::string> a = {"parallel",
                                "--jobs",
                                std::to_string(o.jobs),
                                "--halt",
                                "never",
                                "--joblog",
                                (fs::path(out) / "parallel.joblog").string()};
  for (const auto& l : o.sshlogins) {
    a.push_back("--sshlogin");
    a.push_back(l);
  }
  if (o.progress) a.push_back("--bar");
  // Every argument of the command from the input file (TPBSIM, OUT, N per
  // line): the command line holds no path, so nothing of a user's is ever
  // read as a replacement string ({}, {= perl =}).
  for (const char* s :
       {"--colsep", "\t", "-q", "{1}", "sweep", "--run-point", "{2}", "{3}", "::::"})
    a.push_back(s);
  a.push_back((fs::path(out) / "parallel_input.tsv").string());
  return a;
}

int run_parallel(const json& plan, const RunnerOptions& o) {
  const std::string out = plan["out"];
  ChildSpec parallel;
  parallel.argv = parallel_argv(plan, o);
  parallel.search_path = true;
  write_file((fs::path(out) / "run_parallel.sh").string(),
             "#!/bin/sh\n# GNU parallel runs every point; then collect.\n" +
                 sh_join(parallel.argv) + "\n" + collect_command(plan) + "\n");
  if (o.dry_run) {
    std::printf("%s\n", sh_join(parallel.argv).c_str());
    return 0;
  }
  const int rc = run_child(parallel);
  if (const int sig = run::stop_signal()) {
    std::fprintf(stderr, "tpbsim sweep: interrupted (%s); GNU parallel was passed it\n",
                 run::signal_name(sig));
    return 128 + sig;
  }
  if (rc == -1 || rc == 127 || rc == 255) {
    std::fprintf(stderr, "tpbsim sweep: error: GNU parallel did not run (exit %d)\n", rc);
    if (rc != 255) return 1;
  }
  return collect(out, o.metric, o.plot);
}

// ------------------------------------------------------------------ Slurm

// A job name Slurm takes on a #SBATCH line: letters, digits, . _ - only.
std::string slurm_job_name(const std::string& name) {
  std::string n = "tpbsim-";
  for (char c : name) {
    if (n.size() >= 64) break;
    n += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
  }
  return n;
}

// #SBATCH lines are read by sbatch, not a shell: no quoting there, and
// --output expands %: OUT must be plain, and each extra line one option.
void check_slurm_words(const std::string& out, const std::vector<std::string>& extra) {
  if (out.find_first_of(" \t\"'\\%$`") != std::string::npos || isa::has_control_chars(out))
    throw SweepError(fmt::format(
        "--out '{}': --runner slurm writes it on #SBATCH lines, which take no spaces, quotes, "
        "backslashes, $, ` or % (Slurm's filename patterns); choose another directory",
        shown(out)));
  for (const auto& e : extra)
    if (isa::has_control_chars(e) || e.empty() || e[0] != '-')
      throw SweepError(
          fmt::format("--sbatch '{}': one sbatch option on one line (starting with -), e.g. "
                      "--sbatch=--partition=cpu",
                      shown(e)));
}

std::string slurm_script(const json& plan, const std::vector<std::string>& extra) {
  const std::string out = plan["out"], tpbsim = plan["tpbsim"];
  check_slurm_words(out, extra);
  std::string s = "#!/bin/bash\n";
  s += "# A Slurm job array of the sweep " + isa::excerpt(plan.value("name", std::string())) +
       ", written by `tpbsim sweep --runner slurm`.\n"
       "# Task i runs point i of plan.json (its command: line i+1 of commands.txt).\n"
       "# Submit: sbatch " +
       sh_quote((fs::path(out) / "sweep.sbatch").string()) +
       "\n# then:  " + isa::excerpt(sh_quote(tpbsim)) + " sweep --collect " + sh_quote(out) + "\n";
  s += "#SBATCH --job-name=" + slurm_job_name(plan.value("name", std::string("sweep"))) + "\n";
  s += fmt::format("#SBATCH --array=0-{}\n", plan["points"].size() - 1);
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  s += "#SBATCH --output=" + (fs::path(out) / "points" / "slurm-%a.out").string() + "\n";
  for (const auto& e : extra) s += "#SBATCH " + e + "\n";
  s += "set -eu\n";
  s += "exec " + sh_quote(tpbsim) + " sweep --run-point " + sh_quote(out) +
       " \"$SLURM_ARRAY_TASK_ID\"\n";
  return s;
}

int run_slurm(const json& plan, const RunnerOptions& o) {
  const std::string dir = plan["out"];
  const std::string script = (fs::path(dir) / "sweep.sbatch").string();
  write_file(script, slurm_script(plan, o.sbatch));
  fs::permissions(script, fs::perms::owner_exec, fs::perm_options::add);
  if (o.dry_run) {
    std::printf("%s\n", script.c_str());
    std::fprintf(stderr,
                 "tpbsim sweep: dry run: submit with `sbatch %s`, then `%s sweep --collect %s`\n",
                 script.c_str(), plan["tpbsim"].get<std::string>().c_str(), dir.c_str());
    return 0;
  }
  ChildSpec sbatch;
  sbatch.search_path = true;
  sbatch.optional_redirects = true;
  sbatch.argv = {"sbatch", "--parsable", script};
  sbatch.stdout_file = (fs::path(dir) / "slurm.jobid").string();
  if (const int rc = run_child(sbatch); rc != 0) {
    std::fprintf(stderr,
                 "tpbsim sweep: error: sbatch %s failed (exit %d); on a machine without "
                 "Slurm use --dry-run and submit the script on the cluster\n",
                 script.c_str(), rc);
    return 1;
  }
  std::string id = read_file(sbatch.stdout_file, "sbatch output");
  id = id.substr(0, id.find_first_of(";\n"));
  ChildSpec after = sbatch;
  after.stdout_file.clear();
  after.argv = {"sbatch",
                "--parsable",
                "--dependency=afterany:" + id,
                "--job-name=tpbsim-collect",
                "--output=" + (fs::path(dir) / "collect.out").string(),
                "--wrap",
                collect_command(plan)};
  const int rc = run_child(after);
  std::fprintf(stderr, "tpbsim sweep: submitted job array %s (%zu tasks)%s\n", id.c_str(),
               plan["points"].size(),
               rc == 0 ? " and the collect job after it" : "; collect job NOT submitted");
  return rc == 0 ? 0 : 1;
}

}  // namespace

int run_sweep(const json& plan, const RunnerOptions& o) {
  if (o.runner == "slurm") return run_slurm(plan, o);
  if (o.runner == "parallel") return run_parallel(plan, o);
  return run_local(plan, o);
}

}  // namespace tpb::sweep
