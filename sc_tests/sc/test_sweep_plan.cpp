// A sweep's plan (platform/sweep/plan.h) puts every output of a workload's
// cmd.txt into the point's directory: every option the run option table
// calls an output (whatever it is: --vcd, --cosim-vcd, --dump-timing, an
// option added later) and every --dump, however its path climbs out and
// whatever its name holds ('=' in a --dump's file name included). The point's
// argv is read back with the run's own parser, as the point's run reads it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/run/mem_spec.h"
#include "platform/run/run_options.h"
#include "platform/sweep/plan.h"
#include "sc_tests/scratch_dir.h"

namespace tpb {
namespace {

namespace fs = std::filesystem;

// A workload of the pipeline program whose cmd.txt names `outputs` (each a
// "--name=../../FILE" or "--dump SPEC=../../FILE").
std::string workload(const std::string& dir, const std::vector<std::string>& outputs) {
  const std::string wl = dir + "/deep/wl";
  fs::create_directories(wl);
  const std::string src = std::string(TPB_SOURCE_DIR) + "/traces/workloads/pipeline/";
  for (const char* f : {"program.tpb", "activations.npy", "weights_mxfp4.npy"})
    fs::copy_file(src + f, wl + "/" + f);
  std::ofstream cmd(wl + "/cmd.txt");
  cmd << "program.tpb --load sbuf:0:0=activations.npy --load sbuf:0:4096=weights_mxfp4.npy\n";
  for (const std::string& o : outputs) cmd << o << "\n";
  return wl;
}

// Whether `path` (relative to `cwd`, or absolute) names a file of `dir`.
bool inside(const std::string& path, const std::string& cwd, const std::string& dir) {
  const fs::path p =
      fs::weakly_canonical(fs::path(path).is_absolute() ? fs::path(path) : fs::path(cwd) / path);
  return p.parent_path() == fs::weakly_canonical(dir);
}

TEST(SweepPlan, EveryOutputOptionOfACmdTxtIsRewrittenIntoThePoint) {
  const std::string dir = testutil::make_scratch_dir("sweep-plan");
  // Every output option of the table but --stats (the sweep's own), each
  // climbing out of the workload's directory.
  std::vector<std::string> outputs;
  std::set<std::string> names;
  for (const run::RunOption& opt : run::run_option_table())
    if (opt.role == run::OptionRole::OutputFile && std::string(opt.name) != "stats") {
      outputs.push_back(std::string("--") + opt.name + "=../../" + opt.name + ".out");
      names.insert(opt.name);
    }
  ASSERT_TRUE(names.count("cosim-vcd") && names.count("dump-timing") && names.count("vcd"));
  outputs.push_back("--cosim");
  outputs.push_back("--dump psum:0:0:64x128:f32=../../o=ut.npy");
  outputs.push_back("--dump=sbuf:0:0:1x4:u8=/tmp/elsewhere/abs.npy");
  const std::string wl = workload(dir, outputs);
  const std::string sweep = dir + "/sweep.json";
  std::ofstream(sweep) << R"({"workloads": ["deep/wl"],
      "parameters": [{"key": "clocks_mhz.dve", "values": [1200, 2400]}]})";

  sweep::PlanOptions po;
  po.out = dir + "/out";
  po.tpbsim = "/bin/true";
  const nlohmann::json plan = sweep::make_plan(sweep, po);
  ASSERT_EQ(plan["points"].size(), 2u);
  for (const nlohmann::json& p : plan["points"]) {
    const std::string pdir = dir + "/out/points/" + p["id"].get<std::string>();
    std::vector<std::string> argv = p["argv"].get<std::vector<std::string>>();
    ASSERT_GE(argv.size(), 2u);
    const run::RunOptions ro = run::parse_run_args({argv.begin() + 2, argv.end()});
    std::size_t seen = 0;
    for (const run::RunOption& opt : run::run_option_table()) {
      if (opt.role != run::OptionRole::OutputFile) continue;
      const std::string& v = ro.*opt.text;
      ASSERT_FALSE(v.empty()) << "--" << opt.name << " lost";
      EXPECT_TRUE(inside(v, p["cwd"], pdir)) << "--" << opt.name << " " << v;
      ++seen;
    }
    EXPECT_EQ(seen, names.size() + 1);  // and --stats
    ASSERT_EQ(ro.dumps.size(), 2u);
    std::set<std::string> files;
    for (const std::string& d : ro.dumps) {
      const run::MemSpec m = run::parse_mem_spec(d, true);
      EXPECT_TRUE(inside(m.file, p["cwd"], pdir)) << d;
      files.insert(fs::path(m.file).filename().string());
    }
    EXPECT_EQ(files, (std::set<std::string>{"o=ut.npy", "abs.npy"}));
    EXPECT_TRUE(ro.cosim);
  }
}

}  // namespace
}  // namespace tpb
