#include "platform/io/npy.h"

#include "models/isa/input_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

namespace tpb::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kAlign = 64;                // numpy.lib.format.ARRAY_ALIGN
constexpr std::size_t kGrowthAxisMaxDigits = 21;  // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS

constexpr const char* kSupported = "|u1 <u2 <u4 |i1 <f2 <f4";

std::string shape_repr(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// Element count times itemsize, or false on overflow.
bool byte_size(const std::vector<std::size_t>& shape, std::size_t itemsize, std::size_t& out) {
  // A zero dimension makes the array empty whatever the others are.
  for (std::size_t d : shape)
    if (d == 0) {
      out = 0;
      return true;
    }
  std::size_t n = itemsize;
  for (std::size_t d : shape) {
    if (d != 0 && n > std::numeric_limits<std::size_t>::max() / d) return false;
    n *= d;
  }
  out = n;
  return true;
}

// The header is a Python dict literal, e.g.
// {'descr': '<u2', 'fortran_order': False, 'shape': (3, 4), }
struct HeaderValue {
  enum Kind { Str, Bool, Tuple, Other } kind = Other;
  std::string str;
  bool b = false;
  std::vector<std::size_t> tuple;
  std::string raw;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& path, std::string_view text) : path_(path), s_(text) {}

  std::vector<std::pair<std::string, HeaderValue>> parse_dict() {
    std::vector<std::pair<std::string, HeaderValue>> items;
    skip_ws();
    expect('{');
    for (;;) {
      skip_ws();
      if (peek() == '}') {
        ++i_;
        break;
      }
      std::string key = parse_string();
      skip_ws();
      expect(':');
      skip_ws();
      HeaderValue v = parse_value();
      items.emplace_back(std::move(key), std::move(v));
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      expect('}');
      break;
    }
    skip_ws();
    if (i_ != s_.size()) fail("unexpected text after the header dict");
    return items;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw NpyError(path_, "malformed header: " + what + " at offset " + std::to_string(i_) +
                              " of header \"" + std::string(s_) + "\"");
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string parse_string() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    const std::size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != q) ++i_;
    if (i_ >= s_.size()) fail("unterminated string");
    return std::string(s_.substr(start, i_++ - start));
  }
  std::size_t parse_int() {
    if (!(peek() >= '0' && peek() <= '9')) fail("expected a non-negative integer");
    std::size_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const std::size_t d = static_cast<std::size_t>(peek() - '0');
      if (v > (std::numeric_limits<std::size_t>::max() - d) / 10) fail("dimension too large");
      v = v * 10 + d;
      ++i_;
    }
    if (peek() == 'L') ++i_;  // Python 2 long literal
    return v;
  }
  HeaderValue parse_value() {
    HeaderValue v;
    const std::size_t start = i_;
    const char c = peek();
    if (c == '\'' || c == '"') {
      v.kind = HeaderValue::Str;
      v.str = parse_string();
    } else if (s_.substr(i_, 4) == "True") {
      v.kind = HeaderValue::Bool;
      v.b = true;
      i_ += 4;
    } else if (s_.substr(i_, 5) == "False") {
      v.kind = HeaderValue::Bool;
      i_ += 5;
    } else if (c == '(') {
      v.kind = HeaderValue::Tuple;
      ++i_;
      for (;;) {
        skip_ws();
        if (peek() == ')') {
          ++i_;
          break;
        }
        v.tuple.push_back(parse_int());
        skip_ws();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect(')');
        break;
      }
    } else if (c == '[' || c == '{') {
      // Structured dtypes; skipped with bracket matching and reported by the caller.
      int depth = 0;
      char quote = 0;
      do {
        const char ch = peek();
        if (ch == '\0') fail("unterminated list");
        if (quote) {
          if (ch == quote) quote = 0;
        } else if (ch == '\'' || ch == '"') {
          quote = ch;
        } else if (ch == '[' || ch == '(' || ch == '{') {
          ++depth;
        } else if (ch == ']' || ch == ')' || ch == '}') {
          --depth;
        }
        ++i_;
      } while (depth > 0);
    } else {
      fail("unexpected value");
    }
    v.raw = std::string(s_.substr(start, i_ - start));
    return v;
  }

  const std::string& path_;
  std::string_view s_;
  std::size_t i_ = 0;
};

