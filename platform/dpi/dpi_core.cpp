// libtpbsim_dpi's core (tpbsim_dpi.h): a chandle on a run::Session, the run
// API's core (SPEC §12). Every call goes through the Session: memory rows,
// .npy loads and dumps, programs run one after another with memories and
// time carried over. Nothing here sets up or runs the model itself.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "platform/dpi/dpi_boundary.h"
#include "platform/run/arrays.h"
#include "platform/run/host_args.h"
#include "platform/run/mem_spec.h"
#include "platform/run/no_sc_main.h"
#include "platform/run/session.h"

namespace tpb::dpi {
namespace {

struct Core {
  std::unique_ptr<run::Session> session;
  isa::Arch arch = isa::Arch::Mariana;
  std::string status = "none";  // of the last run
  std::string message;          // the last run's fault / deadlock / watchdog message
  std::uint64_t instructions = 0;
  std::uint64_t max_sim_ps = 0;  // the watchdogs of every run (0: off)
  double max_wall_seconds = 0;
  bool racecheck = false;                  // SPEC §14, every run
  std::uint64_t races = 0;                 // the last run's
  std::vector<std::string> race_messages;  // ... the first 1000 of them
  std::string race_text;                   // tpb_dpi_core_race's string
};

// The chandles this library made and has not freed: any number of cores, each
// its own Session (its own elaboration, SPEC §15's one-core device). Never
// destroyed: a core the host did not free lives until the process ends, as
// the SystemC kernel it runs in.
std::vector<std::unique_ptr<Core>>& live_cores() {
  static auto* cores = new std::vector<std::unique_ptr<Core>>;
  return *cores;
}

// The live core behind `h`, or null (a freed or foreign handle).
Core* live(void* h) {
  for (const auto& c : live_cores())
    if (c.get() == h) return c.get();
  return nullptr;
}

Core* core_of(void* h) {
  if (!h) {
    fail("the core handle is null");
    return nullptr;
  }
  Core* c = live(h);
  if (!c) fail("the core handle is not a live core of this library (freed, or never made)");
  return c;
}

// The place of a row access, by the hosts' checks (platform/run/host_args.h,
// arrays.h): RangeError / InputError, which session_call turns into
// TPB_DPI_EARG with the message. "hbm" is reached by byte offset (partition
// 0), as Python's Core.write / read reach it.
run::HostPlace row_place(const Core& c, const char* mem, int partition, int offset, int nbytes,
                         int max_bytes) {
  const run::HostPlace p =
      run::checked_place(mem ? mem : "", partition, offset, c.session->hbm_bytes());
  if (nbytes < 1 || nbytes > max_bytes)
    throw run::InputError(fmt::format("{} bytes: give 1..{}", nbytes, max_bytes));
  return p;
}

// The Session's errors (bad spec, bad file, a second core) are the user's:
// TPB_DPI_EARG with the message; anything else is the model's.
template <class F>
int session_call(F&& f) {
  return guarded([&]() -> int {
    try {
      return f();
    } catch (const run::InputError& e) {
      return fail(e.what());
    } catch (const run::SpecError& e) {
      return fail(e.what());
    }
  });
}

int run_program(Core& c, std::unique_ptr<isa::SpooledProgram> p) {
  if (p->arch() && *p->arch() != c.arch)
    return fail(fmt::format("the program is for {} (.arch) but the core is {}",
                            isa::arch_name(*p->arch()), isa::arch_name(c.arch)));
  c.session->load(*p);
  run::SessionRequest req;
  req.max_sim_ps = c.max_sim_ps;
  req.max_wall_seconds = c.max_wall_seconds;
  req.racecheck = c.racecheck;
  const run::SessionReport rep = c.session->run(req);
  c.status = platform::status_name(rep.result.status);
  c.message = rep.result.message;
  c.instructions = rep.result.instructions;
  c.races = rep.races ? rep.races->total : 0;
  c.race_messages.clear();
  if (rep.races)
    for (const race::Race& r : rep.races->races)
      c.race_messages.push_back(race::race_message(r, rep.races->sources));
  if (rep.result.status == platform::RunStatus::Ok) {
    if (c.races == 0) return TPB_DPI_OK;
    last_error() = fmt::format("race: {}{}", c.race_messages.front(),
                               c.races > 1 ? fmt::format(" (and {} more)", c.races - 1) : "");
    return TPB_DPI_ERACE;
  }
  last_error() = c.status + ": " + c.message;
  return TPB_DPI_EFAULT;
}

}  // namespace
}  // namespace tpb::dpi

