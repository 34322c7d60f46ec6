// The fields of a SessionRequest from their option text (SPEC §9 `--trace-*`):
// one parser under `tpbsim run` and every binding, so `--trace-window
// 2us:10us` and `core.run(..., trace_window="2us:10us")` mean the same.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/numerics/mx_quantize.h"
#include "models/trace/vcd_writer.h"
#include "platform/run/session.h"

namespace tpb::run {

// `T0:T1`, either end a time of parse_sim_time or empty (from the start /
// to the end). InputError naming the problem.
trace::TraceWindow parse_trace_window(const std::string& s);
// The window of its two ends as parse_trace_window reads `FROM:TO` (a
// binding's pair of ends, never joined into text): each a time of
// parse_sim_time, or "" / "0" (the start / the end of the run).
trace::TraceWindow trace_window_of(const std::string& from, const std::string& to);
// `instr`, `bundle` or `auto`. InputError otherwise.
TraceLevel parse_trace_level(const std::string& s);
// A comma-separated list of engine names (pool,pe). InputError naming a bad one.
std::vector<isa::Queue> parse_trace_engines(const std::string& s);
// `--arch`: sunda, cayman, mariana or maverick. InputError otherwise.
isa::Arch parse_arch_option(const std::string& s);
// `--mx-emax`: `ocp` or `neuron-alt`. InputError otherwise.
num::MxEmax parse_mx_emax(const std::string& s);
// SPEC §14: a races file lists what the race check found, so it needs the
// check. InputError "FILE_OPTION needs CHECK_OPTION (the races it would
// list)" in the caller's spelling of the two options.
void check_races_file(const SessionRequest& req, const char* file_option, const char* check_option);
// SPEC §15 logical cores (`--lnc L`, Python's `Device.run(lnc=L)`): a
// logical core is L = 1 or 2 physical cores ("" : 1), InputError "--lnc
// 'TEXT': a logical core is 1 or 2 physical cores" otherwise; and they pair
// up a device of `cores` cores, InputError "--lnc 2 on a device of 3 cores:
// the cores do not pair up (--cores a multiple of 2)" otherwise (the
// bindings say the flags in their own names).
unsigned parse_lnc(const std::string& text);
void check_lnc_pairs(unsigned lnc, unsigned cores);

}  // namespace tpb::run
