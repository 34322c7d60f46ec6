// The traces of a core's DMA engines (SPEC §10 "Stats and traces show DMA
// per engine"): per engine, the VCD scope tpb.dma_engine<e> (busy, the
// queue and the transfer index it moves) and a Perfetto track with one
// slice per transfer share (from the engine taking it to the engine being
// free again, at least the transfer cost), named by its queue, args its
// index and bytes. An engine moves one transfer at a time: its slices never
// overlap. Made per run, for runs with a DMA queue.
#pragma once

#include <cstdint>
#include <vector>

#include "models/sc/engine/dma_engines.h"
#include "models/trace/recorder.h"

namespace tpb::sc {

class DmaEngineTracer : public DmaEngines::Observer {
 public:
  DmaEngineTracer(trace::Recorder& rec, unsigned engines, const trace::TraceNames& names = {});
  void on_share_begin(unsigned engine, unsigned queue, std::uint64_t index, std::uint64_t t_ps,
                      std::uint64_t bytes) override;
  void on_share_end(const DmaShareRecord& r) override;

 private:
  struct Engine {
    trace::SignalId busy, queue, index;
    trace::TrackId track;
  };
  trace::Recorder& rec_;
  std::vector<Engine> engines_;
  std::vector<trace::NameId> queue_names_;
};

}  // namespace tpb::sc
