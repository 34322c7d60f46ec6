// .npy I/O checked against NumPy itself (/usr/bin/python3): NumPy opens what
// write_npy writes (byte-identical to numpy.save), read_npy reads what
// numpy.save writes, and every malformed file gives an NpyError naming the file.
#include <gtest/gtest.h>

#include <cstring>

#include "platform/io/npy.h"
#include "sc_tests/unit/test_trace_util.h"

namespace tpb::io {
namespace {

using testutil::run_cmd;

std::vector<std::uint8_t> le16(std::initializer_list<std::uint16_t> v) {
  std::vector<std::uint8_t> out;
  for (auto x : v) {
    out.push_back(x & 0xff);
    out.push_back(x >> 8);
  }
  return out;
}
std::vector<std::uint8_t> le32(std::initializer_list<std::uint32_t> v) {
  std::vector<std::uint8_t> out;
  for (auto x : v)
    for (int b = 0; b < 4; ++b) out.push_back((x >> (8 * b)) & 0xff);
  return out;
}

std::string python_script(const std::string& dir, const std::string& name,
                          const std::string& body) {
  const std::string p = dir + "/" + name;
  testutil::spit(p, body);
  return p;
}

TEST(Npy, TablesOfDtypes) {
  struct Row {
    NpyDtype t;
    std::size_t size;
    const char* descr;
  };
  const Row rows[] = {{NpyDtype::U8, 1, "|u1"},  {NpyDtype::U16, 2, "<u2"},
                      {NpyDtype::U32, 4, "<u4"}, {NpyDtype::I8, 1, "|i1"},
                      {NpyDtype::F16, 2, "<f2"}, {NpyDtype::F32, 4, "<f4"}};
  for (const Row& r : rows) {
    EXPECT_EQ(npy_itemsize(r.t), r.size);
    EXPECT_STREQ(npy_descr(r.t), r.descr);
  }
  const std::pair<const char*, NpyDtype> names[] = {
      {"u8", NpyDtype::U8},   {"u16", NpyDtype::U16}, {"u32", NpyDtype::U32}, {"i8", NpyDtype::I8},
      {"f16", NpyDtype::F16}, {"f32", NpyDtype::F32}, {"bf16", NpyDtype::U16}};
  for (const auto& [n, t] : names) {
    NpyDtype got = NpyDtype::F32;
    EXPECT_TRUE(parse_dump_dtype(n, got)) << n;
    EXPECT_EQ(got, t) << n;
  }
  NpyDtype untouched = NpyDtype::I8;
  for (const char* bad : {"f64", "U8", "", "u", "bfloat16", "u16 "}) {
    EXPECT_FALSE(parse_dump_dtype(bad, untouched)) << bad;
    EXPECT_EQ(untouched, NpyDtype::I8);
  }
}

TEST(Npy, NumPyOpensWhatWeWriteByteIdenticalToNumpySave) {
  const std::string missing = testutil::numpy_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string dir = testutil::scratch("npy");
  const std::string check = python_script(dir, "check.py", R"(import io, sys
import numpy as np
for p in sys.argv[1:]:
    a = np.load(p)
    f = io.BytesIO()
    np.save(f, a)
    same = f.getvalue() == open(p, 'rb').read()
    print(a.dtype, a.shape, a.tobytes().hex(), a.ravel().tolist(), same)
)");
  struct Case {
    NpyArray a;
    std::string want;  // dtype, shape, data hex, values (from the format definitions), same
  };
  const std::vector<Case> cases = {
      {{NpyDtype::U8, {4}, {0, 1, 127, 255}}, "uint8 (4,) 00017fff [0, 1, 127, 255] True"},
      {{NpyDtype::U8, {2, 2}, {0, 1, 127, 255}}, "uint8 (2, 2) 00017fff [0, 1, 127, 255] True"},
      {{NpyDtype::U16, {3}, le16({0, 0x1234, 0xffff})},
       "uint16 (3,) 00003412ffff [0, 4660, 65535] True"},
      {{NpyDtype::U16, {2, 3}, le16({0, 1, 0x1234, 0x8000, 0xffff, 1})},
       "uint16 (2, 3) 0000010034120080ffff0100 [0, 1, 4660, 32768, 65535, 1] True"},
      {{NpyDtype::U32, {2}, le32({0xdeadbeef, 1})},
       "uint32 (2,) efbeadde01000000 [3735928559, 1] True"},
      {{NpyDtype::U32, {1, 2}, le32({0xdeadbeef, 1})},
       "uint32 (1, 2) efbeadde01000000 [3735928559, 1] True"},
      {{NpyDtype::I8, {3}, {0x80, 0xff, 0x7f}}, "int8 (3,) 80ff7f [-128, -1, 127] True"},
      {{NpyDtype::I8, {3, 1}, {0x80, 0xff, 0x7f}}, "int8 (3, 1) 80ff7f [-128, -1, 127] True"},
      // binary16: 0x3c00 = 1, 0xc000 = -2, 0x3555 = 2^-2 * (1 + 341/1024).
      {{NpyDtype::F16, {3}, le16({0x3c00, 0xc000, 0x3555})},
       "float16 (3,) 003c00c05535 [1.0, -2.0, 0.333251953125] True"},
      // 0x0001 = 2^-24 (smallest subnormal), 0x7c00 = inf, 0xfbff = -65504.
      {{NpyDtype::F16, {2, 2}, le16({0x3c00, 0x0001, 0x7c00, 0xfbff})},
       "float16 (2, 2) 003c0100007cfffb [1.0, 5.960464477539063e-08, inf, -65504.0] True"},
      {{NpyDtype::F32, {2}, le32({0x3fc00000, 0xc0000000})},
       "float32 (2,) 0000c03f000000c0 [1.5, -2.0] True"},
      {{NpyDtype::F32, {2, 2}, le32({0x3e800000, 0, 0x80000000, 0x7f800000})},
       "float32 (2, 2) 0000803e00000000000000800000807f [0.25, 0.0, -0.0, inf] True"},
      {{NpyDtype::U8, {}, {7}}, "uint8 () 07 [7] True"},
      {{NpyDtype::U16, {0, 3}, {}}, "uint16 (0, 3)  [] True"},
  };
  std::string paths, want;
  int i = 0;
  for (const Case& c : cases) {
    const std::string p = dir + "/w" + std::to_string(i++) + ".npy";
    write_npy(p, c.a);
    // The data starts at a multiple of 64 bytes (numpy's ARRAY_ALIGN).
    EXPECT_EQ((testutil::slurp(p).size() - c.a.data.size()) % 64, 0u) << p;
    paths += " " + p;
    want += c.want + "\n";
  }
  const auto r = run_cmd("/usr/bin/python3 " + check + paths);  // one NumPy start-up for all
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto got = testutil::lines_of(r.out), exp = testutil::lines_of(want);
  ASSERT_EQ(got.size(), exp.size()) << r.out;
  for (std::size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], exp[k]) << "w" << k << ".npy";
}

TEST(Npy, ReadsWhatNumPyWrites) {
  const std::string missing = testutil::numpy_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string dir = testutil::scratch("npy");
  const std::string gen = python_script(dir, "gen.py", R"(import sys
import numpy as np
d = sys.argv[1]
np.save(d + '/u8.npy', np.arange(256, dtype=np.uint8).reshape(16, 16))
np.save(d + '/u16.npy', np.arange(12, dtype='<u2').reshape(3, 4))
np.save(d + '/u32.npy', np.arange(5, dtype='<u4') * 65537)
np.save(d + '/i8.npy', np.arange(-5, 5, dtype=np.int8))
np.save(d + '/f16.npy', np.arange(6, dtype='<f2').reshape(2, 3))
np.save(d + '/f32.npy', np.array([1.5, -2, 0.25], dtype='<f4'))
np.save(d + '/scalar.npy', np.array(7, dtype=np.uint8))
np.save(d + '/big.npy', np.arange(100000, dtype='<u4'))
for v in (2, 3):
    with open(d + '/v%d.npy' % v, 'wb') as f:
        np.lib.format.write_array(f, np.arange(4, dtype='<u2'), version=(v, 0))
)");
  ASSERT_EQ(run_cmd("/usr/bin/python3 " + gen + " " + dir).exit_code, 0);

  NpyArray a = read_npy(dir + "/u8.npy");
  EXPECT_EQ(a.dtype, NpyDtype::U8);
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{16, 16}));
  ASSERT_EQ(a.data.size(), 256u);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(a.data[i], i);

  a = read_npy(dir + "/u16.npy");
  EXPECT_EQ(a.dtype, NpyDtype::U16);
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{3, 4}));
  EXPECT_EQ(a.data, le16({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));

  a = read_npy(dir + "/u32.npy");
  EXPECT_EQ(a.dtype, NpyDtype::U32);
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{5}));
  EXPECT_EQ(a.data, le32({0, 65537, 131074, 196611, 262148}));

  a = read_npy(dir + "/i8.npy");
  EXPECT_EQ(a.dtype, NpyDtype::I8);
  EXPECT_EQ(a.data, (std::vector<std::uint8_t>{0xfb, 0xfc, 0xfd, 0xfe, 0xff, 0, 1, 2, 3, 4}));

  // binary16 codes of 0..5 from the format definition.
  a = read_npy(dir + "/f16.npy");
  EXPECT_EQ(a.dtype, NpyDtype::F16);
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(a.data, le16({0x0000, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500}));

  a = read_npy(dir + "/f32.npy");
  EXPECT_EQ(a.dtype, NpyDtype::F32);
  EXPECT_EQ(a.data, le32({0x3fc00000, 0xc0000000, 0x3e800000}));

  a = read_npy(dir + "/scalar.npy");
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.data, (std::vector<std::uint8_t>{7}));

  a = read_npy(dir + "/big.npy");
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{100000}));
  ASSERT_EQ(a.data.size(), 400000u);
  std::uint32_t last;
  std::memcpy(&last, &a.data[4 * 99999], 4);  // x86 / Arm hosts are little-endian
  EXPECT_EQ(last, 99999u);

  for (const char* v : {"/v2.npy", "/v3.npy"}) {
    a = read_npy(dir + v);
    EXPECT_EQ(a.dtype, NpyDtype::U16) << v;
    EXPECT_EQ(a.data, le16({0, 1, 2, 3})) << v;
  }
}

