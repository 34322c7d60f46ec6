// The formatter of the mnemonic syntax (docs/ASM.md): one 64-byte word ->
// its text (mnemonic form, TQUANT block or `.raw`), and a whole program ->
// program text (disassembly). Driven by the same field tables as the encoder
// (asm_fields.h), so the encoder reads back every byte printed.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "models/isa/address_map.h"
#include "models/isa/asm.h"
#include "models/isa/asm_fields.h"
#include "models/isa/input_file.h"
#include "models/isa/names.h"
#include "models/isa/tquant_block.h"

namespace tpb::isa {
namespace {

using namespace asm_detail;

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}
std::string hex2(std::uint8_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02x", v);
  return buf;
}

std::string fmt_dtype(std::uint8_t d) {
  const DtypeRow* row = dtype_table().find(d);
  return row ? std::string(row->name) : hex(d);
}

std::string fmt_plain_addr(std::uint32_t a) {
  switch (region_of(a)) {
    case Region::Sbuf:
      return "sbuf(" + std::to_string(partition_of(a)) + ", " + hex(offset_of(a)) + ")";
    case Region::Psum:
      return "psum(" + std::to_string(partition_of(a)) + ", " + hex(offset_of(a)) + ")";
    default:
      return hex(a);
  }
}

std::string fmt_hex_bytes(const RawInst& r, unsigned off, unsigned len) {
  std::string s;
  for (unsigned i = 0; i < len; ++i) s += (i ? " " : "") + hex2(r[off + i]);
  return s;
}

std::string fmt_pattern(const RawInst& r, const FieldSpec& f) {
  const unsigned o = f.off;
  const std::uint32_t a0 = get_le(r, o, 4);
  const std::uint8_t marker = static_cast<std::uint8_t>(a0 >> 27);
  if (marker == addr4::kMarkerIndirect) return "i(" + fmt_hex_bytes(r, o, 16) + ")";
  if (f.kind == FK::Mem1D) {
    std::string s = "mx1d(data=" + format_addr4(a0) +
                    ", scale=" + format_addr4(get_le(r, o + 4, 4)) +
                    ", num=" + std::to_string(get_le(r, o + 8, 2)) +
                    ", step=" + std::to_string(static_cast<std::int8_t>(r[o + 10])) +
                    ", scale_pidx=" + std::to_string(r[o + 11]);
    if (get_le(r, o + 12, 4) != 0) {
      s += ", reserved=[";
      for (unsigned i = 0; i < 4; ++i) s += (i ? ", " : "") + hex(r[o + 12 + i]);
      s += "]";
    }
    return s + ")";
  }
  if (marker == addr4::kMarkerMxTensorV2) {
    return "mx(data=" + fmt_plain_addr(a0 & addr4::kAddressMask) +
           ", scale=" + format_addr4(get_le(r, o + 4, 4)) + ", num=[" + std::to_string(r[o + 8]) +
           ", " + std::to_string(r[o + 9]) + "], step_data=" + std::to_string(get_i16(r, o + 10)) +
           ", step_scale=" + std::to_string(get_i16(r, o + 12)) +
           ", p=" + std::to_string(r[o + 14] & 0xF) + ", f=" + std::to_string(r[o + 14] >> 4) +
           ", scale_dtype=" + fmt_dtype(r[o + 15]) + ")";
  }
  return "t3d(" + format_addr4(a0) + ", step=[" + std::to_string(get_i16(r, o + 4)) + ", " +
         std::to_string(get_i16(r, o + 6)) + ", " + std::to_string(get_i16(r, o + 8)) + "], num=[" +
         std::to_string(get_le(r, o + 10, 2)) + ", " + std::to_string(get_le(r, o + 12, 2)) + ", " +
         std::to_string(get_le(r, o + 14, 2)) + "])";
}

// A DMA endpoint in the shortest form that encodes its 16 bytes exactly.
std::string fmt_dma_end(const RawInst& r, const FieldSpec& f) {
  const unsigned o = f.off;
  const std::uint64_t addr = get_le(r, o, 4) | std::uint64_t{get_le(r, o + 4, 4)} << 32;
  const std::uint32_t stride = get_le(r, o + 8, 4);
  const std::uint8_t kind = r[o + 12];
  const bool clean = r[o + 13] == 0 && r[o + 14] == 0 && r[o + 15] == 0;
  if (clean && kind == static_cast<std::uint8_t>(DmaEndpointKind::Hbm))  // any u64 offset
    return fmt::format("hbm(0x{:x}{})", addr, stride ? fmt::format(", stride={}", stride) : "");
  if (clean && kind == static_cast<std::uint8_t>(DmaEndpointKind::Sbuf) && stride == 0 &&
      addr < kRegionSize)
    return fmt_plain_addr(static_cast<std::uint32_t>(addr));
  return fmt::format(
      "end(kind={}, addr_lo=0x{:x}, addr_hi=0x{:x}, stride={}, reserved=[{}, {}, {}])", kind,
      addr & 0xFFFFFFFFu, addr >> 32, stride, hex(r[o + 13]), hex(r[o + 14]), hex(r[o + 15]));
}

// An FP32 operand's text: its shortest round-trip decimal when that reads
// back as the same bits (finite, not -0), else its bits in hex.
std::string fmt_f32(std::uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, 4);
  if (!std::isfinite(x) || (x == 0 && std::signbit(x))) return hex(bits);
  std::string t = fmt::format("{}", x);
  if (t.find_first_of(".e") == std::string::npos) {
    // An integral value reads back as an integer, which is its value too,
    // unless it is too large for one: then as a float.
    if (std::fabs(x) >= 9.2e18f) t += ".0";
  }
  return t;
}

