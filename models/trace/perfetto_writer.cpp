#include "models/trace/perfetto_writer.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/compile.h>
#include <fmt/format.h>

namespace tpb::trace {

namespace {

constexpr std::size_t kFlushAt = 1 << 20;

// A JSON string literal (RFC 8259 escapes).
void append_json_string(std::string& out, std::string_view s) {
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
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        else
          out.push_back(ch);
    }
  }
  out.push_back('"');
}

// Microseconds from picoseconds, exactly: "12.345678".
void append_us(std::string& out, Picos t) {
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}.{:06}"), t / 1000000, t % 1000000);
}

// Trace viewers reject NaN / inf numbers: those become strings.
void append_number(std::string& out, double v) {
  if (std::isfinite(v))
    fmt::format_to(std::back_inserter(out), "{}", v);
  else
    out += std::isnan(v) ? "\"nan\"" : v > 0 ? "\"inf\"" : "\"-inf\"";
}

// args: a JSON object as the recorder's callers build it; other text is
// kept as {"text": "..."}.
void append_args(std::string& out, std::string_view args) {
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
    : path_(std::move(path)), window_(window) {
  f_ = std::fopen(path_.c_str(), "wb");
  if (!f_) fail("cannot open for writing");
  buf_.reserve(kFlushAt + 4096);
}

PerfettoWriter::~PerfettoWriter() {
  if (f_) std::fclose(f_);
}

void PerfettoWriter::fail(const char* what) {
  throw std::runtime_error("Perfetto trace '" + path_ + "': " + what + ": " + std::strerror(errno));
}

// A write error is kept, not thrown (this runs inside the simulation):
// finish() reports it, and nothing more is written.
void PerfettoWriter::flush() {
  if (error_.empty() && !buf_.empty()) {
    if (std::fwrite(buf_.data(), 1, buf_.size(), f_) == buf_.size())
      bytes_ += buf_.size();
    else
      error_ = "'" + path_ + "': write failed: " + std::strerror(errno);
  }
  buf_.clear();
}

void PerfettoWriter::start(const std::vector<Track>& tracks) {
  std::vector<std::string> processes;
  pid_of_.assign(tracks.size(), 0);
  open_.assign(tracks.size(), {});
  buf_ += "{\"traceEvents\":[";
  bool first = true;
  auto meta = [&](int pid, int tid, const char* what, const char* key, const std::string* name,
                  int index) {
    buf_ += first ? "\n" : ",\n";
    first = false;
    fmt::format_to(std::back_inserter(buf_),
                   R"({{"ph":"M","name":"{}","pid":{},"tid":{},"args":{{"{}":)", what, pid, tid,
                   key);
    if (name)
      append_json_string(buf_, *name);
    else
      fmt::format_to(std::back_inserter(buf_), "{}", index);
    buf_ += "}}";
  };
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    if (tracks[i].hidden) continue;
    std::size_t p = 0;
    while (p < processes.size() && processes[p] != tracks[i].process) ++p;
    if (p == processes.size()) {
      processes.push_back(tracks[i].process);
      const int pid = static_cast<int>(p + 1);
      meta(pid, 0, "process_name", "name", &processes[p], 0);
      meta(pid, 0, "process_sort_index", "sort_index", nullptr, pid);
    }
    pid_of_[i] = static_cast<int>(p + 1);
  }
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    if (tracks[i].hidden) continue;
    const int tid = static_cast<int>(i + 1);
    meta(pid_of_[i], tid, "thread_name", "name", &tracks[i].thread, 0);
    meta(pid_of_[i], tid, "thread_sort_index", "sort_index", nullptr, tid);
  }
  // Every event line starts with ",\n": the metadata always has a line (or
  // the array is empty, handled by the lead-in below).
  if (first) buf_ += "\n{\"ph\":\"M\",\"name\":\"trace\",\"pid\":0,\"tid\":0,\"args\":{}}";
}

void PerfettoWriter::head(const char* ph, std::uint32_t track, Picos t) {
  fmt::format_to(std::back_inserter(buf_),
                 FMT_COMPILE(",\n{{\"ph\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":"), ph,
                 pid_of_[track], track + 1);
  append_us(buf_, t);
  ++written_;
}

void PerfettoWriter::emit_begin(std::uint32_t track, Picos t, std::string_view name,
                                std::string_view args) {
  head("B", track, t);
  buf_ += ",\"name\":";
  append_json_string(buf_, name);
  append_args(buf_, args);
  buf_ += '}';
}

void PerfettoWriter::emit_end(std::uint32_t track, Picos t, bool unterminated) {
  head("E", track, t);
  buf_ += unterminated ? ",\"args\":{\"unterminated\":true}}" : "}";
}

// Entering the window at t: the slices open then begin there.
void PerfettoWriter::open_window(Picos t) {
  in_window_ = true;
  for (std::uint32_t k = 0; k < open_.size(); ++k)
    for (Open& o : open_[k])
      if (!o.emitted) {
        emit_begin(k, t, o.name, o.args);
        o.emitted = true;
      }
}

void PerfettoWriter::event(const SliceRecord& e, std::string_view name, std::string_view args) {
  if (e.track >= open_.size() || e.t > window_.to) return;
  if (!in_window_ && e.t >= window_.from) open_window(window_.from);
  std::vector<Open>& stack = open_[e.track];
  switch (e.kind) {
    case SliceKind::Begin:
      if (in_window_) emit_begin(e.track, e.t, name, args);
      // Outside the window the slice is kept to begin at the window's start.
      stack.push_back(Open{in_window_ ? std::string() : std::string(name),
                           in_window_ ? std::string() : std::string(args), in_window_});
      break;
    case SliceKind::End:
      if (stack.empty()) return;  // nothing to close
      if (stack.back().emitted) emit_end(e.track, e.t, false);
      stack.pop_back();
      break;
    case SliceKind::Instant:
      if (!in_window_) return;
      head("i", e.track, e.t);
      buf_ += ",\"s\":\"t\",\"name\":";
      append_json_string(buf_, name);
      append_args(buf_, args);
      buf_ += '}';
      break;
    case SliceKind::Counter:
      if (!in_window_) return;
      head("C", e.track, e.t);
      buf_ += ",\"name\":";
      append_json_string(buf_, name);
      buf_ += ",\"args\":{";
      append_json_string(buf_, name);
      buf_ += ':';
      append_number(buf_, e.counter_value);
      buf_ += "}}";
      break;
  }
  if (buf_.size() >= kFlushAt) flush();
}

void PerfettoWriter::finish(Picos end) {
  const Picos stop = std::min(end, window_.to);
  for (std::uint32_t k = 0; k < open_.size(); ++k)
    for (; !open_[k].empty(); open_[k].pop_back())
      if (open_[k].back().emitted) emit_end(k, stop, true);
  buf_ += "\n],\n\"displayTimeUnit\":\"ns\"}\n";
  flush();
  std::FILE* f = f_;
  f_ = nullptr;
  if (std::fclose(f) != 0 && error_.empty())
    error_ = "'" + path_ + "': cannot finish writing: " + std::strerror(errno);
}

void write_perfetto(const Recorder& rec, const std::string& path) {
  PerfettoWriter w(path);
  w.start(rec.tracks());
  for (const SliceEvent& e : rec.sorted_slices()) {
    SliceRecord r{e.t, e.seq, e.track, e.kind, 0, 0, 0, e.counter_value};
    w.event(r, e.name, e.args);
  }
  w.finish(rec.last_time());
  if (!w.error().empty()) throw std::runtime_error("Perfetto trace " + w.error());
}

}  // namespace tpb::trace
