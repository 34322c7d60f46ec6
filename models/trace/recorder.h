// Timestamped trace recorder (pure C++, no SystemC).
//
// Engines run temporally decoupled, so a value change is recorded with its own
// time (global time + the engine's local offset) rather than sampled by the
// kernel, and events arrive out of time order. The recorder buffers them and,
// once the platform's watermark (the global time: no event can still come
// before it) has passed them, hands them sorted by (time, insertion order) to
// streaming sinks (the VCD and Perfetto writers, vcd_writer.h and
// perfetto_writer.h) that write them to disk at once. Memory stays bounded by
// the decoupling window, whatever the run's length. Without a sink attached
// the recorder keeps every event (sorted_changes(), sorted_slices()).
// A disabled recorder costs one branch per call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tpb::trace {

using Picos = std::uint64_t;  // simulated time in picoseconds
inline constexpr Picos kForever = ~Picos{0};

struct SignalId {
  std::uint32_t v = UINT32_MAX;
};
struct TrackId {
  std::uint32_t v = UINT32_MAX;
};
struct NameId {
  std::uint32_t v = UINT32_MAX;
};

// The names a core's traces go under: VCD scopes below `scope`, Perfetto
// tracks in the processes `process` (engines, semaphores, SFU flags) and
// `dma_process` (the DMA engines). One core: "tpb", "tpb core", "tpb dma
// engines"; core K of a device of several (SPEC §15): "tpb.coreK", "coreK",
// "coreK dma engines".
struct TraceNames {
  std::string scope = "tpb";
  std::string process = "tpb core";
  std::string dma_process = "tpb dma engines";
  static TraceNames of_core(unsigned core) {
    const std::string k = "core" + std::to_string(core);
    return TraceNames{"tpb." + k, k, k + " dma engines"};
  }
};

struct Signal {
  std::string scope;  // dotted scope, e.g. "tpb.pool"
  std::string name;   // e.g. "busy"
  unsigned width;     // bits, 1..64
  std::uint64_t initial;
  bool hidden = false;  // cut by hide(): never written
};

// Events are kept in the order they were recorded and sorted stably by
// time: of events at one time, the one recorded first comes first. (No
// sequence number: 24 bytes a change, not 32.)
struct ValueChange {
  Picos t;
  std::uint64_t value;
  std::uint32_t signal;
};

enum class SliceKind : std::uint8_t { Begin, End, Instant, Counter };

// How a slice event's args are held.
enum class SliceArgs : std::uint8_t {
  Text,  // args_len bytes of the recorder's arena from args_off
  // An instruction slice's {"index":N,"opcode":"0xHH"}: N's low half in
  // args_off, its high half in args_len, the opcode in `opcode`; the text
  // is made when the event is delivered (on the writer thread, when there
  // is one), not a million times on the simulation's.
  Instruction,
};

// A slice event as stored: name interned, args in the recorder's arena (or
// numbers, see SliceArgs).
struct SliceRecord {
  Picos t;
  std::uint32_t track;
  SliceKind kind;
  SliceArgs args_form;
  std::uint8_t opcode;  // SliceArgs::Instruction
  std::uint32_t name;   // NameId::v (unused for End)
  std::uint32_t args_off, args_len;
  double counter_value;
};

// An instruction slice's args text, {"index":N,"opcode":"0xHH"}, at `out`
// (room for kInstructionArgsMax bytes); returns its length.
constexpr std::size_t kInstructionArgsMax = 48;
std::size_t instruction_args(char* out, std::uint64_t index, std::uint8_t opcode);

// A slice event with its strings (what sorted_slices() returns).
struct SliceEvent {
  Picos t;
  std::uint32_t track;
  SliceKind kind;
  std::string name;  // slice / marker name; counter name for Counter
  std::string args;  // JSON object text for "args" (may be empty)
  double counter_value;
};

struct Track {
  std::string process;  // Perfetto process name (e.g. "tpb core")
  std::string thread;   // Perfetto thread name (e.g. "pool")
  bool hidden = false;  // cut by hide()
  // Where it sorts among its process's tracks (Perfetto thread_sort_index):
  // 100 x (its index + 1), or a lane's place after the track it extends.
  std::uint64_t sort_index = 0;
};

// Receives value changes in (time, insertion) order.
class ChangeSink {
 public:
  virtual ~ChangeSink() = default;
  // Before the first change: every signal (hidden ones included, flagged).
  virtual void start(const std::vector<Signal>& signals) = 0;
  virtual void change(const ValueChange& c) = 0;
  // A run of changes in order: change() for each, unless the sink takes
  // them at once (a virtual call per change is a tenth of a VCD's cost).
  virtual void changes(const ValueChange* c, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) change(c[i]);
  }
  // The run ended at `end` (nothing after it was delivered).
  virtual void finish(Picos end) = 0;
};

// Receives slice events in (time, insertion) order; name and args are valid
// during the call.
class SliceSink {
 public:
  virtual ~SliceSink() = default;
  virtual void start(const std::vector<Track>& tracks) = 0;
  // Tracks added after the start, in order: their ids follow the others'.
  // Told before any event on them.
  virtual void add_tracks(const std::vector<Track>& tracks) = 0;
  virtual void event(const SliceRecord& e, std::string_view name, std::string_view args) = 0;
  virtual void finish(Picos end) = 0;
};

