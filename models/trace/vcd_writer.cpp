#include "models/trace/vcd_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace tpb::trace {

namespace {

// VCD identifier codes: printable ASCII '!'..'~' as base-94 digits.
std::string vcd_id(std::size_t index) {
  std::string id;
  do {
    id.push_back(static_cast<char>('!' + index % 94));
    index /= 94;
  } while (index != 0);
  return id;
}

// VCD references are whitespace-delimited tokens.
std::string vcd_name(const std::string& s) {
  std::string out = s.empty() ? std::string("_") : s;
  for (char& c : out)
    if (static_cast<unsigned char>(c) <= ' ' || c == 127) c = '_';
  return out;
}

std::vector<std::string> split_scope(const std::string& scope) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= scope.size()) {
    std::size_t dot = scope.find('.', start);
    if (dot == std::string::npos) dot = scope.size();
    if (dot > start) parts.push_back(scope.substr(start, dot - start));
    start = dot + 1;
  }
  return parts;
}

struct ScopeNode {
  std::string name;
  std::vector<std::unique_ptr<ScopeNode>> children;  // in order of first appearance
  std::vector<std::size_t> signals;

  ScopeNode* child(const std::string& n) {
    for (auto& c : children)
      if (c->name == n) return c.get();
    children.push_back(std::make_unique<ScopeNode>());
    children.back()->name = n;
    return children.back().get();
  }
};

// The eight binary digits of every byte, most significant first, and eight
// bytes of slack: a copy of eight from inside the last row stays inside.
struct ByteDigits {
  char d[256 * 8 + 8] = {};
  ByteDigits() {
    for (unsigned v = 0; v < 256; ++v)
      for (unsigned b = 0; b < 8; ++b) d[8 * v + b] = static_cast<char>('0' + ((v >> (7 - b)) & 1));
  }
};
const ByteDigits kByteDigits;

// The binary digits of v from its highest set bit ("0" for 0: leading zeros
// are implied, IEEE 1364 §18.2.1), a byte at a time in moves of eight;
// returns their count. Writes up to 8 bytes at `out` even for fewer digits:
// `out` has room for max(digits, 8).
std::size_t binary_digits(char* out, std::uint64_t v) {
  if (v == 0) {
    out[0] = '0';
    return 1;
  }
  const unsigned bits = 64 - static_cast<unsigned>(__builtin_clzll(v));
  const unsigned bytes = (bits + 7) / 8;
  const unsigned lead = bits - 8 * (bytes - 1);  // digits of the top byte: 1..8
  // The top byte's last `lead` digits (and what follows them in the table,
  // overwritten by the next byte or left past the end).
  std::memcpy(out, kByteDigits.d + 8 * ((v >> (8 * (bytes - 1))) & 0xff) + (8 - lead), 8);
  char* p = out + lead;
  for (unsigned b = bytes - 1; b-- > 0; p += 8)
    std::memcpy(p, kByteDigits.d + 8 * ((v >> (8 * b)) & 0xff), 8);
  return bits;
}

// A value line of a signal whose identifier is longer than 8 characters
// (past 94^8 signals: never in practice).
void append_value_long(TextBuffer& out, unsigned width, std::uint64_t v, const std::string& id) {
  if (width == 1) {
    out.push_back(v ? '1' : '0');
  } else {
    char digits[64];
    out.push_back('b');
    out.append(digits, binary_digits(digits, v));
    out.push_back(' ');
  }
  out += id;
  out.push_back('\n');
}

// A value line, built in place at the buffer's end: a trace at the default
// level writes several an instruction. `code`: the identifier in 8 bytes,
// `code_size` of them used (0: longer than 8, in `id`).
void append_value(TextBuffer& out, unsigned width, std::uint64_t v, const char (&code)[8],
                  std::size_t code_size, const std::string& id) {
  if (code_size == 0) return append_value_long(out, width, v, id);
  char* const tmp = out.tail(96);  // 'b', 64 digits, ' ', the code's 8 bytes, '\n', slack
  std::size_t n = 0;
  if (width == 1) {
    tmp[n++] = v ? '1' : '0';
  } else {
    tmp[n++] = 'b';
    n += binary_digits(tmp + n, v);
    tmp[n++] = ' ';
  }
  std::memcpy(tmp + n, code, 8);
  n += code_size;
  tmp[n++] = '\n';
  out.commit(n);
}

// "#<t>\n", a time stamp line.
void append_time(TextBuffer& out, std::uint64_t t) {
  char* const tmp = out.tail(24);
  tmp[0] = '#';
  char* end = write_decimal(tmp + 1, t);
  *end++ = '\n';
  out.commit(static_cast<std::size_t>(end - tmp));
}

void append_scope(TextBuffer& out, const ScopeNode& node, const std::vector<Signal>& sigs,
                  const std::vector<std::string>& ids) {
  out += "$scope module " + vcd_name(node.name) + " $end\n";
  for (std::size_t s : node.signals)
    out += "$var wire " + std::to_string(sigs[s].width) + " " + ids[s] + " " +
           vcd_name(sigs[s].name) + " $end\n";
  for (const auto& c : node.children) append_scope(out, *c, sigs, ids);
  out += "$upscope $end\n";
}

}  // namespace

VcdWriter::VcdWriter(std::string path, std::string top, TraceWindow window)
    : top_(std::move(top)), window_(window), out_(std::move(path), "VCD file"), buf_(out_.buf()) {}

