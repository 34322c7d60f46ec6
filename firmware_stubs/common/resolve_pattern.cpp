#include "firmware_stubs/common/resolve_pattern.h"

#include <fmt/format.h>

#include "models/isa/address_map.h"

namespace tpb::fw {

ResolvedPattern resolve_pattern(const isa::Tensor3D& t, const KernelContext& ctx,
                                const char* which) {
  const isa::Addr4 a = t.start_addr;
  const std::uint8_t m = a.marker();
  const bool reg_marker = (m & ~(isa::addr4::kMarkerAddrReg | isa::addr4::kMarkerShapeReg)) == 0;
  if (!reg_marker)
    throw KernelFault(fmt::format(
        "{} operand: ADDR4 marker 0b{:05b} ({}) is not modelled for a TENSOR3D operand", which, m,
        a.is_indirect()      ? "INDIRECT16B"
        : a.is_mxtensor_v2() ? "MXTENSOR_V2"
                             : "unknown"));
  ResolvedPattern p;
  const unsigned n = a.reg_index();
  p.start = a.addr_from_register() ? (ctx.reg(n) & isa::addr4::kAddressMask) : a.address();
  for (int d = 0; d < 3; ++d) {
    p.step[d] = t.step_elem[d];
    p.num[d] = t.num_elem[d];
  }
  if (a.shape_from_register()) {
    if (n + 3 >= isa::kNumEngineRegs)
      throw KernelFault(fmt::format("{} operand: shape registers r{}..r{} do not exist (r0..r31)",
                                    which, n + 1, n + 3));
    for (int d = 0; d < 3; ++d) p.num[d] = ctx.reg(n + 1 + d);
    if (std::uint64_t{p.num[0]} * p.num[1] * p.num[2] > isa::kPartitionSlot / 4)
      throw KernelFault(
          fmt::format("{} operand: shape from registers r{}..r{} = {}x{}x{} exceeds one partition",
                      which, n + 1, n + 3, p.num[0], p.num[1], p.num[2]));
  }
  return p;
}

}  // namespace tpb::fw
