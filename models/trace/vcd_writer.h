// Writes the signals of a Recorder as a Value Change Dump (IEEE 1364 §18),
// readable by GTKWave (and its vcd2fst converter).
#pragma once

#include <string>

#include "models/trace/recorder.h"

namespace tpb::trace {

// Timescale 1 ps. Each Signal::scope is split on '.' into nested
// `$scope module` blocks under `top` (a leading component equal to `top` is
// not repeated). Initial values (and changes at t = 0) go in $dumpvars; later
// changes are written sorted by time, one `#t` per time that changes
// something; of several changes of one signal at one time the last recorded
// wins, and changes that do not change the value are dropped. A final `#t` at
// Recorder::last_time() marks the end of the run. Throws std::runtime_error
// naming `path` when the file cannot be written.
void write_vcd(const Recorder& rec, const std::string& path, const std::string& top = "tpb");

}  // namespace tpb::trace
