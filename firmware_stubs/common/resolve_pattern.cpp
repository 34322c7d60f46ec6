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
  p.start = resolve_addr4(a, ctx);
  for (int d = 0; d < 3; ++d) {
    p.step[d] = t.step_elem[d];
    p.num[d] = t.num_elem[d];
  }
  if (a.shape_from_register()) {
    if (n + 3 >= isa::kNumEngineRegs)
      throw KernelFault(fmt::format("{} operand: shape registers r{}..r{} do not exist (r0..r31)",
                                    which, n + 1, n + 3));
    for (int d = 0; d < 3; ++d) p.num[d] = ctx.reg(n + 1 + d);
    // In 128 bits: three 32-bit registers multiply to 96 bits (in 64 their
    // product wraps, e.g. 2^31 x 2^31 x 4 = 0).
    if (static_cast<unsigned __int128>(p.num[0]) * p.num[1] * p.num[2] > isa::kPartitionSlot / 4)
      throw KernelFault(
          fmt::format("{} operand: shape from registers r{}..r{} = {}x{}x{} exceeds one partition",
                      which, n + 1, n + 3, p.num[0], p.num[1], p.num[2]));
  }
  return p;
}

std::uint32_t resolve_addr4(isa::Addr4 a, const KernelContext& ctx) {
  if (!a.addr_from_register()) return a.address();
  ctx.register_addressed();
  return ctx.reg(a.reg_index()) & isa::addr4::kAddressMask;
}

std::uint32_t resolve_scale_addr4(isa::Addr4 s, const KernelContext& ctx,
                                  const std::string& which) {
  if (s.marker() != isa::addr4::kMarkerImm && s.marker() != isa::addr4::kMarkerAddrReg)
    throw KernelFault(
        fmt::format("{}: scale_addr marker 0b{:05b} is not IMM or ADDR_REG", which, s.marker()));
  return resolve_addr4(s, ctx);
}

ResolvedMx1d resolve_mx1d(const isa::MxTensor1D& t, const KernelContext& ctx,
                          const std::string& which) {
  ResolvedMx1d d;
  const isa::Addr4 a = t.start_addr;
  if ((a.marker() & ~(isa::addr4::kMarkerAddrReg | isa::addr4::kMarkerShapeReg)) != 0)
    throw KernelFault(
        fmt::format("{}: MXTENSOR1D start_addr marker 0b{:05b} (MXIndirect16B) is not modelled",
                    which, a.marker()));
  d.scale = resolve_scale_addr4(t.scale_addr, ctx, which + ": MXTENSOR1D");
  d.data = resolve_addr4(a, ctx);
  d.num = t.num_elem[0];
  if (a.shape_from_register()) {
    const unsigned n = a.reg_index();
    if (n + 1 >= isa::kNumEngineRegs)
      throw KernelFault(
          fmt::format("{}: shape register r{} does not exist (r0..r31)", which, n + 1));
    d.num = ctx.reg(n + 1);
  }
  d.step = t.step_elem[0];
  d.scale_pidx = t.scale_pidx;
  return d;
}

}  // namespace tpb::fw
