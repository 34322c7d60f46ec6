#include "models/timing/timing_profile.h"

#include "models/isa/input_file.h"
#include "models/isa/names.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tpb::timing {

namespace {

constexpr std::size_t kMaxProfileFileBytes = kMaxTimingFileBytes;  // 16 MiB of JSON

constexpr unsigned kMaxProfileDepth = 32;

// The offset of the first bracket nesting past `max` levels (outside JSON
// strings), or npos.
std::size_t nesting_past(const std::string& text, unsigned max) {
  unsigned depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string::npos;
}

[[noreturn]] void fail(const std::string& key, const std::string& what) {
  throw TimingError("timing profile: key '" + isa::excerpt(key) + "': " + what);
}

// A value as the messages show it: JSON, cut (a megabyte string is not
// echoed whole), control characters escaped.
std::string shown(const nlohmann::json& v) {
  return isa::excerpt(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void require_object(const nlohmann::json& v, const std::string& key) {
  if (!v.is_object()) fail(key, "expected an object, got " + shown(v));
}

}  // namespace

std::uint32_t TimingConfig::pool_bytes_per_partition_cycle() const {
  // 64-bit: pool_cores can be anything up to 2^32 - 1 (a 32-bit sum wrapped
  // to a zero divisor).
  const std::uint64_t cores = std::max<std::uint32_t>(pool_cores, 1);
  const std::uint64_t per_core = (std::uint64_t{isa::kNumPartitions} + cores - 1) / cores;
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, pool_vector_bytes / per_core));
}

std::uint64_t TimingConfig::cycles_to_ps_wide(std::uint64_t cycles, std::uint32_t mhz) {
  // 1 cycle = 1e6 / mhz ps; integer arithmetic, rounded to nearest, in 128
  // bits so no product wraps; saturates at kMaxPs (the sequencers fault
  // there rather than let simulated time wrap).
  const unsigned __int128 ps = (static_cast<unsigned __int128>(cycles) * 1000000u + mhz / 2) /
                               std::max<std::uint32_t>(mhz, 1);
  return ps > kMaxPs ? kMaxPs : static_cast<std::uint64_t>(ps);
}

namespace {

// The rows under a dotted prefix ("hbm" -> hbm.bytes, ...), and whether any
// row is the key itself.
struct Lookup {
  const TimingField* row = nullptr;
  std::vector<const TimingField*> children;  // rows directly or deeper under the key
};
Lookup lookup(const std::string& key) {
  Lookup l;
  for (const TimingField& f : timing_fields()) {
    if (f.key == key)
      l.row = &f;
    else if (f.key.size() > key.size() && f.key.compare(0, key.size(), key) == 0 &&
             f.key[key.size()] == '.')
      l.children.push_back(&f);
  }
  return l;
}

// The names one level under `key` (for "unknown key (a, b, c)").
std::string child_names(const std::string& key, const std::vector<const TimingField*>& rows) {
  std::vector<std::string> names;
  for (const TimingField* f : rows) {
    std::string rest = f->key.substr(key.size() + 1);
    rest = rest.substr(0, rest.find('.'));
    if (std::find(names.begin(), names.end(), rest) == names.end()) names.push_back(rest);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

void set_field(TimingConfig& c, const TimingField& f, const nlohmann::json& v,
               const std::string& key) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    fail(key, "expected a non-negative integer, got " + shown(v));
  const auto x = v.get<std::uint64_t>();
  if (f.max == UINT32_MAX && x > UINT32_MAX)
    fail(key, "value " + shown(v) + " does not fit in 32 bits");
  if (x < f.min) fail(key, f.min == 1 ? "must not be 0" : fmt::format("at least {}", f.min));
  if (x > f.max) fail(key, f.max_note.empty() ? fmt::format("at most {}", f.max) : f.max_note);
  f.set(c, f.slot, x);
}

// Merges the object `j` found at `prefix` ("" at the top level).
void merge_object(TimingConfig& c, const nlohmann::json& j, const std::string& prefix) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    const nlohmann::json& v = *it;
    const Lookup l = lookup(key);
    if (l.row) {
      set_field(c, *l.row, v, key);
    } else if (!l.children.empty()) {
      if (v.is_object()) {
        merge_object(c, v, key);
        continue;
      }
      // A group whose members are one level down takes one number for all
      // of them ("instruction_overhead_cycles": 64 sets every engine).
      const bool flat = std::all_of(l.children.begin(), l.children.end(), [&](const auto* f) {
        return f->key.find('.', key.size() + 1) == std::string::npos;
      });
      if (!flat || !v.is_number()) fail(key, "expected an object, got " + shown(v));
      for (const TimingField* f : l.children) set_field(c, *f, v, f->key);
    } else if (prefix.empty()) {
      fail(key, "unknown key");
    } else {
      fail(key, "unknown key (" + child_names(prefix, lookup(prefix).children) + ")");
    }
  }
}

}  // namespace

