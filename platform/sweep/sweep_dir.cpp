#include "platform/sweep/sweep_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "platform/run/mem_spec.h"
#include "platform/sweep/sweep_files.h"

namespace tpb::sweep {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// OUT's plan.json, which must be a plan this tpbsim wrote for OUT: else the
// directory is someone else's and nothing in it is removed.
json checked_previous_plan(const fs::path& out) {
  const std::string path = (out / "plan.json").string();
  auto refuse = [&](const std::string& why) {
    return SweepError(fmt::format(
        "--out {}: its plan.json is not a tpbsim sweep plan of this directory ({}); nothing "
        "removed: choose another directory, or remove it yourself",
        shown(out.string()), why));
  };
  json plan;
  try {
    plan = parse_json_file(path, "sweep plan", kMaxPlanBytes);
  } catch (const SweepError& e) {
    throw refuse(e.what());
  }
  if (!plan.is_object() || plan.value("version", json()) != json(1))
    throw refuse("no \"version\": 1");
  if (!plan.contains("out") || !plan["out"].is_string() || plan["out"] != out.string())
    throw refuse("its \"out\" is not this directory");
  if (!plan.contains("points") || !plan["points"].is_array()) throw refuse("no \"points\"");
  const json& pts = plan["points"];
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const json& p = pts[i];
    if (!p.is_object() || p.value("id", json()) != json(point_id(i)) || !p.contains("argv") ||
        !p["argv"].is_array())
      throw refuse(fmt::format("point {} is not one of a plan", i));
    for (const json& a : p["argv"])
      if (!a.is_string()) throw refuse(fmt::format("point {}: argv holds a non-string", i));
  }
  return plan;
}

// Removes a regular file or a link (never what a link points to).
void remove_entry(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
    ::unlink(p.c_str());
}

bool is_dir_not_link(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A point directory's files: the sweep's, and the outputs its argv names in
// it (with the .gtkw a --vcd writes beside its VCD).
void remove_point_files(const fs::path& pdir, const json& argv) {
  for (const char* f : kPointFiles) remove_entry(pdir / f);
  const std::string prefix = pdir.string() + "/";
  for (const json& a : argv) {
    std::string v = a.get<std::string>();
    if (v.rfind(prefix, 0) != 0)
      if (const std::size_t at = run::spec_file_start(v); at != std::string::npos) v = v.substr(at);
    if (v.rfind(prefix, 0) != 0) continue;
    const std::string name = v.substr(prefix.size());
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      continue;
    remove_entry(pdir / name);
    remove_entry(pdir / fs::path(name).replace_extension(".gtkw"));
    remove_entry(pdir / (name + ".gtkw"));
  }
}

}  // namespace

std::string point_id(std::size_t i) { return fmt::format("p{:04d}", i); }

fs::path point_dir(const std::string& out, std::size_t i) {
  return fs::path(out) / "points" / point_id(i);
}

std::optional<json> previous_sweep(const fs::path& out) {
  if (fs::exists(out) && !fs::is_directory(out))
    throw SweepError(fmt::format("--out {}: not a directory", shown(out.string())));
  if (fs::is_directory(out) && !fs::is_empty(out) && !fs::exists(out / "plan.json"))
    throw SweepError(fmt::format(
        "--out {}: a non-empty directory that holds no sweep (no plan.json); choose another",
        shown(out.string())));
  if (!fs::exists(out / "plan.json")) return std::nullopt;
  return checked_previous_plan(out);
}

void remove_previous_sweep(const fs::path& out, const json& plan) {
  const fs::path points = out / "points";
  if (is_dir_not_link(points)) {
    const json& pts = plan["points"];
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const fs::path pdir = points / point_id(i);
      if (!is_dir_not_link(pdir)) continue;
      remove_point_files(pdir, pts[i]["argv"]);
      ::rmdir(pdir.c_str());
      remove_entry(points / fmt::format("slurm-{}.out", i));
    }
    ::rmdir(points.c_str());
  }
  for (const char* f : kSweepFiles) remove_entry(out / f);
}

json load_plan(const std::string& out) {
  const std::string path = (fs::path(out) / "plan.json").string();
  if (!fs::exists(path))
    throw SweepError(
        fmt::format("{}: no sweep here (no plan.json; run `tpbsim sweep SWEEP.json "
                    "--out {}` first)",
                    out, out));
  json plan = parse_json_file(path, "sweep plan");
  if (!plan.is_object() || plan.value("version", 0) != 1 || !plan.contains("points"))
    throw SweepError(path + ": not a sweep plan of this tpbsim");
  return plan;
}

}  // namespace tpb::sweep
