// Fuzz target: the .npy reader of `tpbsim run --load` (docs/FUZZING.md).
//
// Input: the bytes of a .npy file. Properties:
//   - parse_npy returns an array or throws NpyError naming the file;
//   - an array read holds exactly its shape's element count times the
//     item size of its dtype (computed here in 128-bit arithmetic);
//   - written back with write_npy and read again, it is the same array.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "platform/io/npy.h"
#include "sc_tests/fuzz/fuzz_check.h"

namespace {

using namespace tpb::io;

std::string temp_path() {
  static const std::string p = "/tmp/tpbsim-fuzz-npy-" + std::to_string(getpid()) + ".npy";
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return -1;
  NpyArray a;
  try {
    a = parse_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  } catch (const NpyError& e) {
    FUZZ_CHECK(e.path() == "fuzz.npy", "error names '%s'", e.path().c_str());
    FUZZ_CHECK(std::string_view(e.what()).rfind("fuzz.npy: ", 0) == 0, "message '%s'", e.what());
    return 0;
  }
  // The shape's bytes in 128-bit arithmetic, saturated past the file's size
  // (such a shape must have been refused); a 0 dimension anywhere gives 0.
  unsigned __int128 bytes = npy_itemsize(a.dtype);
  for (std::size_t d : a.shape) bytes = d == 0 ? 0 : bytes > size ? bytes : bytes * d;
  FUZZ_CHECK(bytes == a.data.size(), "%zu data bytes for the shape and dtype read", a.data.size());
  FUZZ_CHECK(a.data.size() <= size, "more data than the file");

  const std::string path = temp_path();
  write_npy(path, a);
  const NpyArray b = read_npy(path);
  std::remove(path.c_str());
  FUZZ_CHECK(b.dtype == a.dtype && b.shape == a.shape && b.data == a.data,
             "write_npy then read_npy changed the array");
  return 0;
}
