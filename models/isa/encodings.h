// ISA encodings of the TPB instruction words (pure C++, no SystemC).
//
// Every structure is the 64-byte little-endian wire format of the seeds, with
// sizes and field offsets static_asserted. Offsets that the seeds do not give
// are model conventions (docs/CONVENTIONS.md) and are marked "convention".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tpb::isa {

inline constexpr std::size_t kInstBytes = 64;
inline constexpr std::uint8_t kInstWordLen = 16;  // in 32-bit words (SPEC §2)
using RawInst = std::array<std::uint8_t, kInstBytes>;

// ---------------------------------------------------------------------------
// Generations (SPEC §1)
enum class Arch : std::uint8_t { Sunda = 2, Cayman = 3, Mariana = 4, Maverick = 5 };
// NeuronCoreVersion ordinal of a generation: V2..V5.
constexpr int nc_version(Arch a) { return static_cast<int>(a); }
std::string_view arch_name(Arch a);              // "sunda", ...
bool parse_arch(std::string_view s, Arch& out);  // case-insensitive

// ---------------------------------------------------------------------------
// Opcodes (seed 000 §1, seed 003 §3, §6). Everything else about an opcode
// (mnemonic, home engine, generations, contract, fields, kernel_info record)
// is in its row of the opcode table (models/isa/opcode_table.cpp).
enum class Opcode : std::uint8_t {
  Ldweights = 0x01,          // LDWEIGHTS: v5 MX mode (MXTENSOR_V2 marker), plain on v2..v5
  Matmul = 0x02,             // MATMUL: likewise
  LdweightsMX = 0x09,        // v4 LdweightsMX
  MatmulMX = 0x0A,           // v4 MatmulMX
  Activation = 0x20,         // ACT activation (SPEC §18; opcodes 0x20..0x2b: conventions)
  TensorTensor = 0x21,       // DVE / POOL tensor_tensor
  TensorScalar = 0x22,       // DVE / ACT / POOL tensor_scalar
  TensorCopy = 0x23,         // DVE / ACT / POOL tensor_copy (SPEC §11, §18; opcode: convention)
  TensorReduce = 0x24,       // DVE tensor_reduce
  TensorTensorScan = 0x25,   // DVE tensor_tensor_scan
  Memset = 0x26,             // DVE / POOL memset
  Iota = 0x27,               // POOL iota
  Reciprocal = 0x28,         // DVE reciprocal
  BnStats = 0x29,            // DVE bn_stats
  BnAggr = 0x2a,             // DVE bn_aggr
  NcTranspose = 0x2b,        // DVE nc_transpose (the PE's is a matmul mode)
  TensorDequantize = 0x7b,   // TensorDequantize
  GetSequenceBounds = 0xbe,  // GET_SEQUENCE_BOUNDS (not modelled)
  Tquant = 0x6a,             // SFU TQUANT block word (seed 002; selector 0x06A, convention)
  QuantizeMX = 0xe3,         // QuantizeMX
  DmaCopy = 0xd0,            // DMA descriptor on a DMA queue (SPEC §10; opcode: convention)
  NonzeroWithCount = 0xf2,   // NONZERO_WITH_COUNT (not modelled)
  Nop = 0xf0,                // wait-only instruction, every queue (SPEC §18; opcode: convention)
};
// Mnemonic of a known opcode (its opcode-table row), or "" when unknown.
std::string_view opcode_mnemonic(std::uint8_t opcode);

// ---------------------------------------------------------------------------
// DTYPE (seed ordinals + SPEC §2 conventions)
enum class Dtype : std::uint8_t {
  Invalid = 0x0,
  Int8 = 0x1,
  Uint8 = 0x2,
  Int16 = 0x3,
  Uint16 = 0x4,
  Bf16 = 0x5,
  Fp16 = 0x6,
  Int32 = 0x7,
  Fp32 = 0x8,
  Uint32 = 0x9,
  Fp32R = 0xA,
  Fp8Exp4Legacy = 0xB,  // E4M3, NKI's legacy float8_e4m3: IEEE-like, max 240 (SPEC §18; convention)
  Fp8Exp2 = 0xC,        // E2M5
  Fp8Exp3 = 0xD,        // E3M4
  Fp8Exp4 = 0xE,        // E4M3
  Fp8Exp5 = 0xF,        // E5M2
  Fp4Exp2 = 0x10,       // E2M1
  Int4 = 0x12,
  Sfp8E8 = 0x13,  // E8M0
};
std::string_view dtype_name(std::uint8_t d);  // "" when not a DTYPE ordinal
bool parse_dtype(std::string_view s, std::uint8_t& out);
// Element size in bytes for addressing (sub-byte and x4 forms: see CONVENTIONS).
// Returns 0 for an ordinal that is not a DTYPE.
unsigned dtype_size(std::uint8_t d);

// DEQUANT_FMT (seed 000 §4, common.h:806)
enum class DequantFmt : std::uint8_t {
  Invalid = 0,
  E2M1ToE5M2 = 1,
  Int4ToE5M2 = 2,
  Nf4ToE4M3 = 3,
  E2M3ToE4M3 = 4,
};
// The seed's name of a DEQUANT_FMT ("E2M1ToE5M2", ... ; "Invalid" else).
const char* dequant_fmt_name(DequantFmt f);

// MX_PERF_MODE (seed 003 §3.3)
enum class MxPerfMode : std::uint8_t {
  None = 0x0,
  QuadRow = 0x1,
  QuadRowInterleave = 0x2,
  QuadRowTiled = 0x3,
  OctRow = 0x4,
  OctRowInterleave = 0x5,
  OctRowTiled = 0x6,
};

