// Perfetto / Chrome trace-event JSON: parsed with nlohmann and with Python's
// json module; complete (X) slices per track, monotonic ts, metadata, args.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "models/trace/perfetto_writer.h"
#include "sc_tests/unit/test_trace_util.h"

namespace tpb::trace {
namespace {

using nlohmann::json;

Recorder perfetto_scenario() {
  Recorder r;
  r.enable_slices(true);
  r.enable_signals(true);
  TrackId pool = r.add_track("tpb core", "pool");
  TrackId dve = r.add_track("tpb core", "dve");
  TrackId q0 = r.add_track("dma", "q0");
  // Recorded out of order, as decoupled engines do.
  r.end(pool, 4000);
  r.begin(pool, 2000, "TensorDequantize", R"({"op":123,"idx":16})");
  r.begin(pool, 2500, "proc_4bit_mx_8");
  r.end(pool, 3000);
  r.instant(dve, 1000, "marker", "not json");
  r.counter(q0, 1500, "bytes", 42.5);
  r.end(dve, 1200);                  // nothing open on dve: dropped
  r.begin(dve, 5000, "QuantizeMX");  // never ends (fault)
  SignalId s = r.add_signal("tpb", "busy", 1);
  r.set(s, 6000, 1);  // last_time = 6000 ps
  return r;
}

json load(const std::string& path) {
  return json::parse(testutil::slurp(path));  // throws (fails the test) if invalid
}

TEST(TracePerfetto, TopLevelAndMetadata) {
  const std::string dir = testutil::scratch("pf");
  write_perfetto(perfetto_scenario(), dir + "/t.json");
  const json j = load(dir + "/t.json");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.at("displayTimeUnit"), "ns");
  ASSERT_TRUE(j.at("traceEvents").is_array());
  std::map<int, std::string> process;                 // pid -> name
  std::map<std::pair<int, int>, std::string> thread;  // (pid, tid) -> name
  for (const auto& e : j["traceEvents"]) {
    if (e.at("ph") != "M") continue;
    if (e.at("name") == "process_name") process[e.at("pid")] = e.at("args").at("name");
    if (e.at("name") == "thread_name") thread[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
  }
  EXPECT_EQ(process, (std::map<int, std::string>{{1, "tpb core"}, {2, "dma"}}));
  EXPECT_EQ(thread, (std::map<std::pair<int, int>, std::string>{
                        {{1, 1}, "pool"}, {{1, 2}, "dve"}, {{2, 3}, "q0"}}));
}

TEST(TracePerfetto, SlicesAreCompleteEventsPerTrackWithMonotonicTime) {
  const std::string dir = testutil::scratch("pf");
  write_perfetto(perfetto_scenario(), dir + "/t.json");
  const json j = load(dir + "/t.json");
  double last_ts = -1;
  std::map<int, std::vector<std::string>> seq;  // tid -> "ph name ts [dur]"
  for (const auto& e : j["traceEvents"]) {
    if (e.at("ph") == "M") continue;
    const double ts = e.at("ts").get<double>();
    EXPECT_GE(ts, last_ts) << e.dump();
    last_ts = ts;
    const std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "X" || ph == "i" || ph == "C") << e.dump();
    std::string s = ph + " " + e.value("name", std::string()) + " " + std::to_string(ts);
    if (ph == "X") s += " " + std::to_string(e.at("dur").get<double>());
    seq[e.at("tid").get<int>()].push_back(s);
  }
  // ts = ps / 1e6 (microseconds): 2000 ps = 0.002 us; the slice opened at
  // 2000 closes at 4000 (the End recorded first, out of order), the nested
  // one 2500..3000.
  EXPECT_EQ(seq[1], (std::vector<std::string>{"X TensorDequantize 0.002000 0.002000",
                                              "X proc_4bit_mx_8 0.002500 0.000500"}));
  // The End at 1200 closes nothing; QuantizeMX never ends: it runs to 6000.
  EXPECT_EQ(seq[2],
            (std::vector<std::string>{"i marker 0.001000", "X QuantizeMX 0.005000 0.001000"}));
  EXPECT_EQ(seq[3], (std::vector<std::string>{"C bytes 0.001500"}));
}

TEST(TracePerfetto, ArgsInstantScopeCountersAndUnterminatedSlices) {
  const std::string dir = testutil::scratch("pf");
  write_perfetto(perfetto_scenario(), dir + "/t.json");
  const json j = load(dir + "/t.json");
  int checked = 0;
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e.at("ph");
    if (ph == "X" && e.at("name") == "TensorDequantize") {
      EXPECT_EQ(e.at("args"), json({{"op", 123}, {"idx", 16}}));
      EXPECT_EQ(e.at("pid"), 1);
      ++checked;
    } else if (ph == "X" && e.at("name") == "proc_4bit_mx_8") {
      EXPECT_FALSE(e.contains("args")) << e.dump();
      ++checked;
    } else if (ph == "i") {
      EXPECT_EQ(e.at("s"), "t");
      EXPECT_EQ(e.at("args"), json({{"text", "not json"}}));
      ++checked;
    } else if (ph == "C") {
      EXPECT_EQ(e.at("pid"), 2);
      EXPECT_EQ(e.at("args"), json({{"bytes", 42.5}}));
      ++checked;
    } else if (ph == "X" && e.at("tid") == 2) {
      EXPECT_DOUBLE_EQ(e.at("ts").get<double>() + e.at("dur").get<double>(), 0.006);
      EXPECT_EQ(e.at("args").at("unterminated"), true);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 5);
}

TEST(TracePerfetto, PythonJsonModuleLoadsIt) {
  ASSERT_EQ(::access("/usr/bin/python3", X_OK), 0)
      << "/usr/bin/python3 is missing: run `make` (scripts/install-deps.sh installs it)";
  const std::string dir = testutil::scratch("pf");
  write_perfetto(perfetto_scenario(), dir + "/t.json");
  // Python counts phases independently of nlohmann.
  const auto r = testutil::run_cmd(
      "/usr/bin/python3 -c 'import json,sys,collections; d=json.load(open(sys.argv[1])); "
      "c=collections.Counter(e[\"ph\"] for e in d[\"traceEvents\"]); "
      "print(d[\"displayTimeUnit\"], c[\"M\"], c[\"X\"], c[\"B\"] + c[\"E\"], c[\"i\"], "
      "c[\"C\"])' " +
      dir + "/t.json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // M: 2 processes x (name, sort) + 3 threads x (name, sort) = 10.
  EXPECT_EQ(r.out, "ns 10 3 0 1 1\n");  // 3 slices, no B/E
}

TEST(TracePerfetto, DisabledSlicesGiveOnlyMetadata) {
  Recorder r;
  TrackId t = r.add_track("p", "t");
  r.begin(t, 10, "x");
  const std::string dir = testutil::scratch("pf");
  write_perfetto(r, dir + "/t.json");
  const json j = load(dir + "/t.json");
  for (const auto& e : j["traceEvents"]) EXPECT_EQ(e.at("ph"), "M");
  EXPECT_EQ(j["traceEvents"].size(), 4u);
}

// The writer keeps each name's JSON text by the caller's name id; an id is
// only a hint: events that reuse an id for another name (a caller of the
// sink that does not intern) still get their own names, escapes included.
TEST(TracePerfetto, NamesAreTheirOwnWhateverIdTheyComeWith) {
  const std::string dir = testutil::scratch("pf_names");
  const std::vector<std::string> names = {
      "plain", "with \"quotes\"", "back\\slash", "tab\there", "line\nbreak", "ctl\x01", "plain"};
  {
    PerfettoWriter w(dir + "/t.json");
    w.start({Track{"p", "t", false}});
    Picos t = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
      for (std::uint32_t id : {0u, static_cast<std::uint32_t>(i), 7u}) {
        SliceRecord b{};
        b.t = t;
        b.kind = SliceKind::Begin;
        b.name = id;
        w.event(b, names[i], "");
        SliceRecord e{};
        e.t = t + 1000000;
        e.kind = SliceKind::End;
        e.name = UINT32_MAX;
        w.event(e, {}, {});
        t += 2000000;
      }
    }
    w.finish(t);
    EXPECT_EQ(w.error(), "");
  }
  std::vector<std::string> got;
  const json j = load(dir + "/t.json");
  for (const auto& e : j["traceEvents"])
    if (e.at("ph") == "X") got.push_back(e.at("name"));
  std::vector<std::string> want;
  for (const auto& n : names)
    for (int k = 0; k < 3; ++k) want.push_back(n);
  EXPECT_EQ(got, want);
}

// Instruction slices keep their (index, opcode) as numbers until delivered:
// streamed over many flushes, with the events past each flush's watermark
// carried to the next, every slice's args are its own, as printf writes them.
TEST(TracePerfetto, StreamedInstructionSlicesCarryTheirIndexAndOpcode) {
  const std::string dir = testutil::scratch("pf_instr");
  std::vector<std::pair<std::uint64_t, unsigned>> want;
  for (bool async : {false, true}) {
    std::mt19937_64 rng(99);
    want.clear();
    const std::string path = dir + (async ? "/a.json" : "/s.json");
    PerfettoWriter w(path);
    Recorder rec;
    rec.set_async(async);
    rec.enable_slices(true);
    const TrackId tr = rec.add_track("core", "pool");
    const NameId n = rec.intern("tensor_dequantize");
    Picos now = 0;
    rec.set_watermark([&] { return now > 50000 ? now - 50000 : 0; });  // a lagging watermark
    rec.attach(nullptr, &w);
    for (int i = 0; i < 50000; ++i) {  // 133,000 events: several flushes
      const std::uint64_t index = rng() >> (rng() % 64);
      const auto op = static_cast<unsigned>(rng() % 256);
      rec.begin_instruction(tr, now, n, index, static_cast<std::uint8_t>(op));
      rec.end(tr, now + 700);
      if (i % 3 == 0) rec.begin(tr, now + 800, "text args", R"({"k":1})"), rec.end(tr, now + 900);
      want.emplace_back(index, op);
      now += 1000;
    }
    rec.finish(now);
    EXPECT_EQ(w.error(), "");
    std::size_t k = 0;
    const json j = load(path);
    for (const auto& e : j["traceEvents"]) {
      if (e.at("ph") != "X") continue;
      if (e.at("name") == "text args") {
        EXPECT_EQ(e.at("args").dump(), R"({"k":1})");
        continue;
      }
      ASSERT_LT(k, want.size());
      char text[64];
      std::snprintf(text, sizeof text, "{\"index\":%llu,\"opcode\":\"0x%02x\"}",
                    static_cast<unsigned long long>(want[k].first), want[k].second);
      ASSERT_EQ(json::parse(text), e.at("args")) << k;
      ++k;
    }
    EXPECT_EQ(k, want.size());
  }
  EXPECT_EQ(testutil::slurp(dir + "/a.json"), testutil::slurp(dir + "/s.json"));
}

TEST(TracePerfetto, UnwritablePathThrowsNamingIt) {
  const std::string path = "/nonexistent-tpbsim-dir/t.json";
  try {
    write_perfetto(perfetto_scenario(), path);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tpb::trace
