#include "platform/core/tpb_core.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

#include "firmware_stubs/builtin_kernels.h"
#include "firmware_stubs/dve/quantize_mx.h"
#include "models/kernel/kernel.h"
#include "models/sc/engine/kernel_info_table.h"
#include "models/sc/memory/core_memory_map.h"

namespace tpb::platform {

namespace {

// Engine i of the core's sequencers (compute engines, then the DMA queues).
constexpr isa::Queue engine_at(std::size_t i) { return static_cast<isa::Queue>(i); }

static_assert(TpbCore::kNumMems == isa::kNumDataMemories);
const char* mem_name(unsigned m) { return isa::memory_name(static_cast<isa::CoreMemory>(m)); }

// SPEC §15: a device's HBM, every core's hbm.bytes pooled, inside the window.
void check_device_hbm(const CoreConfig& cfg) {
  if (cfg.device_cores == 0 || cfg.timing.hbm.bytes > isa::kHbmWindow / cfg.device_cores)
    throw std::invalid_argument(
        fmt::format("a device of {} cores x hbm.bytes {} is past the 2^40 bytes of the HBM window",
                    cfg.device_cores, cfg.timing.hbm.bytes));
}

const char* wait_op(std::uint8_t mode) { return mode == 1 ? "==" : mode == 2 ? ">=" : "?"; }

sc::SequencerConfig sequencer_config(const Profile& profile, unsigned i) {
  const CoreConfig& cfg = profile.config();
  sc::SequencerConfig s;
  s.arch = cfg.arch;
  s.timing = &cfg.timing;
  s.costs = &profile.costs();
  s.hbm_capacity = cfg.hbm_capacity();
  if (!isa::is_compute_engine(engine_at(i))) return s;  // a DMA queue: no kernel_info
  const std::vector<std::uint8_t>& table = cfg.kernel_info[isa::engine_index(engine_at(i))];
  s.table =
      table.empty() ? sc::default_kernel_info(engine_at(i), cfg.arch) : sc::KernelInfoTable(table);
  return s;
}

}  // namespace

// The core's own observer on each sequencer: retires into the time-ordered
// hold (and the core-level traces).
class TpbCore::EngineHook : public sc::SequencerObserver {
 public:
  explicit EngineHook(TpbCore& core) : core_(core) {}
  void on_retire(const sc::RetireRecord& r) override { core_.on_retire(r); }
  bool wants_bundle_starts() const override { return false; }
  bool wants_bundle_ends() const override { return false; }

