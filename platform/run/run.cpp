#include "platform/run/run.h"

#include <memory>
#include <optional>

#include <fmt/format.h>

#include "models/isa/input_file.h"
#include "platform/core/device.h"
#include "platform/run/arrays.h"
#include "platform/run/host_args.h"
#include "platform/run/output_set.h"
#include "platform/run/request.h"

namespace tpb::run {

namespace {

// Everything a run needs, checked before anything runs (every error exit 1).
struct Prepared {
  CoreSpec spec;
  std::optional<platform::Profile> profile;  // spec's, loaded once
  SessionRequest req;
  std::vector<std::unique_ptr<isa::SpooledProgram>> programs;  // program i runs on core i
  unsigned lnc = 1;  // --lnc: physical cores per program (each reads its own copy)
  std::vector<MemSpec> loads;
  std::vector<io::NpyArray> load_arrays;  // one per loads entry
  std::vector<TileSpec> tile_loads;
  std::optional<OutputSet> outputs;  // checked and opened before the core is made
};

// The watchdogs and the host threads.
void parse_limits(const RunOptions& o, SessionRequest& req) {
  for (const auto& [opt, text] :
       {std::pair<const char*, const std::string*>{"--max-sim-time", &o.max_sim_time},
        {"--max-wall-time", &o.max_wall_time}}) {
    if (text->empty()) continue;
    std::string why;
    if (!(std::string(opt) == "--max-sim-time" ? parse_sim_time(*text, req.max_sim_ps, why)
                                               : parse_wall_time(*text, req.max_wall_seconds, why)))
      throw InputError(fmt::format("{} {}", opt, why));
  }
  if (o.threads.empty()) return;
  // Decimal digits; the range is check_threads' (host_args.h), as Python's.
  const std::string& t = o.threads;
  const bool digits = t.size() <= 18 && t.find_first_not_of("0123456789") == std::string::npos;
  req.threads = from_argument("--threads ", [&] {
    return check_threads(digits ? HostInt(std::stoll(t))
                                : HostInt::past(+1, "'" + isa::excerpt(t) + "'"));
  });
}

// --cores N and --lnc L (SPEC §15): a logical core is 1 or 2 physical
// cores, pairing up the device's; one program per (logical) core at most.
void parse_cores(const RunOptions& o, Prepared& p) {
  p.lnc = parse_lnc(o.lnc);
  if (!o.cores.empty()) {
    const std::string& t = o.cores;
    const bool digits =
        !t.empty() && t.size() <= 18 && t.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      throw InputError(fmt::format("--cores '{}' is not a number of cores (1 to {})",
                                   isa::excerpt(t), platform::Device::kMaxCores));
    p.spec.cores = from_argument("--cores ", [&] { return check_cores(std::stoll(t)); });
  }
  check_lnc_pairs(p.lnc, p.spec.cores);
  const std::size_t programs = 1 + o.more_programs.size();
  if (p.lnc > 1 && programs > p.spec.cores / p.lnc)
    throw InputError(fmt::format(
        "{} programs for {} logical cores (--cores {} --lnc {}): one program per logical core at "
        "most",
        programs, p.spec.cores / p.lnc, p.spec.cores, p.lnc));
  if (programs > p.spec.cores)
    throw InputError(fmt::format(
        "{} programs for a device of {} core{} (--cores {}): one program per core at most",
        programs, p.spec.cores, p.spec.cores == 1 ? "" : "s", p.spec.cores));
}

// The programs' .arch lines agree (those without one take the others').
void check_one_arch(const std::vector<std::string>& files,
                    const std::vector<std::unique_ptr<isa::SpooledProgram>>& programs,
                    unsigned lnc) {
  std::optional<isa::Arch> first;
  std::size_t first_at = 0;
  for (std::size_t i = 0; i < programs.size(); i += lnc) {
    const std::optional<isa::Arch> a = programs[i]->arch();
    if (!a) continue;
    if (!first) {
      first = a;
      first_at = i / lnc;
    } else if (*a != *first) {
      throw InputError(fmt::format(
          "{} says .arch {} and {} .arch {}: the cores of a device are of one generation "
          "(--arch runs every program on one)",
          isa::excerpt(files[i / lnc]), isa::arch_name(*a), isa::excerpt(files[first_at]),
          isa::arch_name(*first)));
    }
  }
}

// The programs (each read once into per-engine spools: bounded memory, any
// length), the generation and the options of the core and the traces.
void read_program(const RunOptions& o, Prepared& p, CommandOutcome& out) {
  std::vector<std::string> files{o.program};
  files.insert(files.end(), o.more_programs.begin(), o.more_programs.end());
  for (const std::string& f : files)
    for (unsigned copy = 0; copy < p.lnc; ++copy) {  // a copy per physical core
      try {
        p.programs.push_back(load_program_file(f, o.racecheck));
      } catch (const LocatedError&) {
        out.error_is_located = true;
        throw;
      }
    }
  isa::Arch arch = p.programs[0]->arch().value_or(isa::Arch::Mariana);
  if (!o.arch.empty()) {
    arch = parse_arch_option(o.arch);
  } else {
    // A device's cores are of one generation: programs that say different
    // ones are refused (--arch runs them all on one, as it overrides one).
    check_one_arch(files, p.programs, p.lnc);
    for (const auto& prog : p.programs)
      if (prog->arch()) arch = *prog->arch();
  }
  p.spec.arch = arch;
  out.arch = std::string(isa::arch_name(arch));
  if (!o.mx_emax.empty()) p.spec.mx_emax = parse_mx_emax(o.mx_emax);
  if (!o.trace_engines.empty()) p.req.trace_engines = parse_trace_engines(o.trace_engines);
  if (!o.trace_window.empty()) p.req.trace_window = parse_trace_window(o.trace_window);
  p.req.trace_level = parse_trace_level(o.trace_level);
  p.spec.timing_file = o.timing;
  p.spec.cosim = o.cosim;
}

// The profile (loaded once, for the checks here and the core), --load and
// --dump: parsed, the loads read, every shape checked against the
// partitions (and the device's HBM) of the configuration.
void read_memory_specs(const RunOptions& o, Prepared& p) {
  p.profile.emplace(load_profile(p.spec));
  platform::CoreConfig cfg;
  try {
    cfg = platform::Device::validate(p.spec.cores, *p.profile).config();
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  try {
    for (const auto& s : o.loads)
      if (is_tile_spec(s))
        p.tile_loads.push_back(parse_tile_spec(s, false));
      else
        p.loads.push_back(parse_mem_spec(s, false));
    for (const auto& s : o.dumps)
      if (is_tile_spec(s))
        p.req.tile_dumps.push_back(parse_tile_spec(s, true));
      else
        p.req.dumps.push_back(parse_mem_spec(s, true));
    for (const MemSpec& m : p.loads) check_core(m.text, m.core, p.spec.cores);
    for (const MemSpec& m : p.req.dumps) check_core(m.text, m.core, p.spec.cores);
    for (const TileSpec& t : p.tile_loads) check_core(t.text, t.core, p.spec.cores);
    for (const TileSpec& t : p.req.tile_dumps) check_core(t.text, t.core, p.spec.cores);
    for (const MemSpec& m : p.loads) p.load_arrays.push_back(read_load(m, cfg));
    for (const MemSpec& m : p.req.dumps)
      if (m.place.hbm)
        check_hbm_fits(m, dump_bytes(m), cfg.hbm_capacity());
      else
        check_dump_fits(m, cfg.partition_bytes(m.place.region));
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
}

// Every output against the inputs and the others, opened before anything
// runs; the RTL's waves go to their staging file from the core's first run.
void open_outputs(const RunOptions& o, Prepared& p) {
  SessionRequest& req = p.req;
  req.vcd = o.vcd;
  req.perfetto = o.perfetto;
  req.stats = o.stats;
  req.retire = o.retire;
  req.dump_timing = o.dump_timing;
  req.cosim_vcd = o.cosim_vcd;
  req.program_name = o.program;
  for (const std::string& more : o.more_programs) req.program_name += " " + more;
  req.inputs = {{"PROGRAM", o.program}};
  for (const std::string& more : o.more_programs) req.inputs.push_back({"PROGRAM", more});
  if (!o.timing.empty()) req.inputs.push_back({"--timing", o.timing});
  for (const MemSpec& m : p.loads) req.inputs.push_back({"--load " + m.text, m.file});
  for (const TileSpec& t : p.tile_loads) req.inputs.push_back({"--load " + t.text, t.file});
  p.outputs.emplace(req);
  p.outputs->open();
  if (!o.cosim_vcd.empty()) p.spec.cosim_vcd = p.outputs->write_path(o.cosim_vcd);
}

void prepare(const RunOptions& o, Prepared& p, CommandOutcome& out) {
  parse_limits(o, p.req);
  p.req.timing_only = o.timing_only;
  p.req.racecheck = o.racecheck;
  p.req.races_file = o.races;
  check_run_modes(o.cosim, o.timing_only, !o.cosim_vcd.empty());
  check_races_file(p.req, "--races FILE", "--racecheck");
  parse_cores(o, p);
  read_program(o, p, out);
  read_memory_specs(o, p);
  open_outputs(o, p);
}

}  // namespace

CommandOutcome run_once(const RunOptions& o) {
  CommandOutcome out;
  Prepared p;
  try {
    prepare(o, p, out);
  } catch (const InputError& e) {
    out.errors.push_back(e.what());
    return out;
  }
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(p.spec, std::move(*p.profile));
    for (unsigned i = 0; i < p.programs.size(); ++i) {
      session->select(i);
      session->load(*p.programs[i]);
      // --lnc 2: the physical core's place in its logical core (SPEC §15).
      if (p.lnc > 1) session->set_core_id(i % p.lnc);
    }
    session->select(0);
    for (std::size_t k = 0; k < p.loads.size(); ++k)
      load_npy(*session, p.loads[k], p.load_arrays[k]);
    for (const TileSpec& t : p.tile_loads) load_tile_npy(*session, t);
  } catch (const std::exception& e) {
    out.errors.push_back(e.what());
    return out;
  }
  try {
    out.report = session->run(p.req, *p.outputs);
  } catch (const HostError& e) {
    out.errors.push_back(e.what());
    return out;
  } catch (const InputError& e) {
    out.errors.push_back(e.what());
    return out;
  }
  out.ran = true;
  out.notes = out.report.notes;
  out.exit_code = exit_code(out.report);
  return out;
}

}  // namespace tpb::run
