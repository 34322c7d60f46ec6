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

// The file's format, what is written and what is dropped: docs/TRACES.md
// ("What the writer writes"). The constructor throws std::runtime_error
// naming the path when the file cannot be created; later write errors are
// kept (error()). A streaming sink (Recorder::attach): written as the run
// goes, in memory bounded by what one top-level slice holds.
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