// ---------------------------------------------------------------------------
// HEADER (4 B) and EVENTS (8 B), SPEC §2
struct Header {
  std::uint8_t opcode;
  std::uint8_t inst_word_len;
  // Bits 3:0 the debug command (0 none, 1 trace marker); bits 7:4 the
  // engine selector (SPEC §18, convention): 0 the opcode's home engine, 1 +
  // isa::engine_index of the compute engine the word was written for (an
  // opcode several engines run: `.engine` in text; a binary sends the word
  // there). kDebugCmdMask / kEngineSelectorShift.
  std::uint8_t debug_cmd;
  std::uint8_t debug_hint;
};
static_assert(sizeof(Header) == 4);
inline constexpr std::uint8_t kDebugCmdMask = 0x0F;
inline constexpr unsigned kEngineSelectorShift = 4;

enum class WaitMode : std::uint8_t { None = 0, Equal = 1, GreaterEqual = 2 };
enum class UpdateMode : std::uint8_t { None = 0, Increment = 1, Decrement = 2, Set = 3 };
inline constexpr unsigned kNumSemaphores = 64;
inline constexpr unsigned kNumEngineRegs = 32;

struct Events {
  std::uint8_t wait_mode;
  std::uint8_t wait_idx;
  std::uint8_t update_mode;
  std::uint8_t update_idx;
  std::uint32_t sem_value;
};
static_assert(sizeof(Events) == 8);
static_assert(offsetof(Events, sem_value) == 4);

// ---------------------------------------------------------------------------
// ADDR4 (SPEC §2): marker_a4 = bits[31:27], address = bits[26:0].
namespace addr4 {
inline constexpr std::uint32_t kAddressMask = 0x07FFFFFFu;
inline constexpr std::uint8_t kMarkerImm = 0x00;           // top byte 0x00
inline constexpr std::uint8_t kMarkerAddrReg = 0x10;       // top byte 0x80
inline constexpr std::uint8_t kMarkerShapeReg = 0x08;      // top byte 0x40
inline constexpr std::uint8_t kMarkerAddrShapeReg = 0x18;  // top byte 0xC0
inline constexpr std::uint8_t kMarkerMxTensorV2 = 0x01;    // 0b00001 (v5)
// Convention: an INDIRECT16B operand of a MEM_PATTERN3D union is selected by
// marker 0b00010 (the seeds do not say how the union member is chosen).
inline constexpr std::uint8_t kMarkerIndirect = 0x02;
}  // namespace addr4

struct Addr4 {
  std::uint32_t raw;
  constexpr std::uint8_t marker() const { return static_cast<std::uint8_t>(raw >> 27); }
  constexpr std::uint32_t address() const { return raw & addr4::kAddressMask; }
  // Register number when the address rides an engine register (low 5 bits).
  constexpr unsigned reg_index() const { return raw & 0x1Fu; }
  constexpr bool addr_from_register() const { return (raw >> 31) & 1u; }
  constexpr bool shape_from_register() const { return (raw >> 30) & 1u; }
  constexpr bool is_mxtensor_v2() const { return marker() == addr4::kMarkerMxTensorV2; }
  constexpr bool is_indirect() const { return marker() == addr4::kMarkerIndirect; }
};
static_assert(sizeof(Addr4) == 4);

// ---------------------------------------------------------------------------
// Access patterns
struct Tensor3D {  // common.h:649
  Addr4 start_addr;
  std::int16_t step_elem[3];
  std::uint16_t num_elem[3];
};
static_assert(sizeof(Tensor3D) == 16);
static_assert(offsetof(Tensor3D, step_elem) == 4);
static_assert(offsetof(Tensor3D, num_elem) == 10);

struct Indirect16B {  // opaque in this model
  std::uint8_t bytes[16];
};
static_assert(sizeof(Indirect16B) == 16);

struct MxTensorV2 {  // MAVERICK common.h (seed 003 §3.3)
  Addr4 data_addr;
  Addr4 scale_addr;
  std::uint8_t num_elem[2];
  std::int16_t step_elem_data_1;
  std::int16_t step_elem_scale_1;
  std::uint8_t p_f_dim;      // F upper nibble / P lower nibble, log2
  std::uint8_t scale_dtype;  // 0 = no scales; SFP8_E8 for MX
};
static_assert(sizeof(MxTensorV2) == 16);
static_assert(offsetof(MxTensorV2, scale_addr) == 4);
static_assert(offsetof(MxTensorV2, num_elem) == 8);
static_assert(offsetof(MxTensorV2, step_elem_data_1) == 10);
static_assert(offsetof(MxTensorV2, step_elem_scale_1) == 12);
static_assert(offsetof(MxTensorV2, p_f_dim) == 14);
static_assert(offsetof(MxTensorV2, scale_dtype) == 15);

union MemPattern3D {  // common.h (maverick):906
  Tensor3D t;
  Indirect16B i;
  MxTensorV2 mx;
};
static_assert(sizeof(MemPattern3D) == 16);

struct MxTensor1D {  // seed 003 §3.2
  Addr4 start_addr;
  Addr4 scale_addr;
  std::uint16_t num_elem[1];
  std::int8_t step_elem[1];
  std::uint8_t scale_pidx;
  std::uint8_t reserved[4];
};
static_assert(sizeof(MxTensor1D) == 16);
static_assert(offsetof(MxTensor1D, scale_addr) == 4);
static_assert(offsetof(MxTensor1D, num_elem) == 8);
static_assert(offsetof(MxTensor1D, step_elem) == 10);
static_assert(offsetof(MxTensor1D, scale_pidx) == 11);
static_assert(offsetof(MxTensor1D, reserved) == 12);