TEST(Npy, RoundTripThroughOurOwnReader) {
  const std::string dir = testutil::scratch("npy");
  const NpyArray a{NpyDtype::F32, {2, 3}, le32({1, 2, 3, 4, 5, 6})};
  write_npy(dir + "/r.npy", a);
  const NpyArray b = read_npy(dir + "/r.npy");
  EXPECT_EQ(b.dtype, a.dtype);
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(b.data, a.data);
}

// Expects read_npy(path) to throw an NpyError naming the file and `problem`.
void expect_npy_error(const std::string& path, const std::string& problem) {
  try {
    read_npy(path);
    ADD_FAILURE() << path << ": accepted, expected \"" << problem << "\"";
  } catch (const NpyError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find(problem), std::string::npos) << "want \"" << problem << "\" in: " << what;
    EXPECT_EQ(e.path(), path);
  }
}

std::string v1_file(const std::string& header, const std::string& data) {
  std::string h = header;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string f("\x93NUMPY\x01\x00", 8);
  f.push_back(static_cast<char>(h.size() & 0xff));
  f.push_back(static_cast<char>(h.size() >> 8));
  return f + h + data;
}

TEST(Npy, MalformedFilesNameTheFileAndTheProblem) {
  const std::string dir = testutil::scratch("npy");
  const std::string good_path = dir + "/good.npy";
  write_npy(good_path, NpyArray{NpyDtype::U16, {2, 3}, le16({1, 2, 3, 4, 5, 6})});
  const std::string good = testutil::slurp(good_path);
  ASSERT_EQ(good.size(), 128u + 12u);

  auto make = [&](const std::string& name, const std::string& bytes) {
    testutil::spit(dir + "/" + name, bytes);
    return dir + "/" + name;
  };
  expect_npy_error(dir + "/missing.npy", "cannot open");
  expect_npy_error(make("magic.npy", "PK\x03\x04 this is a zip file, not an npy"), "bad magic");
  expect_npy_error(make("empty.npy", ""), "truncated header");
  expect_npy_error(make("prefix.npy", good.substr(0, 9)), "truncated header");
  expect_npy_error(make("header.npy", good.substr(0, 40)), "truncated header");
  expect_npy_error(make("data.npy", good.substr(0, good.size() - 2)), "truncated data");
  expect_npy_error(make("extra.npy", good + "xx"), "shape/size mismatch");
  std::string v9 = good;
  v9[6] = 9;
  expect_npy_error(make("version.npy", v9), "unsupported .npy format version 9.0");
  expect_npy_error(
      make("syntax.npy", v1_file("{'descr': '<u2', 'fortran_order': False, 'shape': (3, 4, }",
                                 std::string(24, '\0'))),
      "malformed header");
  expect_npy_error(make("nokey.npy", v1_file("{'descr': '<u2', 'shape': (2,), }", "abcd")),
                   "missing key 'fortran_order'");
  expect_npy_error(make("negdim.npy", v1_file("{'descr': '<u2', 'fortran_order': False, "
                                              "'shape': (-2,), }",
                                              "abcd")),
                   "malformed header");
  expect_npy_error(make("huge.npy", v1_file("{'descr': '<u4', 'fortran_order': False, 'shape': "
                                            "(4294967296, 4294967296), }",
                                            "abcd")),
                   "truncated data");
}