void merge_timing(TimingConfig& c, const nlohmann::json& j) {
  require_object(j, "(top level)");
  nlohmann::json fields = nlohmann::json::object();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const nlohmann::json& v = *it;
    if (k == "arch") {
      if (!v.is_string()) fail(k, "expected a string");
      // A generation's name in any case, or its alias (v4), as .arch and --arch take.
      isa::Arch given{}, run{};
      if (!isa::parse_arch(v.get<std::string>(), given))
        fail(k, "'" + isa::excerpt(v.get<std::string>()) +
                    "' is not a generation (sunda cayman mariana maverick, or v2..v5)");
      if (!isa::parse_arch(c.arch, run) || given != run)
        fail(k, "profile is for '" + isa::excerpt(v.get<std::string>()) + "' but the run is for '" +
                    c.arch + "'");
    } else if (k == "bundle_issue_cycles") {
      require_object(v, k);
      for (auto b = v.begin(); b != v.end(); ++b) {
        const std::string key = k + "." + b.key();
        const std::uint32_t cycles = [&] {
          if (!b->is_number_unsigned() && !(b->is_number_integer() && b->get<std::int64_t>() >= 0))
            fail(key, "expected a non-negative integer, got " + shown(*b));
          if (b->get<std::uint64_t>() > UINT32_MAX)
            fail(key, "value " + shown(*b) + " does not fit in 32 bits");
          return static_cast<std::uint32_t>(b->get<std::uint64_t>());
        }();
        c.bundle_issue_cycles[b.key()] = cycles;
      }
    } else if (k == "sources") {
      // Documentation: the source of every number (models/timing/profiles).
      require_object(v, k);
      for (auto e = v.begin(); e != v.end(); ++e)
        if (!e->is_string()) fail(k + "." + e.key(), "expected a string");
    } else {
      fields[k] = v;
    }
  }
  merge_object(c, fields, "");
  if (c.fetch.batch_words > c.fetch.ring_words)
    fail("instruction_fetch.batch_words", std::to_string(c.fetch.batch_words) +
                                              " is more than instruction_fetch.ring_words (" +
                                              std::to_string(c.fetch.ring_words) + ")");
  // A contention window shorter than one beat cannot hold a beat: bookings
  // would spread over a window per cycle (unbounded memory). Checked on the
  // merged result, whatever order the keys came in.
  for (const auto& [name, m] : {std::pair<const char*, const MemCycles*>{"sbuf", &c.sbuf},
                                {"psum", &c.psum},
                                {"queue", &c.queue},
                                {"control", &c.control}})
    if (m->contention_window_cycles != 0 && m->contention_window_cycles < m->beat_cycles)
      fail(std::string(name) + ".contention_window_cycles",
           std::to_string(m->contention_window_cycles) + " is shorter than one beat (" + name +
               ".beat_cycles " + std::to_string(m->beat_cycles) + "); use 0 (off) or at least " +
               std::to_string(m->beat_cycles));
  // Simulated time never wraps: one access of a whole partition slot
  // (latency + ceil(256 KiB / beat_bytes) beats) takes at most kMaxAccessPs,
  // so the sums an instruction makes of its accesses stay far inside 64 bits.
  for (const auto& [name, m] : {std::pair<const char*, const MemCycles*>{"sbuf", &c.sbuf},
                                {"psum", &c.psum},
                                {"queue", &c.queue},
                                {"control", &c.control}}) {
    const std::uint64_t beats = (isa::kPartitionSlot + m->beat_bytes - 1) / m->beat_bytes;
    const std::uint64_t lat_ps = TimingConfig::cycles_to_ps(m->latency_cycles, c.memory_clock_mhz);
    const std::uint64_t beats_ps =
        TimingConfig::cycles_to_ps(std::uint64_t{m->beat_cycles} * beats, c.memory_clock_mhz);
    if (lat_ps + beats_ps > TimingConfig::kMaxAccessPs)
      fail(std::string(name) + (beats_ps >= lat_ps ? ".beat_cycles" : ".latency_cycles"),
           "one access of a whole partition (" + std::to_string(m->latency_cycles) +
               " latency cycles + " + std::to_string(beats) + " beats of " +
               std::to_string(m->beat_cycles) + " cycles at memory_clock_mhz " +
               std::to_string(c.memory_clock_mhz) + ") would take " +
               std::to_string(lat_ps + beats_ps) + " ps, past the " +
               std::to_string(TimingConfig::kMaxAccessPs) + " ps (2^40) an access may take");
  }
}

