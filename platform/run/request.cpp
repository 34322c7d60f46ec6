#include "platform/run/request.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "platform/run/mem_spec.h"

namespace tpb::run {

trace::TraceWindow parse_trace_window(const std::string& s) {
  const std::size_t colon = s.find(':');
  if (colon == std::string::npos || s.find(':', colon + 1) != std::string::npos)
    throw InputError(fmt::format("--trace-window '{}': expected T0:T1 (e.g. 2us:10us)", s));
  trace::TraceWindow w;
  const std::string a = s.substr(0, colon), b = s.substr(colon + 1);
  for (const auto& [text, end] : {std::pair{&a, &w.from}, std::pair{&b, &w.to}}) {
    std::string why;
    if (text->empty() || *text == "0") continue;  // 0: the start
    if (!parse_sim_time(*text, *end, why)) throw InputError("--trace-window: " + why);
  }
  if (w.from > w.to)
    throw InputError(fmt::format("--trace-window '{}': the start is after the end", s));
  return w;
}

TraceLevel parse_trace_level(const std::string& s) {
  if (s == "instr") return TraceLevel::Instr;
  if (s == "bundle") return TraceLevel::Bundle;
  if (s == "auto") return TraceLevel::Auto;
  throw InputError(fmt::format("--trace-level '{}' is not instr, bundle or auto", s));
}

std::vector<isa::Engine> parse_trace_engines(const std::string& s) {
  std::vector<isa::Engine> out;
  for (const std::string& name : split(s, ',')) {
    const auto e = isa::parse_engine(name.c_str());
    if (!e)
      throw InputError(fmt::format("--trace-engines: '{}' is not one of pool dve pe sfu", name));
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

num::MxEmax parse_mx_emax(const std::string& s) {
  if (s == "ocp") return num::MxEmax::Ocp;
  if (s == "neuron-alt") return num::MxEmax::NeuronAlt;
  throw InputError(fmt::format("--mx-emax '{}' is not ocp or neuron-alt", s));
}

void merge_json(nlohmann::json& base, const nlohmann::json& over) {
  if (!base.is_object() || !over.is_object()) {
    base = over;
    return;
  }
  for (auto it = over.begin(); it != over.end(); ++it) {
    if (base.contains(it.key()))
      merge_json(base[it.key()], *it);
    else
      base[it.key()] = *it;
  }
}

std::vector<std::string> resolve_timing_key(const std::string& key, const nlohmann::json& profile) {
  const std::string bic = "bundle_issue_cycles.";
  if (key.rfind(bic, 0) == 0 && key.size() > bic.size())
    return {"bundle_issue_cycles", key.substr(bic.size())};
  std::vector<std::string> path;
  const nlohmann::json* level = &profile;
  std::string rest = key;
  for (;;) {
    if (level->contains(rest) && !(*level)[rest].is_object()) {
      path.push_back(rest);
      return path;
    }
    const std::size_t dot = rest.find('.');
    const std::string head = rest.substr(0, dot);
    std::string known;
    for (auto it = level->begin(); it != level->end(); ++it)
      if (it.key() != "sources" && it.key() != "arch")
        known += (known.empty() ? "" : " ") + it.key();
    if (!level->contains(head) || head == "sources" || head == "arch")
      throw InputError(
          fmt::format("'{}': '{}' is not a timing key (known here: {})", key, head, known));
    const nlohmann::json& next = (*level)[head];
    path.push_back(head);
    if (!next.is_object())
      throw InputError(fmt::format("'{}': '{}' is a value, not an object", key,
                                   fmt::format("{}", fmt::join(path, "."))));
    if (dot == std::string::npos) {
      std::string sub;
      for (auto it = next.begin(); it != next.end(); ++it)
        sub += (sub.empty() ? "" : " ") + it.key();
      throw InputError(fmt::format("'{}' names an object; name one of its keys: {}", key, sub));
    }
    level = &next;
    rest = rest.substr(dot + 1);
  }
}

nlohmann::json nest_timing_key(const std::vector<std::string>& path, const nlohmann::json& value) {
  nlohmann::json j = value;
  for (auto it = path.rbegin(); it != path.rend(); ++it) j = nlohmann::json{{*it, j}};
  return j;
}

nlohmann::json nest_timing_keys(const nlohmann::json& overrides, const nlohmann::json& profile) {
  if (!overrides.is_object()) return overrides;  // merge_timing names the problem
  nlohmann::json out = nlohmann::json::object();
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    if (it.key().find('.') == std::string::npos)
      merge_json(out, nlohmann::json{{it.key(), *it}});
    else
      merge_json(out, nest_timing_key(resolve_timing_key(it.key(), profile), *it));
  }
  return out;
}

}  // namespace tpb::run
