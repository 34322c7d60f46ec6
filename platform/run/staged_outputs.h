// Every output of a run is staged: written beside its final name and renamed
// into place only when complete, so a failed or interrupted write never
// leaves a half-written file under the real name, and an output never
// truncates an input or another output. A device or a pipe (/dev/null,
// /dev/stdout) is written in place and never replaced.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tpb::run {

// Whether PATH is written to a staging file and renamed (a regular file or a
// path that does not exist yet).
bool output_is_staged(const std::string& path);
// Where to write PATH: its staging file, or PATH itself (a device or a pipe).
std::string staged_output_path(const std::string& path);
// The file PATH names: a symbolic link's target (written through the link,
// the link kept), else PATH itself. A staged output is renamed onto it.
std::string output_target(const std::string& path);

class StagedOutputs {
 public:
  // `option` names the output in messages ("--stats").
  void add(std::string option, std::string path) {
    outs_.push_back({std::move(option), std::move(path)});
  }
  const std::vector<std::pair<std::string, std::string>>& outputs() const { return outs_; }
  static bool staged(const std::string& path) { return output_is_staged(path); }
  static std::string temp(const std::string& path) { return staged_output_path(path); }

  // Before anything runs: an output that names an input or another output,
  // or that cannot be created, is an error listing every such output ("" when
  // none); then nothing is written.
  std::string check(const std::vector<std::pair<std::string, std::string>>& inputs) const;
  // Renames a complete staging file into place; on failure removes it and
  // throws std::runtime_error naming PATH.
  static void commit(const std::string& path);
  static void discard(const std::string& path);

 private:
  std::vector<std::pair<std::string, std::string>> outs_;
};

}  // namespace tpb::run