nlohmann::json parse_json_strict(const std::string& text, unsigned max_depth) {
  // A profile is at most a few levels deep; JSON nested thousands deep
  // overflowed the stack in the JSON library (SIGSEGV): refused first.
  if (const std::size_t at = nesting_past(text, max_depth); at != std::string::npos)
    throw TimingError("JSON nested deeper than " + std::to_string(max_depth) + " levels at byte " +
                      std::to_string(at));
  // Keys seen in each open object, and the key path to it, to refuse a key
  // given twice (the library keeps the last value without a word).
  struct Level {
    bool object = false;
    std::set<std::string> keys;
    std::string key;  // the latest key of this object
  };
  std::vector<Level> stack;
  std::string duplicate;
  auto where = [&](const std::string& k) {
    std::string p;
    for (const Level& l : stack)
      if (l.object && &l != &stack.back()) p += l.key + ".";
    return p + k;
  };
  const nlohmann::json::parser_callback_t cb = [&](int, nlohmann::json::parse_event_t ev,
                                                   nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (ev) {
      case E::object_start:
        stack.push_back({true, {}, {}});
        break;
      case E::array_start:
        stack.push_back({false, {}, "[]"});
        break;
      case E::object_end:
      case E::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case E::key:
        if (!stack.empty() && stack.back().object && parsed.is_string()) {
          const std::string k = parsed.get<std::string>();
          if (!stack.back().keys.insert(k).second && duplicate.empty()) duplicate = where(k);
          stack.back().key = k;
        }
        break;
      case E::value:
        break;
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, cb);
  } catch (const nlohmann::json::exception& e) {
    throw TimingError(std::string("not valid JSON: ") + isa::excerpt(e.what()));
  }
  if (!duplicate.empty())
    throw TimingError("duplicate key '" + isa::excerpt(duplicate) +
                      "' (given twice in one object; JSON keeps only one: say it once)");
  return j;
}

nlohmann::json read_timing_file(const std::string& path) {
  std::string text;
  if (const std::string why =
          isa::read_input_file(path, kMaxProfileFileBytes, "a timing profile", text);
      !why.empty())
    throw TimingError(isa::excerpt(path) + ": " + why);
  try {
    return parse_json_strict(text, kMaxProfileDepth);
  } catch (const TimingError& e) {
    const std::string m = e.what();
    throw TimingError(isa::excerpt(path) + ": " +
                      (m.rfind("JSON nested", 0) == 0 ? "not a timing profile: " : "") + m);
  }
}

