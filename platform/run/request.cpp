#include "platform/run/request.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/isa/input_file.h"
#include "platform/run/mem_spec.h"

namespace tpb::run {

trace::TraceWindow parse_trace_window(const std::string& s) {
  const std::size_t colon = s.find(':');
  if (colon == std::string::npos || s.find(':', colon + 1) != std::string::npos)
    throw InputError(fmt::format("--trace-window '{}': expected T0:T1 (e.g. 2us:10us)", s));
  return trace_window_of(s.substr(0, colon), s.substr(colon + 1));
}

trace::TraceWindow trace_window_of(const std::string& from, const std::string& to) {
  trace::TraceWindow w;
  for (const auto& [text, end] : {std::pair{&from, &w.from}, std::pair{&to, &w.to}}) {
    std::string why;
    if (text->empty() || *text == "0") continue;  // 0: the start
    if (!parse_sim_time(*text, *end, why)) throw InputError("--trace-window: " + why);
  }
  if (w.from > w.to)
    throw InputError(fmt::format("--trace-window '{}:{}': the start is after the end", from, to));
  return w;
}

TraceLevel parse_trace_level(const std::string& s) {
  if (s == "instr") return TraceLevel::Instr;
  if (s == "bundle") return TraceLevel::Bundle;
  if (s == "auto") return TraceLevel::Auto;
  throw InputError(fmt::format("--trace-level '{}' is not instr, bundle or auto", s));
}

std::vector<isa::Queue> parse_trace_engines(const std::string& s) {
  std::vector<isa::Queue> out;
  for (const std::string& name : split(s, ',')) {
    const auto e = isa::parse_queue(name.c_str());
    if (!e)
      throw InputError(
          fmt::format("--trace-engines: '{}' is not one of pool dve pe sfu dma0..dma15", name));
    out.push_back(*e);
  }
  return out;
}

isa::Arch parse_arch_option(const std::string& s) {
  isa::Arch a{};
  if (!isa::parse_arch(s, a))
    throw InputError(fmt::format("--arch '{}' is not one of sunda cayman mariana maverick", s));
  return a;
}

void check_races_file(const SessionRequest& req, const char* file_option,
                      const char* check_option) {
  if (!req.races_file.empty() && !req.racecheck)
    throw InputError(
        fmt::format("{} needs {} (the races it would list)", file_option, check_option));
}

num::MxEmax parse_mx_emax(const std::string& s) {
  if (s == "ocp") return num::MxEmax::Ocp;
  if (s == "neuron-alt") return num::MxEmax::NeuronAlt;
  throw InputError(fmt::format("--mx-emax '{}' is not ocp or neuron-alt", s));
}

unsigned parse_lnc(const std::string& text) {
  if (!text.empty() && text != "1" && text != "2")
    throw InputError(
        fmt::format("--lnc '{}': a logical core is 1 or 2 physical cores", isa::excerpt(text)));
  return text == "2" ? 2 : 1;
}

void check_lnc_pairs(unsigned lnc, unsigned cores) {
  if (cores % lnc != 0)
    throw InputError(fmt::format(
        "--lnc {} on a device of {} core{}: the cores do not pair up (--cores a multiple of {})",
        lnc, cores, cores == 1 ? "" : "s", lnc));
}

}  // namespace tpb::run
