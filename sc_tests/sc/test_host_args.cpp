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

TEST(HostArgs, EveryRangeEdge) {
  EXPECT_EQ(check_partition(0), 0u);
  EXPECT_EQ(check_partition(127), 127u);
  EXPECT_THROW(check_partition(128), RangeError);
  EXPECT_THROW(check_partition(-1), RangeError);
  EXPECT_EQ(check_offset(262143), 262143u);
  EXPECT_THROW(check_offset(262144), RangeError);
  EXPECT_THROW(check_offset(-1), RangeError);
  EXPECT_EQ(check_tile(31), 31u);
  EXPECT_THROW(check_tile(32), RangeError);
  EXPECT_EQ(check_tile_col(1), 1u);
  EXPECT_EQ(check_tile_col(65535), 65535u);
  EXPECT_THROW(check_tile_col(0), RangeError);
  EXPECT_THROW(check_tile_col(65536), RangeError);
  EXPECT_EQ(check_semaphore(63), 63u);
  EXPECT_THROW(check_semaphore(64), RangeError);
  EXPECT_EQ(check_semaphore_value(0xFFFFFFFFll), 0xFFFFFFFFu);
  EXPECT_THROW(check_semaphore_value(0x100000000ll), InputError);
  EXPECT_THROW(check_semaphore_value(-1), InputError);
  EXPECT_EQ(check_register(31), 31u);
  EXPECT_THROW(check_register(32), RangeError);
  EXPECT_EQ(check_threads(1), 1u);
  EXPECT_EQ(check_threads(1024), 1024u);
  EXPECT_THROW(check_threads(0), InputError);
  EXPECT_THROW(check_threads(1025), InputError);
  EXPECT_EQ(check_max_sim_ps(1), 1u);
  EXPECT_EQ(check_max_sim_ps(1ll << 62), std::uint64_t{1} << 62);
  EXPECT_THROW(check_max_sim_ps(0), InputError);
  EXPECT_THROW(check_max_sim_ps((1ll << 62) + 1), InputError);
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
