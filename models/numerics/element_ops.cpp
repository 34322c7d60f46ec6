#include "models/numerics/element_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "models/isa/encodings.h"

namespace tpb::num {

namespace {

using isa::Dtype;

constexpr std::uint8_t ord(Dtype d) { return static_cast<std::uint8_t>(d); }

std::uint32_t load(const std::uint8_t* p, unsigned bytes) {
  std::uint32_t v = 0;
  std::memcpy(&v, p, bytes);  // little-endian host (encodings.h)
  return v;
}
void store(std::uint8_t* p, std::uint32_t v, unsigned bytes) { std::memcpy(p, &v, bytes); }

// The FP32 value of an element code (exact for every element_format).
float widen(Format f, std::uint32_t code) {
  if (f == Format::Fp32) return f32_from_bits(code);
  return static_cast<float>(decode(f, code));
}

// A code of `f` for an FP32 value: RNE, saturating (formats.h's encode of the
// exact value; for FP32 itself the bits).
std::uint32_t narrow(Format f, float v) {
  if (f == Format::Fp32) return bits_from_f32(v);
  return encode(f, static_cast<double>(v), Overflow::Saturate);
}

// The FP32 bits of every code of a format of at most 16 bits (decode(),
// once per format): widening is a lookup.
class WidenTable {
 public:
  explicit WidenTable(Format f) : bits_(std::size_t{1} << info(f).bits) {
    for (std::uint32_t c = 0; c < bits_.size(); ++c) bits_[c] = bits_from_f32(widen(f, c));
  }
  std::uint32_t operator()(std::uint32_t code) const { return bits_[code]; }

 private:
  std::vector<std::uint32_t> bits_;
};

// encode()'s result for FP32 inputs, cached by the bits RNE depends on: an
// FP32 value whose exponent lies in the format's normal range (or above it)
// rounds by its sign, exponent, the format's M mantissa bits, the next bit
// and whether any lower bit is set, so one encode() per such class answers
// for all its members. Smaller exponents round at another position: encode().
// M and the smallest normal come from the codec itself (2^M codes between 1
// and 2; the value of the code with exponent field 1).
class Fp32Narrower {
 public:
  explicit Fp32Narrower(Format f) : f_(f) {
    const std::uint32_t m = encode(f, 2.0) - encode(f, 1.0);
    unsigned mbits = 0;
    while ((1u << mbits) < m) ++mbits;
    int e2 = 0;
    std::frexp(decode(f, 1u << mbits), &e2);  // smallest normal = 2^(e2 - 1)
    min_exp_ = static_cast<std::uint32_t>(std::max(1, e2 - 1 + 127));
    shift_ = 22 - mbits;  // keeps sign, exponent, M bits and the round bit
    table_.resize(std::size_t{1} << (32 - shift_ + 1));
    for (std::uint32_t k = 0; k < table_.size(); ++k)
      table_[k] =
          static_cast<std::uint16_t>(narrow(f, f32_from_bits(((k >> 1) << shift_) | (k & 1u))));
  }
  std::uint32_t operator()(std::uint32_t bits) const {
    if (((bits >> 23) & 0xFFu) < min_exp_) return narrow(f_, f32_from_bits(bits));
    const std::uint32_t sticky = (bits & ((1u << shift_) - 1u)) != 0;
    return table_[((bits >> shift_) << 1) | sticky];
  }

