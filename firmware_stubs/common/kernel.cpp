#include "firmware_stubs/kernel.h"

#include <fmt/format.h>

#include "firmware_stubs/dve/quantize_mx.h"
#include "firmware_stubs/pool/tensor_dequantize.h"

namespace tpb::fw {

void KernelRegistry::add(Kernel k) {
  const std::uint32_t va = k.va;
  if (!kernels_.emplace(va, std::move(k)).second)
    throw std::invalid_argument(fmt::format("kernel registry: two workers at VA 0x{:08x}", va));
}

const Kernel* KernelRegistry::find(std::uint32_t va) const {
  const auto it = kernels_.find(va);
  return it == kernels_.end() ? nullptr : &it->second;
}

std::map<std::string, std::uint32_t> KernelRegistry::bundle_cycles() const {
  std::map<std::string, std::uint32_t> out;
  for (const auto& [va, k] : kernels_)
    for (const Bundle& b : k.bundles) out[b.name] = b.issue_cycles;
  return out;
}

void KernelRegistry::execute(std::uint32_t va, KernelContext& ctx, unsigned depth) const {
  const Kernel* k = find(va);
  if (!k) throw KernelFault(fmt::format("no firmware worker at VA 0x{:08x} (not modelled)", va));
  if (depth > 8) throw KernelFault(fmt::format("call depth past 8 at VA 0x{:08x}", va));
  for (const Bundle& b : k->bundles) {
    const std::uint64_t trips = b.trips ? b.trips(ctx) : 1;
    const std::uint32_t cycles = ctx.timing().bundle_cycles(b.name, b.issue_cycles);
    ctx.begin_bundle(b, trips, cycles);
    const std::uint32_t call = b.step ? b.step(ctx) : 0;
    ctx.end_bundle(b);
    if (call != 0) execute(call, ctx, depth + 1);
  }
}

const KernelRegistry& builtin_kernels() {
  static const KernelRegistry reg = [] {
    KernelRegistry r;
    add_tensor_dequantize_kernels(r);
    add_quantize_mx_kernels(r);
    return r;
  }();
  return reg;
}

}  // namespace tpb::fw
