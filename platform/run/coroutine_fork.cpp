#include "platform/run/coroutine_fork.h"

#include <new>

#include <systemc>

#include <sysc/kernel/sc_cor.h>

// The QuickThreads package of libsystemc (src/sysc/kernel/sc_cor_qt.h, not
// installed): declared here for its constructor, destructor and instance
// count, which decide the current coroutine. Its only state is the base's.
namespace sc_core {
class sc_cor_pkg_qt : public sc_cor_pkg {
 public:
  explicit sc_cor_pkg_qt(sc_simcontext* simc);
  ~sc_cor_pkg_qt() override;
  sc_cor* create(std::size_t stack_size, sc_cor_fn* fn, void* arg) override;
  void yield(sc_cor* next_cor) override;
  void abort(sc_cor* next_cor) override;
  sc_cor* get_main() override;
  static int instance_count;
};
}  // namespace sc_core

namespace tpb::run {

void reset_coroutines_after_fork() {
  using sc_core::sc_cor_pkg_qt;
  // The package resets the current coroutine to none when its last
  // instance goes (count 1 -> 0) and to the main one when its first is made
  // (0 -> 1): a package made and unmade around those two steps, the count
  // put back after (every context keeps its package for the process's life).
  alignas(sc_cor_pkg_qt) static unsigned char first[sizeof(sc_cor_pkg_qt)];
  alignas(sc_cor_pkg_qt) static unsigned char second[sizeof(sc_cor_pkg_qt)];
  sc_core::sc_simcontext* ctx = sc_core::sc_get_curr_simcontext();
  const int live = sc_cor_pkg_qt::instance_count;
  sc_cor_pkg_qt::instance_count = 1;
  auto* p = new (first) sc_cor_pkg_qt(ctx);  // 1 -> 2: nothing reset
  sc_cor_pkg_qt::instance_count = 1;
  p->sc_cor_pkg_qt::~sc_cor_pkg_qt();  // 1 -> 0: no current coroutine
  new (second) sc_cor_pkg_qt(ctx);     // 0 -> 1: the main coroutine is current
  sc_cor_pkg_qt::instance_count = live;
}

}  // namespace tpb::run
