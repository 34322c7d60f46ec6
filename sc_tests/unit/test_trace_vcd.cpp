// VCD writer: checked by GTKWave (vcd2fst, and fst2vcd back) and by a small
// independent VCD reader written here from IEEE 1364 §18.
#include <gtest/gtest.h>

#include <bitset>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

#include "models/trace/vcd_writer.h"
#include "sc_tests/unit/test_trace_util.h"

namespace tpb::trace {
namespace {

using testutil::run_cmd;

using Timeline = std::vector<std::pair<std::uint64_t, std::uint64_t>>;  // (time, value)

struct Vcd {
  std::string timescale;
  std::map<std::string, std::pair<std::string, unsigned>> vars;  // id -> (full name, width)
  std::vector<std::string> var_order;                            // full names as declared
  std::map<std::string, Timeline> timeline;                      // full name -> changes
  std::vector<std::uint64_t> times;
  std::string error;

  // Drops entries that repeat the previous value (tools may emit them).
  Timeline normalized(const std::string& name) const {
    Timeline out;
    auto it = timeline.find(name);
    if (it == timeline.end()) return out;
    for (const auto& tv : it->second)
      if (out.empty() || out.back().second != tv.second) out.push_back(tv);
    return out;
  }
};

Vcd parse_vcd(const std::string& text) {
  Vcd v;
  std::istringstream in(text);
  std::vector<std::string> tok;
  for (std::string t; in >> t;) tok.push_back(t);
  std::vector<std::string> scopes;
  std::size_t i = 0;
  auto until_end = [&](std::vector<std::string>* body) {
    for (++i; i < tok.size() && tok[i] != "$end"; ++i)
      if (body) body->push_back(tok[i]);
    ++i;
  };
  // Declarations.
  while (i < tok.size() && tok[i] != "$enddefinitions") {
    std::vector<std::string> body;
    const std::string kw = tok[i];
    until_end(&body);
    if (kw == "$timescale") {
      for (const auto& b : body) v.timescale += (v.timescale.empty() ? "" : " ") + b;
    } else if (kw == "$scope") {
      if (body.size() != 2)
        v.error = "bad $scope";
      else
        scopes.push_back(body[1]);
    } else if (kw == "$upscope") {
      if (scopes.empty())
        v.error = "unbalanced $upscope";
      else
        scopes.pop_back();
    } else if (kw == "$var") {
      if (body.size() < 4) {
        v.error = "bad $var";
        continue;
      }
      std::string full;
      for (const auto& s : scopes) full += s + ".";
      full += body[3];
      v.vars[body[2]] = {full, static_cast<unsigned>(std::stoul(body[1]))};
      v.var_order.push_back(full);
    }
  }
  if (!scopes.empty()) v.error = "unclosed $scope";
  if (i >= tok.size()) {
    v.error = "no $enddefinitions";
    return v;
  }
  until_end(nullptr);
  // Value changes.
  std::uint64_t now = 0;
  auto record = [&](const std::string& id, std::uint64_t value) {
    auto it = v.vars.find(id);
    if (it == v.vars.end()) {
      v.error = "change of undeclared id " + id;
      return;
    }
    v.timeline[it->second.first].push_back({now, value});
  };
  for (; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    if (t[0] == '#') {
      now = std::stoull(t.substr(1));
      v.times.push_back(now);
    } else if (t == "$dumpvars" || t == "$end" || t == "$dumpall" || t == "$dumpon" ||
               t == "$dumpoff") {
    } else if (t == "$comment") {
      until_end(nullptr);
      --i;
    } else if (t[0] == 'b' || t[0] == 'B') {
      if (i + 1 >= tok.size()) {
        v.error = "vector value without id";
        break;
      }
      if (t.find_first_not_of("01", 1) != std::string::npos)
        v.error = "non-binary value " + t;
      else
        record(tok[++i], std::stoull(t.substr(1), nullptr, 2));
    } else if (t[0] == '0' || t[0] == '1') {
      record(t.substr(1), static_cast<std::uint64_t>(t[0] - '0'));
    } else {
      v.error = "unexpected token " + t;
    }
  }
  return v;
}

// A recorder exercising nested scopes, widths 1/4/8/64, out-of-order times,
// equal-time changes, changes at t = 0 and changes that change nothing.
Recorder vcd_scenario() {
  Recorder r;
  r.enable_signals(true);
  r.enable_slices(true);
  SignalId busy = r.add_signal("tpb.pool", "busy", 1, 0);
  SignalId state = r.add_signal("tpb.pool", "state", 4, 3);
  SignalId count = r.add_signal("tpb.dve.lane", "count", 64, 0);
  SignalId rd = r.add_signal("sbuf.q0", "rd", 1, 1);
  SignalId en = r.add_signal("", "clk_en", 8, 0xaa);
  r.set(busy, 2000, 1);
  r.set(state, 0, 5);
  r.set(count, 1500, ~0ull);
  r.set(busy, 1000, 1);
  r.set(busy, 1000, 0);  // same time: the last wins, and it equals the value before
  r.set(state, 2000, 9);
  r.set(state, 2000, 12);
  r.set(rd, 3000, 1);  // no change
  r.set(en, 500, 0);
  r.set(busy, 4000, 0);
  TrackId k = r.add_track("tpb core", "pool");
  r.instant(k, 7000, "end");  // the run ends later than the last value change
  return r;
}

// Expected from the scenario above, worked out by hand.
const std::map<std::string, Timeline>& expected_timelines() {
  static const std::map<std::string, Timeline> m = {
      {"tpb.pool.busy", {{0, 0}, {2000, 1}, {4000, 0}}},
      {"tpb.pool.state", {{0, 5}, {2000, 12}}},
      {"tpb.dve.lane.count", {{0, 0}, {1500, ~0ull}}},
      {"tpb.sbuf.q0.rd", {{0, 1}}},
      {"tpb.clk_en", {{0, 0xaa}, {500, 0}}},
  };
  return m;
}

void require_gtkwave() {
  ASSERT_TRUE(testutil::have_tool("vcd2fst") && testutil::have_tool("fst2vcd"))
      << "GTKWave's vcd2fst / fst2vcd not found: run `make` (scripts/install-deps.sh installs "
         "the gtkwave package)";
}

TEST(TraceVcd, HeaderScopesAndVarLines) {
  const std::string dir = testutil::scratch("vcd");
  write_vcd(vcd_scenario(), dir + "/a.vcd");
  const std::string text = testutil::slurp(dir + "/a.vcd");
  const Vcd v = parse_vcd(text);
  ASSERT_EQ(v.error, "");
  EXPECT_EQ(v.timescale, "1 ps");
  const std::vector<std::string> names = {"tpb.pool.busy", "tpb.pool.state", "tpb.dve.lane.count",
                                          "tpb.sbuf.q0.rd", "tpb.clk_en"};
  std::set<std::string> declared(v.var_order.begin(), v.var_order.end());
  EXPECT_EQ(declared, std::set<std::string>(names.begin(), names.end()));
  std::map<std::string, unsigned> width;
  for (const auto& [id, nw] : v.vars) width[nw.first] = nw.second;
  EXPECT_EQ(width["tpb.pool.busy"], 1u);
  EXPECT_EQ(width["tpb.pool.state"], 4u);
  EXPECT_EQ(width["tpb.dve.lane.count"], 64u);
  EXPECT_EQ(width["tpb.clk_en"], 8u);
  // Declaration lines have the agreed form `$var wire WIDTH ID NAME $end`.
  int var_lines = 0;
  for (const auto& l : testutil::lines_of(text)) {
    if (l.rfind("$var", 0) != 0) continue;
    std::istringstream in(l);
    std::vector<std::string> t;
    for (std::string w; in >> w;) t.push_back(w);
    ASSERT_EQ(t.size(), 6u) << l;
    EXPECT_EQ(t[1], "wire") << l;
    EXPECT_EQ(t[2].find_first_not_of("0123456789"), std::string::npos) << l;
    EXPECT_EQ(t[5], "$end") << l;
    EXPECT_EQ(l, t[0] + " " + t[1] + " " + t[2] + " " + t[3] + " " + t[4] + " " + t[5]) << l;
    ++var_lines;
  }
  EXPECT_EQ(var_lines, 5);
  // One top scope: the "tpb." prefix of the recorder scopes is not repeated.
  EXPECT_EQ(text.find("$scope module tpb $end\n$scope module tpb $end"), std::string::npos);
  EXPECT_NE(text.find("$scope module dve $end\n$scope module lane $end\n$var wire 64 "),
            std::string::npos)
      << text;
}

TEST(TraceVcd, ValuesAndTimesMatchTheScenario) {
  const std::string dir = testutil::scratch("vcd");
  write_vcd(vcd_scenario(), dir + "/a.vcd");
  const std::string text = testutil::slurp(dir + "/a.vcd");
  const Vcd v = parse_vcd(text);
  ASSERT_EQ(v.error, "");
  // Only times that change something, strictly increasing; 1000 and 3000 are
  // no-op times; 7000 is the end of the run.
  EXPECT_EQ(v.times, (std::vector<std::uint64_t>{0, 500, 1500, 2000, 4000, 7000}));
  for (const auto& [name, want] : expected_timelines()) {
    // Our writer emits no redundant changes, so the raw timeline is already normal.
    ASSERT_TRUE(v.timeline.count(name)) << name;
    EXPECT_EQ(v.timeline.at(name), want) << name;
  }
  // Literal encodings: 1-bit `1ID`, vectors `bBITS ID`.
  std::string state_id, busy_id;
  for (const auto& [id, nw] : v.vars) {
    if (nw.first == "tpb.pool.state") state_id = id;
    if (nw.first == "tpb.pool.busy") busy_id = id;
  }
  const std::size_t at2000 = text.find("\n#2000\n");
  ASSERT_NE(at2000, std::string::npos);
  const std::string block = text.substr(at2000, text.find("\n#4000\n") + 1 - at2000);
  EXPECT_NE(block.find("\n1" + busy_id + "\n"), std::string::npos) << block;
  EXPECT_NE(block.find("\nb1100 " + state_id + "\n"), std::string::npos) << block;
  EXPECT_NE(text.find("b1111111111111111111111111111111111111111111111111111111111111111 "),
            std::string::npos);
}

// Vector values of every length, 1 to 64 digits, and random ones, on a 64-
// and a 20-bit signal: each line's digits are the value's, from its highest
// set bit (std::bitset's text with the leading zeros cut), and read back the same.
TEST(TraceVcd, VectorValuesOfEveryLengthAreTheirDigitsFromTheTopBit) {
  Recorder r;
  r.enable_signals(true);
  const SignalId wide = r.add_signal("t", "wide", 64);
  const SignalId narrow = r.add_signal("t", "narrow", 20);
  std::vector<std::uint64_t> values;
  for (unsigned top = 0; top < 64; ++top) {
    values.push_back(std::uint64_t{1} << top);                // one digit set
    values.push_back((std::uint64_t{1} << top) | (top & 1));  // and the lowest
    values.push_back(~std::uint64_t{0} >> (63 - top));        // all digits set
  }
  std::mt19937_64 rng(20261201);
  for (int i = 0; i < 200; ++i) values.push_back(rng() >> (i % 64));
  values.push_back(0);
  Picos t = 10;
  for (std::uint64_t v : values) {
    r.set(wide, t, v);
    r.set(narrow, t, v);
    t += 10;
  }
  const std::string dir = testutil::scratch("vcd");
  write_vcd(r, dir + "/digits.vcd");
  const std::string text = testutil::slurp(dir + "/digits.vcd");
  const Vcd v = parse_vcd(text);
  ASSERT_EQ(v.error, "");
  auto digits = [](std::uint64_t value) {
    const std::string all = std::bitset<64>(value).to_string();
    const std::size_t one = all.find('1');
    return one == std::string::npos ? std::string("0") : all.substr(one);
  };
  for (const auto& [id, nw] : v.vars) {
    const bool is_wide = nw.first == "tpb.t.wide";
    const std::uint64_t mask = is_wide ? ~std::uint64_t{0} : (std::uint64_t{1} << 20) - 1;
    Timeline want{{0, 0}};
    for (std::size_t i = 0; i < values.size(); ++i)
      if ((values[i] & mask) != want.back().second) want.push_back({10 + 10 * i, values[i] & mask});
    EXPECT_EQ(v.timeline.at(nw.first), want) << nw.first;
    for (const auto& [when, value] : want)
      EXPECT_NE(text.find("\nb" + digits(value) + " " + id + "\n"), std::string::npos)
          << nw.first << " at " << when;
  }
  EXPECT_EQ(v.vars.size(), 2u);
}

TEST(TraceVcd, GtkwaveConvertsItAndReadsBackTheSameValues) {
  require_gtkwave();
  const std::string dir = testutil::scratch("vcd");
  write_vcd(vcd_scenario(), dir + "/a.vcd");
  const auto conv = run_cmd("vcd2fst " + dir + "/a.vcd " + dir + "/a.fst 2>&1");
  ASSERT_EQ(conv.exit_code, 0) << conv.out;
  ASSERT_GT(testutil::slurp(dir + "/a.fst").size(), 0u);
  const auto back = run_cmd("fst2vcd " + dir + "/a.fst 2>/dev/null");
  ASSERT_EQ(back.exit_code, 0);
  const Vcd v = parse_vcd(back.out);
  ASSERT_EQ(v.error, "") << back.out;
  for (const auto& [name, want] : expected_timelines()) EXPECT_EQ(v.normalized(name), want) << name;
}

TEST(TraceVcd, ManySignalsGetDistinctMultiCharacterIds) {
  require_gtkwave();
  Recorder r;
  r.enable_signals(true);
  constexpr int kN = 300;  // > 94 printable identifier characters
  std::vector<SignalId> ids;
  for (int i = 0; i < kN; ++i)
    ids.push_back(r.add_signal("tpb.bank", "s" + std::to_string(i), 8, i % 256));
  for (int i = kN - 1; i >= 0; --i) r.set(ids[i], (i + 1) * 10u, (i * 7 + 1) % 256);
  const std::string dir = testutil::scratch("vcd");
  write_vcd(r, dir + "/m.vcd");
  const Vcd ours = parse_vcd(testutil::slurp(dir + "/m.vcd"));
  ASSERT_EQ(ours.error, "");
  EXPECT_EQ(ours.vars.size(), static_cast<std::size_t>(kN));
  ASSERT_EQ(run_cmd("vcd2fst " + dir + "/m.vcd " + dir + "/m.fst >/dev/null 2>&1").exit_code, 0);
  const auto back = run_cmd("fst2vcd " + dir + "/m.fst 2>/dev/null");
  const Vcd theirs = parse_vcd(back.out);
  ASSERT_EQ(theirs.error, "");
  for (int i = 0; i < kN; ++i) {
    const std::string name = "tpb.bank.s" + std::to_string(i);
    Timeline want = {{0, static_cast<std::uint64_t>(i % 256)}};
    if ((i * 7 + 1) % 256 != i % 256)
      want.push_back({(i + 1) * 10u, static_cast<std::uint64_t>((i * 7 + 1) % 256)});
    EXPECT_EQ(ours.normalized(name), want) << name;
    EXPECT_EQ(theirs.normalized(name), want) << name;
  }
}

TEST(TraceVcd, CustomTopAndEmptyRecorder) {
  Recorder r;
  r.add_signal("tpb.pool", "busy", 1);
  const std::string dir = testutil::scratch("vcd");
  write_vcd(r, dir + "/t.vcd", "chip");
  const Vcd v = parse_vcd(testutil::slurp(dir + "/t.vcd"));
  ASSERT_EQ(v.error, "");
  ASSERT_EQ(v.var_order.size(), 1u);
  EXPECT_EQ(v.var_order[0], "chip.tpb.pool.busy");
  EXPECT_EQ(v.times, std::vector<std::uint64_t>{0});

  write_vcd(Recorder{}, dir + "/e.vcd");
  const Vcd e = parse_vcd(testutil::slurp(dir + "/e.vcd"));
  EXPECT_EQ(e.error, "");
  EXPECT_TRUE(e.vars.empty());
}

TEST(TraceVcd, UnwritablePathThrowsNamingIt) {
  const std::string path = "/nonexistent-tpbsim-dir/x.vcd";
  try {
    write_vcd(vcd_scenario(), path);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tpb::trace
