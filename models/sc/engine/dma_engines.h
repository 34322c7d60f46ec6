// A core's DMA engines (SPEC §10, TIMING.md [J, K]): `dma.engines` engines
// (16), each serving the core's 16 queues. A queue's sequencer submits a
// transfer (a checked DMA descriptor); the transfer is split over the
// engines by SBUF partition (engine e carries partitions e*n .. e*n+n-1,
// n = 128 / engines; SBUF -> SBUF by the destination partition; HBM -> HBM
// rows dealt round robin), and each engine:
//  - takes one transfer at a time from its queues, weighted round robin
//    (dma.queue_weights), in queue order within a queue (transfers of one
//    queue are ordered per engine, as on hardware). An SBUF -> SBUF
//    transfer with a row whose destination partition another engine
//    carries is a part on every engine of a partition it reads or writes
//    (SPEC §10: ordered "for every SBUF partition a transfer reads or
//    writes"): its engines take it together — it moves once each of them
//    has reached it in its queue, and each holds that queue until all of
//    its shares have moved (an engine with no rows of it spends nothing);
//  - starts it no earlier than the semaphore-to-start latency after its
//    submission (dma.latency_ns: a latency, overlapped by back-to-back
//    transfers), and no earlier than dma.transfer_cost_ns after the start
//    of the previous share of the same queue on this engine (the queue's
//    per-transfer cost: each queue's overlaps the other queues' data, so
//    it bounds the rate of one queue's transfers, not the engine's);
//  - spends dma.engine_cost_ns on it when its last share was another
//    queue's (the engine's work on a descriptor ring it was not reading:
//    the next descriptor of the same ring is fetched while the current one
//    moves), then moves its share at its bandwidth (dma.mbytes_per_s) as one flow
//    of the HBM's BandwidthShare when HBM is an endpoint, so the HBM
//    bandwidth caps the sum of the engines' rates;
//  - lands it a fill later (the endpoints' access latencies); it is busy
//    with it from its start to its last byte (engines with no data of a
//    transfer spend nothing on it).
// docs/CONVENTIONS.md "DMA" says which public figure fits each cost.
// A transfer completes when its last engine's share lands; the queue's
// sequencer then updates its semaphore and retires it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/isa/encodings.h"
#include "models/sc/engine/busy_union.h"
#include "models/sc/engine/dma_check.h"
#include "models/sc/engine/run_control.h"
#include "models/sc/engine/timing_config.h"
#include "models/sc/memory/bandwidth_share.h"
#include "models/sc/memory/mem_port.h"
#include "models/trace/stats.h"

namespace tpb::race {
class Detector;
}

namespace tpb::sc {

// One submitted transfer, owned by the queue that submitted it until it
// completes (DmaEngines::Client::transfer_done).
struct DmaTransfer {
  unsigned queue = 0;       // 0..15
  std::uint64_t index = 0;  // the descriptor's index in its queue
  isa::DmaDescriptor desc{};
  std::uint64_t fetch_ps = 0, fetched_ps = 0;  // its descriptor's fetch (the retire record's)
  std::uint64_t issue_ps = 0;  // submitted (the queue's time, relative to the core's origin)
  std::uint64_t ready_ps = 0;  // may start: issue + the semaphore-to-start latency
  std::uint64_t done_ps = 0;   // the latest landing of its shares so far
  unsigned shares_left = 0;    // engines still to move their share
  // An SBUF -> SBUF transfer its engines take together (DmaEngines): the
  // engines of its parts (those with rows and those it only writes), and
  // how many have reached it; empty for any other transfer.
  std::vector<unsigned> part_engines;
  unsigned arrived = 0;
  std::uint64_t bytes = 0;
  std::uint64_t hbm_bytes = 0;  // bytes of HBM bandwidth it uses (a copy both ways: 2x)
};

// What an engine did with one share of a transfer (stats and traces).
struct DmaShareRecord {
  unsigned engine, queue;
  std::uint64_t index;     // the transfer's index in its queue
  std::uint64_t start_ps;  // the engine took it
  std::uint64_t data_ps;   // its bytes were through
  std::uint64_t busy_ps;   // the engine was free again (its bytes through)
  std::uint64_t bytes;
};

class DmaEngines : public sc_core::sc_module {
 public:
  // What a queue's sequencer implements: called at the transfer's
  // completion (the simulated time is done_ps) or at its fault, of kind
  // "address" (an access refused), "kernel" or "host" (the host has no
  // memory left for the storage it touches: HostSpaceError).
  class Client {
   public:
    virtual ~Client() = default;
    virtual void transfer_done(DmaTransfer& t) = 0;
    virtual void transfer_fault(DmaTransfer& t, const std::string& kind,
                                const std::string& what) = 0;
  };
  // Stats and traces of the engines: told at the simulated time of each.
  class Observer {
   public:
    virtual ~Observer() = default;
    // Engine `engine` takes a share of transfer `index` of `queue` now.
    virtual void on_share_begin(unsigned engine, unsigned queue, std::uint64_t index,
                                std::uint64_t t_ps, std::uint64_t bytes) = 0;
    // Its bytes are through now (r.data_ps); the engine is free at r.busy_ps.
    virtual void on_share_end(const DmaShareRecord& r) = 0;
  };

  static constexpr unsigned kMaxEngines = isa::kNumPartitions;
  // Each engine thread's coroutine stack.
  static constexpr std::size_t kEngineStackBytes = 64 * 1024;
  // Each engine's initiator, bound to the core's router.
  sc_core::sc_vector<MemPort> ports;

  DmaEngines(sc_core::sc_module_name name, RunControl& control);

