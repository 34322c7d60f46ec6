// Recorder: enable switches, masking, (time, insertion) ordering, bad ids.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/trace/recorder.h"

namespace tpb::trace {
namespace {

TEST(TraceRecorder, DisabledRecorderDropsEverything) {
  Recorder r;
  EXPECT_FALSE(r.signals_enabled());
  EXPECT_FALSE(r.slices_enabled());
  SignalId s = r.add_signal("tpb.pool", "busy", 1);
  TrackId k = r.add_track("tpb core", "pool");
  r.set(s, 100, 1);
  r.begin(k, 200, "x");
  r.end(k, 300);
  r.instant(k, 400, "m");
  r.counter(k, 500, "c", 1.0);
  EXPECT_TRUE(r.sorted_changes().empty());
  EXPECT_TRUE(r.sorted_slices().empty());
  EXPECT_EQ(r.last_time(), 0u);
  // Registration still works while disabled, so writers can list the signals.
  ASSERT_EQ(r.signals().size(), 1u);
  EXPECT_EQ(r.signals()[0].scope, "tpb.pool");
  ASSERT_EQ(r.tracks().size(), 1u);
  EXPECT_EQ(r.tracks()[0].thread, "pool");
}

TEST(TraceRecorder, OutputsAreEnabledIndependently) {
  Recorder r;
  r.enable_signals(true);
  SignalId s = r.add_signal("tpb", "a", 8);
  TrackId k = r.add_track("p", "t");
  r.set(s, 10, 5);
  r.begin(k, 20, "dropped");
  EXPECT_EQ(r.sorted_changes().size(), 1u);
  EXPECT_TRUE(r.sorted_slices().empty());
  EXPECT_EQ(r.last_time(), 10u);

  r.enable_signals(false);
  r.enable_slices(true);
  r.set(s, 30, 6);
  r.begin(k, 40, "kept");
  EXPECT_EQ(r.sorted_changes().size(), 1u);
  ASSERT_EQ(r.sorted_slices().size(), 1u);
  EXPECT_EQ(r.sorted_slices()[0].name, "kept");
  EXPECT_EQ(r.last_time(), 40u);
}

TEST(TraceRecorder, ChangesSortByTimeThenInsertion) {
  Recorder r;
  r.enable_signals(true);
  SignalId a = r.add_signal("tpb", "a", 8);
  SignalId b = r.add_signal("tpb", "b", 8);
  // Decoupled engines report out of time order.
  r.set(a, 50, 1);
  r.set(b, 10, 2);
  r.set(a, 10, 3);
  r.set(b, 30, 4);
  r.set(a, 10, 5);
  const auto c = r.sorted_changes();
  ASSERT_EQ(c.size(), 5u);
  const std::uint64_t want_t[] = {10, 10, 10, 30, 50};
  const std::uint64_t want_v[] = {2, 3, 5, 4, 1};
  const std::uint32_t want_s[] = {b.v, a.v, a.v, b.v, a.v};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(c[i].t, want_t[i]) << i;
    EXPECT_EQ(c[i].value, want_v[i]) << i;
    EXPECT_EQ(c[i].signal, want_s[i]) << i;
  }
  EXPECT_EQ(r.last_time(), 50u);
}

TEST(TraceRecorder, EventsRecordedLateComeOutAsAStableSortByTime) {
  // A pipelined engine records its retire at issue (a later time), then the
  // next issues (earlier); a decoupled engine far behind records much
  // earlier times. Either way the order is a stable sort of the recording
  // order by time (computed here with std::stable_sort).
  Recorder r;
  r.enable_signals(true);
  r.enable_slices(true);
  SignalId s = r.add_signal("tpb", "v", 32);
  TrackId k = r.add_track("p", "t");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> rec;  // (t, value)
  std::uint64_t now = 1000, x = 12345;
  for (std::uint64_t i = 0; i < 400; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::uint64_t t = now;
    if (x >> 60 < 5) t = now + 300 + (x >> 40) % 200;                // a retire ahead
    if (x >> 60 == 15) t = now > 900 ? now - 900 : 0;                // far behind
    if ((x >> 56 & 3) == 0) t = rec.empty() ? t : rec.back().first;  // a tie
    rec.emplace_back(t, i);
    r.set(s, t, i);
    r.instant(k, t, std::to_string(i));
    now += (x >> 33) % 40;
  }
  auto want = rec;
  std::stable_sort(want.begin(), want.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const auto c = r.sorted_changes();
  const auto e = r.sorted_slices();
  ASSERT_EQ(c.size(), want.size());
  ASSERT_EQ(e.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(c[i].t, want[i].first) << i;
    EXPECT_EQ(c[i].value, want[i].second) << i;
    EXPECT_EQ(e[i].t, want[i].first) << i;
    EXPECT_EQ(e[i].name, std::to_string(want[i].second)) << i;
  }
}

TEST(TraceRecorder, ValuesAndInitialAreMaskedToWidth) {
  Recorder r;
  r.enable_signals(true);
  SignalId s4 = r.add_signal("tpb", "nibble", 4, 0x1f3);
  SignalId s64 = r.add_signal("tpb", "wide", 64, ~0ull);
  EXPECT_EQ(r.signals()[s4.v].initial, 0x3u);
  EXPECT_EQ(r.signals()[s64.v].initial, ~0ull);
  r.set(s4, 1, 0x1f);
  r.set(s64, 2, 0x8000000000000001ull);
  const auto c = r.sorted_changes();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].value, 0xfu);
  EXPECT_EQ(c[1].value, 0x8000000000000001ull);
}

