// Timestamped trace recorder (pure C++, no SystemC).
//
// Engines run temporally decoupled, so a value change is recorded with its own
// time (global time + the engine's local offset) rather than sampled by the
// kernel. Events are buffered and written, sorted by time, by the VCD and
// Perfetto writers (vcd_writer.h, perfetto_writer.h), also after a fault.
// A disabled recorder costs one branch per call.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tpb::trace {

using Picos = std::uint64_t;  // simulated time in picoseconds

struct SignalId {
  std::uint32_t v = UINT32_MAX;
};
struct TrackId {
  std::uint32_t v = UINT32_MAX;
};

struct Signal {
  std::string scope;  // dotted scope, e.g. "tpb.pool"
  std::string name;   // e.g. "busy"
  unsigned width;     // bits, 1..64
  std::uint64_t initial;
};

struct ValueChange {
  Picos t;
  std::uint32_t signal;
  std::uint64_t value;
  std::uint64_t seq;  // insertion order, keeps equal-time changes stable
};

enum class SliceKind : std::uint8_t { Begin, End, Instant, Counter };
struct SliceEvent {
  Picos t;
  std::uint32_t track;
  SliceKind kind;
  std::string name;  // slice / marker name; counter name for Counter
  std::string args;  // JSON object text for "args" (may be empty)
  double counter_value;
  std::uint64_t seq;
};

struct Track {
  std::string process;  // Perfetto process name (e.g. "tpb core")
  std::string thread;   // Perfetto thread name (e.g. "pool")
};

class Recorder {
 public:
  // Each output is enabled independently; a disabled one drops its events.
  void enable_signals(bool on) { signals_on_ = on; }
  void enable_slices(bool on) { slices_on_ = on; }
  bool signals_enabled() const { return signals_on_; }
  bool slices_enabled() const { return slices_on_; }

  SignalId add_signal(std::string scope, std::string name, unsigned width,
                      std::uint64_t initial = 0);
  void set(SignalId id, Picos t, std::uint64_t value) {
    if (signals_on_) record_change(id, t, value);
  }

  TrackId add_track(std::string process, std::string thread);
  void begin(TrackId id, Picos t, std::string_view name, std::string_view args_json = {}) {
    if (slices_on_) record_slice(id, t, SliceKind::Begin, name, args_json, 0.0);
  }
  void end(TrackId id, Picos t) {
    if (slices_on_) record_slice(id, t, SliceKind::End, {}, {}, 0.0);
  }
  void instant(TrackId id, Picos t, std::string_view name, std::string_view args_json = {}) {
    if (slices_on_) record_slice(id, t, SliceKind::Instant, name, args_json, 0.0);
  }
  void counter(TrackId id, Picos t, std::string_view name, double value) {
    if (slices_on_) record_slice(id, t, SliceKind::Counter, name, {}, value);
  }

  const std::vector<Signal>& signals() const { return signals_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  // Changes and slices sorted by (time, insertion order).
  std::vector<ValueChange> sorted_changes() const;
  std::vector<SliceEvent> sorted_slices() const;
  Picos last_time() const { return last_time_; }

 private:
  void record_change(SignalId id, Picos t, std::uint64_t value);
  void record_slice(TrackId id, Picos t, SliceKind kind, std::string_view name,
                    std::string_view args, double value);

  bool signals_on_ = false;
  bool slices_on_ = false;
  std::uint64_t seq_ = 0;
  Picos last_time_ = 0;
  std::vector<Signal> signals_;
  std::vector<ValueChange> changes_;
  std::vector<Track> tracks_;
  std::vector<SliceEvent> slices_;
};

}  // namespace tpb::trace
