// The race check's report as JSON (SPEC §14): one object per race, as
// `tpbsim run --races FILE` writes them one a line and `--stats` lists them
// under "races". Pure C++.
#pragma once

#include <nlohmann/json.hpp>

#include "models/race/detector.h"

namespace tpb::race {

// {"message", "kinds": ["RAW", ...], "memory": "sbuf", "core",
//  "partitions": [lo, hi] (sbuf, psum) | "tiles": [lo, hi], "bytes": [lo, hi]
//  (inclusive), "first": SIDE, "second": SIDE}, SIDE = {"engine", "index",
//  "mnemonic", "core", "file", "line" (a binary: "word"), "access": "read" |
//  "write" | "read+write", "dma_engines": [...] (a DMA queue)}; the host's
//  side is {"engine": "host", "core", "access"}.
nlohmann::json race_json(const Race& r, const std::vector<ProgramSource>& sources);
// {"count": total found, "listed": races kept, "races": [race_json ...],
//  "timing_dependent_semaphores": [{"semaphore", "core", "why"}]}.
nlohmann::json report_json(const Report& r);

}  // namespace tpb::race
