// The retires of the cores of a device (SPEC §15) delivered in one time
// order, (end, core, engine, index), as a single core delivers its own
// (TpbCore's hold): a retire is held until the global time has passed it (a
// fault may still come before it: then it is dropped), so a sink sees every
// core's records interleaved in time order whatever order the cores' threads
// ran in. Each core, in a device run, pushes its retires here instead of into
// its own hold.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

#include "models/sc/engine/sequencer_observer.h"

namespace tpb::platform {

class RetireMerge {
 public:
  // sink: called for each retire delivered, in order (null: counted only).
  using Sink = std::function<void(unsigned core, const sc::RetireRecord&)>;
  RetireMerge(unsigned cores, Sink sink) : sink_(std::move(sink)), retired_(cores, 0) {}

  void push(unsigned core, const sc::RetireRecord& r) {
    Held h{core, r, {}};
    if (sink_) h.bundles.assign(r.bundles, r.bundles + r.num_bundles);
    h.r.bundles = nullptr;
    h.r.num_bundles = 0;
    held_.push(std::move(h));
  }
  // Delivers every held retire that ends before `before`.
  void commit(std::uint64_t before) {
    while (!held_.empty() && held_.top().r.end_ps < before) {
      deliver(held_.top());
      held_.pop();
    }
  }
  // At the run's end: each core's retires up to its stop (kForever: all),
  // the rest dropped.
  void commit_at_stop(const std::vector<std::uint64_t>& stop_ps) {
    for (; !held_.empty(); held_.pop())
      if (held_.top().r.end_ps <= stop_ps[held_.top().core]) deliver(held_.top());
  }
  std::uint64_t retired(unsigned core) const { return retired_[core]; }

 private:
  struct Held {
    unsigned core;
    sc::RetireRecord r;
    std::vector<sc::BundleRecord> bundles;
    bool operator>(const Held& o) const {
      return std::tie(r.end_ps, core, r.engine, r.index) >
             std::tie(o.r.end_ps, o.core, o.r.engine, o.r.index);
    }
  };
  void deliver(const Held& h) {
    ++retired_[h.core];
    if (!sink_) return;
    sc::RetireRecord r = h.r;
    r.core = h.core;
    r.bundles = h.bundles.data();
    r.num_bundles = h.bundles.size();
    sink_(h.core, r);
  }
  Sink sink_;
  std::vector<std::uint64_t> retired_;
  std::priority_queue<Held, std::vector<Held>, std::greater<Held>> held_;
};

}  // namespace tpb::platform
