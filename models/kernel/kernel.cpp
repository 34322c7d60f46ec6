#include "models/kernel/kernel.h"

#include <fmt/format.h>

namespace tpb::fw {

void KernelRegistry::add(Kernel k) {
  const std::uint32_t va = k.va;
  if (kernels_.count(va))
    throw std::invalid_argument(fmt::format("kernel registry: two workers at VA 0x{:08x}", va));
  for (Bundle& b : k.bundles) {
    b.id = static_cast<std::uint32_t>(stub_cycles_.size());
    if (!ids_.emplace(b.name, b.id).second)
      throw std::invalid_argument("kernel registry: two bundles named '" + b.name + "'");
    stub_cycles_.push_back(b.issue_cycles);
  }
  const Kernel& added = kernels_.emplace(va, std::move(k)).first->second;
  for (const Bundle& b : added.bundles) by_id_.push_back(&b);
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

BundleCosts KernelRegistry::resolve_costs(const timing::TimingConfig& t) const {
  BundleCosts costs = stub_cycles_;
  for (const auto& [name, cycles] : t.bundle_issue_cycles) {
    const auto it = ids_.find(name);
    if (it == ids_.end())
      throw timing::TimingError("timing profile: key 'bundle_issue_cycles." + name +
                                "': unknown bundle (`tpbsim run --dump-timing` lists them)");
    costs[it->second] = cycles;
  }
  return costs;
}

void KernelRegistry::execute(std::uint32_t va, KernelContext& ctx, const BundleCosts& costs,
                             unsigned depth) const {
  const Kernel* k = find(va);
  if (!k) throw KernelFault(fmt::format("no firmware worker at VA 0x{:08x} (not modelled)", va));
  execute(*k, ctx, costs, depth);
}

void KernelRegistry::execute(const Kernel& k, KernelContext& ctx, const BundleCosts& costs,
                             unsigned depth) const {
  if (depth > 8) throw KernelFault(fmt::format("call depth past 8 at VA 0x{:08x}", k.va));
  for (const Bundle& b : k.bundles) {
    const std::uint64_t trips = b.trips ? b.trips(ctx) : 1;
    const std::uint32_t cycles = costs[b.id];
    ctx.begin_bundle(b, trips, cycles);
    const std::uint32_t call = b.step ? b.step(ctx) : 0;
    ctx.end_bundle(b);
    if (call != 0) execute(call, ctx, costs, depth + 1);
  }
}

}  // namespace tpb::fw
