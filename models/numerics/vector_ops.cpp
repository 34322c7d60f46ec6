// The vector arithmetic of SPEC §18 (vector_ops.h). Compiled with
// -ffp-contract=off (CMakeLists.txt): every + - * / is its own IEEE single
// operation, rounded once, never fused.
#include "models/numerics/vector_ops.h"

#include <cmath>
#include <limits>

namespace tpb::num {

namespace {

using isa::ActFunc;
using isa::AluOp;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// One rounding of a double to FP32 (round to nearest even).
float round32(double v) { return static_cast<float>(v); }

// maximum / minimum: NaN if either is NaN; +0 above -0.
float fmax32(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
float fmin32(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
float truth(bool t) { return t ? 1.0f : 0.0f; }

}  // namespace

bool alu_is_binary(AluOp op) {
  return static_cast<unsigned>(op) >= static_cast<unsigned>(AluOp::Add) &&
         static_cast<unsigned>(op) <= static_cast<unsigned>(AluOp::AbsMin);
}
bool alu_is_unary(AluOp op) {
  return static_cast<unsigned>(op) >= static_cast<unsigned>(AluOp::Abs) &&
         static_cast<unsigned>(op) < isa::kNumAluOps;
}
bool alu_is_comparison(AluOp op) {
  return static_cast<unsigned>(op) >= static_cast<unsigned>(AluOp::Equal) &&
         static_cast<unsigned>(op) <= static_cast<unsigned>(AluOp::Less);
}

float alu(AluOp op, float a, float b) {
  switch (op) {
    case AluOp::Bypass:
      return a;
    case AluOp::Add:
      return a + b;
    case AluOp::Subtract:
      return a - b;
    case AluOp::Multiply:
      return a * b;
    case AluOp::Divide:
      return a / b;
    case AluOp::Max:
      return fmax32(a, b);
    case AluOp::Min:
      return fmin32(a, b);
    case AluOp::Equal:
      return truth(a == b);
    case AluOp::NotEqual:
      return truth(!(a == b));
    case AluOp::GreaterEqual:
      return truth(a >= b);
    case AluOp::Greater:
      return truth(a > b);
    case AluOp::LessEqual:
      return truth(a <= b);
    case AluOp::Less:
      return truth(a < b);
    case AluOp::Power:
      return round32(std::pow(static_cast<double>(a), static_cast<double>(b)));
    case AluOp::AbsMax:
      return fmax32(std::fabs(a), std::fabs(b));
    case AluOp::AbsMin:
      return fmin32(std::fabs(a), std::fabs(b));
    case AluOp::Abs:
      return std::fabs(a);
    case AluOp::Square:
      return a * a;
    case AluOp::Rsqrt:
      return round32(1.0 / std::sqrt(static_cast<double>(a)));
    case AluOp::Reciprocal:
      return 1.0f / a;
  }
  return kNaN;
}

bool valid_act_func(std::uint8_t f) { return f < isa::kNumActFuncs; }

float activate(ActFunc f, float x) {
  const double d = x;
  switch (f) {
    case ActFunc::Copy:
      return x;
    case ActFunc::Exp:
      return round32(std::exp(d));
    case ActFunc::Log:
      return round32(std::log(d));
    case ActFunc::Sqrt:
      return round32(std::sqrt(d));
    case ActFunc::Rsqrt:
      return round32(1.0 / std::sqrt(d));
    case ActFunc::Reciprocal:
      return round32(1.0 / d);
    case ActFunc::Tanh:
      return round32(std::tanh(d));
    case ActFunc::Sigmoid:
      return round32(1.0 / (1.0 + std::exp(-d)));
    case ActFunc::Relu:
      return std::isnan(x) ? x : (x > 0.0f ? x : 0.0f);
    case ActFunc::Gelu:
      return round32(d * (1.0 + std::erf(d / std::sqrt(2.0))) / 2.0);
    case ActFunc::GeluApprxTanh: {
      const double k = std::sqrt(2.0 / M_PI);
      return round32(d * (1.0 + std::tanh(k * (d + 0.044715 * d * d * d))) / 2.0);
    }
    case ActFunc::Silu:
      return round32(d / (1.0 + std::exp(-d)));
    case ActFunc::Square:
      return x * x;
    case ActFunc::Abs:
      return std::fabs(x);
    case ActFunc::Sign:
      return std::isnan(x) ? x : (x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : 0.0f);
    case ActFunc::Erf:
      return round32(std::erf(d));
    case ActFunc::Softplus:
      return round32(std::log1p(std::exp(d)));
  }
  return kNaN;
}

float reduce_identity(AluOp op) {
  switch (op) {
    case AluOp::Multiply:
      return 1.0f;
    case AluOp::Max:
      return -kInf;
    case AluOp::Min:
      return kInf;
    default:
      return 0.0f;
  }
}

float reduce(AluOp op, const float* x, std::size_t n) {
  if (n == 0) return reduce_identity(op);
  float acc = x[0];
  for (std::size_t i = 1; i < n; ++i) acc = alu(op, acc, x[i]);
  return acc;
}

void scan(AluOp op0, AluOp op1, bool reverse0, bool reverse1, float initial, const float* x0,
          const float* x1, float* out, std::size_t n) {
  float acc = initial;
  for (std::size_t i = 0; i < n; ++i) {
    const float t = reverse0 ? alu(op0, acc, x0[i]) : alu(op0, x0[i], acc);
    acc = reverse1 ? alu(op1, x1[i], t) : alu(op1, t, x1[i]);
    out[i] = acc;
  }
}

namespace {

// {count, mean, M2} of x[first], x[first + 2], ... (two-pass, ascending).
void half_stats(const float* x, std::size_t n, std::size_t first, float out[3]) {
  std::size_t count = 0;
  float sum = 0.0f;
  for (std::size_t i = first; i < n; i += 2, ++count) sum = count == 0 ? x[i] : sum + x[i];
  if (count == 0) {
    out[0] = out[1] = out[2] = 0.0f;
    return;
  }
  const float c = static_cast<float>(count);
  const float mean = sum / c;
  float m2 = 0.0f;
  for (std::size_t i = first, k = 0; i < n; i += 2, ++k) {
    const float d = x[i] - mean;
    const float sq = d * d;
    m2 = k == 0 ? sq : m2 + sq;
  }
  out[0] = c;
  out[1] = mean;
  out[2] = m2;
}

}  // namespace

void bn_stats(const float* x, std::size_t n, float out[6]) {
  half_stats(x, n, 0, out);
  half_stats(x, n, 1, out + 3);
}

void bn_aggr(const float* x, std::size_t n, float out[2]) {
  const std::size_t k = n / 3;
  float count = 0.0f, weighted = 0.0f;
  for (std::size_t i = 0; i < k; ++i) {
    count = count + x[3 * i];
    weighted = weighted + x[3 * i] * x[3 * i + 1];
  }
  const float mean = weighted / count;
  float m2 = 0.0f;
  for (std::size_t i = 0; i < k; ++i) {
    const float d = x[3 * i + 1] - mean;
    m2 = m2 + (x[3 * i + 2] + x[3 * i] * (d * d));
  }
  out[0] = mean;
  out[1] = m2 / count;
}

}  // namespace tpb::num