TEST(Npy, UnsupportedLayoutsFromNumPyAreRejected) {
  const std::string missing = testutil::numpy_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string dir = testutil::scratch("npy");
  const std::string gen = python_script(dir, "gen.py", R"(import sys
import numpy as np
d = sys.argv[1]
np.save(d + '/fortran.npy', np.asfortranarray(np.arange(6, dtype=np.uint8).reshape(2, 3)))
np.save(d + '/be.npy', np.arange(4, dtype='>u2'))
np.save(d + '/c8.npy', np.zeros(3, dtype=np.complex64))
np.save(d + '/f8.npy', np.zeros(2))
np.save(d + '/rec.npy', np.zeros(2, dtype=[('a', '<u2'), ('b', 'u1')]))
)");
  ASSERT_EQ(run_cmd("/usr/bin/python3 " + gen + " " + dir).exit_code, 0);
  expect_npy_error(dir + "/fortran.npy", "fortran_order True");
  expect_npy_error(dir + "/be.npy", "big-endian dtype '>u2'");
  expect_npy_error(dir + "/c8.npy", "unsupported dtype '<c8'");
  expect_npy_error(dir + "/f8.npy", "unsupported dtype '<f8'");
  expect_npy_error(dir + "/rec.npy", "unsupported dtype");
}

