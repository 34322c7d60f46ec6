// One whole run from options (SPEC §9 `tpbsim run`): the program file, the
// core's configuration, --load / --dump, every output, in the run API. The
// CLI is argument parsing plus this call; a sweep's point is a `tpbsim run`.
#pragma once

#include <string>
#include <vector>

#include "platform/core/tpb_core.h"
#include "platform/run/run_options.h"
#include "platform/run/session.h"

namespace tpb::run {

struct CommandOutcome {
  // SPEC §9: 0 ok, 1 bad input or an output not written, 2, 3, 4; 5 races (§14)
  int exit_code = 1;
  bool ran = false;  // false: refused before running (exit 1)
  std::string arch;  // the generation that ran
  SessionReport report;
  // What to tell the user, one message each, in order: errors (for stderr,
  // "tool: error: " is the caller's prefix unless the message is a
  // FILE:LINE:COL diagnostic), notes.
  std::vector<std::string> errors;
  std::vector<std::string> notes;
  bool error_is_located = false;  // errors[0] is "FILE:LINE:COL: error: ..."
};

// Runs `o` (o.program must be set). Never throws for bad input: the outcome
// says what went wrong.
CommandOutcome run_once(const RunOptions& o);

}  // namespace tpb::run
