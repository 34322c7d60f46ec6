#include "models/trace/perfetto_writer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpb::trace {

namespace {

using nlohmann::json;

double to_us(Picos t) { return static_cast<double>(t) / 1e6; }

json parse_args(const std::string& text) {
  if (text.empty()) return json::object();
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) return j;
  return json{{"text", text}};
}

// nlohmann writes NaN / inf as null, which trace viewers reject.
json counter_number(double v) {
  if (std::isfinite(v)) return v;
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

}  // namespace

void write_perfetto(const Recorder& rec, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw std::runtime_error("Perfetto trace '" + path +
                             "': cannot open for writing: " + std::strerror(errno));

  const std::vector<Track>& tracks = rec.tracks();
  std::vector<std::string> processes;
  std::vector<int> pid_of(tracks.size());
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    std::size_t p = 0;
    while (p < processes.size() && processes[p] != tracks[i].process) ++p;
    if (p == processes.size()) processes.push_back(tracks[i].process);
    pid_of[i] = static_cast<int>(p + 1);
  }

  bool first = true;
  auto emit = [&](const json& ev) {
    out << (first ? "\n" : ",\n") << ev.dump(-1, ' ', false, json::error_handler_t::replace);
    first = false;
  };
  out << "{\"traceEvents\":[";
  for (std::size_t p = 0; p < processes.size(); ++p) {
    const int pid = static_cast<int>(p + 1);
    emit({{"ph", "M"},
          {"name", "process_name"},
          {"pid", pid},
          {"tid", 0},
          {"args", {{"name", processes[p]}}}});
    emit({{"ph", "M"},
          {"name", "process_sort_index"},
          {"pid", pid},
          {"tid", 0},
          {"args", {{"sort_index", pid}}}});
  }
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    const int tid = static_cast<int>(i + 1);
    emit({{"ph", "M"},
          {"name", "thread_name"},
          {"pid", pid_of[i]},
          {"tid", tid},
          {"args", {{"name", tracks[i].thread}}}});
    emit({{"ph", "M"},
          {"name", "thread_sort_index"},
          {"pid", pid_of[i]},
          {"tid", tid},
          {"args", {{"sort_index", tid}}}});
  }

  // Slices are complete events ("X", with "dur"): a Begin is paired with the
  // End that closes it on its track (a stack per track), and a slice still
  // open at the end of the run ends at Recorder::last_time() with
  // args.unterminated. Complete events need no B/E matching by name across a
  // file, which Chrome DevTools' trace engine (one B/E stack for all threads)
  // and speedscope (E matched by name) do not manage for concurrent engines.
  const std::vector<SliceEvent> slices = rec.sorted_slices();
  std::vector<Picos> end_of(slices.size(), 0);
  std::vector<char> closed(slices.size(), 0);
  std::vector<std::vector<std::size_t>> open(tracks.size());
  for (std::size_t k = 0; k < slices.size(); ++k) {
    const SliceEvent& e = slices[k];
    if (e.kind == SliceKind::Begin) open[e.track].push_back(k);
    if (e.kind == SliceKind::End && !open[e.track].empty()) {  // else nothing to close
      end_of[open[e.track].back()] = e.t;
      closed[open[e.track].back()] = 1;
      open[e.track].pop_back();
    }
  }
  for (std::size_t k = 0; k < slices.size(); ++k) {
    const SliceEvent& e = slices[k];
    const int pid = pid_of[e.track];
    const int tid = static_cast<int>(e.track + 1);
    json ev = {{"pid", pid}, {"tid", tid}, {"ts", to_us(e.t)}};
    switch (e.kind) {
      case SliceKind::Begin: {
        const Picos end = closed[k] ? end_of[k] : std::max(e.t, rec.last_time());
        ev["ph"] = "X";
        ev["name"] = e.name;
        ev["dur"] = to_us(end - e.t);
        ev["args"] = e.args.empty() ? json::object() : parse_args(e.args);
        if (!closed[k]) ev["args"]["unterminated"] = true;
        if (ev["args"].empty()) ev.erase("args");
        break;
      }
      case SliceKind::End:
        continue;
      case SliceKind::Instant:
        ev["ph"] = "i";
        ev["s"] = "t";
        ev["name"] = e.name;
        if (!e.args.empty()) ev["args"] = parse_args(e.args);
        break;
      case SliceKind::Counter:
        ev["ph"] = "C";
        ev["name"] = e.name;
        ev["args"] = {{e.name, counter_number(e.counter_value)}};
        break;
    }
    emit(ev);
  }
  out << "\n],\n\"displayTimeUnit\":\"ns\"}\n";
  out.flush();
  if (!out)
    throw std::runtime_error("Perfetto trace '" + path +
                             "': write failed: " + std::strerror(errno));
}

}  // namespace tpb::trace
