// The fields of a RunRequest from their option text (SPEC §9 `--trace-*`):
// one parser under `tpbsim run` and every binding, so `--trace-window
// 2us:10us` and `core.run(..., trace_window="2us:10us")` mean the same.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/numerics/dequant_stream.h"
#include "models/trace/vcd_writer.h"
#include "platform/run/session.h"

namespace tpb::run {

// `T0:T1`, either end a time of parse_sim_time or empty (from the start /
// to the end). InputError naming the problem.
trace::TraceWindow parse_trace_window(const std::string& s);
// `instr`, `bundle` or `auto`. InputError otherwise.
TraceLevel parse_trace_level(const std::string& s);
// A comma-separated list of engine names (pool,pe). InputError naming a bad one.
std::vector<isa::Engine> parse_trace_engines(const std::string& s);
// `--arch`: sunda, cayman, mariana or maverick. InputError otherwise.
isa::Arch parse_arch_option(const std::string& s);
// `--mx-emax`: `ocp` or `neuron-alt`. InputError otherwise.
num::MxEmax parse_mx_emax(const std::string& s);

// Timing overrides (CoreSpec::timing_overrides, a sweep's parameters): a key
// may be dotted, "clocks_mhz.dve", or an object, {"clocks_mhz": {"dve": ..}}.

// Objects merged recursively; `over` wins.
void merge_json(nlohmann::json& base, const nlohmann::json& over);
// The nesting of a dotted timing key, checked against a profile's own shape
// (`tpbsim run --dump-timing`): "clocks_mhz.dve" -> {clocks_mhz, dve};
// "bundle_issue_cycles.dve.qmx.pack" -> {bundle_issue_cycles, dve.qmx.pack}
// (bundle names hold dots; the kernels' bundle table checks them).
// InputError "'KEY': ..." naming the part that is not a key of the profile.
std::vector<std::string> resolve_timing_key(const std::string& key, const nlohmann::json& profile);
// {path[0]: {path[1]: ... value}}.
nlohmann::json nest_timing_key(const std::vector<std::string>& path, const nlohmann::json& value);
// An object of overrides with its dotted keys nested (resolve_timing_key);
// keys without a dot are kept as they are.
nlohmann::json nest_timing_keys(const nlohmann::json& overrides, const nlohmann::json& profile);

}  // namespace tpb::run
