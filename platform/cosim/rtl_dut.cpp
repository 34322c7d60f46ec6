// The Verilated DUT of one build variant (platform/cosim/dut.h): compiled
// once per RTL variant against that variant's generated header, whose class
// is always Vdut (verilator --prefix Vdut), and linked into the program as an
// object file so its registration runs.
// Verilator's runtime headers are not -Wextra clean (unused parameters).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <verilated.h>
#include <verilated_sc.h>
#include <verilated_vcd_c.h>

#include "Vdut.h"
#pragma GCC diagnostic pop

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "platform/cosim/dut.h"

#ifndef TPBSIM_DUT_NAME
#error "TPBSIM_DUT_NAME (the RTL top module and variant) must be defined by the build"
#endif

namespace tpb::cosim {
namespace {

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

class VerilatedDut : public DutLibrary {
 public:
  std::string name() const override { return TPBSIM_DUT_NAME; }
  void enable_trace() override {
    Verilated::traceEverOn(true);
    trace_ = true;
  }
  std::unique_ptr<sc_core::sc_module> create(const char* name, DutPins& p) override {
    auto m = std::make_unique<Vdut>(name);
    m->clk(p.clk);
    m->rst_n(p.rst_n);
    m->fmt(p.fmt);
    m->group(p.group);
    m->in_valid(p.in_valid);
    m->in_ready(p.in_ready);
    m->in_data(p.in_data);
    m->out_valid(p.out_valid);
    m->out_ready(p.out_ready);
    m->out_data(p.out_data);
    if (trace_) lanes_.push_back(m.get());
    return m;
  }
  void open_trace(const std::string& path) override {
    if (!trace_ || vcd_) return;
    // Never destroyed (as the SystemC objects): Verilator's own statics may
    // be gone by the time a static destructor would run.
    file_ = new VcdFile;
    vcd_ = new CosimVcd(file_);
    for (Vdut* m : lanes_) m->trace(vcd_, 99);
    vcd_->open(path.c_str());
  }
  void close_trace() override {
    if (vcd_) vcd_->close();
  }
  std::string trace_error() const override { return file_ ? file_->error() : ""; }

 private:
  bool trace_ = false;
  std::vector<Vdut*> lanes_;  // owned by the harness
  VcdFile* file_ = nullptr;
  CosimVcd* vcd_ = nullptr;
};

const bool registered = [] {
  static VerilatedDut lib;
  register_dut(&lib);
  return true;
}();

}  // namespace
}  // namespace tpb::cosim
