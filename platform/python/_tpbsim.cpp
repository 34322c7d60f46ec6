// tpbsim._tpbsim: the Python extension (pybind11) over the run API
// (platform/run: Session, SessionRequest, SessionReport) and the pure C++ layers
// (models/isa: assembler, checker; models/numerics: convert, the MX
// quantizers). It converts arguments and results and nothing else: every rule (memory layout, range
// checks, option syntax, conversions, validity) is the C++ code's, so
// `tpbsim run` and `import tpbsim` cannot disagree. The `tpbsim` package
// (platform/python/tpbsim/) is the public surface over it (docs/PYTHON.md).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <systemc>

#include "firmware_stubs/common/host_threads.h"
#include "models/isa/asm.h"
#include "models/isa/program.h"
#include "models/isa/program_check.h"
#include "models/numerics/convert_array.h"
#include "models/numerics/formats.h"
#include "models/numerics/mx_quantize.h"
#include "models/timing/timing_profile.h"
#include "models/trace/stats_writer.h"
#include "platform/io/npy.h"
#include "platform/run/arrays.h"
#include "platform/run/host_args.h"
#include "platform/run/no_sc_main.h"
#include "platform/run/request.h"
#include "platform/run/session.h"
#include "platform/run/staged_outputs.h"

namespace py = pybind11;

namespace tpb::python {

namespace {

// A misuse of a Core (closed, running in another thread): tpbsim.Error.
class CoreStateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// An argument of the wrong type: tpbsim.ArgumentTypeError (an InputError and
// a TypeError).
class ArgTypeError : public run::InputError {
 public:
  using run::InputError::InputError;
};

// An integer argument (a Python int, or anything with __index__, such as a
// NumPy integer; not a bool) as the hosts' checks take it (host_args.h):
// values past 64 bits keep their digits for the message.
run::HostInt host_int(py::handle h, const char* what) {
  if (PyBool_Check(h.ptr()))
    throw ArgTypeError(fmt::format("{} must be an integer, not bool", what));
  PyObject* index = PyNumber_Index(h.ptr());
  if (!index) {
    PyErr_Clear();
    throw ArgTypeError(
        fmt::format("{} must be an integer, not {}", what, Py_TYPE(h.ptr())->tp_name));
  }
  const py::object i = py::reinterpret_steal<py::object>(index);
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow) return run::HostInt::past(overflow, py::str(i).cast<std::string>());
  return run::HostInt(v);
}

// Raises tpbsim.errors.NAME(message).
void raise_as(const char* name, const char* message) {
  py::object cls = py::module_::import("tpbsim.errors").attr(name);
  PyErr_SetObject(cls.ptr(), py::str(message).ptr());
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const CoreStateError& e) {
    raise_as("Error", e.what());
  } catch (const ArgTypeError& e) {
    raise_as("ArgumentTypeError", e.what());
  } catch (const run::RangeError& e) {
    raise_as("OutOfRange", e.what());
  } catch (const run::LocatedError& e) {
    raise_as("ProgramError", e.what());
  } catch (const isa::AsmError& e) {
    raise_as("ProgramError", isa::format_diagnostic(e).c_str());
  } catch (const run::InputError& e) {
    raise_as("InputError", e.what());
  } catch (const std::invalid_argument& e) {  // num::CodeError, bad shapes
    raise_as("InputError", e.what());
  } catch (const std::runtime_error& e) {  // a spool file, a backdoor access
    raise_as("Error", e.what());
  } catch (const sc_core::sc_report& e) {  // SystemC's own: E518, no memory for its stacks
    std::string m = e.what();
    m = m.substr(0, m.find('\n'));
    if (m.find("(E518)") != std::string::npos)
      m += " (the address space this process may take, ulimit -v, is too small for the cores' "
           "stacks)";
    raise_as("Error", ("SystemC: " + m).c_str());
  }
}

// ----------------------------------------------------------------- the core

py::dict fault_dict(const sc::FaultInfo& f) {
  py::dict d;
  d["engine"] = isa::engine_name(f.engine);
  d["index"] = f.index;
  d["opcode"] = f.opcode;
  d["mnemonic"] = isa::mnemonic_or_opcode(f.opcode);
  d["kind"] = f.kind;
  d["predicates"] = f.predicates;
  d["message"] = f.message;
  return d;
}

// One retired instruction (SessionRequest::keep_retires).
struct Retire {
  std::uint64_t start_ps, end_ps;
  std::string engine;
  std::uint64_t index;
  unsigned opcode;
  std::string mnemonic;
};

// A run's SessionReport as Python holds it (tpbsim.Result reads it), and the
// exception a signal handler raised when the run was interrupted.
class BoundReport {
 public:
  BoundReport(run::SessionReport r, std::string arch) : r_(std::move(r)), arch_(std::move(arch)) {}
  const run::SessionReport& report() const { return r_; }
  const std::string& arch() const { return arch_; }
  py::object pending;  // None, or the exception of an interrupt

  py::list retires() const {
    std::array<std::string, 256> names;  // each opcode's mnemonic, looked up once
    py::list out(r_.retires.size());
    std::size_t i = 0;
    for (const run::RetireLine& l : r_.retires) {
      if (names[l.opcode].empty()) names[l.opcode] = isa::mnemonic_or_opcode(l.opcode);
      const std::string engine = r_.core_stats.empty()
                                     ? std::string(isa::engine_name(l.engine))
                                     : fmt::format("core{}.{}", l.core, isa::engine_name(l.engine));
      out[i++] = py::cast(Retire{l.start_ps, l.end_ps, engine, l.index, l.opcode, names[l.opcode]});
    }
    return out;
  }