TEST(Npy, WriteRejectsSizeMismatchAndBadPath) {
  const std::string dir = testutil::scratch("npy");
  try {
    write_npy(dir + "/bad.npy", NpyArray{NpyDtype::U16, {2, 3}, std::vector<std::uint8_t>(11)});
    FAIL() << "accepted 11 bytes for (2, 3) <u2";
  } catch (const NpyError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(dir + "/bad.npy"), std::string::npos) << what;
    EXPECT_NE(what.find("shape/size mismatch"), std::string::npos) << what;
    EXPECT_NE(what.find("(2, 3)"), std::string::npos) << what;
  }
  EXPECT_THROW(write_npy("/nonexistent-tpbsim-dir/x.npy", NpyArray{NpyDtype::U8, {1}, {1}}),
               NpyError);
}

}  // namespace
}  // namespace tpb::io

namespace tpb::io {
namespace {

// Every truncation and every single-byte corruption of the header either
// reads or raises NpyError: never a crash, hang or another exception type.
TEST(Npy, CorruptedFilesNeverEscapeAsOtherErrors) {
  const std::string dir = testutil::scratch("npy");
  const std::string p = dir + "/c.npy";
  write_npy(p, NpyArray{NpyDtype::U16, {2, 3}, le16({1, 2, 3, 4, 5, 6})});
  const std::string good = testutil::slurp(p);
  auto try_read = [&](const std::string& bytes, const std::string& what) {
    testutil::spit(p, bytes);
    try {
      read_npy(p);
    } catch (const NpyError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  };
  for (std::size_t n = 0; n < good.size(); ++n)
    try_read(good.substr(0, n), "cut " + std::to_string(n));
  const unsigned char probes[] = {0, ' ', '\'', '(', ')', ',', '9', '{', '}', 0x7f, 0xff};
  for (std::size_t i = 0; i < 128; ++i)
    for (unsigned char b : probes) {
      std::string bad = good;
      bad[i] = static_cast<char>(b);
      try_read(bad, "byte " + std::to_string(i) + " = " + std::to_string(b));
    }
}

}  // namespace
}  // namespace tpb::io
