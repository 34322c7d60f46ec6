// End-to-end: `tpbsim asm`, `disasm`, `check` and `convert` as a user runs
// them (exit codes, outputs, files).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "sc_tests/e2e/tool_runner.h"

namespace tpb::e2e {
namespace {

std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::size_t p = 0;
  while (p < s.size()) {
    const std::size_t e = s.find('\n', p);
    out.push_back(s.substr(p, e == std::string::npos ? std::string::npos : e - p));
    if (e == std::string::npos) break;
    p = e + 1;
  }
  return out;
}

const char* kValidDequant =
    ".arch mariana\n"
    "tensor_dequantize fmt=e2m1_to_e5m2 channels=32 src=t3d(sbuf(0, 0x0), num=[16, 1, 1]) "
    "dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])\n";

TEST(CliAsm, AssemblesToRawWordsAtSeedOffsets) {
  const std::string dir = scratch_dir("asm");
  const std::string in = write_file(dir, "p.tpb", kValidDequant);
  const ToolResult r = run_tool("asm " + in + " -o " + dir + "/p.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string bin = read_text(dir + "/p.bin");
  ASSERT_EQ(bin.size(), 64u);
  EXPECT_EQ(static_cast<unsigned char>(bin[0]), 0x7b);   // opcode
  EXPECT_EQ(static_cast<unsigned char>(bin[1]), 16);     // inst_word_len
  EXPECT_EQ(static_cast<unsigned char>(bin[22]), 16);    // src num_elem[0] @12+10
  EXPECT_EQ(static_cast<unsigned char>(bin[32]), 0x09);  // in_dtype UINT32
  EXPECT_EQ(static_cast<unsigned char>(bin[34]), 32);    // num_active_channels
  EXPECT_EQ(static_cast<unsigned char>(bin[35]), 1);     // dequant_fmt
  EXPECT_EQ(static_cast<unsigned char>(bin[45]), 0x10);  // dst start 0x1000 @44
  EXPECT_EQ(static_cast<unsigned char>(bin[54]), 32);    // dst num_elem[0] @44+10
  EXPECT_NE(r.err.find("note: .arch"), std::string::npos) << r.err;
}

TEST(CliAsm, SyntaxErrorPrintsFileLineColAndExits1) {
  const std::string dir = scratch_dir("asmerr");
  const std::string in =
      write_file(dir, "bad.tpb", "# x\n.engine pool\n  tensor_dequantize fmt=1 channels=300\n");
  const ToolResult r = run_tool("asm " + in + " -o " + dir + "/o.bin");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(in + ":3:36: error: value 300 out of range for field 'channels'"),
            std::string::npos)
      << r.err;
}

TEST(CliAsm, UsageErrors) {
  EXPECT_EQ(run_tool("asm").exit_code, 1);
  EXPECT_EQ(run_tool("asm /nonexistent/x.tpb -o /tmp/x.bin").exit_code, 1);
  EXPECT_EQ(run_tool("asm --bogus").exit_code, 1);
  const ToolResult h = run_tool("asm --help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("usage: tpbsim asm"), std::string::npos);
  EXPECT_EQ(run_tool("disasm --help").exit_code, 0);
  EXPECT_EQ(run_tool("check --help").exit_code, 0);
}

TEST(CliAsm, DisasmRoundTripsBinary) {
  const std::string dir = scratch_dir("disasm");
  // Four words: a dequant, a quantize_mx, an unknown opcode, a matmul_mx.
  const std::string in = write_file(
      dir, "p.tpb",
      "tensor_dequantize fmt=nf4_to_e4m3 group=8 channels=64 src=t3d(sbuf(1, 0x40), num=[20, 1, "
      "1]) "
      "dst=t3d(sbuf(1, 0x800), num=[32, 1, 1]) wait=eq(sem2, 3) reserved2=[1, 2, 3, 4]\n"
      ".engine dve\n"
      "quantize_mx channels=32 out_dtype=fp8_e5m2 src=t3d(0) dst=mx1d(data=0x100, scale=0x200)\n"
      ".engine pool\n"
      ".raw 55" +
          std::string(126, '0') +
          "\n"
          ".engine pe\n"
          "matmul_mx in_dtype=int4 rows=32 src=mx1d(data=0, scale=0) dst=t3d(psum(0, 0))\n");
  ASSERT_EQ(run_tool("asm " + in + " -o " + dir + "/a.bin").exit_code, 0);
  const ToolResult d = run_tool("disasm " + dir + "/a.bin");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.out.find(".engine dve\nquantize_mx channels=32 out_dtype=fp8_e5m2"),
            std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find(".raw 55 00 00"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("wait=eq(sem2, 3)"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("reserved2=[0x1, 0x2, 0x3, 0x4]"), std::string::npos) << d.out;
  // disasm -o, then asm again: identical bytes.
  ASSERT_EQ(run_tool("disasm " + dir + "/a.bin -o " + dir + "/b.tpb").exit_code, 0);
  ASSERT_EQ(run_tool("asm " + dir + "/b.tpb -o " + dir + "/b.bin").exit_code, 0);
  EXPECT_EQ(read_text(dir + "/a.bin"), read_text(dir + "/b.bin"));
}

TEST(CliAsm, DisasmRejectsATruncatedBinary) {
  const std::string dir = scratch_dir("trunc");
  const std::string in = write_file(dir, "t.bin", std::string(100, '\x7b'));
  const ToolResult r = run_tool("disasm " + in);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(in + ": size 100 bytes is not a multiple of 64"), std::string::npos)
      << r.err;
}

TEST(CliCheck, ValidProgramExits0) {
  const std::string dir = scratch_dir("check");
  const std::string in = write_file(dir, "ok.tpb", kValidDequant);
  const ToolResult r = run_tool("check " + in);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(in + ":2: pool[0] tensor_dequantize: ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 instruction(s) checked for mariana: 1 ok, 0 invalid"), std::string::npos)
      << r.out;
}

TEST(CliCheck, InvalidInstructionNamesPredicatesAndExits2) {
  const std::string dir = scratch_dir("check2");
  const std::string in = write_file(
      dir, "bad.tpb",
      std::string(kValidDequant) +
          "tensor_dequantize fmt=e2m3_to_e4m3 group=4 channels=32 "
          "src=t3d(sbuf(0, 0x0), num=[24, 1, 1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])\n");
  const ToolResult r = run_tool("check " + in);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0], in + ":2: pool[0] tensor_dequantize: ok");
  EXPECT_EQ(lines[1].rfind(in + ":3: pool[1] tensor_dequantize: INVALID ", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find("has_valid_group_size"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("2 instruction(s) checked for mariana: 1 ok, 1 invalid"),
            std::string::npos);
}

TEST(CliCheck, ArchPrecedence) {
  const std::string dir = scratch_dir("arch");
  // .arch mariana in the file; --arch sunda has no TensorDequantize (nc >= V3).
  const std::string in = write_file(dir, "p.tpb", kValidDequant);
  const ToolResult r = run_tool("check " + in + " --arch sunda");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("has_valid_nc_tens_dequant"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("checked for sunda"), std::string::npos) << r.out;
  EXPECT_EQ(run_tool("check " + in + " --arch tpu").exit_code, 1);
}

TEST(CliCheck, BinaryInputUsesWordIndex) {
  const std::string dir = scratch_dir("checkbin");
  const std::string in = write_file(dir, "p.tpb", kValidDequant);
  ASSERT_EQ(run_tool("asm " + in + " -o " + dir + "/p.bin").exit_code, 0);
  const ToolResult r = run_tool("check " + dir + "/p.bin");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(dir + "/p.bin:word 0: pool[0] tensor_dequantize: ok"), std::string::npos)
      << r.out;
}

