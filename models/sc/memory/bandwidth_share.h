// The bandwidth of one memory shared by the initiators that stream through
// it (SPEC §10: the DMA queues of a core share its HBM bandwidth). Each
// transfer is a flow of bytes with a rate cap (its queue's bandwidth) and a
// weight (bytes of the shared bandwidth per byte moved: an HBM -> HBM copy
// reads and writes, 2). At every moment the rates are max-min fair: a flow
// whose cap lies below the fair level runs at its cap, the others share
// what is left equally, and the sum of weight x rate never exceeds the
// bandwidth. Rates change only when a flow starts or ends, so the time of
// every flow is exact (a fluid model), whatever the order in which
// temporally decoupled initiators run, because each flow starts at the
// calling thread's synchronised time.
//
// 16 queues of 38.4 GB/s on one 612.5 GB/s HBM: each runs at 612.5 / 16 =
// 38.28 GB/s while all 16 stream; 4 of them run at their cap.
//
// Groups (a device of several cores, SPEC §15): each flow belongs to a group
// (its core). With flows of more than one group in progress the bandwidth is
// shared max-min fairly among the groups first — a group's demand is the sum
// of its flows' weight x cap, a group whose demand lies below the fair level
// gets its demand, the others share what is left equally — and then within
// each group among its flows as above. With one group in progress (one busy
// core) that is exactly the one-level sharing.
#pragma once

#include <cstdint>
#include <list>
#include <vector>

#include <systemc>

namespace tpb::sc {

class BandwidthShare : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(BandwidthShare);
  // bytes_per_s: the shared bandwidth, > 0 (std::invalid_argument otherwise).
  BandwidthShare(sc_core::sc_module_name name, std::uint64_t bytes_per_s);

  // Moves `bytes` bytes through the shared bandwidth from now until the last
  // one is through, blocking the calling SC_THREAD (it must be synchronised:
  // sc_time_stamp() is the flow's start). cap_bytes_per_s: the flow's own
  // rate limit (0: none); weight >= 1. Returns the time the flow took.
  sc_core::sc_time transfer(std::uint64_t bytes, std::uint64_t cap_bytes_per_s, unsigned weight = 1,
                            unsigned group = 0);

  // A new bandwidth with the totals cleared, between runs (0:
  // std::invalid_argument). Flows still in progress belong to a run that
  // ended early (a fault, a watchdog's stop): they are dropped, their
  // threads released when the simulation runs again.
  void reset(std::uint64_t bytes_per_s);
  std::uint64_t bytes_per_s() const { return bytes_per_s_; }
  // Flows in progress now.
  std::size_t active_flows() const { return flows_.size(); }
  // Totals for stats: bytes of the shared bandwidth used (weight x bytes),
  // time with at least one flow, the most flows ever at once.
  std::uint64_t bytes_moved() const { return bytes_moved_; }
  sc_core::sc_time busy_time() const { return sc_core::sc_time::from_value(busy_ps_); }
  std::size_t peak_flows() const { return peak_flows_; }

 private:
  struct Flow {
    double remaining = 0;  // bytes still to move
    double cap = 0;        // bytes / s (infinity: none)
    unsigned weight = 1;
    unsigned group = 0;
    double rate = 0;  // bytes / s now
    sc_core::sc_event done;
  };

  void advance();     // every flow's progress up to sc_time_stamp()
  void retire();      // notify and drop the flows that have finished
  void reallocate();  // max-min fair rates
  // Water-filling of `bandwidth` over `flows` (max-min fair, weighted).
  static void fill(std::vector<Flow*> flows, double bandwidth);
  void schedule();  // the next completion
  void on_next();   // SC_METHOD on next_

  std::uint64_t bytes_per_s_;
  std::list<Flow> store_;     // every flow whose transfer() has not returned
  std::vector<Flow*> flows_;  // those still moving bytes
  std::uint64_t last_ps_ = 0;
  sc_core::sc_event next_;
  std::uint64_t bytes_moved_ = 0;
  std::uint64_t busy_ps_ = 0;
  std::size_t peak_flows_ = 0;
};

}  // namespace tpb::sc
