// The arithmetic of the vector-style instructions of SPEC §18 (pure C++):
// the ALU operators of the Vector / Scalar / GpSimd engines, the activation
// functions of the Scalar engine, free-axis reductions and scans, and the
// batch-norm statistics. The firmware stubs walk the access patterns and
// call these on buffers they own, a row (one partition) or a run of rows at a
// time, from whichever host thread they split the work over (threads are the
// caller's: nothing here starts one).
//
// One convention (SPEC §18, docs/CONVENTIONS.md "Vector numerics"): inputs
// convert exactly to FP32 (element_ops.h; INT32 / UINT32 round to nearest
// even past 2^24); each operator computes in FP32 with one round to nearest
// even (IEEE single: + - * / sqrt are correctly rounded); a transcendental
// function is computed in double precision by the C library from its
// textbook definition and rounded once to FP32 (the hardware's
// approximations are not public); reductions and scans run in ascending
// index order in FP32; results convert to the destination DTYPE as
// `tpbsim convert` does (element_ops.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/isa/encodings.h"

namespace tpb::num {

// ---- ALU operators (isa::AluOp) --------------------------------------------

// Whether `op` is a binary operator (add .. abs_min), a unary one (abs ..
// reciprocal: the operand is ignored), or the bypass (the value passes).
bool alu_is_binary(isa::AluOp op);
bool alu_is_unary(isa::AluOp op);
bool alu_is_comparison(isa::AluOp op);  // equal .. less: 1.0 or 0.0

// a <op> b in FP32 with one rounding:
//   add, subtract, multiply, divide: IEEE single;
//   maximum / minimum: NaN if either is NaN, else the larger (smaller) value,
//     +0 above -0 (minimum: -0 below +0);
//   comparisons: 1.0 when true, 0.0 when false (a NaN compares unequal);
//   power: pow(a, b) in double, rounded once; abs_max / abs_min: maximum /
//     minimum of |a| and |b|;
//   unary (b ignored): abs, square (a * a), rsqrt (1 / sqrt(a) in double,
//     rounded once), reciprocal (1 / a, IEEE single); bypass: a.
float alu(isa::AluOp op, float a, float b);

// ---- activation functions (isa::ActFunc) -------------------------------------

// f(x): copy, relu, abs and square in FP32 (exact or one rounding); every
// other in double from its definition, rounded once to FP32:
//   exp, log, sqrt, tanh, erf: the C library's; rsqrt = 1 / sqrt(x);
//   reciprocal = 1 / x; sigmoid = 1 / (1 + exp(-x)); silu = x * sigmoid(x);
//   gelu = x * (1 + erf(x / sqrt 2)) / 2; gelu_apprx_tanh = x * (1 + tanh(
//   sqrt(2 / pi) * (x + 0.044715 x^3))) / 2; sign = -1, 0 or 1 (NaN stays);
//   softplus = log(1 + exp(x)) (log1p).
float activate(isa::ActFunc f, float x);
// Whether `f` is one of the functions above.
bool valid_act_func(std::uint8_t f);

// ---- reductions and scans ------------------------------------------------------

// The value a reduction with `op` starts from: add 0, multiply 1, maximum
// -Inf, minimum +Inf (other operators: 0).
float reduce_identity(isa::AluOp op);
// op over x[0..n) ascending in FP32, from reduce_identity(op); the first
// element is taken as it is (so a one-element add of -0 keeps -0).
float reduce(isa::AluOp op, const float* x, std::size_t n);

// tensor_tensor_scan (SPEC §18, nki.isa): acc = initial; for i ascending:
// acc = op1(op0(x0[i], acc), x1[i]), out[i] = acc; reverse0 swaps op0's
// operands (op0(acc, x0[i])), reverse1 op1's (op1(x1[i], t)).
void scan(isa::AluOp op0, isa::AluOp op1, bool reverse0, bool reverse1, float initial,
          const float* x0, const float* x1, float* out, std::size_t n);

// ---- batch-norm statistics (docs/CONVENTIONS.md) -----------------------------

// bn_stats of one row of n elements: out = {count, mean, M2} of the
// elements at even indices, then of those at odd indices, where count is
// the number of elements, mean = (their FP32 sum, ascending) / count, and
// M2 = the FP32 sum, ascending, of (x - mean)^2 (each subtract and square
// rounded once); a half with no element gives {0, 0, 0} (it adds nothing
// in bn_aggr).
void bn_stats(const float* x, std::size_t n, float out[6]);
// bn_aggr of one row of k (count, mean, M2) triples (n = 3 k elements):
// N = sum of counts; mean = (sum of count_i x mean_i) / N; M2 = sum of
// (M2_i + count_i x (mean_i - mean)^2); out = {mean, M2 / N}; every sum
// ascending over i in FP32, every operation rounded once; N = 0 gives NaN.
void bn_aggr(const float* x, std::size_t n, float out[2]);

}  // namespace tpb::num
