#include "firmware_stubs/common/vector_kernel.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "models/isa/address_map.h"
#include "models/numerics/element_ops.h"
#include "models/numerics/formats.h"

namespace tpb::fw {

namespace {

VecPlan& plan_of(KernelContext& ctx) {
  auto* p = ctx.scratch<VecPlan>();
  if (!p) throw KernelFault("vector instruction body entered without its decoded fields");
  return *p;
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

// Partition p of an operand: its start's partition + p, the same offset.
std::uint32_t partition_addr(std::uint32_t start, unsigned p) {
  return start + (p << isa::kPartitionShift);
}

// Every run of contiguous elements of an operand, partition by partition:
// access(address, its bytes in op.raw, length).
template <typename Access>
void each_operand_run(VecOperand& op, Access access) {
  const std::size_t row = op.count * op.bytes;
  const unsigned p0 = isa::partition_of(op.pat.start);
  for (unsigned c = 0; c < op.partitions; ++c) {
    if (op.per_partition) {
      access(partition_addr(op.pat.start, c), op.raw.data() + c * row, std::size_t{op.bytes});
      continue;
    }
    for_each_run(op.pat, op.bytes, p0 + c, "operand",
                 [&](std::uint64_t addr, std::uint64_t k, std::uint32_t run) {
                   access(addr, op.raw.data() + c * row + k * op.bytes,
                          std::size_t{run} * op.bytes);
                 });
  }
}

std::uint32_t load_step(KernelContext& ctx) {
  for (VecOperand& op : plan_of(ctx).in) {
    op.raw.assign(op.partitions * op.count * op.bytes, 0);
    each_operand_run(op,
                     [&](std::uint64_t a, std::uint8_t* p, std::size_t n) { ctx.read(a, p, n); });
  }
  return 0;
}

std::uint32_t compute_step(KernelContext& ctx) {
  VecPlan& plan = plan_of(ctx);
  for (VecOperand& op : plan.out) op.raw.assign(op.partitions * op.count * op.bytes, 0);
  if (!ctx.timing_only() && plan.compute) plan.compute(ctx, plan);
  for (VecOperand& op : plan.in) op.raw = {};
  return 0;
}

std::uint32_t store_step(KernelContext& ctx) {
  for (VecOperand& op : plan_of(ctx).out) {
    each_operand_run(op,
                     [&](std::uint64_t a, std::uint8_t* p, std::size_t n) { ctx.write(a, p, n); });
    op.raw = {};
  }
  return 0;
}

}  // namespace

void add_vector_kernel(KernelRegistry& r, const std::string& prefix, std::uint32_t va,
                       VecFields fields) {
  // The kernel_info record points at the body itself (an invented VA): its
  // entry bundle is the call that the seeds' trampolines make.
  r.add(Kernel{prefix,
               va,
               {
                   {prefix + ".entry", va, 1, nullptr, nullptr},
                   {prefix + ".fields", va + 0x10, 4, nullptr, fields},
                   {prefix + ".load", va + 0x20, 1, nullptr, load_step, true},
                   {prefix + ".compute", va + 0x30, 1,
                    [](KernelContext& ctx) { return plan_of(ctx).trips; }, compute_step, true},
                   {prefix + ".store", va + 0x40, 1, nullptr, store_step, true},
                   {prefix + ".return", va + 0x50, 1, nullptr, nullptr},
               }});
}

VecPlan& new_vec_plan(KernelContext& ctx) {
  VecPlan& plan = ctx.set_scratch(VecPlan{});
  return plan;
}

void check_vec_operand(const ResolvedPattern& p, unsigned elem_bytes, unsigned partitions,
                       bool write, isa::Queue engine, const timing::TimingConfig& t,
                       const char* operand, const char* mnemonic) {
  const isa::Region r = isa::region_of(p.start);
  if (r != isa::Region::Sbuf && r != isa::Region::Psum)
    throw KernelFault(
        fmt::format("mem3d_valid({}) failed at run time: address 0x{:07x} is in {}, not SBUF or "
                    "PSUM",
                    operand, p.start, region_text(r)));
  if (r == isa::Region::Psum && engine == isa::Queue::Pool)
    throw KernelFault(fmt::format(
        "mem3d_valid({}) failed at run time: address 0x{:07x} is in PSUM, which GpSimd (pool) "
        "cannot reach",
        operand, p.start));
  const unsigned part = isa::partition_of(p.start);
  if (part + partitions > isa::kNumPartitions)
    throw KernelFault(fmt::format(
        "check_m3d_active_channels({}) failed at run time: start partition {} + {} active "
        "channels exceeds {}",
        operand, part, partitions, isa::kNumPartitions));
  if (p.count() == 0) return;
  std::int64_t lo = 0, hi = 0;
  for (int d = 0; d < 3; ++d) {
    if (write && p.num[d] > 1 && p.step[d] == 0)
      throw KernelFault(fmt::format(
          "mem3d_valid({}) failed at run time: step 0 on dimension {} of {} elements writes "
          "one element many times",
          operand, d, p.num[d]));
    const std::int64_t far = (std::int64_t{p.num[d]} - 1) * p.step[d] * elem_bytes;
    lo += std::min<std::int64_t>(0, far);
    hi += std::max<std::int64_t>(0, far);
  }
  const std::int64_t off = isa::offset_of(p.start);
  const std::uint32_t cap =
      r == isa::Region::Sbuf ? t.sbuf_bytes_per_partition : t.psum_bytes_per_partition;
  if (off + lo < 0 || off + hi + elem_bytes > std::int64_t{cap})
    throw KernelFault(fmt::format(
        "address error: {} {} pattern at 0x{:07x} spans byte offsets [{}, {}) of each "
        "partition, outside the {} bytes of a {} partition",
        mnemonic, operand, p.start, off + lo, off + hi + elem_bytes, cap, region_text(r)));
}

void check_reduce_source(KernelContext& ctx, const VecOperand& src, const char* mnemonic) {
  const std::uint64_t cap = ctx.timing().sbuf_bytes_per_partition;
  if (src.count * src.bytes > cap)
    throw KernelFault(fmt::format(
        "reduce_src_fits_partition failed at run time: {} src reads {} elements of {} bytes a "
        "partition, more than the {} bytes of an SBUF partition",
        mnemonic, src.count, src.bytes, cap));
}

VecOperand vec_tensor(KernelContext& ctx, const isa::Tensor3D& t, std::uint8_t dtype,
                      unsigned partitions, bool write, const char* name, const char* operand) {
  VecOperand op;
  op.pat = resolve_pattern(t, ctx, name);
  op.dtype = dtype;
  op.bytes = isa::dtype_size(dtype);
  if (op.bytes == 0)
    throw KernelFault(fmt::format("valid_vector_dtype({}): 0x{:x} is not a DTYPE", operand, dtype));
  op.partitions = partitions;
  op.count = op.pat.count();
  check_vec_operand(op.pat, op.bytes, partitions, write, ctx.engine(), ctx.timing(), operand, name);
  return op;
}

VecPlan& vec_plan_dst(KernelContext& ctx, unsigned channels, const isa::Tensor3D& dst,
                      std::uint8_t out_dtype, const char* mnemonic) {
  VecPlan& plan = new_vec_plan(ctx);
  plan.channels = channels;
  plan.out.push_back(vec_tensor(ctx, dst, out_dtype, channels, true,
                                fmt::format("{} dst", mnemonic).c_str(), "dst"));
  return plan;
}

VecPlan& vec_plan_src_dst(KernelContext& ctx, unsigned channels, const isa::Tensor3D& src,
                          std::uint8_t in_dtype, const isa::Tensor3D& dst, std::uint8_t out_dtype,
                          const char* mnemonic, bool same_count) {
  VecOperand in = vec_tensor(ctx, src, in_dtype, channels, false,
                             fmt::format("{} src", mnemonic).c_str(), "src");
  VecPlan& plan = vec_plan_dst(ctx, channels, dst, out_dtype, mnemonic);
  plan.in.push_back(std::move(in));
  if (same_count && plan.in[0].count != plan.out[0].count)
    throw KernelFault(fmt::format(
        "same_element_count(dst) failed at run time: src holds {} elements per partition, dst {}",
        plan.in[0].count, plan.out[0].count));
  return plan;
}

void vec_plan_src1(KernelContext& ctx, VecPlan& plan, const isa::Tensor3D& src1, std::uint8_t dtype,
                   const char* mnemonic) {
  plan.in.push_back(vec_tensor(ctx, src1, dtype, plan.channels, false,
                               fmt::format("{} src1", mnemonic).c_str(), "src1"));
  if (isa::region_of(plan.in[0].pat.start) == isa::Region::Psum &&
      isa::region_of(plan.in[1].pat.start) == isa::Region::Psum)
    throw KernelFault("inputs_not_both_psum failed at run time: src and src1 are both in PSUM");
}

VecOperand vec_vector(KernelContext& ctx, isa::Addr4 a, std::uint8_t dtype, unsigned partitions,
                      bool write, const char* name, const char* operand) {
  if (a.marker() != isa::addr4::kMarkerImm && a.marker() != isa::addr4::kMarkerAddrReg)
    throw KernelFault(
        fmt::format("vector_operand_valid({}): ADDR4 marker 0b{:05b} is not IMM or ADDR_REG",
                    operand, a.marker()));
  isa::Tensor3D t{};
  t.start_addr = a;
  t.num_elem[0] = t.num_elem[1] = t.num_elem[2] = 1;
  VecOperand op = vec_tensor(ctx, t, dtype, partitions, write, name, operand);
  op.per_partition = true;
  op.count = 1;
  return op;
}

std::vector<float> vec_in_f32(const VecOperand& op) {
  std::vector<float> v(op.partitions * op.count);
  if (!num::widen_f32(op.dtype, op.raw.data(), v.data(), v.size()))
    throw KernelFault(fmt::format("valid_vector_dtype: 0x{:x} has no numeric format", op.dtype));
  return v;
}

void vec_out_f32(VecOperand& op, const std::vector<float>& v) {
  if (!num::narrow_f32(op.dtype, v.data(), op.raw.data(),
                       std::min(v.size(), op.raw.size() / op.bytes)))
    throw KernelFault(fmt::format("valid_vector_dtype: 0x{:x} has no numeric format", op.dtype));
}

void vec_scalar(KernelContext& ctx, VecPlan& plan, std::uint32_t word, bool vector,
                const char* name, const char* operand) {
  VecScalar s;
  s.vector = vector;
  if (vector) {
    s.input = static_cast<int>(plan.in.size());
    plan.in.push_back(vec_vector(ctx, isa::Addr4{word}, static_cast<std::uint8_t>(isa::Dtype::Fp32),
                                 plan.channels, false, name, operand));
  } else {
    s.value = num::f32_from_bits(word);
  }
  plan.scalars.push_back(s);
}

float vec_scalar_at(const VecPlan& plan, const std::vector<std::vector<float>>& ins, unsigned s,
                    unsigned c) {
  const VecScalar& v = plan.scalars[s];
  return v.vector ? ins[static_cast<unsigned>(v.input)][c] : v.value;
}

}  // namespace tpb::fw