 private:
  run::SessionReport r_;
  std::string arch_;
};

// A timing dict's value as the profile's overrides hold it (CoreSpec::
// timing_overrides, the JSON a --timing file holds): what json.dumps would
// have written, without the text. Keys are str (an int, float, bool or None
// key as JSON spells it); values dict, list, tuple, str, int, float, bool or
// None. Anything else, a NaN or an infinity, a cycle or a nesting past
// kMaxNesting is an InputError "timing overrides: ...". `at` is the dotted
// key of `v`, for messages.
constexpr int kMaxNesting = 64;

// A str's UTF-8 text; InputError "timing overrides: WHAT: not text" for one
// that has none (a lone surrogate).
std::string override_text(py::handle s, const std::string& what) {
  Py_ssize_t n = 0;
  const char* u = PyUnicode_AsUTF8AndSize(s.ptr(), &n);
  if (u) return std::string(u, static_cast<std::size_t>(n));
  PyErr_Clear();
  throw run::InputError(
      fmt::format("timing overrides: {}: not text (it holds a lone surrogate)", what));
}

std::string override_key(py::handle k) {
  if (PyUnicode_Check(k.ptr())) return override_text(k, "a key");
  if (PyBool_Check(k.ptr())) return k.ptr() == Py_True ? "true" : "false";
  if (k.is_none()) return "null";
  if (PyLong_Check(k.ptr()) || PyFloat_Check(k.ptr())) {  // int's and float's own repr
    const bool real = PyFloat_Check(k.ptr());
    const double d = real ? PyFloat_AsDouble(k.ptr()) : 0.0;
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    PyTypeObject* t = real ? &PyFloat_Type : &PyLong_Type;
    return py::reinterpret_steal<py::str>(t->tp_repr(k.ptr())).cast<std::string>();
  }
  throw run::InputError(
      fmt::format("timing overrides: keys must be str, int, float, bool or None, not {}",
                  py::str(k.get_type().attr("__name__")).cast<std::string>()));
}

nlohmann::json override_value(py::handle v, const std::string& at, std::vector<PyObject*>& open) {
  PyObject* o = v.ptr();
  if (v.is_none()) return nullptr;
  if (PyBool_Check(o)) return o == Py_True;
  if (PyLong_Check(o)) {
    // As a JSON parser reads the integer's digits: unsigned when not
    // negative, a double past 64 bits.
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (!overflow && i >= 0) return static_cast<std::uint64_t>(i);
    if (!overflow) return i;
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (!PyErr_Occurred()) return static_cast<std::uint64_t>(u);
      PyErr_Clear();
    }
    const double d = PyLong_AsDouble(o);
    if (!PyErr_Occurred()) return d;
    PyErr_Clear();
    throw run::InputError(fmt::format("timing overrides: '{}': {} is past any number", at,
                                      py::repr(v).cast<std::string>()));
  }
  if (PyFloat_Check(o)) {
    const double d = PyFloat_AsDouble(o);
    if (!std::isfinite(d))
      throw run::InputError(fmt::format("timing overrides: '{}': {} is not a finite number", at,
                                        py::repr(v).cast<std::string>()));
    return d;
  }
  if (PyUnicode_Check(o)) return override_text(v, "'" + at + "'");
  const bool dict = PyDict_Check(o), list = PyList_Check(o) || PyTuple_Check(o);
  if (!dict && !list)
    throw run::InputError(
        fmt::format("timing overrides: Object of type {} is not JSON serializable",
                    py::str(v.get_type().attr("__name__")).cast<std::string>()));
  if (std::find(open.begin(), open.end(), o) != open.end())
    throw run::InputError("timing overrides: Circular reference detected");
  if (open.size() >= kMaxNesting)
    throw run::InputError(
        fmt::format("timing overrides: nested more than {} levels deep", kMaxNesting));
  open.push_back(o);
  nlohmann::json out = dict ? nlohmann::json::object() : nlohmann::json::array();
  if (dict)
    for (const auto& [k, x] : py::reinterpret_borrow<py::dict>(v)) {
      const std::string key = override_key(k);
      out[key] = override_value(x, at.empty() ? key : at + "." + key, open);
    }
  else
    for (py::handle x : v) out.push_back(override_value(x, at, open));
  open.pop_back();
  return out;
}

class Session {
 public:
  // The device of `cores` cores (None: one) of the generation `arch` (None:
  // mariana), its profile loaded once from the file and the dict of
  // overrides (None: none) by run::load_profile.
  Session(const std::optional<std::string>& arch, const std::string& timing_file, py::handle timing,
          const std::string& mx_emax, py::handle cores_arg) {
    run::CoreSpec spec;
    if (!cores_arg.is_none()) {  // SPEC §15: a device of several cores
      const run::HostInt n = host_int(cores_arg, "cores");
      spec.cores = run::from_argument("cores=", [&] { return run::check_cores(n); });
    }
    if (arch) spec.arch = run::parse_arch_option(*arch);
    spec.timing_file = timing_file;
    if (!timing.is_none()) {
      std::vector<PyObject*> open;
      spec.timing_overrides = override_value(timing, "", open);
    }
    if (!mx_emax.empty()) spec.mx_emax = run::parse_mx_emax(mx_emax);
    s_ = std::make_unique<run::Session>(spec);
    programs_.resize(spec.cores);
  }
  unsigned cores() { return s().cores(); }
  // The core the memory, tile, semaphore and load calls address (a device).
  void select(py::handle i) {
    const run::HostInt k = host_int(i, "core");
    const unsigned n = s().cores();
    if (!k.in(0, static_cast<long long>(n) - 1))
      throw run::RangeError(fmt::format("core {} is not a core of this device of {} core{} (0..{})",
                                        k.str(), n, n == 1 ? "" : "s", n - 1));
    s().select(static_cast<unsigned>(k.value));
  }

