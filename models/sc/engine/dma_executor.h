// The executor of one DMA queue (SPEC §10): performs a DMA descriptor
// (isa::DmaDescriptor) in the calling SC_THREAD through timed memory
// accesses on the queue's MemPort. No kernel_info, no firmware: a DMA engine
// is not a programmable core.
//
// Time of one descriptor of B = num_rows x row_bytes bytes, issued at t0:
//   t0 + latency (semaphore-to-start, TIMING.md [J, K])
//      + the transfer: B / min(queue bandwidth, what the HBM grants), the
//        HBM's BandwidthShare granting each queue its max-min fair share of
//        the core's HBM bandwidth while queues stream together (an HBM
//        endpoint moves B bytes of HBM bandwidth, HBM -> HBM 2B, an add on
//        an HBM destination one more B); SBUF -> SBUF moves at the queue's
//        bandwidth, the SBUF lanes' time counting when it is longer
//      + the pipeline's fill: the source's access latency + the
//        destination's (HBM: its latency; SBUF: the SBUF's).
// Every row and every address is checked against the configured
// capacities before the first byte moves, so a bad descriptor writes
// nothing. The bytes move in order (row by row, in chunks of at most
// kChunkBytes, each read whole before it is written), so an overlapping
// copy behaves like a forward copy.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include <systemc>

#include <tlm_utils/tlm_quantumkeeper.h>

#include "models/isa/encodings.h"
#include "models/sc/memory/bandwidth_share.h"
#include "models/sc/memory/mem_port.h"

namespace tpb::sc {

// What a DMA queue needs of the timing profile (timing_config.h: dma_timing).
struct DmaTiming {
  sc_core::sc_time latency;             // semaphore-to-start, per descriptor
  std::uint64_t queue_bytes_per_s = 1;  // the queue's bandwidth
  std::uint64_t hbm_bytes = 0;          // the core's HBM capacity
  std::uint32_t sbuf_bytes_per_partition = 0;
};

// A descriptor the queue cannot perform: its message names the predicate or
// the address (the queue's sequencer adds engine, index and opcode).
class DmaFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DmaResult {
  std::uint64_t bytes = 0;      // num_rows x row_bytes
  std::uint64_t issue_ps = 0;   // when execute() was called (the queue's time)
  std::uint64_t start_ps = 0;   // after the semaphore-to-start latency
  std::uint64_t end_ps = 0;     // the last byte written
  std::uint64_t hbm_bytes = 0;  // bytes of HBM bandwidth the descriptor used
};

class DmaExecutor {
 public:
  static constexpr std::uint32_t kChunkBytes = 64 * 1024;

  // `port`: the queue's initiator, bound to the core's router (HBM at
  // isa::kHbmBase, SBUF at its ISA addresses). `hbm`: the HBM's bandwidth
  // share (nullptr: the core has no HBM; a descriptor naming it faults).
  DmaExecutor(MemPort& port, BandwidthShare* hbm, DmaTiming timing);

  // The run-time checks of a descriptor against the configured capacities
  // (the static contract checks the generation's defaults): throws DmaFault
  // naming the predicate and the address.
  void check(const isa::DmaDescriptor& d) const;

  // Performs `d` in the calling SC_THREAD, whose quantum keeper is `qk`: it
  // synchronises (the HBM share needs the flow's start in simulated time
  // order), waits the latency and the transfer, moves the bytes, and leaves
  // qk's local time at the end of the descriptor. Throws DmaFault (nothing
  // written when check() fails; an address error of the memories otherwise).
  DmaResult execute(const isa::DmaDescriptor& d, tlm_utils::tlm_quantumkeeper& qk);

  const DmaTiming& timing() const { return timing_; }

 private:
  // One side's timed access: the SBUF lanes of a stream, or the HBM's latency.
  struct Side {
    StreamLanes lanes;
    sc_core::sc_time hbm_latency;
  };
  void access(std::uint64_t addr, void* data, std::uint32_t len, bool is_write, Side& side,
              const char* what);
  void move(const isa::DmaDescriptor& d);

  MemPort& port_;
  BandwidthShare* hbm_;
  DmaTiming timing_;
  Side src_side_, dst_side_;
  std::vector<std::uint8_t> buf_, acc_;
};

}  // namespace tpb::sc
