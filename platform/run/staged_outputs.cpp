#include "platform/run/staged_outputs.h"
#include "models/isa/input_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>

#include <fmt/format.h>

namespace tpb::run {

namespace {

// ------------------------------------------------- named staging files, for signals

// The named staging files still open, for a signal handler to remove: a
// list of entries never freed (reused), each claimed and released with
// atomics, so the handler reads it at any moment without a lock.
struct StageEntry {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 live
  int dirfd = -1;
  char name[NAME_MAX + 1] = {};
  StageEntry* next = nullptr;
};
std::atomic<StageEntry*> g_stages{nullptr};

StageEntry* register_stage(int dirfd, const std::string& name) {
  StageEntry* e = nullptr;
  for (StageEntry* n = g_stages.load(); n && !e; n = n->next) {
    int free_state = 0;
    if (n->state.compare_exchange_strong(free_state, 1)) e = n;
  }
  if (!e) {
    e = new StageEntry;  // never freed: the handler may read it at any time
    e->state.store(1);
    e->next = g_stages.load();
    while (!g_stages.compare_exchange_weak(e->next, e)) {
    }
  }
  e->dirfd = dirfd;
  std::snprintf(e->name, sizeof e->name, "%s", name.c_str());
  e->state.store(2);
  return e;
}

void release_stage(void*& entry) {
  if (entry) static_cast<StageEntry*>(entry)->state.store(0);
  entry = nullptr;
}

// ------------------------------------------------------------ paths and names

bool proc_fd_available() {
  static const bool ok = ::access("/proc/self/fd", X_OK) == 0;
  return ok;
}

std::string errno_text(int err) { return std::strerror(err); }

// A path as messages show it: control characters escaped, cut.
std::string shown(const std::string& path) { return isa::excerpt(path, 1024); }

// How PATH is written.
struct Resolved {
  enum Kind { Staged, InPlace } kind = Staged;
  std::string target;   // the file (a link's target) or the device
  std::string problem;  // "": fine
};

Resolved resolve(const std::string& path) {
  namespace fs = std::filesystem;
  Resolved r;
  std::string p = path;
  for (int hops = 0;; ++hops) {
    // A process's descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N) is
    // written in place, whatever it is: never a file renamed over it.
    if (p.rfind("/proc/", 0) == 0 || p.rfind("/dev/fd/", 0) == 0) {
      struct stat st {};
      if (::stat(p.c_str(), &st) != 0) {
        r.problem = "cannot open for writing (" + errno_text(errno) + ")";
        return r;
      }
      if (S_ISDIR(st.st_mode)) {
        r.problem = "is a directory";
        return r;
      }
      r.kind = Resolved::InPlace;
      r.target = p;
      return r;
    }
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) {  // a new file (its directory is checked when it is made)
        r.target = p;
        return r;
      }
      r.problem = "cannot create (" + errno_text(errno) + ")";
      return r;
    }
    if (S_ISLNK(st.st_mode)) {
      if (hops >= 40) {
        r.problem = "cannot create (" + errno_text(ELOOP) + ")";
        return r;
      }
      std::error_code ec;
      const fs::path t = fs::read_symlink(p, ec);
      if (ec) {
        r.problem = "cannot create (" + ec.message() + ")";
        return r;
      }
      p = t.is_absolute() ? t.string() : (fs::path(p).parent_path() / t).string();
      continue;
    }
    r.target = p;
    if (S_ISREG(st.st_mode)) return r;
    if (S_ISDIR(st.st_mode))
      r.problem = "is a directory";
    else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
      r.kind = Resolved::InPlace;
    else if (S_ISBLK(st.st_mode))
      r.problem = "is a block device, not a file to write";
    else
      r.problem = "is a socket, not a file to write";
    return r;
  }
}

// A staging name for `base`: `.BASE.tpbsim-XXXXXXXX`, BASE cut (at a UTF-8
// character boundary) so the name is at most NAME_MAX bytes.
std::string staging_name(const std::string& base) {
  static constexpr char kAlnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  unsigned char rnd[8] = {};
  if (::getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof rnd)) {
    // No entropy yet: the time and the pid, still never reused (O_EXCL).
    std::uint64_t x =
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (static_cast<std::uint64_t>(::getpid()) << 40);
    for (unsigned char& c : rnd) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      c = static_cast<unsigned char>(x >> 56);
    }
  }
  std::string suffix = ".tpbsim-";
  for (unsigned char c : rnd) suffix += kAlnum[c % (sizeof kAlnum - 1)];
  std::size_t keep = base.size();
  const std::size_t room = NAME_MAX - 1 - suffix.size();
  if (keep > room) {
    keep = room;
    while (keep > 0 && (static_cast<unsigned char>(base[keep]) & 0xC0) == 0x80) --keep;
  }
  return "." + base.substr(0, keep) + suffix;
}

}  // namespace

// ---------------------------------------------------------------- free functions

bool output_is_staged(const std::string& path) {
  const Resolved r = resolve(path);
  return r.problem.empty() ? r.kind == Resolved::Staged : true;
}

