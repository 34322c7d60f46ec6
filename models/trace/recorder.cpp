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

template <typename Event>
std::vector<Event> sorted_by_time(const std::vector<Event>& in) {
  std::vector<Event> out = in;
  // Engines are decoupled, so events arrive out of time order; seq is unique,
  // so (t, seq) is a total order and the sort is deterministic.
  auto less = [](const Event& a, const Event& b) { return a.t != b.t ? a.t < b.t : a.seq < b.seq; };
  if (!std::is_sorted(out.begin(), out.end(), less)) std::sort(out.begin(), out.end(), less);
  return out;
}

}  // namespace

SignalId Recorder::add_signal(std::string scope, std::string name, unsigned width,
                              std::uint64_t initial) {
  if (width < 1 || width > 64)
    throw std::invalid_argument("trace signal '" + scope + "." + name + "': width " +
                                std::to_string(width) + " is outside 1..64");
  if (name.empty())
    throw std::invalid_argument("trace signal in scope '" + scope + "' has no name");
  signals_.push_back(Signal{std::move(scope), std::move(name), width, initial & width_mask(width)});
  return SignalId{static_cast<std::uint32_t>(signals_.size() - 1)};
}

TrackId Recorder::add_track(std::string process, std::string thread) {
  tracks_.push_back(Track{std::move(process), std::move(thread)});
  return TrackId{static_cast<std::uint32_t>(tracks_.size() - 1)};
}

void Recorder::record_change(SignalId id, Picos t, std::uint64_t value) {
  if (id.v >= signals_.size())
    throw std::out_of_range("trace: set() on unknown signal id " + std::to_string(id.v) + " (" +
                            std::to_string(signals_.size()) + " signals registered)");
  if (changes_.capacity() == 0) changes_.reserve(kInitialReserve);
  changes_.push_back(ValueChange{t, id.v, value & width_mask(signals_[id.v].width), seq_++});
  last_time_ = std::max(last_time_, t);
}

void Recorder::record_slice(TrackId id, Picos t, SliceKind kind, std::string_view name,
                            std::string_view args, double value) {
  if (id.v >= tracks_.size())
    throw std::out_of_range("trace: slice event on unknown track id " + std::to_string(id.v) +
                            " (" + std::to_string(tracks_.size()) + " tracks registered)");
  if (slices_.capacity() == 0) slices_.reserve(kInitialReserve);
  slices_.push_back(SliceEvent{t, id.v, kind, std::string(name), std::string(args), value, seq_++});
  last_time_ = std::max(last_time_, t);
}

std::vector<ValueChange> Recorder::sorted_changes() const { return sorted_by_time(changes_); }

std::vector<SliceEvent> Recorder::sorted_slices() const { return sorted_by_time(slices_); }

}  // namespace tpb::trace
