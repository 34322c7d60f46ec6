// The race check against the brute-force oracle of sc_tests/race_oracle.h:
// 1500 random programs, each against every interleaving of its semaphore
// semantics, the detector fed one random interleaving.
#include <gtest/gtest.h>

#include "sc_tests/race_oracle.h"

namespace tpb::race {
namespace {

TEST(RaceOracle, RandomProgramsMatchEveryInterleaving) {
  oracle::RngChoices rng(20240533);
  unsigned with_races = 0;
  for (int round = 0; round < 1500; ++round) {
    const oracle::Program p = oracle::make_program(rng);
    const oracle::Outcome o = oracle::check(p, rng);
    ASSERT_EQ(o.failure, "") << "round " << round;
    with_races += o.raced;
  }
  // The programs exercise both outcomes.
  EXPECT_GT(with_races, 300u);
  EXPECT_LT(with_races, 1200u);
}

}  // namespace
}  // namespace tpb::race
