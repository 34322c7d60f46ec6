#include "platform/run/run_options.h"

#include <fmt/format.h>

namespace tpb::run {

namespace po = boost::program_options;

const std::vector<RunOption>& run_option_table() {
  using R = OptionRole;
  static const std::vector<RunOption> table = {
      {"arch", 0, R::Setting, "sunda|cayman|mariana|maverick (overrides the program's .arch)",
       &RunOptions::arch},
      {"cores", 0, R::Setting,
       "N: a device of N cores sharing one HBM (SPEC §15): PROGRAM i runs on core i (fewer "
       "programs leave the rest idle); --load/--dump coreK:sbuf:... name a core (none: core 0), "
       "hbm: is the device's",
       &RunOptions::cores},
      {"lnc", 0, R::Setting,
       "1|2: logical cores of 2 physical cores (as NKI's LNC=2): PROGRAM i runs on cores 2i and "
       "2i+1, each with its core_id (0, 1) in register r31 of every engine",
       &RunOptions::lnc},
      {"timing", 0, R::InputFile, "timing profile JSON merged over the defaults",
       &RunOptions::timing},
      {"dump-timing", 0, R::OutputFile, "write the effective timing profile (JSON)",
       &RunOptions::dump_timing},
      {"mx-emax", 0, R::Setting, "ocp|neuron-alt (QuantizeMX emax offsets)", &RunOptions::mx_emax},
      {"load", 0, R::LoadSpecs,
       "sbuf|psum:PARTITION:OFFSET=FILE.npy (row r to partition PARTITION + r), "
       "hbm:OFFSET=FILE.npy (the array's bytes from HBM byte OFFSET), or tile:N[:COL]=FILE.npy "
       "(FP32 2-D)",
       nullptr, &RunOptions::loads},
      {"dump", 0, R::DumpSpecs,
       "sbuf|psum:PARTITION:OFFSET:ROWSxCOLS:DTYPE=FILE.npy, hbm:OFFSET:ROWSxCOLS:DTYPE=FILE.npy, "
       "or tile:N=FILE.npy (DTYPE u8 u16 u32 i8 f16 f32 bf16)",
       nullptr, &RunOptions::dumps},
      {"vcd", 0, R::OutputFile, "write a VCD waveform", &RunOptions::vcd},
      {"perfetto", 0, R::OutputFile, "write a Chrome trace-event JSON", &RunOptions::perfetto},
      {"stats", 0, R::OutputFile, "write run statistics (JSON)", &RunOptions::stats},
      {"retire", 0, R::OutputFile, "write one line per retired instruction", &RunOptions::retire},
      {"trace-engines", 0, R::Setting,
       "ENGINE[,ENGINE...]: trace only these engines and DMA queues (pool dve pe sfu "
       "dma0..dma15; default all)",
       &RunOptions::trace_engines},
      {"trace-window", 0, R::Setting,
       "T0:T1: write only trace events in [T0, T1] (times like 1500, 1500ps, 2ns, 35us, 1ms; "
       "either end may be empty)",
       &RunOptions::trace_window},
      {"trace-level", 0, R::Setting,
       "instr|bundle|auto: instruction slices only, or firmware bundles and the pc too; auto "
       "(default): bundle up to 16384 instructions, instr above",
       &RunOptions::trace_level},
      {"max-sim-time", 0, R::Setting,
       "watchdog: stop at this simulated time, an integer with a unit ps ns us ms s "
       "(none: ps); exit 4",
       &RunOptions::max_sim_time},
      {"max-wall-time", 0, R::Setting,
       "watchdog: stop after this many seconds of host time; exit 4", &RunOptions::max_wall_time},
      {"quiet", 'q', R::Flag, "print nothing on success", nullptr, nullptr, &RunOptions::quiet},
      {"timing-only", 0, R::Flag,
       "compute no values and move no bytes: the same cycles, retires, stats and traces as the "
       "full run, much faster; memory keeps what it held (SPEC §13)",
       nullptr, nullptr, &RunOptions::timing_only},
      {"racecheck", 0, R::Flag,
       "check every access of every instruction and DMA transfer for races (accesses to the "
       "same bytes, one a write, that no semaphore or program order orders); the run completes "
       "and exits 5 when it finds one (docs/CONVENTIONS.md \"Race check\")",
       nullptr, nullptr, &RunOptions::racecheck},
      {"races", 0, R::OutputFile, "with --racecheck: write the races found, one JSON object a line",
       &RunOptions::races},
      {"threads", 0, R::Setting,
       "N: split an instruction's arithmetic over N host threads (default: every core); the "
       "outputs are the same for any N",
       &RunOptions::threads},
      {"cosim", 0, R::Flag,
       "TensorDequantize in the Verilated RTL, every word checked by the model (docs/COSIM.md)",
       nullptr, nullptr, &RunOptions::cosim},
      {"cosim-vcd", 0, R::OutputFile, "with --cosim: write the RTL's waves (VCD)",
       &RunOptions::cosim_vcd},
  };
  return table;
}

const RunOption* find_run_option(const std::string& name) {
  for (const RunOption& o : run_option_table())
    if (name == o.name) return &o;
  return nullptr;
}

po::options_description run_options_description(RunOptions& o) {
  po::options_description d("tpbsim run options");
  d.add_options()("help,h", "show this help");
  for (const RunOption& opt : run_option_table()) {
    const std::string names =
        opt.short_name ? fmt::format("{},{}", opt.name, opt.short_name) : opt.name;
    switch (opt.role) {
      case OptionRole::Flag:
        d.add_options()(names.c_str(), po::bool_switch(&(o.*opt.flag)), opt.help);
        break;
      case OptionRole::LoadSpecs:
      case OptionRole::DumpSpecs:
        d.add_options()(names.c_str(), po::value(&(o.*opt.list))->composing(), opt.help);
        break;
      default:
        d.add_options()(names.c_str(), po::value(&(o.*opt.text)), opt.help);
        break;
    }
  }
  return d;
}

RunOptions parse_run_args(const std::vector<std::string>& args, bool* help) {
  RunOptions o;
  po::options_description all = run_options_description(o);
  po::options_description hidden;
  hidden.add_options()("program", po::value(&o.program));
  hidden.add_options()("more-programs", po::value(&o.more_programs)->composing());
  all.add(hidden);
  po::positional_options_description pos;
  pos.add("program", 1);
  pos.add("more-programs", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  if (help) *help = vm.count("help") > 0;
  // An option given an empty value is an error, not an option ignored
  // (`--cores ""` ran the default device).
  for (const RunOption& opt : run_option_table()) {
    if (!opt.text || !vm.count(opt.name) || !(o.*opt.text).empty()) continue;
    if (opt.role == OptionRole::InputFile || opt.role == OptionRole::OutputFile)
      throw InputError(fmt::format("--{}: empty path", opt.name));
    if (opt.role == OptionRole::Setting)
      throw InputError(
          fmt::format("--{} '': an empty value (leave the option out for its default)", opt.name));
  }
  return o;
}

std::vector<std::string> to_args(const RunOptions& o) {
  const RunOptions defaults;
  std::vector<std::string> a;
  // "--name value" (a value that starts with '-' as "--name=value", which no
  // parser takes for an option).
  auto put = [&a](const char* name, const std::string& v) {
    if (!v.empty() && v[0] == '-') {
      a.push_back(fmt::format("--{}={}", name, v));
    } else {
      a.push_back(fmt::format("--{}", name));
      a.push_back(v);
    }
  };
  if (!o.program.empty()) a.push_back(o.program);
  for (const std::string& p : o.more_programs) a.push_back(p);
  for (const RunOption& opt : run_option_table()) {
    switch (opt.role) {
      case OptionRole::Flag:
        if (o.*opt.flag) a.push_back(fmt::format("--{}", opt.name));
        break;
      case OptionRole::LoadSpecs:
      case OptionRole::DumpSpecs:
        for (const std::string& v : o.*opt.list) put(opt.name, v);
        break;
      default:
        if (o.*opt.text != defaults.*opt.text) put(opt.name, o.*opt.text);
        break;
    }
  }
  return a;
}

}  // namespace tpb::run
