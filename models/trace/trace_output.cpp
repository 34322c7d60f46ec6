#include "models/trace/trace_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tpb::trace {

namespace {
// Write-back is started for each this many bytes written (regular files).
constexpr std::uint64_t kWriteBackChunk = std::uint64_t{8} << 20;
}  // namespace

int open_output(const std::string& path, bool* regular) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) return fd;
  if (regular) *regular = S_ISREG(st.st_mode);
  if (S_ISREG(st.st_mode) && st.st_size > 0 && ::ftruncate(fd, 0) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

TraceOutput::TraceOutput(std::string path, const char* kind) : path_(std::move(path)) {
  fd_ = open_output(path_, &regular_);
  if (fd_ < 0)
    throw std::runtime_error(std::string(kind) + " '" + path_ +
                             "': cannot open for writing: " + std::strerror(errno));
  buf_.reserve(kBlock + 4096);
}

TraceOutput::~TraceOutput() {
  if (fd_ >= 0) ::close(fd_);
}

void TraceOutput::flush() {
  if (error_.empty() && !buf_.empty() && fd_ >= 0) {
    const char* p = buf_.data();
    std::size_t left = buf_.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = "'" + path_ + "': write failed: " + std::strerror(n < 0 ? errno : ENOSPC);
        break;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
      bytes_ += static_cast<std::uint64_t>(n);
    }
    // Start writing back what is written, a chunk at a time, on this
    // (the writer's) thread: left to the end, the rename that replaces an
    // older trace makes ext4 allocate and write back the whole file then.
    if (regular_ && bytes_ - started_ >= kWriteBackChunk) {
      ::sync_file_range(fd_, static_cast<off_t>(started_), static_cast<off_t>(bytes_ - started_),
                        SYNC_FILE_RANGE_WRITE);
      started_ = bytes_;
    }
  }
  buf_.clear();
}

void TraceOutput::close() {
  flush();
  const int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0 && errno != EINTR && error_.empty())
    error_ = "'" + path_ + "': cannot finish writing: " + std::strerror(errno);
}

}  // namespace tpb::trace
