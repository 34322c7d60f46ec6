#include "models/trace/recorder.h"

#include "models/trace/trace_output.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

namespace tpb::trace {

namespace {

std::uint64_t width_mask(unsigned width) {
  return width >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << width) - 1);
}

// Engines are decoupled, so events arrive out of time order; a stable sort
// keeps those of one time in the order they were recorded, so the order is
// deterministic.
template <typename Event>
void sort_by_time(std::vector<Event>& v) {
  auto less = [](const Event& a, const Event& b) { return a.t < b.t; };
  if (!std::is_sorted(v.begin(), v.end(), less)) std::stable_sort(v.begin(), v.end(), less);
}

std::string last_component(const std::string& scope) {
  const std::size_t dot = scope.rfind('.');
  return dot == std::string::npos ? scope : scope.substr(dot + 1);
}

}  // namespace

// One flush's events (sorted, before the watermark) with their args text,
// for the sinks: delivered at once on the caller's thread, or handed to the
// writer thread with the names interned since the last batch.
struct Recorder::Batch {
  std::vector<ValueChange> changes;
  std::vector<SliceRecord> slices;
  std::string arena;                   // the slices' args
  std::vector<std::string> new_names;  // for the writer: names interned since the last batch
  std::vector<Track> new_tracks;       // tracks added since the last batch (after the start)
  // The first batch: the signals and tracks to start the sinks with (as
  // the recorder holds them at its first flush).
  bool start = false;
  std::vector<Signal> signals;
  std::vector<Track> tracks;

  // Empty again, keeping the capacity (a batch's buffers are reused).
  void clear() {
    changes.clear();
    slices.clear();
    arena.clear();
    new_names.clear();
    new_tracks.clear();
    start = false;
    signals.clear();
    tracks.clear();
  }
};

// A batch to the sinks, names by id from `names`.
void Recorder::deliver(const Batch& b, ChangeSink* changes, SliceSink* slices,
                       const std::vector<std::string>& names) {
  if (b.start) {
    if (changes) changes->start(b.signals);
    if (slices) slices->start(b.tracks);
  }
  if (slices && !b.new_tracks.empty()) slices->add_tracks(b.new_tracks);
  if (!b.changes.empty()) changes->changes(b.changes.data(), b.changes.size());
  const std::string_view arena(b.arena);
  char buf[kInstructionArgsMax];
  for (const SliceRecord& e : b.slices) {
    const std::string_view name =
        e.kind == SliceKind::End ? std::string_view() : std::string_view(names[e.name]);
    slices->event(e, name, args_of(e, arena, buf));
  }
}

std::string_view Recorder::args_of(const SliceRecord& e, std::string_view arena,
                                   char (&buf)[kInstructionArgsMax]) {
  if (e.args_form == SliceArgs::Text) return arena.substr(e.args_off, e.args_len);
  const std::uint64_t index = e.args_off | std::uint64_t{e.args_len} << 32;
  return {buf, instruction_args(buf, index, e.opcode)};
}

// Written by hand (a formatting library's general path cost more than the
// rest of the slice's recording): every instruction slice of a trace.
std::size_t instruction_args(char* out, std::uint64_t index, std::uint8_t opcode) {
  static constexpr char kHead[] = R"({"index":)";
  static constexpr char kOpcode[] = R"(,"opcode":"0x)";
  static constexpr char kHex[] = "0123456789abcdef";
  char* p = out;
  std::memcpy(p, kHead, sizeof kHead - 1);
  p += sizeof kHead - 1;
  p = write_decimal(p, index);
  std::memcpy(p, kOpcode, sizeof kOpcode - 1);
  p += sizeof kOpcode - 1;
  *p++ = kHex[opcode >> 4];
  *p++ = kHex[opcode & 15];
  *p++ = '"';
  *p++ = '}';
  return static_cast<std::size_t>(p - out);
}

// The sinks on a host thread: the recorder hands over each flush as a
// batch; the thread delivers them in order. At most kMaxBatches wait
// (double buffering), so a simulation faster than its trace files waits for
// them rather than hold the whole trace in memory.
class Recorder::Writer {
 public:
  Writer(ChangeSink* changes, SliceSink* slices)
      : changes_(changes), slices_(slices), thread_([this] { run(); }) {}
  // Not finished (a run left by an exception): the sinks may be gone.
  ~Writer() { abandon(); }

  // A delivered batch's buffers, cleared, for the next flush (or a new one).
  Batch spare() {
    std::lock_guard<std::mutex> l(m_);
    if (!spare_) return Batch{};
    Batch b = std::move(*spare_);
    spare_.reset();
    return b;
  }
  void push(Batch b) {
    std::unique_lock<std::mutex> l(m_);
    space_.wait(l, [&] { return q_.size() < kMaxBatches; });
    q_.push_back(std::move(b));
    l.unlock();
    ready_.notify_one();
  }
  // Every batch delivered; the thread ends. Rethrows what a sink threw.
  void finish() {
    stop();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }
  // The thread ends after the batch it is delivering; the rest is dropped.
  void abandon() {
    {
      std::lock_guard<std::mutex> l(m_);
      abandon_ = true;
    }
    stop();
  }