class Recorder {
 public:
  Recorder();
  ~Recorder();
  Recorder(Recorder&&) noexcept;
  Recorder& operator=(Recorder&&) noexcept;

  // Each output is enabled independently; a disabled one drops its events.
  void enable_signals(bool on) { signals_on_ = on; }
  void enable_slices(bool on) { slices_on_ = on; }
  bool signals_enabled() const { return signals_on_; }
  bool slices_enabled() const { return slices_on_; }
  // --trace-level: with bundles off, engines record instructions only.
  void enable_bundles(bool on) { bundles_on_ = on; }
  bool bundles_enabled() const { return bundles_on_; }

  // --trace-engines: signals whose scope's last component is `name`, and
  // tracks whose thread is `name`, registered after this call are cut.
  void hide(std::string name) { hidden_names_.push_back(std::move(name)); }

  SignalId add_signal(std::string scope, std::string name, unsigned width,
                      std::uint64_t initial = 0);
  void set(SignalId id, Picos t, std::uint64_t value) {
    if (signals_on_) record_change(id, t, value);
  }

  // A track may be added while the trace streams (a lane of an engine whose
  // instructions overlap): the sinks hear of it before its first event.
  // `hide_as`: the name --trace-engines matches (default: the thread's);
  // `after`: a lane sorts right after this track (default: at the end).
  TrackId add_track(std::string process, std::string thread, std::string hide_as = {},
                    TrackId after = {});
  // Names of slices: intern once, record by id (no string per event).
  NameId intern(std::string_view name);
  void begin(TrackId id, Picos t, NameId name, std::string_view args_json = {}) {
    if (slices_on_) record_slice(id, t, SliceKind::Begin, name.v, args_json, 0.0);
  }
  // An instruction's slice, args {"index":N,"opcode":"0xHH"} (made when
  // delivered: SliceArgs::Instruction).
  void begin_instruction(TrackId id, Picos t, NameId name, std::uint64_t index,
                         std::uint8_t opcode) {
    if (!slices_on_) return;
    SliceRecord* e = new_slice(id, t, SliceKind::Begin, name.v, 0.0);
    if (!e) return;
    e->args_form = SliceArgs::Instruction;
    e->opcode = opcode;
    e->args_off = static_cast<std::uint32_t>(index);
    e->args_len = static_cast<std::uint32_t>(index >> 32);
    note_time(t);
  }
  void begin(TrackId id, Picos t, std::string_view name, std::string_view args_json = {}) {
    if (slices_on_) record_slice(id, t, SliceKind::Begin, intern(name).v, args_json, 0.0);
  }
  void end(TrackId id, Picos t) {
    if (slices_on_) record_slice(id, t, SliceKind::End, UINT32_MAX, {}, 0.0);
  }
  void instant(TrackId id, Picos t, std::string_view name, std::string_view args_json = {}) {
    if (slices_on_) record_slice(id, t, SliceKind::Instant, intern(name).v, args_json, 0.0);
  }
  void counter(TrackId id, Picos t, NameId name, double value) {
    if (slices_on_) record_slice(id, t, SliceKind::Counter, name.v, {}, value);
  }
  void counter(TrackId id, Picos t, std::string_view name, double value) {
    if (slices_on_) record_slice(id, t, SliceKind::Counter, intern(name).v, {}, value);
  }

  // Streaming: sinks get every event once the watermark has passed it. The
  // watermark function returns a time before which no event can still be
  // recorded (the platform's global time). Attach before the run.
  // With two or more host cores the sinks run on a host thread of their own
  // (formatting and writing the files while the simulation goes on): each
  // sink gets the same calls in the same order as without it, so the files
  // are the same bytes. set_async(false) before attach() keeps them on the
  // caller's thread.
  void attach(ChangeSink* changes, SliceSink* slices);
  void set_async(bool on) { async_ = on; }
  // Stops using the sinks at once (a run left by an exception, before its
  // sinks go): the writer thread ends after the batch it is delivering,
  // undelivered events are dropped, nothing is finished.
  void detach();
  bool async() const { return writer_ != nullptr; }
  void set_watermark(std::function<Picos()> f);
  // Ends the recording at `end`: delivers every event at or before it, drops
  // later ones (a fault's time: nothing is recorded past it) and finishes
  // the sinks. Call once, after the run.
  void finish(Picos end);