 private:
  Format f_;
  std::uint32_t min_exp_ = 0;  // biased FP32 exponent of the format's smallest normal
  unsigned shift_ = 0;
  std::vector<std::uint16_t> table_;
};

const WidenTable* widen_table(Format f) {
  switch (f) {
#define TPB_TABLE(F)                      \
  case Format::F: {                       \
    static const WidenTable t(Format::F); \
    return &t;                            \
  }
    TPB_TABLE(Bf16)
    TPB_TABLE(Fp16)
    TPB_TABLE(E2M5)
    TPB_TABLE(E3M4)
    TPB_TABLE(E4M3)
    TPB_TABLE(E5M2)
    TPB_TABLE(E4M3Legacy)
    TPB_TABLE(S8)
    TPB_TABLE(U8)
#undef TPB_TABLE
    default:
      return nullptr;
  }
}

const Fp32Narrower* fp32_narrower(Format f) {
  switch (f) {
#define TPB_TABLE(F)                        \
  case Format::F: {                         \
    static const Fp32Narrower t(Format::F); \
    return &t;                              \
  }
    TPB_TABLE(Bf16)
    TPB_TABLE(Fp16)
    TPB_TABLE(E2M5)
    TPB_TABLE(E3M4)
    TPB_TABLE(E4M3)
    TPB_TABLE(E5M2)
    TPB_TABLE(E4M3Legacy)
#undef TPB_TABLE
    default:
      return nullptr;  // FP32 itself; INT8 / UINT8 round at the units
  }
}

// One element through FP32 bits.
struct Fp32Path {
  const WidenTable* widen;       // null: the source is FP32
  const Fp32Narrower* narrower;  // null: FP32, INT8 or UINT8
  Format out;
  std::uint32_t operator()(std::uint32_t code) const {
    const std::uint32_t bits = widen ? (*widen)(code) : code;
    if (out == Format::Fp32) return bits;
    return narrower ? (*narrower)(bits) : narrow(out, f32_from_bits(bits));
  }
};

}  // namespace

std::optional<Format> element_format(std::uint8_t dtype) {
  switch (static_cast<Dtype>(dtype)) {
    case Dtype::Fp32:
      return Format::Fp32;
    case Dtype::Bf16:
      return Format::Bf16;
    case Dtype::Fp16:
      return Format::Fp16;
    case Dtype::Fp8Exp2:
      return Format::E2M5;
    case Dtype::Fp8Exp3:
      return Format::E3M4;
    case Dtype::Fp8Exp4:
      return Format::E4M3;
    case Dtype::Fp8Exp5:
      return Format::E5M2;
    case Dtype::Fp8Exp4Legacy:
      return Format::E4M3Legacy;
    case Dtype::Int8:
      return Format::S8;
    case Dtype::Uint8:
      return Format::U8;
    default:
      return std::nullopt;
  }
}

namespace {

// The 16- and 32-bit integer DTYPEs (no Format of their own): bits, signed.
bool wide_integer(std::uint8_t d, unsigned& bits, bool& is_signed) {
  switch (static_cast<Dtype>(d)) {
    case Dtype::Int16:
      bits = 16, is_signed = true;
      return true;
    case Dtype::Uint16:
      bits = 16, is_signed = false;
      return true;
    case Dtype::Int32:
      bits = 32, is_signed = true;
      return true;
    case Dtype::Uint32:
      bits = 32, is_signed = false;
      return true;
    default:
      return false;
  }
}

// An FP32 value into a 16- or 32-bit integer: to nearest even, saturating;
// NaN gives 0.
std::uint32_t to_wide_integer(float v, unsigned bits, bool is_signed) {
  if (std::isnan(v)) return 0;
  const double lo = is_signed ? -std::ldexp(1.0, static_cast<int>(bits) - 1) : 0.0;
  const double hi = is_signed ? std::ldexp(1.0, static_cast<int>(bits) - 1) - 1.0
                              : std::ldexp(1.0, static_cast<int>(bits)) - 1.0;
  const double r = std::nearbyint(std::min(std::max(static_cast<double>(v), lo), hi));
  return static_cast<std::uint32_t>(static_cast<std::int64_t>(r));
}

}  // namespace

bool is_numeric_dtype(std::uint8_t d) {
  unsigned bits = 0;
  bool sgn = false;
  return element_format(d).has_value() || wide_integer(d, bits, sgn);
}

bool widen_f32(std::uint8_t dtype, const std::uint8_t* src, float* out, std::size_t n) {
  unsigned bits = 0;
  bool sgn = false;
  if (wide_integer(dtype, bits, sgn)) {
    const unsigned es = bits / 8;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t c = load(src + i * es, es);
      const std::int64_t v = bits == 16 ? (sgn ? static_cast<std::int16_t>(c) : c)
                                        : (sgn ? static_cast<std::int32_t>(c) : std::int64_t{c});
      out[i] = static_cast<float>(v);  // to nearest even past 2^24
    }
    return true;
  }
  if (!element_format(dtype)) return false;
  return convert_elements(dtype, static_cast<std::uint8_t>(Dtype::Fp32), src,
                          reinterpret_cast<std::uint8_t*>(out), n);
}

bool narrow_f32(std::uint8_t dtype, const float* src, std::uint8_t* dst, std::size_t n) {
  unsigned bits = 0;
  bool sgn = false;
  if (wide_integer(dtype, bits, sgn)) {
    for (std::size_t i = 0; i < n; ++i)
      store(dst + i * (bits / 8), to_wide_integer(src[i], bits, sgn), bits / 8);
    return true;
  }
  if (!element_format(dtype)) return false;
  return convert_elements(static_cast<std::uint8_t>(Dtype::Fp32), dtype,
                          reinterpret_cast<const std::uint8_t*>(src), dst, n);
}

