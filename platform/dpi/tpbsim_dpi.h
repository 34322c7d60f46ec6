/* libtpbsim_dpi: tpbsim as a reference model for a verification engineer's
 * own testbench (docs/COSIM.md, "Your testbench calls the model"). Every
 * function here is a plain C function that a SystemVerilog testbench imports
 * through DPI-C (tpbsim_dpi_pkg.sv declares them all) and that any C or C++
 * program may call directly.
 *
 * Types are the DPI-C mapping of the SystemVerilog types of the package:
 * int -> int, int unsigned -> unsigned int, byte unsigned -> unsigned char,
 * string -> const char*, chandle -> void*, and a packed bit vector
 * (bit [N-1:0]) -> an array of ceil(N/32) unsigned int, bits [31:0] first
 * (svBitVecVal). A 64-byte instruction word is bit [511:0] with byte i at
 * bits [8i+7:8i].
 *
 * Errors: every function that can fail returns an int status, 0 (TPB_DPI_OK)
 * or more on success and a negative TPB_DPI_E* code on failure, and
 * tpb_dpi_last_error() is the message of the calling thread's last such call
 * ("" when it succeeded). No
 * function throws, aborts or exits: every exception of the model is caught at
 * this boundary. Returned strings belong to the library and stay valid until
 * the calling thread's next call of the same function.
 *
 * The per-transaction functions (formats, TensorDequantize, QuantizeMX,
 * TQUANT, check, assemble) keep no state and may be called from any thread;
 * the core's functions from one thread at a time.
 */
#ifndef TPBSIM_DPI_H_
#define TPBSIM_DPI_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. */
#define TPB_DPI_OK 0
#define TPB_DPI_EARG (-1)      /* an argument outside its domain (the message names it) */
#define TPB_DPI_EINTERNAL (-2) /* the model raised an error (the message is the model's) */
#define TPB_DPI_EFAULT (-3)    /* a core run ended in a fault, deadlock or watchdog */
#define TPB_DPI_ERACE (-4)     /* a core run with the race check completed and found a race */

/* The message of the calling thread's last call of a status-returning
 * function: why it failed, "" when it succeeded. */
const char* tpb_dpi_last_error(void);
/* The library's version, "tpbsim X.Y.Z". */
const char* tpb_dpi_version(void);

/* ---- Numeric formats (SPEC §2, §9 convert) ------------------------------
 * Format ids (the package's TPB_FMT_*): 0 fp32, 1 bf16, 2 fp16, 3 e4m3,
 * 4 e5m2, 5 e3m4, 6 e2m5, 7 fp6_e2m3, 8 fp6_e3m2, 9 fp4_e2m1, 10 int4, 11 nf4,
 * 12 e8m0, 13 s8, 14 u8. */

/* The id of a format by its `tpbsim convert` name, or TPB_DPI_EARG. */
int tpb_dpi_format(const char* name);
/* FP32 (bit pattern) -> a code of `format`, rounded to nearest, ties to even;
 * saturate != 0 clamps to the largest finite magnitude, 0 overflows to Inf
 * (NaN where the format has no Inf). NaN gives the format's NaN (0 where it
 * has none). */
int tpb_dpi_from_fp32(int format, unsigned int fp32_bits, int saturate, unsigned int* code);
/* A code of `format` -> its exact value as FP32 bits (every code of every
 * format but FP32 itself is an FP32 value; a NaN code gives 0x7FC00000, a
 * BF16 code its exact FP32 pattern). */
int tpb_dpi_to_fp32(int format, unsigned int code, unsigned int* fp32_bits);

/* ---- POOL TensorDequantize (SPEC §3) -------------------------------------
 * fmt: DEQUANT_FMT 1 E2M1->E5M2, 2 INT4->E5M2, 3 NF4->E4M3, 4 E2M3->E4M3;
 * group: 0, or 8 (MX, formats 1-3). */

/* One step of a stream: group 0 4-bit, 1 source word -> 2 output words;
 * group 0 FP6, 3 -> 4; group 8, one 5-word chunk (word 0: four E8M0 scales,
 * byte g scaling code word 1+g) -> 8. Reads src[0..4] as needed (bit [159:0])
 * and writes dst[0..7] (bit [255:0]; words past the step's output are 0).
 * Returns the number of output words. */