  const std::vector<Signal>& signals() const { return signals_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  // Without sinks: changes and slices sorted by (time, insertion order).
  std::vector<ValueChange> sorted_changes() const;
  std::vector<SliceEvent> sorted_slices() const;
  Picos last_time() const { return last_time_; }
  // Events recorded (after the cuts of hide(); before the window's).
  std::uint64_t changes_recorded() const { return changes_recorded_; }
  std::uint64_t slices_recorded() const { return slices_recorded_; }

 private:
  // Inline: every engine event of a traced run comes through these.
  void record_change(SignalId id, Picos t, std::uint64_t value) {
    if (id.v >= masks_.size()) unknown_signal(id);
    const std::uint64_t mask = masks_[id.v];
    if (mask == 0) return;  // hidden
    // Field by field in place: a temporary built by narrower stores and
    // copied by wider loads stalls on store forwarding.
    ValueChange& c = !changes_.empty() && t < changes_.back().t
                         ? place_late(changes_, t, changes_sorted_)
                         : changes_.emplace_back();
    c.t = t;
    c.signal = id.v;
    c.value = value & mask;
    ++changes_recorded_;
    note_time(t);
  }
  void record_slice(TrackId id, Picos t, SliceKind kind, std::uint32_t name, std::string_view args,
                    double value) {
    const auto off = static_cast<std::uint32_t>(arena_.size());
    SliceRecord* e = new_slice(id, t, kind, name, value);
    if (!e) return;
    arena_.append(args.data(), args.size());
    e->args_off = off;
    e->args_len = static_cast<std::uint32_t>(args.size());
    note_time(t);
  }
  // A slice event with no args yet, or nullptr for a hidden track.
  SliceRecord* new_slice(TrackId id, Picos t, SliceKind kind, std::uint32_t name, double value) {
    if (id.v >= tracks_.size()) unknown_track(id);
    if (tracks_[id.v].hidden) return nullptr;
    SliceRecord& e = !slices_.empty() && t < slices_.back().t
                         ? place_late(slices_, t, slices_sorted_)
                         : slices_.emplace_back();
    e.t = t;
    e.track = id.v;
    e.kind = kind;
    e.args_form = SliceArgs::Text;
    e.opcode = 0;
    e.name = name;
    e.args_off = 0;
    e.args_len = 0;
    e.counter_value = value;
    ++slices_recorded_;
    return &e;
  }
  // A new element of `v` (time-ordered so far) for an event at t, earlier
  // than the last: inserted after the events of time <= t when it is among
  // the last kNearLate (a retire recorded at its issue, then the next
  // issues; the order a stable sort by time would give), else appended and
  // `sorted` cleared (a decoupled engine far behind: sorted at the flush).
  template <typename Event>
  static Event& place_late(std::vector<Event>& v, Picos t, bool& sorted) {
    constexpr std::size_t kNearLate = 32;
    if (!sorted) return v.emplace_back();  // sorted at the flush anyway
    std::size_t at = v.size();
    while (at > 0 && v[at - 1].t > t && v.size() - at < kNearLate) --at;
    if (at > 0 && v[at - 1].t > t) {
      sorted = false;
      return v.emplace_back();
    }
    return *v.emplace(v.begin() + static_cast<std::ptrdiff_t>(at));
  }
  void note_time(Picos t) {
    if (t > last_time_) last_time_ = t;
    if (changes_.size() + slices_.size() >= flush_at_) flush_full();
  }
  [[noreturn]] void unknown_signal(SignalId id) const;
  [[noreturn]] void unknown_track(TrackId id) const;
  bool is_hidden(const std::string& name) const;
  // Streaming (sinks and a watermark): flush at kFlushAt events; else never.
  void arm();
  void flush_full();
  // Delivers the events before the watermark to the sinks, or hands them to
  // the writer thread.
  void flush_before(Picos watermark);

  bool signals_on_ = false;
  bool slices_on_ = false;
  bool bundles_on_ = true;
  Picos last_time_ = 0;
  std::vector<std::string> hidden_names_;
  std::vector<Signal> signals_;
  std::vector<std::uint64_t> masks_;  // by signal: its width's mask, 0 if hidden
  std::vector<ValueChange> changes_;
  bool changes_sorted_ = true, slices_sorted_ = true;  // in time order as recorded
  std::vector<Track> tracks_;
  std::size_t tracks_sent_ = 0;  // tracks the sinks know of
  std::vector<SliceRecord> slices_;
  std::string arena_;  // args text of the buffered slices
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
  std::uint64_t changes_recorded_ = 0, slices_recorded_ = 0;

  ChangeSink* change_sink_ = nullptr;
  SliceSink* slice_sink_ = nullptr;
  bool started_ = false, finished_ = false;
  std::function<Picos()> watermark_;
  static constexpr std::size_t kFlushAt = 1 << 15;
  static constexpr std::size_t kNever = ~std::size_t{0};
  std::size_t flush_at_ = kNever;
  bool async_;
  struct Batch;                                   // one flush's events for the sinks (recorder.cpp)
  class Writer;                                   // the sinks' host thread (recorder.cpp)
  void take_before(Picos watermark, Batch& out);  // sorted, with their args
  // e's args as text: the arena's bytes, or made in `buf`.
  static std::string_view args_of(const SliceRecord& e, std::string_view arena,
                                  char (&buf)[kInstructionArgsMax]);
  static void deliver(const Batch& b, ChangeSink* changes, SliceSink* slices,
                      const std::vector<std::string>& names);
  std::unique_ptr<Writer> writer_;
  std::unique_ptr<Batch> spare_;  // without the writer: one batch, reused
  std::size_t names_sent_ = 0;    // names_ the writer has
};

}  // namespace tpb::trace
