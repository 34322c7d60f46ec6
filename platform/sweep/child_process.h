// The one way the sweep starts a process: a point's `tpbsim run`, a
// `tpbsim sweep --run-point` of the local runner, GNU parallel, sbatch and
// the plot script. fork + exec, no shell; the child's SIGPIPE and SIGXFSZ
// back to their defaults; while it runs, a stop signal sent to this process
// is passed on to it (platform/run/stop_signals.h).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace tpb::sweep {

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0]: the program
  bool search_path = false;       // argv[0] without a '/' is looked up on PATH
  std::string cwd;                // "": this process's
  // "": inherited. A file that cannot be opened (or a cwd that cannot be
  // entered) ends the child with exit 127 and a line on stderr naming
  // `label`, unless `optional_redirects` (then the stream stays inherited).
  std::string stdout_file, stderr_file;
  bool optional_redirects = false;
  std::string label;  // names the child in that line ("p0003")
};

// How a child ended: its exit code, or 128 + N when signal N killed it.
struct ChildExit {
  int code = 0;
  int signal = 0;  // 0: it exited
};

// Starts the child and makes it a stop child. Throws std::runtime_error
// when no process can be made (fork).
pid_t spawn(const ChildSpec& spec);
// Waits for one child (or any, pid -1) that spawn() started; it is then no
// stop child. False when there is none left to wait for.
bool wait_child(pid_t pid, pid_t& which, ChildExit& how);
// This program's path (/proc/self/exe): the tpbsim a runner starts.
std::string self_executable();

// spawn() then wait_child(): the exit code, or -1 when it cannot start.
int run_child(const ChildSpec& spec);

}  // namespace tpb::sweep
