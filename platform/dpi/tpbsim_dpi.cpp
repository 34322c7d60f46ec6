// libtpbsim_dpi (tpbsim_dpi.h): the C boundary. Each function checks its
// arguments, calls the model's own code (models/numerics, models/isa, the
// DVE stub's widening) and catches every exception, so that a simulator
// that loaded the library never sees one. Nothing here computes a value the
// model does not compute itself.
#include "platform/dpi/tpbsim_dpi.h"

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "firmware_stubs/dve/quantize_mx.h"
#include "models/isa/asm.h"
#include "models/isa/checker.h"
#include "models/isa/encodings.h"
#include "models/isa/names.h"
#include "models/isa/opcode_table.h"
#include "models/isa/program.h"
#include "models/numerics/dequant_stream.h"
#include "models/numerics/formats.h"
#include "models/numerics/mx_quantize.h"
#include "models/numerics/tquant.h"
#include "platform/dpi/dpi_boundary.h"

#ifndef TPBSIM_VERSION
#define TPBSIM_VERSION "0"
#endif

namespace tpb::dpi {

namespace {}  // namespace

std::string& last_error() {
  thread_local std::string msg;
  return msg;
}

namespace {

thread_local std::string t_check_failed;
thread_local std::string t_disasm;
thread_local std::string t_queue;

bool format_of(int id, num::Format& f) {
  if (id < 0 || id >= num::kNumFormats) {
    fail(fmt::format("format id {} is not one of 0..{} (tpb_dpi_format names them)", id,
                     num::kNumFormats - 1));
    return false;
  }
  f = static_cast<num::Format>(id);
  return true;
}

bool arch_of(int id, isa::Arch& a) {
  if (id < static_cast<int>(isa::Arch::Sunda) || id > static_cast<int>(isa::Arch::Maverick)) {
    fail(fmt::format("arch {} is not 2 (sunda), 3 (cayman), 4 (mariana) or 5 (maverick)", id));
    return false;
  }
  a = static_cast<isa::Arch>(id);
  return true;
}

// DEQUANT_FMT and group_size of a TensorDequantize step (SPEC §3).
bool dequant_of(int fmt, int group, isa::DequantFmt& f, num::DequantRatio& r) {
  if (fmt < 1 || fmt > 4) {
    fail(
        fmt::format("dequant fmt {} is not 1 (E2M1ToE5M2), 2 (INT4ToE5M2), 3 (NF4ToE4M3) or 4 "
                    "(E2M3ToE4M3)",
                    fmt));
    return false;
  }
  f = static_cast<isa::DequantFmt>(fmt);
  r = group < 0 || group > 255 ? num::DequantRatio{0, 0}
                               : num::dequant_ratio(f, static_cast<unsigned>(group));
  if (r.src_words == 0) {
    fail(fmt::format("group {} is not valid for {} (0, or 8 for the 4-bit formats)", group,
                     isa::dequant_fmt_name(f)));
    return false;
  }
  return true;
}

isa::RawInst word_bytes(const unsigned int* w) {
  isa::RawInst raw{};
  for (std::size_t i = 0; i < isa::kInstBytes; ++i)
    raw[i] = static_cast<std::uint8_t>(w[i / 4] >> (8 * (i % 4)));
  return raw;
}

void bytes_word(const isa::RawInst& raw, unsigned int* w) {
  for (std::size_t i = 0; i < isa::kInstBytes / 4; ++i)
    w[i] = static_cast<unsigned int>(raw[4 * i]) | static_cast<unsigned int>(raw[4 * i + 1]) << 8 |
           static_cast<unsigned int>(raw[4 * i + 2]) << 16 |
           static_cast<unsigned int>(raw[4 * i + 3]) << 24;
}

}  // namespace

}  // namespace tpb::dpi

using namespace tpb;
using tpb::dpi::fail;
using tpb::dpi::guarded;