std::string addr4_literal(std::uint32_t raw) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "addr4(0x%08x)", raw);
  return buf;
}

// A vector operand's address: a plain number would read back as FP32 bits,
// so an address outside SBUF and PSUM prints as addr4(..).
std::string fmt_scalar_addr(std::uint32_t raw) {
  std::string s = format_addr4(raw);
  return s.rfind("0x", 0) == 0 ? addr4_literal(raw) : s;
}

// A value of a field (bit fields read from their bits).
std::uint32_t field_value(const RawInst& r, const FieldSpec& f) {
  if (f.bits != 0) return (r[f.off] & f.mask()) >> f.shift;
  return f.len <= 4 ? get_le(r, f.off, f.len) : 0;
}

std::string fmt_list3(const RawInst& r, const FieldSpec& f) {
  const unsigned width = f.kind == FK::I32x3 ? 4 : 2;
  std::string s = "[";
  for (unsigned i = 0; i < 3; ++i) {
    const std::uint32_t v = get_le(r, f.off + i * width, width);
    s += (i ? ", " : "") +
         (width == 4 ? std::to_string(static_cast<std::int32_t>(v)) : std::to_string(v));
  }
  return s + "]";
}

std::string fmt_field(const RawInst& r, const FieldSpec& f) {
  // Scalar fields are at most 4 bytes; byte runs and patterns print their bytes.
  const std::uint32_t v = field_value(r, f);
  switch (f.kind) {
    case FK::Named: {
      const auto n = f.names().name(static_cast<std::uint8_t>(v));
      return n.empty() ? std::to_string(v) : std::string(n);
    }
    case FK::I32:
      return std::to_string(static_cast<std::int32_t>(v));
    case FK::I32x3:
    case FK::U16x3:
      return fmt_list3(r, f);
    case FK::Steps3D:
      return "t3d(" + format_addr4(get_le(r, f.off, 4)) + ", step=[" +
             std::to_string(get_i16(r, f.off + 4)) + ", " + std::to_string(get_i16(r, f.off + 6)) +
             ", " + std::to_string(get_i16(r, f.off + 8)) + "])";
    case FK::Addr:
      return format_addr4(v);
    case FK::Scalar:
      return (r[static_cast<unsigned>(f.from)] >> f.shift) & 1u ? fmt_scalar_addr(v) : fmt_f32(v);
    case FK::Dtype:
      return fmt_dtype(static_cast<std::uint8_t>(v));
    case FK::DqFmt: {
      const auto n = dequant_fmt_names().name(static_cast<std::uint8_t>(v));
      return n.empty() ? std::to_string(v) : std::string(n);
    }
    case FK::Perf: {
      const auto n = mx_perf_mode_names().name(static_cast<std::uint8_t>(v));
      return n.empty() ? std::to_string(v) : std::string(n);
    }
    case FK::Grp:
      return hex(v);
    case FK::Bytes: {
      std::string s = "[";
      for (unsigned i = 0; i < f.len; ++i) s += (i ? ", " : "") + hex(r[f.off + i]);
      return s + "]";
    }
    case FK::Mem3D:
    case FK::Mem1D:
      return fmt_pattern(r, f);
    case FK::DmaEnd:
      return fmt_dma_end(r, f);
    case FK::DmaOp: {
      const auto n = dma_rmw_op_names().name(static_cast<std::uint8_t>(v));
      return n.empty() ? std::to_string(v) : std::string(n);
    }
    default:
      return std::to_string(v);
  }
}

