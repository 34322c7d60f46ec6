// The name tables (names.h) and the name functions of encodings.h /
// address_map.h that read them.
#include "models/isa/names.h"

#include <array>
#include <cctype>

namespace tpb::isa {

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (std::tolower(static_cast<unsigned char>(a[k])) !=
        std::tolower(static_cast<unsigned char>(b[k])))
      return false;
  return true;
}

std::string_view NameTable::name(std::uint8_t v) const {
  for (const auto& e : *this)
    if (e.value == v) return e.name;
  return {};
}

std::optional<std::uint8_t> NameTable::parse(std::string_view s) const {
  for (const auto& e : *this)
    if (iequal(e.name, s)) return e.value;
  return std::nullopt;
}

std::optional<std::uint8_t> NameTable::parse_exact(std::string_view s) const {
  for (const auto& e : *this)
    if (e.name == s) return e.value;
  return std::nullopt;
}

std::string NameTable::list(std::string_view sep) const {
  std::string out;
  for (const EnumName* e = begin(); e != end(); ++e) {
    bool first_of_value = true;
    for (const EnumName* p = begin(); p != e; ++p)
      first_of_value = first_of_value && p->value != e->value;
    if (!first_of_value) continue;
    if (!out.empty()) out += sep;
    out += e->name;
  }
  return out;
}

