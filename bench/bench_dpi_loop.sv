// The DPI-C calls of bench_dpi.cpp made from SystemVerilog, as a testbench
// makes them: each exported function calls a libtpbsim_dpi function n times
// on changing data and returns a checksum (so that no call can be dropped).
module bench_dpi_loop;
  import tpbsim_dpi_pkg::*;

  export "DPI-C" function sv_dequant_words;
  export "DPI-C" function sv_dequant_chunks;
  export "DPI-C" function sv_quantize_blocks;
  export "DPI-C" function sv_checks;

  // n words of E2M1 group 0 (one code word -> two output words).
  function automatic int unsigned sv_dequant_words(input int n);
    int unsigned lo, hi, sum = 0, w = 32'h9e3779b9;
    for (int i = 0; i < n; i++) begin
      void'(tpb_dpi_dequant_word(TPB_DQ_E2M1_TO_E5M2, 0, 0, w, lo, hi));
      sum += lo ^ hi;
      w = w * 32'd1664525 + 32'd1013904223;
    end
    return sum;
  endfunction

  // n 5-word MX chunks of E2M1 group 8 (8 output words each).
  function automatic int unsigned sv_dequant_chunks(input int n);
    bit [159:0] src = {32'h12345678, 32'h9abcdef0, 32'h0fedcba9, 32'h87654321, 32'h7f7e7d7c};
    bit [255:0] dst;
    int unsigned sum = 0;
    for (int i = 0; i < n; i++) begin
      void'(tpb_dpi_dequant_step(TPB_DQ_E2M1_TO_E5M2, 8, src, dst));
      sum += dst[31:0] ^ dst[255:224];
      src[63:32] = src[63:32] * 32'd1664525 + 32'd1013904223;
    end
    return sum;
  endfunction

  // n QuantizeMX blocks of 32 BF16 elements.
  function automatic int unsigned sv_quantize_blocks(input int n);
    bit [1023:0] in;
    bit [255:0] out;
    byte unsigned scale;
    int unsigned sum = 0, w = 32'h3f80abcd;
    for (int k = 0; k < 32; k++) in[32*k+:32] = {16'b0, 16'h3f80 + 16'(k * 37)};
    for (int i = 0; i < n; i++) begin
      in[15:0] = w[15:0];
      void'(tpb_dpi_quantize_mx(TPB_DTYPE_BF16, TPB_DTYPE_FP8_E4M3, TPB_EMAX_OCP, in, out, scale));
      sum += out[31:0] + 32'(scale);
      w = w * 32'd1664525 + 32'd1013904223;
    end
    return sum;
  endfunction

  // n checks of one 64-byte word with a changing field.
  function automatic int unsigned sv_checks(input int n);
    bit [511:0] word = '0;
    int unsigned sum = 0;
    word[7:0] = 8'h7b;
    word[15:8] = 8'd16;
    for (int i = 0; i < n; i++) begin
      word[8*36+:8] = 8'(i);  // group_size
      sum += 32'(tpb_dpi_check(TPB_MARIANA, word));
    end
    return sum;
  endfunction
endmodule
