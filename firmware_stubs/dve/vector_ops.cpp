#include "firmware_stubs/dve/vector_ops.h"

#include <cstring>

#include <fmt/format.h>

#include "firmware_stubs/common/host_threads.h"
#include "firmware_stubs/common/vector_kernel.h"
#include "models/isa/opcode_table.h"
#include "models/numerics/vector_ops.h"

namespace tpb::fw {

namespace {

using isa::AluOp;
using isa::Dtype;

// Work below this many elements is not split over host threads.
constexpr std::size_t kMinChunk = 16384;

AluOp op_of(std::uint8_t byte) { return static_cast<AluOp>(byte & isa::kAluOpMask); }
bool is(std::uint8_t d, Dtype t) { return d == static_cast<std::uint8_t>(t); }

// Every partition's elements through `fn(k)` (k: the flat index), split
// over host threads by element.
template <typename Fn>
void each_element(std::size_t n, Fn&& fn) {
  parallel_for(n, kMinChunk, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t k = lo; k < hi; ++k) fn(k);
  });
}
// Every partition through `fn(c)`, split over host threads by partition.
template <typename Fn>
void each_row(unsigned rows, std::uint64_t row_elems, Fn&& fn) {
  const std::size_t min_rows =
      std::max<std::size_t>(1, kMinChunk / std::max<std::uint64_t>(1, row_elems));
  parallel_for(rows, min_rows, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t c = lo; c < hi; ++c) fn(static_cast<unsigned>(c));
  });
}

// Every input as FP32 values.
std::vector<std::vector<float>> inputs_f32(const VecPlan& plan) {
  std::vector<std::vector<float>> v;
  for (const VecOperand& op : plan.in) v.push_back(vec_in_f32(op));
  return v;
}

// A pattern whose elements of one partition lie at consecutive addresses.
bool contiguous(const ResolvedPattern& p) {
  return p.step[0] == 1 && (p.num[1] <= 1 || p.step[1] == static_cast<std::int64_t>(p.num[0])) &&
         (p.num[2] <= 1 || p.step[2] == static_cast<std::int64_t>(p.num[0]) * p.num[1]);
}

// ---- tensor_tensor ----------------------------------------------------------

void tt_compute(KernelContext& ctx, VecPlan& plan) {
  const AluOp op = op_of(isa::decode_as<isa::S3D3Tt>(ctx.inst()).op);
  const std::vector<std::vector<float>> in = inputs_f32(plan);
  std::vector<float> out(in[0].size());
  each_element(out.size(), [&](std::size_t k) { out[k] = num::alu(op, in[0][k], in[1][k]); });
  vec_out_f32(plan.out[0], out);
}

std::uint32_t tt_fields(KernelContext& ctx) {
  const auto i = isa::decode_as<isa::S3D3Tt>(ctx.inst());
  const isa::Tensor3D src = isa::pattern_t(i.src_mem_pattern);
  VecPlan& plan =
      vec_plan_src_dst(ctx, i.num_active_channels, src, i.in_dtype,
                       isa::pattern_t(i.dst_mem_pattern), i.out_dtype, "tensor_tensor", true);
  vec_plan_src1(ctx, plan, isa::steps3d_pattern(i.src1, src), i.in1_dtype, "tensor_tensor");
  const auto psum = [&](int k) {
    return isa::region_of(plan.in[static_cast<unsigned>(k)].pat.start) == isa::Region::Psum;
  };
  const bool psum0 = psum(0), psum1 = psum(1);
  // TIMING.md [O] (the Vector engine): N with one input in PSUM, or SBUF
  // BF16 add / multiply / subtract on contiguous data; else 2N. The POOL
  // streams 32 bits per partition a cycle (TIMING.md [A, E]): max(words
  // read, words written), after its startup.
  const AluOp op = op_of(i.op);
  const bool fast_op = op == AluOp::Add || op == AluOp::Multiply || op == AluOp::Subtract;
  const bool bf16 =
      is(i.in_dtype, Dtype::Bf16) && is(i.in1_dtype, Dtype::Bf16) && is(i.out_dtype, Dtype::Bf16);
  const bool one_pass = psum0 != psum1 || (fast_op && bf16 && contiguous(plan.in[0].pat) &&
                                           contiguous(plan.in[1].pat));
  const std::uint64_t n = plan.in[0].count;
  plan.trips = n * (one_pass ? 1 : 2);
  if (ctx.engine() == isa::Queue::Pool)
    plan.trips = std::max((n * (plan.in[0].bytes + plan.in[1].bytes) + 3) / 4,
                          (n * plan.out[0].bytes + 3) / 4);
  plan.compute = tt_compute;
  return 0;
}

