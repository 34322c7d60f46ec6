#include "platform/sweep/child_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "platform/run/stop_signals.h"

namespace tpb::sweep {

namespace {

// In the child: `file` as descriptor `fd`; false when it cannot be opened.
bool redirect(const std::string& file, int fd) {
  if (file.empty()) return true;
  const int f = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  return f >= 0 && ::dup2(f, fd) >= 0;
}

[[noreturn]] void exec_child(const ChildSpec& s) {
  run::reset_signals_for_exec();
  const bool ready = redirect(s.stdout_file, 1) && redirect(s.stderr_file, 2) &&
                     (s.cwd.empty() || ::chdir(s.cwd.c_str()) == 0);
  if (!ready && !s.optional_redirects) {
    std::fprintf(stderr, "tpbsim sweep: %s: cannot start in %s: %s\n", s.label.c_str(),
                 s.cwd.c_str(), std::strerror(errno));
    _exit(127);
  }
  std::vector<char*> argv;
  for (const std::string& a : s.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  if (s.search_path)
    ::execvp(argv[0], argv.data());
  else
    ::execv(argv[0], argv.data());
  std::fprintf(stderr, "tpbsim sweep: cannot run %s: %s\n", argv[0], std::strerror(errno));
  _exit(127);
}

}  // namespace

pid_t spawn(const ChildSpec& spec) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) exec_child(spec);
  run::add_stop_child(pid);
  return pid;
}

bool wait_child(pid_t pid, pid_t& which, ChildExit& how) {
  int status = 0;
  for (;;) {
    which = ::waitpid(pid, &status, 0);
    if (which >= 0) break;
    if (errno != EINTR) return false;
  }
  run::remove_stop_child(which);
  how = WIFEXITED(status) ? ChildExit{WEXITSTATUS(status), 0}
                          : ChildExit{128 + WTERMSIG(status), WTERMSIG(status)};
  return true;
}

std::string self_executable() {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this executable (/proc/self/exe)");
  return p.string();
}

int run_child(const ChildSpec& spec) {
  pid_t pid = 0;
  try {
    pid = spawn(spec);
  } catch (const std::runtime_error&) {
    return -1;
  }
  ChildExit how;
  return wait_child(pid, pid, how) ? how.code : -1;
}

}  // namespace tpb::sweep
