// The race check of `tpbsim run --racecheck` (SPEC §14): a happens-before
// detector over the accesses of every instruction and DMA transfer. Pure
// C++; the SystemC model reports what happens through the event calls
// below, in the order it happens (the host's order of the simulation, which
// every happens-before edge follows), and reads the report at the end.
//
// Agents: each compute engine of a core, and each of the 16 DMA engines of
// each DMA queue (SPEC §8, §10: a queue's transfers are ordered per DMA
// engine only). An agent's clock counts its queue's instructions; its
// vector clock what it is ordered after:
//   - program order within an agent;
//   - a satisfied wait acquires: the exact increments of a counting
//     semaphore (SemaphorePlan), or every update of an observed one so far;
//   - an update releases: the engine's clock, or the join of a DMA queue's
//     16 engines (a transfer completes when its last engine does);
//   - a DMA wait acquires into all 16 engines of its queue;
//   - memory written before the run (host loads, earlier runs) is ordered
//     before everything: the shadow starts empty.
// Memories: SBUF, PSUM and the SFU tile file per core (by partition / tile
// and byte), the HBM per device (by byte). Two accesses to overlapping
// bytes, one a write, by agents neither ordered after the other, are a race
// (docs/CONVENTIONS.md "Race check").
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/isa/address_map.h"
#include "models/isa/encodings.h"
#include "models/isa/program_spool.h"
#include "models/race/semaphore_plan.h"
#include "models/race/shadow.h"
#include "models/race/vector_clock.h"

namespace tpb::race {

// The DMA engine (0..15) that moves row `row` of a descriptor (SPEC §10):
// engine e carries SBUF partitions 8e..8e+7 — the source's partition when
// the source is SBUF (a store, an SBUF -> SBUF copy), else the
// destination's (a load); HBM -> HBM rows are dealt round robin (row % 16).
// Its HBM bytes go with the row.
unsigned dma_engine_of_row(const isa::DmaDescriptor& d, unsigned row);

enum class Memory : std::uint8_t { Sbuf, Psum, Tiles, Hbm };
const char* memory_name(Memory m);  // "sbuf", "psum", "tile", "hbm"

// Race kinds, by what the instruction whose access happened first (first)
// and the other (second) did to the bytes.
enum RaceKind : std::uint8_t { kRaw = 1, kWar = 2, kWaw = 4 };

struct RaceSide {
  unsigned core = 0;
  isa::Queue queue = isa::Queue::Pool;
  bool host = false;  // a host access during the run (queue, index unused)
  std::uint64_t index = 0;
  std::uint8_t opcode = 0;
  std::uint32_t line = 0;         // its note's line (0: no note)
  std::uint16_t dma_engines = 0;  // bit e: DMA engine e of the queue made the accesses
  std::uint8_t mask = 0;          // kRead | kWrite: what it did to the bytes
};

struct Race {
  // In the order their accesses happened in this run (first: the earlier;
  // the kinds are what first did, then second: a consumer that read before
  // its producer wrote is a WAR of the consumer's read and the write).
  RaceSide first, second;
  Memory memory = Memory::Sbuf;
  unsigned core = 0;                            // the memory's core (HBM: the device's, 0)
  unsigned partition_lo = 0, partition_hi = 0;  // tiles: tile numbers; HBM: 0
  std::uint64_t lo = 0, hi = 0;                 // bytes [lo, hi)
  std::uint8_t kinds = 0;                       // RaceKind bits
};

// Where a core's instructions came from (the report's file:line).
struct ProgramSource {
  std::string file;
  bool binary = false;  // lines are word indices
};

struct Report {
  // Each pair of instructions once, sorted by their sides' places in the
  // program (line, then core, queue, index).
  std::vector<Race> races;
  std::uint64_t total = 0;  // distinct races found (races.size() unless capped)
  // Semaphores whose waits this run ordered by what it observed (so a
  // result through them holds for this timing only), with why.
  std::vector<std::pair<SemId, std::string>> timing_dependent;
  std::vector<ProgramSource> sources;  // by core
};

// One core's program as the detector sees it before the run.
struct CoreProgram {
  ProgramSource source;
  // Each queue's notes (InstructionNote), by instruction index; null: none
  // (the report then has no lines and the queue's waits are observed).
  std::array<const std::vector<isa::InstructionNote>*, isa::kNumQueues> notes{};
  std::array<std::uint32_t, isa::kNumSemaphores> semaphores{};  // values at the start
  // The core a DMA descriptor's `coreK:` updates, by K (logical cores,
  // `--lnc 2`); empty: core K. The model reports updates by the core they
  // reach (end()'s update_core).
  std::vector<unsigned> update_targets;
};

class Detector {
 public:
  // At most this many distinct races are kept for the report (more are counted).
  static constexpr std::size_t kMaxRaces = 1000;

