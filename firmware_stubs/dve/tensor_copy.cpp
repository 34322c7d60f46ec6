#include "firmware_stubs/dve/tensor_copy.h"

#include <algorithm>

#include <fmt/format.h>

#include "firmware_stubs/common/vector_kernel.h"
#include "models/isa/address_map.h"
#include "models/numerics/element_ops.h"

namespace tpb::fw {

namespace {

TensorCopyState& tcopy_state(KernelContext& ctx) {
  auto* st = ctx.scratch<TensorCopyState>();
  if (!st) throw KernelFault("tensor_copy body entered without its decoded fields");
  return *st;
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
      (!same && !(num::is_numeric_dtype(st.in_dtype) && num::is_numeric_dtype(st.out_dtype))))
    throw KernelFault(fmt::format(
        "valid_vector_dtype: in_dtype 0x{:x} ({}) to out_dtype 0x{:x} ({}) is neither a copy of "
        "one DTYPE nor a conversion between numeric DTYPEs",
        st.in_dtype, isa::dtype_name(st.in_dtype), st.out_dtype, isa::dtype_name(st.out_dtype)));
  st.src = resolve_pattern(inst.src_mem_pattern.t, ctx, "tensor_copy src");
  st.dst = resolve_pattern(inst.dst_mem_pattern.t, ctx, "tensor_copy dst");
  check_vec_operand(st.src, st.in_bytes, st.channels, false, ctx.engine(), ctx.timing(), "src",
                    "tensor_copy");
  check_vec_operand(st.dst, st.out_bytes, st.channels, true, ctx.engine(), ctx.timing(), "dst",
                    "tensor_copy");
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
    throw KernelFault("valid_vector_dtype: no conversion");  // checked in fields
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

// The trampoline's call of the body at `Body` (a step is a plain function).
template <std::uint32_t Body>
std::uint32_t call_body(KernelContext&) {
  return Body;
}

// One engine's tensor_copy: trampoline at Va { call8 ; exit at Va + 3 },
// body at Va + 0x40 (the DVE's: 0x3200, the seeds' style; the ACT's and
// POOL's the same steps at their own VAs, SPEC §18).
template <std::uint32_t Va>
void add_tensor_copy(KernelRegistry& r, const std::string& eng) {
  constexpr std::uint32_t body = Va + 0x40;
  r.add(
      Kernel{eng == "dve" ? std::string("tensor_copy_trampoline") : eng + "_tensor_copy_trampoline",
             Va,
             {
                 {eng + ".tcopy_trampoline.call8", Va, 1, nullptr, call_body<body>},
                 {eng + ".tcopy_trampoline.exit", Va + 3, 1, nullptr, nullptr},
             }});
  // The one-input loop: N = elements per partition trips of one cycle, all
  // partitions in parallel lanes (TIMING.md [A, E, M]: max(64, N); the
  // 64-cycle minimum is the instruction's fixed overhead).
  r.add(Kernel{eng == "dve" ? std::string("tensor_copy_body") : eng + "_tensor_copy_body",
               body,
               {
                   {eng + ".tcopy.fields", body, 4, nullptr, fields},
                   {eng + ".tcopy.load", body + 0x10, 1, nullptr, load, true},
                   {eng + ".tcopy.convert", body + 0x20, 1,
                    [](KernelContext& ctx) { return tcopy_state(ctx).count; }, convert, true},
                   {eng + ".tcopy.store", body + 0x30, 1, nullptr, store, true},
                   {eng + ".tcopy.return", body + 0x40, 1, nullptr, nullptr},
               }});
}

}  // namespace

void add_tensor_copy_kernels(KernelRegistry& r) {
  add_tensor_copy<kTensorCopyTrampolineVa>(r, "dve");
  add_tensor_copy<isa::kva::kActTensorCopy>(r, "act");
  add_tensor_copy<isa::kva::kPoolTensorCopy>(r, "pool");
}

}  // namespace tpb::fw
