// `tpbsim run PROGRAM [options]` (SPEC §9): simulate a program on one core.
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "models/isa/program.h"
#include "models/isa/program_spool.h"
#include "models/trace/gtkw_writer.h"
#include "models/trace/perfetto_writer.h"
#include "models/trace/stats_writer.h"
#include "models/trace/vcd_writer.h"
#include "platform/cli/commands.h"
#include "platform/cli/mem_spec.h"
#include "platform/core/tpb_core.h"
#include "platform/cosim/dequant_cosim.h"
#include "platform/io/npy.h"

// libsystemc calls sc_main from its own main(); tpbsim has its own main, so
// this weak definition only satisfies the link (never called).
extern "C" __attribute__((weak)) int sc_main(int, char**) { return 0; }

namespace tpb::cli {

namespace po = boost::program_options;

namespace {

// The bytes of one partition of `m`'s memory (SPEC §2, the profile).
std::uint32_t capacity(const MemSpec& m, const sc::TimingConfig& t) {
  return m.region == isa::Region::Sbuf ? t.sbuf_bytes_per_partition : t.psum_bytes_per_partition;
}

// A --load's array, read and checked before the core exists.
io::NpyArray read_load(const MemSpec& m, const sc::TimingConfig& t) {
  io::NpyArray a = io::read_npy(m.file);
  if (a.shape.size() > 2)
    throw SpecError(fmt::format("'{}': {} is a {}-D array; expected 1-D or 2-D", m.text, m.file,
                                a.shape.size()));
  const std::size_t rows = a.shape.size() == 2 ? a.shape[0] : 1;
  check_rows(m, rows);
  check_row_fits(m, rows ? a.data.size() / rows : 0, capacity(m, t));
  return a;
}

void do_load(platform::TpbCore& core, const MemSpec& m, const io::NpyArray& a) {
  const std::size_t rows = a.shape.size() == 2 ? a.shape[0] : 1;
  const std::size_t row_bytes = rows ? a.data.size() / rows : 0;  // checked by read_load
  for (std::size_t r = 0; r < rows; ++r) {
    try {
      core.load_memory(mem_addr(m, r), a.data.data() + r * row_bytes, row_bytes);
    } catch (const std::runtime_error& e) {
      throw SpecError(fmt::format("'{}': row {}: {}", m.text, r, e.what()));
    }
  }
}

// The shape was checked against the partitions before the run (cmd_run).
void do_dump(platform::TpbCore& core, const MemSpec& m) {
  io::NpyArray a;
  a.dtype = m.dtype;
  a.shape = {m.rows, m.cols};
  const std::size_t row_bytes = m.cols * io::npy_itemsize(m.dtype);
  a.data.resize(m.rows * row_bytes);
  for (std::size_t r = 0; r < m.rows; ++r) {
    try {
      core.dump_memory(mem_addr(m, r), a.data.data() + r * row_bytes, row_bytes);
    } catch (const std::runtime_error& e) {
      throw SpecError(fmt::format("'{}': row {}: {}", m.text, r, e.what()));
    }
  }
  io::write_npy(m.file, a);
}

void do_load_tile(platform::TpbCore& core, const TileSpec& t) {
  const io::NpyArray a = io::read_npy(t.file);
  if (a.dtype != io::NpyDtype::F32)
    throw SpecError(fmt::format("'{}': {} is not a float32 array (<f4)", t.text, t.file));
  if (a.shape.empty() || a.shape.size() > 2)
    throw SpecError(
        fmt::format("'{}': {} is a {}-D array; expected 2-D", t.text, t.file, a.shape.size()));
  const std::size_t rows = a.shape.size() == 2 ? a.shape[0] : 1;
  const std::size_t cols = a.shape.back();
  if (rows == 0 || cols == 0 || rows > 0xFFFF || cols > 0xFFFF)
    throw SpecError(fmt::format("'{}': shape {} x {} is not a tile shape", t.text, rows, cols));
  const std::size_t col = t.col ? t.col : cols;
  if (col < cols)
    throw SpecError(
        fmt::format("'{}': physical Col {} is below the array's {} columns", t.text, col, cols));
  std::vector<float> v(rows * cols);
  std::memcpy(v.data(), a.data.data(), v.size() * 4);
  try {
    core.tile_file().load_fp32(t.tile, static_cast<std::uint16_t>(rows),
                               static_cast<std::uint16_t>(cols), static_cast<std::uint16_t>(col),
                               v.data());
  } catch (const std::invalid_argument& e) {
    throw SpecError(fmt::format("'{}': {}", t.text, e.what()));
  }
}

// The tile's valid region in its own type (S8 -> i1, U8 -> u1, FP32 -> f4);
// a tile name that holds no tile dumps as an empty 0 x 0 float32 array.
void do_dump_tile(platform::TpbCore& core, const TileSpec& t) {
  const fw::sfu::Tile& tile = core.tile_file().tile(t.tile);
  io::NpyArray a;
  a.dtype = io::NpyDtype::F32;
  a.shape = {0, 0};
  if (tile.allocated) {
    switch (static_cast<isa::TileDataType>(tile.dtype)) {
      case isa::TileDataType::Fp32:
        a.dtype = io::NpyDtype::F32;
        break;
      case isa::TileDataType::S8:
        a.dtype = io::NpyDtype::I8;
        break;
      case isa::TileDataType::U8:
        a.dtype = io::NpyDtype::U8;
        break;
      default:
        throw SpecError(fmt::format("'{}': tile T{} has data type {}, which --dump does not write",
                                    t.text, t.tile, isa::tile_dtype_name(tile.dtype)));
    }
    a.shape = {tile.valid_row, tile.valid_col};
    a.data = core.tile_file().valid_bytes(t.tile);
  }
  io::write_npy(t.file, a);
}

// Every output of a run is staged: written to PATH.tpbsim-tmp beside it and
// renamed into place only when complete, so a failed or interrupted write
// never leaves a half-written file under the real name, and an output never
// truncates an input or another output.
class StagedOutputs {
 public:
  void add(std::string option, std::string path) {
    outs_.push_back({std::move(option), std::move(path)});
  }
  // A device or a pipe (/dev/null, /dev/stdout) is written in place: it
  // cannot be replaced by a rename, and must not be.
  static bool staged(const std::string& path) { return output_is_staged(path); }
  static std::string temp(const std::string& path) { return staged_output_path(path); }

