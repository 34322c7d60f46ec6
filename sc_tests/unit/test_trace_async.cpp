// The recorder's sinks on their own host thread (Recorder::set_async): the
// same files, byte for byte, as with the sinks on the caller's thread, for
// streams long enough to fill the writer's queue; a sink's failure reaches
// the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>

#include "models/trace/perfetto_writer.h"
#include "models/trace/recorder.h"
#include "models/trace/vcd_writer.h"
#include "sc_tests/unit/test_trace_util.h"

namespace tpb::trace {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Three decoupled "engines", each ahead of the global time by a random
// stretch, recording signal changes, nested slices, instants and counters
// (names interned along the way) as a traced run does.
void record_stream(Recorder& rec, std::uint64_t seed, unsigned steps) {
  std::mt19937_64 rng(seed);
  std::vector<SignalId> sigs;
  for (unsigned e = 0; e < 3; ++e) {
    const std::string scope = "tpb.e" + std::to_string(e);
    sigs.push_back(rec.add_signal(scope, "busy", 1));
    sigs.push_back(rec.add_signal(scope, "index", 32));
    sigs.push_back(rec.add_signal(scope, "bytes", 64));
  }
  std::vector<TrackId> tracks;
  for (unsigned e = 0; e < 3; ++e) tracks.push_back(rec.add_track("core", "e" + std::to_string(e)));
  Picos global = 0;
  Picos clock[3] = {0, 0, 0};
  std::uint64_t bytes[3] = {0, 0, 0};
  rec.set_watermark([&] { return global; });
  rec.enable_signals(true);
  rec.enable_slices(true);
  for (unsigned i = 0; i < steps; ++i) {
    const unsigned e = static_cast<unsigned>(rng() % 3);
    const Picos t0 = clock[e];
    const Picos t1 = t0 + 1 + rng() % 5000;
    const std::string name = "op" + std::to_string(rng() % 40);  // interned as it appears
    rec.set(sigs[3 * e], t0, 1);
    rec.set(sigs[3 * e + 1], t0, i);
    rec.begin(tracks[e], t0, name, "{\"index\":" + std::to_string(i) + "}");
    if (rng() % 4 == 0) {
      rec.begin(tracks[e], t0 + 1, "inner \"q\"");  // a name that needs escapes
      rec.end(tracks[e], t1 - 1);
    }
    if (rng() % 16 == 0) rec.instant(tracks[e], t0, "marker", "text, not JSON");
    if (rng() % 8 == 0) rec.counter(tracks[e], t1, "depth", static_cast<double>(rng() % 100));
    rec.end(tracks[e], t1);
    bytes[e] += rng() % 4096;
    rec.set(sigs[3 * e + 2], t1, bytes[e]);
    rec.set(sigs[3 * e], t1, 0);
    clock[e] = t1;
    global = std::min({clock[0], clock[1], clock[2]});
  }
  rec.finish(std::max({clock[0], clock[1], clock[2]}));
}

struct Files {
  std::string vcd, json;
};

Files traced(bool async, std::uint64_t seed, unsigned steps, const std::string& dir,
             TraceWindow window = {}) {
  const std::string tag = dir + (async ? "/async" : "/sync") + std::to_string(seed);
  VcdWriter vcd(tag + ".vcd", "tpb", window);
  PerfettoWriter perfetto(tag + ".json", window);
  Recorder rec;
  rec.set_async(async);
  rec.attach(&vcd, &perfetto);
  EXPECT_EQ(rec.async(), async);
  record_stream(rec, seed, steps);
  EXPECT_EQ(vcd.error(), "");
  EXPECT_EQ(perfetto.error(), "");
  return {slurp(tag + ".vcd"), slurp(tag + ".json")};
}

TEST(TraceAsyncWriter, SameBytesAsTheSinksOnTheCallersThread) {
  const std::string dir = testutil::scratch("trace_async");
  // 60,000 steps make ~400,000 events: a dozen flushes of 32,768, more than
  // the writer's queue holds, so the recorder also waits for it.
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const Files a = traced(false, seed, 60000, dir);
    const Files b = traced(true, seed, 60000, dir);
    ASSERT_GT(a.vcd.size(), 1000000u);
    EXPECT_TRUE(a.vcd == b.vcd) << "seed " << seed;
    EXPECT_TRUE(a.json == b.json) << "seed " << seed;
  }
}