 private:
  TpbCore& core_;
};

CoreConfig default_core_config(isa::Arch arch) {
  CoreConfig c;
  c.arch = arch;
  c.timing = timing::default_timing(arch);
  return c;
}

const char* status_name(RunStatus s) {
  switch (s) {
    case RunStatus::Ok:
      return "ok";
    case RunStatus::Fault:
      return "fault";
    case RunStatus::Deadlock:
      return "deadlock";
    case RunStatus::Watchdog:
      return "watchdog";
    case RunStatus::Interrupted:
      return "interrupted";
  }
  return "?";
}

namespace {

// How bad a status is, for a device's: the worst of its cores'.
int severity(RunStatus s) {
  switch (s) {
    case RunStatus::Ok:
      return 0;
    case RunStatus::Interrupted:
      return 1;
    case RunStatus::Watchdog:
      return 2;
    case RunStatus::Deadlock:
      return 3;
    case RunStatus::Fault:
      return 4;
  }
  return 0;
}

}  // namespace

RunStatus worse(RunStatus a, RunStatus b) { return severity(b) > severity(a) ? b : a; }

Profile::Profile(CoreConfig cfg)
    : cfg_(std::move(cfg)),
      costs_(fw::builtin_kernels().resolve_costs(cfg_.timing)) {  // TimingError: unknown bundle
  const timing::TimingConfig& t = cfg_.timing;
  for (const auto& [what, bytes] :
       {std::pair{"sbuf_bytes_per_partition", t.sbuf_bytes_per_partition},
        std::pair{"psum_bytes_per_partition", t.psum_bytes_per_partition}})
    if (bytes == 0 || bytes > isa::kPartitionSlot)
      throw std::invalid_argument(
          fmt::format("{} {} is not in [1, {}]", what, bytes, isa::kPartitionSlot));
  const std::uint32_t ring_cap = isa::kQueueBytes / isa::kInstBytes;
  if (t.fetch.ring_words == 0 || t.fetch.ring_words > ring_cap)
    throw std::invalid_argument(fmt::format("instruction_fetch.ring_words {} is not in [1, {}]",
                                            t.fetch.ring_words, ring_cap));
  for (const std::vector<std::uint8_t>& table : cfg_.kernel_info)
    if (!table.empty()) sc::KernelInfoTable{table};
  if (t.hbm.bytes == 0 || t.hbm.bytes > isa::kHbmWindow)
    throw std::invalid_argument(fmt::format("hbm.bytes {} is not in [1, 2^40]", t.hbm.bytes));
  if (t.hbm.mbytes_per_s == 0) throw std::invalid_argument("hbm.mbytes_per_s must not be 0");
  check_device_hbm(cfg_);
}

Profile Profile::in_device(unsigned cores) const {
  Profile p = *this;
  p.cfg_.device_cores = cores;
  check_device_hbm(p.cfg_);
  return p;
}

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
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
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

std::string TpbCore::format_retire(const sc::RetireRecord& r, bool with_core) {
  if (!with_core) return format_retire(r);
  const std::string_view m = isa::opcode_mnemonic(r.opcode);
  return fmt::format("{:>15} {:<10} {:>6} 0x{:02x} {}", r.end_ps,
                     fmt::format("core{}.{}", r.core, isa::engine_name(r.engine)), r.index,
                     r.opcode, m.empty() ? "?" : m);
}

std::string TpbCore::format_retire(const sc::RetireRecord& r) {
  const std::string_view m = isa::opcode_mnemonic(r.opcode);
  return fmt::format("{:>15} {:<4} {:>6} 0x{:02x} {}", r.end_ps, isa::engine_name(r.engine),
                     r.index, r.opcode, m.empty() ? "?" : m);
}

void TpbCore::on_retire(const sc::RetireRecord& r) {
  // Held in the run's one order until the global time has passed it.
  retires_->push(core_id_, r);
  retires_->commit(now_ps());
  if (!core_tracer_) return;
  if (r.engine == isa::Queue::Sfu) core_tracer_->sfu_flags(tile_file().flags().bits(), r.end_ps);
  if (!rec_->signals_enabled()) return;
  std::uint64_t rd[kNumMems], wr[kNumMems];
  memory_bytes(rd, wr);
  core_tracer_->memory_bytes(rd, wr, r.end_ps);
}

void TpbCore::memory_bytes(std::uint64_t (&rd)[kNumMems], std::uint64_t (&wr)[kNumMems]) const {
  // Every port's counters are reset with its stats at the run's start, and a
  // queue with nothing to run moves nothing: the totals are the active
  // queues'.
  for (unsigned m = 0; m < kNumMems; ++m) {
    rd[m] = port_totals_.read[m];
    wr[m] = port_totals_.written[m];
  }
}

std::string TpbCore::pending_report() const {
  std::string msg;
  for (const auto& s : seqs_) {
    if (s.done()) continue;
    const std::string_view m = isa::opcode_mnemonic(s.opcode());
    const std::string op = fmt::format("opcode 0x{:02x}{}{}", s.opcode(), m.empty() ? "" : " ", m);
    const isa::Events& ev = s.blocked_on();
    msg += msg.empty() ? "" : "; ";
    // A DMA queue: its transfers in flight, then the descriptor it has not
    // submitted yet (none once all are: its index is then past the last).
    const std::uint64_t first = s.dma_unretired_first(), end = s.dma_unretired_end();
    if (end > first)
      msg += fmt::format(
          "{} transfer{} {} not completed (dma_copy)", isa::engine_name(s.engine()),
          end - first == 1 ? "" : "s",
          end - first == 1 ? fmt::format("{}", first) : fmt::format("{}-{}", first, end - 1));
    if (isa::is_dma_queue(s.engine()) &&
        s.index() >= queues[static_cast<unsigned>(s.engine())].total())
      continue;
    msg += fmt::format("{}{} instruction {} ", end > first ? "; " : "",
                       isa::engine_name(s.engine()), s.index());
    if (s.blocked())
      msg += fmt::format("waits for sem[{}] {} {} (sem[{}] = {}): {}", ev.wait_idx,
                         wait_op(ev.wait_mode), ev.sem_value, ev.wait_idx,
                         ev.wait_idx < isa::kNumSemaphores ? sems_.get(ev.wait_idx) : 0, op);
    else
      msg += fmt::format("not retired: {}", op);
  }
  return msg;
}

void TpbCore::start_in(const CoreRunSetup& setup, std::shared_ptr<trace::Recorder> rec_of_run,
                       RetireMerge& retires) {
  if (running_) throw std::logic_error("TpbCore::start: a run is in progress");
  // The quantum is process-wide (TLM's global quantum) and cores of other
  // configurations may share the process: each run sets its own.
  tlm::tlm_global_quantum::instance().set(
      sc_core::sc_time(static_cast<double>(config().timing.quantum_ns), sc_core::SC_NS));
  setup_ = setup;
  stop_ps_ = trace::kForever;
  wall0_ = std::chrono::steady_clock::now();
  rec_ = std::move(rec_of_run);
  retires_ = &retires;
  trace::Recorder& rec = *rec_;
  tracers_.clear();
  tracers_.resize(isa::kNumQueues);
  core_tracer_.reset();
  dma_tracer_.reset();
  const bool tracing = setup.trace.signals || setup.trace.slices;
  dma_engines.reset_run();
  dma_engines.set_timing_only(setup.timing_only);
  dma_engines.set_race(setup.race, core_id_);
  dma_active_ = false;
  for (unsigned q = 0; q < isa::kNumDmaQueues; ++q)
    dma_active_ = dma_active_ || queues[static_cast<unsigned>(isa::dma_queue(q))].total() > 0;
  for (unsigned i = 0; i < isa::kNumQueues; ++i) {
    sc::Sequencer& s = seqs_[i];
    stats_[i]->reset(config().timing);
    s.set_timing_only(setup.timing_only);
    s.set_race(setup.race, core_id_);
    // A DMA queue the program gives no descriptor, and the ACT engine
    // without instructions, appear in no output.
    active_[i] = isa::listed_when_idle(engine_at(i)) || queues[i].total() > 0;
    if (!active_[i]) continue;
    s.add_observer(stats_[i].get());
    if (tracing) {
      tracers_[i] = std::make_unique<sc::EngineTracer>(
          rec, engine_at(i), fw::builtin_kernels().num_bundles(), trace_names_);
      s.add_observer(tracers_[i].get());
    }
    s.add_observer(hooks_[i].get());
  }
  if (tracing) core_tracer_ = std::make_unique<CoreTracer>(rec, trace_names_);
  if (tracing && dma_active_)
    dma_tracer_ = std::make_unique<sc::DmaEngineTracer>(rec, dma_engines.engines(), trace_names_);
  dma_engines.set_observer(dma_tracer_.get());
  run_start_ps_ = now_ps();
  control_.start(isa::kNumQueues);
  if (setup.max_sim_ps != 0)
    control_.set_sim_limit(setup.max_sim_ps > UINT64_MAX - run_start_ps_
                               ? UINT64_MAX
                               : run_start_ps_ + setup.max_sim_ps);
  if (setup.max_wall_seconds > 0)
    control_.set_wall_deadline(wall0_ +
                               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(setup.max_wall_seconds)));
  if (setup.interrupt) control_.set_interrupt(setup.interrupt);
  running_ = true;
}

