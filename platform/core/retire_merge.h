// The retires of one run (SPEC §12, §15) delivered in one time order, (end,
// core, engine, index), for every core of the run: a retire is held until
// the global time has passed it (a fault may still come before it: then it
// is dropped), so a sink sees every record in time order whatever the
// quantum or the order the engine threads ran in. Every core of a run
// (platform::DeviceRun) pushes its retires here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "models/sc/engine/sequencer_observer.h"

namespace tpb::platform {

class RetireMerge {
 public:
  // sink: called for each retire delivered, in order (null: counted only,
  // and only a retire's end and core are held).
  using Sink = std::function<void(unsigned core, const sc::RetireRecord&)>;
  RetireMerge(unsigned cores, Sink sink)
      : sink_(std::move(sink)), retired_(cores, 0), ends_(sink_ ? 0 : cores) {}

  void push(unsigned core, const sc::RetireRecord& r) {
    if (!sink_) {
      ends_[core].push(r.end_ps);
      return;
    }
    Held h{core, r, {}};
    h.bundles.assign(r.bundles, r.bundles + r.num_bundles);
    h.r.bundles = nullptr;
    h.r.num_bundles = 0;
    held_.push(std::move(h));
  }
  // Delivers every held retire that ends before `before`.
  void commit(std::uint64_t before) {
    for (std::size_t c = 0; c < ends_.size(); ++c)
      for (Ends& e = ends_[c]; !e.empty() && e.top() < before; e.pop()) ++retired_[c];
    for (; !held_.empty() && held_.top().r.end_ps < before; held_.pop()) deliver(held_.top());
  }
  // At the run's end: each core's retires up to its stop (kForever: all),
  // the rest dropped.
  void commit_at_stop(const std::vector<std::uint64_t>& stop_ps) {
    for (std::size_t c = 0; c < ends_.size(); ++c)
      for (Ends& e = ends_[c]; !e.empty(); e.pop())
        if (e.top() <= stop_ps[c]) ++retired_[c];
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
    sc::RetireRecord r = h.r;
    r.core = h.core;
    r.bundles = h.bundles.data();
    r.num_bundles = h.bundles.size();
    sink_(h.core, r);
  }
  Sink sink_;
  std::vector<std::uint64_t> retired_;
  std::priority_queue<Held, std::vector<Held>, std::greater<Held>> held_;
  // Without a sink: each core's retires' ends, counted when committed.
  using Ends =
      std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<std::uint64_t>>;
  std::vector<Ends> ends_;
};

}  // namespace tpb::platform
