#include "firmware_stubs/act/activation.h"

#include <fmt/format.h>

#include "firmware_stubs/common/host_threads.h"
#include "firmware_stubs/common/vector_kernel.h"
#include "models/isa/opcode_table.h"
#include "models/numerics/vector_ops.h"

namespace tpb::fw {

namespace {

using isa::ReduceCmd;
using isa::ReduceOp;

constexpr std::size_t kActMinChunk = 16384;

// The word's reduce operator and command.
ReduceOp reduce_op(const isa::S3D3Act& i) { return static_cast<ReduceOp>(i.reduce & 0x0Fu); }
ReduceCmd reduce_cmd(const isa::S3D3Act& i) { return static_cast<ReduceCmd>(i.reduce >> 4); }

// The reduce registers after this instruction's command, for partition p
// and the row's reduce r.
float next_register(ReduceCmd cmd, ReduceOp op, float reg, float r) {
  switch (cmd) {
    case ReduceCmd::Reset:
      return 0.0f;
    case ReduceCmd::Reduce:
      return op == ReduceOp::None
                 ? reg
                 : num::alu(op == ReduceOp::Add ? isa::AluOp::Add : isa::AluOp::Max, reg, r);
    case ReduceCmd::ResetReduce:
      return op == ReduceOp::None ? 0.0f : r;
    case ReduceCmd::Idle:
      break;
  }
  return reg;
}

void act_compute(KernelContext& ctx, VecPlan& plan) {
  const auto i = isa::decode_as<isa::S3D3Act>(ctx.inst());
  const auto f = static_cast<isa::ActFunc>(i.func);
  std::vector<std::vector<float>> in;
  for (const VecOperand& op : plan.in) in.push_back(vec_in_f32(op));
  const bool bias = i.bias_dtype != 0;
  const unsigned bias_in = static_cast<unsigned>(plan.in.size()) - 1;  // the last, when there
  const std::uint64_t n = plan.in[0].count;
  std::vector<float> out(in[0].size()), row_reduce(plan.channels);
  const ReduceOp op = reduce_op(i);
  const std::size_t min_rows =
      std::max<std::size_t>(1, kActMinChunk / std::max<std::uint64_t>(1, n));
  parallel_for(plan.channels, min_rows, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t c = lo; c < hi; ++c) {
      const float s = vec_scalar_at(plan, in, 0, static_cast<unsigned>(c));
      const float b = bias ? in[bias_in][c] : 0.0f;
      for (std::uint64_t k = c * n; k < (c + 1) * n; ++k) {
        float u = in[0][k] * s;
        if (bias) u = u + b;
        out[k] = num::activate(f, u);
      }
      if (op != ReduceOp::None)
        row_reduce[c] = num::reduce(op == ReduceOp::Add ? isa::AluOp::Add : isa::AluOp::Max,
                                    out.data() + c * n, n);
    }
  });
  vec_out_f32(plan.out[0], out);
  ActReduceState& st = ctx.engine_state().get<ActReduceState>();
  const unsigned p0 = isa::partition_of(plan.in[0].pat.start);
  std::vector<float> regs(plan.channels);
  for (unsigned c = 0; c < plan.channels; ++c) {
    float& reg = st.regs[(p0 + c) % isa::kNumPartitions];
    reg = next_register(reduce_cmd(i), op, reg, row_reduce[c]);
    regs[c] = reg;
  }
  if (plan.out.size() > 1) vec_out_f32(plan.out[1], regs);
}

std::uint32_t act_fields(KernelContext& ctx) {
  const auto i = isa::decode_as<isa::S3D3Act>(ctx.inst());
  if (!num::valid_act_func(i.func))
    throw KernelFault(fmt::format("activation_valid_func: function {} is not one of the table",
                                  unsigned{i.func}));
  VecPlan& plan =
      vec_plan_src_dst(ctx, i.num_active_channels, isa::pattern_t(i.src_mem_pattern), i.in_dtype,
                       isa::pattern_t(i.dst_mem_pattern), i.out_dtype, "activation", true);
  vec_scalar(ctx, plan, i.scale, i.flags & 1u, "activation scale", "scale");
  if (i.bias_dtype != 0)
    plan.in.push_back(vec_vector(ctx, i.bias_addr, i.bias_dtype, plan.channels, false,
                                 "activation bias", "bias"));
  if (i.reduce_dtype != 0)
    plan.out.push_back(vec_vector(ctx, i.reduce_addr, i.reduce_dtype, plan.channels, true,
                                  "activation reduce_res", "reduce_res"));
  // TIMING.md [O]: max(MIN_II, N); with the registers written out (an extra
  // read-out, activation_reduce's cost) + MIN_II.
  const std::uint64_t readout = i.reduce_dtype != 0 ? ctx.timing().min_ii(ctx.engine()) : 0;
  plan.trips = plan.in[0].count + readout;
  plan.compute = act_compute;
  return 0;
}

}  // namespace

void add_activation_kernels(KernelRegistry& r) {
  add_vector_kernel(r, "act.activation", isa::kva::kActActivation, act_fields);
  add_vector_kernel(r, "dve.activation", isa::kva::kDveActivation, act_fields);
}

}  // namespace tpb::fw