std::string output_target(const std::string& path) {
  const Resolved r = resolve(path);
  return r.target.empty() ? path : r.target;
}

std::string output_problem(const std::string& path) {
  const Resolved r = resolve(path);
  if (!r.problem.empty()) return r.problem;
  if (r.kind == Resolved::InPlace) {
    // Never opened here: a FIFO's reader would take the close for the end.
    if (::access(r.target.c_str(), W_OK) != 0)
      return "cannot open for writing (" + errno_text(errno) + ")";
    return "";
  }
  try {
    OutputFile f(path);
    f.discard();
  } catch (const OutputError& e) {
    // "PATH: cannot create (...)" -> "cannot create (...)"
    std::string m = e.what();
    if (m.rfind(shown(path) + ": ", 0) == 0) m = m.substr(shown(path).size() + 2);
    return m;
  }
  return "";
}

bool gtkw_name_fits(const std::string& path) {
  return std::filesystem::path(path).filename().string().size() <= NAME_MAX;
}

void remove_staging_files_now() noexcept {
  for (StageEntry* n = g_stages.load(); n; n = n->next)
    if (n->state.load() == 2) ::unlinkat(n->dirfd, n->name, 0);
}

// ---------------------------------------------------------------- OutputFile

OutputFile& OutputFile::operator=(OutputFile&& o) noexcept {
  if (this != &o) {
    discard();
    path_ = std::move(o.path_);
    write_path_ = std::move(o.write_path_);
    target_base_ = std::move(o.target_base_);
    stage_name_ = std::move(o.stage_name_);
    fd_ = o.fd_;
    dirfd_ = o.dirfd_;
    registered_ = o.registered_;
    staged_ = o.staged_;
    o.fd_ = o.dirfd_ = -1;
    o.registered_ = nullptr;
  }
  return *this;
}

OutputFile::~OutputFile() { discard(); }

OutputFile::OutputFile(const std::string& path, double fifo_wait_seconds) : path_(path) {
  const Resolved r = resolve(path);
  if (!r.problem.empty()) throw OutputError(shown(path) + ": " + r.problem);
  if (r.kind == Resolved::InPlace)
    open_in_place(r.target, fifo_wait_seconds);
  else
    open_staged(r.target);
}

// A device or a FIFO, written in place; a FIFO waits for its reader (a
// blocking open would hang for ever).
void OutputFile::open_in_place(const std::string& target, double fifo_wait_seconds) {
  struct stat st {};
  const bool fifo = ::stat(target.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
  if (!fifo) {
    fd_ = ::open(target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0)
      throw OutputError(shown(path_) + ": cannot open for writing (" + errno_text(errno) + ")");
  } else {
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(fifo_wait_seconds));
    for (;;) {
      fd_ = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      if (fd_ >= 0 || errno != ENXIO) break;
      if (std::chrono::steady_clock::now() >= until)
        throw OutputError(fmt::format(
            "{}: a FIFO that nothing reads (no reader within {} s; start the reader first)",
            shown(path_), fifo_wait_seconds));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (fd_ < 0)
      throw OutputError(shown(path_) + ": cannot open for writing (" + errno_text(errno) + ")");
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  }
  write_path_ = target;
}

// A staging file beside `target`: nameless (O_TMPFILE) where the file
// system allows it, else a new name made exclusively.
void OutputFile::open_staged(const std::string& target_path) {
  namespace fs = std::filesystem;
  staged_ = true;
  const fs::path target(target_path);
  target_base_ = target.filename().string();
  std::string dir = target.parent_path().string();
  if (dir.empty()) dir = ".";
  if (target_base_.size() > NAME_MAX)
    throw OutputError(shown(path_) + ": cannot create (" + errno_text(ENAMETOOLONG) + ")");
  dirfd_ = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd_ < 0) throw OutputError(shown(path_) + ": cannot create (" + errno_text(errno) + ")");
  if (proc_fd_available()) {
    fd_ = ::openat(dirfd_, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EISDIR && errno != EOPNOTSUPP && errno != EINVAL) {
      const int err = errno;
      close_all();
      throw OutputError(shown(path_) + ": cannot create (" + errno_text(err) + ")");
    }
  }
  if (fd_ < 0) {  // no nameless files here: a new name, made exclusively
    for (int tries = 0; tries < 100 && fd_ < 0; ++tries) {
      stage_name_ = staging_name(target_base_);
      fd_ = ::openat(dirfd_, stage_name_.c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) break;
    }
    if (fd_ < 0) {
      const int err = errno;
      stage_name_.clear();
      close_all();
      throw OutputError(shown(path_) + ": cannot create (" + errno_text(err) + ")");
    }
    registered_ = register_stage(dirfd_, stage_name_);
  }
  write_path_ = proc_fd_available() ? "/proc/self/fd/" + std::to_string(fd_)
                                    : (fs::path(dir) / stage_name_).string();
}

