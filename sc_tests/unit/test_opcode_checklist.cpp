// The places an opcode lives (docs/ARCHITECTURE.md "Adding an opcode"),
// walked for every row of the opcode table: a new opcode that misses one —
// a contract not run on its generations, a predicate not documented, a
// kernel not registered at its VA, a bundle without its cycles in a
// profile, an instruction not calibrated — fails here, naming the row and
// the place. The list of places in the doc and the one this test walks are
// held equal.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "firmware_stubs/builtin_kernels.h"
#include "models/isa/checker.h"
#include "models/isa/opcode_table.h"
#include "models/kernel/kernel.h"

namespace tpb::isa {
namespace {

std::string source_text(const std::string& rel) {
  std::ifstream in(std::string(TPB_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The places this test walks, in the doc's order.
const std::vector<std::string> kChecklistPlaces = {"encoding", "row",         "predicates",
                                                   "contract", "kernel",      "registry",
                                                   "timing",   "calibration", "docs"};

constexpr Arch kChecklistArchs[] = {Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::Maverick};

// A modelled opcode: one with a contract (the POOL's idx14 / idx15 rows
// are in the table for their kernel_info records only, not modelled).
bool is_modelled(const OpcodeInfo& row) { return !row.contract.empty(); }

// Whether `doc` names `word` in code: `word`, `word(...)` or `word ...`.
bool doc_names(const std::string& doc, const std::string& word) {
  return doc.find("`" + word + "`") != std::string::npos ||
         doc.find("`" + word + "(") != std::string::npos ||
         doc.find("`" + word + " ") != std::string::npos;
}

TEST(OpcodeChecklist, TheDocListsThePlacesThisTestWalks) {
  const std::string doc = source_text("docs/ARCHITECTURE.md");
  const std::size_t at = doc.find("### Adding an opcode");
  ASSERT_NE(at, std::string::npos);
  const std::string section = doc.substr(at, doc.find("\n## ", at) - at);
  std::vector<std::string> listed;
  const std::regex bullet(R"(\n- \*\*([a-z]+)\*\*:)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), bullet);
       it != std::sregex_iterator(); ++it)
    listed.push_back((*it)[1]);
  EXPECT_EQ(listed, kChecklistPlaces);
}

// encoding + row: the row is found by its code, its mnemonic is its own,
// and its assembler fields lie in the word after the header and events
// (bytes 0..11), none over another.
TEST(OpcodeChecklist, EveryRowIsFoundByItsOpcodeAndItsFieldsFitTheWord) {
  std::set<std::string_view> mnemonics;
  for (const OpcodeInfo& row : opcode_table()) {
    EXPECT_EQ(opcode_info(row.code()), &row) << row.mnemonic;
    EXPECT_TRUE(mnemonics.insert(row.mnemonic).second) << row.mnemonic << " twice";
    if (!row.asm_fields) continue;
    std::vector<bool> used(kInstBytes * 8, false);  // by bit
    const auto claim = [&](unsigned byte, unsigned bit, const char* name) {
      EXPECT_FALSE(used[byte * 8 + bit])
          << row.mnemonic << " " << name << " overlaps at byte " << byte << " bit " << bit;
      used[byte * 8 + bit] = true;
    };
    for (const AsmField& f : *row.asm_fields) {
      ASSERT_GE(f.off, 12) << row.mnemonic << " " << f.name;
      ASSERT_LE(f.off + f.len, static_cast<int>(kInstBytes)) << row.mnemonic << " " << f.name;
      for (unsigned b = f.off; b < f.off + f.len; ++b)
        for (unsigned bit = 0; bit < 8; ++bit)
          if (f.len != 1 || (f.mask() >> bit) & 1u) claim(b, bit, f.name);
      // A scalar-or-vector operand owns its flag bit too.
      if (f.kind == AsmFieldKind::Scalar) claim(static_cast<unsigned>(f.from), f.shift, f.name);
    }
    // Every bit of the word past the header and events is some field's, so
    // every word is reachable from text.
    for (unsigned bit = 12 * 8; bit < kInstBytes * 8; ++bit)
      EXPECT_TRUE(used[bit]) << row.mnemonic << ": byte " << bit / 8 << " bit " << bit % 8
                             << " belongs to no field";
  }
}

// contract: run on every generation the opcode is on (and, judged by its
// nc predicate, on every other), under its contract name.
TEST(OpcodeChecklist, EveryModelledOpcodeHasItsContractOnEveryGeneration) {
  for (const OpcodeInfo& row : opcode_table()) {
    if (!is_modelled(row)) continue;
    const std::vector<std::string_view>& all = all_contract_names();
    EXPECT_NE(std::find(all.begin(), all.end(), row.contract), all.end()) << row.mnemonic;
    for (Arch a : kChecklistArchs) {
      EXPECT_NE(row.contract_fn(a), nullptr) << row.mnemonic << " on " << arch_name(a);
      RawInst word{};
      word[0] = row.code();
      EXPECT_EQ(check_instruction(word, a).contract, row.contract) << row.mnemonic;
    }
  }
}

// predicates + docs: every name a contract reports, and the contract,
// documented in docs/PREDICATES.md.
TEST(OpcodeChecklist, EveryContractAndPredicateIsDocumented) {
  const std::string predicates = source_text("docs/PREDICATES.md");
  for (const OpcodeInfo& row : opcode_table()) {
    if (!is_modelled(row)) continue;
    EXPECT_TRUE(doc_names(predicates, std::string(row.contract))) << row.contract;
    std::vector<std::string_view> offered;
    PredicateSink every(offered, PredicateSink::Keep::Every);
    for (Arch a : kChecklistArchs)
      if (const ContractFn fn = row.contract_fn(a)) fn(RawInst{}, a, every);
    EXPECT_FALSE(offered.empty()) << row.contract;
    for (std::string_view name : offered) {
      const std::string base(name.substr(0, name.find('(')));
      EXPECT_TRUE(doc_names(predicates, base)) << row.contract << ": " << base;
    }
  }
}

// The engines of a row as docs/ASM.md's section header names them: "POOL",
// "DVE", ..., or "a DMA queue".
std::vector<std::string> engine_words(const OpcodeInfo& row) {
  if (is_dma_queue(row.home)) return {"a DMA queue"};
  std::vector<std::string> words;
  for (Queue e : kEngines) {
    if (!row.has_engine(e)) continue;
    std::string up(engine_name(e));
    for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    words.push_back(up);
  }
  return words;
}

// The byte cell of a field in docs/ASM.md's tables: "34", "12..27", or a
// bit field's "42 (bits 4:0)" / "31 (bit 7)".
std::string byte_cell(const AsmField& f) {
  if (f.bits == 1) return std::to_string(f.off) + " (bit " + std::to_string(f.shift) + ")";
  if (f.bits > 1)
    return std::to_string(f.off) + " (bits " + std::to_string(f.shift + f.bits - 1) + ":" +
           std::to_string(f.shift) + ")";
  return f.len == 1 ? std::to_string(f.off)
                    : std::to_string(f.off) + ".." + std::to_string(f.off + f.len - 1);
}

// docs: every mnemonic form has its section in docs/ASM.md, "### MNEMONIC
// (0xOP, ENGINE...", whose field table lists exactly the row's fields at the
// row's bytes (the row's fields are the struct's members, so the doc is held
// to the encoding).
TEST(OpcodeChecklist, EveryMnemonicHasItsSectionWithItsEnginesAndFields) {
  const std::string asm_doc = source_text("docs/ASM.md");
  for (const OpcodeInfo& row : opcode_table()) {
    if (!is_modelled(row) || !row.asm_fields) continue;
    const std::string head = "### " + std::string(row.mnemonic) + " (";
    const std::size_t at = asm_doc.find(head);
    ASSERT_NE(at, std::string::npos) << row.mnemonic << " has no section in docs/ASM.md";
    const std::string header = asm_doc.substr(at, asm_doc.find('\n', at) - at);
    char code[8];
    std::snprintf(code, sizeof code, "(0x%02x, ", row.code());
    std::string lower = header;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_NE(lower.find(code), std::string::npos) << header << ": not opcode " << code;
    for (const std::string& e : engine_words(row))
      EXPECT_NE(header.find(e), std::string::npos) << header << ": does not name " << e;
    // The section's field table: its rows "| `name` | bytes | ...".
    const std::size_t end = asm_doc.find("\n### ", at + 1);
    const std::string section = asm_doc.substr(at, end - at);
    std::map<std::string, std::string> listed;
    const std::regex field_row(R"(\n\| `([a-z_0-9]+)` \| ([0-9.]+(?: \(bits? [0-9:]+\))?) \|)");
    for (auto it = std::sregex_iterator(section.begin(), section.end(), field_row);
         it != std::sregex_iterator(); ++it)
      listed[(*it)[1]] = (*it)[2];
    std::map<std::string, std::string> want;
    for (const AsmField& f : *row.asm_fields) want[f.name] = byte_cell(f);
    EXPECT_EQ(listed, want) << row.mnemonic << ": the field table of docs/ASM.md";
  }
}

// kernel + registry: a modelled opcode with a kernel_info record has a
// worker registered at that VA on every generation that holds the record.
TEST(OpcodeChecklist, EveryModelledOpcodeHasAKernelAtItsVa) {
  for (const OpcodeInfo& row : opcode_table()) {
    if (!is_modelled(row)) continue;
    for (Arch a : kChecklistArchs)
      for (Queue e : kEngines)
        if (const KernelInfoSlot* slot = row.kernel_info_on(e, a)) {
          EXPECT_NE(fw::builtin_kernels().find(slot->func_va), nullptr)
              << row.mnemonic << " on " << engine_name(e) << " of " << arch_name(a)
              << ": no kernel at VA 0x" << std::hex << slot->func_va;
        }
  }
}

// timing: each of the four profiles gives every registered bundle its
// cycles, and names no other.
TEST(OpcodeChecklist, EveryBundleHasItsCyclesInEveryProfile) {
  std::set<std::string> bundles;
  for (const auto& [name, cycles] : fw::builtin_kernels().bundle_cycles()) bundles.insert(name);
  ASSERT_FALSE(bundles.empty());
  for (const char* arch : {"sunda", "cayman", "mariana", "maverick"}) {
    const nlohmann::json p =
        nlohmann::json::parse(source_text(std::string("models/timing/profiles/") + arch + ".json"));
    std::set<std::string> given;
    for (const auto& [name, cycles] : p.at("bundle_issue_cycles").items()) given.insert(name);
    EXPECT_EQ(given, bundles) << arch << ".json";
  }
}

// calibration: an instruction that runs a kernel is calibrated
// (scripts/calibrate.py writes docs/TIMING.md, ctest
// TimingCalibration.EveryRatioInItsBand holds it there).
TEST(OpcodeChecklist, EveryKernelInstructionIsCalibrated) {
  const std::string timing = source_text("docs/TIMING.md");
  for (const OpcodeInfo& row : opcode_table()) {
    if (!is_modelled(row) || row.kernel_info.empty()) continue;
    const std::regex word("(^|[^a-z_])" + std::string(row.mnemonic) + "([^a-z_]|$)");
    EXPECT_TRUE(std::regex_search(timing, word)) << row.mnemonic << " not in docs/TIMING.md";
  }
}

}  // namespace
}  // namespace tpb::isa
