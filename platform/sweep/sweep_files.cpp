#include "platform/sweep/sweep_files.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "models/isa/input_file.h"
#include "models/timing/timing_profile.h"
#include "platform/run/staged_outputs.h"

namespace tpb::sweep {

std::string shown(const std::string& s) { return isa::excerpt(s, 300); }

std::string read_file(const std::string& path, const std::string& what, std::size_t max_bytes) {
  std::string text;
  const std::string a_what = "a " + what;
  if (const std::string why = isa::read_input_file(path, max_bytes, a_what.c_str(), text);
      !why.empty())
    throw SweepError(fmt::format("{} '{}': {}", what, shown(path), why));
  return text;
}

nlohmann::json parse_json_file(const std::string& path, const std::string& what,
                               std::size_t max_bytes) {
  const std::string text = read_file(path, what, max_bytes);
  try {
    return timing::parse_json_strict(text, 64);
  } catch (const std::exception& e) {
    throw SweepError(fmt::format("{} '{}': {}", what, shown(path), e.what()));
  }
}

void write_file(const std::string& path, const std::string& text) {
  try {
    run::OutputFile f(path);
    std::ofstream out(f.write_path(), std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out)
      throw std::runtime_error(
          fmt::format("{}: cannot write: {}", shown(path), std::strerror(errno)));
    f.commit();
  } catch (const run::OutputError& e) {
    throw std::runtime_error(e.what());
  }
}

void require_one_line(const std::string& what, const std::string& s) {
  if (isa::has_control_chars(s))
    throw SweepError(fmt::format(
        "{} '{}' holds a control character (a newline, a tab, an escape): a sweep writes it "
        "into shell scripts and runner input, one line each; choose another",
        what, shown(s)));
}

}  // namespace tpb::sweep