int tpb_dpi_dequant_step(int fmt, int group, const unsigned int* src, unsigned int* dst);
/* One 4-bit code word -> its two output words (codes 0-3, then 4-7). Group 8
 * scales it by the E8M0 byte `scale` (its code word's byte of the chunk's
 * scale word); group 0 ignores `scale`. FP6 has no one-word step
 * (TPB_DPI_EARG: use tpb_dpi_dequant_step). */
int tpb_dpi_dequant_word(int fmt, int group, int scale, unsigned int src, unsigned int* out_lo,
                         unsigned int* out_hi);

/* ---- DVE QuantizeMX (SPEC §4) --------------------------------------------
 * One block of 8 partitions x 4 elements: element k of partition r is
 * in[4r+k] (bit [1023:0]; FP32 bits, or a BF16 / FP16 code in the low 16
 * bits). in_dtype: DTYPE 0x8 FP32, 0x5 BF16, 0x6 FP16; out_dtype: 0xE
 * FP8_EXP4 (E4M3) or 0xF FP8_EXP5 (E5M2); emax: 0 ocp (8 / 15), 1 neuron-alt
 * (7 / 14). Writes partition r's x4 word to out[r] (code k in byte k; bit
 * [255:0]) and the block's E8M0 scale to *scale. */
int tpb_dpi_quantize_mx(int in_dtype, int out_dtype, int emax, const unsigned int* in,
                        unsigned int* out, unsigned char* scale);

/* ---- SFU TQUANT (SPEC §6) ------------------------------------------------
 * One element: y = round_rmode(x * multiplier + zero_point) with one
 * rounding, then Sat 1 clamps, Sat 0 wraps modulo 256. x: finite FP32 bits;
 * multiplier: positive finite nonzero FP32 bits; dtype: B.DATR's 4 S8 or
 * 5 U8; zero_point in that type's range; rmode 0 RNE, 1 RTZ, 2 RDN, 3 RUP,
 * 4 RMM; sat 0 or 1. Writes the result byte and the flags (bit 0 inexact,
 * bit 1 saturated, bit 2 wrapped). An input the SFU would fault on
 * (Fault_TileLegality) is TPB_DPI_EARG naming the rule. */
int tpb_dpi_tquant(unsigned int x, unsigned int multiplier, int zero_point, int dtype, int rmode,
                   int sat, unsigned char* result, int* flags);

/* ---- Instruction words (SPEC §1, §2, §9 check / asm) ---------------------
 * arch: 2 sunda, 3 cayman, 4 mariana, 5 maverick (the NeuronCore version). */

/* The arch of a generation name (case-insensitive), or TPB_DPI_EARG. */
int tpb_dpi_arch(const char* name);
/* The generation's validity contract on one 64-byte word (bit [511:0]):
 * returns how many predicates failed (0: valid); their names, in contract
 * order and separated by ", " exactly as `tpbsim check` prints them, are
 * tpb_dpi_check_failed(). */
int tpb_dpi_check(int arch, const unsigned int* word);
/* The failed predicate names of the calling thread's last tpb_dpi_check ("" when valid). */
const char* tpb_dpi_check_failed(void);
/* One instruction in the program syntax (docs/ASM.md): a statement
 * ("tensor_dequantize fmt=... src=..."), a `.raw` word or a TQUANT block on
 * one line -> its word. A syntax error, or text holding no instruction or
 * more than one, is TPB_DPI_EARG with the assembler's message. */
int tpb_dpi_assemble(const char* statement, unsigned int* word);
/* The mnemonic form of a word, "" when its opcode has none (a `.raw` word). */
const char* tpb_dpi_disassemble(const unsigned int* word);
/* The queue a binary sends the word to (docs/ASM.md, "Binaries and
 * engines"): the engine its header names, else its opcode's home engine, a
 * DMA descriptor's queue byte: "pool", "dve", "pe", "sfu", "act", "dma0"..
 * "dma15" ("" for a null word). */
const char* tpb_dpi_queue(const unsigned int* word);

/* ---- A core (SPEC §12): the run API's core behind a chandle --------------
 * Programs run one after another on it; memories, the tile file, PE weights,
 * semaphores and simulated time carry over. Any number of cores may be open
 * at once, each its own; runs go one at a time in the process. A core runs
 * the model alone (no co-simulation). The host must not run a SystemC
 * kernel of its own in the same process. */