union MxMemPattern1D {
  MxTensor1D t;
  Indirect16B i;  // MXIndirect16B, opaque
};
static_assert(sizeof(MxMemPattern1D) == 16);

// ---------------------------------------------------------------------------
// The operators and functions of the vector instructions (SPEC §18;
// nki.isa's names; codes: conventions). Their arithmetic: models/numerics/
// vector_ops.h.
enum class AluOp : std::uint8_t {
  Bypass = 0,  // no operator: the value passes (tensor_scalar's op1 = None)
  Add = 1,
  Subtract = 2,
  Multiply = 3,
  Divide = 4,
  Max = 5,
  Min = 6,
  Equal = 7,
  NotEqual = 8,
  GreaterEqual = 9,
  Greater = 10,
  LessEqual = 11,
  Less = 12,
  Power = 13,
  AbsMax = 14,
  AbsMin = 15,
  Abs = 16,  // unary from here: the operand is not used
  Square = 17,
  Rsqrt = 18,
  Reciprocal = 19,
};
inline constexpr unsigned kNumAluOps = 20;
// An operator byte of the vector instructions: the operator in bits 4:0;
// bit 6 (where the instruction says) the operand is a per-partition vector,
// bit 7 reverse (the operand on the left) or negate.
inline constexpr std::uint8_t kAluOpMask = 0x1F;
inline constexpr std::uint8_t kAluVectorBit = 0x40;
inline constexpr std::uint8_t kAluReverseBit = 0x80;

enum class ActFunc : std::uint8_t {
  Copy = 0,
  Exp = 1,
  Log = 2,
  Sqrt = 3,
  Rsqrt = 4,
  Reciprocal = 5,
  Tanh = 6,
  Sigmoid = 7,
  Relu = 8,
  Gelu = 9,
  GeluApprxTanh = 10,
  Silu = 11,
  Square = 12,
  Abs = 13,
  Sign = 14,
  Erf = 15,
  Softplus = 16,
};
inline constexpr unsigned kNumActFuncs = 17;

// activation's free-axis reduce (SPEC §18): operator (bits 3:0 of `reduce`)
// and command on the engine's per-partition reduce registers (bits 7:4).
enum class ReduceOp : std::uint8_t { None = 0, Add = 1, Max = 2 };
enum class ReduceCmd : std::uint8_t { Idle = 0, Reset = 1, Reduce = 2, ResetReduce = 3 };
// nc_matmul's perf_mode (plain matmul, SPEC §18): FP8 double row.
enum class MatmulPerf : std::uint8_t { None = 0, DoubleRow = 1 };

// ---------------------------------------------------------------------------
// Instruction structs (64 B each)

// S3D3_TENS_DEQUANT, CAYMAN form (plain TENSOR3D operands), seed 000 §2.
struct S3D3TensDequantV3 {
  Header header;
  Events events;
  Tensor3D src_mem_pattern;
  std::uint8_t reserved0[4];
  std::uint8_t in_dtype;
  std::uint8_t out_dtype;
  std::uint8_t num_active_channels;
  std::uint8_t dequant_fmt;
  std::uint8_t group_size;
  std::uint8_t reserved1[7];
  Tensor3D dst_mem_pattern;
  std::uint8_t reserved2[4];
};
// S3D3_TENS_DEQUANT, MARIANA/MAVERICK form (MEM_PATTERN3D union operands).
struct S3D3TensDequant {
  Header header;
  Events events;
  MemPattern3D src_mem_pattern;
  std::uint8_t reserved0[4];
  std::uint8_t in_dtype;
  std::uint8_t out_dtype;
  std::uint8_t num_active_channels;
  std::uint8_t dequant_fmt;
  std::uint8_t group_size;
  std::uint8_t reserved1[7];
  MemPattern3D dst_mem_pattern;
  std::uint8_t reserved2[4];
};
#define TPB_ASSERT_DEQUANT_LAYOUT(T)                     \
  static_assert(sizeof(T) == 64);                        \
  static_assert(offsetof(T, events) == 4);               \
  static_assert(offsetof(T, src_mem_pattern) == 12);     \
  static_assert(offsetof(T, reserved0) == 28);           \
  static_assert(offsetof(T, in_dtype) == 32);            \
  static_assert(offsetof(T, out_dtype) == 33);           \
  static_assert(offsetof(T, num_active_channels) == 34); \
  static_assert(offsetof(T, dequant_fmt) == 35);         \
  static_assert(offsetof(T, group_size) == 36);          \
  static_assert(offsetof(T, reserved1) == 37);           \
  static_assert(offsetof(T, dst_mem_pattern) == 44);     \
  static_assert(offsetof(T, reserved2) == 60);
TPB_ASSERT_DEQUANT_LAYOUT(S3D3TensDequantV3)
TPB_ASSERT_DEQUANT_LAYOUT(S3D3TensDequant)
#undef TPB_ASSERT_DEQUANT_LAYOUT

// S3DMX1_QUANT (QuantizeMX 0xe3), seed 003 §2.5. Gaps are reserved (convention).
struct S3DMX1Quant {
  Header header;
  Events events;
  std::uint8_t reserved0[4];  // 12..15 (convention)
  MemPattern3D src_mem_pattern;
  std::uint8_t reserved1[1];  // 32 (convention)
  std::uint8_t num_active_channels;
  std::uint8_t in_dtype;
  std::uint8_t out_dtype;
  std::uint8_t reserved2[12];  // 36..47 (convention)
  MxMemPattern1D dst_mem_pattern;
};
static_assert(sizeof(S3DMX1Quant) == 64);
static_assert(offsetof(S3DMX1Quant, src_mem_pattern) == 16);
static_assert(offsetof(S3DMX1Quant, num_active_channels) == 33);
static_assert(offsetof(S3DMX1Quant, in_dtype) == 34);
static_assert(offsetof(S3DMX1Quant, out_dtype) == 35);
static_assert(offsetof(S3DMX1Quant, dst_mem_pattern) == 48);

