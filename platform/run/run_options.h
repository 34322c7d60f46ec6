// The options of one run (SPEC §9 `tpbsim run`), as data: one table that the
// CLI's parser, a sweep's cmd.txt reader and every binding use, so an option
// exists in one place and works everywhere in both spellings
// (`--trace-level bundle` and `--trace-level=bundle`).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace tpb::run {

// Bad options, bad input files or an output that cannot be written: exit 1,
// nothing runs. what() is the whole message.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The host could not hold what a run needed (an HBM chunk first touched
// mid-run, under ulimit -v): the run stopped there, its outputs written up to
// the stop (exit 1; Python tpbsim.Error).
class HostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A command line the option parser refuses (unknown option, missing value).
class UsageError : public InputError {
 public:
  using InputError::InputError;
};
// Bad program text: what() is "FILE:LINE:COL: error: MESSAGE", complete.
class LocatedError : public InputError {
 public:
  using InputError::InputError;
};
// An address, partition or tile number outside the core (a row past
// partition 127, bytes past the end of a partition, tile T32).
class RangeError : public InputError {
 public:
  using InputError::InputError;
};

struct RunOptions {
  std::string program;
  // SPEC §15: the programs of cores 1, 2, ... (`tpbsim run --cores N P0 P1
  // ...`), and the core count ("": 1).
  std::vector<std::string> more_programs;
  std::string cores;
  std::string lnc;   // "": 1; "2": logical cores of two physical cores
  std::string arch;  // "" : the program's .arch, else mariana
  std::string timing, dump_timing, mx_emax;
  std::vector<std::string> loads, dumps;  // SPEC §9 specs
  std::string vcd, perfetto, stats, retire;
  std::string trace_engines, trace_window, trace_level = "auto";
  std::string max_sim_time, max_wall_time;
  bool quiet = false;
  bool timing_only = false;
  bool racecheck = false;  // SPEC §14
  std::string races;       // --races FILE: the races as JSON lines
  std::string threads;     // "" : every host core
  bool cosim = false;
  std::string cosim_vcd;
};

// What an option is to a tool that rewrites a command line (a sweep puts
// every output into a point's directory and sets --timing and --stats).
enum class OptionRole {
  Setting,     // a value
  Flag,        // no value
  InputFile,   // a path read
  OutputFile,  // a path written
  LoadSpecs,   // repeatable SPEC=FILE, FILE read
  DumpSpecs,   // repeatable SPEC=FILE, FILE written
};

struct RunOption {
  const char* name;  // long name, without "--"
  char short_name;   // 0: none
  OptionRole role;
  const char* help;
  std::string RunOptions::*text = nullptr;               // Setting, InputFile, OutputFile
  std::vector<std::string> RunOptions::*list = nullptr;  // LoadSpecs, DumpSpecs
  bool RunOptions::*flag = nullptr;                      // Flag
};

// Every option of a run, in --help order.
const std::vector<RunOption>& run_option_table();
const RunOption* find_run_option(const std::string& name);

// The options bound to `o` (for --help and for parsing).
boost::program_options::options_description run_options_description(RunOptions& o);

// Parses `tpbsim run` arguments (PROGRAM and options, either spelling).
// `help` is set by -h/--help. Throws InputError naming the bad argument.
RunOptions parse_run_args(const std::vector<std::string>& args, bool* help = nullptr);
// The arguments that parse back to `o` (PROGRAM first, then "--name value").
std::vector<std::string> to_args(const RunOptions& o);

// `--max-sim-time T`: an integer with a unit ps, ns, us, ms or s (none: ps),
// 1 ps .. 2^62 ps. False with the reason in `why`.
bool parse_sim_time(const std::string& s, std::uint64_t& ps, std::string& why);
// `--max-wall-time S`: seconds (a decimal number), in (0, 1e9].
bool parse_wall_time(const std::string& s, double& seconds, std::string& why);

}  // namespace tpb::run
