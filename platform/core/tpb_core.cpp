#include "platform/core/tpb_core.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "firmware_stubs/builtin_kernels.h"
#include "firmware_stubs/dve/quantize_mx.h"
#include "models/kernel/kernel.h"
#include "models/sc/engine/kernel_info_table.h"
#include "models/sc/memory/core_memory_map.h"

namespace tpb::platform {

namespace {

sc::SequencerConfig sequencer_config(const Profile& profile, unsigned i) {
  const CoreConfig& cfg = profile.config();
  sc::SequencerConfig s;
  s.arch = cfg.arch;
  s.timing = &cfg.timing;
  s.costs = &profile.costs();
  s.hbm_capacity = cfg.hbm_capacity();
  const isa::Queue e = TpbCore::engine_at(i);
  if (!isa::is_compute_engine(e)) return s;  // a DMA queue: no kernel_info
  const std::vector<std::uint8_t>& table = cfg.kernel_info[isa::engine_index(e)];
  s.table = table.empty() ? sc::default_kernel_info(e, cfg.arch) : sc::KernelInfoTable(table);
  return s;
}

}  // namespace

TpbCore::TpbCore(sc_core::sc_module_name name, Profile profile)
    : sc_core::sc_module(name),
      profile_(std::move(profile)),
      rec_(std::make_shared<trace::Recorder>()),
      sbuf("sbuf"),
      psum("psum", isa::kNumPartitions, config().timing.psum_bytes_per_partition,
           sc::mem_timing(config().timing, config().timing.psum)),
      router_("router"),
      hbm(sc::kHbmRouteName, config().hbm_capacity(), sc::hbm_timing(config().timing)),
      sems_("sem", sc::mem_timing(config().timing, config().timing.control)),
      regs_("regs", sc::mem_timing(config().timing, config().timing.control)),
      queues("queue"),
      dma_engines("dma", control_),
      seqs_("seq"),
      dbg_socket("dbg_socket"),
      host_socket("host_socket"),
      host_fwd_("host_fwd") {
  sc::check_time_resolution();
  const timing::TimingConfig& t = config().timing;
  sbuf.init(isa::kNumQuadrants, [&](const char* nm, std::size_t) {
    return new sc::PartitionedMemory(nm, isa::kPartitionsPerQuadrant, t.sbuf_bytes_per_partition,
                                     sc::mem_timing(t, t.sbuf));
  });
  queues.init(isa::kNumQueues, [&](const char*, std::size_t i) {
    return new sc::InstructionQueue(
        (std::string("queue_") + isa::engine_name(engine_at(i))).c_str(), isa::kQueueBytes,
        sc::mem_timing(t, t.queue));
  });
  seqs_.init(isa::kNumQueues, [&](const char*, std::size_t i) {
    sc::SequencerEnv env;
    env.kernels = &fw::builtin_kernels();
    env.sems = &sems_;
    env.regs = &regs_;
    env.queue = &queues[i];
    env.control = &control_;
    if (isa::is_dma_queue(engine_at(i))) env.dma = &dma_engines;
    return new sc::Sequencer(isa::engine_name(engine_at(i)), engine_at(i), env,
                             sequencer_config(profile_, static_cast<unsigned>(i)));
  });
  for (unsigned i = 0; i < isa::kNumQueues; ++i) {
    stats_.push_back(std::make_unique<sc::EngineStatsCollector>(engine_at(i), fw::builtin_kernels(),
                                                                seqs_[i].port, control_));
    hooks_.push_back(std::make_unique<EngineHook>(*this));
  }

  map_and_bind();

  SC_HAS_PROCESS(TpbCore);
  SC_METHOD(on_sim_limit);
  sensitive << limit_ev_;
  dont_initialize();

  // Semaphore changes go to the run's core tracer.
  sems_.set_observer([this](unsigned idx, std::uint32_t v) {
    if (core_tracer_) core_tracer_->semaphore(idx, v, now_ps());
  });
  apply_config();
}

// The ONE address table (SPEC §2), then every initiator on the router and the
// host socket's forwarding.
void TpbCore::map_and_bind() {
  const timing::TimingConfig& t = config().timing;
  std::array<sc::PartitionedMemory*, 4> sb{&sbuf[0], &sbuf[1], &sbuf[2], &sbuf[3]};
  std::array<sc::InstructionQueue*, 4> qs{&queues[0], &queues[1], &queues[2], &queues[3]};
  sc::map_core_memories(router_, sb, psum, sems_, regs_, qs);
  std::array<sc::InstructionQueue*, isa::kNumDmaQueues> dq{};
  for (unsigned q = 0; q < isa::kNumDmaQueues; ++q)
    dq[q] = &queues[static_cast<unsigned>(isa::dma_queue(q))];
  sc::map_dma_queues(router_, dq);
  sc::map_act_queue(router_, queues[static_cast<unsigned>(isa::Queue::Act)]);
  sc::map_hbm(router_, hbm);
  // Region 2: the SFU tile file, which the SFU engine owns (SPEC §2, §6).
  tile_file_ = &tile_file();
  tiles = std::make_unique<sc::TileFileTarget>("tiles", *tile_file_, sc::mem_timing(t, t.control));
  router_.add_target(sc::kSfuTileRouteName, isa::region_base(isa::Region::SfuTile),
                     sc::TileFileTarget::kSpan, tiles->socket);
  for (auto& s : seqs_) {
    s.port.socket.bind(router_.target_socket);
    s.port.share_totals(&port_totals_);
  }
  for (auto& p : dma_engines.ports) {
    p.socket.bind(router_.target_socket);
    p.share_totals(&port_totals_);
  }
  dbg_socket.bind(router_.target_socket);
  host_fwd_.bind(router_.target_socket);
  host_socket.register_b_transport(this, &TpbCore::host_b_transport);
  host_socket.register_transport_dbg(this, &TpbCore::host_transport_dbg);
  host_socket.register_get_direct_mem_ptr(this, &TpbCore::host_get_dmi);
  host_fwd_.register_invalidate_direct_mem_ptr(this, &TpbCore::host_invalidate);
}

void TpbCore::apply_config() {
  const timing::TimingConfig& t = config().timing;
  const sc_core::sc_time origin = sc_core::sc_time_stamp();
  control_.set_origin(origin);
  for (auto& q : sbuf) q.reset(t.sbuf_bytes_per_partition, sc::mem_timing(t, t.sbuf), origin);
  psum.reset(t.psum_bytes_per_partition, sc::mem_timing(t, t.psum), origin);
  sems_.reset(sc::mem_timing(t, t.control));
  regs_.reset(sc::mem_timing(t, t.control));
  for (auto& q : queues) q.reset(sc::mem_timing(t, t.queue));
  hbm.reset(config().hbm_capacity(), sc::hbm_timing(t));
  std::vector<sc::DmaEngines::Client*> clients;
  for (unsigned i = 0; i < isa::kNumQueues; ++i) {
    seqs_[i].configure(sequencer_config(profile_, i));
    seqs_[i].engine_state().clear();
    if (isa::is_dma_queue(engine_at(i))) clients.push_back(seqs_[i].dma_client());
  }
  dma_engines.configure(t, &hbm.bandwidth, std::move(clients));
  // Per-engine options the kernels read from their engine state.
  sequencer(isa::Queue::Dve).engine_state().get<fw::QuantizeMxOptions>().emax = config().mx_emax;
  tile_file_ = &tile_file();
  if (tiles) tiles->reset(*tile_file_, sc::mem_timing(t, t.control));
  tlm::tlm_global_quantum::instance().set(
      sc_core::sc_time(static_cast<double>(t.quantum_ns), sc_core::SC_NS));
  last_ = CoreRunResult{};
  for (unsigned i = 0; i < isa::kNumQueues; ++i) stats_[i]->reset(t);
  active_.fill(false);
}

void TpbCore::reset(Profile profile) {
  if (running_) throw std::logic_error("TpbCore::reset: a run is in progress");
  profile_ = std::move(profile);
  core_tracer_.reset();  // (finish() dropped them; an aborted start may not have)
  tracers_.clear();
  rec_ = std::make_shared<trace::Recorder>();
  apply_config();
}

void TpbCore::share_hbm(TpbCore& owner) {
  if (running_) throw std::logic_error("TpbCore::share_hbm: a run is in progress");
  if (&owner != this) hbm.share_storage(owner.hbm.storage());
  dma_engines.set_hbm_share(&owner.hbm.bandwidth, core_id_);
}

std::uint64_t TpbCore::stop_ps() const {
  return control_.faulted()                                      ? control_.fault_time_ps()
         : control_.watchdog() != sc::RunControl::Watchdog::None ? control_.stop_ps()
                                                                 : trace::kForever;
}

void TpbCore::load_program(const isa::Program& p) {
  std::array<std::vector<isa::RawInst>, isa::kNumQueues> words;
  for (unsigned e = 0; e < isa::kNumQueues; ++e)
    for (const isa::ProgramInst& pi : p.queues[e]) words[e].push_back(pi.raw);
  if (config().arch == isa::Arch::Maverick) {
    // MAVERICK folds ACT into the DVE (seed 003): the ACT queue's words run
    // on the DVE, in line order among its own (a binary's after them).
    std::vector<isa::ProgramInst> both = p.queues[static_cast<unsigned>(isa::Queue::Dve)];
    const auto& act = p.queues[static_cast<unsigned>(isa::Queue::Act)];
    both.insert(both.end(), act.begin(), act.end());
    std::stable_sort(both.begin(), both.end(),
                     [](const isa::ProgramInst& a, const isa::ProgramInst& b) {
                       return a.loc.line < b.loc.line;
                     });
    words[static_cast<unsigned>(isa::Queue::Dve)].clear();
    for (isa::ProgramInst pi : both) {
      isa::fold_word_into_dve(pi.raw);  // a DVE word is unchanged
      words[static_cast<unsigned>(isa::Queue::Dve)].push_back(pi.raw);
    }
    words[static_cast<unsigned>(isa::Queue::Act)].clear();
  }
  for (unsigned e = 0; e < isa::kNumQueues; ++e) load_queue(engine_at(e), words[e]);
  for (const isa::RegInit& r : p.regs) set_reg(r.engine, r.reg, r.value);
}

void TpbCore::load_program(isa::SpooledProgram& p) {
  if (config().arch == isa::Arch::Maverick) p.fold_act_into_dve();  // seed 003
  for (unsigned e = 0; e < isa::kNumQueues; ++e) load_queue(engine_at(e), p.source(engine_at(e)));
  for (const isa::RegInit& r : p.regs()) set_reg(r.engine, r.reg, r.value);
}

void TpbCore::load_queue(isa::Queue e, const std::vector<isa::RawInst>& words) {
  load_queue(e, std::make_unique<isa::VectorSource>(words));
}

void TpbCore::load_queue(isa::Queue e, std::unique_ptr<isa::InstructionSource> src) {
  if (running_) throw std::logic_error("TpbCore::load_queue: a run is in progress");
  queues[static_cast<unsigned>(e)].attach(std::move(src), config().timing.fetch.ring_words);
}

void TpbCore::set_reg(isa::Queue e, unsigned r, std::uint32_t v) { regs_.set(e, r, v); }
std::uint32_t TpbCore::reg(isa::Queue e, unsigned r) const { return regs_.get(e, r); }

void TpbCore::ensure_elaborated() {
  if (elaborated_) return;
  elaborated_ = true;
  // Inside a running simulation (an embedding) elaboration is done.
  if (sc_core::sc_get_status() != sc_core::SC_ELABORATION) return;
  // Completes elaboration (port binding) so the backdoor can call through
  // the router; the sequencers wait for the start event.
  try {
    sc::host_sc_start(sc_core::SC_ZERO_TIME);
  } catch (const sc_core::sc_report& r) {
    // The engines' coroutine stacks are mapped now: a process address-space
    // limit too low for them is SystemC's E518, said plainly.
    if (std::string(r.what()).find("(E518)") == std::string::npos) throw;
    throw sc::HostSpaceError(
        "no host address space left for the coroutine stacks of the cores' engines (SystemC: "
        "stack setup failed): the process's address-space limit (ulimit -v) is too low for this "
        "many cores (each takes about 100 MiB of address space, docs/PERFORMANCE.md)");
  }
}

void TpbCore::backdoor(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                       std::size_t len) {
  ensure_elaborated();
  // SBUF / PSUM: one partition at most (SPEC §2); a load or dump that would
  // run past the partition's end is refused, never spilled into the next.
  const bool partitioned = addr < (std::uint64_t{1} << 26);
  // HBM: inside its capacity, checked whole before a byte moves.
  if (addr >= isa::kHbmBase && len > 0 && !hbm.in_range(addr - isa::kHbmBase, len))
    throw std::runtime_error(
        fmt::format("{} of {} bytes at HBM offset 0x{:x} runs past the HBM capacity of {} bytes",
                    cmd == tlm::TLM_WRITE_COMMAND ? "load" : "dump", len, addr - isa::kHbmBase,
                    hbm.capacity()));
  if (partitioned && len > 0) {
    const std::uint64_t slot_end = (addr | (isa::kPartitionSlot - 1)) + 1;
    if (len > slot_end - addr)
      throw std::runtime_error(fmt::format(
          "{} of {} bytes at 0x{:07x} (partition {}, offset 0x{:x}) runs {} bytes past the "
          "end of the partition: a load or dump stays in one partition",
          cmd == tlm::TLM_WRITE_COMMAND ? "load" : "dump", len, addr,
          isa::partition_of(static_cast<std::uint32_t>(addr)),
          isa::offset_of(static_cast<std::uint32_t>(addr)), len - (slot_end - addr)));
  }
  while (len > 0) {
    const std::uint64_t slot_end = (addr | (isa::kPartitionSlot - 1)) + 1;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(len, slot_end - addr));
    tlm::tlm_generic_payload tr;
    tr.set_command(cmd);
    tr.set_address(addr);
    tr.set_data_ptr(data);
    tr.set_data_length(static_cast<unsigned>(n));
    tr.set_streaming_width(static_cast<unsigned>(n));
    const unsigned done = dbg_socket->transport_dbg(tr);
    if (done != n)
      throw std::runtime_error(fmt::format(
          "{} of {} bytes at 0x{:07x}: only {} bytes are backed (past capacity or unmapped)",
          cmd == tlm::TLM_WRITE_COMMAND ? "load" : "dump", n, addr, done));
    addr += n;
    data += n;
    len -= n;
  }
}

