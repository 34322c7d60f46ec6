// The name tables of the ISA's enumerations (pure C++): one table per enum,
// and every consumer (the program syntax and its disassembler, the checker,
// the CLI's messages, the timing profile's keys, the numerics' RMode names)
// reads it. In a table the first entry of a value is the name printed; later
// entries of the same value are aliases, accepted on input only. Lookups are
// case-insensitive.
//
// Adding a name: one entry in its table (names.cpp); parsing, printing and the
// "(a, b, c)" lists of error messages follow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"

namespace tpb::isa {

struct EnumName {
  std::string_view name;
  std::uint8_t value;
};

// A view of one name table.
class NameTable {
 public:
  template <std::size_t N>
  constexpr explicit NameTable(const EnumName (&entries)[N]) : b_(entries), n_(N) {}
  // The printed name of `v` (its first entry), "" when the table has none.
  std::string_view name(std::uint8_t v) const;
  // The value of any entry (printed name or alias), in any case.
  std::optional<std::uint8_t> parse(std::string_view s) const;
  // The value of an entry spelled exactly `s` (case-sensitive).
  std::optional<std::uint8_t> parse_exact(std::string_view s) const;
  // The printed names in table order, joined by `sep` ("a, b, c").
  std::string list(std::string_view sep = ", ") const;
  const EnumName* begin() const { return b_; }
  const EnumName* end() const { return b_ + n_; }

 private:
  const EnumName* b_;
  std::size_t n_;
};

// Case-insensitive equality of ASCII names.
bool iequal(std::string_view a, std::string_view b);

// ---------------------------------------------------------------------------
// DTYPE (SPEC §2; seeds 000, 003). One row per ordinal with its two printed
// spellings: `name` is the program syntax's (docs/ASM.md, printed by
// disassembly: "fp8_e4m3"), `seed_name` the seeds' ("fp8_exp4",
// dtype_name()). Both, and the aliases, are accepted by every parser.
struct DtypeRow {
  std::uint8_t ordinal;
  std::string_view name;       // program syntax
  std::string_view seed_name;  // seeds (dtype_name)
  unsigned size;               // bytes for addressing (dtype_size)
};
struct DtypeTable {
  const DtypeRow* rows;
  std::size_t count;
  NameTable aliases;  // further accepted spellings (SPEC §9 format names, short forms)
  const DtypeRow* find(std::uint8_t ordinal) const;
  std::optional<std::uint8_t> parse(std::string_view s) const;  // any spelling, any case
  std::string list() const;  // the syntax names, "invalid, int8, ..."
};
const DtypeTable& dtype_table();

// DEQUANT_FMT (seed 000 §4): the syntax name ("e2m1_to_e5m2") and the seed's
// ("E2M1ToE5M2", dequant_fmt_name()).
struct DequantFmtRow {
  DequantFmt fmt;
  std::string_view name;
  std::string_view seed_name;
};
const NameTable& dequant_fmt_names();  // syntax names
const DequantFmtRow* dequant_fmt_row(std::uint8_t v);

// MX_PERF_MODE (seed 003 §3.3): "none", "quad_row", ... (also the keys of the
// timing profile's pe_mx_row_pump).
const NameTable& mx_perf_mode_names();
inline constexpr unsigned kNumMxPerfModes = 7;

// Generations (SPEC §1): "sunda" .. "maverick", aliases "v2" .. "v5".
const NameTable& arch_names();
// "sunda, cayman, mariana, maverick" (or with another separator).
std::string arch_list(std::string_view sep = ", ");

// Engines (SPEC §9 `.engine`): kEngineNames (address_map.h) as a table.
const NameTable& engine_names();
// DMA descriptor dst_rmw_op (SPEC §10): 0 "none", 1 "add".
const NameTable& dma_rmw_op_names();
// Every instruction queue (`.engine`): the engines, then dma0 .. dma15.
const NameTable& queue_names();
// The HEADER's engine selector (SPEC §18): "home" 0, "pool" 1 .. "act" 5.
const NameTable& engine_selector_names();

// SPEC §18, the names of nki.isa / nki.language: ALU operators (isa::AluOp:
// "add", "maximum", ... with aliases "max", "sub", ...), activation
// functions (isa::ActFunc: "exp", "gelu_apprx_tanh", ...), activation's
// reduce operator ("none", "add", "max") and command ("idle", "reset",
// "reduce", "reset_reduce"), nc_matmul's perf_mode ("none", "double_row").
const NameTable& alu_op_names();
const NameTable& act_func_names();
const NameTable& reduce_op_names();
const NameTable& reduce_cmd_names();
const NameTable& matmul_perf_names();

// EVENTS (SPEC §2): wait_mode 1 "eq", 2 "ge"; update_mode 1 "inc", 2 "dec",
// 3 "set" (the `wait=` / `update=` spellings of the syntax, TQUANT blocks
// included).
inline constexpr std::uint8_t kWaitEq = 1, kWaitGe = 2;
inline constexpr std::uint8_t kUpdateInc = 1, kUpdateDec = 2, kUpdateSet = 3;
const NameTable& wait_mode_names();
const NameTable& update_mode_names();

// TQUANT DataType (seed 002, SPEC §6): "FP64" .. "U32".
const NameTable& tile_dtype_names();

// B.DATR RMode (seed 002, SPEC §6): 0 "RNE", 1 "RTZ", 2 "RDN", 3 "RUP", 4 "RMM"
// (num::rmode_name reads this table).
const NameTable& rmode_names();

}  // namespace tpb::isa
