// Traces recorded by the platform: per-engine signals, semaphores, memory
// byte counters, Perfetto slices per instruction and bundle (balanced also
// after a fault), and the debug_cmd 1 trace marker.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "firmware_stubs/builtin_kernels.h"
#include "models/kernel/kernel.h"
#include "models/sc/engine/engine_tracer.h"
#include "sc_tests/sc/test_platform_harness.h"

using namespace tpb;
using namespace tpb::platref;

namespace {

std::map<std::string, std::uint32_t> signal_ids(const trace::Recorder& rec) {
  std::map<std::string, std::uint32_t> ids;
  for (std::uint32_t i = 0; i < rec.signals().size(); ++i)
    ids[rec.signals()[i].scope + "." + rec.signals()[i].name] = i;
  return ids;
}

std::vector<std::uint64_t> values_of(const trace::Recorder& rec, std::uint32_t id) {
  std::vector<std::uint64_t> v;
  for (const auto& c : rec.sorted_changes())
    if (c.signal == id) v.push_back(c.value);
  return v;
}

}  // namespace

TEST(PlatformTrace, SignalsSlicesAndMarker) {
  platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  auto* core = new platform::TpbCore("tpb", cfg);
  platform::CoreRunSetup traced;
  traced.trace.signals = traced.trace.slices = true;
  isa::Events post{};
  post.update_mode = 1, post.update_idx = 7;
  isa::RawInst i0 = dequant_inst(1, 0, 1, t3d(isa::sbuf_addr(40, 0), 1, 4),
                                 t3d(isa::sbuf_addr(40, 0x100), 1, 8), post);
  i0[2] = 1;     // debug_cmd: trace marker
  i0[3] = 0x5a;  // debug_hint
  isa::RawInst i1 = dequant_inst(3, 8, 1, t3d(isa::sbuf_addr(40, 0), 1, 5),
                                 t3d(isa::sbuf_addr(40, 0x200), 1, 8), post);
  core->load_queue(isa::Queue::Pool, {i0, i1});
  const auto r = core->run(traced);
  ASSERT_EQ(r.status, platform::RunStatus::Ok) << r.message;
  const trace::Recorder& rec = core->recorder();
  const auto ids = signal_ids(rec);
  for (const char* s : {"tpb.pool.busy", "tpb.pool.opcode", "tpb.pool.pc", "tpb.pool.inst_index",
                        "tpb.pool.marker_hint", "tpb.sem.sem0", "tpb.sem.sem63",
                        "tpb.sbuf.q1.bytes_read", "tpb.sbuf.q1.bytes_written", "tpb.dve.busy"})
    EXPECT_TRUE(ids.count(s)) << s;
  EXPECT_EQ(values_of(rec, ids.at("tpb.sem.sem7")), (std::vector<std::uint64_t>{1, 2}));
  // The two are independent: i1 issues after i0's initiation interval (150
  // + its stream), before i0's tail ends (SPEC §8): the engine stays busy,
  // two instructions in flight for a while.
  EXPECT_EQ(values_of(rec, ids.at("tpb.pool.busy")), (std::vector<std::uint64_t>{1, 0}));
  EXPECT_EQ(values_of(rec, ids.at("tpb.pool.in_flight")), (std::vector<std::uint64_t>{1, 2, 1, 0}));
  EXPECT_EQ(values_of(rec, ids.at("tpb.pool.retired_index")), (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(values_of(rec, ids.at("tpb.pool.marker_hint")), (std::vector<std::uint64_t>{0x5a}));
  EXPECT_EQ(values_of(rec, ids.at("tpb.sbuf.q1.bytes_written")),
            (std::vector<std::uint64_t>{32, 64}));
  // pc walks the bundle VAs: the trampoline first, proc_4bit_mx_8 in i1.
  const auto pcs = values_of(rec, ids.at("tpb.pool.pc"));
  ASSERT_FALSE(pcs.empty());
  EXPECT_EQ(pcs.front(), 0x01004dc4u);
  EXPECT_NE(std::find(pcs.begin(), pcs.end(), 0x0100511cu), pcs.end());
  int depth = 0, instr = 0, markers = 0;
  for (const auto& s : rec.sorted_slices()) {
    if (s.kind == trace::SliceKind::Begin) {
      ++depth;
      if (s.name == "tensor_dequantize") ++instr;
    } else if (s.kind == trace::SliceKind::End) {
      --depth;
    } else if (s.kind == trace::SliceKind::Instant && s.name == "marker") {
      ++markers;
      EXPECT_NE(s.args.find("90"), std::string::npos) << s.args;
    }
    EXPECT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
  EXPECT_EQ(instr, 2);
  EXPECT_EQ(markers, 1);
  // The overlapping one is on a lane of its own below the pool's track.
  std::vector<std::string> threads;
  for (const auto& t : rec.tracks()) threads.push_back(t.thread);
  EXPECT_NE(std::find(threads.begin(), threads.end(), "pool lane 1"), threads.end());
}

TEST(PlatformTrace, SlicesBalancedAfterAFault) {
  platform::CoreConfig cfg = platform::default_core_config(isa::Arch::Mariana);
  auto* core = new platform::TpbCore("tpb", cfg);
  platform::CoreRunSetup traced;
  traced.trace.signals = traced.trace.slices = true;
  core->set_reg(isa::Queue::Pool, 1, isa::sbuf_addr(3, 0x3FFF8));  // run crosses the slot end
  core->load_queue(isa::Queue::Pool, {dequant_inst(1, 0, 1, t3d(0x80000001u, 1, 4),
                                                   t3d(isa::sbuf_addr(3, 0x100), 1, 8))});
  const auto r = core->run(traced);
  ASSERT_EQ(r.status, platform::RunStatus::Fault);
  EXPECT_NE(r.message.find("outside the partition"), std::string::npos) << r.message;
  int depth = 0;
  for (const auto& s : core->recorder().sorted_slices())
    depth += s.kind == trace::SliceKind::Begin ? 1 : s.kind == trace::SliceKind::End ? -1 : 0;
  EXPECT_EQ(depth, 0);
  const auto busy = values_of(core->recorder(), signal_ids(core->recorder()).at("tpb.pool.busy"));
  ASSERT_FALSE(busy.empty());
  EXPECT_EQ(busy.back(), 0u);
}

// The instruction slice's args, {"index":N,"opcode":"0xHH"}, for indices
// from 0 to the largest and every opcode nibble: the expected text from
// snprintf, and it parses as JSON with the same values.
TEST(EngineTracer, InstructionSliceArgsForEveryIndexWidth) {
  const std::uint64_t indices[] = {
      0, 9, 10, 99, 12345, 0xFFFFFFFFu, 0x100000000ull, 9999999999999999999ull, UINT64_MAX};
  const std::uint8_t opcodes[] = {0x00, 0x09, 0x0a, 0x0f, 0x7b, 0xa0, 0xf0, 0xff};
  trace::Recorder rec;
  rec.enable_slices(true);
  sc::EngineTracer tracer(rec, isa::Queue::Pool, fw::builtin_kernels().num_bundles());
  const isa::RawInst raw{};
  std::vector<std::string> expected;
  std::uint64_t t = 0;
  for (std::uint64_t index : indices)
    for (std::uint8_t op : opcodes) {
      tracer.on_issue(sc::IssueEvent{isa::Queue::Pool, index, op, &raw, t});
      sc::RetireRecord r{};
      r.end_ps = t + 1;
      tracer.on_retire(r);
      t += 2;
      char text[64];
      std::snprintf(text, sizeof text, "{\"index\":%llu,\"opcode\":\"0x%02x\"}",
                    static_cast<unsigned long long>(index), op);
      expected.push_back(text);
    }
  std::vector<std::string> got;
  for (const auto& s : rec.sorted_slices())
    if (s.kind == trace::SliceKind::Begin) got.push_back(s.args);
  ASSERT_EQ(got, expected);
  const auto j = nlohmann::json::parse(got.back());
  EXPECT_EQ(j.at("index").get<std::uint64_t>(), UINT64_MAX);
  EXPECT_EQ(j.at("opcode").get<std::string>(), "0xff");
}
