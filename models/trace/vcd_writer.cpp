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

class Output {
 public:
  explicit Output(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) fail("cannot open for writing");
    buf_.reserve(kFlushAt + 256);
  }
  ~Output() {
    if (f_) std::fclose(f_);
  }
  std::string& buf() { return buf_; }
  void maybe_flush() {
    if (buf_.size() >= kFlushAt) flush();
  }
  void close() {
    flush();
    std::FILE* f = f_;
    f_ = nullptr;
    if (std::fclose(f) != 0) fail("cannot finish writing");
  }

 private:
  static constexpr std::size_t kFlushAt = 1 << 20;
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
      fail("write failed");
    buf_.clear();
  }
  [[noreturn]] void fail(const char* what) {
    throw std::runtime_error("VCD file '" + path_ + "': " + what + ": " + std::strerror(errno));
  }
  std::string path_;
  std::FILE* f_;
  std::string buf_;
};

void append_value(std::string& out, unsigned width, std::uint64_t v, const std::string& id) {
  if (width == 1) {
    out.push_back(v ? '1' : '0');
  } else {
    out.push_back('b');
    int top = 63;
    while (top > 0 && !((v >> top) & 1)) --top;  // leading zeros are implied (§18.2.1)
    for (int b = top; b >= 0; --b) out.push_back(((v >> b) & 1) ? '1' : '0');
    out.push_back(' ');
  }
  out += id;
  out.push_back('\n');
}

void append_scope(std::string& out, const ScopeNode& node, const std::vector<Signal>& sigs,
                  const std::vector<std::string>& ids) {
  out += "$scope module " + vcd_name(node.name) + " $end\n";
  for (std::size_t s : node.signals)
    out += "$var wire " + std::to_string(sigs[s].width) + " " + ids[s] + " " +
           vcd_name(sigs[s].name) + " $end\n";
  for (const auto& c : node.children) append_scope(out, *c, sigs, ids);
  out += "$upscope $end\n";
}

}  // namespace

void write_vcd(const Recorder& rec, const std::string& path, const std::string& top) {
  const std::vector<Signal>& sigs = rec.signals();
  std::vector<std::string> ids(sigs.size());
  for (std::size_t i = 0; i < sigs.size(); ++i) ids[i] = vcd_id(i);

  ScopeNode root;  // a nameless node holding `top` (or, with top == "", the scopes)
  ScopeNode* top_node = top.empty() ? &root : root.child(top);
  for (std::size_t i = 0; i < sigs.size(); ++i) {
    std::vector<std::string> parts = split_scope(sigs[i].scope);
    std::size_t first = (!top.empty() && !parts.empty() && parts[0] == top) ? 1 : 0;
    ScopeNode* node = top_node;
    for (std::size_t p = first; p < parts.size(); ++p) node = node->child(parts[p]);
    node->signals.push_back(i);
  }

  Output out(path);
  std::string& b = out.buf();
  b += "$version tpbsim $end\n$timescale 1 ps $end\n";
  for (std::size_t s : root.signals)  // only with top == "" and an empty scope
    b += "$var wire " + std::to_string(sigs[s].width) + " " + ids[s] + " " +
         vcd_name(sigs[s].name) + " $end\n";
  for (const auto& c : root.children) append_scope(b, *c, sigs, ids);
  b += "$enddefinitions $end\n";

  const std::vector<ValueChange> changes = rec.sorted_changes();
  std::vector<std::uint64_t> current(sigs.size());
  for (std::size_t i = 0; i < sigs.size(); ++i) current[i] = sigs[i].initial;

  // Changes at t = 0 become the $dumpvars values (sorted by seq: the last wins).
  std::size_t k = 0;
  for (; k < changes.size() && changes[k].t == 0; ++k)
    current[changes[k].signal] = changes[k].value;
  b += "#0\n$dumpvars\n";
  for (std::size_t i = 0; i < sigs.size(); ++i) append_value(b, sigs[i].width, current[i], ids[i]);
  b += "$end\n";

  // Per later time: the last value of each touched signal; emit those that differ.
  std::vector<std::uint64_t> pending(sigs.size());
  std::vector<char> touched(sigs.size(), 0);
  std::vector<std::uint32_t> touched_list;
  Picos last_written = 0;
  while (k < changes.size()) {
    const Picos t = changes[k].t;
    touched_list.clear();
    for (; k < changes.size() && changes[k].t == t; ++k) {
      const ValueChange& c = changes[k];
      if (!touched[c.signal]) {
        touched[c.signal] = 1;
        touched_list.push_back(c.signal);
      }
      pending[c.signal] = c.value;
    }
    std::sort(touched_list.begin(), touched_list.end());
    bool stamped = false;
    for (std::uint32_t s : touched_list) {
      touched[s] = 0;
      if (pending[s] == current[s]) continue;
      current[s] = pending[s];
      if (!stamped) {
        b += "#" + std::to_string(t) + "\n";
        stamped = true;
        last_written = t;
      }
      append_value(b, sigs[s].width, current[s], ids[s]);
    }
    out.maybe_flush();
  }
  if (rec.last_time() > last_written) b += "#" + std::to_string(rec.last_time()) + "\n";
  out.close();
}

}  // namespace tpb::trace