  // Plans the semaphore ordering of the cores' programs (SemaphorePlan).
  explicit Detector(std::vector<CoreProgram> cores);
  ~Detector();
  Detector(const Detector&) = delete;
  Detector& operator=(const Detector&) = delete;

  // Instruction (or transfer) `index` of a queue issues: its wait, if any,
  // is satisfied. Every instruction of a queue begins, in order. For a DMA
  // queue this is every one of its 16 DMA engines beginning the transfer
  // (dma_engine_begin); a model that runs a queue's engines apart calls
  // that instead, for every engine (one with no data of the transfer too:
  // it takes the transfer in its turn).
  void begin(unsigned core, isa::Queue q, std::uint64_t index, std::uint8_t opcode,
             const isa::Events& ev);
  void dma_engine_begin(unsigned core, isa::Queue q, std::uint64_t index, unsigned engine,
                        std::uint8_t opcode, const isa::Events& ev);
  // A model whose DMA engines take only the transfers they have rows of
  // registers each transfer when its queue submits it (its wait satisfied):
  // an engine then takes the registered transfers it has no rows of in its
  // turn, as it begins a later one of the queue (dma_engine_begin) or as the
  // transfer completes (end), whichever comes first, so every engine still
  // takes every transfer in queue order.
  void dma_queue_begin(unsigned core, isa::Queue q, std::uint64_t index, std::uint8_t opcode,
                       const isa::Events& ev);
  // An access of the current instruction of a compute engine: `len` bytes at
  // a TLM address (SBUF, PSUM, the tile file in region 2, or the HBM at
  // isa::kHbmBase); other addresses are not memory and are ignored.
  void access(unsigned core, isa::Queue q, std::uint64_t addr, std::uint64_t len, bool write);
  // One move of a DMA queue's transfer: `len` bytes of row `row` from `src`
  // to `dst` (TLM addresses), a read and a write (an add on write also
  // reads the destination), by the DMA engine of the row
  // (dma_engine_of_row) in the transfer it began last.
  void dma_move(unsigned core, isa::Queue q, const isa::DmaDescriptor& d, unsigned row,
                std::uint64_t src, std::uint64_t dst, std::uint32_t len);
  // The same by the DMA engine that moves it, named (a model with a number
  // of engines of its own: engine mod 16).
  void dma_engine_move(unsigned core, isa::Queue q, unsigned engine, const isa::DmaDescriptor& d,
                       std::uint64_t src, std::uint64_t dst, std::uint32_t len);
  // The agents of DMA engines `to` of queue q are ordered after everything
  // the agents of engines `from` did so far (a transfer its engines take
  // together: SBUF -> SBUF across engines, SPEC §10).
  void dma_engines_join(unsigned core, isa::Queue q, const std::vector<unsigned>& from,
                        const std::vector<unsigned>& to);
  // DMA engine `engine` has moved its share of transfer `index`.
  void dma_engine_end(unsigned core, isa::Queue q, std::uint64_t index, unsigned engine);
  // The instruction retires, and its EVENTS update, if any, is applied now
  // (a release). A DMA transfer completes: every engine that began it has
  // ended it (those not yet reported end here). `update_core`: a DMA
  // descriptor's (1 + the core whose semaphore it updates; 0 its own).
  void end(unsigned core, isa::Queue q, std::uint64_t index, const isa::Events& ev,
           unsigned update_core = 0);
  // A host's access during the run (an embedding's socket): memory, or a
  // semaphore (a write is an update; a read acquires what it observed).
  void host_access(unsigned core, std::uint64_t addr, std::uint64_t len, bool write);
  void host_semaphore(unsigned core, unsigned idx, bool write);

  // The races found (call once, at the end of the run).
  Report finish();

  // Live shadow segments over every memory (the memory the check holds).
  std::size_t live_segments() const;
  const SemaphorePlan& plan() const { return plan_; }