CoreRunResult TpbCore::end_in(const RetireMerge& retires) {
  if (!running_) throw std::logic_error("TpbCore::finish: no run in progress");
  CoreRunResult r;
  r.start_ps = run_start_ps_;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
  r.simulated_ps = now_ps();
  // After a fault or a watchdog's stop nothing is recorded past its time on
  // any engine: retires, stats and traces all end there (engines run
  // decoupled and pipelined, so others may have run ahead of it).
  const std::uint64_t stop_ps = this->stop_ps();
  if (stop_ps != trace::kForever)
    for (auto& s : stats_) s->stop_at(stop_ps);
  stop_ps_ = stop_ps;
  r.instructions = retires.retired(core_id_);  // committed up to stop_ps by the run
  if (control_.faulted()) {
    r.status = RunStatus::Fault;
    r.message = control_.message();
    r.fault = control_.fault_info();
    r.simulated_ps = std::max(r.simulated_ps, control_.fault_time_ps());
    if (core_tracer_ && r.fault->engine == isa::Queue::Sfu)
      core_tracer_->sfu_fault(control_.fault_time_ps(), r.message);
  } else if (control_.watchdog() != sc::RunControl::Watchdog::None) {
    // Stopped at the watchdog's time: nothing was recorded after it.
    const sc::RunControl::Watchdog w = control_.watchdog();
    r.status =
        w == sc::RunControl::Watchdog::Interrupt ? RunStatus::Interrupted : RunStatus::Watchdog;
    r.simulated_ps = control_.stop_ps();
    const std::string pending = pending_report();
    r.message = w == sc::RunControl::Watchdog::SimTime
                    ? fmt::format("simulated time limit {} ps reached", setup_.max_sim_ps)
                : w == sc::RunControl::Watchdog::WallTime
                    ? fmt::format("wall time limit {} s reached; stopped at {} ps",
                                  setup_.max_wall_seconds, r.simulated_ps)
                    : fmt::format("interrupted; stopped at {} ps", r.simulated_ps);
    if (!pending.empty()) r.message += "; pending: " + pending;
  } else {
    for (const auto& s : seqs_)
      if (!s.done()) r.status = RunStatus::Deadlock;
    if (r.status == RunStatus::Deadlock) r.message = pending_report();
  }
  // The traces end with the run; after a fault, at its time on every engine.
  for (auto& t : tracers_)
    if (t) t->finish(stop_ps);
  for (unsigned i = 0; i < isa::kNumQueues; ++i) {
    seqs_[i].remove_observer(stats_[i].get());
    if (tracers_[i]) seqs_[i].remove_observer(tracers_[i].get());
    seqs_[i].remove_observer(hooks_[i].get());
  }
  for (auto& s : seqs_) s.set_race(nullptr, core_id_);
  dma_engines.set_race(nullptr, core_id_);
  setup_.race = nullptr;
  retires_ = nullptr;
  // The run's tracers write into its recorder: nothing between runs (a
  // host's semaphore write, a reset's) may reach them.
  core_tracer_.reset();
  tracers_.clear();
  dma_engines.set_observer(nullptr);
  dma_tracer_.reset();
  // A program runs once: the queues are empty for the next.
  for (auto& q : queues) q.clear();
  running_ = false;
  last_ = r;
  return r;
}