 private:
  static constexpr std::size_t kMaxBatches = 2;

  void stop() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    ready_.notify_one();
    if (thread_.joinable()) thread_.join();
  }
  void run() {
    for (;;) {
      Batch b;
      {
        std::unique_lock<std::mutex> l(m_);
        ready_.wait(l, [&] { return !q_.empty() || stop_; });
        if (q_.empty() || abandon_) return;
        b = std::move(q_.front());
        q_.pop_front();
      }
      space_.notify_one();
      if (error_) continue;  // a sink failed: the rest is dropped
      try {
        deliver(b);
      } catch (...) {
        error_ = std::current_exception();
      }
      // One delivered batch is kept for the recorder's next flush (one is
      // enough: the recorder takes it back once a flush).
      b.clear();
      std::lock_guard<std::mutex> l(m_);
      if (!spare_) spare_ = std::move(b);
    }
  }
  void deliver(const Batch& b) {
    names_.insert(names_.end(), b.new_names.begin(), b.new_names.end());
    Recorder::deliver(b, changes_, slices_, names_);
  }

  ChangeSink* changes_;
  SliceSink* slices_;
  std::vector<std::string> names_;
  std::exception_ptr error_;  // written and read by the thread; read after the join
  std::mutex m_;
  std::condition_variable ready_, space_;
  std::deque<Batch> q_;
  std::optional<Batch> spare_;
  bool stop_ = false, abandon_ = false;
  std::thread thread_;  // last: starts once the rest is built
};

namespace {
bool several_cores() {
  static const bool several = std::thread::hardware_concurrency() > 1;
  return several;
}
}  // namespace

Recorder::Recorder() : async_(several_cores()) {}
Recorder::~Recorder() = default;
Recorder::Recorder(Recorder&&) noexcept = default;
Recorder& Recorder::operator=(Recorder&&) noexcept = default;

bool Recorder::is_hidden(const std::string& name) const {
  return std::find(hidden_names_.begin(), hidden_names_.end(), name) != hidden_names_.end();
}

SignalId Recorder::add_signal(std::string scope, std::string name, unsigned width,
                              std::uint64_t initial) {
  if (width < 1 || width > 64)
    throw std::invalid_argument("trace signal '" + scope + "." + name + "': width " +
                                std::to_string(width) + " is outside 1..64");
  if (name.empty())
    throw std::invalid_argument("trace signal in scope '" + scope + "' has no name");
  if (started_)
    throw std::logic_error("trace signal '" + scope + "." + name +
                           "' added after the trace started streaming");
  const bool hidden = is_hidden(last_component(scope));
  signals_.push_back(
      Signal{std::move(scope), std::move(name), width, initial & width_mask(width), hidden});
  masks_.push_back(hidden ? 0 : width_mask(width));
  return SignalId{static_cast<std::uint32_t>(signals_.size() - 1)};
}

TrackId Recorder::add_track(std::string process, std::string thread, std::string hide_as,
                            TrackId after) {
  const bool hidden = is_hidden(hide_as.empty() ? thread : hide_as);
  std::uint64_t sort = 100 * (std::uint64_t{tracks_.size()} + 1);
  if (after.v < tracks_.size()) {
    // After `after` and the lanes already after it.
    sort = tracks_[after.v].sort_index;
    for (const Track& t : tracks_)
      if (t.sort_index / 100 == sort / 100) sort = std::max(sort, t.sort_index);
    ++sort;
  }
  tracks_.push_back(Track{std::move(process), std::move(thread), hidden, sort});
  return TrackId{static_cast<std::uint32_t>(tracks_.size() - 1)};
}

NameId Recorder::intern(std::string_view name) {
  const auto it = name_ids_.find(std::string(name));
  if (it != name_ids_.end()) return NameId{it->second};
  names_.emplace_back(name);
  const auto id = static_cast<std::uint32_t>(names_.size() - 1);
  name_ids_.emplace(names_.back(), id);
  return NameId{id};
}

void Recorder::unknown_signal(SignalId id) const {
  throw std::out_of_range("trace: set() on unknown signal id " + std::to_string(id.v) + " (" +
                          std::to_string(signals_.size()) + " signals registered)");
}

void Recorder::unknown_track(TrackId id) const {
  throw std::out_of_range("trace: slice event on unknown track id " + std::to_string(id.v) + " (" +
                          std::to_string(tracks_.size()) + " tracks registered)");
}

void Recorder::detach() {
  writer_.reset();  // ~Writer abandons: the thread ends after its current batch
  change_sink_ = nullptr;
  slice_sink_ = nullptr;
  arm();
}

void Recorder::attach(ChangeSink* changes, SliceSink* slices) {
  change_sink_ = changes;
  slice_sink_ = slices;
  writer_.reset();
  if (async_ && (changes || slices)) writer_ = std::make_unique<Writer>(changes, slices);
  arm();
}

