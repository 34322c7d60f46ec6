#include "models/numerics/mx_quantize.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace tpb::num {

int element_emax(Format f) { return std::ilogb(info(f).max_finite); }

int mx_emax_offset(MxOut out, MxEmax emax) {
  static constexpr int kEmax[2][2] = {{8, 15}, {7, 14}};  // [emax][out]
  return kEmax[emax == MxEmax::Ocp ? 0 : 1][out == MxOut::E4M3 ? 0 : 1];
}

std::uint8_t mx_quantize_block(const std::uint32_t in_bits[32], MxOut out, MxEmax emax,
                               std::uint32_t out_words[8]) {
  // SPEC §4 / seed 003 §2.2: biased FP32 exponent (>>23) max over the block.
  const int off = mx_emax_offset(out, emax);
  unsigned max_e = 0;
  bool special = false;
  for (int i = 0; i < 32; ++i) {
    const unsigned e = (in_bits[i] >> 23) & 0xFFu;
    special |= (e == 0xFFu);
    max_e = e > max_e ? e : max_e;
  }
  if (special) {
    for (int r = 0; r < 8; ++r) out_words[r] = 0x7F7F7F7Fu;
    return 0xFF;
  }
  const int s = mx_scale(max_e, off);
  const Format of = out == MxOut::E4M3 ? Format::E4M3 : Format::E5M2;
  for (int r = 0; r < 8; ++r) {
    std::uint32_t w = 0;
    for (int j = 0; j < 4; ++j) {
      const double x = static_cast<double>(f32_from_bits(in_bits[4 * r + j]));
      const std::uint32_t q = encode(of, std::ldexp(x, 127 - s), Overflow::Saturate);
      w |= q << (8 * j);
    }
    out_words[r] = w;
  }
  return static_cast<std::uint8_t>(s);
}

namespace {

// FP32 -> BF16 code, RNE, saturating: for a finite value the same code as
// encode(Format::Bf16, x) (the rounding on the FP32 bits carries into the
// exponent; a carry into the all-ones exponent is an overflow, saturated to
// the largest finite BF16), at a fraction of its cost; anything else goes to
// encode. tpbsim.kernels' tests compare the two paths.
std::uint16_t bf16_code(float x) {
  const std::uint32_t b = bits_from_f32(x);
  if (((b >> 23) & 0xFFu) == 0xFFu) return static_cast<std::uint16_t>(encode(Format::Bf16, x));
  const std::uint32_t r = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;
  if ((r & 0x7F80u) == 0x7F80u) return static_cast<std::uint16_t>((r & 0x8000u) | 0x7F7Fu);
  return static_cast<std::uint16_t>(r);
}

// RNE, saturating, of a finite FP32 value to the MX element formats
// (E4M3, FP4 E2M1, FP6 E2M3) on the FP32 bits: the mantissa rounded to m bits
// (the carry moves into the exponent), the exponent rebiased; below the
// smallest normal the value scaled to the subnormal quantum and rounded to an
// integer (exact: a power-of-two scaling). The same codes as encode, which
// it stands in for at a fraction of the cost: checked against it for every
// code's value and every midpoint between neighbours when first made (any
// difference, or another format: encode is used), and by tpbsim.kernels'
// tests against the NumPy path over whole arrays.
class FastMinifloat {
 public:
  explicit FastMinifloat(Format f) : f_(f) {
    const std::string name = info(f).name;
    if (name == "e4m3")
      set(3, 7, 0x80);
    else if (name == "fp4_e2m1")
      set(1, 1, 0x8);
    else if (name == "fp6_e2m3")
      set(3, 1, 0x20);
    if (ok_) ok_ = self_check();
  }
  std::uint32_t operator()(float x) const {
    return ok_ ? fast(x) : encode(f_, static_cast<double>(x));
  }

 private:
  void set(int m, int bias, std::uint32_t sign) {
    m_ = m, bias_ = bias, sign_ = sign, ok_ = true;
    maxcode_ = encode(f_, info(f_).max_finite) & (sign - 1);
  }
  std::uint32_t fast(float x) const {
    const std::uint32_t b = bits_from_f32(x);
    const std::uint32_t sgn = (b >> 31) ? sign_ : 0u;
    const std::uint32_t a = b & 0x7FFFFFFFu;
    const int emin = 1 - bias_;
    std::uint32_t mag;
    if (static_cast<int>(a >> 23) - 127 < emin) {
      mag = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(std::fabs(x), m_ - emin)));
    } else {
      const int shift = 23 - m_;
      const std::uint32_t r = (a + ((1u << (shift - 1)) - 1u) + ((a >> shift) & 1u)) >> shift;
      mag = r - (static_cast<std::uint32_t>(127 - bias_) << m_);
    }
    return sgn | std::min(mag, maxcode_);
  }
  bool self_check() const {
    for (std::uint32_t c = 0; c <= maxcode_; ++c) {
      const double v = decode(f_, c);
      const double next = c < maxcode_ ? decode(f_, c + 1) : 2 * v + 1;
      for (double x : {v, -v, (v + next) / 2, -(v + next) / 2, std::nextafter(v, next),
                       std::nextafter((v + next) / 2, next), std::nextafter((v + next) / 2, v)}) {
        const float xf = static_cast<float>(x);
        if (fast(xf) != encode(f_, static_cast<double>(xf))) return false;
      }
    }
    return true;
  }
  Format f_;
  int m_ = 0, bias_ = 0;
  std::uint32_t sign_ = 0, maxcode_ = 0;
  bool ok_ = false;
};

