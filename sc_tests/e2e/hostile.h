// Helpers of the hostile-input tests (test_hostile_*.cpp): a tool started in
// the background (to signal it, to read its pipe), waited for with a time
// limit, and the staging files left in a directory.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {

inline std::string put(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string p = dir + "/" + name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

// Every entry of `dir` (not . and ..).
inline std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
  }
  return out;
}

// Entries of `dir` that are staging files of any kind, ours or the old
// predictable PATH.tpbsim-tmp.
inline std::vector<std::string> staging_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& n : dir_entries(dir))
    if (n.find("tpbsim-") != std::string::npos && n.find(".tpbsim-") != std::string::npos)
      out.push_back(n);
  return out;
}

inline std::size_t retire_count(const std::string& path) {
  std::size_t n = 0;
  for (char c : read_text(path)) n += c == '\n';
  return n;
}

// A shell command (`exec`ed, so the pid is the tool's) in the background;
// stdout into `out` (a file, or a pipe whose read end is `out_fd`), stderr
// into `err`.
struct Background {
  pid_t pid = -1;
  int out_fd = -1;  // with a pipe
  std::string err;
};

inline Background start(const std::string& shell_cmd, const std::string& err_file,
                        bool pipe_stdout = false, const std::string& out_file = "/dev/null") {
  Background b;
  b.err = err_file;
  int fds[2] = {-1, -1};
  if (pipe_stdout && ::pipe(fds) != 0) return b;
  b.pid = ::fork();
  if (b.pid == 0) {
    ::setpgid(0, 0);  // a group of its own: the test's signals reach it alone
    if (pipe_stdout) {
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      ::close(fds[1]);
    } else {
      const int o = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(o, 1);
    }
    const int e = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(e, 2);
    ::execl("/bin/sh", "sh", "-c", ("exec " + shell_cmd).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  if (pipe_stdout) {
    ::close(fds[1]);
    b.out_fd = fds[0];
  }
  return b;
}

// Reads the pipe until `n` bytes came (or it ended); false at its end.
inline bool read_some(int fd, std::size_t n) {
  std::size_t got = 0;
  char buf[4096];
  while (got < n) {
    const ssize_t k = ::read(fd, buf, sizeof buf);
    if (k <= 0) return false;
    got += static_cast<std::size_t>(k);
  }
  return true;
}

// The exit code (128 + N if killed by signal N), or -1 after `seconds`
// (then the process is killed).
inline int wait_exit(pid_t pid, double seconds, double* took = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    int st = 0;
    const pid_t r = ::waitpid(pid, &st, WNOHANG);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (took) *took = dt;
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (dt > seconds) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// A program that runs for a minute or more (contention on every SBUF byte),
// retiring tens of instructions a second, and its profile. It opens with
// 500 small instructions, whose retire lines fill the output's buffer at
// once: a test sees output within a fraction of a second of the start (not
// after the first ~150 long instructions, a minute under a sanitizer) and
// signals a run that has most of its work ahead of it.
inline std::string long_run_args(const std::string& dir) {
  std::string p = ".arch mariana\n.engine pool\n";
  for (int i = 0; i < 500; ++i)
    p += "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
         "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[8, 1, 1]) "
         "dst=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[16, 1, 1])\n";
  for (int i = 0; i < 2000; ++i)
    p += "tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 "
         "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[2048, 1, 1]) "
         "dst=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[4096, 1, 1])\n";
  const std::string prog = put(dir, "long.tpb", p);
  const std::string prof =
      put(dir, "slow.json",
          R"({"sbuf": {"beat_bytes": 1, "beat_cycles": 1, "contention_window_cycles": 1}})");
  return prog + " --timing " + prof;
}

}  // namespace tpb::e2e