  void close() {
    if (running_) throw CoreStateError("this Core is running (in another thread): cannot close it");
    s_.reset();
  }
  bool closed() const { return !s_; }
  bool running() const { return running_; }

  run::Session& s() {
    if (!s_) throw CoreStateError("this Core is closed (tpbsim.Core(...) makes a new one)");
    if (running_) throw CoreStateError("this Core is running (in another thread)");
    return *s_;
  }

  std::string arch() { return std::string(isa::arch_name(s().config().arch)); }
  std::uint32_t partition_bytes(const std::string& mem) {
    return s().partition_bytes(run::memory_region(mem));
  }
  std::uint64_t now_ps() { return s().core().now_ps(); }
  std::uint64_t hbm_bytes() { return s().hbm_bytes(); }
  std::uint64_t hbm_bytes_per_s() { return s().device().hbm_bytes_per_s(); }
  std::string effective_timing() { return s().core().effective_timing().dump(); }

  // Memory rows (Session::write_rows: checked whole before anything is written).
  void write(const std::string& mem, py::handle partition_arg, py::handle offset_arg,
             const py::buffer& buf, std::size_t rows, std::size_t row_bytes) {
    run::Session& s = this->s();
    // HBM: the array's bytes, row-major, from byte `offset`.
    const run::HostPlace place = run::checked_place(mem, host_int(partition_arg, "partition"),
                                                    host_int(offset_arg, "offset"), s.hbm_bytes());
    const py::buffer_info bi = buf.request();
    if (static_cast<std::size_t>(bi.size) * static_cast<std::size_t>(bi.itemsize) !=
        rows * row_bytes)
      throw std::logic_error("write: the buffer is not rows x row_bytes");
    const auto* data = static_cast<const std::uint8_t*>(bi.ptr);
    py::gil_scoped_release unlocked;
    run::write_place(s, place, data, rows, row_bytes);
  }
  // A new array of `shape` (1-D: one row; 2-D: row r from partition + r) of
  // NumPy type `descr`, checked against the partitions before it is made.
  py::array read(const std::string& mem, py::handle partition_arg, py::handle offset_arg,
                 const std::vector<py::ssize_t>& shape, const std::string& descr) {
    run::Session& s = this->s();
    const run::HostPlace place = run::checked_place(mem, host_int(partition_arg, "partition"),
                                                    host_int(offset_arg, "offset"), s.hbm_bytes());
    const py::dtype dt(descr);
    if (shape.empty() || shape.size() > 2)
      throw std::logic_error("read: the shape is not 1-D or 2-D");
    for (py::ssize_t d : shape)
      if (d <= 0) throw std::logic_error("read: a dimension is not positive");
    const auto rows = static_cast<std::size_t>(shape.size() == 2 ? shape[0] : 1);
    const auto cols = static_cast<std::uint64_t>(shape.back());
    // Saturated: a row that long fits no partition, and the check says so.
    const std::uint64_t item = static_cast<std::uint64_t>(dt.itemsize());
    const std::size_t row_bytes = static_cast<std::size_t>(
        cols > (std::uint64_t{1} << 40) / item ? std::uint64_t{1} << 40 : cols * item);
    run::check_place(s, place, rows, row_bytes);  // before the array is made
    py::array a(dt, shape);
    auto* out = static_cast<std::uint8_t*>(a.mutable_data());
    {
      py::gil_scoped_release unlocked;
      run::read_place(s, place, out, rows, row_bytes);
    }
    return a;
  }

  void write_tile(py::handle n_arg, const py::array_t<float, py::array::c_style>& a,
                  std::size_t rows, std::size_t cols, py::handle col_arg) {
    run::Session& s = this->s();
    const unsigned n = run::check_tile(host_int(n_arg, "n"));
    const unsigned col = col_arg.is_none() ? 0 : run::check_tile_col(host_int(col_arg, "col"));
    run::write_tile(s, n, a.data(), rows, cols, col, fmt::format("tile {}", n));
  }
  py::array read_tile(py::handle n) {
    run::TileData t = run::read_tile(s(), run::check_tile(host_int(n, "n")));
    if (!t.allocated) return py::array(py::dtype("<f4"), std::vector<py::ssize_t>{0, 0});
    py::array a(py::dtype(tile_descr(t.dtype)),
                std::vector<py::ssize_t>{static_cast<py::ssize_t>(t.rows),
                                         static_cast<py::ssize_t>(t.cols)});
    std::memcpy(a.mutable_data(), t.bytes.data(), t.bytes.size());
    return a;
  }
  py::object tile_info(py::handle n) {
    const unsigned k = run::check_tile(host_int(n, "n"));
    const sfu::Tile& t = s().core().tile_file().tile(k);
    if (!t.allocated) return py::none();
    py::dict d;
    d["dtype"] = std::string(isa::tile_dtype_name(t.dtype));
    d["rows"] = t.valid_row;
    d["cols"] = t.valid_col;
    d["col"] = t.col;
    d["tsize"] = t.tsize;
    d["phys"] = t.phys;
    return std::move(d);
  }
  py::dict sfu_flags() {
    const sfu::SfuFlags& f = s().core().tile_file().flags();
    py::dict d;
    d["inexact"] = f.inexact;
    d["saturated"] = f.saturated;
    d["wrapped"] = f.wrapped;
    return d;
  }

