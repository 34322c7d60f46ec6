// Which SIMD code path the numerics kernels take on this host (pure C++).
//
// The shipped binary runs on any x86-64: the baseline path uses only what
// every x86-64 has (SSE2); the AVX2 and AVX-512 paths are compiled into the
// same binary (per-file flags, CMakeLists.txt) and chosen at run time from
// cpuid. Every path computes bit-identical results (the kernels that use it
// say how); forcing one is for tests and measurements.
//
// Selection: the path forced by simd_force_path(), else the environment
// variable TPBSIM_SIMD (baseline | avx2 | avx512 | auto), else the best path
// the host supports. A TPBSIM_SIMD value that names no path, or a path the
// host lacks, is reported once on stderr and the best supported path at or
// below it is used (the results do not depend on the path, only the speed).
// Used by the PE matmul (models/numerics/mx_matmul.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tpb::num {

enum class SimdPath { Baseline = 0, Avx2 = 1, Avx512 = 2 };

// "baseline", "avx2", "avx512".
const char* simd_path_name(SimdPath p);
// The path named `name` (as simd_path_name), or nullopt.
std::optional<SimdPath> simd_path_from_name(const std::string& name);

// Whether this host (and this build) can run path p: Baseline always; AVX2
// with cpuid AVX2; AVX-512 with AVX-512F (x86-64 builds only).
bool simd_path_supported(SimdPath p);
// Every path the host supports, Baseline first.
std::vector<SimdPath> simd_supported_paths();

// The path a TPBSIM_SIMD value selects on this host (nullptr or "" or "auto":
// the best supported); `warning` gets the message to print when the value
// names no path or one the host lacks (else it is cleared).
SimdPath simd_path_for_env(const char* value, std::string& warning);

// The path in use now (see the selection order above). Thread-safe.
SimdPath simd_path();
// Forces path p (nullopt: back to TPBSIM_SIMD / the host's best). Throws
// std::invalid_argument naming the path when the host does not support it.
void simd_force_path(std::optional<SimdPath> p);

}  // namespace tpb::num