// ---- tensor_scalar -----------------------------------------------------------

void ts_compute(KernelContext& ctx, VecPlan& plan) {
  const auto i = isa::decode_as<isa::S3D3Ts>(ctx.inst());
  const AluOp op0 = op_of(i.op0), op1 = op_of(i.op1);
  const bool rev0 = i.op0 & isa::kAluReverseBit, rev1 = i.op1 & isa::kAluReverseBit;
  const std::vector<std::vector<float>> in = inputs_f32(plan);
  const std::uint64_t n = plan.in[0].count;
  std::vector<float> out(in[0].size());
  each_row(plan.channels, n, [&](unsigned c) {
    const float s0 = vec_scalar_at(plan, in, 0, c), s1 = vec_scalar_at(plan, in, 1, c);
    for (std::uint64_t k = c * n; k < (c + 1) * n; ++k) {
      const float t = rev0 ? num::alu(op0, s0, in[0][k]) : num::alu(op0, in[0][k], s0);
      out[k] = op1 == AluOp::Bypass ? t : rev1 ? num::alu(op1, s1, t) : num::alu(op1, t, s1);
    }
  });
  vec_out_f32(plan.out[0], out);
}

std::uint32_t ts_fields(KernelContext& ctx) {
  const auto i = isa::decode_as<isa::S3D3Ts>(ctx.inst());
  VecPlan& plan =
      vec_plan_src_dst(ctx, i.num_active_channels, isa::pattern_t(i.src_mem_pattern), i.in_dtype,
                       isa::pattern_t(i.dst_mem_pattern), i.out_dtype, "tensor_scalar", true);
  vec_scalar(ctx, plan, i.operand0, i.op0 & isa::kAluVectorBit, "tensor_scalar operand0",
             "operand0");
  vec_scalar(ctx, plan, i.operand1, i.op1 & isa::kAluVectorBit, "tensor_scalar operand1",
             "operand1");
  plan.trips = plan.in[0].count;  // TIMING.md [O]: N; two operators cost as one
  plan.compute = ts_compute;
  return 0;
}

// ---- tensor_reduce -----------------------------------------------------------

void reduce_compute(KernelContext& ctx, VecPlan& plan) {
  const auto i = isa::decode_as<isa::S3D3Reduce>(ctx.inst());
  const AluOp op = op_of(i.op);
  const bool negate = i.op & isa::kAluReverseBit;
  const std::vector<float> x = vec_in_f32(plan.in[0]);
  const std::uint64_t n = plan.in[0].count, m = plan.out[0].count, g = m ? n / m : 0;
  std::vector<float> out(plan.channels * m);
  each_row(plan.channels, n, [&](unsigned c) {
    for (std::uint64_t j = 0; j < m; ++j) {
      const float r = num::reduce(op, x.data() + c * n + j * g, g);
      out[c * m + j] = negate ? -r : r;
    }
  });
  vec_out_f32(plan.out[0], out);
}

std::uint32_t reduce_fields(KernelContext& ctx) {
  const auto i = isa::decode_as<isa::S3D3Reduce>(ctx.inst());
  VecPlan& plan =
      vec_plan_src_dst(ctx, i.num_active_channels, isa::pattern_t(i.src_mem_pattern), i.in_dtype,
                       isa::pattern_t(i.dst_mem_pattern), i.out_dtype, "tensor_reduce", false);
  check_reduce_source(ctx, plan.in[0], "tensor_reduce");
  std::uint64_t kept = 1;
  for (unsigned d = i.axes; d < 3; ++d) kept *= plan.in[0].pat.num[d];
  if (plan.out[0].count != kept)
    throw KernelFault(fmt::format(
        "tensor_reduce_element_count_check failed at run time: dst holds {} elements per "
        "partition, the reduced src {}",
        plan.out[0].count, kept));
  // TIMING.md [O]: N / 2 for BF16 in and out with add or maximum, else N.
  const AluOp op = op_of(i.op);
  const bool half = is(i.in_dtype, Dtype::Bf16) && is(i.out_dtype, Dtype::Bf16) &&
                    (op == AluOp::Add || op == AluOp::Max);
  plan.trips = half ? (plan.in[0].count + 1) / 2 : plan.in[0].count;
  plan.compute = reduce_compute;
  return 0;
}

// ---- tensor_tensor_scan -------------------------------------------------------

