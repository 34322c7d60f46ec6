#include "models/trace/perfetto_writer.h"

#include <algorithm>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace tpb::trace {

namespace {

// A JSON string literal (RFC 8259 escapes).
void append_json_string(TextBuffer& out, std::string_view s) {
  // Most names need no escape: one append.
  if (std::all_of(s.begin(), s.end(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return c >= 0x20 && c != '"' && c != '\\';
      })) {
    out.push_back('"');
    out.append(s.data(), s.size());
    out.push_back('"');
    return;
  }
  out.push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20)
          fmt::format_to(out.inserter(), "\\u{:04x}", c);
        else
          out.push_back(ch);
    }
  }
  out.push_back('"');
}

// Microseconds from picoseconds, exactly, with six decimals ("12.003571"),
// built in place at the buffer's end: two per slice.
void append_us(TextBuffer& out, Picos t) {
  char* const tmp = out.tail(32);
  char* p = write_decimal(tmp, t / 1000000);
  *p++ = '.';
  const auto f = static_cast<std::uint32_t>(t % 1000000);
  std::memcpy(p, detail::kDigitPairs.d + 2 * (f / 10000), 2);
  std::memcpy(p + 2, detail::kDigitPairs.d + 2 * (f / 100 % 100), 2);
  std::memcpy(p + 4, detail::kDigitPairs.d + 2 * (f % 100), 2);
  p += 6;
  out.commit(static_cast<std::size_t>(p - tmp));
}

// An event's start, `,\n{"ph":"P","pid":N,"tid":N,"ts":`, written by hand
// (a formatting library's literal pieces are a call each): every event.
void append_head(TextBuffer& out, char ph, int pid, std::uint32_t tid) {
  static constexpr char kPh[] = ",\n{\"ph\":\"";
  static constexpr char kPid[] = "\",\"pid\":";
  static constexpr char kTid[] = ",\"tid\":";
  static constexpr char kTs[] = ",\"ts\":";
  char* const tmp = out.tail(64);  // 34 characters and numbers of 11 and 10 digits at most
  char* p = tmp;
  std::memcpy(p, kPh, sizeof kPh - 1);
  p += sizeof kPh - 1;
  *p++ = ph;
  std::memcpy(p, kPid, sizeof kPid - 1);
  p += sizeof kPid - 1;
  p = write_decimal(p, static_cast<std::uint32_t>(pid));  // pids count from 1
  std::memcpy(p, kTid, sizeof kTid - 1);
  p += sizeof kTid - 1;
  p = write_decimal(p, tid);
  std::memcpy(p, kTs, sizeof kTs - 1);
  p += sizeof kTs - 1;
  out.commit(static_cast<std::size_t>(p - tmp));
}

// Trace viewers reject NaN / inf numbers: those become strings.
void append_number(TextBuffer& out, double v) {
  if (std::isfinite(v))
    fmt::format_to(out.inserter(), "{}", v);
  else
    out += std::isnan(v) ? "\"nan\"" : v > 0 ? "\"inf\"" : "\"-inf\"";
}

// args: a JSON object as the recorder's callers build it; other text is
// kept as {"text": "..."}.
void append_args(TextBuffer& out, std::string_view args) {
  if (args.empty()) return;
  out += ",\"args\":";
  if (args.front() == '{') {
    out.append(args.data(), args.size());
  } else {
    out += "{\"text\":";
    append_json_string(out, args);
    out += '}';
  }
}

}  // namespace

PerfettoWriter::PerfettoWriter(std::string path, TraceWindow window)
    : window_(window), out_(std::move(path), "Perfetto trace"), buf_(out_.buf()) {}

