#include "platform/run/race_check.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "models/isa/input_file.h"
#include "models/race/report_json.h"

namespace tpb::run {

namespace {

race::CoreProgram core_program(platform::TpbCore& core, const isa::SpooledProgram* p) {
  race::CoreProgram c;
  if (p) {
    c.source.file = p->path();
    c.source.binary = p->binary();
    if (p->keeps_notes())
      for (unsigned e = 0; e < isa::kNumQueues; ++e)
        c.notes[e] = &p->notes(static_cast<isa::Queue>(e));
  }
  for (unsigned i = 0; i < isa::kNumSemaphores; ++i) c.semaphores[i] = core.semaphores().get(i);
  return c;
}

}  // namespace

std::unique_ptr<race::Detector> make_detector(const std::vector<platform::TpbCore*>& cores,
                                              const std::vector<isa::SpooledProgram*>& programs,
                                              const std::vector<std::vector<unsigned>>& targets) {
  std::vector<race::CoreProgram> v;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    v.push_back(core_program(*cores[i], i < programs.size() ? programs[i] : nullptr));
    if (i < targets.size()) v.back().update_targets = targets[i];
  }
  return std::make_unique<race::Detector>(std::move(v));
}

void write_races(const race::Report& r, const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  for (const race::Race& x : r.races)
    f << race::race_json(x, r.sources)
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
      << '\n';
  f.close();
  if (!f)
    throw std::runtime_error(
        fmt::format("{}: cannot write the races ({})", path, std::strerror(errno)));
}

std::vector<std::string> race_lines(const race::Report& r, std::size_t max) {
  std::vector<std::string> out;
  if (r.total == 0) return out;
  for (std::size_t i = 0; i < r.races.size() && i < max; ++i)
    out.push_back("race: " + isa::printable(race::race_message(r.races[i], r.sources)));
  if (r.total > std::min(max, r.races.size()))
    out.push_back(fmt::format(
        "{} race{} in all{}", r.total, r.total == 1 ? "" : "s",
        r.races.size() < r.total
            ? fmt::format(" (the first {} are listed by --races and --stats)", r.races.size())
            : " (--races FILE lists them all)"));
  for (const auto& [s, why] : r.timing_dependent)
    out.push_back(fmt::format(
        "note: sem[{}] is {}: the waits on it are ordered by what this run observed, so this "
        "result holds for this timing only",
        s % isa::kNumSemaphores, why));
  return out;
}

}  // namespace tpb::run
