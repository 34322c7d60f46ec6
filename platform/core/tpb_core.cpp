#include "platform/core/tpb_core.h"

#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

#include "firmware_stubs/dve/quantize_mx.h"
#include "firmware_stubs/kernel.h"
#include "models/sc/engine/kernel_info_table.h"
#include "models/sc/memory/core_memory_map.h"

namespace tpb::platform {

namespace {

constexpr isa::Engine kEngines[isa::kNumEngines] = {isa::Engine::Pool, isa::Engine::Dve,
                                                    isa::Engine::Pe, isa::Engine::Sfu};

static_assert(TpbCore::kNumMems == isa::kNumDataMemories);
const char* mem_name(unsigned m) { return isa::memory_name(static_cast<isa::CoreMemory>(m)); }

using sc::to_ps;

const char* wait_op(std::uint8_t mode) { return mode == 1 ? "==" : mode == 2 ? ">=" : "?"; }

}  // namespace

CoreConfig default_core_config(isa::Arch arch) {
  CoreConfig c;
  c.arch = arch;
  c.timing = sc::default_timing(arch);
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
  }
  return "?";
}

TpbCore::TpbCore(sc_core::sc_module_name name, CoreConfig cfg)
    : sc_core::sc_module(name),
      cfg_(std::move(cfg)),
      costs_(fw::builtin_kernels().resolve_costs(cfg_.timing)),
      sbuf("sbuf"),
      psum("psum", isa::kNumPartitions, cfg_.timing.psum_bytes_per_partition,
           sc::mem_timing(cfg_.timing, cfg_.timing.psum)),
      router_("router"),
      sems_("sem", sc::mem_timing(cfg_.timing, cfg_.timing.control)),
      regs_("regs", sc::mem_timing(cfg_.timing, cfg_.timing.control)),
      queues("queue"),
      seqs_("seq"),
      dbg_socket("dbg_socket") {
  sc::check_time_resolution();
  const sc::TimingConfig& t = cfg_.timing;
  recorder_.enable_signals(cfg_.trace_signals);
  recorder_.enable_slices(cfg_.trace_slices);
  recorder_.enable_bundles(cfg_.trace_bundles);
  for (isa::Engine e : cfg_.trace_hidden_engines) recorder_.hide(isa::engine_name(e));
  // No event can still be recorded before the global time.
  recorder_.set_watermark([] { return to_ps(sc_core::sc_time_stamp()); });

  sbuf.init(isa::kNumQuadrants, [&](const char* nm, std::size_t) {
    return new sc::PartitionedMemory(nm, isa::kPartitionsPerQuadrant, t.sbuf_bytes_per_partition,
                                     sc::mem_timing(t, t.sbuf));
  });
  queues.init(isa::kNumEngines, [&](const char*, std::size_t i) {
    return new sc::InstructionQueue((std::string("queue_") + isa::engine_name(kEngines[i])).c_str(),
                                    isa::kQueueBytes, sc::mem_timing(t, t.queue));
  });
  seqs_.init(isa::kNumEngines, [&](const char*, std::size_t i) {
    sc::SequencerEnv env;
    env.arch = cfg_.arch;
    env.timing = &cfg_.timing;
    env.kernels = &fw::builtin_kernels();
    env.costs = &costs_;
    env.sems = &sems_;
    env.regs = &regs_;
    env.queue = &queues[i];
    env.control = &control_;
    env.recorder = &recorder_;
    env.on_retire = [this](const sc::RetireRecord& r) { on_retire(r); };
    const std::vector<std::uint8_t>& table = cfg_.kernel_info[i];
    return new sc::Sequencer(isa::engine_name(kEngines[i]), kEngines[i], std::move(env),
                             table.empty() ? sc::default_kernel_info(kEngines[i], cfg_.arch)
                                           : sc::KernelInfoTable(table));
  });

  // Per-engine options the kernels read from their engine state.
  sequencer(isa::Engine::Dve).engine_state().get<fw::QuantizeMxOptions>().emax = cfg_.mx_emax;

  // The ONE address table (SPEC §2), then every initiator on the router.
  std::array<sc::PartitionedMemory*, 4> sb{&sbuf[0], &sbuf[1], &sbuf[2], &sbuf[3]};
  std::array<sc::InstructionQueue*, 4> qs{&queues[0], &queues[1], &queues[2], &queues[3]};
  sc::map_core_memories(router_, sb, psum, sems_, regs_, qs);
  // Region 2: the SFU tile file, which the SFU engine owns (SPEC §2, §6).
  tile_file_ = &tile_file();
  tiles = std::make_unique<sc::TileFileTarget>("tiles", *tile_file_, sc::mem_timing(t, t.control));
  router_.add_target(sc::kSfuTileRouteName, isa::region_base(isa::Region::SfuTile),
                     sc::TileFileTarget::kSpan, tiles->socket);
  for (auto& s : seqs_) s.port.socket.bind(router_.target_socket);
  dbg_socket.bind(router_.target_socket);
  tlm::tlm_global_quantum::instance().set(
      sc_core::sc_time(static_cast<double>(t.quantum_ns), sc_core::SC_NS));

  // Traces: every semaphore, per-memory byte counters.
  for (unsigned i = 0; i < isa::kNumSemaphores; ++i) {
    sem_sigs_.push_back(recorder_.add_signal("tpb.sem", fmt::format("sem{}", i), 32));
    sem_names_.push_back(recorder_.intern(fmt::format("sem{}", i)));
  }
  sem_track_ = recorder_.add_track("tpb core", "semaphores");
  sems_.set_observer([this](unsigned idx, std::uint32_t v) {
    const std::uint64_t ps = to_ps(sc_core::sc_time_stamp());
    recorder_.set(sem_sigs_[idx], ps, v);
    if (recorder_.slices_enabled()) recorder_.counter(sem_track_, ps, sem_names_[idx], v);
  });
  static const char* const kFlagNames[3] = {"flag_inexact", "flag_saturated", "flag_wrapped"};
  for (unsigned f = 0; f < 3; ++f)
    sfu_flag_sig_[f] = recorder_.add_signal("tpb.sfu", kFlagNames[f], 1);
  sfu_fault_sig_ = recorder_.add_signal("tpb.sfu", "fault", 1);
  sfu_flag_track_ = recorder_.add_track("tpb core", "sfu flags");
  for (unsigned m = 0; m < kNumMems; ++m) {
    mem_read_sig_[m] = recorder_.add_signal(std::string("tpb.") + mem_name(m), "bytes_read", 64);
    mem_write_sig_[m] =
        recorder_.add_signal(std::string("tpb.") + mem_name(m), "bytes_written", 64);
  }
}

