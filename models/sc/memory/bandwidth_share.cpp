#include "models/sc/memory/bandwidth_share.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace tpb::sc {

namespace {

constexpr double kPsPerSecond = 1e12;  // the model runs at a 1 ps resolution

}  // namespace

BandwidthShare::BandwidthShare(sc_core::sc_module_name name, std::uint64_t bytes_per_s)
    : sc_core::sc_module(name), bytes_per_s_(bytes_per_s) {
  if (bytes_per_s == 0)
    throw std::invalid_argument(std::string(this->name()) + ": bandwidth must not be 0");
  SC_METHOD(on_next);
  sensitive << next_;
  dont_initialize();
}

void BandwidthShare::reset(std::uint64_t bytes_per_s) {
  if (bytes_per_s == 0)
    throw std::invalid_argument(std::string(name()) + ": bandwidth must not be 0");
  // Flows of a run that ended early (a fault, a watchdog's stop) are dropped:
  // their threads wake when the simulation runs again and find their run over.
  for (Flow* f : flows_) f->done.notify(sc_core::SC_ZERO_TIME);
  flows_.clear();
  next_.cancel();
  bytes_per_s_ = bytes_per_s;
  bytes_moved_ = busy_ps_ = 0;
  peak_flows_ = 0;
  last_ps_ = sc_core::sc_time_stamp().value();
}

sc_core::sc_time BandwidthShare::transfer(std::uint64_t bytes, std::uint64_t cap_bytes_per_s,
                                          unsigned weight, unsigned group) {
  if (weight == 0) throw std::invalid_argument(std::string(name()) + ": flow weight 0");
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  if (bytes == 0) return sc_core::SC_ZERO_TIME;
  advance();
  retire();
  // The flow (and the event its thread waits on) belongs to the share, not
  // to this thread's stack: a run stopped while the flow moves bytes never
  // resumes the thread, and the share's destruction still frees it.
  const auto mine = store_.emplace(store_.end());
  Flow& f = *mine;
  f.remaining = static_cast<double>(bytes);
  f.cap = cap_bytes_per_s == 0 ? std::numeric_limits<double>::infinity()
                               : static_cast<double>(cap_bytes_per_s);
  f.weight = weight;
  f.group = group;
  flows_.push_back(&f);
  peak_flows_ = std::max(peak_flows_, flows_.size());
  bytes_moved_ += bytes * weight;
  reallocate();
  schedule();
  sc_core::wait(f.done);
  store_.erase(mine);
  return sc_core::sc_time_stamp() - start;
}

void BandwidthShare::advance() {
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  if (now <= last_ps_) return;
  const double dt = static_cast<double>(now - last_ps_) / kPsPerSecond;
  if (!flows_.empty()) busy_ps_ += now - last_ps_;
  for (Flow* f : flows_) f->remaining -= f->rate * dt;
  last_ps_ = now;
}

void BandwidthShare::retire() {
  // A flow is through when what is left would take under half a picosecond.
  const auto through = [](const Flow* f) { return f->remaining <= f->rate * (0.5 / kPsPerSecond); };
  std::vector<Flow*> keep;
  keep.reserve(flows_.size());
  for (Flow* f : flows_) {
    if (through(f))
      f->done.notify(sc_core::SC_ZERO_TIME);
    else
      keep.push_back(f);
  }
  if (keep.size() != flows_.size()) {
    flows_.swap(keep);
    reallocate();
  }
}

void BandwidthShare::reallocate() {
  bool one_group = true;
  for (const Flow* f : flows_) one_group = one_group && f->group == flows_.front()->group;
  if (one_group) {
    fill(flows_, static_cast<double>(bytes_per_s_));
    return;
  }
  // Groups first: each group's demand (weight x cap of its flows), water-
  // filled over the bandwidth with one share per group; then each group's
  // allocation over its own flows.
  struct Group {
    unsigned id;
    double demand = 0;
    std::vector<Flow*> flows;
  };
  std::vector<Group> groups;
  for (Flow* f : flows_) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& g) { return g.id == f->group; });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{f->group, 0, {}});
    it->demand += f->weight * f->cap;  // infinity when a flow has no cap
    it->flows.push_back(f);
  }
  // By demand, then group number: the result does not depend on the order
  // the flows arrived in.
  std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return a.demand != b.demand ? a.demand < b.demand : a.id < b.id;
  });
  double left = static_cast<double>(bytes_per_s_);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const double level = left / static_cast<double>(groups.size() - i);
    Group& g = groups[i];
    if (g.demand <= level) {
      for (Flow* f : g.flows) f->rate = f->cap;  // every flow at its cap
      left -= g.demand;
      continue;
    }
    for (std::size_t j = i; j < groups.size(); ++j) fill(groups[j].flows, level);
    break;
  }
}

void BandwidthShare::fill(std::vector<Flow*> order, double bandwidth) {
  // Water-filling over the flows sorted by cap (then weight): flows that tie
  // on both are interchangeable, so the rates do not depend on the order the
  // flows arrived in.
  std::sort(order.begin(), order.end(), [](const Flow* a, const Flow* b) {
    return a->cap != b->cap ? a->cap < b->cap : a->weight < b->weight;
  });
  double left = bandwidth;
  double weights = 0;
  for (const Flow* f : order) weights += f->weight;
  for (std::size_t i = 0; i < order.size(); ++i) {
    Flow* f = order[i];
    const double level = left / weights;
    if (f->cap <= level) {
      f->rate = f->cap;
      left -= f->weight * f->cap;
      weights -= f->weight;
      continue;
    }
    for (std::size_t j = i; j < order.size(); ++j) order[j]->rate = level;
    break;
  }
}

void BandwidthShare::schedule() {
  next_.cancel();
  if (flows_.empty()) return;
  double first = std::numeric_limits<double>::infinity();
  for (const Flow* f : flows_) first = std::min(first, f->remaining / f->rate * kPsPerSecond);
  // Whole picoseconds, rounded up (a millionth of a picosecond of floating
  // point noise is not a picosecond late).
  const double ps = std::max(0.0, std::ceil(first - 1e-6));
  next_.notify(sc_core::sc_time::from_value(static_cast<std::uint64_t>(ps)));
}

void BandwidthShare::on_next() {
  advance();
  retire();
  schedule();
}

}  // namespace tpb::sc
