// The opcode table (models/isa/opcode_table.h) against values written out
// from the seeds (seed 000 §1, §2; seed 003 §1, §3, §6), and every consumer
// of it: opcode_mnemonic, home_engine, the checker, the assembler, the
// default kernel_info tables, the engine and memory name tables.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/asm.h"
#include "models/isa/checker.h"
#include "models/isa/encodings.h"
#include "models/isa/opcode_table.h"
#include "models/isa/program.h"

namespace tpb::isa {
namespace {

constexpr Arch kGenerations[] = {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick};
const std::vector<Arch> kAll = {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick};

struct Expected {
  std::uint8_t opcode;
  const char* mnemonic;
  Queue home;
  std::vector<Arch> on;  // generations on which the opcode exists
  const char* contract;  // "" when none
  bool asm_form;
};

// Written from the seeds, independently of the table.
const std::vector<Expected>& expected_rows() {
  static const std::vector<Expected> rows = {
      // SPEC §18: plain mode on every generation (MX mode: v5).
      {0x01, "ldweights", Queue::Pe, kAll, "is_valid_s3_lw", true},
      {0x02, "matmul", Queue::Pe, kAll, "is_valid_s3d3_mm", true},
      {0x09, "ldweights_mx", Queue::Pe, {Arch::Mariana}, "is_valid_smx1_lw", true},
      {0x0A, "matmul_mx", Queue::Pe, {Arch::Mariana}, "is_valid_smx1d3_mm", true},
      // SPEC §18 (opcodes conventions): every generation (SPEC §1: SUNDA has them).
      {0x20, "activation", Queue::Act, kAll, "is_valid_activation", true},
      {0x21, "tensor_tensor", Queue::Dve, kAll, "is_valid_tensor_tensor", true},
      {0x22, "tensor_scalar", Queue::Dve, kAll, "is_valid_tensor_scalar", true},
      // SPEC §11 (opcode a convention): every generation (TIMING.md [M]).
      {0x23, "tensor_copy", Queue::Dve, kAll, "is_valid_tensor_copy", true},
      {0x24, "tensor_reduce", Queue::Dve, kAll, "is_valid_tensor_reduce", true},
      {0x25, "tensor_tensor_scan", Queue::Dve, kAll, "is_valid_tensor_tensor_scan", true},
      {0x26, "memset", Queue::Dve, kAll, "is_valid_memset", true},
      {0x27, "iota", Queue::Pool, kAll, "is_valid_iota", true},
      {0x28, "reciprocal", Queue::Dve, kAll, "is_valid_reciprocal", true},
      {0x29, "bn_stats", Queue::Dve, kAll, "is_valid_bn_stats", true},
      {0x2a, "bn_aggr", Queue::Dve, kAll, "is_valid_bn_aggr", true},
      {0x2b, "nc_transpose", Queue::Dve, kAll, "is_valid_nc_transpose", true},
      {0x6a,
       "tquant",
       Queue::Sfu,
       {Arch::Cayman, Arch::Mariana, Arch::Maverick},
       "is_valid_tquant_block",
       false},
      {0x7b,
       "tensor_dequantize",
       Queue::Pool,
       {Arch::Cayman, Arch::Mariana, Arch::Maverick},
       "is_valid_tensor_dequantize",
       true},
      {0xbe,
       "get_sequence_bounds",
       Queue::Pool,
       {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick},
       "",
       false},
      // SPEC §10 (opcode a convention): on a DMA queue, every generation.
      {0xd0,
       "dma_copy",
       Queue::Dma0,
       {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick},
       "is_valid_dma_copy",
       true},
      {0xe3,
       "quantize_mx",
       Queue::Dve,
       {Arch::Mariana, Arch::Maverick},
       "is_valid_s3dmx1_quant",
       true},
      // SPEC §18 the wait-only instruction (opcode a convention): every queue,
      // every generation; its home (a binary word naming no queue) POOL.
      {0xf0,
       "nop",
       Queue::Pool,
       {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick},
       "is_valid_nop",
       true},
      {0xf2,
       "nonzero_with_count",
       Queue::Pool,
       {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick},
       "",
       false},
  };
  return rows;
}

bool contains(const std::vector<Arch>& v, Arch a) {
  for (Arch x : v)
    if (x == a) return true;
  return false;
}

TEST(OpcodeTable, RowsMatchTheSeeds) {
  const auto& table = opcode_table();
  ASSERT_EQ(table.size(), expected_rows().size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const Expected& e = expected_rows()[i];
    const OpcodeInfo& row = table[i];
    SCOPED_TRACE(e.mnemonic);
    EXPECT_EQ(row.code(), e.opcode);
    EXPECT_EQ(row.mnemonic, e.mnemonic);
    EXPECT_EQ(row.home, e.home);
    EXPECT_EQ(row.contract, e.contract);
    EXPECT_EQ(row.asm_fields.has_value(), e.asm_form);
    for (Arch a : kGenerations) EXPECT_EQ(row.exists_on(a), contains(e.on, a)) << arch_name(a);
    EXPECT_EQ(opcode_info(e.opcode), &row);
  }
}

TEST(OpcodeTable, UnknownOpcodes) {
  std::set<unsigned> known;
  for (const Expected& e : expected_rows()) known.insert(e.opcode);
  for (unsigned op = 0; op < 256; ++op) {
    if (known.count(op)) continue;
    const auto b = static_cast<std::uint8_t>(op);
    EXPECT_EQ(opcode_info(b), nullptr) << op;
    EXPECT_EQ(opcode_mnemonic(b), "") << op;
    EXPECT_EQ(home_engine(b), Queue::Pool) << op;  // convention
    EXPECT_EQ(asm_mnemonic(b), "") << op;
    EXPECT_EQ(contract_for_opcode(b), "") << op;
  }
}

TEST(OpcodeTable, ConsumersReadTheRow) {
  for (const Expected& e : expected_rows()) {
    SCOPED_TRACE(e.mnemonic);
    EXPECT_EQ(opcode_mnemonic(e.opcode), e.mnemonic);
    EXPECT_EQ(home_engine(e.opcode), e.home);
    EXPECT_EQ(contract_for_opcode(e.opcode), e.contract);
    EXPECT_EQ(asm_mnemonic(e.opcode), e.asm_form ? std::string(e.mnemonic) : std::string());
  }
  EXPECT_EQ(all_contract_names(), (std::vector<std::string_view>{"is_valid_s3_lw",
                                                                 "is_valid_s3d3_mm",
                                                                 "is_valid_smx1_lw",
                                                                 "is_valid_smx1d3_mm",
                                                                 "is_valid_activation",
                                                                 "is_valid_tensor_tensor",
                                                                 "is_valid_tensor_scalar",
                                                                 "is_valid_tensor_copy",
                                                                 "is_valid_tensor_reduce",
                                                                 "is_valid_tensor_tensor_scan",
                                                                 "is_valid_memset",
                                                                 "is_valid_iota",
                                                                 "is_valid_reciprocal",
                                                                 "is_valid_bn_stats",
                                                                 "is_valid_bn_aggr",
                                                                 "is_valid_nc_transpose",
                                                                 "is_valid_tquant_block",
                                                                 "is_valid_tensor_dequantize",
                                                                 "is_valid_dma_copy",
                                                                 "is_valid_s3dmx1_quant",
                                                                 "is_valid_nop"}));
  EXPECT_EQ(asm_mnemonics(), (std::vector<std::string_view>{"ldweights",
                                                            "matmul",
                                                            "ldweights_mx",
                                                            "matmul_mx",
                                                            "activation",
                                                            "tensor_tensor",
                                                            "tensor_scalar",
                                                            "tensor_copy",
                                                            "tensor_reduce",
                                                            "tensor_tensor_scan",
                                                            "memset",
                                                            "iota",
                                                            "reciprocal",
                                                            "bn_stats",
                                                            "bn_aggr",
                                                            "nc_transpose",
                                                            "tensor_dequantize",
                                                            "dma_copy",
                                                            "quantize_mx",
                                                            "nop"}));
}

// TensorDequantize runs the TENSOR3D form on SUNDA / CAYMAN and the
// MEM_PATTERN3D form from MARIANA; the MX forms report their generation.
TEST(OpcodeTable, ContractPerGeneration) {
  const OpcodeInfo& dq = opcode_row(Opcode::TensorDequantize);
  EXPECT_EQ(dq.contract_fn(Arch::Sunda), dq.contract_fn(Arch::Cayman));
  EXPECT_EQ(dq.contract_fn(Arch::Mariana), dq.contract_fn(Arch::Maverick));
  EXPECT_NE(dq.contract_fn(Arch::Cayman), dq.contract_fn(Arch::Mariana));
  EXPECT_EQ(dq.contract_fn(Arch::Cayman), &contract::tensor_dequantize_t3d);
  EXPECT_EQ(dq.contract_fn(Arch::Mariana), &contract::tensor_dequantize_m3d);

  RawInst raw{};
  raw[0] = 0x09;
  raw[1] = kInstWordLen;
  const auto fails = [](const CheckResult& r, std::string_view name) {
    for (auto f : r.failed)
      if (f == name) return true;
    return false;
  };
  EXPECT_FALSE(fails(check_instruction(raw, Arch::Mariana), "smx1_lw_valid_nc"));
  EXPECT_TRUE(fails(check_instruction(raw, Arch::Maverick), "smx1_lw_valid_nc"));
  EXPECT_EQ(check_instruction(raw, Arch::Maverick).contract, "is_valid_smx1_lw");
  raw[0] = 0xbe;  // no contract: has_known_opcode
  const CheckResult r = check_instruction(raw, Arch::Mariana);
  EXPECT_EQ(r.contract, "");
  EXPECT_EQ(r.failed, (std::vector<std::string_view>{"has_known_opcode"}));
}

// Every row with a mnemonic form: the all-defaults word (opcode and
// inst_word_len only) disassembles to text that starts with the mnemonic and
// assembles back to the same word.
TEST(OpcodeTable, MnemonicRoundTripsThroughTheAssembler) {
  for (const OpcodeInfo& row : opcode_table()) {
    SCOPED_TRACE(std::string(row.mnemonic));
    if (!row.asm_fields) {
      EXPECT_EQ(disassemble_mnemonic(RawInst{row.code(), kInstWordLen}), "");
      continue;
    }
    RawInst raw{};
    raw[0] = row.code();
    raw[1] = kInstWordLen;
    const std::string text = disassemble_mnemonic(raw);
    // The mnemonic, then its fields (none for a word of defaults only: nop).
    ASSERT_TRUE(text == row.mnemonic || text.rfind(std::string(row.mnemonic) + " ", 0) == 0)
        << text;
    EXPECT_EQ(assemble_statement(text, SourceLoc{"t", 1, 1}), raw) << text;
  }
}

std::vector<std::uint8_t> record(std::uint8_t opcode, std::uint32_t va) {
  return {0,
          0,
          0,
          opcode,
          static_cast<std::uint8_t>(va),
          static_cast<std::uint8_t>(va >> 8),
          static_cast<std::uint8_t>(va >> 16),
          static_cast<std::uint8_t>(va >> 24)};
}
std::vector<std::uint8_t> cat(std::vector<std::vector<std::uint8_t>> recs) {
  std::vector<std::uint8_t> out;
  for (const auto& r : recs) out.insert(out.end(), r.begin(), r.end());
  return out;
}

// The wait-only instruction's record closes the DVE, PE and SFU tables.
std::vector<std::uint8_t> with_nop(std::vector<std::uint8_t> table, std::uint32_t nop_va) {
  table.resize(31 * 8, 0);
  const auto r = record(0xf0, nop_va);
  table.insert(table.end(), r.begin(), r.end());
  return table;
}

TEST(OpcodeTable, DefaultKernelInfoTables) {
  for (Arch a : kGenerations) {
    SCOPED_TRACE(arch_name(a));
    const std::vector<std::uint8_t> pool = default_kernel_info_bytes(Queue::Pool, a);
    ASSERT_EQ(pool.size(), 22u * 8);
    for (std::size_t i = 0; i < 13 * 8; ++i) EXPECT_EQ(pool[i], 0) << i;  // idx0..12 empty
    // idx13, a record the seed does not recover: the wait-only instruction.
    EXPECT_EQ(std::vector<std::uint8_t>(pool.begin() + 13 * 8, pool.begin() + 14 * 8),
              record(0xf0, 0x01004f00));
    // seed 000 §1: idx16 = 00 00 00 7b | c4 4d 00 01; its 17 records, then
    // SPEC §18's (conventions): tensor_copy, tensor_tensor, tensor_scalar,
    // memset, iota.
    EXPECT_EQ(std::vector<std::uint8_t>(pool.begin() + 16 * 8, pool.begin() + 17 * 8),
              (std::vector<std::uint8_t>{0x00, 0x00, 0x00, 0x7b, 0xc4, 0x4d, 0x00, 0x01}));
    EXPECT_EQ(std::vector<std::uint8_t>(pool.begin() + 14 * 8, pool.begin() + 16 * 8),
              cat({record(0xbe, 0x010049a0), record(0xf2, 0x01004b40)}));
    EXPECT_EQ(std::vector<std::uint8_t>(pool.begin() + 17 * 8, pool.end()),
              cat({record(0x23, 0x01006000), record(0x21, 0x01006100), record(0x22, 0x01006200),
                   record(0x26, 0x01006300), record(0x27, 0x01006400)}));
    std::vector<std::vector<std::uint8_t>> dve = {
        record(0xe3, 0x0000317a), record(0x23, 0x00003200), record(0x21, 0x3d00),
        record(0x22, 0x3400),     record(0x24, 0x3500),     record(0x25, 0x3600),
        record(0x26, 0x3700),     record(0x28, 0x3800),     record(0x29, 0x3900),
        record(0x2a, 0x3a00),     record(0x2b, 0x3b00)};
    // MAVERICK folds ACT into the DVE (seed 003): activation is the DVE's.
    if (a == Arch::Maverick) dve.push_back(record(0x20, 0x3c00));
    EXPECT_EQ(default_kernel_info_bytes(Queue::Dve, a), with_nop(cat(dve), 0x3300));
    // The ACT (SPEC §18): activation, tensor_copy (from v3), tensor_scalar.
    if (a == Arch::Maverick)
      EXPECT_TRUE(default_kernel_info_bytes(Queue::Act, a).empty());
    else
      EXPECT_EQ(
          default_kernel_info_bytes(Queue::Act, a),
          with_nop(cat({record(0x20, 0x5000),
                        a == Arch::Sunda ? std::vector<std::uint8_t>(8, 0) : record(0x23, 0x5100),
                        record(0x22, 0x5200)}),
                   0x5f00));
    // The DMA queues execute descriptors directly: no table.
    for (unsigned q = 0; q < kNumDmaQueues; ++q)
      EXPECT_TRUE(default_kernel_info_bytes(dma_queue(q), a).empty());
    EXPECT_EQ(default_kernel_info_bytes(Queue::Sfu, a), with_nop(record(0x6a, 0x00004a00), 0x4b00));
    if (a == Arch::Maverick)
      EXPECT_EQ(default_kernel_info_bytes(Queue::Pe, a),
                with_nop(cat({record(0x01, 0x2baf), record(0x02, 0x2bb7)}), 0x2c00));
    else if (a == Arch::Mariana)  // plain LDWEIGHTS / MATMUL after the MX pair
      EXPECT_EQ(default_kernel_info_bytes(Queue::Pe, a),
                with_nop(cat({record(0x09, 0x00002baf), record(0x0A, 0x00002bb7),
                              record(0x01, 0x2baf), record(0x02, 0x2bb7)}),
                         0x2c00));
    else
      EXPECT_EQ(default_kernel_info_bytes(Queue::Pe, a),
                with_nop(cat({record(0x01, 0x2baf), record(0x02, 0x2bb7)}), 0x2c00));
  }
}

// No two rows claim the same record of an engine's table on one generation,
// and each record sits in its engine's table (an opcode several engines run,
// the wait-only instruction among them, has one in each).
TEST(OpcodeTable, KernelInfoSlotsAreUnique) {
  for (Arch a : kGenerations) {
    std::set<std::pair<unsigned, unsigned>> used;
    for (const OpcodeInfo& row : opcode_table())
      for (Queue e : kEngines) {
        const KernelInfoSlot* s = row.kernel_info_on(e, a);
        if (!s) continue;
        EXPECT_TRUE(used.insert({static_cast<unsigned>(e), s->index}).second)
            << row.mnemonic << " on " << arch_name(a);
        const auto bytes = default_kernel_info_bytes(e, a);
        ASSERT_GE(bytes.size(), (s->index + 1u) * 8);
        EXPECT_EQ(bytes[s->index * 8 + 3], row.code());
      }
  }
}

TEST(OpcodeTable, TrampolineVas) {
  EXPECT_EQ(kva::kPoolGetSequenceBounds, 0x010049a0u);
  EXPECT_EQ(kva::kPoolNonzeroWithCount, 0x01004b40u);
  EXPECT_EQ(kva::kPoolTensorDequantize, 0x01004dc4u);
  EXPECT_EQ(kva::kDveQuantizeMx, 0x0000317au);
  EXPECT_EQ(kva::kPeLdweightsMx, 0x00002bafu);
  EXPECT_EQ(kva::kPeMatmulMx, 0x00002bb7u);
  EXPECT_EQ(kva::kSfuTquant, 0x00004a00u);
  EXPECT_EQ(kva::kDveTensorCopy, 0x00003200u);
  EXPECT_EQ(kva::kPoolNop, 0x01004f00u);
  EXPECT_EQ(kva::kDveNop, 0x00003300u);
  EXPECT_EQ(kva::kPeNop, 0x00002c00u);
  EXPECT_EQ(kva::kSfuNop, 0x00004b00u);
  EXPECT_EQ(kva::kActNop, 0x00005f00u);
}

TEST(NameTables, Engines) {
  const char* names[] = {"pool", "dve", "pe", "sfu", "act"};
  const Queue queues[] = {Queue::Pool, Queue::Dve, Queue::Pe, Queue::Sfu, Queue::Act};
  for (unsigned e = 0; e < kNumEngines; ++e) {
    EXPECT_STREQ(engine_name(queues[e]), names[e]);
    EXPECT_EQ(parse_engine(names[e]), queues[e]);
    EXPECT_EQ(engine_index(queues[e]), e);
    EXPECT_TRUE(is_compute_engine(queues[e]));
  }
  // SPEC §18: the ACT queue comes after the 20 of before, so they keep their places.
  EXPECT_EQ(static_cast<unsigned>(Queue::Act), 20u);
  EXPECT_EQ(kNumQueues, 21u);
  EXPECT_EQ(parse_queue("act"), Queue::Act);
  EXPECT_TRUE(listed_when_idle(Queue::Sfu));
  EXPECT_FALSE(listed_when_idle(Queue::Act));
  EXPECT_FALSE(listed_when_idle(Queue::Dma0));
  EXPECT_EQ(executing_engine(Queue::Act, Arch::Maverick), Queue::Dve);
  EXPECT_EQ(executing_engine(Queue::Act, Arch::Mariana), Queue::Act);
  EXPECT_EQ(parse_engine("DVE"), Queue::Dve);
  EXPECT_EQ(parse_engine("tpb"), std::nullopt);
  // The 16 DMA queues follow the compute engines (SPEC §10).
  EXPECT_EQ(kNumDmaQueues, 16u);
  for (unsigned q = 0; q < kNumDmaQueues; ++q) {
    const Queue e = dma_queue(q);
    EXPECT_EQ(static_cast<unsigned>(e), 4 + q);
    EXPECT_TRUE(is_dma_queue(e));
    EXPECT_EQ(dma_queue_index(e), q);
    EXPECT_EQ(engine_name(e), "dma" + std::to_string(q));
  }
  EXPECT_EQ(dma_queue(0), Queue::Dma0);
  EXPECT_EQ(dma_queue(15), Queue::Dma15);
  for (Queue e : kEngines) EXPECT_FALSE(is_dma_queue(e));
  EXPECT_FALSE(is_dma_queue(static_cast<Queue>(21)));
  EXPECT_STREQ(engine_name(static_cast<Queue>(21)), "");
}

// A binary names no queue: its DMA descriptors all go to dma0, in file
// order, the other words to their home engines.
TEST(OpcodeTable, BinaryDmaDescriptorsGoToDma0) {
  std::vector<std::uint8_t> bin(192, 0);
  for (unsigned w : {0u, 2u}) {
    bin[64 * w] = 0xd0;
    bin[64 * w + 1] = kInstWordLen;
    bin[64 * w + 12] = static_cast<std::uint8_t>(w + 1);  // num_rows tells them apart
  }
  bin[64] = 0x7b;
  bin[65] = kInstWordLen;
  const Program p = parse_binary(bin, "p.bin");
  const auto& q = p.queues[static_cast<unsigned>(Queue::Dma0)];
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].raw[12], 1);
  EXPECT_EQ(q[1].raw[12], 3);
  EXPECT_EQ(p.queues[static_cast<unsigned>(Queue::Pool)].size(), 1u);
  for (unsigned e = static_cast<unsigned>(Queue::Dma1); e < kNumQueues; ++e)
    EXPECT_TRUE(p.queues[e].empty());
}