  // Before anything runs: an output that names an input or another output,
  // or that cannot be created, is an error listing every such output; then
  // nothing is written.
  std::string check(const std::vector<std::pair<std::string, std::string>>& inputs) const {
    namespace fs = std::filesystem;
    auto same = [](const std::string& a, const std::string& b) {
      std::error_code e1, e2;
      const fs::path pa = fs::weakly_canonical(a, e1), pb = fs::weakly_canonical(b, e2);
      return e1 || e2 ? a == b : pa == pb;
    };
    std::vector<std::string> bad;
    for (std::size_t i = 0; i < outs_.size(); ++i) {
      const auto& [opt, path] = outs_[i];
      for (const auto& [iopt, ipath] : inputs)
        if (same(path, ipath))
          bad.push_back(fmt::format("{} {} names the input of {}", opt, path, iopt));
      for (std::size_t j = 0; j < i; ++j)
        if (same(path, outs_[j].second))
          bad.push_back(fmt::format("{} {} names the output of {} too", opt, path, outs_[j].first));
    }
    if (bad.empty())
      for (const auto& [opt, path] : outs_) {
        std::error_code ec;
        if (fs::is_directory(path, ec)) {
          bad.push_back(fmt::format("{} {} is a directory", opt, path));
          continue;
        }
        const bool ok = std::ofstream(temp(path), std::ios::app).good();
        if (staged(path)) fs::remove(temp(path), ec);
        if (!ok)
          bad.push_back(fmt::format("{} {}: cannot create ({})", opt, path, std::strerror(errno)));
      }
    if (bad.empty()) return "";
    std::string msg = "refused before running, nothing written:";
    for (const auto& b : bad) msg += "\n  " + b;
    return msg;
  }
  // Renames a complete temp into place; on failure removes it and says so.
  static void commit(const std::string& path) {
    if (!staged(path)) return;
    if (std::rename(temp(path).c_str(), output_target(path).c_str()) != 0) {
      const int err = errno;
      std::remove(temp(path).c_str());
      throw std::runtime_error(
          fmt::format("{}: not written (rename failed: {})", path, std::strerror(err)));
    }
  }
  static void discard(const std::string& path) {
    if (staged(path)) std::remove(temp(path).c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> outs_;
};

// --trace-window T0:T1 (either end may be empty: from the start / to the end).
trace::TraceWindow parse_trace_window(const std::string& s) {
  const std::size_t colon = s.find(':');
  if (colon == std::string::npos || s.find(':', colon + 1) != std::string::npos)
    throw SpecError(fmt::format("--trace-window '{}': expected T0:T1 (e.g. 2us:10us)", s));
  trace::TraceWindow w;
  const std::string a = s.substr(0, colon), b = s.substr(colon + 1);
  for (const auto& [text, end] : {std::pair{&a, &w.from}, std::pair{&b, &w.to}}) {
    std::string why;
    if (text->empty() || *text == "0") continue;  // 0: the start
    if (!parse_sim_time(*text, *end, why)) throw SpecError("--trace-window: " + why);
  }
  if (w.from > w.to)
    throw SpecError(fmt::format("--trace-window '{}': the start is after the end", s));
  return w;
}

constexpr const char* kUsage = "usage: tpbsim run PROGRAM [options]\n";
// --trace-level auto: bundle slices up to this many instructions.
constexpr std::uint64_t kAutoBundleLimit = 16384;
constexpr const char* kExitCodes =
    "\nexit codes: 0 ok; 1 bad input, usage or file error (nothing runs) or an output\n"
    "not written; 2 fault (invalid instruction, address error, tile fault); 3 deadlock;\n"
    "4 watchdog (--max-sim-time or --max-wall-time reached: the outputs are complete up\n"
    "to the stop time). docs/BAD_INPUT.md lists every message.\n";

}  // namespace

int cmd_run(const Args& args) {
  // Keep stdout for the summary: no banner, no "simulation stopped" info.
  setenv("SYSC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  po::options_description opts("tpbsim run options");
  std::string arch_s, timing_file, dump_timing, emax_s, vcd, perfetto, stats_file, retire_file;
  std::string trace_engines, trace_window, trace_level = "auto";
  std::string max_sim_s, max_wall_s;
  std::vector<std::string> loads, dumps;
  bool cosim = false;
  std::string cosim_vcd;
  opts.add_options()("help,h", "show this help")(
      "arch", po::value(&arch_s), "sunda|cayman|mariana|maverick (overrides the program's .arch)")(
      "timing", po::value(&timing_file), "timing profile JSON merged over the defaults")(
      "dump-timing", po::value(&dump_timing), "write the effective timing profile (JSON)")(
      "mx-emax", po::value(&emax_s), "ocp|neuron-alt (QuantizeMX emax offsets)")(
      "load", po::value(&loads)->composing(),
      "sbuf|psum:PARTITION:OFFSET=FILE.npy, or tile:N[:COL]=FILE.npy (FP32 2-D)")(
      "dump", po::value(&dumps)->composing(),
      "sbuf|psum:PARTITION:OFFSET:ROWSxCOLS:DTYPE=FILE.npy, or tile:N=FILE.npy")(
      "vcd", po::value(&vcd), "write a VCD waveform")("perfetto", po::value(&perfetto),
                                                      "write a Chrome trace-event JSON")(
      "stats", po::value(&stats_file), "write run statistics (JSON)")(
      "retire", po::value(&retire_file), "write one line per retired instruction")(
      "trace-engines", po::value(&trace_engines),
      "ENGINE[,ENGINE...]: trace only these engines (pool dve pe sfu; default all)")(
      "trace-window", po::value(&trace_window),
      "T0:T1: write only trace events in [T0, T1] (times like 1500, 1500ps, 2ns, 35us, 1ms; "
      "either end may be empty)")(
      "trace-level", po::value(&trace_level),
      "instr|bundle|auto: instruction slices only, or firmware bundles and the pc too; auto "
      "(default): bundle up to 16384 instructions, instr above")(
      "max-sim-time", po::value(&max_sim_s),
      "watchdog: stop at this simulated time, an integer with a unit ps ns us ms s "
      "(none: ps); exit 4")("max-wall-time", po::value(&max_wall_s),
                            "watchdog: stop after this many seconds of host time; exit 4")(
      "quiet,q", "print nothing on success")(
      "cosim", po::bool_switch(&cosim),
      "TensorDequantize in the Verilated RTL, every word checked by the model (docs/COSIM.md)")(
      "cosim-vcd", po::value(&cosim_vcd), "with --cosim: write the RTL's waves (VCD)");
  po::options_description hidden;
  std::string program_path;
  hidden.add_options()("program", po::value(&program_path));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("program", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "tpbsim run: error: %s\n%s", e.what(), kUsage);
    return 1;
  }
  if (vm.count("help")) {
    std::cout << kUsage << opts << kExitCodes;
    return 0;
  }
  if (program_path.empty()) {
    std::fprintf(stderr, "tpbsim run: error: no PROGRAM given\n%s", kUsage);
    return 1;
  }
  const bool quiet = vm.count("quiet") > 0;
  // A path option given an empty value is an error, not an option ignored.
  for (const char* opt : {"timing", "dump-timing", "vcd", "perfetto", "stats", "retire"})
    if (vm.count(opt) && vm[opt].as<std::string>().empty()) {
      std::fprintf(stderr, "tpbsim run: error: --%s: empty path\n", opt);
      return 1;
    }
  std::uint64_t max_sim_ps = 0;
  double max_wall_seconds = 0;
  for (const auto& [opt, text] :
       {std::pair<const char*, const std::string*>{"--max-sim-time", &max_sim_s},
        {"--max-wall-time", &max_wall_s}}) {
    if (!vm.count(opt + 2)) continue;
    std::string why;
    if (!(std::string(opt) == "--max-sim-time" ? parse_sim_time(*text, max_sim_ps, why)
                                               : parse_wall_time(*text, max_wall_seconds, why))) {
      std::fprintf(stderr, "tpbsim run: error: %s %s\n", opt, why.c_str());
      return 1;
    }
  }
  if (!cosim_vcd.empty() && !cosim) {
    std::fprintf(stderr, "tpbsim run: error: --cosim-vcd needs --cosim\n");
    return 1;
  }
  if (cosim && !cosim::linked_dut()) {
    std::fprintf(stderr,
                 "tpbsim run: error: --cosim: this tpbsim has no RTL linked (built without "
                 "Verilator; see docs/COSIM.md)\n");
    return 1;
  }

  // Program, generation, profile: every error here is exit 1.
  // Read once into per-engine spools (bounded memory, any length).
  std::unique_ptr<isa::SpooledProgram> program;
  try {
    program = isa::SpooledProgram::load(program_path);
  } catch (const isa::AsmError& e) {
    std::fprintf(stderr, "%s:%d:%d: error: %s\n", e.loc().file.c_str(), e.loc().line, e.loc().col,
                 e.message().c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpbsim run: error: %s\n", e.what());
    return 1;
  }
  isa::Arch arch = program->arch().value_or(isa::Arch::Mariana);
  if (!arch_s.empty() && !isa::parse_arch(arch_s, arch)) {
    std::fprintf(stderr,
                 "tpbsim run: error: --arch '%s' is not one of sunda cayman mariana maverick\n",
                 arch_s.c_str());
    return 1;
  }
  platform::CoreConfig cfg = platform::default_core_config(arch);
  if (!emax_s.empty()) {
    if (emax_s == "ocp")
      cfg.mx_emax = num::MxEmax::Ocp;
    else if (emax_s == "neuron-alt")
      cfg.mx_emax = num::MxEmax::NeuronAlt;
    else {
      std::fprintf(stderr, "tpbsim run: error: --mx-emax '%s' is not ocp or neuron-alt\n",
                   emax_s.c_str());
      return 1;
    }
  }
  trace::TraceWindow window;
  try {
    if (!trace_engines.empty()) {
      bool keep[isa::kNumEngines] = {};
      for (const std::string& name : split(trace_engines, ',')) {
        const auto e = isa::parse_engine(name.c_str());
        if (!e)
          throw SpecError(fmt::format("--trace-engines: '{}' is not one of pool dve pe sfu", name));
        keep[static_cast<unsigned>(*e)] = true;
      }
      for (unsigned e = 0; e < isa::kNumEngines; ++e)
        if (!keep[e]) cfg.trace_hidden_engines.push_back(static_cast<isa::Engine>(e));
    }
    if (!trace_window.empty()) window = parse_trace_window(trace_window);
    if (trace_level != "instr" && trace_level != "bundle" && trace_level != "auto")
      throw SpecError(fmt::format("--trace-level '{}' is not instr, bundle or auto", trace_level));
    // auto: bundle detail while a program is short; a long one's bundle
    // slices would be about ten times the trace (docs/PERFORMANCE.md).
    cfg.trace_bundles =
        trace_level == "bundle" || (trace_level == "auto" && program->size() <= kAutoBundleLimit);
    if (trace_level == "auto" && !cfg.trace_bundles && (!vcd.empty() || !perfetto.empty()) &&
        !quiet)
      std::fprintf(stderr,
                   "tpbsim run: note: %llu instructions: tracing instructions, not bundles "
                   "(--trace-level bundle for those)\n",
                   static_cast<unsigned long long>(program->size()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpbsim run: error: %s\n", e.what());
    return 1;
  }
  std::vector<MemSpec> load_specs, dump_specs;
  std::vector<io::NpyArray> load_arrays;  // one per load_specs entry
  std::vector<TileSpec> tile_loads, tile_dumps;
  try {
    if (!timing_file.empty()) {
      sc::merge_timing_file(cfg.timing, timing_file);
      try {
        fw::builtin_kernels().resolve_costs(cfg.timing);  // bundle names exist
      } catch (const sc::TimingError& e) {
        throw sc::TimingError(timing_file + ": " + e.what());
      }
    }
    for (const auto& s : loads)
      if (is_tile_spec(s))
        tile_loads.push_back(parse_tile_spec(s, false));
      else
        load_specs.push_back(parse_mem_spec(s, false));
    for (const auto& s : dumps)
      if (is_tile_spec(s))
        tile_dumps.push_back(parse_tile_spec(s, true));
      else
        dump_specs.push_back(parse_mem_spec(s, true));
    // Shapes against the partitions, before anything runs.
    for (const MemSpec& m : load_specs) load_arrays.push_back(read_load(m, cfg.timing));
    for (const MemSpec& m : dump_specs) check_dump_fits(m, capacity(m, cfg.timing));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpbsim run: error: %s\n", e.what());
    return 1;
  }
  cfg.max_sim_ps = max_sim_ps;
  cfg.max_wall_seconds = max_wall_seconds;
  cfg.trace_signals = !vcd.empty();
  cfg.trace_slices = !perfetto.empty();

  StagedOutputs outputs;
  for (const auto& [opt, path] : {std::pair<const char*, const std::string*>{"--vcd", &vcd},
                                  {"--perfetto", &perfetto},
                                  {"--stats", &stats_file},
                                  {"--retire", &retire_file},
                                  {"--dump-timing", &dump_timing},
                                  {"--cosim-vcd", &cosim_vcd}})
    if (!path->empty()) outputs.add(opt, *path);
  // --vcd FILE.vcd also writes the GTKWave save file FILE.gtkw (not beside a device or pipe).
  const std::string gtkw =
      !vcd.empty() && StagedOutputs::staged(vcd) ? trace::gtkw_path_for(vcd) : "";
  if (!gtkw.empty()) outputs.add("--vcd (its GTKWave save file)", gtkw);
  for (const MemSpec& m : dump_specs) outputs.add("--dump " + m.text, m.file);
  for (const TileSpec& t : tile_dumps) outputs.add("--dump " + t.text, t.file);
  std::vector<std::pair<std::string, std::string>> inputs = {{"PROGRAM", program_path}};
  if (!timing_file.empty()) inputs.push_back({"--timing", timing_file});
  for (const MemSpec& m : load_specs) inputs.push_back({"--load " + m.text, m.file});
  for (const TileSpec& t : tile_loads) inputs.push_back({"--load " + t.text, t.file});
  if (const std::string why = outputs.check(inputs); !why.empty()) {
    std::fprintf(stderr, "tpbsim run: error: %s\n", why.c_str());
    return 1;
  }

  std::unique_ptr<std::ofstream> retire_out;
  if (!retire_file.empty()) {
    retire_out = std::make_unique<std::ofstream>(StagedOutputs::temp(retire_file));
    if (!*retire_out) {
      std::fprintf(stderr, "tpbsim run: error: %s: cannot open for writing\n", retire_file.c_str());
      return 1;
    }
  }

  // Trace writers stream to their staged files as the run goes.
  std::unique_ptr<trace::VcdWriter> vcd_writer;
  std::unique_ptr<trace::PerfettoWriter> perfetto_writer;
  try {
    if (!vcd.empty())
      vcd_writer = std::make_unique<trace::VcdWriter>(StagedOutputs::temp(vcd), "tpb", window);
    if (!perfetto.empty())
      perfetto_writer =
          std::make_unique<trace::PerfettoWriter>(StagedOutputs::temp(perfetto), window);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpbsim run: error: %s\n", e.what());
    if (!vcd.empty()) StagedOutputs::discard(vcd);
    if (retire_out) StagedOutputs::discard(retire_file);
    return 1;
  }

  // SystemC objects live for the rest of the process (one elaboration).
  platform::TpbCore* core = nullptr;
  cosim::DequantCosim* rtl = nullptr;  // --cosim: the RTL harness on the POOL
  try {
    core = new platform::TpbCore("tpb", cfg);
    core->attach_traces(vcd_writer.get(), perfetto_writer.get());
    if (cosim) {
      cosim::DequantCosimConfig cc;
      cc.clock_mhz = cfg.timing.clock(isa::Engine::Pool);
      if (!cosim_vcd.empty()) cc.vcd = StagedOutputs::temp(cosim_vcd);
      rtl = new cosim::DequantCosim("cosim", *cosim::linked_dut(),
                                    core->sequencer(isa::Engine::Pool), cc);
    }
    core->load_program(*program);
    if (!dump_timing.empty()) {
      std::ofstream out(StagedOutputs::temp(dump_timing));
      out << core->effective_timing().dump(2) << "\n";
      out.close();
      if (!out) {
        StagedOutputs::discard(dump_timing);
        throw std::runtime_error(dump_timing + ": cannot write the timing profile");
      }
      StagedOutputs::commit(dump_timing);
    }
    for (std::size_t k = 0; k < load_specs.size(); ++k)
      do_load(*core, load_specs[k], load_arrays[k]);
    for (const TileSpec& t : tile_loads) do_load_tile(*core, t);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpbsim run: error: %s\n", e.what());
    if (retire_out) StagedOutputs::discard(retire_file);
    if (vcd_writer) StagedOutputs::discard(vcd);
    if (perfetto_writer) StagedOutputs::discard(perfetto);
    return 1;
  }
  // The core delivers retires in time order (end, engine, index), whatever
  // the quantum or the co-simulation's syncs: the file is diffable.
  if (retire_out)
    core->set_retire_sink([&](const sc::RetireRecord& rr) {
      *retire_out << platform::TpbCore::format_retire(rr) << '\n';
    });

  const platform::RunResult r = core->run();
  int rc = r.status == platform::RunStatus::Ok         ? 0
           : r.status == platform::RunStatus::Fault    ? 2
           : r.status == platform::RunStatus::Deadlock ? 3
                                                       : 4;
  if (rc != 0)
    std::fprintf(stderr, "tpbsim run: %s: %s\n", status_name(r.status), r.message.c_str());

  // Outputs are written on every outcome, so a fault leaves complete files;
  // each one independently, staged and renamed, so one failing (a full disk)
  // neither half-writes it nor stops the others.
  std::vector<std::string> failed;
  auto write_one = [&](const std::string& path, const std::function<void(const std::string&)>& w) {
    try {
      w(StagedOutputs::temp(path));
      StagedOutputs::commit(path);
    } catch (const std::exception& e) {
      StagedOutputs::discard(path);
      // The user named PATH, not its temporary: say PATH.
      std::string msg = e.what();
      const std::string tmp = StagedOutputs::temp(path);
      if (tmp != path)
        for (std::size_t at = msg.find(tmp); at != std::string::npos; at = msg.find(tmp, at))
          msg.replace(at, tmp.size(), path);
      std::fprintf(stderr, "tpbsim run: error: %s\n", msg.c_str());
      failed.push_back(path);
    }
  };
  std::vector<trace::TraceFileStats> trace_files;
  auto write_outputs = [&] {
    if (retire_out)
      write_one(retire_file, [&](const std::string&) {
        retire_out->close();
        if (!*retire_out) throw std::runtime_error(retire_file + ": write failed");
      });
    if (rtl) rtl->close_trace();
    if (!cosim_vcd.empty()) write_one(cosim_vcd, [](const std::string&) {});
    // The traces were streamed and finished by the run; commit them.
    if (vcd_writer) {
      write_one(vcd, [&](const std::string&) {
        if (!vcd_writer->error().empty())
          throw std::runtime_error("VCD file " + vcd_writer->error());
      });
      trace_files.push_back({"vcd", vcd, vcd_writer->bytes(), vcd_writer->changes_written()});
    }
    if (!gtkw.empty())
      write_one(gtkw, [&](const std::string& t) {
        trace::write_gtkw(core->recorder().signals(), vcd, t, core->recorder().last_time());
      });
    if (perfetto_writer) {
      write_one(perfetto, [&](const std::string&) {
        if (!perfetto_writer->error().empty())
          throw std::runtime_error("Perfetto trace " + perfetto_writer->error());
      });
      trace_files.push_back(
          {"perfetto", perfetto, perfetto_writer->bytes(), perfetto_writer->events_written()});
    }
    if (!stats_file.empty())
      write_one(stats_file, [&](const std::string& t) {
        trace::RunStats s = core->stats();
        s.program = program_path;
        s.traces = trace_files;
        if (rtl) s.cosim = rtl->stats();
        trace::write_stats(s, t);
      });
    for (MemSpec m : dump_specs) {
      const std::string final_path = m.file;
      write_one(final_path, [&](const std::string& t) {
        m.file = t;
        do_dump(*core, m);
      });
    }
    for (TileSpec ts : tile_dumps) {
      const std::string final_path = ts.file;
      write_one(final_path, [&](const std::string& t) {
        ts.file = t;
        do_dump_tile(*core, ts);
      });
    }
  };
  // On a thread of its own: after sc_start the main thread's stack is one
  // SystemC's coroutines switched away from, and AddressSanitizer misreads
  // an exception thrown there (a write error) as a stack-buffer-overflow.
  std::thread([&] { write_outputs(); }).join();
  if (!failed.empty()) {
    std::string list;
    for (const auto& f : failed) list += (list.empty() ? "" : ", ") + f;
    std::fprintf(stderr, "tpbsim run: error: not written: %s\n", list.c_str());
    if (rc == 0) rc = 1;
  }
  // stdout never says "ok" when the exit code is not 0.
  if (!quiet)
    std::printf("tpbsim run: %s, arch %s, simulated %.3f ns, %llu instructions\n",
                rc == 1 ? "error" : status_name(r.status),
                std::string(isa::arch_name(arch)).c_str(),
                static_cast<double>(r.simulated_ps) / 1000.0,
                static_cast<unsigned long long>(r.instructions));
  if (!quiet && rtl) {
    const trace::CosimStats c = rtl->stats();
    std::printf("tpbsim run: cosim %s at %.0f MHz: %llu words compared, %llu mismatches\n",
                c.dut.c_str(), c.clock_mhz, static_cast<unsigned long long>(c.words_compared),
                static_cast<unsigned long long>(c.mismatches));
  }
  return rc;
}

}  // namespace tpb::cli
