// The sweep's file handling: every file it reads is bounded (an endless
// /dev/zero is refused, not read) and every JSON strict (a key given twice
// in one object is an error); every file it writes is staged and renamed
// into place like every CLI output (platform/run/staged_outputs.h). Bad
// input is a SweepError naming the file: exit 1.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace tpb::sweep {

// Bad sweep input: exit 1, the message names the file and what is wrong.
class SweepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The most a file the sweep reads may hold: a sweep file, a cmd.txt, a
// point's stats or result.
inline constexpr std::size_t kMaxInputBytes = std::size_t{16} << 20;
// plan.json holds every point's command line (about 1 KiB a point).
inline constexpr std::size_t kMaxPlanBytes = std::size_t{1} << 30;

// A path or a name as messages show it (control characters escaped, cut).
std::string shown(const std::string& s);

// The text of `path`; `what` names it in the error ("sweep file").
std::string read_file(const std::string& path, const std::string& what,
                      std::size_t max_bytes = kMaxInputBytes);
// Strict JSON of `path`.
nlohmann::json parse_json_file(const std::string& path, const std::string& what,
                               std::size_t max_bytes = kMaxInputBytes);
// Writes `text` to a staging file of its own and renames it into place.
// Throws std::runtime_error naming the path.
void write_file(const std::string& path, const std::string& text);

// A path written into a generated script, a #SBATCH line or GNU parallel's
// input must be one line of text (a newline would end the line and start a
// command): SweepError otherwise.
void require_one_line(const std::string& what, const std::string& s);

}  // namespace tpb::sweep