bool field_is_default(const RawInst& r, const FieldSpec& f) {
  if (f.required || f.kind == FK::Mem3D || f.kind == FK::Mem1D || f.kind == FK::DmaEnd ||
      f.kind == FK::Steps3D || f.kind == FK::I32x3 || f.kind == FK::U16x3)
    return false;
  if (f.kind == FK::Scalar)
    return !((r[static_cast<unsigned>(f.from)] >> f.shift) & 1u) && get_le(r, f.off, 4) == f.def;
  if (f.bits != 0) return field_value(r, f) == f.def;
  if (f.kind == FK::Bytes) {
    for (unsigned i = 0; i < f.len; ++i)
      if (r[f.off + i]) return false;
    return true;
  }
  if (f.kind == FK::Grp && f.from >= 0)
    return r[f.off] == grp_mask_for(r[static_cast<unsigned>(f.from)]);
  return get_le(r, f.off, f.len) == f.def;
}

std::string fmt_events(const RawInst& r) {
  std::string s;
  const Events e = events_of(r);
  // A DMA descriptor's remote semaphore (SPEC §15): coreK:semN.
  const bool dma = r[0] == static_cast<std::uint8_t>(Opcode::DmaCopy);
  const unsigned remote = dma ? r[offsetof(DmaDescriptor, update_core)] : 0;
  const bool remote_shown =
      remote != 0 && remote <= kMaxDeviceCores && !update_mode_names().name(e.update_mode).empty();
  const std::string core = remote_shown ? "core" + std::to_string(remote - 1) + ":" : "";
  bool value_shown = false;
  if (const auto w = wait_mode_names().name(e.wait_mode); !w.empty()) {
    s += " wait=" + std::string(w) + "(sem" + std::to_string(e.wait_idx) + ", " +
         std::to_string(e.sem_value) + ")";
    value_shown = true;
  } else {
    if (e.wait_mode) s += " wait_mode=" + std::to_string(e.wait_mode);
    if (e.wait_idx) s += " wait_idx=" + std::to_string(e.wait_idx);
  }
  if (const auto u = update_mode_names().name(e.update_mode); !u.empty()) {
    s += " update=" + std::string(u) + "(" + core + "sem" + std::to_string(e.update_idx);
    if (e.update_mode == kUpdateSet) {
      s += ", " + std::to_string(e.sem_value);
      value_shown = true;
    }
    s += ")";
  } else {
    if (e.update_mode) s += " update_mode=" + std::to_string(e.update_mode);
    if (e.update_idx) s += " update_idx=" + std::to_string(e.update_idx);
  }
  if (!value_shown && e.sem_value) s += " sem_value=" + std::to_string(e.sem_value);
  return s;
}

}  // namespace

std::string_view asm_dtype_name(std::uint8_t dtype) {
  const DtypeRow* row = dtype_table().find(dtype);
  return row ? row->name : std::string_view();
}

std::string format_addr4(std::uint32_t raw) {
  const std::uint8_t m = static_cast<std::uint8_t>(raw >> 27);
  const std::uint32_t a = raw & addr4::kAddressMask;
  switch (m) {
    case addr4::kMarkerImm:
      return fmt_plain_addr(a);
    case addr4::kMarkerAddrReg:
      if (a < kNumEngineRegs) return "reg(r" + std::to_string(a) + ")";
      break;
    case addr4::kMarkerAddrShapeReg:
      if (a < kNumEngineRegs) return "addr_shape_reg(r" + std::to_string(a) + ")";
      break;
    case addr4::kMarkerShapeReg:
      return "shape_reg(" + fmt_plain_addr(a) + ")";
    case addr4::kMarkerMxTensorV2:
      return "mxv2(" + fmt_plain_addr(a) + ")";
    case addr4::kMarkerIndirect:
      return "indirect(" + fmt_plain_addr(a) + ")";
    default:
      break;
  }
  return addr4_literal(raw);
}