void PerfettoWriter::write_track_meta(const std::vector<Track>& tracks, std::size_t first_id,
                                      bool& first) {
  auto meta = [&](int pid, int tid, const char* what, const char* key, const std::string* name,
                  std::uint64_t index) {
    buf_ += first ? "\n" : ",\n";
    first = false;
    fmt::format_to(buf_.inserter(), R"({{"ph":"M","name":"{}","pid":{},"tid":{},"args":{{"{}":)",
                   what, pid, tid, key);
    if (name)
      append_json_string(buf_, *name);
    else
      fmt::format_to(buf_.inserter(), "{}", index);
    buf_ += "}}";
  };
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    if (tracks[i].hidden) continue;
    std::size_t p = 0;
    while (p < processes_.size() && processes_[p] != tracks[i].process) ++p;
    if (p == processes_.size()) {
      processes_.push_back(tracks[i].process);
      const int pid = static_cast<int>(p + 1);
      meta(pid, 0, "process_name", "name", &processes_[p], 0);
      meta(pid, 0, "process_sort_index", "sort_index", nullptr, static_cast<std::uint64_t>(pid));
    }
    pid_of_[first_id + i] = static_cast<int>(p + 1);
  }
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    if (tracks[i].hidden) continue;
    const int tid = static_cast<int>(first_id + i + 1);
    meta(pid_of_[first_id + i], tid, "thread_name", "name", &tracks[i].thread, 0);
    meta(pid_of_[first_id + i], tid, "thread_sort_index", "sort_index", nullptr,
         tracks[i].sort_index != 0 ? tracks[i].sort_index : static_cast<std::uint64_t>(tid));
  }
}

void PerfettoWriter::start(const std::vector<Track>& tracks) {
  processes_.clear();
  pid_of_.assign(tracks.size(), 0);
  tracks_.clear();
  tracks_.resize(tracks.size());
  buf_ += "{\"traceEvents\":[";
  bool first = true;
  write_track_meta(tracks, 0, first);
  // Every event line starts with ",\n": the metadata always has a line (or
  // the array is empty, handled by the lead-in below).
  if (first) buf_ += "\n{\"ph\":\"M\",\"name\":\"trace\",\"pid\":0,\"tid\":0,\"args\":{}}";
}

void PerfettoWriter::add_tracks(const std::vector<Track>& tracks) {
  const std::size_t first_id = tracks_.size();
  pid_of_.resize(first_id + tracks.size(), 0);
  tracks_.resize(first_id + tracks.size());
  bool first = false;
  write_track_meta(tracks, first_id, first);
}

std::uint32_t PerfettoWriter::name_index(std::uint32_t id, std::string_view name) {
  if (id < by_id_.size() && by_id_[id] != UINT32_MAX && names_[by_id_[id]].raw == name)
    return by_id_[id];
  auto [it, added] = by_text_.try_emplace(std::string(name), names_.size());
  if (added) {
    Name n{std::string(name), {}};
    TextBuffer q;
    append_json_string(q, name);
    n.quoted.assign(q.data(), q.size());
    names_.push_back(std::move(n));
  }
  if (id != UINT32_MAX) {
    if (id >= by_id_.size()) by_id_.resize(std::size_t{id} + 1, UINT32_MAX);
    by_id_[id] = it->second;
  }
  return it->second;
}

void PerfettoWriter::add(TrackState& ts, const SliceRecord& e, std::string_view name,
                         std::string_view args) {
  Pending p{e.kind, e.t, e.t, false, name_index(e.name, name), 0, 0, e.counter_value};
  p.args_off = static_cast<std::uint32_t>(ts.text.size());
  p.args_len = static_cast<std::uint32_t>(args.size());
  ts.text.append(args.data(), args.size());
  ts.pending.push_back(p);
}

void PerfettoWriter::event(const SliceRecord& e, std::string_view name, std::string_view args) {
  if (e.track >= tracks_.size()) return;
  TrackState& ts = tracks_[e.track];
  switch (e.kind) {
    case SliceKind::Begin:
      ts.open.push_back(ts.pending.size());
      add(ts, e, name, args);
      break;
    case SliceKind::End: {
      if (ts.open.empty()) return;  // nothing to close
      Pending& p = ts.pending[ts.open.back()];
      p.end = e.t;
      p.closed = true;
      ts.open.pop_back();
      if (ts.open.empty()) flush_track(e.track, false, e.t);
      break;
    }
    case SliceKind::Instant:
    case SliceKind::Counter:
      if (!window_.contains(e.t)) return;
      add(ts, e, name, args);
      if (ts.open.empty()) flush_track(e.track, false, e.t);
      break;
  }
}

