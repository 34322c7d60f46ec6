// Stop signals of a command-line process (SIGINT, SIGTERM, SIGHUP) and the
// signals that would otherwise kill it in the middle of a write (SIGPIPE,
// SIGXFSZ: they become the write errors EPIPE and EFBIG, reported naming the
// file like any other).
//
// While a simulation runs (a StopWindow is open), the first stop signal only
// asks the run to stop: every engine stops at a common time, as at a
// watchdog, the outputs are written whole up to that time, and the process
// exits 128 + the signal (130 for SIGINT, 143 for SIGTERM). Any other time
// (reading inputs, writing outputs), or at a second signal, the process
// stops at once: the staging files are removed, nothing half-written is left
// under a final name, a line on stderr says so, exit 128 + the signal.
//
// A library user (the Python module, an embedding) installs nothing: then
// no handler is there and stop_signal() stays 0.
#pragma once

#include <sys/types.h>

namespace tpb::run {

// How the process meets a stop signal: Run as above; Supervise (a sweep,
// which starts runs) never ends at once: it passes the signal on to its
// children and stop_signal() tells it to start no more and wait for them.
enum class StopMode { Run, Supervise };
// Installs the handlers; `tool` ("tpbsim run") begins the stderr line.
void install_stop_signals(const char* tool, StopMode mode = StopMode::Run);
// In a child between fork and exec: SIGPIPE and SIGXFSZ back to their defaults.
void reset_signals_for_exec();
// 0, or the first stop signal received.
int stop_signal();
// The signal's name ("SIGINT"), or "signal N".
const char* signal_name(int sig);

// While one is alive, the first stop signal asks the run to stop instead of
// ending the process.
class StopWindow {
 public:
  StopWindow();
  ~StopWindow();
  StopWindow(const StopWindow&) = delete;
  StopWindow& operator=(const StopWindow&) = delete;
};

// Child processes the stop signal is passed to when it was sent to this
// process alone (kill, a batch system); a terminal's Ctrl-C reaches them by
// itself. Async-signal-safe to read; add/remove from the main thread.
void add_stop_child(pid_t pid);
void remove_stop_child(pid_t pid);

}  // namespace tpb::run
