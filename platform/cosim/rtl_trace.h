// The one VCD of the RTL's waves (--cosim-vcd) for every Verilated model
// linked into a program (the dequant lanes and the QuantizeMX blocks): each
// block's binding (rtl_dut.cpp) registers its traced lanes during
// elaboration, and the first open() after it writes them all into one file.
// Header-only, so that one program has exactly one, whichever bindings it
// links.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

// Verilator's runtime headers are not -Wextra clean (unused parameters).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <verilated.h>
#include <verilated_sc.h>
#include <verilated_vcd_c.h>
#pragma GCC diagnostic pop

namespace tpb::cosim {

// The file Verilator writes the waves to. Verilator's own file ends in
// vl_fatal at a write error (a full disk, /dev/full), which then deadlocks
// in its own flush: the run hung for ever. This one keeps the first error
// (reported naming the file after the run), writes nothing more, and tells
// Verilator every write went through; it opens blocking, so a slow reader
// of a FIFO is waited for instead of spun on.
class VcdFile final : public VerilatedVcdFile {
 public:
  bool open(const std::string& name) override {
    fd_ = ::open(name.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) error_ = std::string("cannot open: ") + std::strerror(errno);
    return fd_ >= 0;
  }
  void close() override {
    if (fd_ >= 0 && ::close(fd_) != 0 && error_.empty() && errno != EINTR)
      error_ = std::strerror(errno);
    fd_ = -1;
  }
  ssize_t write(const char* bufp, ssize_t len) override {
    for (ssize_t done = 0; error_.empty() && fd_ >= 0 && done < len;) {
      const ssize_t n = ::write(fd_, bufp + done, static_cast<std::size_t>(len - done));
      if (n > 0)
        done += n;
      else if (n < 0 && errno == EINTR)
        continue;
      else
        error_ = n < 0 ? std::strerror(errno) : "wrote nothing";
    }
    return len;
  }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

// VerilatedVcdSc with the file above: a Verilated VCD registered with the
// SystemC kernel as a trace file, dumped at every timed step.
class CosimVcd final : public sc_core::sc_trace_file, public VerilatedVcdC {
 public:
  explicit CosimVcd(VcdFile* file) : VerilatedVcdC(file) {
    sc_core::sc_get_curr_simcontext()->add_trace_file(this);
    const sc_core::sc_time second{1, sc_core::SC_SEC};
    if (second.to_default_time_units() != 0) {
      const sc_core::sc_time unit{1.0 / second.to_default_time_units(), sc_core::SC_SEC};
      spTrace()->set_time_unit(unit.to_string());
    }
    spTrace()->set_time_resolution(sc_core::sc_get_time_resolution().to_string());
  }
  void cycle(bool delta_cycle) override {
    if (!delta_cycle) dump(sc_core::sc_time_stamp().to_double());
  }

 private:
  // sc_trace_file's interface, unused: Verilator traces the RTL itself.
  void set_time_unit(double, sc_core::sc_time_unit) override {}
  void write_comment(const std::string&) override {}
  void trace(const unsigned int&, const std::string&, const char**) override {}
#define TPB_TRACE_A(T) \
  void trace(const T&, const std::string&) override {}
#define TPB_TRACE_B(T) \
  void trace(const T&, const std::string&, int) override {}
  TPB_TRACE_A(sc_core::sc_event)
  TPB_TRACE_A(sc_core::sc_time)
  TPB_TRACE_A(bool)
  TPB_TRACE_A(sc_dt::sc_bit)
  TPB_TRACE_A(sc_dt::sc_logic)
  TPB_TRACE_B(unsigned char)
  TPB_TRACE_B(unsigned short)
  TPB_TRACE_B(unsigned int)
  TPB_TRACE_B(unsigned long)
  TPB_TRACE_B(char)
  TPB_TRACE_B(short)
  TPB_TRACE_B(int)
  TPB_TRACE_B(long)
  TPB_TRACE_B(sc_dt::int64)
  TPB_TRACE_B(sc_dt::uint64)
  TPB_TRACE_A(float)
  TPB_TRACE_A(double)
  TPB_TRACE_A(sc_dt::sc_int_base)
  TPB_TRACE_A(sc_dt::sc_uint_base)
  TPB_TRACE_A(sc_dt::sc_signed)
  TPB_TRACE_A(sc_dt::sc_unsigned)
  TPB_TRACE_A(sc_dt::sc_fxval)
  TPB_TRACE_A(sc_dt::sc_fxval_fast)
  TPB_TRACE_A(sc_dt::sc_fxnum)
  TPB_TRACE_A(sc_dt::sc_fxnum_fast)
  TPB_TRACE_A(sc_dt::sc_bv_base)
  TPB_TRACE_A(sc_dt::sc_lv_base)
#undef TPB_TRACE_A
#undef TPB_TRACE_B
};

class RtlVcd {
 public:
  // A traced lane: its model's trace() into the file.
  void add(std::function<void(VerilatedVcdC*)> lane) { lanes_.push_back(std::move(lane)); }
  void open(const std::string& path) {
    if (vcd_ || lanes_.empty()) return;
    // Never destroyed (as the SystemC objects): Verilator's own statics may
    // be gone by the time a static destructor would run.
    file_ = new VcdFile;
    vcd_ = new CosimVcd(file_);
    for (auto& l : lanes_) l(vcd_);
    vcd_->open(path.c_str());
  }
  void close() {
    if (vcd_ && !closed_) vcd_->close();
    closed_ = true;
  }
  // After close(): "" or the first write error of the waves.
  std::string error() const { return file_ ? file_->error() : ""; }

 private:
  std::vector<std::function<void(VerilatedVcdC*)>> lanes_;
  VcdFile* file_ = nullptr;
  CosimVcd* vcd_ = nullptr;
  bool closed_ = false;
};

inline RtlVcd& rtl_vcd() {
  static RtlVcd v;
  return v;
}

}  // namespace tpb::cosim
