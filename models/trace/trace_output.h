// A trace file written while the run goes (VcdWriter, PerfettoWriter, the
// retire log): text
// is appended to buf() and written out in blocks of about 1 MiB. Creating the
// file throws std::runtime_error naming it; a later write error is kept
// (error()), not thrown, since writes happen inside the simulation, and
// nothing more is written after it.
#pragma once

#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace tpb::trace {

namespace detail {
// "00" "01" ... "99": two decimal digits at a time.
struct DigitPairs {
  char d[200] = {};
  constexpr DigitPairs() {
    for (int i = 0; i < 100; ++i) {
      d[2 * i] = static_cast<char>('0' + i / 10);
      d[2 * i + 1] = static_cast<char>('0' + i % 10);
    }
  }
};
inline constexpr DigitPairs kDigitPairs{};
inline constexpr std::uint64_t kPow10[20] = {1ull,
                                             10ull,
                                             100ull,
                                             1000ull,
                                             10000ull,
                                             100000ull,
                                             1000000ull,
                                             10000000ull,
                                             100000000ull,
                                             1000000000ull,
                                             10000000000ull,
                                             100000000000ull,
                                             1000000000000ull,
                                             10000000000000ull,
                                             100000000000000ull,
                                             1000000000000000ull,
                                             10000000000000000ull,
                                             100000000000000000ull,
                                             1000000000000000000ull,
                                             10000000000000000000ull};
}  // namespace detail

// The decimal digits of v at `out` (up to 20, no terminator), two at a
// time from the end, their count known first (from the top bit's position;
// std::to_chars finds it by a loop of divisions); returns their end. Every
// time stamp of the trace files goes through here.
inline char* write_decimal(char* out, std::uint64_t v) {
  if (v < 10) {
    *out = static_cast<char>('0' + v);
    return out + 1;
  }
  // floor(log10(v)) is t or t - 1 (1233 / 4096 ~ log10(2)).
  const unsigned t = ((64 - static_cast<unsigned>(__builtin_clzll(v))) * 1233) >> 12;
  char* const end = out + t + (v >= detail::kPow10[t] ? 1 : 0);
  char* p = end;
  while (v >= 100) {
    const auto r = static_cast<unsigned>(v % 100);
    v /= 100;
    p -= 2;
    std::memcpy(p, detail::kDigitPairs.d + 2 * r, 2);
  }
  if (v >= 10) {
    std::memcpy(p - 2, detail::kDigitPairs.d + 2 * v, 2);
  } else {
    p[-1] = static_cast<char>('0' + v);
  }
  return end;
}

// The text of a trace file on its way out: fmt's memory buffer, appended
// to inline (the writers append a dozen short pieces an event; std::string's
// and fmt's own append are a library call each), with the string-like
// operators the writers use.
class TextBuffer {
 public:
  void append(const char* s, std::size_t n) {
    // resize() grows only past the capacity and writes nothing (fmt's own
    // append is a call per piece).
    const std::size_t at = b_.size();
    b_.resize(at + n);
    std::memcpy(b_.data() + at, s, n);
  }
  void push_back(char c) { b_.push_back(c); }
  TextBuffer& operator+=(std::string_view s) {
    append(s.data(), s.size());
    return *this;
  }
  TextBuffer& operator+=(char c) {
    push_back(c);
    return *this;
  }
  // Room for up to `max` bytes at the end: the caller writes them at the
  // pointer and then commits how many it wrote. A piece built here rather
  // than in a local array and copied in: the copy's wide loads of the
  // array's narrow stores stall on store forwarding.
  char* tail(std::size_t max) {
    b_.reserve(b_.size() + max);
    return b_.data() + b_.size();
  }
  void commit(std::size_t n) { b_.resize(b_.size() + n); }
  // Where fmt::format_to writes straight into the buffer.
  std::back_insert_iterator<fmt::memory_buffer> inserter() { return std::back_inserter(b_); }
  const char* data() const { return b_.data(); }
  std::size_t size() const { return b_.size(); }
  bool empty() const { return b_.size() == 0; }
  void clear() { b_.clear(); }
  void reserve(std::size_t n) { b_.reserve(n); }
  std::string_view view() const { return {b_.data(), b_.size()}; }

 private:
  fmt::memory_buffer b_;
};

// Opens `path` write-only, creating it, and truncates it only when it is a
// regular file with something in it; -1 (errno set) when it cannot. Not
// O_TRUNC: ext4 marks a file truncated to empty for allocate-on-close, and
// the close then allocates and starts writing back the whole file at once
// (35-100 ms for 100 MiB, on the thread that closes it) — for a run's
// staging file, new and empty, for nothing. `regular`: set to whether the
// file is a regular one (not a device or FIFO).
int open_output(const std::string& path, bool* regular = nullptr);

class TraceOutput {
 public:
  // kind: how messages name the file ("VCD file", "Perfetto trace").
  TraceOutput(std::string path, const char* kind);
  ~TraceOutput();
  TraceOutput(const TraceOutput&) = delete;
  TraceOutput& operator=(const TraceOutput&) = delete;

  TextBuffer& buf() { return buf_; }
  void maybe_flush() {
    if (buf_.size() >= kBlock) flush();
  }
  void flush();
  // Writes what is left and closes the file.
  void close();
  // "" or "'PATH': write failed: REASON".
  const std::string& error() const { return error_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  static constexpr std::size_t kBlock = 1 << 20;
  std::string path_;
  int fd_ = -1;
  bool regular_ = false;       // a regular file (not a device or FIFO)
  std::uint64_t started_ = 0;  // bytes whose write-back has been started
  TextBuffer buf_;
  std::string error_;
  std::uint64_t bytes_ = 0;
};

}  // namespace tpb::trace
