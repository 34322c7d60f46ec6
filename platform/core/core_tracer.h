// The core-level traces of one run (SPEC §9 --vcd / --perfetto): every
// semaphore, the SFU's sticky flags and fault, and the bytes moved to and
// from each data memory, registered in the run's recorder after the engines'
// signals (the VCD header's order).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "models/trace/recorder.h"

namespace tpb::platform {

class CoreTracer {
 public:
  static constexpr unsigned kNumMems = isa::kNumDataMemories;

  explicit CoreTracer(trace::Recorder& rec, const trace::TraceNames& names = {});
  void semaphore(unsigned idx, std::uint32_t value, std::uint64_t t_ps);
  // The SFU's sticky flags (inexact, saturated, wrapped: bits 0..2) at t_ps.
  void sfu_flags(std::uint32_t bits, std::uint64_t t_ps);
  void sfu_fault(std::uint64_t t_ps, const std::string& message);
  // Bytes read and written so far per data memory, at a retire's time.
  void memory_bytes(const std::uint64_t (&rd)[kNumMems], const std::uint64_t (&wr)[kNumMems],
                    std::uint64_t t_ps);

 private:
  trace::Recorder& rec_;
  std::vector<trace::SignalId> sem_sigs_;
  std::vector<trace::NameId> sem_names_;
  trace::TrackId sem_track_;
  trace::SignalId sfu_flag_sig_[3], sfu_fault_sig_;
  trace::TrackId sfu_flag_track_;
  std::uint32_t sfu_flags_last_ = 0;
  trace::SignalId mem_read_sig_[kNumMems], mem_write_sig_[kNumMems];
  std::uint64_t mem_read_last_[kNumMems] = {}, mem_write_last_[kNumMems] = {};
};

}  // namespace tpb::platform