TEST(TraceAsyncWriter, SameBytesInAWindowAndForAShortStream) {
  const std::string dir = testutil::scratch("trace_async_window");
  const TraceWindow w{200000, 900000};
  const Files a = traced(false, 7, 3000, dir, w);
  const Files b = traced(true, 7, 3000, dir, w);
  EXPECT_TRUE(a.vcd == b.vcd);
  EXPECT_TRUE(a.json == b.json);
  const Files c = traced(false, 8, 3, dir);  // fewer events than one flush
  const Files d = traced(true, 8, 3, dir);
  EXPECT_TRUE(c.vcd == d.vcd);
  EXPECT_TRUE(c.json == d.json);
  EXPECT_NE(c.vcd.find("$enddefinitions"), std::string::npos);
}

// Streaming hands each flush's events over and keeps those past the
// watermark for the next: the files are the ones written at the end from a
// recorder that kept every event in memory and sorted them all at once.
TEST(TraceAsyncWriter, StreamedFilesAreTheFilesOfTheWholeRecordingSorted) {
  const std::string dir = testutil::scratch("trace_stream_vs_memory");
  for (std::uint64_t seed : {4u, 5u}) {
    Recorder whole;
    record_stream(whole, seed, 30000);
    ASSERT_GT(whole.changes_recorded() + whole.slices_recorded(), 4u * 32768);  // several flushes
    write_vcd(whole, dir + "/whole.vcd");
    write_perfetto(whole, dir + "/whole.json");
    const Files sync = traced(false, seed, 30000, dir);
    const Files async = traced(true, seed, 30000, dir);
    EXPECT_TRUE(sync.vcd == slurp(dir + "/whole.vcd")) << "seed " << seed;
    EXPECT_TRUE(sync.json == slurp(dir + "/whole.json")) << "seed " << seed;
    EXPECT_TRUE(async.vcd == sync.vcd) << "seed " << seed;
    EXPECT_TRUE(async.json == sync.json) << "seed " << seed;
  }
}

// A sink that fails on its n-th change.
class FailingSink : public ChangeSink {
 public:
  explicit FailingSink(unsigned n) : n_(n) {}
  void start(const std::vector<Signal>&) override {}
  void change(const ValueChange&) override {
    if (++seen_ == n_) throw std::runtime_error("disk full");
  }
  void finish(Picos) override {}

 private:
  unsigned n_, seen_ = 0;
};

TEST(TraceAsyncWriter, ASinksFailureReachesTheCaller) {
  for (const bool async : {false, true}) {
    FailingSink sink(50000);
    Recorder rec;
    rec.set_async(async);
    rec.attach(&sink, nullptr);
    try {
      record_stream(rec, 5, 20000);
      ADD_FAILURE() << "no exception (async " << async << ")";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "disk full");
    }
  }
}

// Counts the changes it is given.
class CountingSink : public ChangeSink {
 public:
  void start(const std::vector<Signal>&) override {}
  void change(const ValueChange&) override { ++seen; }
  void finish(Picos) override { finished = true; }
  std::atomic<std::uint64_t> seen{0};
  bool finished = false;
};

TEST(TraceAsyncWriter, DetachStopsUsingTheSinksAtOnce) {
  auto sink = std::make_unique<CountingSink>();
  Recorder rec;
  rec.set_async(true);
  rec.attach(sink.get(), nullptr);
  rec.enable_signals(true);
  const SignalId s = rec.add_signal("tpb", "v", 32);
  Picos global = 0;
  rec.set_watermark([&] { return global; });
  for (Picos t = 1; t <= 200000; ++t) {  // six hand-overs of 32,768
    rec.set(s, t, t);
    global = t;
  }
  rec.detach();
  EXPECT_LE(sink->seen.load(), 200000u);
  EXPECT_FALSE(sink->finished);  // detached, not finished
  sink.reset();  // the sink goes, as a caller's does when an exception leaves its run
  for (Picos t = 200001; t <= 300000; ++t) {
    rec.set(s, t, t);  // kept in memory now: nothing to deliver to
    global = t;
  }
  EXPECT_EQ(rec.changes_recorded(), 300000u);
}

}  // namespace
}  // namespace tpb::trace