std::string disassemble_mnemonic(const RawInst& raw) {
  return disassemble_mnemonic(raw, Queue::Pool);
}

std::string disassemble_mnemonic(const RawInst& raw, Queue queue) {
  if (raw[0] == static_cast<std::uint8_t>(Opcode::Tquant)) return disassemble_tquant_block(raw);
  const InstSpec* spec = spec_by_opcode(raw[0]);
  if (!spec) return {};
  // A dma_copy's `queue` defaults to the DMA queue it is under (asm_encode).
  const bool dma = raw[0] == static_cast<std::uint8_t>(Opcode::DmaCopy);
  const bool nop = raw[0] == static_cast<std::uint8_t>(Opcode::Nop);  // likewise its `queue`
  const unsigned queue_default = is_dma_queue(queue) ? dma_queue_index(queue) : 0;
  std::string s(spec->mnemonic);
  for (const auto& f : fields_of(*spec)) {
    const bool is_default =
        dma && f.off == offsetof(DmaDescriptor, queue) ? raw[f.off] == queue_default
        : nop && f.off == offsetof(NopWord, queue)     ? raw[f.off] == static_cast<unsigned>(queue)
        : dma && f.off == offsetof(DmaDescriptor, update_core)
            // shown in update=...(coreK:semN) when it can be
            ? raw[f.off] == 0 ||
                  (raw[f.off] <= kMaxDeviceCores && !update_mode_names().name(raw[6]).empty())
            : field_is_default(raw, f);
    if (!is_default) s += std::string(" ") + f.name + "=" + fmt_field(raw, f);
  }
  s += fmt_events(raw);
  if (raw[1] != kInstWordLen) s += " inst_word_len=" + std::to_string(raw[1]);
  if (raw[2] & kDebugCmdMask) s += " debug_cmd=" + std::to_string(raw[2] & kDebugCmdMask);
  // The engine selector (SPEC §18), when it is not the one `.engine` implies.
  const unsigned sel = raw[2] >> kEngineSelectorShift;
  if (sel != selector_for(*spec, queue)) {
    const auto n = engine_selector_names().name(static_cast<std::uint8_t>(sel));
    s += " engine=" + (n.empty() ? std::to_string(sel) : std::string(n));
  }
  if (raw[3]) s += " debug_hint=" + std::to_string(raw[3]);
  return s;
}

std::string disassemble_inst(const RawInst& raw) { return disassemble_inst(raw, Queue::Pool); }

std::string disassemble_inst(const RawInst& raw, Queue queue) {
  std::string s = disassemble_mnemonic(raw, queue);
  if (!s.empty()) return s;
  s = ".raw";
  static const char* kHex = "0123456789abcdef";
  for (std::size_t i = 0; i < kInstBytes; ++i) {
    s += ' ';
    s += kHex[raw[i] >> 4];
    s += kHex[raw[i] & 0xF];
  }
  return s;
}

std::string disassemble(const Program& p) {
  std::string out;
  if (!p.path.empty()) out += "# disassembled from " + printable(p.path) + "\n";
  if (p.arch) out += ".arch " + std::string(arch_name(*p.arch)) + "\n";
  for (const auto& r : p.regs) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%x", r.value);
    out += ".reg " + std::string(engine_name(r.engine)) + " r" + std::to_string(r.reg) + " = " +
           buf + "\n";
  }
  for (unsigned e = 0; e < kNumQueues; ++e) {
    if (p.queues[e].empty()) continue;
    out += ".engine " + std::string(engine_name(static_cast<Queue>(e))) + "\n";
    for (const auto& inst : p.queues[e])
      out += disassemble_inst(inst.raw, static_cast<Queue>(e)) + "\n";
  }
  return out;
}

}  // namespace tpb::isa