// SMX1_LW (LdweightsMX 0x09, v4), seed 003 §3.2.
struct SMX1Lw {
  Header header;
  Events events;
  std::uint8_t reserved0[4];  // 12..15 (convention)
  MxMemPattern1D src_mem_pattern;
  std::uint8_t in_dtype;
  std::uint8_t reserved1[5];  // 33..37 (convention)
  std::uint8_t num_active_rows;
  std::uint8_t num_active_cols;
  std::uint8_t reserved2[4];  // 40..43 (convention)
  std::uint8_t row_grp;
  std::uint8_t col_grp;
  std::uint8_t reserved3[18];  // 46..63 (convention)
};
static_assert(sizeof(SMX1Lw) == 64);
static_assert(offsetof(SMX1Lw, src_mem_pattern) == 16);
static_assert(offsetof(SMX1Lw, in_dtype) == 32);
static_assert(offsetof(SMX1Lw, num_active_rows) == 38);
static_assert(offsetof(SMX1Lw, num_active_cols) == 39);
static_assert(offsetof(SMX1Lw, row_grp) == 44);
static_assert(offsetof(SMX1Lw, col_grp) == 45);

// SMX1D3_MM (MatmulMX 0x0A, v4), seed 003 §3.2.
struct SMX1D3Mm {
  Header header;
  Events events;
  std::uint8_t reserved0[4];  // 12..15 (convention)
  MxMemPattern1D src_mem_pattern;
  std::uint8_t in_dtype;
  std::uint8_t reserved1[5];  // 33..37 (convention)
  std::uint8_t num_active_rows;
  std::uint8_t reserved2[1];  // 39 (convention)
  std::uint8_t out_dtype;
  std::uint8_t reserved3[2];  // 41..42 (convention)
  std::uint8_t psum_accumulate_flags;
  std::uint8_t reserved4[4];  // 44..47 (convention)
  MemPattern3D dst_mem_pattern;
};
static_assert(sizeof(SMX1D3Mm) == 64);
static_assert(offsetof(SMX1D3Mm, src_mem_pattern) == 16);
static_assert(offsetof(SMX1D3Mm, in_dtype) == 32);
static_assert(offsetof(SMX1D3Mm, num_active_rows) == 38);
static_assert(offsetof(SMX1D3Mm, out_dtype) == 40);
static_assert(offsetof(SMX1D3Mm, psum_accumulate_flags) == 43);
static_assert(offsetof(SMX1D3Mm, dst_mem_pattern) == 48);

// S3_LW (LDWEIGHTS 0x01; v5 in MX mode, every generation in plain mode,
// SPEC §18). Only mx_perf_mode@39 is given by seed 003 §3.3; every other
// offset is a convention.
struct S3Lw {
  Header header;
  Events events;
  MemPattern3D src_mem_pattern;  // 12..27
  std::uint8_t reserved0[4];     // 28..31
  std::uint8_t in_dtype;         // 32
  std::uint8_t num_active_rows;  // 33
  std::uint8_t num_active_cols;  // 34
  std::uint8_t row_grp;          // 35
  std::uint8_t col_grp;          // 36
  std::uint8_t perf;             // 37 plain mode: MatmulPerf (SPEC §18; convention)
  std::uint8_t reserved1[1];     // 38
  std::uint8_t mx_perf_mode;     // 39 (seed)
  std::uint8_t reserved2[24];    // 40..63
};
static_assert(sizeof(S3Lw) == 64);
static_assert(offsetof(S3Lw, perf) == 37);
static_assert(offsetof(S3Lw, src_mem_pattern) == 12);
static_assert(offsetof(S3Lw, in_dtype) == 32);
static_assert(offsetof(S3Lw, mx_perf_mode) == 39);

// S3D3_MM (MATMUL 0x02; v5 in MX mode, every generation in plain mode, SPEC
// §18). Only mx_perf_mode@40 is given by seed 003 §3.3.
struct S3D3Mm {
  Header header;
  Events events;
  MemPattern3D src_mem_pattern;        // 12..27
  std::uint8_t reserved0[4];           // 28..31
  std::uint8_t in_dtype;               // 32
  std::uint8_t out_dtype;              // 33
  std::uint8_t num_active_rows;        // 34
  std::uint8_t psum_accumulate_flags;  // 35
  std::uint8_t transpose;              // 36 plain mode: is_transpose (SPEC §18; convention)
  std::uint8_t perf;                   // 37 plain mode: MatmulPerf (SPEC §18; convention)
  std::uint8_t reserved1[2];           // 38..39
  std::uint8_t mx_perf_mode;           // 40 (seed)
  std::uint8_t reserved2[3];           // 41..43
  MemPattern3D dst_mem_pattern;        // 44..59
  std::uint8_t reserved3[4];           // 60..63
};
static_assert(sizeof(S3D3Mm) == 64);
static_assert(offsetof(S3D3Mm, src_mem_pattern) == 12);
static_assert(offsetof(S3D3Mm, in_dtype) == 32);
static_assert(offsetof(S3D3Mm, transpose) == 36);
static_assert(offsetof(S3D3Mm, mx_perf_mode) == 40);
static_assert(offsetof(S3D3Mm, dst_mem_pattern) == 44);

