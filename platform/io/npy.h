// NumPy .npy file I/O (format v1.0 written; v1.0, 2.0 and 3.0 read) for the
// `tpbsim run --load / --dump` options (SPEC §9). Pure C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tpb::io {

enum class NpyDtype { U8, U16, U32, I8, F16, F32 };

struct NpyArray {
  NpyDtype dtype = NpyDtype::U8;
  std::vector<std::size_t> shape;  // empty = 0-d (one element)
  std::vector<std::uint8_t> data;  // C order, little-endian
};

std::size_t npy_itemsize(NpyDtype);
// "|u1" "<u2" "<u4" "|i1" "<f2" "<f4"
const char* npy_descr(NpyDtype);
// Element count of `shape` (1 for a 0-d array); SIZE_MAX when the product
// does not fit.
std::size_t npy_element_count(const std::vector<std::size_t>& shape);

// The DTYPE of `--dump`: "u8","u16","u32","i8","f16","f32","bf16" (bf16 ->
// U16: NumPy has no bfloat16, so the raw bits are stored). False if unknown.
bool parse_dump_dtype(std::string_view name, NpyDtype& out);

class NpyError : public std::runtime_error {
 public:
  // what() = "PATH: PROBLEM".
  NpyError(const std::string& path, const std::string& problem)
      : std::runtime_error(path + ": " + problem), path_(path) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Throws NpyError naming the file and what is wrong: cannot open, bad magic,
// unsupported version, truncated or malformed header, big-endian or
// unsupported dtype, fortran_order True, truncated data, shape/size mismatch.
// A file past kMaxNpyBytes (the largest SBUF) is refused as it is read
// (/dev/zero never ends).
inline constexpr std::uint64_t kMaxNpyBytes = std::uint64_t{256} << 20;  // 256 MiB
NpyArray read_npy(const std::string& path);
// The same with another bound: a file larger than `max_bytes` is refused
// with "PATH: is larger than MAX bytes, `why`" (an HBM load: what the HBM
// from its offset holds).
NpyArray read_npy(const std::string& path, std::uint64_t max_bytes, const std::string& why);
// The same for the bytes of a whole .npy file; errors name `path`.
NpyArray parse_npy(std::string_view bytes, const std::string& path);

// Writes format v1.0 byte-for-byte as numpy.save does (header padded with
// spaces so the data starts at a multiple of 64 bytes). Throws NpyError if
// data.size() != element count * itemsize or the file cannot be written.
void write_npy(const std::string& path, const NpyArray& a);

}  // namespace tpb::io