void VcdWriter::start(const std::vector<Signal>& sigs) {
  sigs_ = sigs;
  ids_.assign(sigs_.size(), std::string());
  std::size_t visible = 0;
  for (std::size_t i = 0; i < sigs_.size(); ++i)
    if (!sigs_[i].hidden) ids_[i] = vcd_id(visible++);
  codes_.assign(sigs_.size(), IdCode{});
  for (std::size_t i = 0; i < sigs_.size(); ++i)
    if (ids_[i].size() <= sizeof codes_[i].text) {
      std::memcpy(codes_[i].text, ids_[i].data(), ids_[i].size());
      codes_[i].size = static_cast<std::uint8_t>(ids_[i].size());
    }

  ScopeNode root;  // a nameless node holding `top` (or, with top == "", the scopes)
  ScopeNode* top_node = top_.empty() ? &root : root.child(top_);
  for (std::size_t i = 0; i < sigs_.size(); ++i) {
    if (sigs_[i].hidden) continue;
    std::vector<std::string> parts = split_scope(sigs_[i].scope);
    std::size_t first = (!top_.empty() && !parts.empty() && parts[0] == top_) ? 1 : 0;
    ScopeNode* node = top_node;
    for (std::size_t p = first; p < parts.size(); ++p) node = node->child(parts[p]);
    node->signals.push_back(i);
  }
  buf_ += "$version tpbsim $end\n$timescale 1 ps $end\n";
  for (std::size_t s : root.signals)  // only with top == "" and an empty scope
    buf_ += "$var wire " + std::to_string(sigs_[s].width) + " " + ids_[s] + " " +
            vcd_name(sigs_[s].name) + " $end\n";
  for (const auto& c : root.children) append_scope(buf_, *c, sigs_, ids_);
  buf_ += "$enddefinitions $end\n";
  current_.resize(sigs_.size());
  for (std::size_t i = 0; i < sigs_.size(); ++i) current_[i] = sigs_[i].initial;
  pending_.assign(sigs_.size(), 0);
  touched_.assign(sigs_.size(), 0);
  hidden_.resize(sigs_.size());
  for (std::size_t i = 0; i < sigs_.size(); ++i) hidden_[i] = sigs_[i].hidden ? 1 : 0;
}

void VcdWriter::dumpvars(Picos t) {
  buf_ += "#" + std::to_string(t) + "\n$dumpvars\n";
  for (std::size_t i = 0; i < sigs_.size(); ++i)
    if (!sigs_[i].hidden) write_value(i);
  buf_ += "$end\n";
  dumped_ = true;
  last_written_ = t;
}

void VcdWriter::write_value(std::size_t s) {
  append_value(buf_, sigs_[s].width, current_[s], codes_[s].text, codes_[s].size, ids_[s]);
}

// Per time: the last value of each touched signal; emit those that differ.
void VcdWriter::emit_group() {
  if (touched_list_.empty()) return;
  // In signal order: a few an instruction, sorted by insertion in place
  // (std::sort's general path is calls and branches for three elements).
  std::uint32_t* const l = touched_list_.data();
  const std::size_t n = touched_list_.size();
  if (n > 16) {
    std::sort(l, l + n);
  } else {
    for (std::size_t i = 1; i < n; ++i) {
      const std::uint32_t x = l[i];
      std::size_t j = i;
      for (; j > 0 && l[j - 1] > x; --j) l[j] = l[j - 1];
      l[j] = x;
    }
  }
  bool stamped = false;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t s = l[i];
    touched_[s] = 0;
    if (pending_[s] == current_[s]) continue;
    current_[s] = pending_[s];
    if (!stamped) {
      append_time(buf_, group_t_);
      stamped = true;
      last_written_ = group_t_;
    }
    write_value(s);
    ++written_;
  }
  touched_list_.clear();
  out_.maybe_flush();
}

void VcdWriter::change(const ValueChange& c) { take(c); }

void VcdWriter::changes(const ValueChange* c, std::size_t n) {
  for (const ValueChange* const end = c + n; c != end; ++c) take(*c);
}

void VcdWriter::take(const ValueChange& c) {
  if (c.t > window_.to || c.signal >= sigs_.size() || hidden_[c.signal]) return;
  if (!dumped_) {
    if (c.t <= window_.from) {  // before (or at) the window's start: its initial values
      current_[c.signal] = c.value;
      return;
    }
    dumpvars(window_.from);
  }
  if (c.t != group_t_) {
    emit_group();
    group_t_ = c.t;
  }
  if (!touched_[c.signal]) {
    touched_[c.signal] = 1;
    touched_list_.push_back(c.signal);
  }
  pending_[c.signal] = c.value;
}

void VcdWriter::finish(Picos end) {
  emit_group();
  const Picos stop = std::min(end, window_.to);
  if (!dumped_) dumpvars(std::min(window_.from, stop));
  if (stop > last_written_) buf_ += "#" + std::to_string(stop) + "\n";
  out_.close();
}

void write_vcd(const Recorder& rec, const std::string& path, const std::string& top) {
  VcdWriter w(path, top);
  w.start(rec.signals());
  for (const ValueChange& c : rec.sorted_changes()) w.change(c);
  w.finish(rec.last_time());
  if (!w.error().empty()) throw std::runtime_error("VCD file " + w.error());
}

}  // namespace tpb::trace