void TpbCore::load_program(const isa::Program& p) {
  for (unsigned e = 0; e < isa::kNumEngines; ++e) {
    std::vector<isa::RawInst> words;
    for (const isa::ProgramInst& pi : p.queues[e]) words.push_back(pi.raw);
    load_queue(kEngines[e], words);
  }
  for (const isa::RegInit& r : p.regs) set_reg(r.engine, r.reg, r.value);
}

void TpbCore::load_program(isa::SpooledProgram& p) {
  for (unsigned e = 0; e < isa::kNumEngines; ++e) load_queue(kEngines[e], p.source(kEngines[e]));
  for (const isa::RegInit& r : p.regs()) set_reg(r.engine, r.reg, r.value);
}

void TpbCore::load_queue(isa::Engine e, const std::vector<isa::RawInst>& words) {
  load_queue(e, std::make_unique<isa::VectorSource>(words));
}

void TpbCore::load_queue(isa::Engine e, std::unique_ptr<isa::InstructionSource> src) {
  queues[static_cast<unsigned>(e)].attach(std::move(src), cfg_.timing.fetch.ring_words);
}

void TpbCore::set_reg(isa::Engine e, unsigned r, std::uint32_t v) { regs_.set(e, r, v); }
std::uint32_t TpbCore::reg(isa::Engine e, unsigned r) const { return regs_.get(e, r); }

