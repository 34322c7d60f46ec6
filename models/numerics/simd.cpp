#include "models/numerics/simd.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace tpb::num {

namespace {

constexpr SimdPath kPaths[] = {SimdPath::Baseline, SimdPath::Avx2, SimdPath::Avx512};

bool host_has(SimdPath p) {
  switch (p) {
    case SimdPath::Baseline:
      return true;
#if defined(__x86_64__) && defined(TPB_SIMD_X86)
    case SimdPath::Avx2:
      return __builtin_cpu_supports("avx2");
    case SimdPath::Avx512:
      return __builtin_cpu_supports("avx512f");
#endif
    default:
      return false;
  }
}

SimdPath best_supported_at_or_below(SimdPath want) {
  for (int i = static_cast<int>(want); i > 0; --i)
    if (host_has(static_cast<SimdPath>(i))) return static_cast<SimdPath>(i);
  return SimdPath::Baseline;
}

std::atomic<int> forced{-1};

}  // namespace

const char* simd_path_name(SimdPath p) {
  switch (p) {
    case SimdPath::Baseline:
      return "baseline";
    case SimdPath::Avx2:
      return "avx2";
    case SimdPath::Avx512:
      return "avx512";
  }
  return "?";
}

std::optional<SimdPath> simd_path_from_name(const std::string& name) {
  for (SimdPath p : kPaths)
    if (name == simd_path_name(p)) return p;
  return std::nullopt;
}

bool simd_path_supported(SimdPath p) { return host_has(p); }

SimdPath simd_path_for_env(const char* v, std::string& warning) {
  warning.clear();
  const SimdPath best = best_supported_at_or_below(SimdPath::Avx512);
  if (!v || !*v || std::string(v) == "auto") return best;
  const std::optional<SimdPath> p = simd_path_from_name(v);
  if (!p) {
    warning = std::string("TPBSIM_SIMD=") + v +
              " names no SIMD path (baseline, avx2, avx512, auto); using " + simd_path_name(best);
    return best;
  }
  if (!host_has(*p)) {
    const SimdPath got = best_supported_at_or_below(*p);
    warning = std::string("TPBSIM_SIMD=") + v + ": this host does not support " +
              simd_path_name(*p) + "; using " + simd_path_name(got);
    return got;
  }
  return *p;
}

std::vector<SimdPath> simd_supported_paths() {
  std::vector<SimdPath> out;
  for (SimdPath p : kPaths)
    if (host_has(p)) out.push_back(p);
  return out;
}

SimdPath simd_path() {
  const int f = forced.load(std::memory_order_relaxed);
  if (f >= 0) return static_cast<SimdPath>(f);
  static const SimdPath env = [] {
    std::string warning;
    const SimdPath p = simd_path_for_env(std::getenv("TPBSIM_SIMD"), warning);
    if (!warning.empty()) std::fprintf(stderr, "tpbsim: %s\n", warning.c_str());
    return p;
  }();
  return env;
}

void simd_force_path(std::optional<SimdPath> p) {
  if (p && !host_has(*p))
    throw std::invalid_argument(std::string("simd_force_path: this host does not support the ") +
                                simd_path_name(*p) + " path");
  forced.store(p ? static_cast<int>(*p) : -1, std::memory_order_relaxed);
}

}  // namespace tpb::num
