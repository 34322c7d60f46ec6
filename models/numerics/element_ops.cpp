#include "models/numerics/element_ops.h"

#include <cstring>

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
    case Dtype::Int8:
      return Format::S8;
    case Dtype::Uint8:
      return Format::U8;
    default:
      return std::nullopt;
  }
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
  if (!fi || !fo) return false;
  if (si == 1 && n >= 256) {
    // An 8-bit source has 256 codes: convert each once.
    std::uint32_t table[256];
    for (std::uint32_t c = 0; c < 256; ++c) table[c] = narrow(*fo, widen(*fi, c));
    for (std::size_t i = 0; i < n; ++i) store(dst + i * so, table[src[i]], so);
    return true;
  }
  for (std::size_t i = 0; i < n; ++i)
    store(dst + i * so, narrow(*fo, widen(*fi, load(src + i * si, si))), so);
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