  std::vector<std::uint32_t> semaphores() {
    run::Session& s = this->s();
    std::vector<std::uint32_t> v(isa::kNumSemaphores);
    for (unsigned i = 0; i < v.size(); ++i) v[i] = s.core().semaphores().get(i);
    return v;
  }
  void set_semaphore(py::handle i, py::handle value) {
    run::Session& s = this->s();
    const unsigned k = run::check_semaphore(host_int(i, "i"));
    s.core().semaphores().set(k, run::check_semaphore_value(host_int(value, "value")));
  }
  // --lnc 2 (SPEC §15): the selected core's place in its logical core, in
  // register r31 of every compute engine.
  void set_core_id(unsigned id) { s().set_core_id(id); }
  std::uint32_t reg(const std::string& engine, py::handle r) {
    run::Session& s = this->s();
    const auto e = isa::parse_engine(engine.c_str());
    if (!e)
      throw run::InputError(fmt::format("engine '{}' is not one of pool dve pe sfu act", engine));
    return s.core().reg(*e, run::check_register(host_int(r, "r")));
  }

  // Programs: loaded, then run (a syntax error loads nothing and runs nothing).
  // `notes`: kept for a run with the race check (SPEC §14).
  void load_text(const std::string& text, const std::string& name, bool notes) {
    run::Session& s = this->s();
    program() = run::program_from_text(text, name, notes);
    s.load(*program());
  }
  void load_words(const py::buffer& buf, const std::string& name, bool notes) {
    run::Session& s = this->s();
    const py::buffer_info bi = buf.request();
    program() =
        run::program_from_words(static_cast<const std::uint8_t*>(bi.ptr),
                                static_cast<std::size_t>(bi.size * bi.itemsize), name, notes);
    s.load(*program());
  }
  void load_file(const std::string& path, bool notes) {
    run::Session& s = this->s();
    program() = run::load_program_file(path, notes);
    s.load(*program());
  }
  // The `.arch` of the program last loaded ("" when it has none).
  std::string program_arch() {
    const auto& p = program();
    return p && p->arch() ? std::string(isa::arch_name(*p->arch())) : "";
  }

  // Runs what is loaded with `request` (tpbsim._machine.RunOptions.request:
  // its fields checked as they were set).
  std::unique_ptr<BoundReport> run(const run::SessionRequest& request) {
    run::Session& s = this->s();
    run::SessionRequest req = request;
    run::check_races_file(req, "races=FILE", "racecheck=True");  // Python's names, not flags

    // Signals: Python's C handler only records a signal; its Python handler
    // runs in PyErr_CheckSignals, asked here (with the GIL, at most every
    // 20 ms of wall time). A handler that raises (SIGINT's raises
    // KeyboardInterrupt) stops the run at a common time on every engine;
    // the exception is raised once the run has returned.
    PyObject *etype = nullptr, *evalue = nullptr, *etb = nullptr;
    auto last = std::chrono::steady_clock::now();
    req.interrupt = [&]() -> bool {
      const auto now = std::chrono::steady_clock::now();
      if (now - last < std::chrono::milliseconds(20)) return false;
      last = now;
      py::gil_scoped_acquire locked;
      if (PyErr_CheckSignals() == 0) return false;
      PyErr_Fetch(&etype, &evalue, &etb);
      return true;
    };
    running_ = true;
    run::SessionReport rep;
    try {
      py::gil_scoped_release unlocked;
      rep = s.run(req);
    } catch (...) {
      running_ = false;
      throw;
    }
    running_ = false;
    s.select(0);
    auto out = std::make_unique<BoundReport>(std::move(rep), arch());
    if (etype) {
      PyErr_NormalizeException(&etype, &evalue, &etb);
      if (etb) PyException_SetTraceback(evalue, etb);
      out->pending = py::reinterpret_steal<py::object>(evalue);
      Py_XDECREF(etype);
      Py_XDECREF(etb);
    } else {
      out->pending = py::none();
    }
    return out;
  }

 private:
  // A tile's element type as NumPy's (BF16: its raw bits, as --dump's bf16).
  static const char* tile_descr(std::uint8_t dtype) {
    switch (static_cast<isa::TileDataType>(dtype)) {
      case isa::TileDataType::Fp64:
        return "<f8";
      case isa::TileDataType::Fp32:
        return "<f4";
      case isa::TileDataType::Fp16:
        return "<f2";
      case isa::TileDataType::Bf16:
      case isa::TileDataType::U16:
        return "<u2";
      case isa::TileDataType::S8:
        return "|i1";
      case isa::TileDataType::U8:
        return "|u1";
      case isa::TileDataType::S16:
        return "<i2";
      case isa::TileDataType::S32:
        return "<i4";
      case isa::TileDataType::U32:
        return "<u4";
    }
    throw std::runtime_error(fmt::format("tile data type {} is not known", dtype));
  }

  // The selected core's program (kept until the next load on that core).
  std::unique_ptr<isa::SpooledProgram>& program() { return programs_.at(s().selected()); }

  std::unique_ptr<run::Session> s_;
  std::vector<std::unique_ptr<isa::SpooledProgram>> programs_;  // per core
  bool running_ = false;
};

