#include "models/isa/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

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

// A pipe's bytes, copied once to an anonymous temporary file.
struct PipeCopy {
  std::FILE* f = nullptr;
  std::uint64_t size = 0;
  ~PipeCopy() {
    if (f) std::fclose(f);
  }
};

// Reads a PipeCopy from its start (pread: every reader has its own offset).
class CopyBuf : public std::streambuf {
 public:
  explicit CopyBuf(std::shared_ptr<PipeCopy> c) : c_(std::move(c)) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const ssize_t n = ::pread(::fileno(c_->f), buf_, sizeof buf_, static_cast<off_t>(next_));
    if (n < 0)
      throw std::runtime_error(std::string("cannot read the temporary copy of a pipe: ") +
                               std::strerror(errno));
    if (n == 0) return traits_type::eof();
    next_ += static_cast<std::uint64_t>(n);
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(*gptr());
  }
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    const auto cur = static_cast<off_type>(next_) - (egptr() - gptr());
    const off_type base = dir == std::ios_base::beg   ? 0
                          : dir == std::ios_base::cur ? cur
                                                      : static_cast<off_type>(c_->size);
    const off_type to = base + off;
    if (to < 0 || to > static_cast<off_type>(c_->size)) return pos_type(off_type(-1));
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

class CopyStream : public std::istream {
 public:
  explicit CopyStream(std::shared_ptr<PipeCopy> c) : std::istream(nullptr), buf_(std::move(c)) {
    rdbuf(&buf_);
  }

 private:
  CopyBuf buf_;
};

// Copies the pipe at `path` to a temporary file (once per path and process).
std::shared_ptr<PipeCopy> pipe_copy(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<PipeCopy>> copies;
  const std::lock_guard<std::mutex> lock(mu);
  if (auto it = copies.find(path); it != copies.end()) return it->second;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(printable(path) + ": " + open_problem(path, errno));
  auto c = std::make_shared<PipeCopy>();
  c->f = std::tmpfile();
  if (!c->f)
    throw std::runtime_error(printable(path) +
                             ": cannot create a temporary file to hold the pipe (" +
                             std::strerror(errno) + ")");
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n && std::fwrite(buf.data(), 1, n, c->f) != n)
      throw std::runtime_error(printable(path) + ": cannot copy the pipe to a temporary file (" +
                               std::strerror(errno) + ") after " + std::to_string(c->size) +
                               " bytes");
    c->size += n;
  }
  if (in.bad())
    throw std::runtime_error(printable(path) + ": read error (" + std::strerror(errno) + ")");
  if (std::fflush(c->f) != 0)
    throw std::runtime_error(printable(path) + ": cannot copy the pipe to a temporary file (" +
                             std::strerror(errno) + ")");
  if (c->size == 0)
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

}  // namespace tpb::isa
