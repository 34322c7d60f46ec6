// Writes the tracks of a Recorder as Chrome trace-event JSON, which
// ui.perfetto.dev and chrome://tracing open directly.
#pragma once

#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/trace/recorder.h"
#include "models/trace/trace_output.h"
#include "models/trace/vcd_writer.h"  // TraceWindow

namespace tpb::trace {

// {"traceEvents":[...],"displayTimeUnit":"ns"}: process_name / thread_name
// metadata first (one pid per distinct Track::process, numbered from 1 in
// order of first appearance; one tid per track, tid = track index + 1;
// hidden tracks have none), then the events, ts = ps / 1e6 (µs, exact:
// printed from integers). A Begin and the End that closes it on its track
// -> one complete event "X" (ts, dur); Instant -> "i" (thread scope);
// Counter -> "C" with args {name: value}. An End with no open slice on its
// track is dropped; a slice still open at the end (a fault or deadlock cut
// it short) ends there with args {"unterminated": true}; a slice of zero
// duration (a bundle that ran zero trips) is not written. Complete events are
// what every consumer takes (Chrome DevTools' trace engine keeps one B/E
// stack for all threads, speedscope matches an E by name): the ctest
// TraceConsumer.DevToolsTraceEngine* parses a run's trace with DevTools'
// engine (docs/TRACES.md). Events are in time order on each track (a
// top-level slice is written, with what nests in it, when it ends; the
// format does not need a global order). With a window, slices are cut to
// it and other events outside it dropped. args text must be a JSON object
// (other text is kept as {"text": "..."}). The constructor throws
// std::runtime_error naming the path when the file cannot be created; later
// write errors are kept (error()).
//
// A streaming sink (Recorder::attach): written as the run goes, in memory
// bounded by what one top-level slice holds.
class PerfettoWriter : public SliceSink {
 public:
  explicit PerfettoWriter(std::string path, TraceWindow window = {});
  void start(const std::vector<Track>& tracks) override;
  void add_tracks(const std::vector<Track>& tracks) override;
  void event(const SliceRecord& e, std::string_view name, std::string_view args) override;
  // Writes the end and closes the file; never throws (see error()).
  void finish(Picos end) override;
  // After finish(): "" or what went wrong ("'PATH': write failed: ...").
  const std::string& error() const { return out_.error(); }
  std::uint64_t bytes() const { return out_.bytes(); }
  std::uint64_t events_written() const { return written_; }

 private:
  // An event of a track waiting for its top-level slice to end.
  struct Pending {
    SliceKind kind;
    Picos t, end;
    bool closed;
    std::uint32_t name;  // index into names_
    std::uint32_t args_off, args_len;
    double value;
  };
  // A slice name as given and as a JSON string literal, made once: a trace
  // names a few dozen things a million times.
  struct Name {
    std::string raw, quoted;
  };
  struct TrackState {
    std::vector<Pending> pending;   // in order of their start
    std::vector<std::size_t> open;  // indices into pending of the open slices
    TextBuffer text;                // args of pending
  };
  std::uint32_t name_index(std::uint32_t id, std::string_view name);
  void add(TrackState& ts, const SliceRecord& e, std::string_view name, std::string_view args);
  void flush_track(std::uint32_t track, bool unterminated_at_end, Picos end);
  void write_event(std::uint32_t track, const Pending& p, std::string_view text, bool unterminated);

  TraceWindow window_;
  TraceOutput out_;
  TextBuffer& buf_;  // out_.buf()
  std::vector<int> pid_of_;
  std::vector<std::string> processes_;  // by pid - 1
  // Metadata lines of tracks (process and thread names, sort indices).
  void write_track_meta(const std::vector<Track>& tracks, std::size_t first_id, bool& first);
  std::vector<TrackState> tracks_;
  std::vector<Name> names_;
  // By the caller's name id (SliceRecord::name), the index in names_ it
  // last stood for (checked against the text: an id is only a hint).
  std::vector<std::uint32_t> by_id_;
  std::unordered_map<std::string, std::uint32_t> by_text_;
  std::uint64_t written_ = 0;
};

// The whole of an in-memory Recorder (no sink attached) at once.
void write_perfetto(const Recorder& rec, const std::string& path);

}  // namespace tpb::trace
