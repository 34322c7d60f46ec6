#include "models/trace/gtkw_writer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "models/isa/address_map.h"

namespace tpb::trace {

namespace {

// GTKWave trace flags (the `@` lines of a save file, hexadecimal).
constexpr unsigned kHex = 0x2, kDec = 0x4, kBin = 0x8, kRjustify = 0x20, kBlank = 0x200,
                   kClosed = 0x400000, kGroupBegin = 0x800000, kGroupEnd = 0x1000000;

// The engine scopes, in the order the groups appear: the engine names.
const auto& kEngineScopes = isa::kEngineNames;

struct Group {
  std::string name;
  bool closed = false;
  std::vector<std::size_t> members;  // indices into the signal list
};

// What a save file names a signal: the hierarchy joined by '.', and
// [msb:0] for a vector, as GTKWave names a VCD $var without a range.
std::string trace_name(const Signal& s, const std::string& top) {
  std::string scope = s.scope;
  if (!top.empty() && scope != top && scope.rfind(top + ".", 0) != 0)
    scope = scope.empty() ? top : top + "." + scope;
  std::string name = (scope.empty() ? "" : scope + ".") + s.name;
  for (char& c : name)
    if (static_cast<unsigned char>(c) <= ' ' || c == 127) c = '_';  // as write_vcd does
  if (s.width > 1) name += "[" + std::to_string(s.width - 1) + ":0]";
  return name;
}

// The scope below `top`: "tpb.sbuf.q0" -> "sbuf.q0".
std::string sub_scope(const std::string& scope, const std::string& top) {
  if (!top.empty() && scope.rfind(top + ".", 0) == 0) return scope.substr(top.size() + 1);
  if (scope == top) return "";
  return scope;
}

unsigned flags_of(const Signal& s) {
  if (s.width == 1) return kBin | kRjustify;
  if (s.name == "opcode" || s.name == "pc") return kHex | kRjustify;
  return kDec | kRjustify;
}

// Within an engine group: the signals a reader looks at first, then the rest
// in declaration order.
int engine_rank(const std::string& name) {
  static const char* const kOrder[] = {"busy", "opcode", "inst_index",
                                       "pc",   "marker", "marker_hint"};
  for (int i = 0; i < 6; ++i)
    if (name == kOrder[i]) return i;
  return 6;
}

}  // namespace

std::string gtkw_path_for(const std::string& vcd_path) {
  const std::filesystem::path p(vcd_path);
  if (p.extension() == ".vcd") return std::filesystem::path(p).replace_extension(".gtkw").string();
  return vcd_path + ".gtkw";
}

namespace {

// The signals in groups: one per engine (its signals in engine_rank order),
// the memories, the semaphores (closed), the rest.
std::vector<Group> group_signals(const std::vector<Signal>& signals, const std::string& top) {
  std::vector<Group> groups;
  for (const char* e : kEngineScopes) groups.push_back({e, false, {}});
  const std::size_t kMem = groups.size();
  groups.push_back({"memories", false, {}});
  groups.push_back({"semaphores", true, {}});
  groups.push_back({"other", false, {}});
  for (std::size_t i = 0; i < signals.size(); ++i) {
    if (signals[i].hidden) continue;  // cut by --trace-engines: not in the VCD
    const std::string sub = sub_scope(signals[i].scope, top);
    const std::string head = sub.substr(0, sub.find('.'));
    std::size_t g = groups.size() - 1;  // other
    for (std::size_t e = 0; e < kMem; ++e)
      if (sub == kEngineScopes[e]) g = e;
    if (head == "sem") g = kMem + 1;
    if (head == "sbuf" || head == "psum") g = kMem;
    groups[g].members.push_back(i);
  }
  for (std::size_t e = 0; e < kMem; ++e)
    std::stable_sort(groups[e].members.begin(), groups[e].members.end(),
                     [&](std::size_t a, std::size_t b) {
                       return engine_rank(signals[a].name) < engine_rank(signals[b].name);
                     });
  return groups;
}

// The scopes opened in the signal search tree: the top's and every signal's.
std::vector<std::string> opened_scopes(const std::vector<Signal>& signals, const std::string& top) {
  std::vector<std::string> opened;
  if (!top.empty()) opened.push_back(top + ".");
  for (const Signal& s : signals) {
    if (s.hidden) continue;
    std::string sc = s.scope;
    if (!top.empty() && sc != top && sc.rfind(top + ".", 0) != 0) sc = top + "." + sc;
    if (std::find(opened.begin(), opened.end(), sc + ".") == opened.end())
      opened.push_back(sc + ".");
  }
  return opened;
}

}  // namespace

void write_gtkw(const std::vector<Signal>& signals, const std::string& vcd_path,
                const std::string& path, Picos end, const std::string& top) {
  const std::vector<Group> groups = group_signals(signals, top);
  std::error_code ec;
  const std::string vcd_abs = std::filesystem::absolute(vcd_path, ec).string();
  // The wave pane shows 2^-zoom time units per pixel: fit the run (at least
  // 1 ns) in about 1000 pixels.
  constexpr double kWavePixels = 1000.0;
  const double span = std::max<double>(static_cast<double>(end), 1000.0);
  const double zoom = -std::ceil(std::log2(span / kWavePixels));

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw std::runtime_error("GTKWave save file '" + path +
                             "': cannot open for writing: " + std::strerror(errno));
  out << "[*]\n[*] GTKWave save file written by tpbsim run --vcd\n[*]\n";
  // The save file is line-based and its [dumpfile] quoted without escapes:
  // a VCD name holding a control character or a quote cannot be written
  // there (a newline would inject lines); GTKWave is then given the VCD on
  // its command line (gtkwave FILE.vcd FILE.gtkw).
  bool plain = true;
  for (char c : vcd_abs)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '"') plain = false;
  if (plain)
    out << "[dumpfile] \"" << vcd_abs << "\"\n";
  else
    out << "[*] no [dumpfile]: the VCD's name holds a control character or a quote\n";
  out << "[timestart] 0\n";
  out << "[size] 1400 800\n[pos] -1 -1\n";
  out << "*" << zoom << " -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 "
      << "-1 -1 -1 -1\n";
  for (const std::string& o : opened_scopes(signals, top)) out << "[treeopen] " << o << "\n";
  out << "[sst_width] 260\n[signals_width] 240\n[sst_expanded] 1\n[sst_vpaned_height] 240\n";
  for (const Group& g : groups) {
    if (g.members.empty()) continue;
    out << "@" << std::hex << (kGroupBegin | kBlank | (g.closed ? kClosed : 0u)) << std::dec
        << "\n-" << g.name << "\n";
    unsigned last = 0;
    for (std::size_t i : g.members) {
      const unsigned f = flags_of(signals[i]);
      if (f != last) out << "@" << std::hex << f << std::dec << "\n";
      last = f;
      out << trace_name(signals[i], top) << "\n";
    }
    out << "@" << std::hex << (kGroupEnd | kBlank | (g.closed ? kClosed : 0u)) << std::dec << "\n-"
        << g.name << "\n";
  }
  out << "[pattern_trace] 1\n[pattern_trace] 0\n";
  out.flush();
  if (!out)
    throw std::runtime_error("GTKWave save file '" + path +
                             "': write failed: " + std::strerror(errno));
}

}  // namespace tpb::trace
