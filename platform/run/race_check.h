// The race check in the run API (SPEC §14): the detector of the program
// loaded on a core, and its report as text for a terminal and as JSON lines.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "models/isa/program_spool.h"
#include "models/race/detector.h"
#include "platform/core/device.h"
#include "platform/core/tpb_core.h"

namespace tpb::run {

// The detector of the next run of a device's cores (one, or several: SPEC
// §15): core i's program `programs[i]` (null: idle) with its notes, when it
// kept them (without them the report has no lines and every wait is ordered
// by what the run observed), and the core's semaphores as they are now.
// Accesses of every core are checked against each other (the HBM is the
// device's), and a DMA descriptor's update of another core's semaphore
// releases into that core's.
std::unique_ptr<race::Detector> make_detector(
    const std::vector<platform::TpbCore*>& cores, const std::vector<isa::SpooledProgram*>& programs,
    const std::vector<std::vector<unsigned>>& targets = {});

// One race a line (race::race_json); throws std::runtime_error naming the
// file when it cannot be written.
void write_races(const race::Report& r, const std::string& path);

// What `tpbsim run` prints on stderr: "race: MESSAGE" for the first `max`
// races, a count of the others, and a note for each semaphore whose waits
// were ordered by this run's timing. Nothing when no race was found.
std::vector<std::string> race_lines(const race::Report& r, std::size_t max);

}  // namespace tpb::run