std::string OutputFile::user_message(std::string msg) const {
  if (write_path_.empty() || write_path_ == path_) return msg;
  for (std::size_t at = msg.find(write_path_); at != std::string::npos;
       at = msg.find(write_path_, at + 1))
    msg.replace(at, write_path_.size(), shown(path_));
  return msg;
}

void OutputFile::close_all() noexcept {
  release_stage(registered_);
  if (fd_ >= 0) ::close(fd_);
  if (dirfd_ >= 0) ::close(dirfd_);
  fd_ = dirfd_ = -1;
}

void OutputFile::discard() noexcept {
  if (fd_ < 0 && dirfd_ < 0) return;
  if (staged_ && !stage_name_.empty() && dirfd_ >= 0) {
    // Only the file this object made (a name swapped in since is not ours).
    struct stat mine {
    }, there{};
    if (fd_ >= 0 && ::fstat(fd_, &mine) == 0 &&
        ::fstatat(dirfd_, stage_name_.c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0 &&
        mine.st_dev == there.st_dev && mine.st_ino == there.st_ino)
      ::unlinkat(dirfd_, stage_name_.c_str(), 0);
  }
  stage_name_.clear();
  close_all();
}

void OutputFile::commit() {
  if (fd_ < 0) throw OutputError(shown(path_) + ": not written (not open)");
  if (!staged_) {
    const int rc = ::close(fd_);
    const int err = errno;
    fd_ = -1;
    close_all();
    if (rc != 0 && err != EINTR)
      throw OutputError(shown(path_) + ": write failed (" + errno_text(err) + ")");
    return;
  }
  auto fail = [&](const std::string& why) {
    discard();
    throw OutputError(shown(path_) + ": not written (" + why + ")");
  };
  if (stage_name_.empty()) {
    // A nameless file gets a name of its own, then is renamed onto the target.
    const std::string self = "/proc/self/fd/" + std::to_string(fd_);
    int rc = -1;
    for (int tries = 0; tries < 100 && rc != 0; ++tries) {
      stage_name_ = staging_name(target_base_);
      rc = ::linkat(AT_FDCWD, self.c_str(), dirfd_, stage_name_.c_str(), AT_SYMLINK_FOLLOW);
      if (rc != 0 && errno != EEXIST) break;
    }
    if (rc != 0) {
      const int err = errno;
      stage_name_.clear();
      fail("cannot link the staging file: " + errno_text(err));
    }
    registered_ = register_stage(dirfd_, stage_name_);
  } else {
    struct stat mine {
    }, there{};
    if (::fstat(fd_, &mine) != 0 ||
        ::fstatat(dirfd_, stage_name_.c_str(), &there, AT_SYMLINK_NOFOLLOW) != 0 ||
        mine.st_dev != there.st_dev || mine.st_ino != there.st_ino) {
      stage_name_.clear();  // not ours any more: left alone
      fail("its staging file was removed or replaced during the run");
    }
  }
  if (::renameat(dirfd_, stage_name_.c_str(), dirfd_, target_base_.c_str()) != 0)
    fail("rename failed: " + errno_text(errno));
  stage_name_.clear();
  close_all();
}

// ---------------------------------------------------------------- a run's outputs

std::string refused_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                            const std::vector<std::pair<std::string, std::string>>& inputs) {
  namespace fs = std::filesystem;
  // Two names of one file: each resolved to the file it would write (the
  // final target of a chain of links, followed even when it does not exist
  // yet, as the output's writer follows it), then to its canonical path.
  auto same = [](const std::string& a, const std::string& b) {
    std::error_code e1, e2;
    const fs::path pa = fs::weakly_canonical(output_target(a), e1);
    const fs::path pb = fs::weakly_canonical(output_target(b), e2);
    return e1 || e2 ? a == b : pa == pb;
  };
  std::vector<std::string> bad;
  // Each clash once (a program given for two cores is one input).
  auto refuse = [&bad](std::string line) {
    if (std::find(bad.begin(), bad.end(), line) == bad.end()) bad.push_back(std::move(line));
  };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [opt, path] = outputs[i];
    for (const auto& [iopt, ipath] : inputs)
      if (same(path, ipath))
        refuse(fmt::format("{} {} names the input of {}", shown(opt), shown(path), shown(iopt)));
    for (std::size_t j = 0; j < i; ++j)
      if (same(path, outputs[j].second))
        refuse(fmt::format("{} {} names the output of {} too", shown(opt), shown(path),
                           shown(outputs[j].first)));
  }
  if (bad.empty())
    for (const auto& [opt, path] : outputs) {
      const std::string why = output_problem(path);
      if (why == "is a directory")
        bad.push_back(fmt::format("{} {} is a directory", shown(opt), shown(path)));
      else if (!why.empty())
        bad.push_back(fmt::format("{} {}: {}", shown(opt), shown(path), why));
    }
  if (bad.empty()) return "";
  std::string msg = "refused before running, nothing written:";
  for (const auto& b : bad) msg += "\n  " + b;
  return msg;
}

}  // namespace tpb::run
