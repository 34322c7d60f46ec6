#include "models/isa/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <vector>

namespace tpb::isa {

namespace {

std::string open_problem(const std::string& path, int err) {
  switch (err) {
    case ENOENT: {
      struct stat l {};
      if (!path.empty() && ::lstat(path.c_str(), &l) == 0 && S_ISLNK(l.st_mode))
        return "cannot open: no such file (a symbolic link to a missing file)";
      return "cannot open: no such file";
    }
    case ELOOP:
      return "cannot open: too many levels of symbolic links (a symlink loop?)";
    case ENAMETOOLONG:
      return "cannot open: file name too long (" + std::to_string(path.size()) +
             " bytes; a name is at most " + std::to_string(NAME_MAX) + ", a path at most " +
             std::to_string(PATH_MAX) + ")";
    case ENOTDIR:
      return "cannot open: a component of the path is not a directory";
    case EACCES:
      return "cannot open: permission denied";
    default:
      return std::string("cannot open: ") + std::strerror(err);
  }
}

// A pipe read once: what has been read of it is kept in an anonymous
// temporary file, and every reader reads that copy, pulling more from the
// pipe when it reaches the copy's end. So a reader that stops early (a
// syntax error on line 1) reads no more of the pipe than it needs, and a
// second pass reads the copy.
class PipeCopy {
 public:
  explicit PipeCopy(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw std::runtime_error(printable(path) + ": " + open_problem(path, errno));
    f_ = std::tmpfile();
    if (!f_)
      throw std::runtime_error(printable(path) +
                               ": cannot create a temporary file to hold the pipe (" +
                               std::strerror(errno) + ")");
  }
  ~PipeCopy() {
    if (f_) std::fclose(f_);
  }
  PipeCopy(const PipeCopy&) = delete;
  PipeCopy& operator=(const PipeCopy&) = delete;

  // Up to n bytes at `off` into out; 0 at the end of the pipe.
  std::size_t read_at(std::uint64_t off, char* out, std::size_t n) {
    const std::lock_guard<std::mutex> lock(mu_);
    while (off >= size_ && !eof_) pull();
    if (off >= size_) return 0;
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(n, size_ - off));
    const ssize_t got = ::pread(::fileno(f_), out, want, static_cast<off_t>(off));
    if (got <= 0)
      throw std::runtime_error(printable(path_) + ": cannot read the pipe's temporary copy (" +
                               std::strerror(errno) + ")");
    return static_cast<std::size_t>(got);
  }
  std::uint64_t size() {
    const std::lock_guard<std::mutex> lock(mu_);
    return size_;
  }
  bool empty() {
    const std::lock_guard<std::mutex> lock(mu_);
    while (size_ == 0 && !eof_) pull();
    return size_ == 0;
  }

 private:
  // One more chunk of the pipe onto the copy.
  void pull() {
    char buf[65536];
    in_.read(buf, sizeof buf);
    const auto n = static_cast<std::size_t>(in_.gcount());
    if (in_.bad())
      throw std::runtime_error(printable(path_) + ": read error after " + std::to_string(size_) +
                               " bytes (" + std::strerror(errno) + ")");
    if (n == 0 || in_.eof()) eof_ = true;
    if (size_ + n > kMaxPipeProgramBytes)
      throw std::runtime_error(
          printable(path_) + ": a pipe of more than " + std::to_string(kMaxPipeProgramBytes) +
          " bytes, the most a program read from a pipe may hold (write it to a file)");
    if (n && (std::fseek(f_, 0, SEEK_END) != 0 || std::fwrite(buf, 1, n, f_) != n ||
              std::fflush(f_) != 0))
      throw std::runtime_error(printable(path_) + ": cannot copy the pipe to a temporary file (" +
                               std::strerror(errno) + ") after " + std::to_string(size_) +
                               " bytes");
    size_ += n;
  }

  std::string path_;
  std::ifstream in_;
  std::FILE* f_ = nullptr;
  std::mutex mu_;
  std::uint64_t size_ = 0;
  bool eof_ = false;
};

// Reads a PipeCopy from its start, with its own offset.
class CopyBuf : public std::streambuf {
 public:
  explicit CopyBuf(std::shared_ptr<PipeCopy> c) : c_(std::move(c)) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const std::size_t n = c_->read_at(next_, buf_, sizeof buf_);
    if (n == 0) return traits_type::eof();
    next_ += n;
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(*gptr());
  }
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    const auto cur = static_cast<off_type>(next_) - (egptr() - gptr());
    if (dir == std::ios_base::end) return pos_type(off_type(-1));  // the end is not known
    const off_type to = (dir == std::ios_base::beg ? 0 : cur) + off;
    if (to < 0) return pos_type(off_type(-1));
    next_ = static_cast<std::uint64_t>(to);
    setg(buf_, buf_, buf_);
    return pos_type(to);
  }
  pos_type seekpos(pos_type p, std::ios_base::openmode m) override {
    return seekoff(off_type(p), std::ios_base::beg, m);
  }

 private:
  std::shared_ptr<PipeCopy> c_;
  std::uint64_t next_ = 0;
  char buf_[65536];
};

