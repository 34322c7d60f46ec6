// tpbsim convert FROM TO VALUE... : the numeric format calculator (SPEC §9).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "models/numerics/formats.h"
#include "platform/cli/commands.h"

namespace tpb::cli {

namespace {

std::string usage() {
  return "usage: tpbsim convert [--no-sat] FROM TO VALUE...\n"
         "\n"
         "Converts each VALUE from format FROM to format TO and prints\n"
         "  VALUE -> 0xHEX DECIMAL\n"
         "where HEX is the TO code (zero-padded to its width) and DECIMAL its exact value.\n"
         "VALUE is a decimal number (also nan, inf, -inf), first rounded into FROM, or\n"
         "0x... meaning a code of FROM.\n"
         "Narrowing rounds to nearest, ties to even, and saturates to the largest finite\n"
         "value (NaN stays NaN where the format has one).\n"
         "\n"
         "options:\n"
         "  --no-sat   overflow to Inf (NaN for e4m3 and e8m0, modulo wrap for s8 u8 int4)\n"
         "  -h, --help this text\n"
         "\n"
         "formats: " +
         num::format_list() + "\n";
}

}  // namespace

int cmd_convert(const Args& args) {
  num::Overflow ov = num::Overflow::Saturate;
  std::vector<std::string> pos;
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      std::fputs(usage().c_str(), stdout);
      return 0;
    }
    if (a == "--no-sat") {
      ov = num::Overflow::NonSaturate;
    } else if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      // Negative numbers are values; only "--x" spellings are options.
      std::fprintf(stderr, "tpbsim convert: error: unknown option '%s'\n\n%s", a.c_str(),
                   usage().c_str());
      return 1;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() < 3) {
    std::fprintf(stderr, "tpbsim convert: error: expected FROM TO VALUE...\n\n%s", usage().c_str());
    return 1;
  }
  const std::optional<num::Format> from = num::parse_format(pos[0]);
  const std::optional<num::Format> to = num::parse_format(pos[1]);
  for (int i = 0; i < 2; ++i) {
    if (!(i == 0 ? from : to)) {
      std::fprintf(stderr, "tpbsim convert: error: unknown format '%s' (%s); formats: %s\n",
                   pos[i].c_str(), i == 0 ? "FROM" : "TO", num::format_list().c_str());
      return 1;
    }
  }
  int rc = 0;
  for (std::size_t i = 2; i < pos.size(); ++i) {
    std::string error;
    const std::optional<std::string> line = num::convert_line(*from, *to, pos[i], error, ov);
    if (line) {
      std::printf("%s\n", line->c_str());
    } else {
      std::fprintf(stderr, "tpbsim convert: error: %s\n", error.c_str());
      rc = 1;
    }
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "tpbsim convert: error: cannot write to stdout (%s)\n",
                 std::strerror(errno));
    return 1;
  }
  return rc;
}

}  // namespace tpb::cli
