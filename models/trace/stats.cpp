#include "models/trace/stats.h"

namespace tpb::trace {

std::uint64_t CosimStats::words_compared() const {
  std::uint64_t n = 0;
  for (const CosimBlockStats& b : blocks) n += b.words_compared;
  return n;
}
std::uint64_t CosimStats::mismatches() const {
  std::uint64_t n = 0;
  for (const CosimBlockStats& b : blocks) n += b.mismatches;
  return n;
}
std::uint64_t CosimStats::stretched_ps() const {
  std::uint64_t n = 0;
  for (const CosimBlockStats& b : blocks) n += b.stretched_ps;
  return n;
}

}  // namespace tpb::trace