void scan_compute(KernelContext& ctx, VecPlan& plan) {
  const auto i = isa::decode_as<isa::S3D3Scan>(ctx.inst());
  const std::vector<std::vector<float>> in = inputs_f32(plan);
  const std::uint64_t n = plan.in[0].count;
  std::vector<float> out(in[0].size());
  each_row(plan.channels, n, [&](unsigned c) {
    num::scan(op_of(i.op0), op_of(i.op1), i.op0 & isa::kAluReverseBit, i.op1 & isa::kAluReverseBit,
              vec_scalar_at(plan, in, 0, c), in[0].data() + c * n, in[1].data() + c * n,
              out.data() + c * n, n);
  });
  vec_out_f32(plan.out[0], out);
}

std::uint32_t scan_fields(KernelContext& ctx) {
  const auto i = isa::decode_as<isa::S3D3Scan>(ctx.inst());
  const isa::Tensor3D src = isa::pattern_t(i.src_mem_pattern);
  VecPlan& plan =
      vec_plan_src_dst(ctx, i.num_active_channels, src, i.in_dtype,
                       isa::pattern_t(i.dst_mem_pattern), i.out_dtype, "tensor_tensor_scan", true);
  vec_plan_src1(ctx, plan, isa::steps3d_pattern(i.src1, src), i.in1_dtype, "tensor_tensor_scan");
  vec_scalar(ctx, plan, i.initial, i.op0 & isa::kAluVectorBit, "tensor_tensor_scan initial",
             "initial");
  plan.trips = 2 * plan.in[0].count;  // TIMING.md [O]: 2N
  plan.compute = scan_compute;
  return 0;
}

// ---- memset --------------------------------------------------------------------

void memset_compute(KernelContext& ctx, VecPlan& plan) {
  const auto i = isa::decode_as<isa::S3D3Memset>(ctx.inst());
  VecOperand& out = plan.out[0];
  for (std::size_t k = 0; k + out.bytes <= out.raw.size(); k += out.bytes)
    std::memcpy(out.raw.data() + k, &i.value, out.bytes);
}

std::uint32_t memset_fields(KernelContext& ctx) {
  const auto i = isa::decode_as<isa::S3D3Memset>(ctx.inst());
  VecPlan& plan = vec_plan_dst(ctx, i.num_active_channels, isa::pattern_t(i.dst_mem_pattern),
                               i.out_dtype, "memset");
  // TIMING.md [O]: N / 2 for a zero BF16 / FP16 fill, else N.
  const bool half = i.value == 0 && (is(i.out_dtype, Dtype::Bf16) || is(i.out_dtype, Dtype::Fp16));
  plan.trips = half ? (plan.out[0].count + 1) / 2 : plan.out[0].count;
  plan.compute = memset_compute;
  return 0;
}

// ---- reciprocal, bn_stats, bn_aggr, nc_transpose (the one-input layout) ---------

VecPlan& unary_plan(KernelContext& ctx, const char* mnemonic, bool same_count) {
  const auto i = isa::decode_as<isa::S3D3Unary>(ctx.inst());
  return vec_plan_src_dst(ctx, i.num_active_channels, isa::pattern_t(i.src_mem_pattern), i.in_dtype,
                          isa::pattern_t(i.dst_mem_pattern), i.out_dtype, mnemonic, same_count);
}

void reciprocal_compute(KernelContext&, VecPlan& plan) {
  const std::vector<float> x = vec_in_f32(plan.in[0]);
  std::vector<float> out(x.size());
  each_element(out.size(), [&](std::size_t k) { out[k] = num::alu(AluOp::Reciprocal, x[k], 0); });
  vec_out_f32(plan.out[0], out);
}
std::uint32_t reciprocal_fields(KernelContext& ctx) {
  VecPlan& plan = unary_plan(ctx, "reciprocal", true);
  plan.trips = 8 * plan.in[0].count;  // TIMING.md [O]: 8N
  plan.compute = reciprocal_compute;
  return 0;
}

