#include "models/race/report_json.h"

namespace tpb::race {

namespace {

const char* access_name(std::uint8_t mask) {
  return mask == (kRead | kWrite) ? "read+write" : mask == kWrite ? "write" : "read";
}

nlohmann::json side_json(const RaceSide& s, const std::vector<ProgramSource>& sources) {
  if (s.host) return {{"engine", "host"}, {"core", s.core}, {"access", access_name(s.mask)}};
  nlohmann::json j = {{"engine", isa::engine_name(s.queue)},
                      {"index", s.index},
                      {"mnemonic", std::string(isa::opcode_mnemonic(s.opcode))},
                      {"core", s.core}};
  const ProgramSource* src = s.core < sources.size() ? &sources[s.core] : nullptr;
  if (src) {
    j["file"] = src->file;
    j[src->binary ? "word" : "line"] = s.line;
  }
  j["access"] = access_name(s.mask);
  if (s.dma_engines != 0) {
    nlohmann::json e = nlohmann::json::array();
    for (unsigned i = 0; i < 16; ++i)
      if (s.dma_engines & (1u << i)) e.push_back(i);
    j["dma_engines"] = e;
  }
  return j;
}

}  // namespace

nlohmann::json race_json(const Race& r, const std::vector<ProgramSource>& sources) {
  nlohmann::json kinds = nlohmann::json::array();
  for (const auto& [bit, name] :
       {std::pair{kRaw, "RAW"}, std::pair{kWar, "WAR"}, std::pair{kWaw, "WAW"}})
    if (r.kinds & bit) kinds.push_back(name);
  nlohmann::json j = {{"message", race_message(r, sources)},
                      {"kinds", kinds},
                      {"memory", memory_name(r.memory)},
                      {"core", r.core}};
  if (r.memory == Memory::Sbuf || r.memory == Memory::Psum)
    j["partitions"] = {r.partition_lo, r.partition_hi};
  if (r.memory == Memory::Tiles) j["tiles"] = {r.partition_lo, r.partition_hi};
  j["bytes"] = {r.lo, r.hi - 1};
  j["first"] = side_json(r.first, sources);
  j["second"] = side_json(r.second, sources);
  return j;
}

nlohmann::json report_json(const Report& r) {
  nlohmann::json races = nlohmann::json::array();
  for (const Race& x : r.races) races.push_back(race_json(x, r.sources));
  nlohmann::json td = nlohmann::json::array();
  for (const auto& [s, why] : r.timing_dependent)
    td.push_back(
        {{"semaphore", s % isa::kNumSemaphores}, {"core", s / isa::kNumSemaphores}, {"why", why}});
  return {{"count", r.total},
          {"listed", r.races.size()},
          {"races", races},
          {"timing_dependent_semaphores", td}};
}

}  // namespace tpb::race
