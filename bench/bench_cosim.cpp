// Co-simulated vs model-only wall time of the same instruction
// (docs/COSIM.md, docs/PERFORMANCE.md), measured side by side in one run.
//
// One 128-partition TensorDequantize (E2M1 MX group 8 and E2M1 group 0) and
// one 128-partition QuantizeMX (BF16 -> E4M3) through the platform C++ API:
// model-only, then with every RTL block attached (platform/cosim: 128
// Verilated dequant lanes on the POOL clock and 16 QuantizeMX block lanes on
// the DVE clock, every output compared). Each iteration forks a child that
// builds, loads and runs a fresh core and sends back the wall time of run()
// alone (UseManualTime). Counters: words_per_second (output words),
// rtl_cycles, x_model (on the cosim rows: co-simulated / model-only wall
// time of run(), the model-only run of the same workload forked right after
// each co-simulated one).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "bench/harness.h"
#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "platform/core/tpb_core.h"
#include "platform/cosim/cosim.h"

namespace {

using namespace tpb;

constexpr unsigned kChannels = 128;

struct Workload {
  bool qmx;  // QuantizeMX (else TensorDequantize)
  isa::DequantFmt fmt;
  unsigned group;
  std::uint16_t src_words, dst_words;  // per partition (QuantizeMX: BF16 elements, x4 words)
};
// 4 KiB of packed words per partition.
Workload e2m1_g8() { return {false, isa::DequantFmt::E2M1ToE5M2, 8, 1025, 1640}; }
Workload e2m1_g0() { return {false, isa::DequantFmt::E2M1ToE5M2, 0, 1024, 2048}; }
// 4 KiB of BF16 per partition: 2048 elements, 512 block columns.
Workload bf16_qmx() { return {true, isa::DequantFmt::Invalid, 0, 2048, 512}; }

struct Report {
  bool ok;
  double run_s;
  std::uint64_t words, rtl_cycles;
};

isa::RawInst dequant_inst(const Workload& w) {
  isa::S3D3TensDequant d;
  std::memset(&d, 0, sizeof d);
  d.header = {static_cast<std::uint8_t>(isa::Opcode::TensorDequantize), isa::kInstWordLen, 0, 0};
  d.in_dtype = d.out_dtype = static_cast<std::uint8_t>(isa::Dtype::Uint32);
  d.num_active_channels = kChannels;
  d.dequant_fmt = static_cast<std::uint8_t>(w.fmt);
  d.group_size = static_cast<std::uint8_t>(w.group);
  d.src_mem_pattern.t.start_addr.raw = isa::sbuf_addr(0, 0);
  d.src_mem_pattern.t.step_elem[0] = 1;
  d.src_mem_pattern.t.num_elem[0] = w.src_words;
  d.src_mem_pattern.t.num_elem[1] = d.src_mem_pattern.t.num_elem[2] = 1;
  d.dst_mem_pattern.t.start_addr.raw = isa::sbuf_addr(0, 0x8000);
  d.dst_mem_pattern.t.step_elem[0] = 1;
  d.dst_mem_pattern.t.num_elem[0] = w.dst_words;
  d.dst_mem_pattern.t.num_elem[1] = d.dst_mem_pattern.t.num_elem[2] = 1;
  return isa::encode(d);
}

isa::RawInst qmx_inst(const Workload& w) {
  isa::S3DMX1Quant q;
  std::memset(&q, 0, sizeof q);
  q.header = {0xE3, isa::kInstWordLen, 0, 0};
  q.num_active_channels = kChannels;
  q.in_dtype = static_cast<std::uint8_t>(isa::Dtype::Bf16);
  q.out_dtype = static_cast<std::uint8_t>(isa::Dtype::Fp8Exp4);
  q.src_mem_pattern.t.start_addr.raw = isa::sbuf_addr(0, 0);
  q.src_mem_pattern.t.step_elem[0] = 1;
  q.src_mem_pattern.t.num_elem[0] = w.src_words;
  q.src_mem_pattern.t.num_elem[1] = q.src_mem_pattern.t.num_elem[2] = 1;
  q.dst_mem_pattern.t.start_addr.raw = isa::sbuf_addr(0, 0x8000);
  q.dst_mem_pattern.t.scale_addr.raw = isa::sbuf_addr(0, 0x10000);
  q.dst_mem_pattern.t.num_elem[0] = w.dst_words;
  q.dst_mem_pattern.t.step_elem[0] = 1;
  return isa::encode(q);
}

Report run_once(const Workload& w, bool cosim) {
  auto* core = new platform::TpbCore("tpb", platform::default_core_config(isa::Arch::Mariana));
  cosim::Cosim* rtl = nullptr;
  if (cosim) {
    if (!cosim::linked_block(w.qmx ? "quantize_mx" : "dequant")) return {};
    rtl = cosim::attach(*core, {});
  }
  const isa::Queue engine = w.qmx ? isa::Queue::Dve : isa::Queue::Pool;
  core->load_queue(engine, {w.qmx ? qmx_inst(w) : dequant_inst(w)});
  std::mt19937 rng(7);
  std::vector<std::uint32_t> words(w.qmx ? w.src_words / 2 : w.src_words);
  for (unsigned p = 0; p < kChannels; ++p) {
    for (std::size_t i = 0; i < words.size(); ++i) {
      const auto r = static_cast<std::uint32_t>(rng());
      // BF16 pairs of exponents near 2^0 (no NaN); MX scale words near 2^0.
      words[i] = w.qmx                        ? (r & 0x807F807Fu) | 0x3F003F00u
                 : w.group == 8 && i % 5 == 0 ? 0x7F7E7D7Cu
                                              : r;
    }
    core->load_memory(isa::sbuf_addr(p, 0), words.data(), words.size() * 4);
  }
  const platform::CoreRunResult r = core->run();
  Report rep{r.status == platform::RunStatus::Ok, r.wall_seconds,
             std::uint64_t{kChannels} * w.dst_words, 0};
  if (rtl) {
    const trace::CosimStats s = rtl->stats();
    rep.ok = rep.ok && s.mismatches() == 0 && s.words_compared() == rep.words;
    for (const auto& b : s.blocks) rep.rtl_cycles += b.rtl_cycles;
  }
  return rep;
}

double model_seconds(const Workload& w) {
  return bench::in_child<Report>("model", [&] { return run_once(w, false); }).run_s;
}

void run_bench(benchmark::State& state, const Workload& w, bool cosim) {
  Report last{};
  double model_s = 0, own_s = 0;
  for (auto _ : state) {
    last = bench::in_child<Report>(cosim ? "cosim" : "model", [&] { return run_once(w, cosim); });
    if (!last.ok) {
      state.SkipWithError(cosim ? "co-simulated run failed (no RTL linked?)" : "run failed");
      return;
    }
    state.SetIterationTime(last.run_s);
    own_s += last.run_s;
    // The model-only run of the same workload, back to back (not timed here).
    if (cosim) model_s += model_seconds(w);
  }
  state.counters["words_per_second"] = benchmark::Counter(
      static_cast<double>(last.words), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rtl_cycles"] = static_cast<double>(last.rtl_cycles);
  if (cosim && model_s > 0) state.counters["x_model"] = own_s / model_s;
}

void BM_Model_E2M1_MX8_128x4KiB(benchmark::State& s) { run_bench(s, e2m1_g8(), false); }
void BM_Cosim_E2M1_MX8_128x4KiB(benchmark::State& s) { run_bench(s, e2m1_g8(), true); }
void BM_Model_E2M1_G0_128x4KiB(benchmark::State& s) { run_bench(s, e2m1_g0(), false); }
void BM_Cosim_E2M1_G0_128x4KiB(benchmark::State& s) { run_bench(s, e2m1_g0(), true); }
void BM_Model_QuantizeMx_Bf16_128x4KiB(benchmark::State& s) { run_bench(s, bf16_qmx(), false); }
void BM_Cosim_QuantizeMx_Bf16_128x4KiB(benchmark::State& s) { run_bench(s, bf16_qmx(), true); }

}  // namespace

BENCHMARK(BM_Model_E2M1_MX8_128x4KiB)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Cosim_E2M1_MX8_128x4KiB)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Model_E2M1_G0_128x4KiB)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Cosim_E2M1_G0_128x4KiB)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Model_QuantizeMx_Bf16_128x4KiB)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Cosim_QuantizeMx_Bf16_128x4KiB)->UseManualTime()->Unit(benchmark::kMillisecond);

// SystemC supplies main() and calls sc_main.
int sc_main(int argc, char** argv) { return tpb::bench::run_benchmarks(argc, argv); }