bool convert_elements(std::uint8_t in_dtype, std::uint8_t out_dtype, const std::uint8_t* src,
                      std::uint8_t* dst, std::size_t n) {
  const unsigned si = isa::dtype_size(in_dtype), so = isa::dtype_size(out_dtype);
  if (in_dtype == out_dtype) {
    if (si == 0) return false;
    if (n != 0) std::memmove(dst, src, n * si);
    return true;
  }
  const std::optional<Format> fi = element_format(in_dtype), fo = element_format(out_dtype);
  if (!fi || !fo) {
    // A 16- or 32-bit integer on either side: through FP32 values.
    if (!is_numeric_dtype(in_dtype) || !is_numeric_dtype(out_dtype)) return false;
    std::vector<float> mid(n);
    widen_f32(in_dtype, src, mid.data(), n);
    narrow_f32(out_dtype, mid.data(), dst, n);
    return true;
  }
  using One = std::integral_constant<unsigned, 1>;
  using Two = std::integral_constant<unsigned, 2>;
  using Four = std::integral_constant<unsigned, 4>;
  // The element loop for fixed element sizes (so loads and stores inline).
  const auto run = [&](auto in_bytes, auto out_bytes, const auto& path) {
    constexpr unsigned kIn = decltype(in_bytes)::value, kOut = decltype(out_bytes)::value;
    for (std::size_t i = 0; i < n; ++i) store(dst + i * kOut, path(load(src + i * kIn, kIn)), kOut);
  };
  const auto with_out = [&](auto in_bytes, const auto& path) {
    if (so == 1)
      run(in_bytes, One{}, path);
    else if (so == 2)
      run(in_bytes, Two{}, path);
    else
      run(in_bytes, Four{}, path);
  };
  // Through FP32 bits: a lookup to widen, a lookup (or the codec) to narrow.
  const Fp32Path fp32{widen_table(*fi), fp32_narrower(*fo), *fo};
  if (si == 1 && n >= 256) {
    // An 8-bit source has 256 codes: convert each once.
    std::uint32_t table[256];
    for (std::uint32_t c = 0; c < 256; ++c) table[c] = fp32(c);
    with_out(One{}, [&table](std::uint32_t c) { return table[c & 0xFFu]; });
  } else if (si == 1) {
    with_out(One{}, fp32);
  } else if (si == 2) {
    with_out(Two{}, fp32);
  } else {
    with_out(Four{}, fp32);
  }
  return true;
}

bool is_add_dtype(std::uint8_t d) {
  switch (static_cast<Dtype>(d)) {
    case Dtype::Int8:
    case Dtype::Uint8:
    case Dtype::Int16:
    case Dtype::Uint16:
    case Dtype::Int32:
    case Dtype::Uint32:
      return true;
    default:
      return element_format(d).has_value();
  }
}

bool add_elements(std::uint8_t dtype, const std::uint8_t* src, std::uint8_t* acc, std::size_t n) {
  if (!is_add_dtype(dtype)) return false;
  const unsigned es = isa::dtype_size(dtype);
  switch (static_cast<Dtype>(dtype)) {
    case Dtype::Int8:
    case Dtype::Uint8:
    case Dtype::Int16:
    case Dtype::Uint16:
    case Dtype::Int32:
    case Dtype::Uint32: {
      // Two's complement: signed and unsigned add alike, modulo 2^bits.
      const std::uint32_t mask = es == 4 ? 0xFFFFFFFFu : (1u << (8 * es)) - 1u;
      for (std::size_t i = 0; i < n; ++i)
        store(acc + i * es, (load(acc + i * es, es) + load(src + i * es, es)) & mask, es);
      return true;
    }
    default:
      break;
  }
  const Format f = *element_format(dtype);
  if (f == Format::Fp32) {
    for (std::size_t i = 0; i < n; ++i) {
      const float sum = widen(f, load(acc + i * es, es)) + widen(f, load(src + i * es, es));
      store(acc + i * es, bits_from_f32(sum), es);
    }
    return true;
  }
  // BF16 / FP16 / FP8: the sum of two such values rounded to a double keeps
  // more than twice their precision plus two bits, so one more rounding
  // into the format equals rounding the exact sum once.
  for (std::size_t i = 0; i < n; ++i) {
    const double sum = decode(f, load(acc + i * es, es)) + decode(f, load(src + i * es, es));
    store(acc + i * es, encode(f, sum, Overflow::Saturate), es);
  }
  return true;
}

}  // namespace tpb::num