TEST(CliCheck, SyntaxAndFileErrorsExit1) {
  const std::string dir = scratch_dir("checkerr");
  const std::string in = write_file(dir, "s.tpb", ".engine npu\n");
  const ToolResult r = run_tool("check " + in);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(in + ":1:9: error: unknown engine 'npu'"), std::string::npos) << r.err;
  EXPECT_EQ(run_tool("check /nonexistent/p.tpb").exit_code, 1);
  EXPECT_EQ(run_tool("check").exit_code, 1);
}

TEST(CliCheck, ExamplesAreValidAndInvalidIsInvalid) {
  for (const char* f :
       {"dequant_e2m1_g0_cayman", "dequant_e2m1_g8_cayman", "dequant_int4_g0_cayman",
        "dequant_int4_g8_cayman", "dequant_nf4_g0_cayman", "dequant_nf4_g8_cayman",
        "dequant_e2m3_g0_cayman", "dequant_e2m1_g0_mariana", "dequant_e2m1_g8_mariana",
        "dequant_int4_g0_mariana", "dequant_int4_g8_mariana", "dequant_nf4_g0_mariana",
        "dequant_nf4_g8_mariana", "dequant_e2m3_g0_mariana", "quantize_mx_mariana",
        "mx_matmul_mariana", "mx_matmul_maverick", "two_engines_semaphores", "registers"}) {
    const ToolResult r =
        run_tool("check " + source_path(std::string("traces/examples/") + f + ".tpb"));
    EXPECT_EQ(r.exit_code, 0) << f << "\n" << r.out << r.err;
  }
  const ToolResult r = run_tool("check " + source_path("traces/examples/invalid.tpb"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  // Every instruction of invalid.tpb is invalid: no line ends in ": ok".
  for (const auto& l : lines_of(r.out)) EXPECT_EQ(l.find(": ok"), std::string::npos) << l;
  for (const char* pred : {"has_valid_group_size", "has_valid_dequant_fmt_group_size",
                           "has_valid_tens_dequant_in_dtype", "s3d3_tens_dequant_reserved_zero",
                           "s3d3_tens_dequant_element_count_check_t3d", "check_active_channels",
                           "has_known_opcode", "s3dmx1_quant_valid_active_channels",
                           "is_valid_dtype_inc_fp4", "valid_row_grp_active_rows"})
    EXPECT_NE(r.out.find(pred), std::string::npos) << pred << "\n" << r.out;
}

// --------------------------------------------------- programs through pipes

// Runs a bash script with $T the tool; stdout and stderr captured.
ToolResult run_bash(const std::string& script) {
  const std::string dir = scratch_dir("sh");
  write_file(dir, "s.sh", script);
  const std::string cmd = "T=" + std::string(TPBSIM_BIN) + " bash " + dir + "/s.sh >" + dir +
                          "/out 2>" + dir + "/err </dev/null";
  const int status = std::system(cmd.c_str());
  ToolResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(dir + "/out");
  r.err = read_text(dir + "/err");
  return r;
}

// Every output line with `from` replaced by `to` (the path a report names).
std::string renamed(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

// The three ways a program arrives that is not a regular file: a pipe on
// /dev/stdin, a named FIFO, a process substitution. Each gives the command
// `PROG` in `cmd` (a bash command line) the program at `file`.
struct PipeWay {
  const char* name;
  std::string script(const std::string& file, const std::string& cmd,
                     const std::string& dir) const {
    const std::string n = name;
    if (n == "stdin") return "cat '" + file + "' | " + renamed(cmd, "PROG", "/dev/stdin") + "\n";
    if (n == "fifo")
      return "rm -f " + dir + "/f; mkfifo " + dir + "/f; cat '" + file + "' > " + dir + "/f &\n" +
             renamed(cmd, "PROG", dir + "/f") + "\nrc=$?; wait; exit $rc\n";
    return renamed(cmd, "PROG", "<(cat '" + file + "')") + "\n";
  }
  std::string path(const std::string& dir) const {
    const std::string n = name;
    return n == "stdin" ? "/dev/stdin" : n == "fifo" ? dir + "/f" : "/dev/fd/";
  }
};
const PipeWay kWays[] = {{"stdin"}, {"fifo"}, {"procsub"}};

// A report line names its program; for a process substitution the fd
// number varies: cut "/dev/fd/N" to "/dev/fd/".
std::string without_fd_number(std::string s) {
  for (std::size_t p = s.find("/dev/fd/"); p != std::string::npos; p = s.find("/dev/fd/", p + 8)) {
    std::size_t q = p + 8;
    while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
    s.erase(p + 8, q - (p + 8));
  }
  return s;
}

// check, run, asm and disasm read a piped program exactly once and see all
// of it: the same report, exit code, words and text as from the file (they
// used to see nothing: "0 instruction(s) checked", exit 0; run "ok, 0
// instructions"; asm 0 bytes). A valid program, an invalid one, a binary.
TEST(CliPipes, CheckRunAsmDisasmReadAPipedProgramWhole) {
  const std::string dir = scratch_dir("pipes");
  const std::string valid = write_file(
      dir, "v.tpb",
      std::string(kValidDequant) + kValidDequant + ".engine dve\n" +
          "quantize_mx channels=32 out_dtype=fp8_e4m3 src=t3d(sbuf(0, 0x0), num=[64, 1, 1]) "
          "dst=mx1d(data=sbuf(0, 0x1000), scale=sbuf(0, 0x2000), num=16)\n");
  const std::string invalid = source_path("traces/examples/invalid.tpb");
  ASSERT_EQ(run_tool("asm " + valid + " -o " + dir + "/v.bin").exit_code, 0);
  ASSERT_EQ(run_tool("asm " + invalid + " -o " + dir + "/i.bin").exit_code, 0);
  const std::string vbin = read_text(dir + "/v.bin"), ibin = read_text(dir + "/i.bin");
  ASSERT_EQ(vbin.size(), 3u * 64);
  ASSERT_EQ(ibin.size(), 10u * 64);
  struct Case {
    std::string file;
    int check_rc, run_rc;
    std::size_t words;
  };
  const Case cases[] = {
      {valid, 0, 0, 3}, {invalid, 2, 2, 10}, {dir + "/v.bin", 0, 0, 3}, {dir + "/i.bin", 2, 2, 10}};
  for (const Case& c : cases) {
    const ToolResult ref_check = run_tool("check " + c.file);
    const ToolResult ref_dis = run_tool("disasm " + c.file);
    ASSERT_EQ(ref_check.exit_code, c.check_rc) << c.file << ref_check.err;
    for (const PipeWay& w : kWays) {
      SCOPED_TRACE(std::string(w.name) + " " + c.file);
      const std::string path = w.path(dir);
      // check: the same lines (two passes: .arch, then the report)
      ToolResult r = run_bash(w.script(c.file, "$T check PROG", dir));
      EXPECT_EQ(r.exit_code, c.check_rc) << r.err;
      EXPECT_EQ(without_fd_number(r.out), renamed(ref_check.out, c.file, path)) << r.err;
      EXPECT_NE(r.out.find(std::to_string(c.words) + " instruction(s) checked"), std::string::npos)
          << r.out;
      // run: every instruction issued; the invalid program faults at its first
      r = run_bash(w.script(c.file, "$T run PROG", dir));
      EXPECT_EQ(r.exit_code, c.run_rc) << r.out << r.err;
      if (c.run_rc == 0) {
        EXPECT_NE(r.out.find("tpbsim run: ok, arch mariana"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find(" " + std::to_string(c.words) + " instructions"), std::string::npos)
            << r.out;
      } else {
        EXPECT_NE(r.err.find("pool instruction 0 (opcode 0x7b tensor_dequantize): invalid "
                             "instruction on mariana"),
                  std::string::npos)
            << r.err;
      }
      // asm: the same words
      const std::string out_bin = dir + "/" + w.name + ".bin";
      std::remove(out_bin.c_str());
      r = run_bash(w.script(c.file, "$T asm PROG -o " + out_bin, dir));
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(read_text(out_bin), c.words == 3 ? vbin : ibin);
      // disasm: the same text (its first line names the input)
      r = run_bash(w.script(c.file, "$T disasm PROG", dir));
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(without_fd_number(r.out), renamed(ref_dis.out, c.file, path)) << r.err;
    }
  }
}

// A syntax error in a piped program: FILE:LINE:COL as from a file, exit 1.
TEST(CliPipes, ASyntaxErrorInAPipeNamesItsLine) {
  const std::string dir = scratch_dir("pipe-err");
  const std::string bad = write_file(dir, "b.tpb", std::string(kValidDequant) + ".engine npu\n");
  for (const char* cmd : {"check", "run", "asm", "disasm"}) {
    const std::string args = std::string("$T ") + cmd + " PROG" +
                             (std::string(cmd) == "asm" ? " -o " + dir + "/o.bin" : "");
    for (const PipeWay& w : kWays) {
      const ToolResult r = run_bash(w.script(bad, args, dir));
      EXPECT_EQ(r.exit_code, 1) << cmd << " " << w.name << r.out << r.err;
      EXPECT_NE(without_fd_number(r.err).find(w.path(dir) + ":3:9: error: unknown engine 'npu'"),
                std::string::npos)
          << cmd << " " << w.name << ": " << r.err;
    }
  }
}

// An empty pipe (the writer failed or wrote nothing) is refused, not a run
// of zero instructions.
TEST(CliPipes, AnEmptyPipeIsRefused) {
  for (const char* cmd :
       {"check /dev/stdin", "run /dev/stdin", "asm /dev/stdin -o /dev/null", "disasm /dev/stdin"}) {
    const ToolResult r = run_bash(std::string("true | $T ") + cmd + "\n");
    EXPECT_EQ(r.exit_code, 1) << cmd << r.out;
    EXPECT_NE(r.err.find("/dev/stdin: is an empty pipe: nothing was written to it"),
              std::string::npos)
        << cmd << ": " << r.err;
    EXPECT_EQ(r.out.find("ok"), std::string::npos) << r.out;
  }
}

// A binary whose bytes are all ASCII but not named .bin is neither guessed
// to be text (it would be read as comments or garbage) nor to be a binary:
// refused, naming the control character. Named .bin it is a binary.
TEST(CliPipes, AnAllAsciiBinaryNeedsTheBinName) {
  const std::string dir = scratch_dir("ascii-bin");
  // tensor_dequantize, inst_word_len 16 (0x10, a control character), every
  // other byte printable ('#' would make the rest a comment as text).
  std::string word(64, '#');
  word[0] = '\x7b';
  word[1] = '\x10';
  const std::string as_text = write_file(dir, "w.dat", word + word);
  const std::string as_bin = write_file(dir, "w.bin", word + word);
  for (const std::string cmd : {"check PROG", "run PROG", "disasm PROG", "asm PROG -o /dev/null"}) {
    for (const std::string& way : {std::string("file"), std::string("pipe")}) {
      const std::string script =
          way == "file" ? "$T " + renamed(cmd, "PROG", as_text)
                        : "cat " + as_text + " | $T " + renamed(cmd, "PROG", "/dev/stdin");
      const ToolResult r = run_bash(script + "\n");
      EXPECT_EQ(r.exit_code, 1) << cmd << " " << way << r.out;
      EXPECT_NE(r.err.find(": not program text (control character 0x10 at byte 1) and not taken "
                           "for a binary: a binary's name ends in .bin"),
                std::string::npos)
          << cmd << " " << way << ": " << r.err;
    }
  }
  const ToolResult r = run_tool("check " + as_bin);
  EXPECT_EQ(r.exit_code, 2) << r.err;  // the words are read (and are invalid)
  EXPECT_NE(r.out.find("2 instruction(s) checked"), std::string::npos) << r.out;
}

TEST(CliConvert, FormatCalculatorLines) {
  const ToolResult a = run_tool("convert fp32 e4m3 464");
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, "464 -> 0x7E 448\n");
  const ToolResult b = run_tool("convert fp4_e2m1 e5m2 0x7");
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.out, "0x7 -> 0x46 6\n");
  EXPECT_EQ(run_tool("convert fp99 e4m3 1").exit_code, 1);
}

}  // namespace
}  // namespace tpb::e2e
