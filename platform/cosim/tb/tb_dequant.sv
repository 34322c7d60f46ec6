// tb_dequant: a SystemVerilog testbench of the tpb_dequant lane that uses
// tpbsim as its reference model through DPI-C (docs/COSIM.md, "Your
// testbench calls the model"). No UVM: a driver, a monitor and a scoreboard
// written as plain SystemVerilog, built with Verilator --timing.
//
// Each stream picks a random format and group, a random range of active
// lanes (the others must stay silent), a random length and random data
// (MX scales near 2^0, deep, huge and 0xFF); the driver offers source words
// with random gaps and holds out_ready low at random (back-pressure). The
// monitor takes every source word a lane accepts and predicts, through the
// model (tpb_dpi_dequant_word per 4-bit code word, tpb_dpi_dequant_step for
// FP6), every output word those words determine; the scoreboard compares
// each output word the lane gives with the model's, in order. A prediction
// is always there by the clock the RTL can give its word, so the first wrong
// word stops the run at once, named with its time, stream, lane and index,
// the model's word and the RTL's, and the source words of its step. A stall,
// a word past the model's or a word from an inactive lane stops it too.
//
// Plusargs: +seed=N (1), +streams=N (200), +lanes_log=FILE (every stream,
// source word and output word, for an independent check), +mutant=rne|nf4
// (the lanes are our RTL's mutant variants: the run must fail).
// Defines: TB_DUT (the lane module, default tpb_dequant), TB_NO_MUTANT (no
// mutant lanes: for a DUT of one's own without our parameters).
// Exit code (tb_exit_code): 0 pass, 1 mismatch, 2 stall or protocol error,
// 3 a bad plusarg.

`ifndef TB_DUT
`define TB_DUT tpb_dequant
`endif

module tb_dequant;
  import tpbsim_dpi_pkg::*;

  // The C++ main (tb_main.cpp) returns this as the process's exit code.
  import "DPI-C" function void tb_exit_code(input int code);

  localparam int NLANES = 8;
  localparam int MAXSTEPS = 24;  // steps per lane per stream
  localparam int STALL_CYCLES = 200;

  logic clk = 1'b0;
  initial forever #5 clk = ~clk;  // 10 ns

  logic rst_n;
  logic [2:0] fmt;
  logic [3:0] group;
  logic [NLANES-1:0] in_valid, in_ready, out_valid, out_ready;
  logic [31:0] in_data[NLANES];
  logic [31:0] out_data[NLANES];

  // The lanes under test, and (unless TB_NO_MUTANT) the same lanes of our
  // RTL's two mutants; +mutant picks which set the testbench talks to.
  logic [NLANES-1:0] rdy[3], vld[3];
  logic [31:0] dat[3][NLANES];
  int sel = 0;

  for (genvar l = 0; l < NLANES; l++) begin : g_lane
    `TB_DUT dut (
        .clk(clk),
        .rst_n(rst_n),
        .fmt(fmt),
        .group(group),
        .in_valid(in_valid[l]),
        .in_ready(rdy[0][l]),
        .in_data(in_data[l]),
        .out_valid(vld[0][l]),
        .out_ready(out_ready[l]),
        .out_data(dat[0][l])
    );
`ifndef TB_NO_MUTANT
    tpb_dequant #(.MUTANT_RNE(1'b1)) mutant_rne (
        .clk(clk),
        .rst_n(rst_n),
        .fmt(fmt),
        .group(group),
        .in_valid(in_valid[l]),
        .in_ready(rdy[1][l]),
        .in_data(in_data[l]),
        .out_valid(vld[1][l]),
        .out_ready(out_ready[l]),
        .out_data(dat[1][l])
    );
    tpb_dequant #(.MUTANT_NF4(1'b1)) mutant_nf4 (
        .clk(clk),
        .rst_n(rst_n),
        .fmt(fmt),
        .group(group),
        .in_valid(in_valid[l]),
        .in_ready(rdy[2][l]),
        .in_data(in_data[l]),
        .out_valid(vld[2][l]),
        .out_ready(out_ready[l]),
        .out_data(dat[2][l])
    );
`else
    assign rdy[1][l] = 1'b0, vld[1][l] = 1'b0, dat[1][l] = '0;
    assign rdy[2][l] = 1'b0, vld[2][l] = 1'b0, dat[2][l] = '0;