// An output of the package's own (tpbsim.torch.profile's merged trace),
// written as a run's outputs are (staged_outputs.h): through a staging file
// nobody can predict, renamed into place; a device or FIFO in place.
void write_output(const std::string& path, const py::bytes& data) {
  const std::string bytes = data;
  py::gil_scoped_release unlocked;
  run::OutputFile f(path);
  try {
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
      const ssize_t n = ::write(f.fd(), p, left);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
        pollfd w{f.fd(), POLLOUT, 0};
        ::poll(&w, 1, 100);
        continue;
      }
      if (n < 0)
        throw run::OutputError(fmt::format("{}: cannot write ({})", path, std::strerror(errno)));
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    f.commit();
  } catch (...) {
    f.discard();
    throw;
  }
}

// ----------------------------------------------------------- programs, ISA

py::bytes assemble(const std::string& text, const std::string& name) {
  const std::vector<std::uint8_t> words = isa::to_binary(isa::parse_program(text, name));
  return py::bytes(reinterpret_cast<const char*>(words.data()), words.size());
}

std::string disassemble_words(const py::buffer& buf, const std::string& name) {
  const py::buffer_info bi = buf.request();
  const auto* p = static_cast<const std::uint8_t*>(bi.ptr);
  const std::vector<std::uint8_t> bytes(p, p + bi.size * bi.itemsize);
  try {
    return isa::disassemble(isa::parse_binary(bytes, name));
  } catch (const isa::AsmError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw run::InputError(e.what());
  }
}

std::string disassemble_text(const std::string& text, const std::string& name) {
  return isa::disassemble(isa::parse_program(text, name));
}

py::dict check_dict(const isa::ProgramCheck& c) {
  py::list failures;
  for (const isa::InstructionCheck& f : c.failures) {
    py::dict d;
    d["line"] = f.loc.line == 0 ? py::object(py::none()) : py::object(py::int_(f.loc.line));
    d["word"] = f.word;
    d["engine"] = isa::engine_name(f.engine);
    d["index"] = f.index;
    d["opcode"] = f.opcode;
    d["mnemonic"] = isa::mnemonic_or_opcode(f.opcode);
    d["contract"] = f.result.contract;
    std::vector<std::string> names(f.result.failed.begin(), f.result.failed.end());
    d["predicates"] = names;
    failures.append(d);
  }
  py::dict out;
  out["arch"] = std::string(isa::arch_name(c.arch));
  out["checked"] = c.checked;
  out["failures"] = failures;
  return out;
}

py::dict check_text(const std::string& text, const std::string& name,
                    const std::optional<std::string>& arch) {
  std::optional<isa::Arch> a;
  if (arch) a = run::parse_arch_option(*arch);
  return check_dict(isa::check_program_text(text, name, a));
}

py::dict check_file(const std::string& path, const std::optional<std::string>& arch) {
  std::optional<isa::Arch> a;
  if (arch) a = run::parse_arch_option(*arch);
  try {
    return check_dict(isa::check_program_file(path, a));
  } catch (const isa::AsmError&) {
    throw;
  } catch (const std::runtime_error& e) {  // cannot open, neither text nor words
    throw run::InputError(e.what());
  }
}

py::dict check_words(const py::buffer& buf, const std::string& name,
                     const std::optional<std::string>& arch) {
  const isa::Arch a = arch ? run::parse_arch_option(*arch) : isa::Arch::Mariana;
  const py::buffer_info bi = buf.request();
  try {
    return check_dict(isa::check_program_words(static_cast<const std::uint8_t*>(bi.ptr),
                                               static_cast<std::size_t>(bi.size * bi.itemsize),
                                               name, a));
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::runtime_error& e) {  // a word no queue takes
    throw run::InputError(e.what());
  }
}

// ----------------------------------------------------------------- numerics

num::Format format_of(const std::string& name, const char* role) {
  const auto f = num::parse_format(name);
  if (!f)
    throw run::InputError(
        fmt::format("unknown format '{}' ({}); formats: {}", name, role, num::format_list()));
  return *f;
}

std::vector<py::ssize_t> shape_of(const py::array& a) {
  return std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim());
}

template <typename In>
py::array convert_into(num::Format from, num::Format to, const In* in, std::size_t n,
                       const std::vector<py::ssize_t>& shape, num::Overflow ov) {
  auto run = [&](auto* out) {
    py::gil_scoped_release unlocked;
    if constexpr (std::is_same_v<In, double>)
      num::convert_values(from, to, in, out, n, ov);
    else
      num::convert_codes(from, to, in, out, n, ov);
  };
  switch (num::code_container_bits(to)) {
    case 8: {
      py::array_t<std::uint8_t> out(shape);
      run(out.mutable_data());
      return std::move(out);
    }
    case 16: {
      py::array_t<std::uint16_t> out(shape);
      run(out.mutable_data());
      return std::move(out);
    }
    default: {
      py::array_t<std::uint32_t> out(shape);
      run(out.mutable_data());
      return std::move(out);
    }
  }
}

py::array convert_codes(const std::string& src, const std::string& dst,
                        const py::array_t<std::int64_t, py::array::c_style>& codes, bool saturate) {
  const num::Overflow ov = saturate ? num::Overflow::Saturate : num::Overflow::NonSaturate;
  return convert_into(format_of(src, "src"), format_of(dst, "dst"), codes.data(),
                      static_cast<std::size_t>(codes.size()), shape_of(codes), ov);
}

py::array convert_values(const std::string& src, const std::string& dst,
                         const py::array_t<double, py::array::c_style>& values, bool saturate) {
  const num::Overflow ov = saturate ? num::Overflow::Saturate : num::Overflow::NonSaturate;
  return convert_into(format_of(src, "src"), format_of(dst, "dst"), values.data(),
                      static_cast<std::size_t>(values.size()), shape_of(values), ov);
}

