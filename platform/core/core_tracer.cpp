#include "platform/core/core_tracer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tpb::platform {

CoreTracer::CoreTracer(trace::Recorder& rec, const trace::TraceNames& names) : rec_(rec) {
  for (unsigned i = 0; i < isa::kNumSemaphores; ++i) {
    sem_sigs_.push_back(rec_.add_signal(names.scope + ".sem", fmt::format("sem{}", i), 32));
    sem_names_.push_back(rec_.intern(fmt::format("sem{}", i)));
  }
  sem_track_ = rec_.add_track(names.process, "semaphores");
  static const char* const kFlagNames[3] = {"flag_inexact", "flag_saturated", "flag_wrapped"};
  for (unsigned f = 0; f < 3; ++f)
    sfu_flag_sig_[f] = rec_.add_signal(names.scope + ".sfu", kFlagNames[f], 1);
  sfu_fault_sig_ = rec_.add_signal(names.scope + ".sfu", "fault", 1);
  sfu_flag_track_ = rec_.add_track(names.process, "sfu flags");
  for (unsigned m = 0; m < kNumMems; ++m) {
    const std::string scope = names.scope + "." + isa::memory_name(static_cast<isa::CoreMemory>(m));
    mem_read_sig_[m] = rec_.add_signal(scope, "bytes_read", 64);
    mem_write_sig_[m] = rec_.add_signal(scope, "bytes_written", 64);
  }
}

void CoreTracer::semaphore(unsigned idx, std::uint32_t v, std::uint64_t ps) {
  rec_.set(sem_sigs_[idx], ps, v);
  if (rec_.slices_enabled()) rec_.counter(sem_track_, ps, sem_names_[idx], v);
}

void CoreTracer::sfu_flags(std::uint32_t bits, std::uint64_t ps) {
  if (bits == sfu_flags_last_) return;
  static const char* const kNames[3] = {"inexact", "saturated", "wrapped"};
  for (unsigned f = 0; f < 3; ++f) {
    const bool on = (bits >> f) & 1u;
    if (on == (((sfu_flags_last_ >> f) & 1u) != 0)) continue;
    rec_.set(sfu_flag_sig_[f], ps, on);
    if (rec_.slices_enabled()) rec_.counter(sfu_flag_track_, ps, kNames[f], on);
  }
  sfu_flags_last_ = bits;
}

void CoreTracer::sfu_fault(std::uint64_t ps, const std::string& message) {
  rec_.set(sfu_fault_sig_, ps, 1);
  if (rec_.slices_enabled())
    rec_.instant(sfu_flag_track_, ps, "fault", nlohmann::json{{"message", message}}.dump());
}

void CoreTracer::memory_bytes(const std::uint64_t (&rd)[kNumMems],
                              const std::uint64_t (&wr)[kNumMems], std::uint64_t ps) {
  for (unsigned m = 0; m < kNumMems; ++m) {
    if (rd[m] != mem_read_last_[m]) rec_.set(mem_read_sig_[m], ps, rd[m]);
    if (wr[m] != mem_write_last_[m]) rec_.set(mem_write_sig_[m], ps, wr[m]);
    mem_read_last_[m] = rd[m];
    mem_write_last_[m] = wr[m];
  }
}

}  // namespace tpb::platform
