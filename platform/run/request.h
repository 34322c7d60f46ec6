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

}  // namespace tpb::run
