#include "models/numerics/convert_array.h"

#include <vector>

#include <fmt/format.h>

namespace tpb::num {

namespace {

// Every code of `from` is checked before anything is written.
void check_codes(Format from, const std::int64_t* in, std::size_t n) {
  const FormatInfo& fi = info(from);
  const std::int64_t limit = std::int64_t{1} << fi.bits;
  for (std::size_t i = 0; i < n; ++i)
    if (in[i] < 0 || in[i] >= limit)
      throw CodeError(
          i, in[i] < 0 ? fmt::format("element {}: {} is negative, not a {} code", i, in[i], fi.name)
                       : fmt::format("element {}: code 0x{:X} does not fit in {} "
                                     "({} bits)",
                                     i, in[i], fi.name, fi.bits));
}

template <typename Out>
void check_container(Format to) {
  if (sizeof(Out) * 8 < code_container_bits(to))
    throw std::invalid_argument(
        fmt::format("a {}-bit element cannot hold a {} code", sizeof(Out) * 8, info(to).name));
}

// Formats of up to 16 bits go through a table of every code once the array
// is at least as long as the table.
template <typename Out, typename F>
void map_codes(Format from, const std::int64_t* in, Out* out, std::size_t n, F&& one) {
  check_codes(from, in, n);
  const unsigned bits = info(from).bits;
  if (bits <= 16 && n >= (std::size_t{1} << bits)) {
    std::vector<Out> table(std::size_t{1} << bits);
    for (std::size_t c = 0; c < table.size(); ++c)
      table[c] = static_cast<Out>(one(static_cast<std::uint32_t>(c)));
    for (std::size_t i = 0; i < n; ++i) out[i] = table[static_cast<std::size_t>(in[i])];
    return;
  }
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<Out>(one(static_cast<std::uint32_t>(in[i])));
}

template <typename Out>
void codes_impl(Format from, Format to, const std::int64_t* in, Out* out, std::size_t n,
                Overflow ov) {
  check_container<Out>(to);
  map_codes(from, in, out, n, [&](std::uint32_t c) { return convert_code(from, to, c, ov); });
}

template <typename Out>
void values_impl(Format from, Format to, const double* in, Out* out, std::size_t n, Overflow ov) {
  check_container<Out>(to);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(convert_value(from, to, in[i], ov));
}

}  // namespace

unsigned code_container_bits(Format f) {
  const unsigned b = info(f).bits;
  return b <= 8 ? 8 : b <= 16 ? 16 : 32;
}

std::uint32_t convert_code(Format from, Format to, std::uint32_t code, Overflow ov) {
  return encode(to, decode(from, code), ov);
}

std::uint32_t convert_value(Format from, Format to, double value, Overflow ov) {
  return encode(to, decode(from, encode(from, value, ov)), ov);
}

void convert_codes(Format from, Format to, const std::int64_t* in, std::uint8_t* out, std::size_t n,
                   Overflow ov) {
  codes_impl(from, to, in, out, n, ov);
}
void convert_codes(Format from, Format to, const std::int64_t* in, std::uint16_t* out,
                   std::size_t n, Overflow ov) {
  codes_impl(from, to, in, out, n, ov);
}
void convert_codes(Format from, Format to, const std::int64_t* in, std::uint32_t* out,
                   std::size_t n, Overflow ov) {
  codes_impl(from, to, in, out, n, ov);
}

void convert_values(Format from, Format to, const double* in, std::uint8_t* out, std::size_t n,
                    Overflow ov) {
  values_impl(from, to, in, out, n, ov);
}
void convert_values(Format from, Format to, const double* in, std::uint16_t* out, std::size_t n,
                    Overflow ov) {
  values_impl(from, to, in, out, n, ov);
}
void convert_values(Format from, Format to, const double* in, std::uint32_t* out, std::size_t n,
                    Overflow ov) {
  values_impl(from, to, in, out, n, ov);
}

void decode_codes(Format f, const std::int64_t* in, float* out, std::size_t n) {
  map_codes(f, in, out, n, [&](std::uint32_t c) { return static_cast<float>(decode(f, c)); });
}

}  // namespace tpb::num
