// tb_check: instruction words checked through the DPI-C tpb_dpi_check
// against the CLI's `tpbsim check` (docs/COSIM.md). Words: valid
// instructions of every opcode assembled through tpb_dpi_assemble, then
// mutated at random (bits flipped, bytes replaced, another opcode byte, or a
// word of random bytes). For each generation the testbench writes the words
// as a program of `.raw` lines, each under its home queue (where a binary
// sends it: `tpbsim check` also judges where an instruction is, which a
// single word does not say), runs `tpbsim check --arch` on it, and
// compares each line's verdict and predicate names with the DPI's for the
// same word. Then it runs the first words one by one on the library's core
// (tpb_dpi_core_*): each invalid word must fault naming the same predicates.
// It also checks the package's constants against the library.
//
// Plusargs: +tpbsim=PATH (required), +dir=DIR (scratch, default /tmp),
// +seed=N (1), +words=N (400 per generation), +core_words=N (100).
// Exit code (tb_exit_code): 0 pass, 1 a verdict differs, 2 a DPI or file
// error, 3 a bad plusarg.
module tb_check;
  import tpbsim_dpi_pkg::*;

  import "DPI-C" function void tb_exit_code(input int code);
  // std::system (tb_main.cpp): Verilator 5.006 cannot $system a string.
  import "DPI-C" function int tb_system(input string command);

  localparam int NBASE = 12;
  localparam int MAXWORDS = 4096;

  string tpbsim, dir = "/tmp";
  int unsigned seed = 1, nwords = 400, ncore = 100;
  bit [511:0] base[NBASE];
  bit [511:0] words[MAXWORDS];
  string dpi_names[MAXWORDS];
  int unsigned checked = 0, valid = 0;
  int core_runs = 0;

  // Valid words of every opcode with a mnemonic (docs/ASM.md), on the
  // generations that have them.
  string base_text[NBASE] = '{
      "tensor_dequantize fmt=e2m1_to_e5m2 channels=32 src=t3d(sbuf(0, 0x0), num=[16, 1, 1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])",
      "tensor_dequantize fmt=nf4_to_e4m3 group=8 channels=128 src=t3d(sbuf(0, 0x0), num=[20, 1, 1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])",
      "tensor_dequantize fmt=e2m3_to_e4m3 channels=7 src=t3d(sbuf(3, 0x0), step=[1, 0, 0], num=[12, 1, 1]) dst=t3d(sbuf(40, 0x100), num=[16, 1, 1])",
      "tensor_dequantize fmt=int4_to_e5m2 group=8 channels=64 src=t3d(sbuf(0, 0x0), num=[5, 2, 1], step=[1, 5, 0]) dst=t3d(sbuf(64, 0x2000), num=[8, 2, 1], step=[1, 8, 0])",
      "quantize_mx channels=32 in_dtype=fp32 out_dtype=fp8_e4m3 src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) dst=mx1d(data=sbuf(0, 0x1000), scale=sbuf(0, 0x2000), num=16, step=1, scale_pidx=0)",
      "quantize_mx channels=128 in_dtype=bf16 out_dtype=fp8_e5m2 src=t3d(sbuf(0, 0x0), num=[32, 1, 1]) dst=mx1d(data=sbuf(0, 0x1000), scale=sbuf(0, 0x2000), num=8, scale_pidx=4)",
      "ldweights_mx in_dtype=fp8_e4m3 rows=128 cols=32 src=mx1d(data=sbuf(0, 0x0), scale=sbuf(0, 0x4000), num=32)",
      "matmul_mx in_dtype=fp8_e4m3 rows=128 src=mx1d(data=sbuf(0, 0x8000), scale=sbuf(0, 0xc000), num=64) dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[64, 1, 1])",
      "ldweights in_dtype=fp8_e4m3 rows=128 cols=32 perf=quad_row src=mx(data=sbuf(0, 0x0), scale=sbuf(0, 0x4000), num=[32, 1], step_data=32, step_scale=32)",
      "matmul in_dtype=fp8_e4m3 out_dtype=fp32 rows=128 perf=quad_row src=mx(data=sbuf(0, 0x8000), scale=sbuf(0, 0xc000), num=[64, 1], step_data=64, step_scale=64) dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[64, 1, 1])",
      "matmul in_dtype=bf16 out_dtype=fp32 rows=64 src=t3d(sbuf(0, 0x0), num=[32, 1, 1]) dst=t3d(psum(0, 0x0), num=[32, 1, 1])",
      "BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=24; B.DIM LB1=8; B.DIM LB2=32; B.IOR r1, r2; B.IOT T1, mask=1111, <last>, ->T0<1>; BSTOP"
  };

  /* verilator lint_off UNDRIVEN */
  event never;
  /* verilator lint_on UNDRIVEN */
  task automatic finish(input int code);
    tb_exit_code(code);
    $finish;
    @(never);
  endtask

  function automatic int find(input string s, input string pat, input int from = 0);
    for (int i = from; i + pat.len() <= s.len(); i++)
      if (s.substr(i, i + pat.len() - 1) == pat) return i;
    return -1;
  endfunction

  function automatic string hex_bytes(input bit [511:0] w);
    string s = "";
    for (int i = 0; i < 64; i++) s = {s, $sformatf("%02x", w[8*i+:8])};
    return s;
  endfunction

  // A random word: a valid one as it is, with bits flipped, with bytes
  // replaced, with another opcode byte, or all random.
  function automatic bit [511:0] random_word();
    bit [511:0] w = base[$urandom_range(NBASE - 1)];
    int unsigned kind = $urandom_range(99);
    bit [7:0] opcodes[10] = '{8'h7b, 8'he3, 8'h09, 8'h0a, 8'h01, 8'h02, 8'h6a, 8'hbe, 8'hf2, 8'h00};
    if (kind < 10) return w;
    if (kind < 50) begin
      for (int k = 0; k <= $urandom_range(2); k++) w[$urandom_range(511)] ^= 1'b1;
    end else if (kind < 80) begin
      for (int k = 0; k <= $urandom_range(1); k++) w[8*$urandom_range(63)+:8] = 8'($urandom);
    end else if (kind < 90) begin
      w[7:0] = opcodes[$urandom_range(9)];
      if (w[7:0] == 8'h00) w[7:0] = 8'($urandom);
    end else begin
      for (int i = 0; i < 16; i++) w[32*i+:32] = $urandom;
    end
    return w;
  endfunction

  // The package's constants are the library's.
  task automatic check_package();
    string fmts[15] = '{"fp32", "bf16", "fp16", "e4m3", "e5m2", "e3m4", "e2m5", "fp6_e2m3",
                        "fp6_e3m2", "fp4_e2m1", "int4", "nf4", "e8m0", "s8", "u8"};
    int ids[15] = '{TPB_FMT_FP32, TPB_FMT_BF16, TPB_FMT_FP16, TPB_FMT_E4M3, TPB_FMT_E5M2,
                    TPB_FMT_E3M4, TPB_FMT_E2M5, TPB_FMT_FP6_E2M3, TPB_FMT_FP6_E3M2,
                    TPB_FMT_FP4_E2M1, TPB_FMT_INT4, TPB_FMT_NF4, TPB_FMT_E8M0, TPB_FMT_S8,
                    TPB_FMT_U8};
    string arches[4] = '{"sunda", "cayman", "mariana", "maverick"};
    int arch_ids[4] = '{TPB_SUNDA, TPB_CAYMAN, TPB_MARIANA, TPB_MAVERICK};
    int rc;
    string msg;
    for (int i = 0; i < 15; i++)
      if (tpb_dpi_format(fmts[i]) != ids[i]) begin
        $display("tb_check: FAIL: format %s is %0d in the library, %0d in the package", fmts[i],
                 tpb_dpi_format(fmts[i]), ids[i]);
        finish(2);
      end
    for (int i = 0; i < 4; i++)
      if (tpb_dpi_arch(arches[i]) != arch_ids[i]) begin
        $display("tb_check: FAIL: arch %s is %0d in the library, %0d in the package", arches[i],
                 tpb_dpi_arch(arches[i]), arch_ids[i]);
        finish(2);
      end
    rc = tpb_dpi_format("bogus");
    msg = tpb_dpi_last_error();
    if (rc != TPB_EARG || find(msg, "'bogus' is not a format") < 0) begin
      $display("tb_check: FAIL: tpb_dpi_format(\"bogus\") gave %0d, \"%s\"", rc, msg);
      finish(2);
    end
  endtask

  // One generation: the DPI's verdicts, then the CLI's on the same words.
  task automatic check_arch(input string arch_name);
    int arch = tpb_dpi_arch(arch_name);
    string prog = {dir, "/tb_check_", arch_name, ".tpb"};
    string out = {dir, "/tb_check_", arch_name, ".out"};
    string line, cli, dis;
    int fd, n, rc, at, idx, lineno;
    fd = $fopen(prog, "w");
    if (fd == 0) begin
      $display("tb_check: FAIL: cannot write %s", prog);
      finish(2);
    end
    // Word i is on line 2i + 2, after the .engine of its home queue.
    for (int i = 0; i < nwords; i++) begin
      $fdisplay(fd, ".engine %s", home_engine(words[i]));
      n = tpb_dpi_check(arch, words[i]);
      if (n < 0) begin
        $display("tb_check: FAIL: tpb_dpi_check: %s", tpb_dpi_last_error());
        finish(2);
      end
      dpi_names[i] = n == 0 ? "ok" : {"INVALID ", tpb_dpi_check_failed()};
      if (n == 0) valid++;
      $fdisplay(fd, ".raw %s", hex_bytes(words[i]));
    end
    $fclose(fd);
    rc = tb_system({tpbsim, " check ", prog, " --arch ", arch_name, " >", out, " 2>&1"});
    fd = $fopen(out, "r");
    if (fd == 0) begin
      $display("tb_check: FAIL: no output from %s check (exit %0d)", tpbsim, rc);
      finish(2);
    end
    idx = 0;
    while ($fgets(line, fd) != 0) begin
      // "PROG:LINE: pool[i] MNEMONIC: ok" or "...: INVALID a, b", then a summary.
      if (line.len() > 0 && line.getc(line.len() - 1) == "\n") line = line.substr(0, line.len() - 2);
      if (find(line, {prog, ":"}) != 0 || line.len() <= prog.len() + 1) continue;
      if (line.getc(prog.len() + 1) < "0" || line.getc(prog.len() + 1) > "9") continue;  // the summary
      if ($sscanf(line.substr(prog.len() + 1, line.len() - 1), "%d:", lineno) != 1) continue;
      at = find(line, ": ok");
      if (at < 0) at = find(line, ": INVALID ");
      if (at < 0) begin
        $display("tb_check: FAIL: cannot read this line of tpbsim check: %s", line);
        finish(2);
      end
      cli = line.substr(at + 2, line.len() - 1);
      if (lineno != 2 * idx + 2 || idx >= nwords) begin
        $display("tb_check: FAIL: tpbsim check line %0d out of order: %s", 2 * idx + 2, line);
        finish(2);
      end
      checked++;
      if (cli != dpi_names[idx]) begin
        dis = tpb_dpi_disassemble(words[idx]);
        $display("tb_check: MISMATCH on %s, word %0d: tpb_dpi_check says \"%s\", tpbsim check says \"%s\" (.raw %s%s%s)",
                 arch_name, idx, dpi_names[idx], cli, hex_bytes(words[idx]),
                 dis.len() == 0 ? "" : ": ", dis);
        finish(1);
      end
      idx++;
    end
    $fclose(fd);
    if (idx != nwords) begin
      $display("tb_check: FAIL: tpbsim check gave %0d verdicts for %0d words (exit %0d)", idx,
               nwords, rc);
      finish(2);
    end
  endtask

  // The queue of a word (docs/ASM.md, Binaries and engines): the engine
  // its header names, else its opcode's; a DMA descriptor's queue byte.
  function automatic string home_engine(input bit [511:0] w);
    return tpb_dpi_queue(w);
  endfunction

  // The first `n` words run one by one on a core (tpb_dpi_core_*): a word
  // tpb_dpi_check calls invalid faults with exactly those predicates
  // ("... failed NAMES"; an unknown opcode faults at dispatch); a valid one
  // never faults as invalid.
  task automatic check_core(input int n);
    chandle core = tpb_dpi_core_new("mariana", "");
    string names, fault, want;
    bit [511:0] w;
    int rc, k, ran = 0;
    if (core == null) begin
      $display("tb_check: FAIL: tpb_dpi_core_new: %s", tpb_dpi_last_error());
      finish(2);
    end
    // Random valid words may stream for long or wait forever: bounded runs.
    void'(tpb_dpi_core_limits(core, 64'd20_000_000, 10.0));
    for (int i = 0; i < n && i < nwords; i++) begin
      // No semaphore wait or update: the sequencer waits before it checks
      // (SPEC §7), and a run's updates would carry over to the next word.
      w = words[i];
      w[63:32] = '0;
      k = tpb_dpi_check(TPB_MARIANA, w);
      names = tpb_dpi_check_failed();
      rc = tpb_dpi_core_run(core, {".engine ", home_engine(w), "\n.raw ", hex_bytes(w), "\n"});
      fault = tpb_dpi_core_fault(core);
      if (rc == TPB_EARG || rc == TPB_EINTERNAL) begin
        $display("tb_check: FAIL: word %0d: tpb_dpi_core_run: %s", i, tpb_dpi_last_error());
        finish(2);
      end
      // An opcode without a contract (has_known_opcode) faults at dispatch
      // instead: no kernel_info record, or a kernel not modelled (SPEC §7).
      want = names == "has_known_opcode" ? "" : {"failed ", names};
      if (k > 0 && (rc != TPB_EFAULT || tpb_dpi_core_status(core) != "fault" ||
                    fault.len() < want.len() ||
                    (want.len() > 0 &&
                     fault.substr(fault.len() - want.len(), fault.len() - 1) != want))) begin
        $display("tb_check: MISMATCH on the core, word %0d: tpb_dpi_check says \"%s\", the run ended %s: \"%s\" (.raw %s)",
                 i, names, tpb_dpi_core_status(core), fault, hex_bytes(w));
        finish(1);
      end
      if (k == 0 && find(fault, "invalid instruction") >= 0) begin
        $display("tb_check: MISMATCH on the core, word %0d: tpb_dpi_check says valid, the run: \"%s\"",
                 i, fault);
        finish(1);
      end
      ran++;
    end
    if (tpb_dpi_core_free(core) != TPB_OK) begin
      $display("tb_check: FAIL: tpb_dpi_core_free: %s", tpb_dpi_last_error());
      finish(2);
    end
    core_runs = ran;
  endtask

  initial begin
    if (!$value$plusargs("tpbsim=%s", tpbsim)) begin
      $display("tb_check: FAIL: +tpbsim=PATH is required");
      finish(3);
    end
    if ($value$plusargs("dir=%s", dir)) ;
    if ($value$plusargs("seed=%d", seed)) ;
    if ($value$plusargs("words=%d", nwords)) ;
    if ($value$plusargs("core_words=%d", ncore)) ;
    if (nwords == 0 || nwords > MAXWORDS) begin
      $display("tb_check: FAIL: +words=%0d is not 1..%0d", nwords, MAXWORDS);
      finish(3);
    end
    void'($urandom(seed));
    check_package();
    for (int i = 0; i < NBASE; i++)
      if (tpb_dpi_assemble(base_text[i], base[i]) != TPB_OK) begin
        $display("tb_check: FAIL: tpb_dpi_assemble \"%s\": %s", base_text[i], tpb_dpi_last_error());
        finish(2);
      end
    for (int i = 0; i < nwords; i++) words[i] = random_word();
    check_arch("sunda");
    check_arch("cayman");
    check_arch("mariana");
    check_arch("maverick");
    check_core(ncore);
    $display("tb_check: PASS: %0d words x 4 generations, %0d verdicts equal to tpbsim check's (%0d valid); %0d words run on a core, each invalid one faulting with its predicates",
             nwords, checked, valid, core_runs);
    finish(0);
  end

endmodule
