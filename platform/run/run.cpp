#include "platform/run/run.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "models/isa/input_file.h"
#include "models/trace/gtkw_writer.h"
#include "platform/cosim/cosim.h"
#include "platform/run/host_args.h"
#include "platform/run/request.h"
#include "platform/run/staged_outputs.h"

namespace tpb::run {

namespace {

// Everything a run needs, checked before anything runs (every error exit 1).
struct Prepared {
  CoreSpec spec;
  RunRequest req;
  std::unique_ptr<isa::SpooledProgram> program;
  std::vector<MemSpec> loads;
  std::vector<io::NpyArray> load_arrays;  // one per loads entry
  std::vector<TileSpec> tile_loads;
  std::string dump_timing, cosim_vcd;
  // Opened before anything runs, written after the core is made / the run.
  OutputFile dump_timing_file, cosim_vcd_file;
};

void prepare(const RunOptions& o, Prepared& p, RunOutcome& out) {
  RunRequest& req = p.req;
  for (const auto& [opt, text] :
       {std::pair<const char*, const std::string*>{"--max-sim-time", &o.max_sim_time},
        {"--max-wall-time", &o.max_wall_time}}) {
    if (text->empty()) continue;
    std::string why;
    if (!(std::string(opt) == "--max-sim-time" ? parse_sim_time(*text, req.max_sim_ps, why)
                                               : parse_wall_time(*text, req.max_wall_seconds, why)))
      throw InputError(fmt::format("{} {}", opt, why));
  }
  if (!o.threads.empty()) {
    // Decimal digits; the range is check_threads' (host_args.h), as Python's.
    const std::string& t = o.threads;
    const bool digits = t.size() <= 18 && t.find_first_not_of("0123456789") == std::string::npos;
    try {
      req.threads = check_threads(digits ? HostInt(std::stoll(t))
                                         : HostInt::past(+1, "'" + isa::excerpt(t) + "'"));
    } catch (const InputError& e) {
      throw InputError(std::string("--threads ") + e.what());
    }
  }
  req.timing_only = o.timing_only;
  if (o.timing_only && o.cosim)
    throw InputError("--timing-only computes no values: it cannot co-simulate (--cosim)");
  if (!o.cosim_vcd.empty() && !o.cosim) throw InputError("--cosim-vcd needs --cosim");
  if (o.cosim && !cosim::any_dut_linked())
    throw InputError(
        "--cosim: this tpbsim has no RTL linked (built without Verilator; see docs/COSIM.md)");

  // Program, generation, profile. Read once into per-engine spools (bounded
  // memory, any length).
  try {
    p.program = load_program_file(o.program);
  } catch (const LocatedError&) {
    out.error_is_located = true;
    throw;
  }
  isa::Arch arch = p.program->arch().value_or(isa::Arch::Mariana);
  if (!o.arch.empty()) arch = parse_arch_option(o.arch);
  p.spec.arch = arch;
  out.arch = std::string(isa::arch_name(arch));
  if (!o.mx_emax.empty()) p.spec.mx_emax = parse_mx_emax(o.mx_emax);
  if (!o.trace_engines.empty()) req.trace_engines = parse_trace_engines(o.trace_engines);
  if (!o.trace_window.empty()) req.trace_window = parse_trace_window(o.trace_window);
  req.trace_level = parse_trace_level(o.trace_level);

  p.spec.timing_file = o.timing;
  const platform::CoreConfig cfg = core_config(p.spec);
  try {
    for (const auto& s : o.loads)
      if (is_tile_spec(s))
        p.tile_loads.push_back(parse_tile_spec(s, false));
      else
        p.loads.push_back(parse_mem_spec(s, false));
    for (const auto& s : o.dumps)
      if (is_tile_spec(s))
        req.tile_dumps.push_back(parse_tile_spec(s, true));
      else
        req.dumps.push_back(parse_mem_spec(s, true));
    // Shapes against the partitions, before anything runs.
    for (const MemSpec& m : p.loads) p.load_arrays.push_back(read_load(m, cfg));
    for (const MemSpec& m : req.dumps)
      if (m.hbm)
        check_hbm_fits(m, dump_bytes(m), cfg.timing.hbm.bytes);
      else
        check_dump_fits(m, m.region == isa::Region::Sbuf ? cfg.timing.sbuf_bytes_per_partition
                                                         : cfg.timing.psum_bytes_per_partition);
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }

  req.vcd = o.vcd;
  req.perfetto = o.perfetto;
  req.stats = o.stats;
  req.retire = o.retire;
  req.program_name = o.program;
  p.dump_timing = o.dump_timing;
  p.cosim_vcd = o.cosim_vcd;
  p.spec.cosim = o.cosim;

  // Every output against the inputs and the others, before anything runs.
  StagedOutputs outputs;
  for (const auto& [opt, path] : {std::pair<const char*, const std::string*>{"--vcd", &o.vcd},
                                  {"--perfetto", &o.perfetto},
                                  {"--stats", &o.stats},
                                  {"--retire", &o.retire},
                                  {"--dump-timing", &o.dump_timing},
                                  {"--cosim-vcd", &o.cosim_vcd}})
    if (!path->empty()) outputs.add(opt, *path);
  if (!o.vcd.empty() && StagedOutputs::staged(o.vcd) && gtkw_name_fits(trace::gtkw_path_for(o.vcd)))
    outputs.add("--vcd (its GTKWave save file)", trace::gtkw_path_for(o.vcd));
  for (const MemSpec& m : req.dumps) outputs.add("--dump " + m.text, m.file);
  for (const TileSpec& t : req.tile_dumps) outputs.add("--dump " + t.text, t.file);
  req.inputs = {{"PROGRAM", o.program}};
  if (!o.timing.empty()) req.inputs.push_back({"--timing", o.timing});
  for (const MemSpec& m : p.loads) req.inputs.push_back({"--load " + m.text, m.file});
  for (const TileSpec& t : p.tile_loads) req.inputs.push_back({"--load " + t.text, t.file});
  if (const std::string why = outputs.check(req.inputs); !why.empty()) throw InputError(why);
  try {
    if (!o.dump_timing.empty()) p.dump_timing_file = OutputFile(o.dump_timing);
    if (!o.cosim_vcd.empty()) {
      p.cosim_vcd_file = OutputFile(o.cosim_vcd);
      p.spec.cosim_vcd = p.cosim_vcd_file.write_path();
    }
  } catch (const OutputError& e) {
    throw InputError(std::string("refused before running, nothing written:\n  ") + e.what());
  }
}

}  // namespace

RunOutcome run_once(const RunOptions& o) {
  RunOutcome out;
  Prepared p;
  try {
    prepare(o, p, out);
  } catch (const InputError& e) {
    out.errors.push_back(e.what());
    return out;
  }
  std::unique_ptr<Session> session;
  bool dump_timing_written = false;
  std::string dump_timing_error;
  try {
    session = std::make_unique<Session>(p.spec);
    session->load(*p.program);
    // --dump-timing, written before the run; a write error is reported
    // with the other outputs' and does not stop the run.
    if (p.dump_timing_file.is_open()) {
      try {
        std::ofstream f(p.dump_timing_file.write_path(), std::ios::binary | std::ios::trunc);
        f << session->core().effective_timing().dump(2) << "\n";
        f.close();
        if (!f)
          throw OutputError(fmt::format("{}: cannot write the timing profile ({})", p.dump_timing,
                                        std::strerror(errno)));
        p.dump_timing_file.commit();
        dump_timing_written = true;
      } catch (const std::exception& e) {
        p.dump_timing_file.discard();
        dump_timing_error = p.dump_timing_file.user_message(e.what());
      }
    }
    for (std::size_t k = 0; k < p.loads.size(); ++k)
      load_npy(*session, p.loads[k], p.load_arrays[k]);
    for (const TileSpec& t : p.tile_loads) load_tile_npy(*session, t);
  } catch (const std::exception& e) {
    out.errors.push_back(e.what());
    return out;
  }

  try {
    out.report = session->run(p.req);
  } catch (const InputError& e) {
    out.errors.push_back(e.what());
    return out;
  }
  out.ran = true;
  out.notes = out.report.notes;
  if (dump_timing_written)
    out.report.files.insert(out.report.files.begin(), {"--dump-timing", p.dump_timing});
  if (!dump_timing_error.empty())
    out.report.output_errors.insert(out.report.output_errors.begin(),
                                    {p.dump_timing, dump_timing_error});
  if (cosim::Cosim* rtl = session->cosim()) {
    const std::string trace_error = rtl->close_trace();
    if (p.cosim_vcd_file.is_open()) {
      try {
        if (!trace_error.empty())
          throw OutputError(
              fmt::format("{}: cannot write the RTL waves ({})", p.cosim_vcd, trace_error));
        p.cosim_vcd_file.commit();
        out.report.files.push_back({"--cosim-vcd", p.cosim_vcd});
      } catch (const std::exception& e) {
        p.cosim_vcd_file.discard();
        out.report.output_errors.push_back({p.cosim_vcd, p.cosim_vcd_file.user_message(e.what())});
      }
    }
  }
  out.exit_code = exit_code(out.report.result.status);
  if (!out.report.output_errors.empty() && out.exit_code == 0) out.exit_code = 1;
  return out;
}

}  // namespace tpb::run
