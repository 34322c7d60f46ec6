// A trace file written while the run goes (VcdWriter, PerfettoWriter): text
// is appended to buf() and written out in blocks of about 1 MiB. Creating the
// file throws std::runtime_error naming it; a later write error is kept
// (error()), not thrown, since writes happen inside the simulation, and
// nothing more is written after it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace tpb::trace {

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
