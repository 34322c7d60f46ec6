// A core's configuration (SPEC §8): what makes a core (CoreConfig), and the
// configuration loaded and checked, with every bundle's cost under its
// timing resolved once (Profile). Cores are built from a Profile.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/kernel/kernel.h"
#include "models/numerics/mx_quantize.h"
#include "models/timing/timing_profile.h"

namespace tpb::platform {

// What makes a core (fixed between resets).
struct CoreConfig {
  isa::Arch arch = isa::Arch::Mariana;
  timing::TimingConfig timing = timing::default_timing(isa::Arch::Mariana);
  // DVE QuantizeMX emax offsets (SPEC §4); the core puts it in the DVE's
  // engine state (fw::QuantizeMxOptions).
  num::MxEmax mx_emax = num::MxEmax::Ocp;
  // Replacement kernel_info tables (8-byte records, seed 000 §1) by compute
  // engine (isa::engine_index); empty = the default table of the engine.
  std::array<std::vector<std::uint8_t>, isa::kNumEngines> kernel_info;
  // SPEC §15: the cores of the device this core is one of. `timing.hbm.bytes`
  // is the profile's, per core; the HBM is the device's, and every core of
  // it reaches hbm_capacity() bytes.
  unsigned device_cores = 1;
  std::uint64_t hbm_capacity() const { return timing.hbm.bytes * device_cores; }
  // Bytes of one partition of SBUF or PSUM.
  std::uint32_t partition_bytes(isa::Region r) const {
    return r == isa::Region::Psum ? timing.psum_bytes_per_partition
                                  : timing.sbuf_bytes_per_partition;
  }
};
// The defaults of a generation (timing from timing::default_timing).
CoreConfig default_core_config(isa::Arch arch);

// A core's configuration loaded (SPEC §8): checked whole, and every bundle's
// cost under its timing resolved once. Cores are built from a Profile, never
// from a configuration that was not checked; it cannot change, so its costs
// always match its timing.
class Profile {
 public:
  // Throws timing::TimingError for a bundle override that names no bundle,
  // std::invalid_argument for an impossible configuration (a capacity out
  // of range, a device HBM past the 2^40 window, a bad kernel_info table).
  Profile(CoreConfig cfg);  // NOLINT: a configuration is loaded where a core needs one
  const CoreConfig& config() const { return cfg_; }
  const fw::BundleCosts& costs() const { return costs_; }
  // The profile of a core of a device of `cores` cores (its HBM the
  // device's); throws as the constructor for an HBM past the window.
  Profile in_device(unsigned cores) const;

 private:
  CoreConfig cfg_;
  fw::BundleCosts costs_;
};

}  // namespace tpb::platform