TpbCore::~TpbCore() = default;

void TpbCore::on_sim_limit() {
  if (running_ && control_.running()) control_.expire_sim_limit();
}

trace::RunStats TpbCore::stats() const {
  trace::RunStats s;
  s.arch = std::string(isa::arch_name(config().arch));
  bool dma = false;
  std::uint64_t hbm_rd = 0, hbm_wr = 0;
  for (unsigned i = 0; i < isa::kNumQueues; ++i) {
    if (!active_[i] && !isa::listed_when_idle(engine_at(i))) continue;
    s.engines.push_back(stats_[i]->stats());
    if (!isa::is_dma_queue(engine_at(i))) continue;
    dma = true;
    const auto& c = s.engines.back().counters;
    if (auto it = c.find("hbm_read_bytes"); it != c.end()) hbm_rd += it->second;
    if (auto it = c.find("hbm_write_bytes"); it != c.end()) hbm_wr += it->second;
  }
  // The DMA engines that moved anything (SPEC §10: DMA per engine as well
  // as per queue).
  if (dma)
    for (unsigned e = 0; e < dma_engines.engines(); ++e)
      if (dma_engines.totals(e).shares != 0) s.engines.push_back(dma_engines.stats(e, stop_ps_));
  std::uint64_t rd[kNumMems], wr[kNumMems];
  memory_bytes(rd, wr);
  for (unsigned m = 0; m < kNumMems; ++m) s.memories.push_back({mem_name(m), rd[m], wr[m]});
  // The HBM's bytes (moved by the DMA queues), when a DMA queue ran.
  if (dma) s.memories.push_back({sc::kHbmRouteName, hbm_rd, hbm_wr});
  s.simulated_ps = last_.simulated_ps;
  s.wall_seconds = last_.wall_seconds;
  s.status = status_name(last_.status);
  s.timing_only = setup_.timing_only;
  s.message = last_.message;
  if (const sfu::TileFile* tf = tile_file_) {
    s.sfu.inexact = tf->flags().inexact;
    s.sfu.saturated = tf->flags().saturated;
    s.sfu.wrapped = tf->flags().wrapped;
    s.sfu.tiles = tf->allocated_tiles();
    s.sfu.units_used = tf->used_units();
  }
  return s;
}

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
