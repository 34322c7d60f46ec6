#include "models/sc/engine/instruction_fetch.h"

#include <algorithm>

namespace tpb::sc {

void InstructionFetch::reset(InstructionQueue& queue, const timing::TimingConfig::Fetch& fetch) {
  queue_ = &queue;
  fetch_ = &fetch;
  batches_.clear();
  free_ps_ = 0;
}

std::uint64_t InstructionFetch::ready_at(std::uint64_t index, std::uint64_t now_ps) {
  while (!batches_.empty() && batches_.front().end <= index) batches_.pop_front();
  if (batches_.empty() || index < batches_.front().start) return now_ps;  // in the ring already
  return std::max(now_ps, batches_.front().ready_ps);
}

void InstructionFetch::fetched(std::uint64_t index, std::uint64_t now_ps) {
  InstructionQueue& q = *queue_;
  const timing::TimingConfig::Fetch& f = *fetch_;
  // Instructions 0..index are fetched: the ring's free slots are those of
  // words older than index + 1; a batch goes out when one batch fits.
  const std::uint64_t in_ring = q.loaded() - (index + 1);
  if (q.loaded() >= q.total() || q.ring_words() - in_ring < f.batch_words) return;
  const std::size_t n = q.refill(f.batch_words);
  // The DMA moves n words at mbytes_per_s after its start latency; batches
  // queue behind each other on the one fetch DMA.
  const std::uint64_t xfer_ps =
      (std::uint64_t{n} * isa::kInstBytes * 1000000ull + f.mbytes_per_s - 1) / f.mbytes_per_s;
  const std::uint64_t issue = std::max(now_ps, free_ps_);
  free_ps_ = issue + xfer_ps;
  batches_.push_back(
      Batch{q.loaded() - n, q.loaded(), issue + std::uint64_t{f.latency_ns} * 1000 + xfer_ps});
}

}  // namespace tpb::sc
