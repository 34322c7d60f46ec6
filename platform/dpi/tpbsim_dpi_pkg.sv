// tpbsim_dpi_pkg: the DPI-C imports of libtpbsim_dpi (tpbsim_dpi.h, where
// every function is described), for a testbench that uses tpbsim as its
// reference model and scoreboard (docs/COSIM.md). Link the testbench with
// libtpbsim_dpi.so (Verilator: pass it to the link; other simulators: -sv_lib
// tpbsim_dpi).
//
// Every function that can fail returns a status: >= 0 ok (TPB_OK, or a
// count), < 0 an error whose message is tpb_dpi_last_error().
package tpbsim_dpi_pkg;
  // A testbench uses some of these names, never all of them.
  /* verilator lint_off UNUSEDPARAM */

  // Status codes.
  localparam int TPB_OK = 0;
  localparam int TPB_EARG = -1;  // an argument outside its domain
  localparam int TPB_EINTERNAL = -2;  // the model raised an error
  localparam int TPB_EFAULT = -3;  // a core run ended in a fault, deadlock or watchdog
  localparam int TPB_ERACE = -4;   // a core run with the race check found a race

  // Format ids of tpb_dpi_from_fp32 / tpb_dpi_to_fp32 (tpb_dpi_format(name) gives the same).
  localparam int TPB_FMT_FP32 = 0;
  localparam int TPB_FMT_BF16 = 1;
  localparam int TPB_FMT_FP16 = 2;
  localparam int TPB_FMT_E4M3 = 3;
  localparam int TPB_FMT_E5M2 = 4;
  localparam int TPB_FMT_E3M4 = 5;
  localparam int TPB_FMT_E2M5 = 6;
  localparam int TPB_FMT_FP6_E2M3 = 7;
  localparam int TPB_FMT_FP6_E3M2 = 8;
  localparam int TPB_FMT_FP4_E2M1 = 9;
  localparam int TPB_FMT_INT4 = 10;
  localparam int TPB_FMT_NF4 = 11;
  localparam int TPB_FMT_E8M0 = 12;
  localparam int TPB_FMT_S8 = 13;
  localparam int TPB_FMT_U8 = 14;

  // DEQUANT_FMT (SPEC §3).
  localparam int TPB_DQ_E2M1_TO_E5M2 = 1;
  localparam int TPB_DQ_INT4_TO_E5M2 = 2;
  localparam int TPB_DQ_NF4_TO_E4M3 = 3;
  localparam int TPB_DQ_E2M3_TO_E4M3 = 4;

  // DTYPE ordinals (SPEC §2) of QuantizeMX.
  localparam int TPB_DTYPE_BF16 = 'h5;
  localparam int TPB_DTYPE_FP16 = 'h6;
  localparam int TPB_DTYPE_FP32 = 'h8;
  localparam int TPB_DTYPE_FP8_E4M3 = 'he;
  localparam int TPB_DTYPE_FP8_E5M2 = 'hf;
  localparam int TPB_EMAX_OCP = 0;
  localparam int TPB_EMAX_NEURON_ALT = 1;

  // TQUANT (SPEC §6): B.DATR destination types, RMode, flag bits.
  localparam int TPB_TQ_S8 = 4;
  localparam int TPB_TQ_U8 = 5;
  localparam int TPB_RNE = 0;
  localparam int TPB_RTZ = 1;
  localparam int TPB_RDN = 2;
  localparam int TPB_RUP = 3;
  localparam int TPB_RMM = 4;
  localparam int TPB_FLAG_INEXACT = 1;
  localparam int TPB_FLAG_SATURATED = 2;
  localparam int TPB_FLAG_WRAPPED = 4;

  // Generations (NeuronCore version).
  localparam int TPB_SUNDA = 2;
  localparam int TPB_CAYMAN = 3;
  localparam int TPB_MARIANA = 4;
  localparam int TPB_MAVERICK = 5;

  /* verilator lint_on UNUSEDPARAM */

  import "DPI-C" function string tpb_dpi_last_error();
  import "DPI-C" function string tpb_dpi_version();

  // Numeric formats.
  import "DPI-C" function int tpb_dpi_format(input string name);
  import "DPI-C" function int tpb_dpi_from_fp32(input int format, input int unsigned fp32_bits,
                                                input int saturate, output int unsigned code);
  import "DPI-C" function int tpb_dpi_to_fp32(input int format, input int unsigned code,
                                              output int unsigned fp32_bits);

  // TensorDequantize: src word i at src[32*i +: 32], output word i at dst[32*i +: 32].
  import "DPI-C" function int tpb_dpi_dequant_step(input int fmt, input int group,
                                                   input bit [159:0] src, output bit [255:0] dst);
  import "DPI-C" function int tpb_dpi_dequant_word(input int fmt, input int group, input int scale,
                                                   input int unsigned src,
                                                   output int unsigned out_lo,
                                                   output int unsigned out_hi);

  // QuantizeMX: element k of partition r at in[32*(4*r+k) +: 32]; partition r's x4 word at
  // out[32*r +: 32].
  import "DPI-C" function int tpb_dpi_quantize_mx(input int in_dtype, input int out_dtype,
                                                  input int emax, input bit [1023:0] in,
                                                  output bit [255:0] out,
                                                  output byte unsigned scale);

  // TQUANT of one element.
  import "DPI-C" function int tpb_dpi_tquant(input int unsigned x, input int unsigned multiplier,
                                             input int zero_point, input int dtype,
                                             input int rmode, input int sat,
                                             output byte unsigned result, output int flags);

  // Instruction words: byte i at word[8*i +: 8].
  import "DPI-C" function int tpb_dpi_arch(input string name);
  import "DPI-C" function int tpb_dpi_check(input int arch, input bit [511:0] word);
  import "DPI-C" function string tpb_dpi_check_failed();
  import "DPI-C" function int tpb_dpi_assemble(input string statement, output bit [511:0] word);
  import "DPI-C" function string tpb_dpi_disassemble(input bit [511:0] word);
  import "DPI-C" function string tpb_dpi_queue(input bit [511:0] word);

  // A core (the run API's): programs one after another, memories and time carried over.
  import "DPI-C" function chandle tpb_dpi_core_new(input string arch, input string timing_file);
  import "DPI-C" function int tpb_dpi_core_free(input chandle core);
  // nbytes (1..64) of memory "sbuf" or "psum"; byte i at data[8*i +: 8].
  import "DPI-C" function int tpb_dpi_core_write(input chandle core, input string mem,
                                                 input int partition, input int offset,
                                                 input bit [511:0] data, input int nbytes);
  import "DPI-C" function int tpb_dpi_core_read(input chandle core, input string mem,
                                                input int partition, input int offset,
                                                output bit [511:0] data, input int nbytes);
  import "DPI-C" function int tpb_dpi_core_write32(input chandle core, input string mem,
                                                   input int partition, input int offset,
                                                   input int unsigned value);
  import "DPI-C" function int tpb_dpi_core_read32(input chandle core, input string mem,
                                                  input int partition, input int offset,
                                                  output int unsigned value);
  // "sbuf:P:OFF=FILE.npy", "sbuf:P:OFF:ROWSxCOLS:DTYPE=FILE.npy", "tile:N=FILE.npy".
  import "DPI-C" function int tpb_dpi_core_load_npy(input chandle core, input string spec);
  import "DPI-C" function int tpb_dpi_core_dump_npy(input chandle core, input string spec);
  // Watchdogs of every later run: simulated ps, host seconds (0: off).
  import "DPI-C" function int tpb_dpi_core_limits(input chandle core, input longint max_sim_ps,
                                                  input real max_wall_seconds);
  // The race check of every later run (SPEC §14): on != 0 checks.
  import "DPI-C" function int tpb_dpi_core_racecheck(input chandle core, input int on);
  // TPB_OK, TPB_EFAULT (fault, deadlock, watchdog: tpb_dpi_core_fault), TPB_ERACE (races:
  // tpb_dpi_core_races, tpb_dpi_core_race), TPB_EARG (bad program).
  import "DPI-C" function int tpb_dpi_core_run(input chandle core, input string text);
  import "DPI-C" function int tpb_dpi_core_run_file(input chandle core, input string path);
  import "DPI-C" function string tpb_dpi_core_status(input chandle core);
  import "DPI-C" function string tpb_dpi_core_fault(input chandle core);
  import "DPI-C" function longint tpb_dpi_core_time_ps(input chandle core);
  import "DPI-C" function longint tpb_dpi_core_instructions(input chandle core);
  import "DPI-C" function longint tpb_dpi_core_races(input chandle core);
  import "DPI-C" function string tpb_dpi_core_race(input chandle core, input int i);

  // The failed predicate names of `word` on `arch` ("" when valid; "error: MESSAGE"
  // when the arguments are wrong).
  function automatic string tpb_check_names(input int arch, input bit [511:0] word);
    if (tpb_dpi_check(arch, word) < 0) return {"error: ", tpb_dpi_last_error()};
    return tpb_dpi_check_failed();
  endfunction

endpackage