  // A new configuration (between runs): timing, the HBM's bandwidth share
  // (nullptr: none) and the queues' clients (by queue index).
  void configure(const timing::TimingConfig& t, BandwidthShare* hbm, std::vector<Client*> clients);
  // The HBM bandwidth share of a device of several cores (SPEC §15): this
  // core's flows go to `hbm` as group `group` (its core index), so that the
  // device bandwidth is shared max-min fairly among the cores. Between runs,
  // after configure().
  void set_hbm_share(BandwidthShare* hbm, unsigned group) {
    hbm_ = hbm;
    hbm_group_ = group;
  }
  // A new run: every engine idle, the stats cleared.
  void reset_run();
  // Timing-only (SPEC §13): the engines move no byte and touch no storage
  // (every access counted as the full run's).
  void set_timing_only(bool on);
  void set_observer(Observer* o) { observer_ = o; }
  // The race check (SPEC §14): every share an engine takes, moves and ends
  // is reported to `d` as core `core`'s (nullptr: none). Set between runs.
  void set_race(race::Detector* d, unsigned core) {
    race_ = d;
    race_core_ = core;
  }

  // Queues `t` (checked already, issue_ps set) on the engines that carry its
  // data, at the simulated time now.
  void submit(const std::shared_ptr<DmaTransfer>& t);

  unsigned engines() const { return engines_; }
  // Per engine: transfers (shares) moved, busy time, bytes.
  struct EngineTotals {
    std::uint64_t shares = 0, busy_ps = 0, bytes = 0;
  };
  const EngineTotals& totals(unsigned e) const { return engine_[e].totals; }
  // An engine's totals as run stats (name "dma_engine<e>", cycles of the
  // memory clock) after a stop at `stop_ps` (kForever: none).
  trace::EngineStats stats(unsigned e, std::uint64_t stop_ps) const;
  static std::string engine_name(unsigned e) { return "dma_engine" + std::to_string(e); }
  // Time with any engine busy with a share (the profiler's "DMA active")
  // up to a stop at `stop_ps` (kForever: none).
  std::uint64_t active_ps(std::uint64_t stop_ps) const { return any_.busy_ps(stop_ps, now_ps()); }

 private:
  struct Share {
    std::shared_ptr<DmaTransfer> t;
    std::uint64_t run = 0;       // the run it belongs to (a later run drops it)
    std::vector<unsigned> rows;  // the descriptor's rows this engine moves
    std::uint64_t bytes = 0;
    // A part of a transfer taken together (DmaTransfer::part_engines): the
    // engine has reached it, and has moved its rows (none: it only holds).
    bool arrived = false, moved = false;
  };
  struct Engine {
    std::deque<Share> queue[isa::kNumDmaQueues];
    // The earliest start of each queue's next share here: the start of its
    // last + the queue's per-transfer cost.
    std::uint64_t queue_free[isa::kNumDmaQueues] = {};
    int last_queue = -1;  // the queue of the engine's last share (-1: none yet)
    unsigned next = 0;    // the queue whose turn it is
    unsigned served = 0;  // transfers the current queue took this turn
    sc_core::sc_event work;
    EngineTotals totals;
    std::deque<DmaShareRecord> history;  // not yet passed by the time: a stop may take them back
    // The share being moved: held here, not on the engine thread's stack (a
    // run that ends while the thread waits leaves its coroutine stack as it
    // is, and a local's heap storage would never be freed).
    Share current;
  };
  void engine_thread(unsigned e);
  // When queue q's head share may start on `en`: its transfer's ready time
  // and the queue's per-transfer cost since its last share there.
  std::uint64_t earliest_start(const Engine& en, unsigned q) const;
  // The engine's cost of switching to queue q's ring (none when its last
  // share was q's), then the share's bytes (one flow of the HBM's share, or
  // at the engine's rate alone); returns when they are through.
  void transfer_time(Engine& en, unsigned q, const Share& s);
  // The next share engine e may take at `now`: its queue, or -1 (and the
  // earliest ready time of any share in `wake`).
  int pick(unsigned e, std::uint64_t now, std::uint64_t& wake);
  // A transfer taken together: its parts for `shares` (by engine), engine
  // e's part reaching the head of its queue, and all its shares moved.
  void add_parts(DmaTransfer& t, std::vector<Share>& shares);
  void arrive(unsigned e, Share& part);
  void release(DmaTransfer& t);
  void move(unsigned e, const Share& s);
  // move(); false: the transfer faulted (its client told).
  bool move_or_fault(unsigned e, const Share& s);
  void finish_share(unsigned e, Share& s, std::uint64_t start, std::uint64_t data_end);
  std::uint64_t now_ps() const;

  RunControl& control_;
  std::uint64_t run_ = 0;  // reset_run() counts the runs
  std::vector<Engine> engine_;
  unsigned engines_ = 16;
  unsigned part_per_engine_ = 8;
  BandwidthShare* hbm_ = nullptr;
  unsigned hbm_group_ = 0;  // this core's group in a device's share
  std::vector<Client*> clients_;
  std::uint64_t bytes_per_s_ = 1;
  std::uint64_t latency_ps_ = 0, queue_cost_ps_ = 0, engine_cost_ps_ = 0;
  std::uint64_t hbm_latency_ps_ = 0, sbuf_latency_ps_ = 0;
  BusyUnion any_;  // any engine busy with a share
  std::uint32_t weights_[isa::kNumDmaQueues] = {};
  std::uint32_t sbuf_bytes_ = 0;
  std::uint32_t memory_clock_mhz_ = 1400;
  Observer* observer_ = nullptr;
  race::Detector* race_ = nullptr;
  unsigned race_core_ = 0;
  std::vector<std::uint8_t> buf_, acc_;
  bool timing_only_ = false;
};

}  // namespace tpb::sc