// Every code's value, decoded once.
std::vector<float> code_values(Format f) {
  std::vector<float> value(std::size_t{1} << info(f).bits);
  for (std::size_t c = 0; c < value.size(); ++c)
    value[c] = static_cast<float>(decode(f, static_cast<std::uint32_t>(c)));
  return value;
}

// Work items per chunk a caller's thread takes at least: about 64 Ki elements.
std::size_t min_chunk(std::size_t elements_per_item) {
  return std::max<std::size_t>(
      1, (std::size_t{1} << 16) / std::max<std::size_t>(1, elements_per_item));
}

}  // namespace

void mx_quantize_rows(const MxRows& q, const ForRanges& for_ranges) {
  const std::vector<float> value = code_values(q.code);
  const FastMinifloat encode_code(q.code);
  const std::size_t bl = q.block;
  // Rows [r0, r1): each block independent of every other.
  for_ranges(q.rows, min_chunk(q.cols), [&](std::size_t r0, std::size_t r1) {
    std::vector<float> v(bl);
    for (std::size_t base = r0 * q.cols; base < r1 * q.cols; base += bl) {
      unsigned top = 0;
      for (std::size_t i = 0; i < bl; ++i) {
        float e = q.x[base + i];
        if (q.bf16_first) {
          const std::uint16_t c = bf16_code(e);
          q.bf16[base + i] = c;
          e = f32_from_bits(static_cast<std::uint32_t>(c) << 16);
        }
        v[i] = e;
        top = std::max(top, biased_exponent(e));
      }
      const int s = mx_scale(top, q.emax);
      q.scales[base / bl] = static_cast<std::uint8_t>(s);
      const float scale = std::ldexp(1.0f, s - 127);
      for (std::size_t i = 0; i < bl; ++i) {
        const std::uint32_t c =
            encode_code(std::ldexp(v[i], 127 - s));  // exact, or far below a code
        q.codes[base + i] = static_cast<std::uint8_t>(c);
        q.used[base + i] = value[c] * scale;
      }
    }
  });
}

int group8_scale(double amax, Format code, Group8Rule rule, double top) {
  if (rule == Group8Rule::Ocp)
    return mx_scale(biased_exponent(static_cast<float>(amax)), element_emax(code));
  if (!(amax > 0)) return 127;
  // The smallest e with amax <= top x 2^e: log2 of the rounded quotient can
  // be one off next to a power of two, so it is decided exactly on amax.
  int e = static_cast<int>(std::ceil(std::log2(amax / top)));
  while (amax > std::ldexp(top, e)) ++e;
  while (amax <= std::ldexp(top, e - 1)) --e;
  return std::clamp(e + 127, 0, 254);
}

namespace {

// POOL's value of code c under scale s depends on nothing else: a table of
// [s][c], the exact code x 2^(s-127), clamped to +-FLT_MAX, to FP32, to `out`.
std::vector<float> pool_values(Format code, Format out) {
  const double big = std::numeric_limits<float>::max();
  std::vector<float> v(255 * 16);
  for (int s = 0; s < 255; ++s)
    for (std::uint32_t c = 0; c < 16; ++c) {
      const double x = std::clamp(std::ldexp(decode(code, c), s - 127), -big, big);
      v[16 * s + c] =
          static_cast<float>(decode(out, encode(out, static_cast<double>(static_cast<float>(x)))));
    }
  return v;
}

}  // namespace

void group8_quantize(const Group8& q, const ForRanges& for_ranges) {
  const FastMinifloat encode_code(q.code);
  const std::vector<float> pool_value = pool_values(q.code, q.out);
  const std::size_t n = q.n, k = q.k, row_bytes = n / 8 * 20;
  // Partitions [p0, p1): 4 k each, every column.
  for_ranges(k / 4, min_chunk(4 * n), [&](std::size_t p0, std::size_t p1) {
    for (std::size_t p = p0; p < p1; ++p) {
      std::uint8_t* row = q.data + p * row_bytes;
      for (std::size_t chunk = 0; chunk < n / 8; ++chunk) {
        std::uint32_t words[5] = {0, 0, 0, 0, 0};
        for (std::size_t g = 0; g < 4; ++g) {
          const std::size_t col = 8 * chunk + 2 * g;  // columns col, col + 1
          float x[8];
          double amax = 0;
          for (std::size_t i = 0; i < 8; ++i) {
            x[i] = q.wt[(col + i / 4) * k + 4 * p + i % 4];
            amax = std::max(amax, std::fabs(static_cast<double>(x[i])));
          }
          const int s = group8_scale(amax, q.code, q.rule, q.top);
          words[0] |= static_cast<std::uint32_t>(s) << (8 * g);
          for (std::size_t i = 0; i < 8; ++i) {
            const auto scaled = static_cast<float>(std::ldexp(static_cast<double>(x[i]), 127 - s));
            const std::uint32_t c = q.code == Format::Fp4E2M1
                                        ? encode_code(scaled)
                                        : encode(q.code, static_cast<double>(scaled));
            words[1 + g] |= (c & 0xFu) << (4 * i);
            q.used[(col + i / 4) * k + 4 * p + i % 4] = pool_value[16 * s + (c & 0xFu)];
          }
        }
        for (std::size_t w = 0; w < 5; ++w)
          for (std::size_t b = 0; b < 4; ++b)
            row[20 * chunk + 4 * w + b] = static_cast<std::uint8_t>(words[w] >> (8 * b));
      }
    }
  });
}

}  // namespace tpb::num
