// A trace file written while the run goes (VcdWriter, PerfettoWriter): text
// is appended to buf() and written out in blocks of about 1 MiB. Creating the
// file throws std::runtime_error naming it; a later write error is kept
// (error()), not thrown, since writes happen inside the simulation, and
// nothing more is written after it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace tpb::trace {

class TraceOutput {
 public:
  // kind: how messages name the file ("VCD file", "Perfetto trace").
  TraceOutput(std::string path, const char* kind);
  ~TraceOutput();
  TraceOutput(const TraceOutput&) = delete;
  TraceOutput& operator=(const TraceOutput&) = delete;

  std::string& buf() { return buf_; }
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
  std::FILE* f_ = nullptr;
  std::string buf_;
  std::string error_;
  std::uint64_t bytes_ = 0;
};

}  // namespace tpb::trace