void TpbCore::load_memory(std::uint64_t addr, const void* data, std::size_t len) {
  backdoor(tlm::TLM_WRITE_COMMAND, addr,
           const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(data)), len);
}
void TpbCore::dump_memory(std::uint64_t addr, void* data, std::size_t len) {
  backdoor(tlm::TLM_READ_COMMAND, addr, static_cast<std::uint8_t*>(data), len);
}
std::vector<std::uint8_t> TpbCore::dump_memory(std::uint64_t addr, std::size_t len) {
  std::vector<std::uint8_t> out(len);
  dump_memory(addr, out.data(), len);
  return out;
}

void TpbCore::host_b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& d) {
  if (setup_.race && running_) race_host(t);
  host_fwd_->b_transport(t, d);
}
unsigned TpbCore::host_transport_dbg(tlm::tlm_generic_payload& t) {
  return host_fwd_->transport_dbg(t);
}
bool TpbCore::host_get_dmi(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
  if (setup_.race && running_) return false;  // the race check sees every host access
  return host_fwd_->get_direct_mem_ptr(t, dmi);
}
void TpbCore::host_invalidate(sc_dt::uint64 start, sc_dt::uint64 end) {
  // No host bound (standalone): nobody holds a DMI pointer to invalidate.
  if (host_socket.size() > 0) host_socket->invalidate_direct_mem_ptr(start, end);
}

TpbCore::~TpbCore() = default;

nlohmann::json TpbCore::effective_timing() const {
  timing::TimingConfig t = config().timing;
  for (const auto& [name, cycles] : fw::builtin_kernels().bundle_cycles())
    t.bundle_issue_cycles.emplace(name, cycles);  // overrides already present win
  nlohmann::json j = timing::to_json(t);
  // The source of every number (an override says so).
  j["sources"] = timing::profile_sources(config().arch, config().timing);
  return j;
}

}  // namespace tpb::platform