// Writes a track's pending events in order of their start: a top-level
// slice has ended (or the run has, for `unterminated_at_end`).
void PerfettoWriter::flush_track(std::uint32_t track, bool unterminated_at_end, Picos end) {
  TrackState& ts = tracks_[track];
  for (Pending& p : ts.pending) {
    const bool unterminated = p.kind == SliceKind::Begin && !p.closed;
    if (unterminated) p.end = std::max(p.t, end);
    write_event(track, p, ts.text.view(), unterminated && unterminated_at_end);
  }
  ts.pending.clear();
  ts.open.clear();
  ts.text.clear();
  out_.maybe_flush();
}

void PerfettoWriter::write_event(std::uint32_t track, const Pending& p, std::string_view text,
                                 bool unterminated) {
  const std::string& name = names_[p.name].quoted;
  const std::string_view args(text.data() + p.args_off, p.args_len);
  Picos t = p.t;
  if (p.kind == SliceKind::Begin) {
    // Cut to the window; nothing of zero duration.
    const Picos from = std::max(p.t, window_.from), to = std::min(p.end, window_.to);
    if (from >= to) return;
    t = from;
    append_head(buf_, 'X', pid_of_[track], track + 1);
    append_us(buf_, t);
    buf_.append(",\"dur\":", 7);
    append_us(buf_, to - from);
  } else {
    append_head(buf_, p.kind == SliceKind::Instant ? 'i' : 'C', pid_of_[track], track + 1);
    append_us(buf_, t);
    if (p.kind == SliceKind::Instant) buf_ += ",\"s\":\"t\"";
  }
  buf_ += ",\"name\":";
  buf_.append(name.data(), name.size());
  if (p.kind == SliceKind::Counter) {
    buf_ += ",\"args\":{";
    buf_.append(name.data(), name.size());
    buf_ += ':';
    append_number(buf_, p.value);
    buf_ += '}';
  } else if (unterminated) {
    // The slice's own args with "unterminated": true added.
    const bool object = !args.empty() && args.front() == '{' && args.back() == '}';
    if (object && args.find_first_not_of(" {}") != std::string_view::npos) {
      buf_ += ",\"args\":";
      buf_.append(args.data(), args.size() - 1);
      buf_ += ",\"unterminated\":true}";
    } else if (args.empty() || object) {
      buf_ += ",\"args\":{\"unterminated\":true}";
    } else {
      buf_ += ",\"args\":{\"text\":";
      append_json_string(buf_, args);
      buf_ += ",\"unterminated\":true}";
    }
  } else {
    append_args(buf_, args);
  }
  buf_ += '}';
  ++written_;
}

void PerfettoWriter::finish(Picos end) {
  for (std::uint32_t k = 0; k < tracks_.size(); ++k)
    if (!tracks_[k].pending.empty()) flush_track(k, true, std::min(end, window_.to));
  buf_ += "\n],\n\"displayTimeUnit\":\"ns\"}\n";
  out_.close();
}

void write_perfetto(const Recorder& rec, const std::string& path) {
  PerfettoWriter w(path);
  w.start(rec.tracks());
  for (const SliceEvent& e : rec.sorted_slices()) {
    SliceRecord r{};
    r.t = e.t;
    r.track = e.track;
    r.kind = e.kind;
    r.counter_value = e.counter_value;
    w.event(r, e.name, e.args);
  }
  w.finish(rec.last_time());
  if (!w.error().empty()) throw std::runtime_error("Perfetto trace " + w.error());
}

}  // namespace tpb::trace