// DVE tensor_copy (SPEC §11). The layout is a convention: the operand
// placement of S3D3_TENS_DEQUANT (src MEM_PATTERN3D@12, in_dtype@32,
// out_dtype@33, num_active_channels@34, dst MEM_PATTERN3D@44), every other
// byte reserved (must be zero). Both operands are TENSOR3D patterns in SBUF
// or PSUM; the pattern applies per partition.
struct S3D3TensorCopy {
  Header header;
  Events events;
  MemPattern3D src_mem_pattern;      // 12..27
  std::uint8_t reserved0[4];         // 28..31
  std::uint8_t in_dtype;             // 32
  std::uint8_t out_dtype;            // 33
  std::uint8_t num_active_channels;  // 34
  std::uint8_t reserved1[9];         // 35..43
  MemPattern3D dst_mem_pattern;      // 44..59
  std::uint8_t reserved2[4];         // 60..63
};
static_assert(sizeof(S3D3TensorCopy) == 64);
static_assert(offsetof(S3D3TensorCopy, events) == 4);
static_assert(offsetof(S3D3TensorCopy, src_mem_pattern) == 12);
static_assert(offsetof(S3D3TensorCopy, reserved0) == 28);
static_assert(offsetof(S3D3TensorCopy, in_dtype) == 32);
static_assert(offsetof(S3D3TensorCopy, out_dtype) == 33);
static_assert(offsetof(S3D3TensorCopy, num_active_channels) == 34);
static_assert(offsetof(S3D3TensorCopy, reserved1) == 35);
static_assert(offsetof(S3D3TensorCopy, dst_mem_pattern) == 44);
static_assert(offsetof(S3D3TensorCopy, reserved2) == 60);

// The one-input layout of SPEC §18's unary instructions (reciprocal,
// bn_stats, bn_aggr, nc_transpose on the DVE): tensor_copy's.
using S3D3Unary = S3D3TensorCopy;

// A second source of the same shape as the first (its num_elem): start
// address and steps only, 10 bytes (tensor_tensor, tensor_tensor_scan;
// convention). Kept as bytes so that the instruction structs pack.
struct Steps3D {
  std::uint8_t bytes[10];  // ADDR4 start_addr @0, i16 step_elem[3] @4
};
static_assert(sizeof(Steps3D) == 10);
// The TENSOR3D of a Steps3D with the shape of `shape`.
inline Tensor3D steps3d_pattern(const Steps3D& s, const Tensor3D& shape) {
  Tensor3D t = shape;
  std::memcpy(&t.start_addr, s.bytes, 4);
  std::memcpy(t.step_elem, s.bytes + 4, 6);
  return t;
}

// activation (SPEC §18, ACT; convention): dst = f(src x scale + bias), with
// the optional free-axis reduce into the engine's reduce registers and out
// to reduce_addr.
struct S3D3Act {
  Header header;
  Events events;
  MemPattern3D src_mem_pattern;      // 12..27
  std::uint8_t in_dtype;             // 28
  std::uint8_t out_dtype;            // 29
  std::uint8_t num_active_channels;  // 30
  std::uint8_t func;                 // 31 ActFunc
  std::uint32_t scale;               // 32..35 FP32 bits, or an ADDR4 (flags bit 0)
  Addr4 bias_addr;                   // 36..39 per-partition bias (bias_dtype != 0)
  std::uint8_t flags;                // 40 bit 0: scale is a per-partition FP32 vector
  std::uint8_t bias_dtype;           // 41 0: no bias
  std::uint8_t reduce;               // 42 ReduceOp bits 3:0, ReduceCmd bits 7:4
  std::uint8_t reduce_dtype;         // 43 0: the registers are not written out
  MemPattern3D dst_mem_pattern;      // 44..59
  Addr4 reduce_addr;                 // 60..63 one element per partition
};
static_assert(sizeof(S3D3Act) == 64);
static_assert(offsetof(S3D3Act, src_mem_pattern) == 12);
static_assert(offsetof(S3D3Act, func) == 31);
static_assert(offsetof(S3D3Act, scale) == 32);
static_assert(offsetof(S3D3Act, bias_addr) == 36);
static_assert(offsetof(S3D3Act, flags) == 40);
static_assert(offsetof(S3D3Act, reduce_dtype) == 43);
static_assert(offsetof(S3D3Act, dst_mem_pattern) == 44);
static_assert(offsetof(S3D3Act, reduce_addr) == 60);

// tensor_tensor (SPEC §18, DVE / POOL; convention): dst = src0 <op> src1.
struct S3D3Tt {
  Header header;
  Events events;
  MemPattern3D src_mem_pattern;      // 12..27 data1
  Steps3D src1;                      // 28..37 data2, src's shape
  std::uint8_t in_dtype;             // 38 data1
  std::uint8_t in1_dtype;            // 39 data2
  std::uint8_t out_dtype;            // 40
  std::uint8_t num_active_channels;  // 41
  std::uint8_t op;                   // 42 AluOp (bits 4:0)
  std::uint8_t reserved0[1];         // 43
  MemPattern3D dst_mem_pattern;      // 44..59
  std::uint8_t reserved1[4];         // 60..63
};
static_assert(sizeof(S3D3Tt) == 64);
static_assert(offsetof(S3D3Tt, src1) == 28);
static_assert(offsetof(S3D3Tt, in_dtype) == 38);
static_assert(offsetof(S3D3Tt, op) == 42);
static_assert(offsetof(S3D3Tt, dst_mem_pattern) == 44);
static_assert(offsetof(S3D3Tt, reserved1) == 60);