void merge_timing_file(TimingConfig& c, const std::string& path) {
  const nlohmann::json j = read_timing_file(path);
  try {
    merge_timing(c, j);
  } catch (const TimingError& e) {
    throw TimingError(isa::excerpt(path) + ": " + e.what());
  }
}

nlohmann::json to_json(const TimingConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  j["arch"] = c.arch;
  for (const TimingField& f : timing_fields()) {
    nlohmann::json* at = &j;
    std::size_t from = 0;
    for (std::size_t dot; (dot = f.key.find('.', from)) != std::string::npos; from = dot + 1)
      at = &(*at)[f.key.substr(from, dot - from)];
    (*at)[f.key.substr(from)] = f.get(c, f.slot);
  }
  nlohmann::json bundles = nlohmann::json::object();
  for (const auto& [name, cyc] : c.bundle_issue_cycles) bundles[name] = cyc;
  j["bundle_issue_cycles"] = bundles;
  return j;
}

void deep_merge(nlohmann::json& base, const nlohmann::json& over) {
  if (!base.is_object() || !over.is_object()) {
    base = over;
    return;
  }
  for (auto it = over.begin(); it != over.end(); ++it) {
    if (base.contains(it.key()))
      deep_merge(base[it.key()], *it);
    else
      base[it.key()] = *it;
  }
}

std::vector<std::string> resolve_dotted_key(const std::string& key, const nlohmann::json& profile) {
  const std::string bic = "bundle_issue_cycles.";
  if (key.rfind(bic, 0) == 0 && key.size() > bic.size())
    return {"bundle_issue_cycles", key.substr(bic.size())};
  std::vector<std::string> path;
  const nlohmann::json* level = &profile;
  std::string rest = key;
  for (;;) {
    if (level->contains(rest) && !(*level)[rest].is_object()) {
      path.push_back(rest);
      return path;
    }
    const std::size_t dot = rest.find('.');
    const std::string head = rest.substr(0, dot);
    std::string known;
    for (auto it = level->begin(); it != level->end(); ++it)
      if (it.key() != "sources" && it.key() != "arch")
        known += (known.empty() ? "" : " ") + it.key();
    if (!level->contains(head) || head == "sources" || head == "arch")
      throw TimingError(
          fmt::format("'{}': '{}' is not a timing key (known here: {})", key, head, known));
    const nlohmann::json& next = (*level)[head];
    path.push_back(head);
    if (!next.is_object())
      throw TimingError(fmt::format("'{}': '{}' is a value, not an object", key,
                                    fmt::format("{}", fmt::join(path, "."))));
    if (dot == std::string::npos) {
      std::string sub;
      for (auto it = next.begin(); it != next.end(); ++it)
        sub += (sub.empty() ? "" : " ") + it.key();
      throw TimingError(fmt::format("'{}' names an object; name one of its keys: {}", key, sub));
    }
    level = &next;
    rest = rest.substr(dot + 1);
  }
}

nlohmann::json nest_key(const std::vector<std::string>& path, const nlohmann::json& value) {
  nlohmann::json j = value;
  for (auto it = path.rbegin(); it != path.rend(); ++it) j = nlohmann::json{{*it, j}};
  return j;
}

const nlohmann::json& profile_shape() {
  // Every field is in every profile; the bundle overrides are not looked up
  // here (a bundle_issue_cycles.NAME key names its bundle whole).
  static const nlohmann::json shape = to_json(TimingConfig{});
  return shape;
}

nlohmann::json expand_dotted_keys(const nlohmann::json& overrides) {
  const nlohmann::json& profile = profile_shape();
  if (!overrides.is_object()) throw TimingError("timing overrides: not an object of keys");
  nlohmann::json out = nlohmann::json::object();
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    if (it.key().find('.') == std::string::npos) {
      deep_merge(out, nlohmann::json{{it.key(), *it}});
      continue;
    }
    deep_merge(out, nest_key(resolve_dotted_key(it.key(), profile), *it));
  }
  return out;
}

}  // namespace tpb::timing
