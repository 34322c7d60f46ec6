#include "platform/run/output_set.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "models/isa/input_file.h"
#include "models/race/report_json.h"
#include "models/trace/gtkw_writer.h"
#include "models/trace/stats_writer.h"
#include "platform/cosim/cosim.h"
#include "platform/run/arrays.h"
#include "platform/run/race_check.h"

namespace tpb::run {

OutputSet::OutputSet(const SessionRequest& req) : req_(&req), inputs_(req.inputs) {
  for (const auto& [opt, path] : {std::pair<const char*, const std::string*>{"--vcd", &req.vcd},
                                  {"--perfetto", &req.perfetto},
                                  {"--stats", &req.stats},
                                  {"--retire", &req.retire},
                                  {"--races", &req.races_file},
                                  {"--dump-timing", &req.dump_timing},
                                  {"--cosim-vcd", &req.cosim_vcd}})
    if (!path->empty()) add(opt, *path);
  // --vcd FILE.vcd also writes the GTKWave save file FILE.gtkw (not beside
  // a device or pipe, nor past a file name's 255 bytes).
  if (!req.vcd.empty() && output_is_staged(req.vcd)) {
    gtkw_ = trace::gtkw_path_for(req.vcd);
    if (gtkw_name_fits(gtkw_)) {
      add("--vcd (its GTKWave save file)", gtkw_);
    } else {
      notes_.push_back(fmt::format(
          "--vcd {}: no GTKWave save file (its name, the VCD's + .gtkw, is past 255 bytes)",
          isa::excerpt(req.vcd)));
      gtkw_.clear();
    }
  }
  for (const MemSpec& m : req.dumps) add("--dump " + m.text, m.file);
  for (const TileSpec& t : req.tile_dumps) add("--dump " + t.text, t.file);
}

void OutputSet::add(const std::string& option, const std::string& path) {
  outs_.push_back({option, path, OutputFile()});
}

OutputSet::Output* OutputSet::find(const std::string& path) {
  for (Output& o : outs_)
    if (o.path == path) return &o;
  return nullptr;
}

const std::string& OutputSet::write_path(const std::string& path) const {
  for (const Output& o : outs_)
    if (o.path == path) return o.file.write_path();
  throw std::logic_error("no output " + path);
}

// ------------------------------------------------------------ before the run

void OutputSet::open() {
  std::vector<std::pair<std::string, std::string>> named;
  for (const Output& o : outs_) named.push_back({o.option, o.path});
  if (const std::string why = refused_outputs(named, inputs_); !why.empty()) throw InputError(why);
  open_files();
  open_streams();
}

// Every output opened before the run, so none can fail to open after it.
void OutputSet::open_files() {
  std::vector<std::string> errors;
  for (Output& o : outs_) {
    try {
      o.file = OutputFile(o.path);
    } catch (const OutputError& e) {
      errors.push_back(fmt::format("{} {}", o.option, e.what()));
    }
  }
  if (errors.empty()) return;
  std::string msg = "refused before running, nothing written:";
  for (const auto& b : errors) msg += "\n  " + b;
  throw InputError(msg);
}

// The retire file and the trace writers, which stream to their staged files.
void OutputSet::open_streams() {
  const SessionRequest& req = *req_;
  if (!req.retire.empty()) {
    // A staging file is new and empty: opened for update, not truncated
    // (an ofstream's O_TRUNC has ext4 write back the whole log at its close;
    // trace::open_output).
    const OutputFile& f = find(req.retire)->file;
    retire_ = std::make_unique<std::ofstream>(
        f.write_path(), f.staged() ? std::ios::in | std::ios::out : std::ios::out);
    if (!*retire_) throw InputError(req.retire + ": cannot open for writing");
  }
  try {
    if (!req.vcd.empty())
      vcd_ = std::make_unique<trace::VcdWriter>(write_path(req.vcd), "tpb", req.trace_window);
    if (!req.perfetto.empty())
      perfetto_ =
          std::make_unique<trace::PerfettoWriter>(write_path(req.perfetto), req.trace_window);
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
}

// ------------------------------------------------------------- writing

void OutputSet::write_one(const std::string& option, const std::string& path,
                          const std::function<void(const std::string&)>& writer,
                          SessionReport& rep) {
  OutputFile& f = find(path)->file;
  try {
    writer(f.write_path());
    f.commit();
    rep.files.push_back({option, path});
  } catch (const std::exception& e) {
    f.discard();
    // The user named PATH, not its staging file: say PATH.
    rep.output_errors.push_back({path, f.user_message(e.what())});
  }
}

void OutputSet::write_timing(const nlohmann::json& effective, SessionReport& rep) {
  const std::string& path = req_->dump_timing;
  if (path.empty()) return;
  write_one(
      "--dump-timing", path,
      [&](const std::string& to) {
        std::ofstream f(to, std::ios::binary | std::ios::trunc);
        f << effective.dump(2) << "\n";
        f.close();
        if (!f)
          throw OutputError(
              fmt::format("{}: cannot write the timing profile ({})", path, std::strerror(errno)));
      },
      rep);
}

// The traces were streamed and finished by the run; commit them.
std::vector<trace::TraceFileStats> OutputSet::finish_traces(Session& s, SessionReport& rep) {
  const SessionRequest& req = *req_;
  std::vector<trace::TraceFileStats> files;
  if (vcd_) {
    write_one(
        "--vcd", req.vcd,
        [&](const std::string&) {
          if (!vcd_->error().empty()) throw std::runtime_error("VCD file " + vcd_->error());
        },
        rep);
    files.push_back({"vcd", req.vcd, vcd_->bytes(), vcd_->changes_written()});
  }
  if (!gtkw_.empty())
    write_one(
        "--vcd", gtkw_,
        [&](const std::string& to) {
          const trace::Recorder& r = s.device().recorder();
          trace::write_gtkw(r.signals(), req.vcd, to, r.last_time());
        },
        rep);
  if (perfetto_) {
    write_one(
        "--perfetto", req.perfetto,
        [&](const std::string&) {
          if (!perfetto_->error().empty())
            throw std::runtime_error("Perfetto trace " + perfetto_->error());
        },
        rep);
    files.push_back({"perfetto", req.perfetto, perfetto_->bytes(), perfetto_->events_written()});
  }
  return files;
}

void OutputSet::finish(Session& s, SessionReport& rep) {
  const SessionRequest& req = *req_;
  if (retire_)
    write_one(
        "--retire", req.retire,
        [&](const std::string&) {
          retire_->close();
          if (!*retire_)
            throw std::runtime_error(req.retire + ": write failed (" + std::strerror(errno) + ")");
        },
        rep);
  std::vector<trace::TraceFileStats> traces = finish_traces(s, rep);
  rep.stats = s.run_stats(&rep.core_stats);
  // Device-level fields the per-core stats cannot know.
  if (s.cores() > 1) {
    rep.stats.status = platform::status_name(rep.result.status);
    rep.stats.message = rep.result.message;
    rep.stats.simulated_ps = rep.result.simulated_ps;
    rep.stats.start_ps = rep.result.start_ps;
    rep.stats.wall_seconds = rep.result.wall_seconds;
  }
  rep.stats.program = req.program_name;
  rep.stats.traces = std::move(traces);
  if (s.cosim()) rep.stats.cosim = s.cosim()->stats();
  if (rep.races) {
    rep.stats.races = race::report_json(*rep.races);
    if (!req.races_file.empty())
      write_one(
          "--races", req.races_file, [&](const std::string& to) { write_races(*rep.races, to); },
          rep);
  }
  if (!req.stats.empty())
    write_one(
        "--stats", req.stats, [&](const std::string& to) { trace::write_stats(rep.stats, to); },
        rep);
  for (const MemSpec& m : req.dumps)
    write_one(
        "--dump", m.file, [&](const std::string& to) { dump_npy(s, m, to); }, rep);
  for (const TileSpec& t : req.tile_dumps)
    write_one(
        "--dump", t.file, [&](const std::string& to) { dump_tile_npy(s, t, to); }, rep);
  if (s.cosim()) {
    // The RTL's waves: Verilator wrote them to the staging file; closed here.
    const std::string error = s.cosim()->close_trace();
    if (!req.cosim_vcd.empty())
      write_one(
          "--cosim-vcd", req.cosim_vcd,
          [&](const std::string&) {
            if (!error.empty())
              throw OutputError(
                  fmt::format("{}: cannot write the RTL waves ({})", req.cosim_vcd, error));
          },
          rep);
  }
}

}  // namespace tpb::run