void TpbCore::ensure_elaborated() {
  if (elaborated_) return;
  // Completes elaboration (port binding) so the backdoor can call through
  // the router; the sequencers wait for the start event.
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  elaborated_ = true;
}

void TpbCore::backdoor(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                       std::size_t len) {
  ensure_elaborated();
  // SBUF / PSUM: one partition at most (SPEC §2); a load or dump that would
  // run past the partition's end is refused, never spilled into the next.
  const bool partitioned = addr < (std::uint64_t{1} << 26);
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

std::string TpbCore::format_retire(const sc::RetireRecord& r) {
  const std::string_view m = isa::opcode_mnemonic(r.opcode);
  return fmt::format("{:>15} {:<4} {:>6} 0x{:02x} {}", r.end_ps, isa::engine_name(r.engine),
                     r.index, r.opcode, m.empty() ? "?" : m);
}

void TpbCore::trace_sfu_flags(std::uint64_t ps) {
  const std::uint32_t bits = tile_file().flags().bits();
  if (bits == sfu_flags_last_) return;
  static const char* const kNames[3] = {"inexact", "saturated", "wrapped"};
  for (unsigned f = 0; f < 3; ++f) {
    const bool on = (bits >> f) & 1u;
    if (on == (((sfu_flags_last_ >> f) & 1u) != 0)) continue;
    recorder_.set(sfu_flag_sig_[f], ps, on);
    if (recorder_.slices_enabled()) recorder_.counter(sfu_flag_track_, ps, kNames[f], on);
  }
  sfu_flags_last_ = bits;
}

void TpbCore::deliver(const PendingRetire& p) {
  ++retired_;
  if (retire_sink_) {
    sc::RetireRecord r = p.r;
    r.bundles = p.bundles.data();
    r.num_bundles = p.bundles.size();
    retire_sink_(r);
  }
}

void TpbCore::commit_retires(std::uint64_t before) {
  while (!pending_.empty() && pending_.top().r.end_ps < before) {
    deliver(pending_.top());
    pending_.pop();
  }
}

void TpbCore::commit_retires_at_stop(std::uint64_t stop_ps) {
  for (; !pending_.empty(); pending_.pop())
    if (pending_.top().r.end_ps <= stop_ps) deliver(pending_.top());
}

void TpbCore::on_retire(const sc::RetireRecord& r) {
  PendingRetire p{r, {}};
  p.r.bundles = nullptr;
  p.r.num_bundles = 0;
  if (retire_sink_) p.bundles.assign(r.bundles, r.bundles + r.num_bundles);
  pending_.push(std::move(p));
  commit_retires(to_ps(sc_core::sc_time_stamp()));
  if (r.engine == isa::Engine::Sfu) trace_sfu_flags(r.end_ps);
  if (!recorder_.signals_enabled()) return;
  std::uint64_t rd[kNumMems], wr[kNumMems];
  memory_bytes(rd, wr);
  for (unsigned m = 0; m < kNumMems; ++m) {
    if (rd[m] != mem_read_last_[m]) recorder_.set(mem_read_sig_[m], r.end_ps, rd[m]);
    if (wr[m] != mem_write_last_[m]) recorder_.set(mem_write_sig_[m], r.end_ps, wr[m]);
    mem_read_last_[m] = rd[m];
    mem_write_last_[m] = wr[m];
  }
}

void TpbCore::memory_bytes(std::uint64_t rd[kNumMems], std::uint64_t wr[kNumMems]) const {
  for (unsigned m = 0; m < kNumMems; ++m) rd[m] = wr[m] = 0;
  for (const auto& s : seqs_)
    for (unsigned m = 0; m < kNumMems; ++m) {
      rd[m] += s.port.bytes_read()[m];
      wr[m] += s.port.bytes_written()[m];
    }
}

std::string TpbCore::pending_report() const {
  std::string msg;
  for (const auto& s : seqs_) {
    if (s.done()) continue;
    const std::string_view m = isa::opcode_mnemonic(s.opcode());
    const std::string op = fmt::format("opcode 0x{:02x}{}{}", s.opcode(), m.empty() ? "" : " ", m);
    const isa::Events& ev = s.blocked_on();
    msg += fmt::format("{}{} instruction {} ", msg.empty() ? "" : "; ",
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

RunResult TpbCore::run() {
  if (ran_) throw std::logic_error("TpbCore::run: a core runs once (one elaboration per process)");
  ran_ = true;
  ensure_elaborated();
  const auto w0 = std::chrono::steady_clock::now();
  if (cfg_.max_sim_ps != 0) control_.set_sim_limit(cfg_.max_sim_ps);
  if (cfg_.max_wall_seconds > 0)
    control_.set_wall_deadline(w0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(cfg_.max_wall_seconds)));
  control_.start();
  sc_core::sc_start();
  RunResult r;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  r.simulated_ps = to_ps(sc_core::sc_time_stamp());
  // After a fault nothing is recorded past its time on any engine: retires,
  // stats and traces all end there (engines run decoupled, so others may
  // have run ahead of it).
  const std::uint64_t stop_ps = control_.faulted() ? control_.fault_time_ps() : trace::kForever;
  if (control_.faulted())
    for (auto& s : seqs_) s.stop_at(stop_ps);
  commit_retires_at_stop(stop_ps);
  r.instructions = retired_;
  if (control_.faulted()) {
    r.status = RunStatus::Fault;
    r.message = control_.message();
    r.simulated_ps = std::max(r.simulated_ps, control_.fault_time_ps());
    if (r.message.rfind(std::string(isa::engine_name(isa::Engine::Sfu)) + " ", 0) == 0) {
      recorder_.set(sfu_fault_sig_, control_.fault_time_ps(), 1);
      if (recorder_.slices_enabled())
        recorder_.instant(sfu_flag_track_, control_.fault_time_ps(), "fault",
                          nlohmann::json{{"message", r.message}}.dump());
    }
  } else if (control_.watchdog() != sc::RunControl::Watchdog::None) {
    // Stopped at the watchdog's time: nothing was recorded after it.
    r.status = RunStatus::Watchdog;
    r.simulated_ps = control_.stop_ps();
    const std::string pending = pending_report();
    r.message = control_.watchdog() == sc::RunControl::Watchdog::SimTime
                    ? fmt::format("simulated time limit {} ps reached", cfg_.max_sim_ps)
                    : fmt::format("wall time limit {} s reached; stopped at {} ps",
                                  cfg_.max_wall_seconds, r.simulated_ps);
    if (!pending.empty()) r.message += "; pending: " + pending;
  } else {
    for (const auto& s : seqs_)
      if (!s.done()) r.status = RunStatus::Deadlock;
    if (r.status == RunStatus::Deadlock) r.message = pending_report();
  }
  // The traces end with the run; after a fault, at its time on every engine.
  recorder_.finish(stop_ps);
  last_ = r;
  return r;
}

trace::RunStats TpbCore::stats() const {
  trace::RunStats s;
  s.arch = std::string(isa::arch_name(cfg_.arch));
  for (const auto& q : seqs_) s.engines.push_back(q.stats());
  std::uint64_t rd[kNumMems], wr[kNumMems];
  memory_bytes(rd, wr);
  for (unsigned m = 0; m < kNumMems; ++m) s.memories.push_back({mem_name(m), rd[m], wr[m]});
  s.simulated_ps = last_.simulated_ps;
  s.wall_seconds = last_.wall_seconds;
  s.status = status_name(last_.status);
  s.message = last_.message;
  if (const fw::sfu::TileFile* tf = tile_file_) {
    s.sfu.inexact = tf->flags().inexact;
    s.sfu.saturated = tf->flags().saturated;
    s.sfu.wrapped = tf->flags().wrapped;
    s.sfu.tiles = tf->allocated_tiles();
    s.sfu.units_used = tf->used_units();
  }
  return s;
}

nlohmann::json TpbCore::effective_timing() const {
  sc::TimingConfig t = cfg_.timing;
  for (const auto& [name, cycles] : fw::builtin_kernels().bundle_cycles())
    t.bundle_issue_cycles.emplace(name, cycles);  // overrides already present win
  return sc::to_json(t);
}

}  // namespace tpb::platform
