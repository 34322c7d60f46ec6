// tpb_dequant: one partition lane of the POOL TensorDequantize datapath
// (SPEC §3, seed 000), written for tpbsim's co-simulation (docs/COSIM.md).
//
// 32-bit source words in and 32-bit FP8 words out, each with valid/ready;
// every output byte is computed in logic: the code is decoded to sign,
// exponent and fraction (FP4 E2M1, INT4, the NF4 codebook as FP32 constants,
// FP6 E2M3), the E8M0 scale is added to the exponent, and the value is
// rounded to nearest-even into E5M2 / E4M3 and saturated to the largest
// finite magnitude. Interface and timing: README.md beside this file.
//
// Test variants (never in the shipped harness), by parameter or by the
// build define that sets its default:
//   MUTANT_RNE / TPB_MUTANT_RNE   rounding ties go to the odd code instead of the even one
//   MUTANT_NF4 / TPB_MUTANT_NF4   NF4 codebook entry 13 has its top fraction bit flipped
//   THROTTLE   / TPB_THROTTLE     in_ready is high one cycle in four (a slow DUT)

`ifdef TPB_MUTANT_RNE
`define TPB_DQ_MUTANT_RNE 1'b1
`else
`define TPB_DQ_MUTANT_RNE 1'b0
`endif
`ifdef TPB_MUTANT_NF4
`define TPB_DQ_MUTANT_NF4 1'b1
`else
`define TPB_DQ_MUTANT_NF4 1'b0
`endif
`ifdef TPB_THROTTLE
`define TPB_DQ_THROTTLE 1'b1
`else
`define TPB_DQ_THROTTLE 1'b0
`endif

module tpb_dequant #(
    parameter bit MUTANT_RNE = `TPB_DQ_MUTANT_RNE,
    parameter bit MUTANT_NF4 = `TPB_DQ_MUTANT_NF4,
    parameter bit THROTTLE   = `TPB_DQ_THROTTLE
) (
    input  logic        clk,
    input  logic        rst_n,      // synchronous, active low
    input  logic [ 2:0] fmt,        // DEQUANT_FMT: 1 E2M1->E5M2, 2 INT4->E5M2, 3 NF4->E4M3, 4 E2M3->E4M3
    input  logic [ 3:0] group,      // group_size: 0, or 8 (MX, 4-bit formats only)
    input  logic        in_valid,
    output logic        in_ready,
    input  logic [31:0] in_data,
    output logic        out_valid,
    input  logic        out_ready,
    output logic [31:0] out_data
);

  // ---------------------------------------------------------------------------
  // One code -> one FP8 byte.

  // The QLoRA NF4 codebook (index 7 = 0.0) as FP32 bit patterns.
  function automatic logic [31:0] nf4_fp32(input logic [3:0] idx);
    logic [31:0] v;
    case (idx)
      4'd0:    v = 32'hbf800000;  // -1.0
      4'd1:    v = 32'hbf3239b1;  // -0.6961928009986877
      4'd2:    v = 32'hbf066b30;  // -0.5250730514526367
      4'd3:    v = 32'hbeca32a0;  // -0.39491748809814453
      4'd4:    v = 32'hbe91a24d;  // -0.28444138169288635
      4'd5:    v = 32'hbe3d353f;  // -0.18477343022823334
      4'd6:    v = 32'hbdba7871;  // -0.09105003625154495
      4'd7:    v = 32'h00000000;  // 0.0
      4'd8:    v = 32'h3da2faff;  // 0.07958029955625534
      4'd9:    v = 32'h3e24cae3;  // 0.16093020141124725
      4'd10:   v = 32'h3e7c04dd;  // 0.24611230194568634
      4'd11:   v = 32'h3ead033a;  // 0.33791524171829224
      4'd12:   v = 32'h3ee1a4b8;  // 0.44070982933044434
      // 0.5626170039176941 (the mutant: its top fraction bit flipped)
      4'd13:   v = MUTANT_NF4 ? 32'h3f1007ab ^ 32'h00400000 : 32'h3f1007ab;
      4'd14:   v = 32'h3f3913b3;  // 0.7229568362236023
      default: v = 32'h3f800000;  // 1.0
    endcase
    return v;
  endfunction

  // Position of the leading one of a nonzero 4-bit magnitude m (given as
  // m[3:1]; 0 when none of them is set, i.e. m == 1).
  function automatic logic [1:0] lead4(input logic [3:1] m);
    if (m[3]) return 2'd3;
    if (m[2]) return 2'd2;
    if (m[1]) return 2'd1;
    return 2'd0;
  endfunction

  // Decodes `code` of format `f` to (sign, zero, unbiased exponent, 23-bit
  // fraction of 1.f), then scales by 2^(scale-127) when `mx`, rounds RNE to
  // E5M2 (f 1, 2) or E4M3 (f 3, 4) and saturates. scale 0xFF gives NaN 0x7F.
  function automatic logic [7:0] cvt(input logic [5:0] code, input logic [2:0] f,
                                     input logic mx, input logic [7:0] scale);
    logic               sign;
    logic               zero;
    logic signed [ 9:0] e;
    logic        [22:0] frac;
    logic        [ 3:0] mag;
    logic        [ 1:0] p;
    logic        [31:0] nf;
    logic               e4m3;
    logic signed [ 9:0] eb;
    logic        [ 4:0] ebf;
    logic        [ 5:0] sh;
    /* verilator lint_off UNUSEDSIGNAL */
    logic        [31:0] w;  // w[31], the integer bit, is implied by ebf
    /* verilator lint_on UNUSEDSIGNAL */
    logic               lost;
    logic        [ 7:0] kept;
    logic               lsb;
    logic               guard;
    logic               sticky;
    logic               up;
    logic        [ 7:0] mag8;
    logic        [ 7:0] maxc;
    sign = 1'b0;
    zero = 1'b1;
    e    = '0;
    frac = '0;
    mag  = '0;
    p    = '0;
    nf   = '0;
    case (f)
      3'd1: begin  // FP4 E2M1 [s|e:2|m:1], bias 1, no Inf/NaN
        sign = code[3];
        zero = code[2:0] == 3'b000;
        if (code[2:1] == 2'b00) begin
          e    = -10'sd1;  // subnormal 0.5 = 1.0 x 2^-1
          frac = '0;
        end else begin
          e    = 10'(code[2:1]) - 10'sd1;
          frac = {code[0], 22'b0};
        end
      end
      3'd2: begin  // INT4, two's complement -8..7: the integer is the value
        sign = code[3];
        mag  = code[3] ? 4'(-code[3:0]) : code[3:0];
        zero = mag == 4'd0;
        p    = lead4(mag[3:1]);
        e    = 10'(p);
        frac = 23'({mag, 23'b0} >> p);
      end
      3'd3: begin  // NF4: a codebook index, not a bit field
        nf   = nf4_fp32(code[3:0]);
        sign = nf[31];
        zero = nf[30:0] == 31'b0;
        e    = 10'(nf[30:23]) - 10'sd127;
        frac = nf[22:0];
      end
      default: begin  // FP6 E2M3 [s|e:2|m:3], bias 1, no Inf/NaN
        sign = code[5];
        zero = code[4:0] == 5'b0;
        if (code[4:3] == 2'b00) begin  // subnormal m/8
          p    = lead4({1'b0, code[2:1]});
          e    = 10'(p) - 10'sd3;
          frac = 23'({1'b0, code[2:0], 23'b0} >> p);
        end else begin
          e    = 10'(code[4:3]) - 10'sd1;
          frac = {code[2:0], 20'b0};
        end
      end
    endcase

    e4m3 = f == 3'd3 || f == 3'd4;
    // Biased output exponent of 1.f x 2^(e + scale - 127).
    eb   = e + (mx ? 10'(scale) - 10'sd127 : 10'sd0) + (e4m3 ? 10'sd7 : 10'sd15);
    // Normal: the hidden one stays above the kept bits (sh 0). Subnormal:
    // shift right by 1 - eb so the kept bits are the subnormal's mantissa.
    if (eb >= 10'sd1) begin
      sh  = 6'd0;
      ebf = eb > 10'sd31 ? 5'd31 : eb[4:0];
    end else begin
      sh  = (10'sd1 - eb) > 10'sd40 ? 6'd40 : 6'(10'sd1 - eb);
      ebf = 5'd0;
    end
    // Binary point after bit 31: w = 1.f x 2^-sh; `lost` = bits shifted out.
    w    = {1'b1, frac, 8'b0} >> sh;
    lost = ({1'b1, frac, 8'b0} & ~({32{1'b1}} << sh)) != 32'b0;
    if (e4m3) begin  // 3 mantissa bits: w[30:28]
      kept   = {1'b0, ebf[3:0], w[30:28]};
      lsb    = w[28];
      guard  = w[27];
      sticky = w[26:0] != 27'b0 || lost;
    end else begin  // E5M2, 2 mantissa bits: w[30:29]
      kept   = {1'b0, ebf, w[30:29]};
      lsb    = w[29];
      guard  = w[28];
      sticky = w[27:0] != 28'b0 || lost;
    end
    // Round to nearest, ties to even (the mutant: ties to odd).
    up   = guard && (sticky || (MUTANT_RNE ? !lsb : lsb));
    mag8 = 8'(kept) + 8'(up);  // a carry moves into the exponent
    maxc = e4m3 ? 8'h7e : 8'h7b;  // 448 / 57344
    if (eb > (e4m3 ? 10'sd15 : 10'sd30) || mag8 > maxc) mag8 = maxc;  // saturate

    if (mx && scale == 8'hff) return 8'h7f;  // E8M0 NaN
    if (zero) return {sign, 7'b0};
    return {sign, mag8[6:0]};
  endfunction

  // ---------------------------------------------------------------------------
  // Stream control.

  wire        fp6 = fmt == 3'd4;
  wire        mx = group == 4'd8 && !fp6;

  // 4-bit path: a stage word emits its low half (codes 0..3) then its high
  // half (codes 4..7); an MX chunk's scale word goes to scale_q and each code
  // word takes its own scale byte into the stage.
  logic        stage_v;
  logic        stage_half;
  logic [31:0] stage_w;
  logic [ 7:0] stage_scale;
  logic [ 2:0] mx_pos;  // 0: the next word is a scale word (MX)
  logic [31:0] scale_q;

  // FP6 path: a little-endian bit string; each output takes 24 bits.
  logic [63:0] bits_q;
  logic [ 6:0] count_q;

  wire         out_fire = out_valid && out_ready;
  wire         in_fire = in_valid && in_ready;
  wire         scale_word = mx && mx_pos == 3'd0;
  wire  [ 6:0] count_after = count_q - (fp6 && out_fire ? 7'd24 : 7'd0);
  logic        ready_raw;

  always_comb begin
    if (fp6) ready_raw = count_after <= 7'd32;
    else if (scale_word) ready_raw = 1'b1;
    else ready_raw = !stage_v || (stage_half && out_fire);
  end

  if (THROTTLE) begin : g_throttle
    logic [1:0] throttle_q;
    always_ff @(posedge clk) throttle_q <= rst_n ? throttle_q + 2'd1 : 2'd0;
    assign in_ready = ready_raw && throttle_q == 2'd0;
  end else begin : g_no_throttle
    assign in_ready = ready_raw;
  end

  assign out_valid = fp6 ? count_q >= 7'd24 : stage_v;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      stage_v     <= 1'b0;
      stage_half  <= 1'b0;
      stage_w     <= '0;
      stage_scale <= '0;
      mx_pos      <= '0;
      scale_q     <= '0;
      bits_q      <= '0;
      count_q     <= '0;
    end else if (fp6) begin
      bits_q  <= (out_fire ? bits_q >> 24 : bits_q) |
                 (in_fire ? {32'b0, in_data} << count_after : 64'b0);
      count_q <= count_after + (in_fire ? 7'd32 : 7'd0);
    end else begin
      if (out_fire) begin
        if (stage_half) stage_v <= 1'b0;
        else stage_half <= 1'b1;
      end
      if (in_fire && scale_word) begin
        scale_q <= in_data;
        mx_pos  <= 3'd1;
      end else if (in_fire) begin
        stage_w     <= in_data;
        stage_v     <= 1'b1;
        stage_half  <= 1'b0;
        case (mx_pos)
          3'd1: stage_scale <= scale_q[7:0];
          3'd2: stage_scale <= scale_q[15:8];
          3'd3: stage_scale <= scale_q[23:16];
          3'd4: stage_scale <= scale_q[31:24];
          default: stage_scale <= 8'd127;  // group 0: 2^0 (unused)
        endcase
        mx_pos      <= mx && mx_pos != 3'd4 ? mx_pos + 3'd1 : 3'd0;
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Four converters, one per output byte.

  logic [23:0] codes;  // four codes of up to 6 bits, code k at [6k +: 6]
  always_comb begin
    if (fp6) codes = bits_q[23:0];
    else begin
      for (int k = 0; k < 4; k++)
        codes[6*k+:6] = {2'b00, stage_half ? stage_w[16+4*k+:4] : stage_w[4*k+:4]};
    end
  end

  always_comb begin
    for (int k = 0; k < 4; k++) out_data[8*k+:8] = cvt(codes[6*k+:6], fmt, mx, stage_scale);
  end

endmodule