// A stream on the copy. A failure of the pipe or the copy is thrown as it
// is (badbit is an exception), so its message reaches the user.
class CopyStream : public std::istream {
 public:
  explicit CopyStream(std::shared_ptr<PipeCopy> c) : std::istream(nullptr), buf_(std::move(c)) {
    rdbuf(&buf_);
    exceptions(std::ios::badbit);
  }

 private:
  CopyBuf buf_;
};

// The copy of the pipe at `path` (one per path and process).
std::shared_ptr<PipeCopy> pipe_copy(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<PipeCopy>> copies;
  const std::lock_guard<std::mutex> lock(mu);
  if (auto it = copies.find(path); it != copies.end()) return it->second;
  auto c = std::make_shared<PipeCopy>(path);
  if (c->empty())
    throw std::runtime_error(printable(path) +
                             ": is an empty pipe: nothing was written to it (did the command "
                             "writing it fail?)");
  copies[path] = c;
  return c;
}

bool utf8_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the valid UTF-8 sequence at s[i] (1..4), or 0.
std::size_t utf8_len(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n;
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if (!utf8_continuation(static_cast<unsigned char>(s[i + k]))) return 0;
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  }
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

std::string input_file_problem(const std::string& path) {
  struct stat st {};
  if (path.empty()) return "cannot open: no such file";
  if (::stat(path.c_str(), &st) != 0) return open_problem(path, errno);
  if (S_ISDIR(st.st_mode)) return "is a directory, not a file";
  if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
    return "is not a regular file";
  return "";
}

bool is_pipe_input(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

std::string read_input_file(const std::string& path, std::size_t max_bytes, const char* what,
                            std::string& out) {
  if (std::string why = input_file_problem(path); !why.empty()) return why;
  std::ifstream in(path, std::ios::binary);
  if (!in) return open_problem(path, errno);
  out.clear();
  char buf[65536];
  try {
    while (in) {
      in.read(buf, sizeof buf);
      const auto n = static_cast<std::size_t>(in.gcount());
      if (out.size() + n > max_bytes)
        return "is larger than " + std::to_string(max_bytes) + " bytes, the most " + what +
               " may hold";
      out.append(buf, n);
    }
  } catch (const std::bad_alloc&) {
    const std::size_t got = out.size();
    std::string().swap(out);
    return "out of memory after reading " + std::to_string(got) +
           " bytes (the machine, or a memory limit such as ulimit -v, allows no more)";
  }
  if (in.bad()) return std::string("read error: ") + std::strerror(errno);
  return "";
}

std::unique_ptr<std::istream> open_program_input(const std::string& path) {
  if (const std::string why = input_file_problem(path); !why.empty())
    throw std::runtime_error(printable(path) + ": " + why);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw std::runtime_error(printable(path) + ": " + open_problem(path, errno));
  // A program of any length streams, so an endless device would never end:
  // files and pipes only.
  if (S_ISCHR(st.st_mode))
    throw std::runtime_error(printable(path) +
                             ": is a device, not a program file (a file or a pipe)");
  if (S_ISFIFO(st.st_mode)) return std::make_unique<CopyStream>(pipe_copy(path));
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) throw std::runtime_error(printable(path) + ": " + open_problem(path, errno));
  return in;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  static const char* kHex = "0123456789abcdef";
  auto hex_byte = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  };
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::uint32_t cp = 0;
    const std::size_t n = utf8_len(s, i, cp);
    if (n == 0) {
      hex_byte(c);
      ++i;
    } else if (cp == '\n') {
      out += "\\n";
      ++i;
    } else if (cp == '\t') {
      out += "\\t";
      ++i;
    } else if (cp == '\r') {
      out += "\\r";
      ++i;
    } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) {
      for (std::size_t k = 0; k < n; ++k) hex_byte(static_cast<unsigned char>(s[i + k]));
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string excerpt(std::string_view s, std::size_t max) {
  if (s.size() <= max) return printable(s);
  // Cut at UTF-8 sequence boundaries.
  std::size_t head = max / 2;
  while (head > 0 && utf8_continuation(static_cast<unsigned char>(s[head]))) --head;
  std::size_t tail = s.size() - max / 8;
  while (tail < s.size() && utf8_continuation(static_cast<unsigned char>(s[tail]))) ++tail;
  return printable(s.substr(0, head)) + "...(" + std::to_string(s.size()) + " bytes)..." +
         printable(s.substr(tail));
}

bool has_control_chars(std::string_view s) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

}  // namespace tpb::isa
