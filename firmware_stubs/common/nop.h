// The wait-only instruction `nop` (SPEC §18): one trivial kernel per compute
// engine. The sequencer has already waited on its EVENTS condition before
// dispatch and applies its update at the retire; the kernel only issues.
//
// Dispatch (conventions, docs/CONVENTIONS.md): each compute engine's
// kernel_info record {0, 0, 0, 0xf0, VA} (POOL idx13, the others idx31) ->
// a one-bundle worker at
// that VA (`pool.nop` 0x01004f00, `dve.nop` 0x3300, `pe.nop` 0x2c00,
// `sfu.nop` 0x4b00), one issue cycle of its engine. The DMA queues execute
// it without a kernel (they take no kernel_info).
#pragma once

#include "models/kernel/kernel.h"

namespace tpb::fw {

void add_nop_kernels(KernelRegistry& r);

}  // namespace tpb::fw