 private:
  struct Agent {
    VectorClock vc;
    std::uint32_t clock = 0;  // its queue's instruction index + 1
    QueueId queue = 0;
    std::uint8_t dma_engine = 0;
    bool host = false;
  };
  // A DMA transfer some engine has begun and that has not completed.
  struct Transfer {
    std::uint64_t index = 0;
    std::uint16_t begun = 0;  // bit e: engine e has begun it
    std::uint16_t ended = 0;  // bit e: engine e has ended it
    VectorClock released;     // the ended engines' clocks, joined
    bool registered = false;  // by dma_queue_begin: ev and opcode known
    std::uint8_t opcode = 0;
    isa::Events ev{};
  };
  struct Queue {
    bool known = false, dma = false;
    std::array<AgentIdx, 16> agents{};
    std::deque<Transfer> in_flight;             // in index order
    std::array<std::uint64_t, 16> caught_up{};  // by engine: catch_up's mark
    VectorClock completed;                      // a DMA queue: the release of its last transfer
    const std::vector<isa::InstructionNote>* notes = nullptr;
    std::vector<std::uint8_t> opcodes;                    // without notes: seen at begin
    std::unordered_map<SemId, std::uint64_t> increments;  // by semaphore: made so far
  };
  struct SemState {
    VectorClock released;  // every update so far (the observed rule)
    bool host_written = false;
    bool observed_used = false;  // a wait was ordered by it
    std::string why;
  };
  struct RaceKey {
    QueueId qa, qb;  // host: kHostQueue + core
    std::uint64_t ia, ib;
    std::uint8_t mem;
    std::uint16_t core;
    bool operator==(const RaceKey& o) const {
      return qa == o.qa && qb == o.qb && ia == o.ia && ib == o.ib && mem == o.mem && core == o.core;
    }
  };
  struct RaceKeyHash {
    std::size_t operator()(const RaceKey& k) const;
  };

  Queue& queue(unsigned core, isa::Queue q);
  // Without notes, the opcode of instruction `index` as it issued.
  void note_opcode(Queue& qu, std::uint64_t index, std::uint8_t opcode);
  // Engine `engine` of DMA queue `q` takes, in order, the registered
  // transfers before `upto` it has not begun (it has no rows of them).
  void catch_up(unsigned core, isa::Queue q, unsigned engine, std::uint64_t upto);
  // Agent `a` of queue q begins instruction `index`: its clock, its wait.
  void start(unsigned core, isa::Queue q, AgentIdx a, std::uint64_t index, const isa::Events& ev);
  AgentIdx new_agent(QueueId q, std::uint8_t dma_engine, bool host);
  AgentIdx host_agent(unsigned core);
  SemState& sem(SemId s);
  // The wait of instruction `index` of queue `qid` is satisfied: ordered
  // into `n` of its agents.
  void acquire(const AgentIdx* agents, unsigned n, QueueId qid, SemId s, std::uint64_t index,
               bool ge);
  void release(SemId s, const VectorClock& vc, QueueId qid, const isa::Events& ev);
  Transfer& transfer(Queue& q, std::uint64_t index);
  // The first transfer in flight of index >= `index`.
  static std::deque<Transfer>::iterator first_at(Queue& qu, std::uint64_t index);
  // Records [addr, addr + len) of `mask` by `agent`.
  void record(AgentIdx agent, std::uint64_t addr, std::uint64_t len, std::uint8_t mask,
              unsigned core);
  ShadowRange* range(unsigned core, Memory m, unsigned partition);
  void conflict(AgentIdx now, std::uint8_t now_mask, const Conflict& c, Memory m, unsigned core,
                unsigned partition);
  RaceSide side_of(AgentIdx a, std::uint32_t clock, std::uint8_t mask) const;

  std::vector<CoreProgram> cores_;
  SemaphorePlan plan_;
  std::vector<Agent> agents_;
  std::vector<Queue> queues_;    // by QueueId
  std::vector<AgentIdx> hosts_;  // by core (0: none yet, agent + 1)
  std::vector<SemState> sems_;   // by SemId
  std::unordered_map<Increment, std::pair<VectorClock, std::uint32_t>, IncrementHash> kept_;
  std::vector<std::unique_ptr<ShadowRange>> ranges_;  // (core, memory, partition)
  // The HBM in windows of 2^kHbmWindowBits bytes (the ones touched).
  static constexpr unsigned kHbmWindowBits = 20;
  ShadowRange* hbm_window(std::uint64_t w);
  std::unordered_map<std::uint64_t, std::unique_ptr<ShadowRange>> hbm_;
  std::uint64_t last_window_ = UINT64_MAX;
  ShadowRange* last_hbm_ = nullptr;
  std::unordered_map<RaceKey, std::size_t, RaceKeyHash> race_index_;  // into races_
  std::vector<Race> races_;
  std::uint64_t total_ = 0;
};

// "no semaphore orders pool[0] tensor_dequantize (prog.tpb:7) after dma0[0]
// dma_copy (prog.tpb:4, DMA engines 0-3): RAW on sbuf partitions 0-31 bytes
// 0x0-0xff" (with the sources of `r`'s report).
std::string race_message(const Race& r, const std::vector<ProgramSource>& sources);
// "RAW", "WAR", "WAW", or several joined by "+".
std::string race_kinds(std::uint8_t kinds);

}  // namespace tpb::race
