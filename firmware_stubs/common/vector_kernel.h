// The one shape of the vector instructions of SPEC §18 (activation,
// tensor_tensor, tensor_scalar, tensor_reduce, tensor_tensor_scan, memset,
// iota, reciprocal, bn_stats, bn_aggr, nc_transpose) on whichever engine
// runs them: one worker at the kernel_info record's VA (invented VAs,
// isa::kva), of 16-byte FLIX bundles
//   entry    the call the seeds' trampolines make
//   fields   decode the word, apply registers, the run-time checks, plan
//   load     every input's elements of every active partition (stream)
//   compute  the arithmetic, its trips the instruction's cost formula (stream)
//   store    the results along the destination patterns (stream)
//   return
// Load, compute and store are one pipelined stream (Bundle::stream), so an
// instruction costs max(compute, the slowest lane) plus a fill (SPEC §8).
// An instruction is its `fields` step (a plain function) that fills a
// VecPlan: the inputs to read, the outputs to write, the trips and the
// function that computes (models/numerics/vector_ops.h does the arithmetic;
// the function walks rows). The kernels of an opcode several engines run
// are the same steps registered at each engine's VAs under its bundle
// names ("dve.ts.compute", "act.ts.compute", ...).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "firmware_stubs/common/resolve_pattern.h"
#include "models/isa/predicates.h"
#include "models/kernel/kernel.h"

namespace tpb::fw {

// An operand of a vector instruction, registers applied.
struct VecOperand {
  ResolvedPattern pat;  // per_partition: pat.start only
  std::uint8_t dtype = 0;
  unsigned bytes = 0;             // element size
  unsigned partitions = 0;        // from pat.start's partition up
  std::uint64_t count = 0;        // elements per partition (per_partition: 1)
  bool per_partition = false;     // one element per partition at the start's offset
  std::vector<std::uint8_t> raw;  // [partition][element] bytes
};

struct VecPlan;
using VecCompute = void (*)(KernelContext& ctx, VecPlan& plan);

// The per-partition FP32 value of an operand that is a scalar or a vector
// (an ADDR4 word with its flag): the scalar's value, or the vector's
// element in each partition (an input, read in the load stream).
struct VecScalar {
  bool vector = false;
  float value = 0;  // the scalar
  int input = -1;   // the vector's index in VecPlan::in
};

// What one instruction reads, computes and writes.
struct VecPlan {
  unsigned channels = 0;
  std::vector<VecOperand> in;
  std::vector<VecOperand> out;
  std::vector<VecScalar> scalars;  // the instruction's scalar-or-vector operands, in its order
  std::uint64_t trips = 0;         // the compute bundle's (the cost formula, engine cycles)
  VecCompute compute = nullptr;
};

// The step of a `fields` bundle: decodes ctx.inst() into a VecPlan
// (set_vec_plan) or throws KernelFault.
using VecFields = std::uint32_t (*)(KernelContext& ctx);

// Registers one vector instruction's worker on an engine at `va`: bundles
// "<prefix>.entry / .fields / .load / .compute / .store / .return".
void add_vector_kernel(KernelRegistry& r, const std::string& prefix, std::uint32_t va,
                       VecFields fields);

// For a fields step: the plan of this instruction (scratch), returned for
// filling; and the checks of an operand that the static contract could not
// make with register addresses or shapes: SBUF or PSUM (PSUM not on
// GpSimd), its partitions inside the memory, no broadcast write, every
// element inside the configured capacity. `name` names it in the message
// ("tensor_tensor src1"), `operand` in the predicate ("src1").
VecPlan& new_vec_plan(KernelContext& ctx);
VecOperand vec_tensor(KernelContext& ctx, const isa::Tensor3D& t, std::uint8_t dtype,
                      unsigned partitions, bool write, const char* name, const char* operand);
// A new plan (new_vec_plan) of `channels` partitions with the operands of
// the common shapes, `mnemonic` naming them in faults: src -> dst
// (same_count: count(src) == count(dst), `same_element_count(dst)`), or a
// dst alone; vec_plan_src1 adds a second source of src's counts
// (`inputs_not_both_psum`).
VecPlan& vec_plan_src_dst(KernelContext& ctx, unsigned channels, const isa::Tensor3D& src,
                          std::uint8_t in_dtype, const isa::Tensor3D& dst, std::uint8_t out_dtype,
                          const char* mnemonic, bool same_count);
VecPlan& vec_plan_dst(KernelContext& ctx, unsigned channels, const isa::Tensor3D& dst,
                      std::uint8_t out_dtype, const char* mnemonic);
void vec_plan_src1(KernelContext& ctx, VecPlan& plan, const isa::Tensor3D& src1, std::uint8_t dtype,
                   const char* mnemonic);
// A per-partition vector operand at `a` (ADDR4: immediate or ADDR_REG).
VecOperand vec_vector(KernelContext& ctx, isa::Addr4 a, std::uint8_t dtype, unsigned partitions,
                      bool write, const char* name, const char* operand);
// The check of an operand alone (tensor_copy shares it).
void check_vec_operand(const ResolvedPattern& p, unsigned elem_bytes, unsigned partitions,
                       bool write, isa::Queue engine, const timing::TimingConfig& t,
                       const char* operand, const char* mnemonic);

// A reduction's source (tensor_reduce, bn_aggr) within an SBUF partition's
// bytes: the model reads a source whole (reduce_src_fits_partition, the
// run-time check of a register shape).
void check_reduce_source(KernelContext& ctx, const VecOperand& src, const char* mnemonic);

// For a compute function: input i's elements as FP32 values, [partition][k]
// (widened once, here), and output o's FP32 values narrowed into its bytes.
std::vector<float> vec_in_f32(const VecOperand& op);
void vec_out_f32(VecOperand& op, const std::vector<float>& v);

// Adds a scalar-or-vector FP32 operand to plan.scalars (and a vector to its
// inputs).
void vec_scalar(KernelContext& ctx, VecPlan& plan, std::uint32_t word, bool vector,
                const char* name, const char* operand);
// Scalar s's value in partition c: the scalar, or the vector's element
// (`ins`: every input as vec_in_f32 gives it).
float vec_scalar_at(const VecPlan& plan, const std::vector<std::vector<float>>& ins, unsigned s,
                    unsigned c);

}  // namespace tpb::fw
