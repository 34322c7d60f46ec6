#include "platform/cosim/scoreboard.h"

#include <fmt/format.h>

namespace tpb::cosim {

std::string Mismatch::describe() const {
  return fmt::format("at {} ps, partition {}, word {}: expected 0x{:08x}, got 0x{:08x}", time_ps,
                     partition, word_index, expected, actual);
}

bool WordScoreboard::compare(std::uint64_t time_ps, unsigned partition, std::uint64_t word_index,
                             std::uint32_t expected, std::uint32_t actual) {
  ++compared_;
  if (expected == actual) return true;
  ++mismatches_;
  if (!first_) first_ = Mismatch{time_ps, partition, word_index, expected, actual};
  return false;
}

}  // namespace tpb::cosim
