#include "models/trace/recorder.h"

#include <algorithm>
#include <stdexcept>

namespace tpb::trace {

namespace {

// First growth step: enough for a short program without a reallocation, small
// enough not to matter when the recorder is enabled but barely used.
constexpr std::size_t kInitialReserve = 4096;

std::uint64_t width_mask(unsigned width) {
  return width >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << width) - 1);
}

// Engines are decoupled, so events arrive out of time order; seq is unique,
// so (t, seq) is a total order and the sort is deterministic.
template <typename Event>
void sort_by_time(std::vector<Event>& v) {
  auto less = [](const Event& a, const Event& b) { return a.t != b.t ? a.t < b.t : a.seq < b.seq; };
  if (!std::is_sorted(v.begin(), v.end(), less)) std::sort(v.begin(), v.end(), less);
}

std::string last_component(const std::string& scope) {
  const std::size_t dot = scope.rfind('.');
  return dot == std::string::npos ? scope : scope.substr(dot + 1);
}

}  // namespace

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
  return SignalId{static_cast<std::uint32_t>(signals_.size() - 1)};
}

TrackId Recorder::add_track(std::string process, std::string thread) {
  if (started_)
    throw std::logic_error("trace track '" + thread + "' added after the trace started streaming");
  const bool hidden = is_hidden(thread);
  tracks_.push_back(Track{std::move(process), std::move(thread), hidden});
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

void Recorder::record_change(SignalId id, Picos t, std::uint64_t value) {
  if (id.v >= signals_.size())
    throw std::out_of_range("trace: set() on unknown signal id " + std::to_string(id.v) + " (" +
                            std::to_string(signals_.size()) + " signals registered)");
  const Signal& s = signals_[id.v];
  if (s.hidden) return;
  if (changes_.capacity() == 0) changes_.reserve(kInitialReserve);
  changes_.push_back(ValueChange{t, id.v, value & width_mask(s.width), seq_++});
  ++changes_recorded_;
  last_time_ = std::max(last_time_, t);
  maybe_flush();
}

void Recorder::record_slice(TrackId id, Picos t, SliceKind kind, std::uint32_t name,
                            std::string_view args, double value) {
  if (id.v >= tracks_.size())
    throw std::out_of_range("trace: slice event on unknown track id " + std::to_string(id.v) +
                            " (" + std::to_string(tracks_.size()) + " tracks registered)");
  if (tracks_[id.v].hidden) return;
  if (slices_.capacity() == 0) slices_.reserve(kInitialReserve);
  const auto off = static_cast<std::uint32_t>(arena_.size());
  arena_.append(args.data(), args.size());
  slices_.push_back(SliceRecord{t, seq_++, id.v, kind, name, off,
                                static_cast<std::uint32_t>(args.size()), value});
  ++slices_recorded_;
  last_time_ = std::max(last_time_, t);
  maybe_flush();
}

void Recorder::attach(ChangeSink* changes, SliceSink* slices) {
  change_sink_ = changes;
  slice_sink_ = slices;
}

void Recorder::maybe_flush() {
  if ((!change_sink_ && !slice_sink_) || !watermark_) return;
  if (changes_.size() + slices_.size() < flush_at_) return;
  const std::size_t before = changes_.size() + slices_.size();
  flush_before(watermark_());
  // Most events still ahead of the watermark (a long decoupled stretch):
  // wait for twice as many before sorting again, so flushing stays linear.
  const std::size_t left = changes_.size() + slices_.size();
  flush_at_ = left * 2 > before ? flush_at_ * 2 : kFlushAt;
}

void Recorder::flush_before(Picos watermark) {
  if (!started_) {
    started_ = true;
    if (change_sink_) change_sink_->start(signals_);
    if (slice_sink_) slice_sink_->start(tracks_);
  }
  if (change_sink_) {
    sort_by_time(changes_);
    std::size_t k = 0;
    for (; k < changes_.size() && changes_[k].t < watermark; ++k) change_sink_->change(changes_[k]);
    changes_.erase(changes_.begin(), changes_.begin() + static_cast<std::ptrdiff_t>(k));
  }
  if (slice_sink_) {
    sort_by_time(slices_);
    std::size_t k = 0;
    for (; k < slices_.size() && slices_[k].t < watermark; ++k) {
      const SliceRecord& e = slices_[k];
      const std::string_view name =
          e.kind == SliceKind::End ? std::string_view() : std::string_view(names_[e.name]);
      slice_sink_->event(e, name, std::string_view(arena_).substr(e.args_off, e.args_len));
    }
    slices_.erase(slices_.begin(), slices_.begin() + static_cast<std::ptrdiff_t>(k));
    // Compact the arena: the kept events' args move to its front.
    std::string kept;
    for (SliceRecord& e : slices_) {
      const std::uint32_t off = static_cast<std::uint32_t>(kept.size());
      kept.append(arena_, e.args_off, e.args_len);
      e.args_off = off;
    }
    arena_.swap(kept);
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
  for (const SliceRecord& e : v)
    out.push_back(SliceEvent{e.t, e.track, e.kind,
                             e.kind == SliceKind::End ? std::string() : names_[e.name],
                             arena_.substr(e.args_off, e.args_len), e.counter_value, e.seq});
  return out;
}

}  // namespace tpb::trace