// bn_stats (k = 6) and bn_aggr (k = 2): one row of results per partition.
template <unsigned K>
void stats_compute(KernelContext&, VecPlan& plan) {
  const std::vector<float> x = vec_in_f32(plan.in[0]);
  const std::uint64_t n = plan.in[0].count;
  std::vector<float> out(plan.channels * K);
  each_row(plan.channels, n, [&](unsigned c) {
    if constexpr (K == 6)
      num::bn_stats(x.data() + c * n, n, out.data() + c * K);
    else
      num::bn_aggr(x.data() + c * n, n, out.data() + c * K);
  });
  vec_out_f32(plan.out[0], out);
}
std::uint32_t bn_stats_fields(KernelContext& ctx) {
  VecPlan& plan = unary_plan(ctx, "bn_stats", false);
  if (plan.in[0].count == 0 || plan.in[0].count > 512 || plan.out[0].count != 6)
    throw KernelFault(fmt::format(
        "bn_stats_element_count_check failed at run time: src {} elements (1..512), dst {} (6)",
        plan.in[0].count, plan.out[0].count));
  plan.trips = plan.in[0].count;  // TIMING.md [O]: N
  plan.compute = stats_compute<6>;
  return 0;
}
std::uint32_t bn_aggr_fields(KernelContext& ctx) {
  VecPlan& plan = unary_plan(ctx, "bn_aggr", false);
  check_reduce_source(ctx, plan.in[0], "bn_aggr");
  if (plan.in[0].count == 0 || plan.in[0].count % 3 != 0 || plan.out[0].count != 2)
    throw KernelFault(fmt::format(
        "bn_aggr_element_count_check failed at run time: src {} elements (3k), dst {} (2)",
        plan.in[0].count, plan.out[0].count));
  plan.trips = (13 * plan.in[0].count + 2) / 3;  // TIMING.md [O]: 13 N / 3
  plan.compute = stats_compute<2>;
  return 0;
}

void transpose_compute(KernelContext&, VecPlan& plan) {
  const VecOperand& in = plan.in[0];
  VecOperand& out = plan.out[0];
  const unsigned es = in.bytes;
  for (unsigned c = 0; c < in.partitions; ++c)
    for (std::uint64_t j = 0; j < in.count; ++j)
      std::memcpy(out.raw.data() + (j * out.count + c) * es,
                  in.raw.data() + (c * in.count + j) * es, es);
}
std::uint32_t nc_transpose_fields(KernelContext& ctx) {
  const auto i = isa::decode_as<isa::S3D3Unary>(ctx.inst());
  VecPlan& plan = new_vec_plan(ctx);
  plan.channels = i.num_active_channels;
  plan.in.push_back(vec_tensor(ctx, isa::pattern_t(i.src_mem_pattern), i.in_dtype, plan.channels,
                               false, "nc_transpose src", "src"));
  const unsigned f = static_cast<unsigned>(std::min<std::uint64_t>(plan.in[0].count, 129));
  if (plan.channels > 32 || f > 32)
    throw KernelFault(fmt::format(
        "nc_transpose_valid_shape failed at run time: {} partitions x {} elements (at most 32 x "
        "32)",
        plan.channels, plan.in[0].count));
  plan.out.push_back(vec_tensor(ctx, isa::pattern_t(i.dst_mem_pattern), i.out_dtype, f, true,
                                "nc_transpose dst", "dst"));
  if (plan.out[0].count != plan.channels)
    throw KernelFault(fmt::format(
        "nc_transpose_element_count_check failed at run time: dst holds {} elements per "
        "partition, not the {} source partitions",
        plan.out[0].count, plan.channels));
  plan.trips = plan.in[0].count;  // TIMING.md [O]: the Vector engine's max(MIN_II, N)
  plan.compute = transpose_compute;
  return 0;
}

}  // namespace

void add_vector_op_kernels(KernelRegistry& r) {
  namespace kva = isa::kva;
  add_vector_kernel(r, "dve.tt", kva::kDveTensorTensor, tt_fields);
  add_vector_kernel(r, "pool.tt", kva::kPoolTensorTensor, tt_fields);
  add_vector_kernel(r, "dve.ts", kva::kDveTensorScalar, ts_fields);
  add_vector_kernel(r, "act.ts", kva::kActTensorScalar, ts_fields);
  add_vector_kernel(r, "pool.ts", kva::kPoolTensorScalar, ts_fields);
  add_vector_kernel(r, "dve.reduce", kva::kDveTensorReduce, reduce_fields);
  add_vector_kernel(r, "dve.scan", kva::kDveTensorTensorScan, scan_fields);
  add_vector_kernel(r, "dve.memset", kva::kDveMemset, memset_fields);
  add_vector_kernel(r, "pool.memset", kva::kPoolMemset, memset_fields);
  add_vector_kernel(r, "dve.recip", kva::kDveReciprocal, reciprocal_fields);
  add_vector_kernel(r, "dve.bn_stats", kva::kDveBnStats, bn_stats_fields);
  add_vector_kernel(r, "dve.bn_aggr", kva::kDveBnAggr, bn_aggr_fields);
  add_vector_kernel(r, "dve.transpose", kva::kDveNcTranspose, nc_transpose_fields);
}

}  // namespace tpb::fw
