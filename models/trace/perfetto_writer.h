// Writes the tracks of a Recorder as Chrome trace-event JSON, which
// ui.perfetto.dev and chrome://tracing open directly.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "models/trace/recorder.h"
#include "models/trace/vcd_writer.h"  // TraceWindow

namespace tpb::trace {

// {"traceEvents":[...],"displayTimeUnit":"ns"}: process_name / thread_name
// metadata first (one pid per distinct Track::process, numbered from 1 in
// order of first appearance; one tid per track, tid = track index + 1;
// hidden tracks have none), then the events in (time, insertion) order with
// ts = ps / 1e6 (µs, exact: printed from integers). Begin/End -> "B"/"E",
// Instant -> "i" (thread scope), Counter -> "C" with args {name: value}. An
// "E" with no open slice on its track is dropped; a slice still open at the
// end (a fault or deadlock cut it short) is closed at the end with args
// {"unterminated": true}, so every track has balanced B/E pairs. With a
// window, a slice open at its start begins there, and one open at its end
// is closed there. args text must be a JSON object (the recorder's callers
// build it). The constructor throws std::runtime_error naming the path when
// the file cannot be created; later write errors are kept (error()).
//
// A streaming sink (Recorder::attach): written as the run goes, in memory
// bounded by the nesting depth of the slices.
class PerfettoWriter : public SliceSink {
 public:
  explicit PerfettoWriter(std::string path, TraceWindow window = {});
  ~PerfettoWriter() override;
  void start(const std::vector<Track>& tracks) override;
  void event(const SliceRecord& e, std::string_view name, std::string_view args) override;
  // Writes the end and closes the file; never throws (see error()).
  void finish(Picos end) override;
  // After finish(): "" or what went wrong ("'PATH': write failed: ...").
  const std::string& error() const { return error_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t events_written() const { return written_; }

 private:
  struct Open {
    std::string name, args;
    bool emitted;
  };
  void open_window(Picos t);
  void emit_begin(std::uint32_t track, Picos t, std::string_view name, std::string_view args);
  void emit_end(std::uint32_t track, Picos t, bool unterminated);
  void head(const char* ph, std::uint32_t track, Picos t);
  void flush();
  [[noreturn]] void fail(const char* what);

  std::string path_;
  TraceWindow window_;
  std::FILE* f_ = nullptr;
  std::string buf_;
  std::vector<int> pid_of_;
  std::vector<std::vector<Open>> open_;  // per track: the open slices, outermost first
  bool in_window_ = false;
  std::string error_;
  std::uint64_t bytes_ = 0, written_ = 0;
};

// The whole of an in-memory Recorder (no sink attached) at once.
void write_perfetto(const Recorder& rec, const std::string& path);

}  // namespace tpb::trace
