#include "models/sc/engine/engine_clock.h"

namespace tpb::sc {

void EngineClock::sync() {
  flush();
  RunControl& c = *control_;
  if (c.aborted()) throw RunControl::Abort{};
  sc_core::wait(qk_.get_local_time(), c.abort_event());
  refresh_stamp();
  if (c.aborted()) throw RunControl::Abort{};
  qk_.reset();
}

}  // namespace tpb::sc
