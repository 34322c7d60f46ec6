#include "platform/core/profile.h"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "firmware_stubs/builtin_kernels.h"
#include "models/sc/engine/kernel_info_table.h"

namespace tpb::platform {

namespace {

// SPEC §15: a device's HBM, every core's hbm.bytes pooled, inside the window.
void check_device_hbm(const CoreConfig& cfg) {
  if (cfg.device_cores == 0 || cfg.timing.hbm.bytes > isa::kHbmWindow / cfg.device_cores)
    throw std::invalid_argument(
        fmt::format("a device of {} cores x hbm.bytes {} is past the 2^40 bytes of the HBM window",
                    cfg.device_cores, cfg.timing.hbm.bytes));
}

}  // namespace

CoreConfig default_core_config(isa::Arch arch) {
  CoreConfig c;
  c.arch = arch;
  c.timing = timing::default_timing(arch);
  return c;
}

Profile::Profile(CoreConfig cfg)
    : cfg_(std::move(cfg)),
      costs_(fw::builtin_kernels().resolve_costs(cfg_.timing)) {  // TimingError: unknown bundle
  const timing::TimingConfig& t = cfg_.timing;
  for (const auto& [what, bytes] :
       {std::pair{"sbuf_bytes_per_partition", t.sbuf_bytes_per_partition},
        std::pair{"psum_bytes_per_partition", t.psum_bytes_per_partition}})
    if (bytes == 0 || bytes > isa::kPartitionSlot)
      throw std::invalid_argument(
          fmt::format("{} {} is not in [1, {}]", what, bytes, isa::kPartitionSlot));
  const std::uint32_t ring_cap = isa::kQueueBytes / isa::kInstBytes;
  if (t.fetch.ring_words == 0 || t.fetch.ring_words > ring_cap)
    throw std::invalid_argument(fmt::format("instruction_fetch.ring_words {} is not in [1, {}]",
                                            t.fetch.ring_words, ring_cap));
  for (const std::vector<std::uint8_t>& table : cfg_.kernel_info)
    if (!table.empty()) sc::KernelInfoTable{table};
  if (t.hbm.bytes == 0 || t.hbm.bytes > isa::kHbmWindow)
    throw std::invalid_argument(fmt::format("hbm.bytes {} is not in [1, 2^40]", t.hbm.bytes));
  if (t.hbm.mbytes_per_s == 0) throw std::invalid_argument("hbm.mbytes_per_s must not be 0");
  check_device_hbm(cfg_);
}

Profile Profile::in_device(unsigned cores) const {
  Profile p = *this;
  p.cfg_.device_cores = cores;
  check_device_hbm(p.cfg_);
  return p;
}

}  // namespace tpb::platform
