#include "firmware_stubs/common/nop.h"

#include "models/isa/opcode_table.h"

namespace tpb::fw {

void add_nop_kernels(KernelRegistry& r) {
  // One bundle of one cycle, no step: nothing is read or written.
  r.add(Kernel{
      "pool_nop", isa::kva::kPoolNop, {{"pool.nop", isa::kva::kPoolNop, 1, nullptr, nullptr}}});
  r.add(
      Kernel{"dve_nop", isa::kva::kDveNop, {{"dve.nop", isa::kva::kDveNop, 1, nullptr, nullptr}}});
  r.add(Kernel{"pe_nop", isa::kva::kPeNop, {{"pe.nop", isa::kva::kPeNop, 1, nullptr, nullptr}}});
  r.add(
      Kernel{"sfu_nop", isa::kva::kSfuNop, {{"sfu.nop", isa::kva::kSfuNop, 1, nullptr, nullptr}}});
  r.add(
      Kernel{"act_nop", isa::kva::kActNop, {{"act.nop", isa::kva::kActNop, 1, nullptr, nullptr}}});
}

}  // namespace tpb::fw