using namespace tpb;
using tpb::dpi::fail;

extern "C" {

void* tpb_dpi_core_new(const char* arch, const char* timing_file) {
  void* out = nullptr;
  dpi::session_call([&] {
    run::CoreSpec spec;
    isa::Arch a = isa::Arch::Mariana;
    if (arch && *arch && !isa::parse_arch(arch, a))
      return fail(fmt::format("'{}' is not one of sunda cayman mariana maverick", arch));
    spec.arch = a;
    if (timing_file) spec.timing_file = timing_file;
    auto c = std::make_unique<dpi::Core>();
    c->session = std::make_unique<run::Session>(spec);
    c->arch = a;
    out = c.get();
    dpi::live_cores().push_back(std::move(c));
    return TPB_DPI_OK;
  });
  return out;
}

int tpb_dpi_core_free(void* core) {
  return dpi::session_call([&] {
    dpi::Core* c = dpi::core_of(core);
    if (!c) return TPB_DPI_EARG;
    auto& cores = dpi::live_cores();
    for (auto it = cores.begin(); it != cores.end(); ++it)
      if (it->get() == c) {
        cores.erase(it);
        break;
      }
    return TPB_DPI_OK;
  });
}

int tpb_dpi_core_write(void* core, const char* mem, int partition, int offset,
                       const unsigned int* data, int nbytes) {
  return dpi::session_call([&] {
    dpi::Core* c = dpi::core_of(core);
    if (!c) return TPB_DPI_EARG;
    const run::HostPlace place = dpi::row_place(*c, mem, partition, offset, nbytes, 64);
    if (!data) return fail("data is null");
    std::uint8_t bytes[64];
    for (int i = 0; i < nbytes; ++i)
      bytes[i] = static_cast<std::uint8_t>(data[i / 4] >> (8 * (i % 4)));
    run::write_place(*c->session, place, bytes, 1, static_cast<std::size_t>(nbytes));
    return TPB_DPI_OK;
  });
}

int tpb_dpi_core_read(void* core, const char* mem, int partition, int offset, unsigned int* data,
                      int nbytes) {
  return dpi::session_call([&] {
    dpi::Core* c = dpi::core_of(core);
    if (!c) return TPB_DPI_EARG;
    const run::HostPlace place = dpi::row_place(*c, mem, partition, offset, nbytes, 64);
    if (!data) return fail("data is null");
    std::uint8_t bytes[64] = {};
    run::read_place(*c->session, place, bytes, 1, static_cast<std::size_t>(nbytes));
    for (int i = 0; i < 16; ++i) data[i] = 0;
    for (int i = 0; i < nbytes; ++i)
      data[i / 4] |= static_cast<unsigned int>(bytes[i]) << (8 * (i % 4));
    return TPB_DPI_OK;
  });
}

int tpb_dpi_core_write32(void* core, const char* mem, int partition, int offset,
                         unsigned int value) {
  return tpb_dpi_core_write(core, mem, partition, offset, &value, 4);
}

int tpb_dpi_core_read32(void* core, const char* mem, int partition, int offset,
                        unsigned int* value) {
  unsigned int w[16];
  const int rc = tpb_dpi_core_read(core, mem, partition, offset, w, 4);
  if (rc == TPB_DPI_OK && value) *value = w[0];
  if (rc == TPB_DPI_OK && !value) return fail("value is null");
  return rc;
}

int tpb_dpi_core_load_npy(void* core, const char* spec) {
  return dpi::session_call([&] {
    dpi::Core* c = dpi::core_of(core);
    if (!c) return TPB_DPI_EARG;
    if (!spec) return fail("the spec is null");
    if (run::is_tile_spec(spec)) {
      run::load_tile_npy(*c->session, run::parse_tile_spec(spec, false));
      return TPB_DPI_OK;
    }
    const run::MemSpec m = run::parse_mem_spec(spec, false);
    run::load_npy(*c->session, m, run::read_load(m, c->session->config()));
    return TPB_DPI_OK;
  });
}

int tpb_dpi_core_dump_npy(void* core, const char* spec) {
  return dpi::session_call([&] {
    dpi::Core* c = dpi::core_of(core);
    if (!c) return TPB_DPI_EARG;
    if (!spec) return fail("the spec is null");
    if (run::is_tile_spec(spec)) {
      const run::TileSpec t = run::parse_tile_spec(spec, true);
      run::dump_tile_npy(*c->session, t, t.file);
      return TPB_DPI_OK;
    }
    const run::MemSpec m = run::parse_mem_spec(spec, true);
    run::check_dump_fits(m, c->session->partition_bytes(m.place.region));
    run::dump_npy(*c->session, m, m.file);
    return TPB_DPI_OK;
  });
}

int tpb_dpi_core_limits(void* core, long long max_sim_ps, double max_wall_seconds) {
  return dpi::session_call([&] {
    dpi::Core* c = dpi::core_of(core);
    if (!c) return TPB_DPI_EARG;
    // 0: off; else the ranges of --max-sim-time and --max-wall-time (host_args.h).
    std::uint64_t ps = 0;
    double seconds = 0;
    try {
      if (max_sim_ps != 0) ps = run::check_max_sim_ps(max_sim_ps);
    } catch (const run::InputError& e) {
      return fail(fmt::format("max_sim_ps: {} (0: off)", e.what()));
    }
    try {
      if (max_wall_seconds != 0) seconds = run::check_max_wall_seconds(max_wall_seconds);
    } catch (const run::InputError& e) {
      return fail(fmt::format("max_wall_seconds: {} (0: off)", e.what()));
    }
    c->max_sim_ps = ps;
    c->max_wall_seconds = seconds;
    return TPB_DPI_OK;
  });
}

int tpb_dpi_core_racecheck(void* core, int on) {
  return dpi::session_call([&] {
    dpi::Core* c = dpi::core_of(core);
    if (!c) return TPB_DPI_EARG;
    c->racecheck = on != 0;
    return TPB_DPI_OK;
  });
}

int tpb_dpi_core_run(void* core, const char* program) {
  return dpi::session_call([&] {
    dpi::Core* c = dpi::core_of(core);
    if (!c) return TPB_DPI_EARG;
    if (!program) return fail("the program is null");
    return dpi::run_program(*c, run::program_from_text(program, "program", c->racecheck));
  });
}

int tpb_dpi_core_run_file(void* core, const char* path) {
  return dpi::session_call([&] {
    dpi::Core* c = dpi::core_of(core);
    if (!c) return TPB_DPI_EARG;
    if (!path) return fail("the path is null");
    return dpi::run_program(*c, run::load_program_file(path, c->racecheck));
  });
}

const char* tpb_dpi_core_status(void* core) {
  const dpi::Core* c = dpi::live(core);
  return c ? c->status.c_str() : "none";
}

const char* tpb_dpi_core_fault(void* core) {
  const dpi::Core* c = dpi::live(core);
  return c ? c->message.c_str() : "";
}

long long tpb_dpi_core_time_ps(void* core) {
  dpi::Core* c = dpi::live(core);
  return c ? static_cast<long long>(c->session->core().now_ps()) : -1;
}

long long tpb_dpi_core_instructions(void* core) {
  const dpi::Core* c = dpi::live(core);
  return c ? static_cast<long long>(c->instructions) : -1;
}

long long tpb_dpi_core_races(void* core) {
  const dpi::Core* c = dpi::live(core);
  return c ? static_cast<long long>(c->races) : -1;
}

const char* tpb_dpi_core_race(void* core, int i) {
  dpi::Core* c = dpi::live(core);
  if (!c || i < 0 || static_cast<std::size_t>(i) >= c->race_messages.size()) return "";
  c->race_text = c->race_messages[static_cast<std::size_t>(i)];
  return c->race_text.c_str();
}

}  // extern "C"