TEST(TraceRecorder, SlicesKeepKindNameArgsAndOrder) {
  Recorder r;
  r.enable_slices(true);
  TrackId p = r.add_track("tpb core", "pool");
  TrackId d = r.add_track("tpb core", "dve");
  r.end(p, 900);
  r.begin(p, 100, "TensorDequantize", R"({"idx":3})");
  r.counter(d, 100, "bytes", 2.5);
  r.instant(d, 50, "marker");
  const auto s = r.sorted_slices();
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].kind, SliceKind::Instant);
  EXPECT_EQ(s[0].t, 50u);
  EXPECT_EQ(s[0].name, "marker");
  EXPECT_EQ(s[1].kind, SliceKind::Begin);
  EXPECT_EQ(s[1].track, p.v);
  EXPECT_EQ(s[1].args, R"({"idx":3})");
  EXPECT_EQ(s[2].kind, SliceKind::Counter);
  EXPECT_EQ(s[2].track, d.v);
  EXPECT_DOUBLE_EQ(s[2].counter_value, 2.5);
  EXPECT_EQ(s[3].kind, SliceKind::End);
  EXPECT_EQ(s[3].t, 900u);
  EXPECT_EQ(r.last_time(), 900u);
}

TEST(TraceRecorder, BadWidthIsRejectedWithTheSignalName) {
  Recorder r;
  try {
    r.add_signal("tpb.pool", "zero", 0);
    FAIL() << "width 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tpb.pool.zero"), std::string::npos) << e.what();
  }
  EXPECT_THROW(r.add_signal("tpb", "big", 65), std::invalid_argument);
  EXPECT_THROW(r.add_signal("tpb", "", 1), std::invalid_argument);
  EXPECT_NO_THROW(r.add_signal("tpb", "ok64", 64));
}

TEST(TraceRecorder, UnknownIdsAreRejectedWhenEnabled) {
  Recorder r;
  r.enable_signals(true);
  r.enable_slices(true);
  EXPECT_THROW(r.set(SignalId{}, 1, 1), std::out_of_range);
  EXPECT_THROW(r.set(SignalId{0}, 1, 1), std::out_of_range);
  EXPECT_THROW(r.begin(TrackId{}, 1, "x"), std::out_of_range);
  EXPECT_TRUE(r.sorted_changes().empty());
}

}  // namespace
}  // namespace tpb::trace