// tensor_scalar (SPEC §18, DVE / ACT / POOL; convention): dst = (src <op0>
// operand0) <op1> operand1; each operand an FP32 scalar or, with its op
// byte's vector bit, the ADDR4 of a per-partition FP32 vector.
struct S3D3Ts {
  Header header;
  Events events;
  MemPattern3D src_mem_pattern;      // 12..27
  std::uint8_t in_dtype;             // 28
  std::uint8_t out_dtype;            // 29
  std::uint8_t num_active_channels;  // 30
  std::uint8_t op0;                  // 31 AluOp | vector bit 6 | reverse bit 7
  std::uint32_t operand0;            // 32..35
  std::uint32_t operand1;            // 36..39
  std::uint8_t op1;                  // 40 (Bypass: one operator)
  std::uint8_t reserved0[3];         // 41..43
  MemPattern3D dst_mem_pattern;      // 44..59
  std::uint8_t reserved1[4];         // 60..63
};
static_assert(sizeof(S3D3Ts) == 64);
static_assert(offsetof(S3D3Ts, op0) == 31);
static_assert(offsetof(S3D3Ts, operand0) == 32);
static_assert(offsetof(S3D3Ts, op1) == 40);
static_assert(offsetof(S3D3Ts, dst_mem_pattern) == 44);

// tensor_reduce (SPEC §18, DVE; convention): the innermost `axes` dimensions
// of src reduced with op (add, multiply, maximum, minimum), negated with
// the op byte's bit 7.
struct S3D3Reduce {
  Header header;
  Events events;
  MemPattern3D src_mem_pattern;      // 12..27
  std::uint8_t in_dtype;             // 28
  std::uint8_t out_dtype;            // 29
  std::uint8_t num_active_channels;  // 30
  std::uint8_t op;                   // 31 AluOp | negate bit 7
  std::uint8_t axes;                 // 32 1..3 innermost dimensions
  std::uint8_t keepdims;             // 33 0 / 1 (the shape NKI gives dst; values alike)
  std::uint8_t reserved0[10];        // 34..43
  MemPattern3D dst_mem_pattern;      // 44..59
  std::uint8_t reserved1[4];         // 60..63
};
static_assert(sizeof(S3D3Reduce) == 64);
static_assert(offsetof(S3D3Reduce, axes) == 32);
static_assert(offsetof(S3D3Reduce, dst_mem_pattern) == 44);

// tensor_tensor_scan (SPEC §18, DVE; convention): per partition acc =
// initial, acc = op1(op0(src0[i], acc), src1[i]) in index order.
struct S3D3Scan {
  Header header;
  Events events;
  MemPattern3D src_mem_pattern;      // 12..27 data0
  Steps3D src1;                      // 28..37 data1, src's shape
  std::uint8_t in_dtype;             // 38
  std::uint8_t in1_dtype;            // 39
  std::uint8_t out_dtype;            // 40
  std::uint8_t num_active_channels;  // 41
  std::uint8_t op0;                  // 42 AluOp | initial is a vector bit 6 | reverse0 bit 7
  std::uint8_t op1;                  // 43 AluOp | reverse1 bit 7
  MemPattern3D dst_mem_pattern;      // 44..59
  std::uint32_t initial;             // 60..63 FP32 bits or ADDR4
};
static_assert(sizeof(S3D3Scan) == 64);
static_assert(offsetof(S3D3Scan, op0) == 42);
static_assert(offsetof(S3D3Scan, initial) == 60);

// memset (SPEC §18, DVE / POOL; convention): every dst element = value, the
// element's bits (the low dtype_size bytes, little-endian).
struct S3D3Memset {
  Header header;
  Events events;
  std::uint8_t reserved0[17];        // 12..28
  std::uint8_t out_dtype;            // 29
  std::uint8_t num_active_channels;  // 30
  std::uint8_t reserved1[1];         // 31
  std::uint32_t value;               // 32..35
  std::uint8_t reserved2[8];         // 36..43
  MemPattern3D dst_mem_pattern;      // 44..59
  std::uint8_t reserved3[4];         // 60..63
};
static_assert(sizeof(S3D3Memset) == 64);
static_assert(offsetof(S3D3Memset, out_dtype) == 29);
static_assert(offsetof(S3D3Memset, value) == 32);
static_assert(offsetof(S3D3Memset, dst_mem_pattern) == 44);

// iota (SPEC §18, POOL; convention): element (i0, i1, i2) of partition c of
// the value pattern = offset + c x channel_multiplier + sum i_d x step_d in
// INT32 arithmetic (wrapping), converted to out_dtype, written along dst.
struct S3D3Iota {
  Header header;
  Events events;
  std::int32_t offset;               // 12..15
  std::int32_t channel_multiplier;   // 16..19
  std::int32_t step[3];              // 20..31 (dimension 0 innermost)
  std::uint16_t num[3];              // 32..37
  std::uint8_t out_dtype;            // 38
  std::uint8_t num_active_channels;  // 39
  std::uint8_t reserved0[4];         // 40..43
  MemPattern3D dst_mem_pattern;      // 44..59
  std::uint8_t reserved1[4];         // 60..63
};
static_assert(sizeof(S3D3Iota) == 64);
static_assert(offsetof(S3D3Iota, step) == 20);
static_assert(offsetof(S3D3Iota, num) == 32);
static_assert(offsetof(S3D3Iota, out_dtype) == 38);
static_assert(offsetof(S3D3Iota, dst_mem_pattern) == 44);

// ---------------------------------------------------------------------------
// DMA descriptor (SPEC §10): the 64-byte word a DMA queue executes. Its
// encoding is this model's (docs/CONVENTIONS.md). It moves a block of
// num_rows rows of row_bytes bytes each: row r of an HBM endpoint starts at
// addr + r x row_stride (a byte offset in the core's HBM); row r of an SBUF
// endpoint lies in partition (start partition + r) at the start offset, the
// start being the 27-bit SBUF address in addr. With dst_rmw_op add, each
// destination element becomes destination + source in rmw_dtype.
enum class DmaEndpointKind : std::uint8_t { Hbm = 0, Sbuf = 1 };
enum class DmaRmwOp : std::uint8_t { None = 0, Add = 1 };
inline constexpr unsigned kDmaMaxRows = 128;
// The most cores a device of the model has (SPEC §15; platform::Device).
inline constexpr unsigned kMaxDeviceCores = 32;

