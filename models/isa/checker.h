// Validity checking per generation (SPEC §1, seeds 000 §2.1 and 003 §2.5,
// §3, §5). Every predicate of the seeds is one C++ function with the seed's
// name (predicates.h); the checker runs the generation's contract for an
// instruction word and returns every predicate that failed, by name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "models/isa/encodings.h"

namespace tpb::isa {

struct CheckResult {
  std::string contract;                 // e.g. "is_valid_tensor_dequantize", "" if none
  std::vector<std::string_view> failed; // names of failed predicates, contract order
  bool valid() const { return failed.empty(); }
};

// Never throws, never reads outside `raw`; any 64 bytes get a verdict. An
// opcode with no contract on `arch` fails "has_known_opcode" (convention).
CheckResult check_instruction(const RawInst& raw, Arch arch);

// The names of every predicate the checker can report (for docs and tests).
const std::vector<std::string_view>& all_predicate_names();

}  // namespace tpb::isa