extern "C" {

const char* tpb_dpi_last_error(void) { return dpi::last_error().c_str(); }

const char* tpb_dpi_version(void) { return "tpbsim " TPBSIM_VERSION; }

int tpb_dpi_format(const char* name) {
  return guarded([&] {
    if (!name) return fail("format name is null");
    const auto f = num::parse_format(name);
    if (!f) {
      std::string all;
      for (int i = 0; i < num::kNumFormats; ++i)
        all += std::string(i ? " " : "") + num::info(static_cast<num::Format>(i)).name;
      return fail(fmt::format("'{}' is not a format ({})", name, all));
    }
    return static_cast<int>(*f);
  });
}

int tpb_dpi_from_fp32(int format, unsigned int fp32_bits, int saturate, unsigned int* code) {
  return guarded([&] {
    num::Format f;
    if (!dpi::format_of(format, f)) return TPB_DPI_EARG;
    if (!code) return fail("code is null");
    if (f == num::Format::Fp32) {
      *code = fp32_bits;
      return TPB_DPI_OK;
    }
    const double v = static_cast<double>(num::f32_from_bits(fp32_bits));
    *code = num::encode(f, v, saturate ? num::Overflow::Saturate : num::Overflow::NonSaturate);
    return TPB_DPI_OK;
  });
}

int tpb_dpi_to_fp32(int format, unsigned int code, unsigned int* fp32_bits) {
  return guarded([&] {
    num::Format f;
    if (!dpi::format_of(format, f)) return TPB_DPI_EARG;
    if (!fp32_bits) return fail("fp32_bits is null");
    const num::FormatInfo& fi = num::info(f);
    if (fi.bits < 32 && (code >> fi.bits) != 0)
      return fail(fmt::format("code 0x{:x} does not fit {} ({} bits)", code, fi.name, fi.bits));
    if (f == num::Format::Fp32 || f == num::Format::Bf16) {
      // BF16 is the top half of FP32: the exact pattern, NaN payloads too.
      *fp32_bits = f == num::Format::Fp32 ? code : code << 16;
      return TPB_DPI_OK;
    }
    const double v = num::decode(f, code);
    *fp32_bits = v != v ? 0x7FC00000u : num::bits_from_f32(static_cast<float>(v));
    return TPB_DPI_OK;
  });
}

int tpb_dpi_dequant_step(int fmt, int group, const unsigned int* src, unsigned int* dst) {
  return guarded([&] {
    isa::DequantFmt f;
    num::DequantRatio r;
    if (!dpi::dequant_of(fmt, group, f, r)) return TPB_DPI_EARG;
    if (!src || !dst) return fail("src or dst is null");
    std::uint32_t in[5] = {}, out[8] = {};
    for (unsigned i = 0; i < r.src_words; ++i) in[i] = src[i];
    num::dequant_words(f, static_cast<unsigned>(group), in, out, 1);
    for (unsigned i = 0; i < 8; ++i) dst[i] = out[i];
    return static_cast<int>(r.dst_words);
  });
}

int tpb_dpi_dequant_word(int fmt, int group, int scale, unsigned int src, unsigned int* out_lo,
                         unsigned int* out_hi) {
  return guarded([&] {
    isa::DequantFmt f;
    num::DequantRatio r;
    if (!dpi::dequant_of(fmt, group, f, r)) return TPB_DPI_EARG;
    if (f == isa::DequantFmt::E2M3ToE4M3)
      return fail(
          "E2M3ToE4M3 (FP6) has no one-word step: 3 source words give 4 output words "
          "(tpb_dpi_dequant_step)");
    if (!out_lo || !out_hi) return fail("out_lo or out_hi is null");
    std::uint32_t in[5] = {src}, out[8] = {};
    if (group == 8) {
      if (scale < 0 || scale > 255)
        return fail(fmt::format("scale {} is not an E8M0 byte (0..255)", scale));
      // A chunk whose first code word is `src`, scaled by byte 0.
      in[0] = static_cast<std::uint32_t>(scale);
      in[1] = src;
    }
    num::dequant_words(f, static_cast<unsigned>(group), in, out, 1);
    *out_lo = out[0];
    *out_hi = out[1];
    return TPB_DPI_OK;
  });
}

int tpb_dpi_quantize_mx(int in_dtype, int out_dtype, int emax, const unsigned int* in,
                        unsigned int* out, unsigned char* scale) {
  return guarded([&] {
    const auto d = static_cast<isa::Dtype>(in_dtype);
    if (in_dtype != static_cast<int>(isa::Dtype::Fp32) &&
        in_dtype != static_cast<int>(isa::Dtype::Bf16) &&
        in_dtype != static_cast<int>(isa::Dtype::Fp16))
      return fail(
          fmt::format("in_dtype 0x{:x} is not 0x8 (fp32), 0x5 (bf16) or 0x6 (fp16)", in_dtype));
    num::MxOut o;
    if (out_dtype == static_cast<int>(isa::Dtype::Fp8Exp4))
      o = num::MxOut::E4M3;
    else if (out_dtype == static_cast<int>(isa::Dtype::Fp8Exp5))
      o = num::MxOut::E5M2;
    else
      return fail(
          fmt::format("out_dtype 0x{:x} is not 0xe (fp8_e4m3) or 0xf (fp8_e5m2)", out_dtype));
    if (emax != 0 && emax != 1)
      return fail(fmt::format("emax {} is not 0 (ocp) or 1 (neuron-alt)", emax));
    if (!in || !out || !scale) return fail("in, out or scale is null");
    std::uint32_t bits[32], words[8];
    for (unsigned i = 0; i < 32; ++i) {
      if (d != isa::Dtype::Fp32 && (in[i] >> 16) != 0)
        return fail(
            fmt::format("element {} (partition {}, element {}) 0x{:x} is not a 16-bit "
                        "code of {}",
                        i, i / 4, i % 4, in[i], d == isa::Dtype::Bf16 ? "bf16" : "fp16"));
      bits[i] = fw::widen_to_fp32_bits(d, in[i]);
    }
    *scale =
        num::mx_quantize_block(bits, o, emax ? num::MxEmax::NeuronAlt : num::MxEmax::Ocp, words);
    for (unsigned r = 0; r < 8; ++r) out[r] = words[r];
    return TPB_DPI_OK;
  });
}

int tpb_dpi_tquant(unsigned int x, unsigned int multiplier, int zero_point, int dtype, int rmode,
                   int sat, unsigned char* result, int* flags) {
  return guarded([&] {
    num::QuantType t;
    if (dtype == static_cast<int>(isa::TileDataType::S8))
      t = num::QuantType::S8;
    else if (dtype == static_cast<int>(isa::TileDataType::U8))
      t = num::QuantType::U8;
    else
      return fail(fmt::format("dtype {} is not 4 (S8) or 5 (U8)", dtype));
    if (rmode < 0 || rmode >= static_cast<int>(num::kNumRModes))
      return fail(fmt::format("rmode {} is not 0 RNE, 1 RTZ, 2 RDN, 3 RUP or 4 RMM", rmode));
    if (sat != 0 && sat != 1) return fail(fmt::format("sat {} is not 0 or 1", sat));
    // The SFU's legality rules for one element (Fault_TileLegality, SPEC §6).
    if (((x >> 23) & 0xFFu) == 0xFFu)
      return fail(fmt::format("invalid source element: 0x{:08x} is {}", x,
                              (x & 0x7FFFFFu) ? "NaN" : "Inf"));
    if (((multiplier >> 23) & 0xFFu) == 0xFFu)
      return fail(fmt::format("multiplier: 0x{:08x} is not finite", multiplier));
    if ((multiplier & 0x7FFFFFFFu) == 0)
      return fail(fmt::format("multiplier: 0x{:08x} is zero", multiplier));
    if (multiplier >> 31) return fail(fmt::format("multiplier: 0x{:08x} is negative", multiplier));
    if (t == num::QuantType::S8 ? (zero_point < -128 || zero_point > 127)
                                : (zero_point < 0 || zero_point > 255))
      return fail(fmt::format("zero point: {} is not a canonical {} value ({})", zero_point,
                              t == num::QuantType::S8 ? "S8" : "U8",
                              t == num::QuantType::S8 ? "-128..127" : "0..255"));
    if (!result || !flags) return fail("result or flags is null");
    const num::QuantResult q =
        num::tquant_element(x, multiplier, zero_point, t, static_cast<num::RMode>(rmode), sat == 1);
    *result = q.code;
    *flags = (q.inexact ? 1 : 0) | (q.saturated ? 2 : 0) | (q.wrapped ? 4 : 0);
    return TPB_DPI_OK;
  });
}

int tpb_dpi_arch(const char* name) {
  return guarded([&] {
    isa::Arch a;
    if (!name || !isa::parse_arch(name, a))
      return fail(
          fmt::format("'{}' is not one of sunda cayman mariana maverick", name ? name : "(null)"));
    return static_cast<int>(a);
  });
}

int tpb_dpi_check(int arch, const unsigned int* word) {
  dpi::t_check_failed.clear();
  return guarded([&] {
    isa::Arch a;
    if (!dpi::arch_of(arch, a)) return TPB_DPI_EARG;
    if (!word) return fail("word is null");
    const isa::CheckResult r = isa::check_instruction(dpi::word_bytes(word), a);
    for (std::size_t i = 0; i < r.failed.size(); ++i)
      dpi::t_check_failed += (i ? ", " : "") + std::string(r.failed[i]);
    return static_cast<int>(r.failed.size());
  });
}

const char* tpb_dpi_check_failed(void) { return dpi::t_check_failed.c_str(); }

int tpb_dpi_assemble(const char* statement, unsigned int* word) {
  return guarded([&] {
    if (!statement || !word) return fail("statement or word is null");
    try {
      // The program syntax of one instruction: a statement, a `.raw` word or
      // a TQUANT block on one line.
      const isa::Program p = isa::parse_program(statement, "statement");
      if (p.size() != 1)
        return fail(
            fmt::format("'{}' holds {} instructions; give exactly one", statement, p.size()));
      for (const auto& q : p.queues)
        if (!q.empty()) dpi::bytes_word(q[0].raw, word);
      return TPB_DPI_OK;
    } catch (const isa::AsmError& e) {
      return fail(fmt::format("line {}, column {}: {}", e.loc().line, e.loc().col, e.message()));
    }
  });
}

const char* tpb_dpi_queue(const unsigned int* word) {
  dpi::t_queue.clear();
  if (word)
    dpi::t_queue =
        isa::queue_names().name(static_cast<std::uint8_t>(isa::word_queue(dpi::word_bytes(word))));
  return dpi::t_queue.c_str();
}

const char* tpb_dpi_disassemble(const unsigned int* word) {
  dpi::t_disasm.clear();
  guarded([&] {
    if (!word) return fail("word is null");
    dpi::t_disasm = isa::disassemble_mnemonic(dpi::word_bytes(word));
    return TPB_DPI_OK;
  });
  return dpi::t_disasm.c_str();
}

}  // extern "C"