struct DmaEndpoint {
  std::uint64_t addr;        // HBM: byte offset of row 0; SBUF: ISA address of row 0
  std::uint32_t row_stride;  // HBM: bytes from row r to row r + 1; SBUF: 0
  std::uint8_t kind;         // DmaEndpointKind
  std::uint8_t reserved[3];
};
static_assert(sizeof(DmaEndpoint) == 16);
static_assert(offsetof(DmaEndpoint, row_stride) == 8);
static_assert(offsetof(DmaEndpoint, kind) == 12);
static_assert(offsetof(DmaEndpoint, reserved) == 13);

struct DmaDescriptor {
  Header header;            // 0..3: opcode 0xd0
  Events events;            // 4..11: wait before the transfer, update on completion
  std::uint8_t num_rows;    // 12: 1..128
  std::uint8_t dst_rmw_op;  // 13: DmaRmwOp
  std::uint8_t rmw_dtype;   // 14: DTYPE of the add (0 without one)
  std::uint8_t queue;       // 15: the DMA queue a binary sends it to (0..15)
  std::uint32_t row_bytes;  // 16..19: R, bytes per row
  // 20: whose semaphore the completion updates (SPEC §15, the project's
  // encoding): 0 the descriptor's own core's, 1 + K core K's of the device
  // (`update=inc(coreK:semN)`; K < kMaxDeviceCores).
  std::uint8_t update_core;
  std::uint8_t reserved1[11];  // 21..31
  DmaEndpoint src;             // 32..47
  DmaEndpoint dst;             // 48..63
};
static_assert(sizeof(DmaDescriptor) == 64);
static_assert(offsetof(DmaDescriptor, events) == 4);
static_assert(offsetof(DmaDescriptor, num_rows) == 12);
static_assert(offsetof(DmaDescriptor, dst_rmw_op) == 13);
static_assert(offsetof(DmaDescriptor, rmw_dtype) == 14);
static_assert(offsetof(DmaDescriptor, queue) == 15);
static_assert(offsetof(DmaDescriptor, row_bytes) == 16);
static_assert(offsetof(DmaDescriptor, update_core) == 20);
static_assert(offsetof(DmaDescriptor, reserved1) == 21);
static_assert(offsetof(DmaDescriptor, src) == 32);
static_assert(offsetof(DmaDescriptor, dst) == 48);

// Of `engines` DMA engines, the one carrying the SBUF partition of row
// `row` of an SBUF endpoint.
inline unsigned dma_engine_of_sbuf_row(const DmaEndpoint& e, unsigned row, unsigned engines) {
  const unsigned ppe = (128 + engines - 1) / engines;
  return ((static_cast<std::uint32_t>(e.addr) >> 18) % 128 + row) / ppe % engines;
}

// The DMA engine that moves row `row` of a descriptor (SPEC §10): of
// `engines` engines, engine e carries the SBUF partitions e x ppe .. e x ppe
// + ppe - 1 (ppe = 128 / engines, TIMING.md [J]: 16 engines of 8) — the
// source's partition when the source is SBUF (a store, an SBUF -> SBUF
// copy), else the destination's (a load); HBM -> HBM rows are dealt round
// robin. The row's HBM bytes go with it. The DMA engines and the race check
// both ask here. (An SBUF -> SBUF transfer is ordered on its destination
// partitions' engines too: models/sc/engine/dma_engines.h.)
inline unsigned dma_engine_of_row(const DmaDescriptor& d, unsigned row, unsigned engines) {
  if (d.src.kind == static_cast<std::uint8_t>(DmaEndpointKind::Sbuf))
    return dma_engine_of_sbuf_row(d.src, row, engines);
  if (d.dst.kind == static_cast<std::uint8_t>(DmaEndpointKind::Sbuf))
    return dma_engine_of_sbuf_row(d.dst, row, engines);
  return row % engines;
}

// ---------------------------------------------------------------------------
// The wait-only instruction `nop` (SPEC §18; encoding: convention): EVENTS
// and nothing else. It waits on its semaphore condition, then applies its
// update at its completion; it reads and writes no memory. Every compute
// engine and every DMA queue executes it. Byte 12 records the queue it was
// written for (isa::Queue: pool 0, dve 1, pe 2, sfu 3, dma0..dma15 4..19), so
// that a binary sends it there, as a DMA descriptor's `queue` byte does.
struct NopWord {
  Header header;              // 0..3: opcode 0xf0
  Events events;              // 4..11
  std::uint8_t queue;         // 12: the queue a binary sends it to
  std::uint8_t reserved[51];  // 13..63
};
static_assert(sizeof(NopWord) == 64);
static_assert(offsetof(NopWord, events) == 4);
static_assert(offsetof(NopWord, queue) == 12);
static_assert(offsetof(NopWord, reserved) == 13);

// ---------------------------------------------------------------------------
// SFU TQUANT block word (seed 002, SPEC §6). One TQUANT block (BSTART.SFU
// TQUANT .. BSTOP) is one 64-byte word on the SFU queue. The seed gives the
// selector 0x06A, Mode 3 and Function 10; every other placement is a
// convention (docs/ASM.md). Every binding of the block is encoded, also the
// ones that make it illegal (a count per statement kind, presence bits per
// B.DIM binding, the must-be-zero fields), so that an illegal block can be
// written and is faulted by the SFU kernel, not by the assembler.

