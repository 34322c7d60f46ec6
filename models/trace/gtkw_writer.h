// Writes a GTKWave save file (.gtkw) for a VCD written by write_vcd
// (vcd_writer.h): `gtkwave FILE.gtkw` opens the VCD with the engines, the
// semaphores and the memories in groups, the useful signals shown and the
// whole run in view.
#pragma once

#include <string>
#include <vector>

#include "models/trace/recorder.h"

namespace tpb::trace {

// FILE.vcd -> FILE.gtkw (another name: NAME.gtkw beside it).
std::string gtkw_path_for(const std::string& vcd_path);

// `signals` are the Recorder's (the VCD's $var lines come from the same
// list), `top` the VCD's top scope as given to write_vcd, `end` the last time
// of the run in ps (the VCD's timescale). Groups, in order: one per engine
// scope (tpb.pool, tpb.dve, tpb.pe, tpb.sfu: busy, opcode, instruction index,
// pc, markers, SFU flags), "memories" (per-memory byte counters) and
// "semaphores" (every semaphore, the group closed). A signal of another scope
// goes in "other". [dumpfile] names `vcd_path` made absolute. Throws
// std::runtime_error naming `path` when it cannot be written.
void write_gtkw(const std::vector<Signal>& signals, const std::string& vcd_path,
                const std::string& path, Picos end, const std::string& top = "tpb");

}  // namespace tpb::trace
