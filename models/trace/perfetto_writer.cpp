#include "models/trace/perfetto_writer.h"

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

  std::vector<std::uint32_t> open_depth(tracks.size(), 0);
  for (const SliceEvent& e : rec.sorted_slices()) {
    const int pid = pid_of[e.track];
    const int tid = static_cast<int>(e.track + 1);
    json ev = {{"pid", pid}, {"tid", tid}, {"ts", to_us(e.t)}};
    switch (e.kind) {
      case SliceKind::Begin:
        ++open_depth[e.track];
        ev["ph"] = "B";
        ev["name"] = e.name;
        if (!e.args.empty()) ev["args"] = parse_args(e.args);
        break;
      case SliceKind::End:
        if (open_depth[e.track] == 0) continue;  // nothing to close
        --open_depth[e.track];
        ev["ph"] = "E";
        break;
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
  for (std::size_t i = 0; i < tracks.size(); ++i)
    for (; open_depth[i] > 0; --open_depth[i])
      emit({{"ph", "E"},
            {"pid", pid_of[i]},
            {"tid", static_cast<int>(i + 1)},
            {"ts", to_us(rec.last_time())},
            {"args", {{"unterminated", true}}}});
  out << "\n],\n\"displayTimeUnit\":\"ns\"}\n";
  out.flush();
  if (!out)
    throw std::runtime_error("Perfetto trace '" + path +
                             "': write failed: " + std::strerror(errno));
}

}  // namespace tpb::trace
