#include "models/sc/engine/dma_engine_tracer.h"

#include <fmt/format.h>

namespace tpb::sc {

DmaEngineTracer::DmaEngineTracer(trace::Recorder& rec, unsigned engines,
                                 const trace::TraceNames& names)
    : rec_(rec) {
  for (unsigned e = 0; e < engines; ++e) {
    const std::string name = DmaEngines::engine_name(e);
    const std::string scope = names.scope + "." + name;
    Engine en;
    en.busy = rec.add_signal(scope, "busy", 1);
    en.queue = rec.add_signal(scope, "queue", 8);
    en.index = rec.add_signal(scope, "inst_index", 32);
    en.track = rec.add_track(names.dma_process, name);
    engines_.push_back(en);
  }
  for (unsigned q = 0; q < isa::kNumDmaQueues; ++q)
    queue_names_.push_back(rec.intern(isa::kDmaQueueNames[q]));
}

void DmaEngineTracer::on_share_begin(unsigned engine, unsigned queue, std::uint64_t index,
                                     std::uint64_t t, std::uint64_t bytes) {
  const Engine& en = engines_[engine];
  rec_.set(en.busy, t, 1);
  rec_.set(en.queue, t, queue);
  rec_.set(en.index, t, index);
  if (rec_.slices_enabled())
    rec_.begin(en.track, t, queue_names_[queue],
               fmt::format(R"({{"index":{},"bytes":{}}})", index, bytes));
}

void DmaEngineTracer::on_share_end(const DmaShareRecord& r) {
  const Engine& en = engines_[r.engine];
  rec_.set(en.busy, r.busy_ps, 0);
  if (rec_.slices_enabled()) rec_.end(en.track, r.busy_ps);
}

}  // namespace tpb::sc
