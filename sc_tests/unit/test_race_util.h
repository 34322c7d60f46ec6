// Programs of the race check's unit tests, built in code: each instruction
// a note (line, EVENTS, opcode) on its queue, lines in the order added.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/isa/program_spool.h"
#include "models/race/detector.h"

namespace tpb::race::test {

inline isa::Events events(std::uint8_t wait_mode = 0, std::uint8_t wait_idx = 0,
                          std::uint32_t value = 0, std::uint8_t update_mode = 0,
                          std::uint8_t update_idx = 0) {
  return isa::Events{wait_mode, wait_idx, update_mode, update_idx, value};
}
inline isa::Events wait_ge(unsigned sem, std::uint32_t k) { return events(2, sem, k); }
inline isa::Events wait_eq(unsigned sem, std::uint32_t k) { return events(1, sem, k); }
inline isa::Events inc(unsigned sem) { return events(0, 0, 0, 1, sem); }
inline isa::Events wait_ge_inc(unsigned wsem, std::uint32_t k, unsigned usem) {
  return events(2, wsem, k, 1, usem);
}

inline std::uint8_t opcode_of(isa::Queue q) {
  switch (q) {
    case isa::Queue::Pool:
      return 0x7b;  // tensor_dequantize
    case isa::Queue::Dve:
      return 0xe3;  // quantize_mx
    case isa::Queue::Pe:
      return 0x0a;  // matmul_mx
    case isa::Queue::Sfu:
      return 0x6a;
    default:
      return 0xd0;  // dma_copy
  }
}

struct Prog {
  std::array<std::vector<isa::InstructionNote>, isa::kNumQueues> notes;
  std::array<std::uint32_t, isa::kNumSemaphores> start{};
  std::uint32_t line = 0;
  // Adds an instruction to queue q; returns its index.
  std::uint64_t add(isa::Queue q, isa::Events ev = {}) {
    auto& v = notes[static_cast<unsigned>(q)];
    v.push_back(isa::InstructionNote{++line, ev, opcode_of(q)});
    return v.size() - 1;
  }
  const isa::Events& ev(isa::Queue q, std::uint64_t i) const {
    return notes[static_cast<unsigned>(q)][i].events;
  }
  CoreProgram core(const std::string& file = "t.tpb") const {
    CoreProgram c;
    c.source.file = file;
    for (unsigned q = 0; q < isa::kNumQueues; ++q) c.notes[q] = &notes[q];
    c.semaphores = start;
    return c;
  }
};

inline std::uint64_t sbuf(unsigned p, std::uint32_t off) { return isa::sbuf_addr(p, off); }
inline std::uint64_t psum(unsigned p, std::uint32_t off) { return isa::psum_addr(p, off); }
inline std::uint64_t hbm(std::uint64_t off) { return isa::hbm_addr(off); }
inline std::uint64_t tile(unsigned n, std::uint32_t off) {
  return isa::region_base(isa::Region::SfuTile) + n * isa::kPartitionSlot + off;
}

// A descriptor whose row r is moved by DMA engine (part + r) / 8.
inline isa::DmaDescriptor load_to(unsigned part) {  // HBM -> SBUF
  isa::DmaDescriptor d{};
  d.src.kind = static_cast<std::uint8_t>(isa::DmaEndpointKind::Hbm);
  d.dst.kind = static_cast<std::uint8_t>(isa::DmaEndpointKind::Sbuf);
  d.dst.addr = isa::sbuf_addr(part, 0);
  return d;
}
inline isa::DmaDescriptor store_from(unsigned part) {  // SBUF -> HBM
  isa::DmaDescriptor d{};
  d.src.kind = static_cast<std::uint8_t>(isa::DmaEndpointKind::Sbuf);
  d.src.addr = isa::sbuf_addr(part, 0);
  d.dst.kind = static_cast<std::uint8_t>(isa::DmaEndpointKind::Hbm);
  return d;
}

// Runs instruction i of a compute queue whole: begin, accesses, end.
struct MemAccess {
  std::uint64_t addr, len;
  bool write;
};
inline void run_compute(Detector& d, const Prog& p, isa::Queue q, std::uint64_t i,
                        const std::vector<MemAccess>& acc) {
  d.begin(0, q, i, opcode_of(q), p.ev(q, i));
  for (const MemAccess& a : acc) d.access(0, q, a.addr, a.len, a.write);
  d.end(0, q, i, p.ev(q, i));
}

}  // namespace tpb::race::test
