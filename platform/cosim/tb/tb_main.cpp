// The C++ main of a Verilated SystemVerilog testbench built with --timing
// (platform/cosim/tb; docs/COSIM.md): runs the model's time slots until the
// testbench calls $finish, and exits with the code the testbench gave
// through its DPI-C import tb_exit_code (4 when it never finished). Also
// tb_system, for a testbench that runs a command.
// Verilator's runtime headers are not -Wextra clean (unused parameters).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <verilated.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include TB_HEADER  // the Verilated testbench, e.g. "Vtb_dequant.h"
#pragma GCC diagnostic pop

namespace {
int g_exit_code = 4;
}

extern "C" void tb_exit_code(int code) { g_exit_code = code; }
// $system of a string (Verilator 5.006 takes only packed values there).
extern "C" int tb_system(const char* command) {
  std::fflush(stdout);
  return std::system(command);
}

int main(int argc, char** argv) {
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  auto top = std::make_unique<TB_CLASS>(ctx.get(), "tb");
  while (!ctx->gotFinish()) {
    top->eval();
    if (!top->eventsPending()) break;
    ctx->time(top->nextTimeSlot());
  }
  if (!ctx->gotFinish()) std::fprintf(stderr, "%s: the testbench ended without $finish\n", argv[0]);
  top->final();
  return g_exit_code;
}