// Tile data types of BSTART / B.DATR DataType (convention; the seed says only
// that zero is FP64).
enum class TileDataType : std::uint8_t {
  Fp64 = 0,
  Fp32 = 1,
  Fp16 = 2,
  Bf16 = 3,
  S8 = 4,
  U8 = 5,
  S16 = 6,
  U16 = 7,
  S32 = 8,
  U32 = 9,
};
inline constexpr unsigned kNumTileDataTypes = 10;
std::string_view tile_dtype_name(std::uint8_t t);  // "FP32", ...; "" when unknown
unsigned tile_dtype_size(std::uint8_t t);          // bytes per element; 0 when unknown

inline constexpr std::uint16_t kTquantSelector = 0x06A;  // seed 002
inline constexpr std::uint8_t kTquantMode = 3;           // seed 002
inline constexpr std::uint8_t kTquantFunction = 10;      // seed 002
inline constexpr unsigned kNumLocalTiles = 32;           // T0..T31 (SPEC §6)

struct TquantBlock {
  Header header;              // 0: opcode 0x6a
  Events events;              // 4
  std::uint16_t selector;     // 12: 0x06A
  std::uint8_t mode;          // 14: 3
  std::uint8_t function;      // 15: 10
  std::uint8_t src_dtype;     // 16: BSTART DataType (TileDataType), FP32
  std::uint8_t datr_count;    // 17: B.DATR statements (1)
  std::uint8_t dst_dtype;     // 18: B.DATR DataType, S8 or U8
  std::uint8_t rmode;         // 19: B.DATR RMode (0 RNE .. 4 RMM)
  std::uint8_t sat;           // 20: B.DATR Sat (0 modulo, 1 clamp)
  std::uint8_t canonicalize;  // 21: B.DATR Canonicalize, must be 0
  std::uint8_t layout;        // 22: B.DATR Layout, 0 = NORM (row-major)
  std::uint8_t cmode;         // 23: B.DATR CMode, must be 0
  std::uint8_t pad_value;     // 24: B.DATR PadValueOrByteId, must be 0
  std::uint8_t dim_mask;      // 25: bit k = B.DIM LBk written (LB0..LB7)
  std::uint8_t dim_repeats;   // 26: B.DIM bindings written again (0)
  std::uint8_t ior_count;     // 27: B.IOR statements (0 = defaults, 1)
  std::uint16_t lb0;          // 28: ValidCol
  std::uint16_t lb1;          // 30: ValidRow (omitted: 1)
  std::uint16_t lb2;          // 32: Col (omitted: ValidCol)
  std::uint8_t reg_src0;      // 34: B.IOR RegSrc0: GPR of the FP32 multiplier
  std::uint8_t reg_src1;      // 35: B.IOR RegSrc1: GPR of the zero point
  std::uint8_t reg_src2;      // 36: B.IOR RegSrc2, must be 0
  std::uint8_t reg_dst;       // 37: B.IOR RegDst, must be 0
  std::uint8_t iot_count;     // 38: B.IOT statements (1)
  std::uint8_t ios_count;     // 39: B.IOS statements (0)
  std::uint8_t src_count;     // 40: source tiles of B.IOT (1)
  std::uint8_t src_tile;      // 41: SrcTile (0..31)
  std::uint8_t src2_tile;     // 42: a second source tile (illegal)
  std::uint8_t dst_count;     // 43: destinations of B.IOT (1)
  std::uint8_t dst_tile;      // 44: DstTile (0..31)
  std::uint8_t dst2_tile;     // 45: a second destination tile (illegal)
  std::uint16_t tsize;        // 46: DstTile TSize in 1 KiB units
  std::uint16_t mask;         // 48: PE_MASK (0: strict no-op)
  std::uint8_t last;          // 50: 1 = <last> written (terminating B.IOT)
  std::uint8_t dst2_tsize;    // 51: TSize of a second destination (illegal)
  std::uint8_t reserved[12];  // 52..63, must be 0
};
static_assert(sizeof(TquantBlock) == 64);
static_assert(offsetof(TquantBlock, selector) == 12);
static_assert(offsetof(TquantBlock, src_dtype) == 16);
static_assert(offsetof(TquantBlock, dim_mask) == 25);
static_assert(offsetof(TquantBlock, lb0) == 28);
static_assert(offsetof(TquantBlock, lb2) == 32);
static_assert(offsetof(TquantBlock, reg_src0) == 34);
static_assert(offsetof(TquantBlock, iot_count) == 38);
static_assert(offsetof(TquantBlock, tsize) == 46);
static_assert(offsetof(TquantBlock, mask) == 48);
static_assert(offsetof(TquantBlock, reserved) == 52);

// ---------------------------------------------------------------------------
// Encode / decode: plain byte copies of trivially copyable little-endian
// structs (the host is little-endian; checked at build time).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "tpbsim needs a little-endian host");

template <typename T>
T decode_as(const RawInst& raw) {
  static_assert(sizeof(T) == kInstBytes);
  T out;
  std::memcpy(&out, raw.data(), sizeof(T));
  return out;
}
template <typename T>
RawInst encode(const T& inst) {
  static_assert(sizeof(T) == kInstBytes);
  RawInst raw;
  std::memcpy(raw.data(), &inst, sizeof(T));
  return raw;
}
inline Header header_of(const RawInst& raw) { return Header{raw[0], raw[1], raw[2], raw[3]}; }
inline Events events_of(const RawInst& raw) {
  Events e;
  std::memcpy(&e, raw.data() + 4, sizeof(e));
  return e;
}

}  // namespace tpb::isa
