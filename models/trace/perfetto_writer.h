// Writes the tracks of a Recorder as Chrome trace-event JSON, which
// ui.perfetto.dev and chrome://tracing open directly.
#pragma once

#include <string>

#include "models/trace/recorder.h"

namespace tpb::trace {

// {"traceEvents":[...],"displayTimeUnit":"ns"}: process_name / thread_name
// metadata first (one pid per distinct Track::process, numbered from 1 in
// order of first appearance; one tid per track, tid = track index + 1), then
// the events sorted by (time, insertion order) with ts = ps / 1e6 (µs).
// A Begin and the End that closes it on its track -> one complete event "X"
// (ts, dur), Instant -> "i" (thread scope), Counter -> "C" with args
// {name: value}. An End with no open slice on its track is dropped; a slice
// still open at the end (a fault or deadlock cut it short) ends at
// Recorder::last_time() with args {"unterminated": true}. Complete events are
// what every consumer takes (Chrome DevTools' trace engine keeps one B/E stack
// for all threads, speedscope matches an E by name): the ctest
// TraceConsumer.DevToolsTraceEngine* parses a run's trace with DevTools'
// engine (docs/TRACES.md). args text that is not a JSON object is kept as
// {"text": "..."}. Throws std::runtime_error naming `path` on I/O failure.
void write_perfetto(const Recorder& rec, const std::string& path);

}  // namespace tpb::trace
