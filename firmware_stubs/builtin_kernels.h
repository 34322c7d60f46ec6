// The firmware this model implements: every engine's kernels (SPEC §7), as
// one registry of the kernel interface (models/kernel/kernel.h). The
// platform (platform/core) hands it to the sequencers; the sequencers know
// the interface only.
#pragma once

#include "models/kernel/kernel.h"

namespace tpb::fw {

// The registry of every firmware stub this model implements.
const KernelRegistry& builtin_kernels();

}  // namespace tpb::fw