py::array decode(const std::string& fmt_name,
                 const py::array_t<std::int64_t, py::array::c_style>& codes) {
  const num::Format f = format_of(fmt_name, "format");
  py::array_t<float> out(shape_of(codes));
  const std::int64_t* in = codes.data();
  float* o = out.mutable_data();
  const auto n = static_cast<std::size_t>(codes.size());
  {
    py::gil_scoped_release unlocked;
    num::decode_codes(f, in, o, n);
  }
  return std::move(out);
}

// The host's thread pool (fw::parallel_for) for numerics' independent ranges.
void host_ranges(std::size_t n, std::size_t min_chunk, const num::RangeBody& body) {
  fw::parallel_for(n, min_chunk, body);
}

// MX quantization along rows, for the GEMM generator's host side
// (tpbsim.kernels.quant): num::mx_quantize_rows of x [R][C] float32 (finite:
// the caller checks), C a multiple of `block`. Returns (codes uint8 [R][C],
// scales uint8 [R][C/block], used float32 [R][C], BF16 codes uint16 [R][C]
// or None).
py::tuple mx_quantize_rows(const py::array_t<float, py::array::c_style>& x,
                           const std::string& fmt_name, int emax, int block, bool bf16_first) {
  const num::Format f = format_of(fmt_name, "format");
  if (x.ndim() != 2) throw run::InputError("mx_quantize_rows: x must be 2-D");
  if (block < 1 || x.shape(1) % block != 0)
    throw run::InputError(
        fmt::format("mx_quantize_rows: {} columns are not whole blocks of {}", x.shape(1), block));
  py::array_t<std::uint8_t> codes({x.shape(0), x.shape(1)});
  py::array_t<std::uint8_t> scales({x.shape(0), x.shape(1) / block});
  py::array_t<float> used({x.shape(0), x.shape(1)});
  py::array_t<std::uint16_t> bits(bf16_first ? std::vector<py::ssize_t>{x.shape(0), x.shape(1)}
                                             : std::vector<py::ssize_t>{0, 0});
  num::MxRows q;
  q.x = x.data();
  q.rows = static_cast<std::size_t>(x.shape(0));
  q.cols = static_cast<std::size_t>(x.shape(1));
  q.block = static_cast<std::size_t>(block);
  q.code = f;
  q.emax = emax;
  q.bf16_first = bf16_first;
  q.codes = codes.mutable_data();
  q.scales = scales.mutable_data();
  q.used = used.mutable_data();
  q.bf16 = bf16_first ? bits.mutable_data() : nullptr;
  {
    py::gil_scoped_release unlocked;
    num::mx_quantize_rows(q, host_ranges);
  }
  return py::make_tuple(codes, scales, used,
                        bf16_first ? py::object(bits) : py::object(py::none()));
}

// The group-8 weight formats (fp4, int4, nf4; docs/KERNELS.md "The
// quantizer"): num::group8_quantize of W^T [N][K] float32 (finite, K % 4 ==
// 0, N % 8 == 0), rule "ocp" or "absmax" with its `top`. Returns (data
// [K/4][N/8 x 20] uint8, used [N][K] float32). The same as quant.py's NumPy
// path (the tests compare them).
py::tuple group8_quantize(const py::array_t<float, py::array::c_style>& wt,
                          const std::string& code_name, const std::string& out_name,
                          const std::string& rule, double top) {
  num::Group8 q;
  q.code = format_of(code_name, "code");
  q.out = format_of(out_name, "out");
  if (wt.ndim() != 2 || wt.shape(0) % 8 != 0 || wt.shape(1) % 4 != 0)
    throw run::InputError("group8_quantize: W^T must be [N][K] with N % 8 == 0, K % 4 == 0");
  if (rule != "ocp" && rule != "absmax")
    throw run::InputError("group8_quantize: rule is ocp or absmax");
  q.rule = rule == "ocp" ? num::Group8Rule::Ocp : num::Group8Rule::Absmax;
  q.top = top;
  q.n = static_cast<std::size_t>(wt.shape(0));
  q.k = static_cast<std::size_t>(wt.shape(1));
  py::array_t<std::uint8_t> data(
      {static_cast<py::ssize_t>(q.k / 4), static_cast<py::ssize_t>(q.n / 8 * 20)});
  py::array_t<float> used({wt.shape(0), wt.shape(1)});
  q.wt = wt.data();
  q.data = data.mutable_data();
  q.used = used.mutable_data();
  {
    py::gil_scoped_release unlocked;
    num::group8_quantize(q, host_ranges);
  }
  return py::make_tuple(data, used);
}

py::list formats() {
  py::list out;
  for (int i = 0; i < num::kNumFormats; ++i) {
    const num::FormatInfo& fi = num::info(static_cast<num::Format>(i));
    py::dict d;
    d["name"] = fi.name;
    d["bits"] = fi.bits;
    d["is_float"] = fi.is_float;
    d["has_inf"] = fi.has_inf;
    d["has_nan"] = fi.has_nan;
    d["max_finite"] = fi.max_finite;
    d["container_bits"] = num::code_container_bits(fi.format);
    out.append(d);
  }
  return out;
}

}  // namespace

}  // namespace tpb::python

