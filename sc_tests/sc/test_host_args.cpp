// platform/run/host_args.h: the one check of each argument a host hands the
// core (the CLI's specs and options, the Python bindings, the DPI-C library):
// every range edge, and the message each surface prints.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "platform/run/host_args.h"
#include "platform/run/mem_spec.h"
#include "platform/run/run_options.h"

namespace {

using namespace tpb::run;

template <typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// check(lo) and check(hi) are the values; one past either end throws E.
template <typename E, typename Check>
void edges(Check check, long long lo, long long hi) {
  EXPECT_EQ(static_cast<long long>(check(lo)), lo);
  EXPECT_EQ(static_cast<long long>(check(hi)), hi);
  EXPECT_THROW(check(lo - 1), E) << lo - 1;
  EXPECT_THROW(check(hi + 1), E) << hi + 1;
}

TEST(HostArgs, EveryRangeEdge) {
  edges<RangeError>(check_partition, 0, 127);
  edges<RangeError>(check_offset, 0, 262143);
  edges<RangeError>(check_tile, 0, 31);
  edges<RangeError>(check_tile_col, 1, 65535);
  edges<RangeError>(check_semaphore, 0, 63);
  edges<InputError>(check_semaphore_value, 0, 0xFFFFFFFFll);
  edges<RangeError>(check_register, 0, 31);
  edges<InputError>(check_threads, 1, 1024);
  edges<InputError>(check_max_sim_ps, 1, 1ll << 62);
  EXPECT_EQ(check_max_wall_seconds(1e9), 1e9);
  EXPECT_EQ(check_max_wall_seconds(1e-9), 1e-9);
  for (const double s :
       {0.0, -1.0, 1e10, std::nextafter(1e9, 2e9), std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()})
    EXPECT_THROW(check_max_wall_seconds(s), InputError) << s;
  EXPECT_EQ(check_hbm_offset(0, 100, 100), 100u);
  EXPECT_THROW(check_hbm_offset(0, 101, 100), RangeError);
  EXPECT_THROW(check_hbm_offset(1, 0, 100), RangeError);
  EXPECT_THROW(check_hbm_offset(0, -1, 100), RangeError);
}

// A value past 64 bits (a Python int, a decimal string) is out of every
// range, named by its digits.
TEST(HostArgs, ValuesPast64BitsAreNamedByTheirDigits) {
  const HostInt big = HostInt::past(+1, "9223372036854775808");
  const HostInt small = HostInt::past(-1, "-99999999999999999999");
  EXPECT_EQ(message_of([&] { check_partition(big); }),
            "partition 9223372036854775808 does not exist (0..127)");
  EXPECT_EQ(message_of([&] { check_offset(small); }),
            "offset -99999999999999999999 is outside every partition (0..262143)");
  EXPECT_EQ(message_of([&] { check_hbm_offset(0, big, std::uint64_t{1} << 40); }),
            "hbm offset 9223372036854775808 is past the HBM capacity of 1099511627776 bytes");
  EXPECT_EQ(message_of([&] { check_hbm_offset(0, small, 100); }),
            "hbm offset -99999999999999999999 is negative");
  EXPECT_EQ(message_of([&] { check_threads(big); }),
            "9223372036854775808 is not a count of host threads (1..1024)");
  EXPECT_EQ(message_of([&] { check_max_sim_ps(big); }),
            "9223372036854775808 ps is past the longest simulated time, 2^62 ps "
            "(4611686018427387904 ps)");
}

// The CLI's specs and watchdog options say what the check says, after the
// spec or the option.
TEST(HostArgs, TheCliSaysWhatTheCheckSays) {
  EXPECT_EQ(message_of([] { parse_mem_spec("sbuf:128:0=x.npy", false); }),
            "'sbuf:128:0=x.npy': " + message_of([] { check_partition(128); }));
  EXPECT_EQ(message_of([] { parse_mem_spec("psum:0:262144:1x4:u8=x.npy", true); }),
            "'psum:0:262144:1x4:u8=x.npy': " + message_of([] { check_offset(262144); }));
  EXPECT_EQ(message_of([] { parse_tile_spec("tile:32=x.npy", false); }),
            "'tile:32=x.npy': " + message_of([] { check_tile(32); }));
  EXPECT_EQ(message_of([] { parse_tile_spec("tile:3:70000=x.npy", false); }),
            "'tile:3:70000=x.npy': " + message_of([] { check_tile_col(70000); }));
  std::string why;
  double s = 0;
  EXPECT_FALSE(parse_wall_time("1e10", s, why));
  EXPECT_EQ(why, "'1e10' seconds is not in (0, 1e9]");
  EXPECT_TRUE(parse_wall_time("1e9", s, why));
  std::uint64_t ps = 0;
  EXPECT_FALSE(parse_sim_time("0", ps, why));
  EXPECT_EQ(why, "'0' must be more than 0");
  EXPECT_FALSE(parse_sim_time("99999999999999999999999ps", ps, why));
  EXPECT_EQ(why,
            "'99999999999999999999999ps' is past the longest simulated time, 2^62 ps "
            "(4611686018427387904 ps)");
  EXPECT_FALSE(parse_sim_time("4611686018427387905", ps, why));
  EXPECT_TRUE(parse_sim_time("4611686018427387904", ps, why));
  EXPECT_EQ(ps, std::uint64_t{1} << 62);
}

}  // namespace
