// The places an opcode lives (docs/ARCHITECTURE.md "Adding an opcode"),
// walked for every row of the opcode table: a new opcode that misses one —
// a contract not run on its generations, a predicate not documented, a
// kernel not registered at its VA, a bundle without its cycles in a
// profile, an instruction not calibrated — fails here, naming the row and
// the place. The list of places in the doc and the one this test walks are
// held equal.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "firmware_stubs/kernel.h"
#include "models/isa/checker.h"
#include "models/isa/opcode_table.h"

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
    std::vector<bool> used(kInstBytes, false);
    for (const AsmField& f : *row.asm_fields) {
      ASSERT_GE(f.off, 12) << row.mnemonic << " " << f.name;
      ASSERT_LE(f.off + f.len, static_cast<int>(kInstBytes)) << row.mnemonic << " " << f.name;
      for (unsigned b = f.off; b < f.off + f.len; ++b) {
        EXPECT_FALSE(used[b]) << row.mnemonic << " " << f.name << " overlaps at byte " << b;
        used[b] = true;
      }
    }
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
// documented in docs/PREDICATES.md; every mnemonic form in docs/ASM.md.
TEST(OpcodeChecklist, EveryContractAndPredicateAndMnemonicIsDocumented) {
  const std::string predicates = source_text("docs/PREDICATES.md");
  const std::string asm_doc = source_text("docs/ASM.md");
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
    // ASM.md gives each mnemonic form a section "### MNEMONIC (0xOP, ENGINE; ...)".
    if (row.asm_fields) {
      EXPECT_NE(asm_doc.find("### " + std::string(row.mnemonic) + " ("), std::string::npos)
          << row.mnemonic << " has no section in docs/ASM.md";
    }
  }
}

// kernel + registry: a modelled opcode with a kernel_info record has a
// worker registered at that VA on every generation that holds the record.
TEST(OpcodeChecklist, EveryModelledOpcodeHasAKernelAtItsVa) {
  for (const OpcodeInfo& row : opcode_table()) {
    if (!is_modelled(row)) continue;
    for (Arch a : kChecklistArchs)
      for (unsigned e = 0; e < kNumEngines; ++e)
        if (const KernelInfoSlot* slot = row.kernel_info_on(a, static_cast<Queue>(e))) {
          EXPECT_NE(fw::builtin_kernels().find(slot->func_va), nullptr)
              << row.mnemonic << " on " << arch_name(a) << ": no kernel at VA 0x" << std::hex
              << slot->func_va;
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