// `.engine` takes every queue (dma0..dma15 too), `.reg` only engines with registers.
TEST(OpcodeTable, EngineDirectiveNamesEveryQueue) {
  EXPECT_EQ(parse_queue("dma0"), Queue::Dma0);
  EXPECT_EQ(parse_queue("DMA15"), Queue::Dma15);
  EXPECT_EQ(parse_queue("pool"), Queue::Pool);
  EXPECT_EQ(parse_queue("dma16"), std::nullopt);
  EXPECT_EQ(parse_engine("dma0"), std::nullopt);  // registers, clocks: compute engines only
  const Program p = parse_program(
      ".engine dma12\ndma_copy rows=1 row_bytes=4 src=hbm(0x10000000000) "
      "dst=sbuf(3, 0x40)\n",
      "t.tpb");
  ASSERT_EQ(p.queues[static_cast<unsigned>(Queue::Dma12)].size(), 1u);
  const RawInst& r = p.queues[static_cast<unsigned>(Queue::Dma12)][0].raw;
  DmaDescriptor d;
  std::memcpy(&d, r.data(), sizeof d);
  EXPECT_EQ(d.num_rows, 1);
  EXPECT_EQ(d.row_bytes, 4u);
  EXPECT_EQ(d.src.addr, std::uint64_t{1} << 40);  // a u64 HBM offset
  EXPECT_EQ(d.src.kind, 0);
  EXPECT_EQ(d.dst.addr, sbuf_addr(3, 0x40));
  EXPECT_EQ(d.dst.kind, 1);
  try {
    parse_program(".reg dma3 r0 = 1\n", "t.tpb");
    FAIL() << "no error";
  } catch (const AsmError& e) {
    EXPECT_NE(e.message().find("DMA queue, which has no registers"), std::string::npos)
        << e.message();
  }
}

TEST(NameTables, Memories) {
  const char* names[] = {"sbuf.q0",   "sbuf.q1",  "sbuf.q2",   "sbuf.q3",
                         "psum",      "sem",      "regs",      "queue.pool",
                         "queue.dve", "queue.pe", "queue.sfu", "sfu.tiles"};
  ASSERT_EQ(std::size(names), kNumCoreMemories);
  for (unsigned m = 0; m < kNumCoreMemories; ++m)
    EXPECT_STREQ(memory_name(static_cast<CoreMemory>(m)), names[m]);
  for (unsigned q = 0; q < kNumQuadrants; ++q)
    EXPECT_STREQ(memory_name(sbuf_quadrant_memory(q)), names[q]);
  EXPECT_STREQ(memory_name(queue_memory(Queue::Pe)), "queue.pe");
  EXPECT_EQ(kNumDataMemories, 5u);  // sbuf.q0..sbuf.q3, psum
}

}  // namespace
}  // namespace tpb::isa