namespace {

// Sub-byte FP4_EXP2 / INT4 address as one byte each (convention: addressing
// granularity is the byte; packed x4 MX words use mx_x4_bytes()).
constexpr DtypeRow kDtypes[] = {
    {0x00, "invalid", "invalid", 0},   {0x01, "int8", "int8", 1},
    {0x02, "uint8", "uint8", 1},       {0x03, "int16", "int16", 2},
    {0x04, "uint16", "uint16", 2},     {0x05, "bf16", "bf16", 2},
    {0x06, "fp16", "fp16", 2},         {0x07, "int32", "int32", 4},
    {0x08, "fp32", "fp32", 4},         {0x09, "uint32", "uint32", 4},
    {0x0A, "fp32r", "fp32r", 4},       {0x0B, "fp8_e4m3_legacy", "fp8_exp4_legacy", 1},
    {0x0C, "fp8_e2m5", "fp8_exp2", 1}, {0x0D, "fp8_e3m4", "fp8_exp3", 1},
    {0x0E, "fp8_e4m3", "fp8_exp4", 1}, {0x0F, "fp8_e5m2", "fp8_exp5", 1},
    {0x10, "fp4_e2m1", "fp4_exp2", 1}, {0x12, "int4", "int4", 1},
    {0x13, "e8m0", "sfp8_e8", 1},
};
// Short forms and the format names of SPEC §9 (convert, --dump).
constexpr EnumName kDtypeAliases[] = {
    {"s8", 0x01},
    {"i8", 0x01},
    {"u8", 0x02},
    {"s16", 0x03},
    {"i16", 0x03},
    {"u16", 0x04},
    {"f16", 0x06},
    {"s32", 0x07},
    {"i32", 0x07},
    {"f32", 0x08},
    {"u32", 0x09},
    {"e2m5", 0x0C},
    {"e3m4", 0x0D},
    {"e4m3", 0x0E},
    {"e5m2", 0x0F},
    {"e2m1", 0x10},
    {"e8m0", 0x13},
    {"fp8_e8m0", 0x13},
    // NKI's names (nki.language): float8_e4m3 is the legacy IEEE-like E4M3,
    // float8_e4m3fn the OCP one (SPEC §18).
    {"e4m3_legacy", 0x0B},
    {"float8_e4m3", 0x0B},
    {"float8_e4m3fn", 0x0E},
    {"float8_e5m2", 0x0F},
    {"bfloat16", 0x05},
    {"float16", 0x06},
    {"float32", 0x08},
};

constexpr DequantFmtRow kDequantFmts[] = {
    {DequantFmt::Invalid, "invalid", "Invalid"},
    {DequantFmt::E2M1ToE5M2, "e2m1_to_e5m2", "E2M1ToE5M2"},
    {DequantFmt::Int4ToE5M2, "int4_to_e5m2", "INT4ToE5M2"},
    {DequantFmt::Nf4ToE4M3, "nf4_to_e4m3", "NF4ToE4M3"},
    {DequantFmt::E2M3ToE4M3, "e2m3_to_e4m3", "E2M3ToE4M3"},
};
constexpr EnumName kDequantFmtNames[] = {
    {kDequantFmts[0].name, 0}, {kDequantFmts[1].name, 1}, {kDequantFmts[2].name, 2},
    {kDequantFmts[3].name, 3}, {kDequantFmts[4].name, 4},
};

constexpr EnumName kMxPerfModes[] = {
    {"none", 0},    {"quad_row", 1},           {"quad_row_interleave", 2}, {"quad_row_tiled", 3},
    {"oct_row", 4}, {"oct_row_interleave", 5}, {"oct_row_tiled", 6},
};
static_assert(std::size(kMxPerfModes) == kNumMxPerfModes);

constexpr EnumName kArchs[] = {
    {"sunda", 2}, {"cayman", 3}, {"mariana", 4}, {"maverick", 5},
    {"v2", 2},    {"v3", 3},     {"v4", 4},      {"v5", 5},
};
static_assert(static_cast<int>(Arch::Sunda) == 2 && static_cast<int>(Arch::Maverick) == 5);

constexpr EnumName kEngineEntries[] = {{kEngineNames[0], 0},
                                       {kEngineNames[1], 1},
                                       {kEngineNames[2], 2},
                                       {kEngineNames[3], 3},
                                       {kEngineNames[4], static_cast<std::uint8_t>(Queue::Act)}};
static_assert(std::size(kEngineEntries) == kNumEngines);

constexpr EnumName kDmaRmwOps[] = {{"none", 0}, {"add", 1}};

// The header's engine selector (SPEC §18): 0 the opcode's home engine, else
// 1 + engine_index.
constexpr EnumName kEngineSelectors[] = {{"home", 0},          {kEngineNames[0], 1},
                                         {kEngineNames[1], 2}, {kEngineNames[2], 3},
                                         {kEngineNames[3], 4}, {kEngineNames[4], 5}};
static_assert(std::size(kEngineSelectors) == kNumEngines + 1);

// nki.isa / nki.language names (SPEC §18).
constexpr EnumName kAluOps[] = {
    {"bypass", 0},   {"add", 1},         {"subtract", 2}, {"multiply", 3},  {"divide", 4},
    {"maximum", 5},  {"minimum", 6},     {"equal", 7},    {"not_equal", 8}, {"greater_equal", 9},
    {"greater", 10}, {"less_equal", 11}, {"less", 12},    {"power", 13},    {"abs_max", 14},
    {"abs_min", 15}, {"abs", 16},        {"square", 17},  {"rsqrt", 18},    {"reciprocal", 19},
    {"none", 0},     {"sub", 2},         {"mult", 3},     {"max", 5},       {"min", 6},
    {"is_equal", 7}, {"is_ge", 9},       {"is_gt", 10},   {"is_le", 11},    {"is_lt", 12},
    {"pow", 13},
};
constexpr EnumName kActFuncs[] = {
    {"copy", 0},
    {"exp", 1},
    {"log", 2},
    {"sqrt", 3},
    {"rsqrt", 4},
    {"reciprocal", 5},
    {"tanh", 6},
    {"sigmoid", 7},
    {"relu", 8},
    {"gelu", 9},
    {"gelu_apprx_tanh", 10},
    {"silu", 11},
    {"square", 12},
    {"abs", 13},
    {"sign", 14},
    {"erf", 15},
    {"softplus", 16},
    {"identity", 0},
};
constexpr EnumName kReduceOps[] = {{"none", 0}, {"add", 1}, {"max", 2}, {"maximum", 2}};
constexpr EnumName kReduceCmds[] = {{"idle", 0}, {"reset", 1}, {"reduce", 2}, {"reset_reduce", 3}};
constexpr EnumName kMatmulPerf[] = {{"none", 0}, {"double_row", 1}};

constexpr EnumName kQueues[] = {
    {kEngineNames[0], 0},     {kEngineNames[1], 1},     {kEngineNames[2], 2},
    {kEngineNames[3], 3},     {kDmaQueueNames[0], 4},   {kDmaQueueNames[1], 5},
    {kDmaQueueNames[2], 6},   {kDmaQueueNames[3], 7},   {kDmaQueueNames[4], 8},
    {kDmaQueueNames[5], 9},   {kDmaQueueNames[6], 10},  {kDmaQueueNames[7], 11},
    {kDmaQueueNames[8], 12},  {kDmaQueueNames[9], 13},  {kDmaQueueNames[10], 14},
    {kDmaQueueNames[11], 15}, {kDmaQueueNames[12], 16}, {kDmaQueueNames[13], 17},
    {kDmaQueueNames[14], 18}, {kDmaQueueNames[15], 19}, {kEngineNames[4], 20}};
static_assert(std::size(kQueues) == kNumQueues);
static_assert(static_cast<unsigned>(Queue::Act) == kNumQueues - 1);

constexpr EnumName kWaitModes[] = {{"eq", kWaitEq}, {"ge", kWaitGe}};
constexpr EnumName kUpdateModes[] = {{"inc", kUpdateInc}, {"dec", kUpdateDec}, {"set", kUpdateSet}};

constexpr EnumName kTileDtypes[] = {
    {"FP64", 0}, {"FP32", 1}, {"FP16", 2}, {"BF16", 3}, {"S8", 4},
    {"U8", 5},   {"S16", 6},  {"U16", 7},  {"S32", 8},  {"U32", 9},
};
static_assert(std::size(kTileDtypes) == kNumTileDataTypes);
constexpr unsigned kTileDtypeSizes[kNumTileDataTypes] = {8, 4, 2, 2, 1, 1, 2, 2, 4, 4};

constexpr EnumName kRModes[] = {{"RNE", 0}, {"RTZ", 1}, {"RDN", 2}, {"RUP", 3}, {"RMM", 4}};

}  // namespace

