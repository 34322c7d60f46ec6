// Every output of one run, owned in one place (SPEC §9: --vcd and its
// GTKWave save file, --perfetto, --stats, --retire, --dump-timing,
// --cosim-vcd, every --dump). The list is made once from the request, in
// one order; checked once before anything runs (an output that names an
// input or another output, or that cannot be created, refuses the run with
// nothing written); opened before anything runs (a staging file of its own,
// or the device or FIFO: platform/run/staged_outputs.h); and after the run,
// on every outcome, each one is written by its writer and renamed into
// place on its own, so one failing (a full disk) neither half-writes it nor
// stops the others. A new output is one entry in the list (OutputSet's
// constructor) and its writer (finish).
#pragma once

#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/trace/perfetto_writer.h"
#include "models/trace/vcd_writer.h"
#include "platform/run/session.h"
#include "platform/run/staged_outputs.h"

namespace tpb::run {

class OutputSet {
 public:
  // Lists every output `req` names (and the inputs they must not name);
  // `req` must outlive the set.
  explicit OutputSet(const SessionRequest& req);
  OutputSet(OutputSet&&) = default;
  OutputSet& operator=(OutputSet&&) = default;

  // Checks and opens every output, and the trace writers and the retire
  // file that stream into them as the run goes. InputError ("refused before
  // running, nothing written: ...") naming every output refused.
  void open();
  // For the user: an output not written for a reason that is no error.
  const std::vector<std::string>& notes() const { return notes_; }
  // The file a writer of `path` (one of the outputs) opens: its staging
  // file, or the device or FIFO itself (the co-simulation's VCD is opened
  // by Verilator when the core is built).
  const std::string& write_path(const std::string& path) const;

  // The sinks that stream as the run goes (null: not asked for).
  trace::VcdWriter* vcd() { return vcd_.get(); }
  trace::PerfettoWriter* perfetto() { return perfetto_.get(); }
  std::ostream* retire() { return retire_.get(); }

  // Before the run: --dump-timing, the profile the core runs with. A
  // failure is reported with the others and does not stop the run.
  void write_timing(const nlohmann::json& effective, SessionReport& rep);
  // After the run, on every outcome: every other output written (the
  // traces committed, the stats made), each in `rep`'s files or its
  // output_errors.
  void finish(Session& s, SessionReport& rep);

 private:
  struct Output {
    std::string option, path;
    OutputFile file;
  };
  void add(const std::string& option, const std::string& path);
  Output* find(const std::string& path);
  void write_one(const std::string& option, const std::string& path,
                 const std::function<void(const std::string&)>& writer, SessionReport& rep);
  void open_files();
  void open_streams();
  std::vector<trace::TraceFileStats> finish_traces(Session& s, SessionReport& rep);

  const SessionRequest* req_;
  std::vector<Output> outs_;  // in the order checked and opened
  std::vector<std::pair<std::string, std::string>> inputs_;
  std::string gtkw_;  // --vcd's GTKWave save file ("": none)
  std::vector<std::string> notes_;
  std::unique_ptr<std::ofstream> retire_;
  std::unique_ptr<trace::VcdWriter> vcd_;
  std::unique_ptr<trace::PerfettoWriter> perfetto_;
};

}  // namespace tpb::run