/* A core of `arch` ("mariana", ...; "" or NULL: mariana) with a timing
 * profile merged over the defaults (`timing_file`, "" or NULL: none); NULL
 * on failure (tpb_dpi_last_error says why). */
void* tpb_dpi_core_new(const char* arch, const char* timing_file);
int tpb_dpi_core_free(void* core);
/* Memory "sbuf" or "psum": nbytes (1..64) at a partition (0..127) and byte
 * offset; "hbm": at a byte offset (partition 0), as Python's Core.write /
 * read. Byte i is bits [8i+7:8i] of data (bit [511:0]). A partition, offset
 * or memory outside the core, or bytes past the partition or the HBM, is
 * TPB_DPI_EARG with the message `tpbsim run` and Python give ("partition 128
 * does not exist (0..127)"). */
int tpb_dpi_core_write(void* core, const char* mem, int partition, int offset,
                       const unsigned int* data, int nbytes);
int tpb_dpi_core_read(void* core, const char* mem, int partition, int offset, unsigned int* data,
                      int nbytes);
int tpb_dpi_core_write32(void* core, const char* mem, int partition, int offset,
                         unsigned int value);
int tpb_dpi_core_read32(void* core, const char* mem, int partition, int offset,
                        unsigned int* value);
/* `tpbsim run --load` / `--dump` of one .npy file: "sbuf:P:OFF=FILE.npy",
 * "sbuf:P:OFF:ROWSxCOLS:DTYPE=FILE.npy", "tile:N=FILE.npy" (SPEC §9). */
int tpb_dpi_core_load_npy(void* core, const char* spec);
int tpb_dpi_core_dump_npy(void* core, const char* spec);
/* The watchdogs of every later run (`tpbsim run --max-sim-time`,
 * `--max-wall-time`): simulated picoseconds of a run (1 .. 2^62) and host
 * seconds ((0, 1e9]), 0: off (the default). A value outside those ranges
 * (negative, past 2^62 ps, past 1e9 s, infinite, NaN) is TPB_DPI_EARG naming
 * it, with the limits unchanged. A run they stop is TPB_DPI_EFAULT, status
 * "watchdog". */
int tpb_dpi_core_limits(void* core, long long max_sim_ps, double max_wall_seconds);
/* The race check of every later run (`tpbsim run --racecheck`, SPEC §14):
 * on != 0 checks every access for races, 0 (the default) does not. */
int tpb_dpi_core_racecheck(void* core, int on);
/* Runs a program given as text (the program syntax; `.arch`, if any, must be
 * the core's) or as a file (text or binary), to its end: TPB_DPI_OK, or
 * TPB_DPI_EFAULT when it ended in a fault, a deadlock or a watchdog (the
 * message: tpb_dpi_core_fault and tpb_dpi_last_error), or TPB_DPI_ERACE when
 * it completed and the race check found a race (tpb_dpi_last_error: the
 * first; tpb_dpi_core_races, tpb_dpi_core_race). A bad program is
 * TPB_DPI_EARG with the assembler's "FILE:LINE:COL: error: ..." message. */
int tpb_dpi_core_run(void* core, const char* program);
int tpb_dpi_core_run_file(void* core, const char* path);
/* The last run's outcome: "ok", "fault", "deadlock", "watchdog" ("none"
 * before any run), its message ("" when ok), the core's simulated time in
 * ps, and the instructions the last run retired (-1 for a bad handle). */
const char* tpb_dpi_core_status(void* core);
const char* tpb_dpi_core_fault(void* core);
long long tpb_dpi_core_time_ps(void* core);
long long tpb_dpi_core_instructions(void* core);
/* The races the last run's check found (0 without the check; -1 for a bad
 * handle), and the i-th (0-based, at most the first 1000) as its message
 * ("no semaphore orders pool[0] ... after dma0[0] ...: RAW on sbuf ..."), ""
 * past the last. */
long long tpb_dpi_core_races(void* core);
const char* tpb_dpi_core_race(void* core, int i);

#ifdef __cplusplus
}
#endif

#endif /* TPBSIM_DPI_H_ */
