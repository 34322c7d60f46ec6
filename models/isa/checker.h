// Validity checking per generation (SPEC §1, seeds 000 §2.1 and 003 §2.5,
// §3, §5). Every predicate of the seeds is one C++ function with the seed's
// name (predicates.h); the checker runs the generation's contract for an
// instruction word and returns every predicate that failed, by name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"

namespace tpb::isa {

struct CheckResult {
  // e.g. "is_valid_tensor_dequantize", "" if none (the opcode table's
  // static name: a check allocates nothing for it).
  std::string_view contract;
  std::vector<std::string_view> failed;  // names of failed predicates, contract order
  bool valid() const { return failed.empty(); }
};

// Never throws, never reads outside `raw`; any 64 bytes get a verdict. An
// opcode with no contract on `arch` fails "has_known_opcode" (convention).
// The contract of each opcode and generation is its opcode-table row's
// (models/isa/opcode_table.h).
CheckResult check_instruction(const RawInst& raw, Arch arch);
// The same against a core's configured capacities (its timing profile's
// SBUF, PSUM and HBM) instead of the generation's defaults.
CheckResult check_instruction(const RawInst& raw, Arch arch, const MemoryCapacity& cap);

// The names of every predicate the checker can report (for docs and tests):
// "has_known_opcode", then each contract's, gathered by running the
// contracts of the opcode table (a name is written once, at its call).
const std::vector<std::string_view>& all_predicate_names();

// Runs the named contract on `raw` whatever its opcode byte (so that the
// opcode predicates themselves can fail); the generation picks the form
// (TensorDequantize: TENSOR3D on SUNDA/CAYMAN, MEM_PATTERN3D after).
// std::nullopt when `contract` is not one of all_contract_names().
std::optional<CheckResult> check_as(const RawInst& raw, Arch arch, std::string_view contract);
// The contract names of the opcode table, in opcode order: "is_valid_s3_lw",
// "is_valid_s3d3_mm", "is_valid_smx1_lw", "is_valid_smx1d3_mm",
// "is_valid_tensor_copy", "is_valid_tquant_block", "is_valid_tensor_dequantize",
// "is_valid_dma_copy", "is_valid_s3dmx1_quant", "is_valid_nop".
const std::vector<std::string_view>& all_contract_names();
// The contract check_instruction runs for an opcode byte, "" when none.
std::string_view contract_for_opcode(std::uint8_t opcode);

// ---------------------------------------------------------------------------
// Contract functions: one per instruction form, each running every predicate
// of its contract in order. The opcode table points to them per generation.

// Collects the names of failed predicates, in contract order (Keep::Every:
// every predicate's name, failed or not: all_predicate_names()).
class PredicateSink {
 public:
  enum class Keep { Failed, Every };
  explicit PredicateSink(std::vector<std::string_view>& names, Keep keep = Keep::Failed)
      : names_(names), every_(keep == Keep::Every) {}
  void operator()(bool ok, std::string_view name) {
    if (!ok || every_) names_.push_back(name);
  }

 private:
  std::vector<std::string_view>& names_;
  bool every_;
};
using ContractFn = void (*)(const RawInst& raw, Arch arch, PredicateSink& sink);

// A predicate's call in a contract and the name it is reported by, written
// once: the name is the function's own (`f` is the contract's sink).
// TPB_PRED_ON adds the operand it is applied to ("mem3d_valid(src)");
// TPB_PRED_IF judges only when `cond` holds and passes otherwise (a
// predicate of one operand form), so that every contract offers every name.
#define TPB_PRED(pred, ...) f(pred(__VA_ARGS__), #pred)
#define TPB_PRED_ON(operand, pred, ...) f(pred(__VA_ARGS__), #pred "(" #operand ")")
#define TPB_PRED_IF(cond, pred, ...) f(!(cond) || pred(__VA_ARGS__), #pred)
#define TPB_PRED_ON_IF(cond, operand, pred, ...) \
  f(!(cond) || pred(__VA_ARGS__), #pred "(" #operand ")")

namespace contract {
void tensor_dequantize_t3d(const RawInst&, Arch, PredicateSink&);  // seed 000 §2.1 (TENSOR3D)
void tensor_dequantize_m3d(const RawInst&, Arch, PredicateSink&);  // seed 000 §2 CORRECTION
void s3dmx1_quant(const RawInst&, Arch, PredicateSink&);           // seed 003 §2.5, §5, §6.1
void smx1_lw(const RawInst&, Arch, PredicateSink&);                // seed 003 §3.2
void smx1d3_mm(const RawInst&, Arch, PredicateSink&);              // seed 003 §3.2
void s3_lw(const RawInst&, Arch, PredicateSink&);                  // seed 003 §3.3
void s3d3_mm(const RawInst&, Arch, PredicateSink&);                // seed 003 §3.3
// seed 002 TQUANT block word: only what every instruction has (header,
// events, opcode, generation). Every rule of the TQUANT contract is checked
// by the SFU kernel after the PE_MASK no-op test, as Fault_TileLegality /
// Fault_TileAllocation (docs/CONVENTIONS.md).
void tquant_block(const RawInst&, Arch, PredicateSink&);
void tensor_copy(const RawInst&, Arch, PredicateSink&);  // SPEC §11, §18
void dma_copy(const RawInst&, Arch, PredicateSink&);     // SPEC §10
// SPEC §18
void activation(const RawInst&, Arch, PredicateSink&);
void tensor_tensor(const RawInst&, Arch, PredicateSink&);
void tensor_scalar(const RawInst&, Arch, PredicateSink&);
void tensor_reduce(const RawInst&, Arch, PredicateSink&);
void tensor_tensor_scan(const RawInst&, Arch, PredicateSink&);
void memset(const RawInst&, Arch, PredicateSink&);
void iota(const RawInst&, Arch, PredicateSink&);
void reciprocal(const RawInst&, Arch, PredicateSink&);
void bn_stats(const RawInst&, Arch, PredicateSink&);
void bn_aggr(const RawInst&, Arch, PredicateSink&);
void nc_transpose(const RawInst&, Arch, PredicateSink&);
void nop(const RawInst&, Arch, PredicateSink&);          // SPEC §18, the wait-only instruction
}  // namespace contract

}  // namespace tpb::isa