void Recorder::set_watermark(std::function<Picos()> f) {
  watermark_ = std::move(f);
  arm();
}

void Recorder::arm() {
  flush_at_ = (change_sink_ || slice_sink_) && watermark_ ? kFlushAt : kNever;
}

void Recorder::flush_full() {
  const std::size_t before = changes_.size() + slices_.size();
  flush_before(watermark_());
  // Most events still ahead of the watermark (a long decoupled stretch):
  // wait for twice as many before sorting again, so flushing stays linear.
  const std::size_t left = changes_.size() + slices_.size();
  flush_at_ = left * 2 > before ? flush_at_ * 2 : kFlushAt;
}

void Recorder::flush_before(Picos watermark) {
  if (!writer_) {
    if (!spare_) spare_ = std::make_unique<Batch>();
    take_before(watermark, *spare_);
    deliver(*spare_, change_sink_, slice_sink_, names_);
    spare_->clear();
    return;
  }
  Batch b = writer_->spare();
  take_before(watermark, b);
  b.new_names.assign(names_.begin() + static_cast<std::ptrdiff_t>(names_sent_), names_.end());
  names_sent_ = names_.size();
  writer_->push(std::move(b));
}

void Recorder::take_before(Picos watermark, Batch& b) {
  if (!started_) {
    started_ = true;
    b.start = true;
    b.signals = signals_;
    b.tracks = tracks_;
    tracks_sent_ = tracks_.size();
  } else if (tracks_sent_ < tracks_.size()) {
    b.new_tracks.assign(tracks_.begin() + static_cast<std::ptrdiff_t>(tracks_sent_), tracks_.end());
    tracks_sent_ = tracks_.size();
  }
  // The buffers change hands rather than being copied: the batch takes the
  // recorder's vectors whole (its own cleared ones, with their capacity,
  // come back), and the few events at or past the watermark (the engines'
  // decoupled stretch) move back to the recorder.
  if (change_sink_) {
    if (!changes_sorted_) sort_by_time(changes_);
    changes_sorted_ = true;
    b.changes.swap(changes_);
    const auto first_later = std::partition_point(
        b.changes.begin(), b.changes.end(), [&](const ValueChange& c) { return c.t < watermark; });
    changes_.assign(first_later, b.changes.end());
    b.changes.erase(first_later, b.changes.end());
  }
  if (slice_sink_) {
    if (!slices_sorted_) sort_by_time(slices_);
    slices_sorted_ = true;
    b.slices.swap(slices_);
    b.arena.swap(arena_);
    slices_.clear();
    arena_.clear();
    const auto first_later = std::partition_point(
        b.slices.begin(), b.slices.end(), [&](const SliceRecord& e) { return e.t < watermark; });
    // The later events' args are copied to the front of the recorder's
    // arena; the batch's copy of them is never read.
    for (auto it = first_later; it != b.slices.end(); ++it) {
      SliceRecord e = *it;
      if (e.args_form == SliceArgs::Text) {
        e.args_off = static_cast<std::uint32_t>(arena_.size());
        arena_.append(b.arena, it->args_off, it->args_len);
      }
      slices_.push_back(e);
    }
    b.slices.erase(first_later, b.slices.end());
  }
}

void Recorder::finish(Picos end) {
  if (finished_) return;
  finished_ = true;
  if (!change_sink_ && !slice_sink_) {
    // In memory: cut what lies past the end.
    if (end != kForever) {
      changes_.erase(std::remove_if(changes_.begin(), changes_.end(),
                                    [&](const ValueChange& c) { return c.t > end; }),
                     changes_.end());
      slices_.erase(std::remove_if(slices_.begin(), slices_.end(),
                                   [&](const SliceRecord& e) { return e.t > end; }),
                    slices_.end());
      last_time_ = std::min(last_time_, end);
    }
    return;
  }
  // Deliver everything at or before `end` (the watermark is exclusive).
  flush_before(end == kForever ? end : end + 1);
  if (writer_) {
    // The sinks are the caller's again once the writer has delivered all.
    std::unique_ptr<Writer> w = std::move(writer_);
    w->finish();
  }
  changes_.clear();
  slices_.clear();
  arena_.clear();
  const Picos stop = std::min(end, last_time_);
  if (change_sink_) change_sink_->finish(stop);
  if (slice_sink_) slice_sink_->finish(stop);
}

std::vector<ValueChange> Recorder::sorted_changes() const {
  std::vector<ValueChange> out = changes_;
  sort_by_time(out);
  return out;
}

std::vector<SliceEvent> Recorder::sorted_slices() const {
  std::vector<SliceRecord> v = slices_;
  sort_by_time(v);
  std::vector<SliceEvent> out;
  out.reserve(v.size());
  char buf[kInstructionArgsMax];
  for (const SliceRecord& e : v)
    out.push_back(SliceEvent{e.t, e.track, e.kind,
                             e.kind == SliceKind::End ? std::string() : names_[e.name],
                             std::string(args_of(e, arena_, buf)), e.counter_value});
  return out;
}

}  // namespace tpb::trace
