#include "models/trace/stats_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace tpb::trace {

nlohmann::json engine_active(const RunStats& s) {
  const double run_ps = static_cast<double>(s.simulated_ps - std::min(s.start_ps, s.simulated_ps));
  const auto share = [&](double ps) { return run_ps > 0 ? std::min(1.0, ps / run_ps) : 0.0; };
  nlohmann::json out = nlohmann::json::object();
  for (const EngineStats& e : s.engines) {
    const std::size_t dot = e.name.rfind('.');
    if (e.name.compare(dot == std::string::npos ? 0 : dot + 1, 3, "dma") == 0) continue;
    out[e.name] =
        e.clock_mhz > 0 ? share(static_cast<double>(e.busy_cycles) * 1e6 / e.clock_mhz) : 0.0;
  }
  for (const auto& [name, ps] : s.dma_active_ps) out[name] = share(static_cast<double>(ps));
  return out;
}

nlohmann::json stats_to_json(const RunStats& s) {
  nlohmann::json engines = nlohmann::json::array();
  for (const EngineStats& e : s.engines) {
    nlohmann::json bundles = nlohmann::json::object();
    for (const auto& [name, count] : e.bundles) bundles[name] = count;
    engines.push_back({{"name", e.name},
                       {"clock_mhz", e.clock_mhz},
                       {"instructions", e.instructions},
                       {"busy_cycles", e.busy_cycles},
                       {"stall_cycles", e.stall_cycles},
                       {"memory_stall_cycles", e.memory_stall_cycles},
                       {"fetch_stall_cycles", e.fetch_stall_cycles},
                       {"interlock_stall_cycles", e.interlock_stall_cycles},
                       {"bundles", bundles},
                       {"bytes_read", e.bytes_read},
                       {"bytes_written", e.bytes_written},
                       {"counters", e.counters}});
  }
  nlohmann::json memories = nlohmann::json::array();
  for (const MemoryStats& m : s.memories)
    memories.push_back(
        {{"name", m.name}, {"bytes_read", m.bytes_read}, {"bytes_written", m.bytes_written}});
  const nlohmann::json sfu = {
      {"flags",
       {{"inexact", s.sfu.inexact}, {"saturated", s.sfu.saturated}, {"wrapped", s.sfu.wrapped}}},
      {"tiles", s.sfu.tiles},
      {"units_used", s.sfu.units_used}};
  nlohmann::json traces = nlohmann::json::array();
  for (const TraceFileStats& t : s.traces)
    traces.push_back(
        {{"kind", t.kind}, {"path", t.path}, {"bytes", t.bytes}, {"events", t.events}});
  nlohmann::json out = {{"arch", s.arch},
                        {"program", s.program},
                        {"status", s.status},
                        {"message", s.message},
                        {"simulated_ps", s.simulated_ps},
                        {"simulated_ns", static_cast<double>(s.simulated_ps) / 1e3},
                        {"wall_seconds", s.wall_seconds},
                        {"engines", engines},
                        {"engine_active", engine_active(s)},
                        {"memories", memories},
                        {"sfu", sfu},
                        {"traces", traces}};
  out["mode"] = s.timing_only ? "timing-only" : "full";
  if (s.timing_only)
    out["mode_note"] =
        "timing only: no values computed in SBUF, PSUM or HBM (the SFU's tile file is, so its "
        "flags and faults are the full run's); what the run wrote there is not in memory";
  if (!s.races.is_null()) out["races"] = s.races;
  if (s.cosim.enabled) {
    nlohmann::json blocks = nlohmann::json::object();
    for (const CosimBlockStats& c : s.cosim.blocks) {
      nlohmann::json b = {{"dut", c.dut},
                          {"clock_mhz", c.clock_mhz},
                          {"instructions", c.instructions},
                          {"words_compared", c.words_compared},
                          {"mismatches", c.mismatches},
                          {"source_words", c.source_words},
                          {"rtl_cycles", c.rtl_cycles},
                          {"max_latency_cycles", c.max_latency_cycles},
                          {"stretched_ps", c.stretched_ps},
                          {"stretched_instructions", c.stretched_instructions}};
      if (c.counts_blocks) b["blocks_compared"] = c.blocks_compared;
      blocks[c.kind] = std::move(b);
    }
    out["cosim"] = {{"words_compared", s.cosim.words_compared()},
                    {"mismatches", s.cosim.mismatches()},
                    {"stretched_ps", s.cosim.stretched_ps()},
                    {"blocks", std::move(blocks)}};
  }
  return out;
}

void write_stats(const RunStats& s, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw std::runtime_error("stats file '" + path +
                             "': cannot open for writing: " + std::strerror(errno));
  out << stats_to_json(s).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  out.flush();
  if (!out)
    throw std::runtime_error("stats file '" + path + "': write failed: " + std::strerror(errno));
}

}  // namespace tpb::trace