const DtypeRow* DtypeTable::find(std::uint8_t ordinal) const {
  for (std::size_t i = 0; i < count; ++i)
    if (rows[i].ordinal == ordinal) return &rows[i];
  return nullptr;
}

std::optional<std::uint8_t> DtypeTable::parse(std::string_view s) const {
  for (std::size_t i = 0; i < count; ++i)
    if (iequal(s, rows[i].name) || iequal(s, rows[i].seed_name)) return rows[i].ordinal;
  return aliases.parse(s);
}

std::string DtypeTable::list() const {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += (i ? ", " : "") + std::string(rows[i].name);
  return out;
}

const DtypeTable& dtype_table() {
  static const DtypeTable t{kDtypes, std::size(kDtypes), NameTable(kDtypeAliases)};
  return t;
}

const NameTable& dequant_fmt_names() {
  static const NameTable t(kDequantFmtNames);
  return t;
}
const DequantFmtRow* dequant_fmt_row(std::uint8_t v) {
  for (const auto& r : kDequantFmts)
    if (static_cast<std::uint8_t>(r.fmt) == v) return &r;
  return nullptr;
}

const NameTable& mx_perf_mode_names() {
  static const NameTable t(kMxPerfModes);
  return t;
}
const NameTable& arch_names() {
  static const NameTable t(kArchs);
  return t;
}
std::string arch_list(std::string_view sep) { return arch_names().list(sep); }
const NameTable& engine_names() {
  static const NameTable t(kEngineEntries);
  return t;
}
const NameTable& dma_rmw_op_names() {
  static const NameTable t(kDmaRmwOps);
  return t;
}
const NameTable& engine_selector_names() {
  static const NameTable t(kEngineSelectors);
  return t;
}
const NameTable& alu_op_names() {
  static const NameTable t(kAluOps);
  return t;
}
const NameTable& act_func_names() {
  static const NameTable t(kActFuncs);
  return t;
}
const NameTable& reduce_op_names() {
  static const NameTable t(kReduceOps);
  return t;
}
const NameTable& reduce_cmd_names() {
  static const NameTable t(kReduceCmds);
  return t;
}
const NameTable& matmul_perf_names() {
  static const NameTable t(kMatmulPerf);
  return t;
}
const NameTable& queue_names() {
  static const NameTable t(kQueues);
  return t;
}
const NameTable& wait_mode_names() {
  static const NameTable t(kWaitModes);
  return t;
}
const NameTable& update_mode_names() {
  static const NameTable t(kUpdateModes);
  return t;
}
const NameTable& tile_dtype_names() {
  static const NameTable t(kTileDtypes);
  return t;
}
const NameTable& rmode_names() {
  static const NameTable t(kRModes);
  return t;
}

// ---------------------------------------------------------------------------
// The name functions of encodings.h and address_map.h.

std::string_view arch_name(Arch a) { return arch_names().name(static_cast<std::uint8_t>(a)); }

bool parse_arch(std::string_view s, Arch& out) {
  const auto v = arch_names().parse(s);
  if (!v) return false;
  out = static_cast<Arch>(*v);
  return true;
}

std::string_view dtype_name(std::uint8_t d) {
  const DtypeRow* r = dtype_table().find(d);
  return r ? r->seed_name : std::string_view();
}

bool parse_dtype(std::string_view s, std::uint8_t& out) {
  const auto v = dtype_table().parse(s);
  if (v) out = *v;
  return v.has_value();
}

// dtype_size by ordinal, from kDtypes (the first row of an ordinal, as
// DtypeTable::find); 0 for none. Every predicate of an operand asks it.
constexpr std::array<std::uint8_t, 256> kDtypeSizes = [] {
  std::array<std::uint8_t, 256> a{};
  for (std::size_t i = std::size(kDtypes); i-- > 0;)
    a[kDtypes[i].ordinal] = static_cast<std::uint8_t>(kDtypes[i].size);
  return a;
}();

unsigned dtype_size(std::uint8_t d) { return kDtypeSizes[d]; }

const char* dequant_fmt_name(DequantFmt f) {
  const DequantFmtRow* r = dequant_fmt_row(static_cast<std::uint8_t>(f));
  return (r ? r : &kDequantFmts[0])->seed_name.data();
}

std::optional<Queue> parse_engine(const char* s) {
  if (s == nullptr) return std::nullopt;
  const auto v = engine_names().parse(s);
  return v ? std::optional<Queue>(static_cast<Queue>(*v)) : std::nullopt;
}

std::optional<Queue> parse_queue(const char* s) {
  if (s == nullptr) return std::nullopt;
  const auto v = queue_names().parse(s);
  return v ? std::optional<Queue>(static_cast<Queue>(*v)) : std::nullopt;
}

std::string_view tile_dtype_name(std::uint8_t t) { return tile_dtype_names().name(t); }
unsigned tile_dtype_size(std::uint8_t t) { return t < kNumTileDataTypes ? kTileDtypeSizes[t] : 0; }

}  // namespace tpb::isa
