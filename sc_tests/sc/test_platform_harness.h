// A TensorDequantize test bench over the platform's C++ API: cases with
// explicit src/dst patterns, source windows filled with deterministic words,
// destination windows pre-filled with a guard byte, and the expected image
// built by the independent reference (test_platform_ref.h).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/isa/program.h"
#include "platform/core/tpb_core.h"
#include "sc_tests/sc/test_platform_ref.h"

namespace tpb::platref {

inline constexpr std::uint32_t kWindowBytes = 0x2000;

// Loads assembler text (after ".arch mariana") into the core.
inline void load_mariana_asm(platform::TpbCore& core, const std::string& text) {
  core.load_program(isa::parse_program(".arch mariana\n" + text, "test.tpb"));
}

struct DequantCase {
  unsigned fmt, group;
  // Patterns with start = the byte offset inside the window (partition bits
  // and window base are added by the bench).
  isa::Tensor3D src, dst;
  std::uint32_t addr_marker = 0;  // ORed into both start addresses
};

// Element word offsets of a pattern relative to its start, in order.
inline std::vector<std::int64_t> pattern_offsets(const isa::Tensor3D& t) {
  std::vector<std::int64_t> out;
  for (int i2 = 0; i2 < t.num_elem[2]; ++i2)
    for (int i1 = 0; i1 < t.num_elem[1]; ++i1)
      for (int i0 = 0; i0 < t.num_elem[0]; ++i0)
        out.push_back(std::int64_t{i0} * t.step_elem[0] + std::int64_t{i1} * t.step_elem[1] +
                      std::int64_t{i2} * t.step_elem[2]);
  return out;
}

struct BenchResult {
  platform::CoreRunResult run;
  trace::RunStats stats;
};

// Runs every case as one instruction of one POOL stream (one elaboration per
// process) and checks every destination window byte-exactly.
inline BenchResult run_dequant_cases(const std::vector<DequantCase>& cases, unsigned channels,
                                     unsigned src_part, unsigned dst_part,
                                     isa::Arch arch = isa::Arch::Mariana) {
  platform::CoreConfig cfg = platform::default_core_config(arch);
  auto* core = new platform::TpbCore("tpb", cfg);
  std::vector<isa::RawInst> prog;
  std::vector<std::vector<std::vector<std::uint32_t>>> src_img(cases.size());
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const DequantCase& c = cases[k];
    const std::uint32_t src_win = static_cast<std::uint32_t>(k) * kWindowBytes;
    const std::uint32_t dst_win = 0x20000 + static_cast<std::uint32_t>(k) * kWindowBytes;
    isa::Tensor3D s = c.src, d = c.dst;
    s.start_addr.raw = c.addr_marker | isa::sbuf_addr(src_part, src_win + c.src.start_addr.raw);
    d.start_addr.raw = c.addr_marker | isa::sbuf_addr(dst_part, dst_win + c.dst.start_addr.raw);
    prog.push_back(dequant_inst(c.fmt, c.group, channels, s, d));
    for (unsigned ch = 0; ch < channels; ++ch) {
      src_img[k].push_back(make_words(kWindowBytes / 4, 1000 * k + ch, 0));
      // MX scales sit at every 5th word of the gathered stream.
      if (c.group == 8) {
        const auto offs = pattern_offsets(c.src);
        const auto scales = make_words(offs.size(), 77 + ch, 8);
        for (std::size_t i = 0; i < offs.size(); i += 5)
          src_img[k][ch][c.src.start_addr.raw / 4 + offs[i]] = scales[i];
      }
      core->load_memory(isa::sbuf_addr(src_part + ch, src_win), src_img[k][ch].data(),
                        kWindowBytes);
      const std::vector<std::uint8_t> guard(kWindowBytes, 0xA5);
      core->load_memory(isa::sbuf_addr(dst_part + ch, dst_win), guard.data(), kWindowBytes);
    }
  }
  core->load_queue(isa::Queue::Pool, prog);
  BenchResult br;
  br.run = core->run();
  br.stats = core->stats();
  EXPECT_EQ(br.run.status, platform::RunStatus::Ok) << br.run.message;
  EXPECT_EQ(br.run.instructions, cases.size());
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const DequantCase& c = cases[k];
    const bool e4m3 = c.fmt >= 3;
    const std::uint32_t dst_win = 0x20000 + static_cast<std::uint32_t>(k) * kWindowBytes;
    for (unsigned ch = 0; ch < channels; ++ch) {
      std::vector<std::uint32_t> stream;
      for (std::int64_t o : pattern_offsets(c.src))
        stream.push_back(src_img[k][ch][c.src.start_addr.raw / 4 + o]);
      const std::vector<std::uint32_t> out = dequant_ref(c.fmt, c.group, stream);
      std::vector<std::uint32_t> want(kWindowBytes / 4, 0xA5A5A5A5u);
      const auto doffs = pattern_offsets(c.dst);
      EXPECT_EQ(doffs.size(), out.size());
      for (std::size_t i = 0; i < doffs.size() && i < out.size(); ++i)
        want[c.dst.start_addr.raw / 4 + doffs[i]] = out[i];
      std::vector<std::uint32_t> got(kWindowBytes / 4);
      core->dump_memory(isa::sbuf_addr(dst_part + ch, dst_win), got.data(), kWindowBytes);
      std::size_t bad = 0, first = 0;
      for (std::size_t i = 0; i < got.size(); ++i)
        if (!fp8_word_equal(e4m3, got[i], want[i]) && bad++ == 0) first = i;
      EXPECT_EQ(bad, 0u) << "case " << k << " fmt " << c.fmt << " group " << c.group << " channel "
                         << ch << ": first bad word " << first << " got 0x" << std::hex
                         << got[first] << " want 0x" << want[first];
    }
  }
  return br;
}

// The seven valid (fmt, group) pairs with contiguous 30-word sources.
inline std::vector<DequantCase> all_format_cases() {
  std::vector<DequantCase> v;
  const unsigned pairs[7][2] = {{1, 0}, {2, 0}, {3, 0}, {4, 0}, {1, 8}, {2, 8}, {3, 8}};
  for (const auto& p : pairs) {
    const std::uint16_t dst_words = p[1] == 8 ? 48 : p[0] == 4 ? 40 : 60;
    v.push_back({p[0], p[1], t3d(0, 1, 30), t3d(0, 1, dst_words)});
  }
  return v;
}

}  // namespace tpb::platref
