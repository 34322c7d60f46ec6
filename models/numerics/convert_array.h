// `tpbsim convert` over arrays (SPEC §9, §12): the rule of one VALUE of the
// CLI applied to n elements, for bindings that hand over whole arrays
// (tpbsim.convert in Python). Pure C++.
//
//   a code of FROM     -> encode(TO, decode(FROM, code))
//   a value (decimal)  -> encode(TO, decode(FROM, encode(FROM, value)))
//
// Both narrowing steps use the same overflow rule (saturate, or `--no-sat`).
// Codes out are the TO format's codes, zero-extended in the output element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "models/numerics/formats.h"

namespace tpb::num {

// One element (convert_line is built on these).
std::uint32_t convert_code(Format from, Format to, std::uint32_t code, Overflow ov);
std::uint32_t convert_value(Format from, Format to, double value, Overflow ov);

// A code that does not fit its format: what() names the element and the code.
class CodeError : public std::invalid_argument {
 public:
  CodeError(std::size_t index, const std::string& what)
      : std::invalid_argument(what), index_(index) {}
  std::size_t index() const { return index_; }

 private:
  std::size_t index_;
};

// n codes of `from` (each in 0 .. 2^bits - 1) to codes of `to`. Every input
// is checked before anything is written: CodeError naming the first element
// that is negative or wider than `from`'s bits. `out` holds codes of `to`
// zero-extended to its element (it must be wide enough: 8 bits for formats
// up to 8 bits, 16 for bf16 / fp16, 32 for fp32).
void convert_codes(Format from, Format to, const std::int64_t* in, std::uint8_t* out, std::size_t n,
                   Overflow ov);
void convert_codes(Format from, Format to, const std::int64_t* in, std::uint16_t* out,
                   std::size_t n, Overflow ov);
void convert_codes(Format from, Format to, const std::int64_t* in, std::uint32_t* out,
                   std::size_t n, Overflow ov);

// n values, each first rounded into `from`, to codes of `to`.
void convert_values(Format from, Format to, const double* in, std::uint8_t* out, std::size_t n,
                    Overflow ov);
void convert_values(Format from, Format to, const double* in, std::uint16_t* out, std::size_t n,
                    Overflow ov);
void convert_values(Format from, Format to, const double* in, std::uint32_t* out, std::size_t n,
                    Overflow ov);

// n codes of `f` decoded to FP32. Exact: every value of every format other
// than fp32 itself is an FP32 value (E8M0's 2^-127 is an FP32 subnormal).
// CodeError as convert_codes.
void decode_codes(Format f, const std::int64_t* in, float* out, std::size_t n);

// The width in bits of the narrowest unsigned element that holds a code of
// `f`: 8, 16 or 32.
unsigned code_container_bits(Format f);

}  // namespace tpb::num
