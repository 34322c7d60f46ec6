// The watchdog limits of a run (run_options.h): --max-sim-time and
// --max-wall-time, parsed in overflow-safe arithmetic.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "platform/run/host_args.h"
#include "platform/run/run_options.h"

namespace tpb::run {

bool parse_sim_time(const std::string& s, std::uint64_t& ps, std::string& why) {
  std::size_t i = 0;
  std::uint64_t v = 0;
  bool big = false;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    const auto d = static_cast<std::uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) big = true;
    if (!big) v = v * 10 + d;
    ++i;
  }
  if (i == 0) {
    why = "'" + s + "' is not a time: expected an integer with a unit ps, ns, us, ms or s";
    return false;
  }
  const std::string unit = s.substr(i);
  std::uint64_t scale = 0;
  if (unit.empty() || unit == "ps")
    scale = 1;
  else if (unit == "ns")
    scale = 1000;
  else if (unit == "us")
    scale = 1000000;
  else if (unit == "ms")
    scale = 1000000000;
  else if (unit == "s")
    scale = 1000000000000;
  else {
    why = "'" + s + "': unit '" + unit + "' is not ps, ns, us, ms or s";
    return false;
  }
  // The range is check_max_sim_ps's (host_args.h), the value as written.
  const unsigned __int128 total = static_cast<unsigned __int128>(v) * scale;
  const HostInt h = big || total > static_cast<unsigned __int128>(INT64_MAX)
                        ? HostInt::past(+1, s)
                        : HostInt(static_cast<long long>(total));
  try {
    ps = check_max_sim_ps(h);
  } catch (const InputError& e) {
    const std::string m = e.what();
    why = "'" + s + "'" + m.substr(m.find(" ps ") + 3);
    return false;
  }
  return true;
}

bool parse_wall_time(const std::string& s, double& seconds, std::string& why) {
  char* end = nullptr;
  const double v =
      s.empty() || s[0] == '-' || s[0] == '+' || s[0] == ' ' ? NAN : std::strtod(s.c_str(), &end);
  if (std::isnan(v) || end != s.c_str() + s.size() || !std::isfinite(v)) {
    why = "'" + s + "' is not a number of seconds";
    return false;
  }
  try {
    seconds = check_max_wall_seconds(v);
  } catch (const InputError& e) {
    const std::string m = e.what();
    why = "'" + s + "'" + m.substr(m.find(" seconds "));
    return false;
  }
  return true;
}

}  // namespace tpb::run