NpyDtype dtype_from_descr(const std::string& path, const std::string& d) {
  if (d.size() == 3) {
    const char order = d[0];
    const std::string kind = d.substr(1);
    if (kind == "u1" && (order == '|' || order == '<' || order == '>' || order == '='))
      return NpyDtype::U8;
    if (kind == "i1" && (order == '|' || order == '<' || order == '>' || order == '='))
      return NpyDtype::I8;
    if (order == '<') {
      if (kind == "u2") return NpyDtype::U16;
      if (kind == "u4") return NpyDtype::U32;
      if (kind == "f2") return NpyDtype::F16;
      if (kind == "f4") return NpyDtype::F32;
    }
    if (order == '>' && (kind == "u2" || kind == "u4" || kind == "f2" || kind == "f4"))
      throw NpyError(path, "big-endian dtype '" + d +
                               "' is not supported (save it little-endian, e.g. a.astype('<" +
                               kind + "'))");
  }
  throw NpyError(path, "unsupported dtype '" + d + "' (supported: " + kSupported + ")");
}

}  // namespace

std::size_t npy_itemsize(NpyDtype t) {
  switch (t) {
    case NpyDtype::U8:
    case NpyDtype::I8:
      return 1;
    case NpyDtype::U16:
    case NpyDtype::F16:
      return 2;
    case NpyDtype::U32:
    case NpyDtype::F32:
      return 4;
  }
  return 0;
}

const char* npy_descr(NpyDtype t) {
  switch (t) {
    case NpyDtype::U8:
      return "|u1";
    case NpyDtype::U16:
      return "<u2";
    case NpyDtype::U32:
      return "<u4";
    case NpyDtype::I8:
      return "|i1";
    case NpyDtype::F16:
      return "<f2";
    case NpyDtype::F32:
      return "<f4";
  }
  return "";
}

std::size_t npy_element_count(const std::vector<std::size_t>& shape) {
  std::size_t n = 0;
  if (!byte_size(shape, 1, n)) return std::numeric_limits<std::size_t>::max();  // saturated
  return n;
}

bool parse_dump_dtype(std::string_view name, NpyDtype& out) {
  static constexpr std::pair<std::string_view, NpyDtype> kNames[] = {
      {"u8", NpyDtype::U8},   {"u16", NpyDtype::U16}, {"u32", NpyDtype::U32},  {"i8", NpyDtype::I8},
      {"f16", NpyDtype::F16}, {"f32", NpyDtype::F32}, {"bf16", NpyDtype::U16},
  };
  for (const auto& [n, t] : kNames)
    if (n == name) {
      out = t;
      return true;
    }
  return false;
}

NpyArray read_npy(const std::string& path) {
  return read_npy(path, kMaxNpyBytes, "more than any memory of the core holds");
}

NpyArray read_npy(const std::string& path, std::uint64_t max_bytes, const std::string& why) {
  if (const std::string why = isa::input_file_problem(path); !why.empty())
    throw NpyError(path, why);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError(path, std::string("cannot open: ") + std::strerror(errno));
  // The magic first, then at most max_bytes: a device or a pipe that never
  // ends (/dev/zero) is an error at once, not a read without end.
  std::string file(kMagicLen, '\0');
  in.read(file.data(), static_cast<std::streamsize>(kMagicLen));
  file.resize(static_cast<std::size_t>(in.gcount()));
  if (file.compare(0, file.size(), kMagic, file.size()) != 0)
    throw NpyError(path, "bad magic: not a NumPy .npy file (expected \\x93NUMPY)");
  char buf[65536];
  while (in) {
    in.read(buf, sizeof buf);
    const auto n = static_cast<std::size_t>(in.gcount());
    if (file.size() + n > max_bytes)
      throw NpyError(path, "is larger than " + std::to_string(max_bytes) + " bytes, " + why);
    file.append(buf, n);
  }
  if (in.bad()) throw NpyError(path, "read error");
  return parse_npy(file, path);
}

