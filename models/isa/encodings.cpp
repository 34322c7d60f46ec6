// Names of generations, opcodes (from the opcode table) and DTYPEs (SPEC §1,
// §2; seeds 000 §1, 003 §6).
#include "models/isa/encodings.h"

#include <cctype>

#include "models/isa/opcode_table.h"

namespace tpb::isa {

const char* dequant_fmt_name(DequantFmt f) {
  switch (f) {
    case DequantFmt::E2M1ToE5M2:
      return "E2M1ToE5M2";
    case DequantFmt::Int4ToE5M2:
      return "INT4ToE5M2";
    case DequantFmt::Nf4ToE4M3:
      return "NF4ToE4M3";
    case DequantFmt::E2M3ToE4M3:
      return "E2M3ToE4M3";
    case DequantFmt::Invalid:
      break;
  }
  return "Invalid";
}
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (std::tolower(static_cast<unsigned char>(a[k])) !=
        std::tolower(static_cast<unsigned char>(b[k])))
      return false;
  }
  return true;
}

struct DtypeInfo {
  std::uint8_t ordinal;
  std::string_view name;  // canonical (dtype_name)
  unsigned size;          // bytes for addressing
};

// Sub-byte FP4_EXP2 / INT4 address as one byte each (convention: addressing
// granularity is the byte; packed x4 MX words use mx_x4_bytes()).
constexpr DtypeInfo kDtypes[] = {
    {0x00, "invalid", 0},  {0x01, "int8", 1},     {0x02, "uint8", 1},    {0x03, "int16", 2},
    {0x04, "uint16", 2},   {0x05, "bf16", 2},     {0x06, "fp16", 2},     {0x07, "int32", 4},
    {0x08, "fp32", 4},     {0x09, "uint32", 4},   {0x0A, "fp32r", 4},    {0x0C, "fp8_exp2", 1},
    {0x0D, "fp8_exp3", 1}, {0x0E, "fp8_exp4", 1}, {0x0F, "fp8_exp5", 1}, {0x10, "fp4_exp2", 1},
    {0x12, "int4", 1},     {0x13, "sfp8_e8", 1},
};

struct Alias {
  std::string_view name;
  std::uint8_t ordinal;
};
// Format names (SPEC §9 convert / --dump) accepted as DTYPE names too.
constexpr Alias kDtypeAliases[] = {
    {"i8", 0x01},   {"u8", 0x02},       {"s8", 0x01},   {"i16", 0x03},
    {"u16", 0x04},  {"f16", 0x06},      {"i32", 0x07},  {"f32", 0x08},
    {"u32", 0x09},  {"e2m5", 0x0C},     {"e3m4", 0x0D}, {"e4m3", 0x0E},
    {"e5m2", 0x0F}, {"fp4_e2m1", 0x10}, {"e2m1", 0x10}, {"e8m0", 0x13},
};

}  // namespace

std::string_view arch_name(Arch a) {
  switch (a) {
    case Arch::Sunda:
      return "sunda";
    case Arch::Cayman:
      return "cayman";
    case Arch::Mariana:
      return "mariana";
    case Arch::Maverick:
      return "maverick";
  }
  return "";
}

bool parse_arch(std::string_view s, Arch& out) {
  static constexpr struct {
    std::string_view name, alias;
    Arch arch;
  } kArchs[] = {{"sunda", "v2", Arch::Sunda},
                {"cayman", "v3", Arch::Cayman},
                {"mariana", "v4", Arch::Mariana},
                {"maverick", "v5", Arch::Maverick}};
  for (const auto& a : kArchs) {
    if (iequals(s, a.name) || iequals(s, a.alias)) {
      out = a.arch;
      return true;
    }
  }
  return false;
}

std::string_view opcode_mnemonic(std::uint8_t opcode) {
  const OpcodeInfo* row = opcode_info(opcode);
  return row ? row->mnemonic : std::string_view();
}

std::string_view dtype_name(std::uint8_t d) {
  for (const auto& t : kDtypes)
    if (t.ordinal == d) return t.name;
  return "";
}

bool parse_dtype(std::string_view s, std::uint8_t& out) {
  for (const auto& t : kDtypes) {
    if (iequals(s, t.name)) {
      out = t.ordinal;
      return true;
    }
  }
  for (const auto& a : kDtypeAliases) {
    if (iequals(s, a.name)) {
      out = a.ordinal;
      return true;
    }
  }
  return false;
}

unsigned dtype_size(std::uint8_t d) {
  for (const auto& t : kDtypes)
    if (t.ordinal == d) return t.size;
  return 0;
}

}  // namespace tpb::isa