namespace tpb::python {
namespace {

void bind_retire(py::module_& m) {
  py::class_<Retire>(m, "Retire",
                     "One retired instruction, in retire order (end_ps, engine, index).")
      .def_readonly("start_ps", &Retire::start_ps,
                    "Issue time (after fetch and semaphore wait), ps.")
      .def_readonly("end_ps", &Retire::end_ps, "Retire time, ps.")
      .def_readonly("engine", &Retire::engine, "Engine name: pool, dve, pe or sfu.")
      .def_readonly("index", &Retire::index, "Place in the engine's instruction stream, from 0.")
      .def_readonly("opcode", &Retire::opcode, "Opcode byte.")
      .def_readonly("mnemonic", &Retire::mnemonic, "Mnemonic of the opcode.")
      .def("__repr__",
           [](const Retire& r) {
             return fmt::format(
                 "Retire(end_ps={}, engine='{}', index={}, opcode=0x{:02x}, "
                 "mnemonic='{}', start_ps={})",
                 r.end_ps, r.engine, r.index, r.opcode, r.mnemonic, r.start_ps);
           })
      .def("__eq__", [](const Retire& a, const Retire& b) {
        return a.start_ps == b.start_ps && a.end_ps == b.end_ps && a.engine == b.engine &&
               a.index == b.index && a.opcode == b.opcode;
      });
}

void bind_report(py::module_& m) {
  py::class_<BoundReport>(m, "SessionReport")
      .def_property_readonly(
          "status",
          [](const BoundReport& r) { return platform::status_name(r.report().result.status); })
      .def_property_readonly("message",
                             [](const BoundReport& r) { return r.report().result.message; })
      .def_property_readonly("start_ps",
                             [](const BoundReport& r) { return r.report().result.start_ps; })
      .def_property_readonly("simulated_ps",
                             [](const BoundReport& r) { return r.report().result.simulated_ps; })
      .def_property_readonly("instructions",
                             [](const BoundReport& r) { return r.report().result.instructions; })
      .def_property_readonly("wall_seconds",
                             [](const BoundReport& r) { return r.report().result.wall_seconds; })
      .def_property_readonly("arch", &BoundReport::arch)
      .def_property_readonly("fault",
                             [](const BoundReport& r) -> py::object {
                               const auto& f = r.report().result.fault;
                               if (!f) return py::none();
                               return fault_dict(*f);
                             })
      .def_property_readonly("stats_json",
                             [](const BoundReport& r) {
                               return trace::stats_to_json(r.report().stats)
                                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
                             })
      .def_property_readonly("race_count",
                             [](const BoundReport& r) -> py::object {
                               const auto& x = r.report().races;
                               if (!x) return py::none();
                               return py::int_(x->total);
                             })
      .def("retires", &BoundReport::retires)
      .def_property_readonly("core_count",
                             [](const BoundReport& r) { return r.report().core_stats.size(); })
      .def("core_stats_json",
           [](const BoundReport& r, std::size_t i) {
             return trace::stats_to_json(r.report().core_stats.at(i))
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
           })
      .def_property_readonly("files", [](const BoundReport& r) { return r.report().files; })
      .def_property_readonly("output_errors",
                             [](const BoundReport& r) { return r.report().output_errors; })
      .def_property_readonly("notes", [](const BoundReport& r) { return r.report().notes; })
      .def_readonly("pending", &BoundReport::pending);
}

// The setter of a watchdog of a request: its option's text ("": off)
// through `parse` (run::parse_sim_time, run::parse_wall_time); InputError
// "NAME: why".
template <typename T>
auto limit_setter(T run::SessionRequest::*field,
                  bool (*parse)(const std::string&, T&, std::string&), const char* name) {
  return [=](run::SessionRequest& r, const std::string& s) {
    std::string why;
    r.*field = 0;
    if (!s.empty() && !parse(s, r.*field, why))
      throw run::InputError(std::string(name) + ": " + why);
  };
}

// A run's request (run::SessionRequest) as the package fills it, one field
// per run keyword under the keyword's name (tpbsim._machine.RunOptions
// .request): each value is parsed and checked by the run API's parsers as
// it is set, so a bad one is refused before anything loads, in the CLI's
// words (the package renames the flags to its keywords). Paths are bytes or
// str ("": not written); the times, the level and the engines are their
// option's text; `trace_window` is that text or a (start, end) pair of ends.
void bind_request(py::module_& m) {
  using R = run::SessionRequest;
  py::class_<R>(m, "SessionRequest")
      .def(py::init<>())
      .def_readwrite("vcd", &R::vcd)
      .def_readwrite("perfetto", &R::perfetto)
      .def_readwrite("stats", &R::stats)
      .def_readwrite("retire", &R::retire)
      .def_readwrite("races", &R::races_file)
      .def_readwrite("program_name", &R::program_name)
      .def_readwrite("keep_retires", &R::keep_retires)
      .def_readwrite("timing_only", &R::timing_only)
      .def_readwrite("racecheck", &R::racecheck)
      .def_property("trace_level", nullptr,
                    [](R& r, const std::string& s) { r.trace_level = run::parse_trace_level(s); })
      .def_property("trace_engines", nullptr,
                    [](R& r, const std::string& s) {
                      r.trace_engines.clear();
                      if (!s.empty()) r.trace_engines = run::parse_trace_engines(s);
                    })
      .def_property("trace_window", nullptr,
                    [](R& r, const py::object& w) {
                      if (py::isinstance<py::str>(w)) {
                        const auto s = w.cast<std::string>();
                        r.trace_window =
                            s.empty() ? trace::TraceWindow{} : run::parse_trace_window(s);
                        return;
                      }
                      const auto ends = w.cast<std::pair<std::string, std::string>>();
                      r.trace_window = run::trace_window_of(ends.first, ends.second);
                    })
      .def_property("max_sim_time", nullptr,
                    limit_setter(&R::max_sim_ps, &run::parse_sim_time, "max_sim_time"))
      .def_property("max_wall_time", nullptr,
                    limit_setter(&R::max_wall_seconds, &run::parse_wall_time, "max_wall_time"))
      .def_property("threads", nullptr, [](R& r, py::handle n) {
        r.threads = n.is_none() ? 0 : run::check_threads(host_int(n, "threads"));
      });
}

void bind_session(py::module_& m) {
  py::class_<Session>(m, "Session")
      .def(py::init<const std::optional<std::string>&, const std::string&, py::handle,
                    const std::string&, py::handle>(),
           py::kw_only(), py::arg("arch"), py::arg("timing_file"), py::arg("timing"),
           py::arg("mx_emax"), py::arg("cores"))
      .def("cores", &Session::cores)
      .def("select", &Session::select)
      .def("set_core_id", &Session::set_core_id)
      .def_static("is_open", &run::Session::is_open)
      .def_static("elaborations", &run::Session::elaborations)
      .def("close", &Session::close)
      .def_property_readonly("closed", &Session::closed)
      .def_property_readonly("running", &Session::running)
      .def("arch", &Session::arch)
      .def("partition_bytes", &Session::partition_bytes)
      .def("now_ps", &Session::now_ps)
      .def("hbm_bytes", &Session::hbm_bytes)
      .def("hbm_bytes_per_s", &Session::hbm_bytes_per_s)
      .def("effective_timing", &Session::effective_timing)
      .def("write", &Session::write)
      .def("read", &Session::read)
      .def("write_tile", &Session::write_tile)
      .def("read_tile", &Session::read_tile)
      .def("tile_info", &Session::tile_info)
      .def("sfu_flags", &Session::sfu_flags)
      .def("semaphores", &Session::semaphores)
      .def("set_semaphore", &Session::set_semaphore)
      .def("reg", &Session::reg)
      .def("load_text", &Session::load_text)
      .def("load_words", &Session::load_words)
      .def("load_file", &Session::load_file)
      .def("program_arch", &Session::program_arch)
      .def("run", &Session::run);
}

// The module's functions: the ISA tools, the numerics and the host checks.
void bind_functions(py::module_& m) {
  m.def("assemble", &assemble);
  m.def("disassemble_words", &disassemble_words);
  m.def("disassemble_text", &disassemble_text);
  m.def("check_text", &check_text);
  m.def("check_words", &check_words);
  m.def("check_file", &check_file);
  m.def("convert_codes", &convert_codes);
  m.def("convert_values", &convert_values);
  m.def("decode", &decode);
  m.def("formats", &formats);
  m.def("mx_quantize_rows", &mx_quantize_rows);
  // OCP MX §5: an element format's emax; QuantizeMX's E4M3 offset under an
  // --mx-emax mode (SPEC §4).
  m.def("element_emax",
        [](const std::string& f) { return num::element_emax(format_of(f, "format")); });
  m.def("qmx_emax", [](const std::string& mode) {
    return num::mx_emax_offset(num::MxOut::E4M3, run::parse_mx_emax(mode));
  });
  m.def("group8_quantize", &group8_quantize);
  m.def("archs", [] {
    std::vector<std::string> v;
    for (isa::Arch a :
         {isa::Arch::Sunda, isa::Arch::Cayman, isa::Arch::Mariana, isa::Arch::Maverick})
      v.emplace_back(isa::arch_name(a));
    return v;
  });
  m.def("engines", [] {
    return std::vector<std::string>(isa::kEngineNames, isa::kEngineNames + isa::kNumEngines);
  });
  m.def("dump_dtypes", [] {
    // The DTYPEs of --dump, each with the NumPy type of its elements.
    std::vector<std::pair<std::string, std::string>> out;
    for (const char* name : {"u8", "u16", "u32", "i8", "f16", "f32", "bf16"}) {
      io::NpyDtype d;
      if (io::parse_dump_dtype(name, d)) out.emplace_back(name, io::npy_descr(d));
    }
    return out;
  });
  m.attr("MAX_CORES") = platform::Device::kMaxCores;
  // A generation's own profile (no file, no overrides), as --dump-timing writes it.
  m.def("default_timing", [](const std::string& arch) {
    return timing::to_json(timing::default_timing(run::parse_arch_option(arch))).dump();
  });
  m.def("output_problem", &run::output_problem);
  m.def("write_output", &write_output);
  m.def("check_threads", [](py::handle n) { return run::check_threads(host_int(n, "threads")); });
  m.def("check_cores", [](py::handle n) { return run::check_cores(host_int(n, "cores")); });
  // SPEC §15 logical cores: `lnc` (an integer) on a device of `cores` cores.
  m.def("check_lnc", [](py::handle lnc, unsigned cores) {
    const unsigned l = run::parse_lnc(host_int(lnc, "lnc").str());
    run::check_lnc_pairs(l, cores);
    return l;
  });
  m.def("parse_sim_time", [](const std::string& s) {
    std::uint64_t ps = 0;
    std::string why;
    if (!run::parse_sim_time(s, ps, why)) throw run::InputError(why);
    return ps;
  });
}

}  // namespace
}  // namespace tpb::python

PYBIND11_MODULE(_tpbsim, m) {
  using namespace tpb;
  using namespace tpb::python;
  m.doc() =
      "The compiled core of the tpbsim package (pybind11 over the run API). Use the tpbsim "
      "package, not this module: its names and signatures are not fixed.";

  // SystemC's banner and its "simulation stopped" info would go to stdout.
  setenv("SYSC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  py::register_exception_translator(&translate);

  bind_retire(m);
  bind_report(m);
  bind_request(m);
  bind_session(m);
  bind_functions(m);
}
