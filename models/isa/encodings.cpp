// Opcode names, from the opcode table (seed 000 §1, seed 003 §6). The other
// names of encodings.h (generations, DTYPEs, DEQUANT_FMT, tile types) read
// their tables in names.cpp.
#include "models/isa/encodings.h"

#include "models/isa/opcode_table.h"

namespace tpb::isa {

std::string_view opcode_mnemonic(std::uint8_t opcode) {
  const OpcodeInfo* row = opcode_info(opcode);
  return row ? row->mnemonic : std::string_view();
}

}  // namespace tpb::isa
