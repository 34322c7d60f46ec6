// Every output of a run is staged: written to a file of its own beside its
// final name and renamed into place only when complete, so a failed or
// interrupted write never leaves a half-written file under the real name,
// and an output never truncates an input or another output.
//
// The staging file is nameless (O_TMPFILE) where the file system allows it,
// given a name only for the rename; elsewhere it is created exclusively
// (O_EXCL, never through a link) under a random name `.NAME.tpbsim-XXXXXXXX`.
// Nobody can predict it, plant a link there, or share it with another run;
// a process killed outright leaves no staging file behind on O_TMPFILE file
// systems, and a stop signal removes the named ones (platform/run/stop_signals.h).
//
// A character device or a FIFO (/dev/null, /dev/stdout, `mkfifo`) is written
// in place and never replaced; a FIFO must have a reader.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tpb::run {

// An output that cannot be opened, written or put in place; what() names the
// path the user gave.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether PATH is written to a staging file and renamed (a regular file or a
// path that does not exist yet), not in place.
bool output_is_staged(const std::string& path);
// The file PATH names: a symbolic link's target (written through the link,
// the link kept), else PATH itself. A staged output is renamed onto it.
std::string output_target(const std::string& path);
// "" when PATH can be written as an output, else why not ("cannot create
// (No such file or directory)", "is a directory", "is a block device, not a
// file to write", "cannot create (Too many levels of symbolic links)", ...).
// Opens nothing that is not a fresh staging file (a FIFO's reader would see
// an empty file).
std::string output_problem(const std::string& path);

// Whether the last component of PATH is a legal file name (at most 255
// bytes): a --vcd of a long name has no .gtkw when NAME.gtkw would be past it.
bool gtkw_name_fits(const std::string& path);

// One output being written.
class OutputFile {
 public:
  OutputFile() = default;
  // Opens PATH: a fresh staging file, or the device or FIFO itself (a FIFO
  // waits up to `fifo_wait_seconds` for a reader). Throws OutputError.
  explicit OutputFile(const std::string& path, double fifo_wait_seconds = 5);
  OutputFile(OutputFile&& o) noexcept { *this = std::move(o); }
  OutputFile& operator=(OutputFile&& o) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // discards unless committed

  bool is_open() const { return fd_ >= 0; }
  bool staged() const { return staged_; }
  int fd() const { return fd_; }
  // The path the user gave.
  const std::string& path() const { return path_; }
  // What a writer opens (with O_TRUNC or not): this file and nothing else
  // (/proc/self/fd/N of a staging file), or the device or FIFO.
  const std::string& write_path() const { return write_path_; }
  // `msg` with write_path() replaced by path(): the user never sees ours.
  std::string user_message(std::string msg) const;

  // A staged file renamed onto its target; a device or FIFO closed. Throws
  // OutputError naming path() (the staging file is then removed).
  void commit();
  // Removes the staging file (a device or FIFO is closed).
  void discard() noexcept;

 private:
  void open_in_place(const std::string& target, double fifo_wait_seconds);
  void open_staged(const std::string& target);
  void close_all() noexcept;
  std::string path_, write_path_;
  std::string target_base_;  // the target's name in its directory
  std::string stage_name_;   // a named staging file's name ("": nameless)
  int fd_ = -1, dirfd_ = -1;
  void* registered_ = nullptr;  // the stop-signal cleanup entry of stage_name_
  bool staged_ = false;
};

// Before anything runs: every output (option, path) that names an input or
// another output, or that cannot be created, in one message ("refused before
// running, nothing written: ..."); "" when none.
std::string refused_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                            const std::vector<std::pair<std::string, std::string>>& inputs);

// Every named staging file still open, removed at once; async-signal-safe
// (a stop signal's handler calls it).
void remove_staging_files_now() noexcept;

}  // namespace tpb::run