`endif
    assign in_ready[l]  = rdy[sel][l];
    assign out_valid[l] = vld[sel][l];
    assign out_data[l]  = dat[sel][l];
  end

  // ---- stimulus state --------------------------------------------------------
  int unsigned seed = 1, nstreams = 200;
  int log_fd = 0;
  int s_fmt, s_group, s_lo, s_n, s_steps, s_src_words, s_dst_words;
  int unsigned src[NLANES][$];  // the source words of each lane
  int in_idx[NLANES];  // source words accepted so far

  // ---- scoreboard state -------------------------------------------------------
  int unsigned step_buf[NLANES][$];  // accepted words of the step in progress
  int unsigned expect_q[NLANES][$];  // predicted output words not yet given
  string step_src[NLANES][$];  // per predicted word, its step's source words (the report)
  int unsigned got_q[NLANES][$];  // output words given, not yet compared
  longint unsigned got_t[NLANES][$];  // and when each was given
  int got_n[NLANES];  // output words given so far
  int out_idx[NLANES];  // output words compared so far
  longint unsigned words_compared = 0;
  int stream_no = 0;

  function automatic string dq_name(int f);
    case (f)
      1: return "E2M1ToE5M2";
      2: return "INT4ToE5M2";
      3: return "NF4ToE4M3";
      default: return "E2M3ToE4M3";
    endcase
  endfunction

  // Ends the run with `code`: the calling process waits here for good, so
  // nothing after a failure runs.
  /* verilator lint_off UNDRIVEN */
  event never;
  /* verilator lint_on UNDRIVEN */
  task automatic finish(input int code);
    if (log_fd != 0) $fclose(log_fd);
    tb_exit_code(code);
    $finish;
    @(never);
  endtask

  // Queues the model's output word `w` of lane l.
  /* verilator lint_off UNUSEDSIGNAL */
  task automatic expect_word(input int l, input int unsigned w, input string srcs);
    expect_q[l].push_back(w);
    step_src[l].push_back(srcs);
  endtask
  /* verilator lint_on UNUSEDSIGNAL */

  task automatic dpi_failed(input string what, input int rc);
    $display("tb_dequant: FAIL: %s returned %0d: %s", what, rc, tpb_dpi_last_error());
    finish(2);
  endtask

  // Lane l took source word w: predict every output word that the words
  // taken so far determine, through the model, so that each output word has
  // its prediction by the clock the RTL can give it. 4-bit formats: a code
  // word gives its two output words (tpb_dpi_dequant_word; MX with its
  // scale byte, word 0 of the chunk). FP6: output word k covers bits
  // [24k, 24k+24) of the step's 96, so it is known once the source word
  // holding bit 24k+23 is in (tpb_dpi_dequant_step on the words so far).
  task automatic on_source(input int l, input int unsigned w);
    bit [159:0] in = '0;
    /* verilator lint_off UNUSEDSIGNAL */
    bit [255:0] out;  // FP6 gives 4 words of the 8
    /* verilator lint_on UNUSEDSIGNAL */
    int unsigned lo, hi;
    int k, rc;
    string srcs = "";
    step_buf[l].push_back(w);
    k = step_buf[l].size() - 1;
    for (int i = 0; i < step_buf[l].size(); i++) begin
      in[32*i+:32] = step_buf[l][i];
      srcs = {srcs, $sformatf(" 0x%08x", step_buf[l][i])};
    end
    if (s_fmt == TPB_DQ_E2M3_TO_E4M3) begin
      rc = tpb_dpi_dequant_step(s_fmt, s_group, in, out);
      if (rc != 4) dpi_failed("tpb_dpi_dequant_step", rc);
      // Word 0 needs bits 0-23 (source word 0), word 1 bits 24-47 (words
      // 0-1), words 2 and 3 bits 48-95 (words 1-2).
      if (k == 0) expect_word(l, out[31:0], srcs);
      if (k == 1) expect_word(l, out[63:32], srcs);
      if (k == 2) begin
        expect_word(l, out[95:64], srcs);
        expect_word(l, out[127:96], srcs);
      end
    end else if (s_group == 0 || k > 0) begin
      rc = tpb_dpi_dequant_word(s_fmt, s_group, s_group == 8 ? int'(step_buf[l][0] >> (8 * (k - 1))) & 255 : 0,
                                w, lo, hi);
      if (rc != TPB_OK) dpi_failed("tpb_dpi_dequant_word", rc);
      expect_word(l, lo, srcs);
      expect_word(l, hi, srcs);
    end
    if (step_buf[l].size() == s_src_words) step_buf[l].delete();
  endtask

  // Compares lane l's output words with the model's, in order, as far as
  // both have them: the RTL may give a step's first words before it has
  // taken the step's last source word (FP6, MX), so a word waits for its
  // prediction or the prediction for its word.
  task automatic drain(input int l);
    int unsigned want, got;
    longint unsigned t;
    string srcs;
    while (expect_q[l].size() != 0 && got_q[l].size() != 0) begin
      want = expect_q[l].pop_front();
      srcs = step_src[l].pop_front();
      got  = got_q[l].pop_front();
      t    = got_t[l].pop_front();
      words_compared++;
      if (got != want) begin
        $display("tb_dequant: MISMATCH at %0d ns: stream %0d (%s group %0d, lanes %0d..%0d), lane %0d, word %0d: expected 0x%08x, got 0x%08x (source words%s)",
                 t, stream_no, dq_name(s_fmt), s_group, s_lo, s_lo + s_n - 1, l, out_idx[l],
                 want, got, srcs);
        if (log_fd != 0)
          $fdisplay(log_fd, "E %0d %0d %0d %08x %08x", stream_no, l, out_idx[l], want, got);
        finish(1);
      end
      out_idx[l]++;
    end
  endtask

  // A random E8M0 scale byte: near 2^0, deep (subnormal results), huge
  // (saturation) or NaN.
  function automatic bit [7:0] rand_scale();
    int unsigned p = $urandom_range(7);
    if (p == 0) return 8'hff;
    if (p == 1) return 8'(100 + $urandom_range(19));
    if (p == 2) return 8'(135 + $urandom_range(19));
    return 8'(120 + $urandom_range(15));
  endfunction

  task automatic new_stream();
    s_fmt = 1 + $urandom_range(3);
    s_group = (s_fmt != 4 && $urandom_range(1) == 1) ? 8 : 0;
    s_src_words = s_group == 8 ? 5 : s_fmt == 4 ? 3 : 1;
    s_dst_words = s_group == 8 ? 8 : s_fmt == 4 ? 4 : 2;
    s_n = 1 + $urandom_range(NLANES - 1);
    s_lo = $urandom_range(NLANES - s_n);
    s_steps = 1 + $urandom_range(MAXSTEPS - 1);
    stream_no++;
    if (log_fd != 0)
      $fdisplay(log_fd, "S %0d %0d %0d %0d %0d %0d", stream_no, s_fmt, s_group, s_lo, s_n, s_steps);
    for (int l = 0; l < NLANES; l++) begin
      src[l].delete();
      step_buf[l].delete();
      expect_q[l].delete();
      step_src[l].delete();
      got_q[l].delete();
      got_t[l].delete();
      got_n[l] = 0;
      in_idx[l] = 0;
      out_idx[l] = 0;
      if (l < s_lo || l >= s_lo + s_n) continue;
      for (int k = 0; k < s_steps * s_src_words; k++)
        src[l].push_back(s_group == 8 && k % 5 == 0 ?
                         {rand_scale(), rand_scale(), rand_scale(), rand_scale()} : $urandom);
      if (log_fd != 0)
        for (int k = 0; k < src[l].size(); k++) $fdisplay(log_fd, "I %0d %08x", l, src[l][k]);
    end
  endtask

  function automatic bit active(input int l);
    return l >= s_lo && l < s_lo + s_n;
  endfunction

  function automatic bit stream_done();
    for (int l = s_lo; l < s_lo + s_n; l++)
      if (in_idx[l] < src[l].size() || out_idx[l] < s_steps * s_dst_words) return 1'b0;
    return 1'b1;
  endfunction

  // One clock: drive after the falling edge, sample the handshakes just
  // before the rising edge (what moves on that edge), then the edge.
  // Returns whether any word moved.
  task automatic cycle(input int p_valid, input int p_ready, output bit moved);
    bit take_in[NLANES], take_out[NLANES];
    int unsigned got[NLANES];
    @(negedge clk);
    rst_n = 1'b1;
    for (int l = 0; l < NLANES; l++) begin
      bit more;
      more = active(l) && in_idx[l] < src[l].size();
      in_valid[l]  = more && $urandom_range(99) < p_valid;
      in_data[l]   = more ? src[l][in_idx[l]] : $urandom;
      out_ready[l] = $urandom_range(99) < p_ready;
    end
    #4;
    moved = 1'b0;
    for (int l = 0; l < NLANES; l++) begin
      take_in[l]  = in_valid[l] && in_ready[l];
      take_out[l] = out_valid[l] && out_ready[l];
      got[l]      = out_data[l];
      if (out_valid[l] && !active(l)) begin
        $display("tb_dequant: FAIL at %0d ns: stream %0d, lane %0d is not active but offers 0x%08x",
                 $time, stream_no, l, out_data[l]);
        finish(2);
      end
    end
    @(posedge clk);
    for (int l = 0; l < NLANES; l++) begin
      if (take_in[l]) begin
        on_source(l, src[l][in_idx[l]]);
        in_idx[l]++;
        moved = 1'b1;
      end
      if (take_out[l]) begin
        if (log_fd != 0) $fdisplay(log_fd, "O %0d %0d %08x", l, got_n[l], got[l]);
        if (got_n[l] == s_steps * s_dst_words) begin
          $display("tb_dequant: FAIL at %0d ns: stream %0d, lane %0d gives output word %0d (0x%08x) past the model's %0d",
                   $time, stream_no, l, got_n[l], got[l], s_steps * s_dst_words);
          finish(2);
        end
        got_q[l].push_back(got[l]);
        got_t[l].push_back($time);
        got_n[l]++;
        moved = 1'b1;
      end
      drain(l);
    end
  endtask

  initial begin
    string mutant, path;
    int unsigned idle;
    bit moved;
    int p_valid, p_ready;
    if ($value$plusargs("seed=%d", seed)) ;
    if ($value$plusargs("streams=%d", nstreams)) ;
    if ($value$plusargs("mutant=%s", mutant)) begin
`ifdef TB_NO_MUTANT
      $display("tb_dequant: FAIL: +mutant: built with TB_NO_MUTANT");
      finish(3);
