// Writes the signals of a Recorder as a Value Change Dump (IEEE 1364 §18),
// readable by GTKWave (and its vcd2fst converter).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "models/trace/recorder.h"
#include "models/trace/trace_output.h"

namespace tpb::trace {

// A time window of a trace (--trace-window T0:T1), ps, both ends included.
struct TraceWindow {
  Picos from = 0;
  Picos to = kForever;
  bool contains(Picos t) const { return t >= from && t <= to; }
};

// The VCD format: timescale 1 ps. Each Signal::scope is split on '.' into
// nested `$scope module` blocks under `top` (a leading component equal to
// `top` is not repeated); hidden signals are not declared. Initial values
// (and changes at the window's start) go in $dumpvars at the window's start;
// later changes are written in time order, one `#t` per time that changes
// something; of several changes of one signal at one time the last recorded
// wins, and changes that do not change the value are dropped. A final `#t`
// marks the end of the run (or of the window). The constructor throws
// std::runtime_error naming the path when the file cannot be created; later
// write errors are kept (error()).
//
// A streaming sink (Recorder::attach): the file is written as the run goes,
// in bounded memory.
class VcdWriter : public ChangeSink {
 public:
  VcdWriter(std::string path, std::string top = "tpb", TraceWindow window = {});
  void start(const std::vector<Signal>& signals) override;
  void change(const ValueChange& c) override;
  void changes(const ValueChange* c, std::size_t n) override;
  // Writes the end and closes the file; never throws (see error()).
  void finish(Picos end) override;
  // After finish(): "" or what went wrong ("'PATH': write failed: ...").
  const std::string& error() const { return out_.error(); }
  // After finish(): bytes written and value changes written.
  std::uint64_t bytes() const { return out_.bytes(); }
  std::uint64_t changes_written() const { return written_; }

 private:
  void take(const ValueChange& c);  // change()'s work, inlined into changes()
  void emit_group();
  void dumpvars(Picos t);
  void write_value(std::size_t s);  // signal s's line with its current value

  std::string top_;
  TraceWindow window_;
  TraceOutput out_;
  TextBuffer& buf_;  // out_.buf()
  std::vector<Signal> sigs_;
  std::vector<std::string> ids_;
  // The identifier codes again, as fixed 8-byte blocks (size 0: longer, see
  // ids_): a value line copies its code in one move.
  struct IdCode {
    char text[8];
    std::uint8_t size;
  };
  std::vector<IdCode> codes_;
  std::vector<std::uint64_t> current_, pending_;
  std::vector<char> touched_;
  std::vector<char> hidden_;  // by signal: Signal::hidden
  std::vector<std::uint32_t> touched_list_;
  Picos group_t_ = 0;
  bool dumped_ = false;  // $dumpvars written
  Picos last_written_ = 0;
  std::uint64_t written_ = 0;
};

// The whole of an in-memory Recorder (no sink attached) at once.
void write_vcd(const Recorder& rec, const std::string& path, const std::string& top = "tpb");

}  // namespace tpb::trace
