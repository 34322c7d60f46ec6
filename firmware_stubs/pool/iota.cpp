#include "firmware_stubs/pool/iota.h"

#include <cmath>
#include <cstring>

#include "firmware_stubs/common/vector_kernel.h"
#include "models/isa/opcode_table.h"
#include "models/numerics/element_ops.h"
#include "models/numerics/formats.h"

namespace tpb::fw {

namespace {

// An exact integer into `dtype` with one rounding (to nearest even,
// saturating): a format's encode of the exact value; the 16- and 32-bit
// integers clamp.
void put_integer(std::uint8_t dtype, std::int32_t v, std::uint8_t* out, unsigned bytes) {
  std::uint32_t code;
  if (const std::optional<num::Format> f = num::element_format(dtype)) {
    code = num::encode(*f, static_cast<double>(v), num::Overflow::Saturate);
  } else {
    const bool sgn = dtype == static_cast<std::uint8_t>(isa::Dtype::Int16) ||
                     dtype == static_cast<std::uint8_t>(isa::Dtype::Int32);
    const double bits = 8.0 * bytes;
    const double lo = sgn ? -std::ldexp(1.0, static_cast<int>(bits) - 1) : 0.0;
    const double hi = sgn ? std::ldexp(1.0, static_cast<int>(bits) - 1) - 1.0
                          : std::ldexp(1.0, static_cast<int>(bits)) - 1.0;
    code = static_cast<std::uint32_t>(
        static_cast<std::int64_t>(std::min(std::max(static_cast<double>(v), lo), hi)));
  }
  std::memcpy(out, &code, bytes);
}

void iota_compute(KernelContext& ctx, VecPlan& plan) {
  const auto i = isa::decode_as<isa::S3D3Iota>(ctx.inst());
  VecOperand& out = plan.out[0];
  std::uint64_t k = 0;
  for (unsigned c = 0; c < plan.channels; ++c)
    for (std::uint32_t i2 = 0; i2 < i.num[2]; ++i2)
      for (std::uint32_t i1 = 0; i1 < i.num[1]; ++i1)
        for (std::uint32_t i0 = 0; i0 < i.num[0]; ++i0, ++k) {
          // Two's complement arithmetic in 32 bits: unsigned wraps.
          const std::uint32_t v = static_cast<std::uint32_t>(i.offset) +
                                  c * static_cast<std::uint32_t>(i.channel_multiplier) +
                                  i0 * static_cast<std::uint32_t>(i.step[0]) +
                                  i1 * static_cast<std::uint32_t>(i.step[1]) +
                                  i2 * static_cast<std::uint32_t>(i.step[2]);
          put_integer(out.dtype, static_cast<std::int32_t>(v), out.raw.data() + k * out.bytes,
                      out.bytes);
        }
}

std::uint32_t iota_fields(KernelContext& ctx) {
  const auto i = isa::decode_as<isa::S3D3Iota>(ctx.inst());
  VecPlan& plan = vec_plan_dst(ctx, i.num_active_channels, isa::pattern_t(i.dst_mem_pattern),
                               i.out_dtype, "iota");
  if (isa::region_of(plan.out[0].pat.start) != isa::Region::Sbuf)
    throw KernelFault("mem3d_valid(dst) failed at run time: iota writes SBUF only");
  if (plan.out[0].count != std::uint64_t{i.num[0]} * i.num[1] * i.num[2])
    throw KernelFault("iota_element_count_check failed at run time");
  plan.trips = plan.out[0].count;  // TIMING.md [O]: 150 + N (the 150: the POOL's startup)
  plan.compute = iota_compute;
  return 0;
}

}  // namespace

void add_iota_kernels(KernelRegistry& r) {
  add_vector_kernel(r, "pool.iota", isa::kva::kPoolIota, iota_fields);
}

}  // namespace tpb::fw
