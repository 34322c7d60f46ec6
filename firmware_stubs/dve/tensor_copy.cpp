#include "firmware_stubs/dve/tensor_copy.h"

#include <algorithm>

#include <fmt/format.h>

#include "models/isa/address_map.h"
#include "models/numerics/element_ops.h"

namespace tpb::fw {

namespace {

TensorCopyState& tcopy_state(KernelContext& ctx) {
  auto* st = ctx.scratch<TensorCopyState>();
  if (!st) throw KernelFault("tensor_copy body entered without its decoded fields");
  return *st;
}

const char* region_text(isa::Region r) {
  switch (r) {
    case isa::Region::Sbuf:
      return "SBUF";
    case isa::Region::Psum:
      return "PSUM";
    case isa::Region::SfuTile:
      return "the SFU tile file";
    case isa::Region::Control:
      return "the control region";
  }
  return "?";
}

// What the static contract checks of one operand, again at run time, where
// registers give the address or the shape: SBUF or PSUM, the active
// partitions inside the memory, no broadcast write, and every element inside
// the region's partition capacity (so that nothing is written when any
// element is out of range).
void check_operand(const ResolvedPattern& p, unsigned elem_bytes, unsigned channels, bool write,
                   const timing::TimingConfig& t, const char* which) {
  const isa::Region r = isa::region_of(p.start);
  if (r != isa::Region::Sbuf && r != isa::Region::Psum)
    throw KernelFault(
        fmt::format("mem3d_valid({}) failed at run time: address 0x{:07x} is in {}, not SBUF or "
                    "PSUM",
                    which, p.start, region_text(r)));
  const unsigned part = isa::partition_of(p.start);
  if (part + channels > isa::kNumPartitions)
    throw KernelFault(fmt::format(
        "check_m3d_active_channels({}) failed at run time: start partition {} + {} active "
        "channels exceeds {}",
        which, part, channels, isa::kNumPartitions));
  if (p.count() == 0) return;
  std::int64_t lo = 0, hi = 0;
  for (int d = 0; d < 3; ++d) {
    if (write && p.num[d] > 1 && p.step[d] == 0)
      throw KernelFault(fmt::format(
          "mem3d_valid({}) failed at run time: step 0 on dimension {} of {} elements writes "
          "one element many times",
          which, d, p.num[d]));
    const std::int64_t far = (std::int64_t{p.num[d]} - 1) * p.step[d] * elem_bytes;
    lo += std::min<std::int64_t>(0, far);
    hi += std::max<std::int64_t>(0, far);
  }
  const std::int64_t off = isa::offset_of(p.start);
  const std::uint32_t cap =
      r == isa::Region::Sbuf ? t.sbuf_bytes_per_partition : t.psum_bytes_per_partition;
  if (off + lo < 0 || off + hi + elem_bytes > std::int64_t{cap})
    throw KernelFault(fmt::format(
        "address error: tensor_copy {} pattern at 0x{:07x} spans byte offsets [{}, {}) of each "
        "partition, outside the {} bytes of a {} partition",
        which, p.start, off + lo, off + hi + elem_bytes, cap, region_text(r)));
}

// The body's field decode: operands with registers applied, and every check
// the static contract could not make (register addresses and shapes).
std::uint32_t fields(KernelContext& ctx) {
  const auto inst = isa::decode_as<isa::S3D3TensorCopy>(ctx.inst());
  TensorCopyState st;
  st.channels = inst.num_active_channels;
  if (st.channels == 0 || st.channels > isa::kNumPartitions)
    throw KernelFault(
        fmt::format("check_active_channels: num_active_channels {} is not in 1..128", st.channels));
  st.in_dtype = inst.in_dtype;
  st.out_dtype = inst.out_dtype;
  st.in_bytes = isa::dtype_size(st.in_dtype);
  st.out_bytes = isa::dtype_size(st.out_dtype);
  const bool same = st.in_dtype == st.out_dtype;
  if (st.in_bytes == 0 || st.out_bytes == 0 ||
      (!same && !(num::element_format(st.in_dtype) && num::element_format(st.out_dtype))))
    throw KernelFault(fmt::format(
        "tensor_copy_valid_dtype_pair: in_dtype 0x{:x} ({}) to out_dtype 0x{:x} ({}) is neither "
        "a copy of one DTYPE nor a conversion between fp32, bf16, fp16, fp8 and int8 / uint8",
        st.in_dtype, isa::dtype_name(st.in_dtype), st.out_dtype, isa::dtype_name(st.out_dtype)));
  st.src = resolve_pattern(inst.src_mem_pattern.t, ctx, "tensor_copy src");
  st.dst = resolve_pattern(inst.dst_mem_pattern.t, ctx, "tensor_copy dst");
  check_operand(st.src, st.in_bytes, st.channels, false, ctx.timing(), "src");
  check_operand(st.dst, st.out_bytes, st.channels, true, ctx.timing(), "dst");
  if (st.src.count() != st.dst.count())
    throw KernelFault(
        fmt::format("tensor_copy_element_count_check failed at run time: src holds {} elements per "
                    "partition, dst {}",
                    st.src.count(), st.dst.count()));
  st.count = st.src.count();
  ctx.set_scratch(std::move(st));
  return 0;
}

// Every active partition's source elements, in src pattern order.
std::uint32_t load(KernelContext& ctx) {
  TensorCopyState& st = tcopy_state(ctx);
  const std::size_t row = st.count * st.in_bytes;
  st.in.assign(st.channels * row, 0);
  const unsigned sp = isa::partition_of(st.src.start);
  for (unsigned c = 0; c < st.channels; ++c)
    for_each_run(st.src, st.in_bytes, sp + c, "tensor_copy src",
                 [&](std::uint64_t addr, std::uint64_t k, std::uint32_t run) {
                   ctx.read(addr, st.in.data() + c * row + k * st.in_bytes,
                            std::size_t{run} * st.in_bytes);
                 });
  return 0;
}

std::uint32_t convert(KernelContext& ctx) {
  TensorCopyState& st = tcopy_state(ctx);
  st.out.assign(st.channels * st.count * st.out_bytes, 0);
  if (ctx.timing_only()) return 0;
  // Every partition at once: the rows are contiguous in both buffers.
  if (!num::convert_elements(st.in_dtype, st.out_dtype, st.in.data(), st.out.data(),
                             st.channels * st.count))
    throw KernelFault("tensor_copy_valid_dtype_pair: no conversion");  // checked in fields
  st.in = {};
  return 0;
}

// The converted elements along the dst pattern of every active partition.
std::uint32_t store(KernelContext& ctx) {
  TensorCopyState& st = tcopy_state(ctx);
  const std::size_t row = st.count * st.out_bytes;
  const unsigned dp = isa::partition_of(st.dst.start);
  for (unsigned c = 0; c < st.channels; ++c)
    for_each_run(st.dst, st.out_bytes, dp + c, "tensor_copy dst",
                 [&](std::uint64_t addr, std::uint64_t k, std::uint32_t run) {
                   ctx.write(addr, st.out.data() + c * row + k * st.out_bytes,
                             std::size_t{run} * st.out_bytes);
                 });
  st.out = {};
  return 0;
}

}  // namespace

void add_tensor_copy_kernels(KernelRegistry& r) {
  r.add(Kernel{"tensor_copy_trampoline",
               kTensorCopyTrampolineVa,
               {
                   {"dve.tcopy_trampoline.call8", kTensorCopyTrampolineVa, 1, nullptr,
                    [](KernelContext&) { return kTensorCopyBodyVa; }},
                   {"dve.tcopy_trampoline.exit", kTensorCopyExitVa, 1, nullptr, nullptr},
               }});
  // The one-input loop: N = elements per partition trips of one cycle, all
  // partitions in parallel lanes (TIMING.md [A, E, M]: max(64, N); the
  // 64-cycle minimum is the instruction's fixed overhead).
  r.add(Kernel{"tensor_copy_body",
               kTensorCopyBodyVa,
               {
                   {"dve.tcopy.fields", kTensorCopyBodyVa, 4, nullptr, fields},
                   {"dve.tcopy.load", kTensorCopyLoadVa, 1, nullptr, load, true},
                   {"dve.tcopy.convert", kTensorCopyConvertVa, 1,
                    [](KernelContext& ctx) { return tcopy_state(ctx).count; }, convert, true},
                   {"dve.tcopy.store", kTensorCopyStoreVa, 1, nullptr, store, true},
                   {"dve.tcopy.return", kTensorCopyReturnVa, 1, nullptr, nullptr},
               }});
}

}  // namespace tpb::fw
