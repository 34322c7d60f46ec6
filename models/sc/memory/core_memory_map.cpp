#include "models/sc/memory/core_memory_map.h"

#include <stdexcept>

namespace tpb::sc {

std::string sbuf_quadrant_name(unsigned q) {
  return q < isa::kNumQuadrants ? isa::memory_name(isa::sbuf_quadrant_memory(q)) : "?";
}

std::string queue_route_name(isa::Queue e) {
  if (isa::listed_when_idle(e)) return isa::memory_name(isa::queue_memory(e));
  return isa::is_compute_engine(e) || isa::is_dma_queue(e)
             ? std::string("queue.") + isa::engine_name(e)
             : "?";
}

namespace {
void map_queue(AddressRouter& router, isa::Queue eng, InstructionQueue* qm) {
  if (!qm)
    throw std::invalid_argument("map_core_memories: queue of " + queue_route_name(eng) +
                                " is null");
  if (qm->capacity_bytes() > isa::kQueueBytes)
    throw std::invalid_argument(queue_route_name(eng) + " (module " + qm->name() + "): capacity " +
                                std::to_string(qm->capacity_bytes()) +
                                " exceeds the queue slot of " + std::to_string(isa::kQueueBytes) +
                                " bytes");
  router.add_target(queue_route_name(eng), queue_base(eng), isa::kQueueBytes, qm->socket);
}
}  // namespace

void map_dma_queues(AddressRouter& router,
                    std::array<InstructionQueue*, isa::kNumDmaQueues>& queues) {
  for (unsigned q = 0; q < isa::kNumDmaQueues; ++q) map_queue(router, isa::dma_queue(q), queues[q]);
}

void map_act_queue(AddressRouter& router, InstructionQueue& queue) {
  map_queue(router, isa::Queue::Act, &queue);
}

void map_hbm(AddressRouter& router, HbmMemory& hbm) {
  router.add_target(kHbmRouteName, isa::kHbmBase, isa::kHbmWindow, hbm.socket);
}

void map_core_memories(AddressRouter& router, std::array<PartitionedMemory*, 4>& sbuf,
                       PartitionedMemory& psum, SemaphoreBank& sem, EngineRegisterFile& regs,
                       std::array<InstructionQueue*, 4>& queues) {
  for (unsigned q = 0; q < isa::kNumQuadrants; ++q) {
    PartitionedMemory* m = sbuf[q];
    if (!m)
      throw std::invalid_argument("map_core_memories: SBUF quadrant " + std::to_string(q) +
                                  " is null");
    if (m->num_partitions() != isa::kPartitionsPerQuadrant)
      throw std::invalid_argument(sbuf_quadrant_name(q) + " (module " + m->name() +
                                  "): an SBUF quadrant needs 32 partitions, has " +
                                  std::to_string(m->num_partitions()));
    router.add_target(sbuf_quadrant_name(q), sbuf_quadrant_base(q), kSbufQuadrantSpan, m->socket);
  }
  if (psum.num_partitions() != isa::kNumPartitions)
    throw std::invalid_argument(std::string(isa::memory_name(isa::CoreMemory::Psum)) + " (module " +
                                psum.name() + "): the PSUM needs 128 partitions, has " +
                                std::to_string(psum.num_partitions()));
  router.add_target(isa::memory_name(isa::CoreMemory::Psum), isa::psum_addr(0, 0), kPsumSpan,
                    psum.socket);
  router.add_target(isa::memory_name(isa::CoreMemory::Sem), isa::kSemaphoreBase,
                    SemaphoreBank::kSpan, sem.socket);
  router.add_target(isa::memory_name(isa::CoreMemory::Regs), isa::kEngineRegBase,
                    EngineRegisterFile::kSpan, regs.socket);
  for (unsigned e = 0; e < queues.size(); ++e)
    map_queue(router, static_cast<isa::Queue>(e), queues[e]);
}

}  // namespace tpb::sc