`endif
      if (mutant == "rne") sel = 1;
      else if (mutant == "nf4") sel = 2;
      else begin
        $display("tb_dequant: FAIL: +mutant=%s is not rne or nf4", mutant);
        finish(3);
      end
    end
    if ($value$plusargs("lanes_log=%s", path)) begin
      log_fd = $fopen(path, "w");
      if (log_fd == 0) begin
        $display("tb_dequant: FAIL: cannot write %s", path);
        finish(3);
      end
    end
    void'($urandom(seed));
    $display("tb_dequant: %s, seed %0d, %0d streams, %0d lanes, %s", tpb_dpi_version(), seed,
             nstreams, NLANES, sel == 0 ? `"`TB_DUT`" : sel == 1 ? "mutant rne" : "mutant nf4");
    in_valid = '0;
    out_ready = '0;
    rst_n = 1'b0;
    for (int s = 0; s < nstreams; s++) begin
      new_stream();
      // One reset cycle with the stream's format and group (the lane's contract).
      @(negedge clk);
      rst_n = 1'b0;
      fmt = 3'(s_fmt);
      group = 4'(s_group);
      in_valid = '0;
      @(posedge clk);
      // Each stream its own traffic: from always-on to sparse.
      p_valid = 30 + $urandom_range(70);
      p_ready = 30 + $urandom_range(70);
      idle = 0;
      while (!stream_done()) begin
        cycle(p_valid, p_ready, moved);
        idle = moved ? 0 : idle + 1;
        if (idle > STALL_CYCLES) begin
          for (int l = s_lo; l < s_lo + s_n; l++)
            $display("tb_dequant: FAIL at %0d ns: stream %0d, lane %0d stalled after %0d of %0d source words and %0d of %0d output words",
                     $time, stream_no, l, in_idx[l], src[l].size(), out_idx[l], s_steps * s_dst_words);
          finish(2);
        end
      end
      // Then no lane may offer another word.
      for (int k = 0; k < 4; k++) begin
        cycle(0, 0, moved);
        for (int l = 0; l < NLANES; l++)
          if (out_valid[l]) begin
            $display("tb_dequant: FAIL at %0d ns: stream %0d, lane %0d offers a word past the model's %0d (0x%08x)",
                     $time, stream_no, l, out_idx[l], out_data[l]);
            finish(2);
          end
      end
    end
    $display("tb_dequant: PASS: %0d streams, %0d output words compared, 0 mismatches", nstreams,
             words_compared);
    finish(0);
  end

endmodule