NpyArray parse_npy(std::string_view file, const std::string& path) {
  if (file.compare(0, std::min(file.size(), kMagicLen), kMagic, std::min(file.size(), kMagicLen)) !=
      0)
    throw NpyError(path, "bad magic: not a NumPy .npy file (expected \\x93NUMPY)");
  if (file.size() < kMagicLen + 2)
    throw NpyError(path,
                   "truncated header: file is only " + std::to_string(file.size()) + " bytes");
  const unsigned major = static_cast<unsigned char>(file[6]);
  const unsigned minor = static_cast<unsigned char>(file[7]);
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    throw NpyError(path, "unsupported .npy format version " + std::to_string(major) + "." +
                             std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  const std::size_t prefix = kMagicLen + 2 + len_bytes;
  if (file.size() < prefix)
    throw NpyError(path,
                   "truncated header: file is only " + std::to_string(file.size()) + " bytes");
  std::size_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i)
    header_len |= static_cast<std::size_t>(static_cast<unsigned char>(file[8 + i])) << (8 * i);
  if (file.size() - prefix < header_len)
    throw NpyError(path, "truncated header: header length " + std::to_string(header_len) +
                             " but only " + std::to_string(file.size() - prefix) +
                             " bytes follow the prefix");
  const std::string_view header(file.data() + prefix, header_len);

  bool have_descr = false, have_fortran = false, have_shape = false;
  NpyArray a;
  for (auto& [key, v] : HeaderParser(path, header).parse_dict()) {
    if (key == "descr") {
      have_descr = true;
      if (v.kind != HeaderValue::Str)
        throw NpyError(path, "unsupported dtype " + v.raw +
                                 " (structured dtypes are not supported; supported: " + kSupported +
                                 ")");
      a.dtype = dtype_from_descr(path, v.str);
    } else if (key == "fortran_order") {
      have_fortran = true;
      if (v.kind != HeaderValue::Bool)
        throw NpyError(path, "malformed header: fortran_order is " + v.raw);
      if (v.b)
        throw NpyError(path,
                       "fortran_order True is not supported (save a C-ordered array, e.g. "
                       "np.ascontiguousarray(a))");
    } else if (key == "shape") {
      have_shape = true;
      if (v.kind != HeaderValue::Tuple)
        throw NpyError(path, "malformed header: shape is " + v.raw + ", not a tuple");
      a.shape = v.tuple;
    } else {
      throw NpyError(path, "malformed header: unexpected key '" + key + "'");
    }
  }
  if (!have_descr || !have_fortran || !have_shape)
    throw NpyError(path, std::string("malformed header: missing key '") +
                             (!have_descr     ? "descr"
                              : !have_fortran ? "fortran_order"
                                              : "shape") +
                             "'");

  const std::size_t data_off = prefix + header_len;
  const std::size_t avail = file.size() - data_off;
  std::size_t need = 0;
  if (!byte_size(a.shape, npy_itemsize(a.dtype), need) || need > avail)
    throw NpyError(path, "truncated data: shape " + shape_repr(a.shape) + " of " +
                             npy_descr(a.dtype) + " needs " +
                             (need > avail ? std::to_string(need) : std::string("more")) +
                             " bytes but the file holds " + std::to_string(avail));
  if (need < avail)
    throw NpyError(path, "shape/size mismatch: shape " + shape_repr(a.shape) + " of " +
                             npy_descr(a.dtype) + " needs " + std::to_string(need) +
                             " bytes but the file holds " + std::to_string(avail));
  a.data.assign(file.begin() + static_cast<std::ptrdiff_t>(data_off), file.end());
  return a;
}

void write_npy(const std::string& path, const NpyArray& a) {
  std::size_t need = 0;
  if (!byte_size(a.shape, npy_itemsize(a.dtype), need) || need != a.data.size())
    throw NpyError(path, "shape/size mismatch: shape " + shape_repr(a.shape) + " of " +
                             npy_descr(a.dtype) + " needs " +
                             (need ? std::to_string(need) : std::string("more")) +
                             " bytes but the array holds " + std::to_string(a.data.size()));

  // Exactly numpy.lib.format._write_array_header + _wrap_header (numpy >= 1.23).
  std::string header = std::string("{'descr': '") + npy_descr(a.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape_repr(a.shape) + ", }";
  if (!a.shape.empty()) {
    const std::size_t digits = std::to_string(a.shape[0]).size();
    if (digits < kGrowthAxisMaxDigits) header.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  const std::size_t hlen = header.size() + 1;  // + '\n'
  std::size_t prefix = kMagicLen + 2 + 2;
  unsigned major = 1;
  std::size_t padlen = kAlign - ((prefix + hlen) % kAlign);
  if (hlen + padlen > 0xffff) {  // numpy falls back to version 2.0
    major = 2;
    prefix = kMagicLen + 2 + 4;
    padlen = kAlign - ((prefix + hlen) % kAlign);
  }
  const std::size_t total_hlen = hlen + padlen;
  std::string out(kMagic, kMagicLen);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  for (std::size_t i = 0; i < prefix - kMagicLen - 2; ++i)
    out.push_back(static_cast<char>((total_hlen >> (8 * i)) & 0xff));
  out += header;
  out.append(padlen, ' ');
  out.push_back('\n');

  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw NpyError(path, std::string("cannot open for writing: ") + std::strerror(errno));
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  f.write(reinterpret_cast<const char*>(a.data.data()),
          static_cast<std::streamsize>(a.data.size()));
  f.close();  // a close can fail too (a full disk, a quota)
  if (!f) throw NpyError(path, std::string("write failed: ") + std::strerror(errno));
}

}  // namespace tpb::io
