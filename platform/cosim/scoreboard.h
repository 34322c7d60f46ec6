// The model as scoreboard (SPEC §9 --cosim): expected words from the model,
// actual words from the device under test, compared in order per stream. The
// first mismatch is kept with where and when it happened, so a run can stop
// and name it: simulated time, partition, word index, expected, actual.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tpb::cosim {

struct Mismatch {
  std::uint64_t time_ps = 0;
  unsigned partition = 0;
  std::uint64_t word_index = 0;  // in the partition's output stream
  std::uint32_t expected = 0;
  std::uint32_t actual = 0;
  std::string describe() const;  // "at 1234 ps, partition 3, word 17: expected 0x.., got 0x.."
};

class WordScoreboard {
 public:
  // Compares one word; returns false on a mismatch (the first is kept).
  bool compare(std::uint64_t time_ps, unsigned partition, std::uint64_t word_index,
               std::uint32_t expected, std::uint32_t actual);
  std::uint64_t words_compared() const { return compared_; }
  std::uint64_t mismatches() const { return mismatches_; }
  const std::optional<Mismatch>& first_mismatch() const { return first_; }
  bool clean() const { return mismatches_ == 0; }

 private:
  std::uint64_t compared_ = 0, mismatches_ = 0;
  std::optional<Mismatch> first_;
};

}  // namespace tpb::cosim
