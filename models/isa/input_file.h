// Input files: checked before they are opened, so a directory, a missing
// file, a symlink loop or an over-long path is an error naming the path and
// what is wrong instead of a stream failure deep inside a reader
// ("basic_filebuf::underflow"); and program inputs that are not regular
// files (a pipe, a FIFO, `<(...)`, /dev/stdin on a pipe) read exactly once.
// Pure C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>

namespace tpb::isa {

// "" when `path` names a readable regular file (or a character device such
// as /dev/stdin, or a pipe), else what is wrong: "is a directory, not a
// file", "cannot open: no such file", "cannot open: too many levels of
// symbolic links (a symlink loop?)", "cannot open: file name too long",
// "cannot open: permission denied", ...
std::string input_file_problem(const std::string& path);

// Reads the whole of `path` into `out`, at most `max_bytes`: an endless
// device or pipe (/dev/zero) is an error, not a hang that eats memory.
// Returns "" or what is wrong ("is larger than 67108864 bytes, the most a
// program may hold", "cannot open: ...").
std::string read_input_file(const std::string& path, std::size_t max_bytes, const char* what,
                            std::string& out);

// A program input, opened at its start, as often as a command needs it (the
// text-or-binary probe rewinds; `tpbsim check` reads twice). A regular file
// is opened by its path each time. A pipe, FIFO or process substitution is
// read exactly once: what is read of it goes to an anonymous temporary file
// that every open of the same path in this process reads, pulling more from
// the pipe only when a reader gets past what has been read (a reader that
// stops at a syntax error reads no further). At most kMaxPipeProgramBytes
// are taken from a pipe. An empty pipe (nothing was written to it) is
// refused, and so is a character device (an endless /dev/zero, a terminal).
// Throws std::runtime_error "PATH: PROBLEM" (the path printable()), also
// from the stream's reads.
std::unique_ptr<std::istream> open_program_input(const std::string& path);

// The most a program read from a pipe may hold (1 GiB, on disk): an endless
// pipe (`cat /dev/zero | tpbsim run /dev/stdin`) is an error, not a full disk.
inline constexpr std::uint64_t kMaxPipeProgramBytes = std::uint64_t{1} << 30;

// Whether `path` is a pipe, FIFO or process substitution (read once).
bool is_pipe_input(const std::string& path);

// `s` safe to print in a diagnostic on a terminal: control characters
// (C0, DEL, C1) and bytes that are not UTF-8 written as \n, \t, \r, \e, \xHH;
// everything else as it is. A name made only of printable characters comes
// back unchanged.
std::string printable(std::string_view s);

// A bounded excerpt of a token for a message: printable(s) when it is at
// most `max` bytes, else its first bytes, "...", its last bytes and its
// length ("AAAA...AAAA (1048576 bytes)").
std::string excerpt(std::string_view s, std::size_t max = 64);

// Whether `s` holds a C0 control character or DEL (what no path or name
// written into a script or a diagnostic may carry raw).
bool has_control_chars(std::string_view s);

}  // namespace tpb::isa
