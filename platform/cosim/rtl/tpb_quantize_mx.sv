// tpb_quantize_mx: the block datapath of the DVE QuantizeMX (SPEC §4, seed
// 003 §2), written for tpbsim's co-simulation (docs/COSIM.md).
//
// One block per clock: 8 partitions x 4 elements of BF16, FP16 or FP32 in,
// the block's E8M0 scale and 32 FP8 codes out, each side with valid/ready.
// Every element is widened exactly to FP32 fields (FP16 subnormals
// normalised), the scale is the largest biased exponent of the block minus
// emax (E4M3 8, E5M2 15; neuron-alt 7, 14) clamped to [0, 254], and each
// element is divided by 2^(scale-127) and rounded to nearest, ties to even,
// into E4M3 or E5M2 with subnormals, saturated to the largest finite
// magnitude (448 / 57344). A block holding a NaN or an Inf gets scale 0xFF
// and NaN codes 0x7F. No lookup table of results. Interface and timing:
// README.md beside this file.
//
// Test variant (never in the shipped harness), by parameter or by the build
// define that sets its default:
//   MUTANT_DAZ / TPB_MUTANT_DAZ   FP32 / BF16 subnormal inputs read as zero

`ifdef TPB_MUTANT_DAZ
`define TPB_QMX_MUTANT_DAZ 1'b1
`else
`define TPB_QMX_MUTANT_DAZ 1'b0
`endif

module tpb_quantize_mx #(
    parameter bit MUTANT_DAZ = `TPB_QMX_MUTANT_DAZ
) (
    input  logic          clk,
    input  logic          rst_n,      // synchronous, active low
    input  logic [   3:0] in_dtype,   // DTYPE: 8 FP32, 5 BF16, 6 FP16
    input  logic [   3:0] out_dtype,  // DTYPE: 14 (0xE) FP8 E4M3, 15 (0xF) FP8 E5M2
    input  logic          emax_alt,   // 0 ocp (8 / 15), 1 neuron-alt (7 / 14)
    input  logic          in_valid,
    output logic          in_ready,
    input  logic [1023:0] in_data,    // element k of partition r at [32*(4r+k) +: 32]
    output logic          out_valid,
    input  logic          out_ready,
    output logic [   7:0] out_scale,  // E8M0
    output logic [ 255:0] out_data    // partition r's x4 word at [32r +: 32], element k in byte k
);

  localparam logic [3:0] DT_BF16 = 4'h5;
  localparam logic [3:0] DT_FP16 = 4'h6;
  localparam logic [3:0] DT_E4M3 = 4'he;

  // ---------------------------------------------------------------------------
  // Widening: one element -> FP32 sign, biased exponent, fraction (exact).

  // Position of the leading one of a nonzero value (0 when v == 0).
  function automatic logic [4:0] lead_one(input logic [22:0] v);
    logic [4:0] p;
    p = 5'd0;
    for (int i = 0; i < 23; i++) if (v[i]) p = 5'(i);
    return p;
  endfunction

  function automatic logic [31:0] widen(input logic [31:0] raw, input logic [3:0] dt);
    logic        s;
    logic [ 7:0] e;
    logic [22:0] f;
    logic [ 4:0] p;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [22:0] sub;  // its top bits are the subnormal's leading one, dropped
    /* verilator lint_on UNUSEDSIGNAL */
    if (dt == DT_BF16) begin  // BF16 is the top half of FP32
      s = raw[15];
      e = raw[14:7];
      f = {raw[6:0], 16'b0};
    end else if (dt == DT_FP16) begin  // 1-5-10, bias 15
      s = raw[15];
      if (raw[14:10] == 5'd31) begin  // Inf / NaN
        e = 8'hff;
        f = {raw[9:0], 13'b0};
      end else if (raw[14:10] != 5'd0) begin
        e = 8'(raw[14:10]) + 8'd112;
        f = {raw[9:0], 13'b0};
      end else if (raw[9:0] == 10'd0) begin
        e = 8'd0;
        f = 23'd0;
      end else begin  // subnormal m x 2^-24 = 1.f x 2^(p-24), p its leading one
        p   = lead_one({13'b0, raw[9:0]});
        e   = 8'(p) + 8'd103;
        sub = {13'b0, raw[9:0]} << (5'd23 - p);
        f   = sub;
      end
    end else begin  // FP32
      s = raw[31];
      e = raw[30:23];
      f = raw[22:0];
    end
    if (MUTANT_DAZ && e == 8'd0) f = 23'd0;  // mutant: subnormals read as zero
    return {s, e, f};
  endfunction

  // ---------------------------------------------------------------------------
  // One FP32 element x 2^(127 - scale) -> FP8, RNE, saturating.

  function automatic logic [7:0] quant(input logic [31:0] x, input logic [7:0] scale,
                                       input logic e4m3);
    logic               sign;
    logic        [ 7:0] e8;
    logic        [22:0] f;
    logic        [23:0] sig;  // 1.f, normalised
    logic        [ 4:0] p;
    logic signed [10:0] eb;  // biased output exponent of the leading one
    logic        [ 4:0] ebf;
    logic        [ 4:0] sh;
    /* verilator lint_off UNUSEDSIGNAL */
    logic        [31:0] w;  // w[31], the integer bit, is implied by ebf
    /* verilator lint_on UNUSEDSIGNAL */
    logic               lost;
    logic        [ 7:0] kept;
    logic               lsb;
    logic               guard;
    logic               sticky;
    logic               up;
    logic        [ 7:0] mag;
    logic        [ 7:0] maxc;
    sign = x[31];
    e8   = x[30:23];
    f    = x[22:0];
    if (e8 == 8'd0 && f == 23'd0) return {sign, 7'b0};
    // value = 1.sig x 2^(E) with E = e8 - 127 (normal) or p - 149 (subnormal);
    // scaled: E + 127 - scale; output biased: + 7 (E4M3) or + 15 (E5M2).
    if (e8 != 8'd0) begin
      sig = {1'b1, f};
      eb  = 11'(e8) - 11'(scale) + (e4m3 ? 11'sd7 : 11'sd15);
    end else begin
      p   = lead_one(f);
      sig = {1'b0, f} << (5'd23 - p);
      eb  = 11'(p) - 11'sd22 - 11'(scale) + (e4m3 ? 11'sd7 : 11'sd15);
    end
    // Normal: the hidden one stays above the kept bits (sh 0). Subnormal:
    // shift right by 1 - eb so the kept bits are the subnormal's mantissa.
    if (eb >= 11'sd1) begin
      sh  = 5'd0;
      ebf = eb > 11'sd31 ? 5'd31 : eb[4:0];
    end else begin
      sh  = (11'sd1 - eb) > 11'sd31 ? 5'd31 : 5'(11'sd1 - eb);
      ebf = 5'd0;
    end
    w    = {sig, 8'b0} >> sh;
    lost = ({sig, 8'b0} & ~({32{1'b1}} << sh)) != 32'b0;
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
    up   = guard && (sticky || lsb);  // round to nearest, ties to even
    mag  = kept + 8'(up);  // a carry moves into the exponent
    maxc = e4m3 ? 8'h7e : 8'h7b;  // 448 / 57344
    if (eb > (e4m3 ? 11'sd15 : 11'sd30) || mag > maxc) mag = maxc;  // saturate
    return {sign, mag[6:0]};
  endfunction

  // ---------------------------------------------------------------------------
  // Stage 1: widen, block scale. Stage 2: quantize. One block per clock;
  // the pipeline holds when the output is not taken.

  wire          e4m3 = out_dtype == DT_E4M3;
  wire  [  7:0] emax = e4m3 ? (emax_alt ? 8'd7 : 8'd8) : (emax_alt ? 8'd14 : 8'd15);

  logic [1023:0] wide;  // the block as FP32 fields
  logic [   7:0] max_e;
  logic          special;
  logic [   7:0] scale_c;
  always_comb begin
    max_e   = 8'd0;
    special = 1'b0;
    for (int i = 0; i < 32; i++) begin
      wide[32*i+:32] = widen(in_data[32*i+:32], in_dtype);
      if (wide[32*i+23+:8] > max_e) max_e = wide[32*i+23+:8];
      if (wide[32*i+23+:8] == 8'hff) special = 1'b1;
    end
    if (special) scale_c = 8'hff;
    else if (max_e < emax) scale_c = 8'd0;
    else if (max_e - emax > 8'd254) scale_c = 8'd254;
    else scale_c = max_e - emax;
  end

  logic          s1_v;
  logic [1023:0] s1_wide;
  logic [   7:0] s1_scale;
  logic          s2_v;

  wire           s2_ready = !s2_v || out_ready;
  wire           s1_ready = !s1_v || s2_ready;
  assign in_ready  = s1_ready;
  assign out_valid = s2_v;

  logic [255:0] q_c;
  always_comb begin
    for (int i = 0; i < 32; i++)
      q_c[8*i+:8] = s1_scale == 8'hff ? 8'h7f : quant(s1_wide[32*i+:32], s1_scale, e4m3);
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      s1_v      <= 1'b0;
      s1_wide   <= '0;
      s1_scale  <= '0;
      s2_v      <= 1'b0;
      out_scale <= '0;
      out_data  <= '0;
    end else begin
      if (s1_ready) begin
        s1_v <= in_valid;
        if (in_valid) begin
          s1_wide  <= wide;
          s1_scale <= scale_c;
        end
      end
      if (s2_ready) begin
        s2_v <= s1_v;
        if (s1_v) begin
          out_scale <= s1_scale;
          out_data  <= q_c;  // element 4r+k -> byte k of word r
        end
      end
    end
  end

endmodule
