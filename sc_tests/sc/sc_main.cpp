// SystemC test entry point. SystemC allows one elaboration per process, so
// CMake registers every test separately (gtest_discover_tests) and each runs
// in its own process under this sc_main. Set TPB_SC_VERBOSE=1 to keep SystemC
// info reports (silenced by default so test output stays readable).
#include <cstdlib>

#include <gtest/gtest.h>
#include <systemc>

#include "models/isa/sanitizer.h"

#if TPB_ADDRESS_SANITIZER
// LeakSanitizer scans no thread stacks in these processes. After a
// simulation AddressSanitizer takes a coroutine's stack for the main
// thread's (docs/FUZZING.md), and by the exit-time leak check SystemC may
// have unmapped it: the check then read unmapped pages and crashed, after
// the tests had passed, in about half the runs (by the address layout). At
// exit the main stack holds no allocation, and the coroutine stacks were
// never among those LSan scans: without stacks it can only report more.
extern "C" const char* __lsan_default_options() { return "use_stacks=0"; }
#endif

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* verbose = std::getenv("TPB_SC_VERBOSE");
  if (!verbose || *verbose == '0')
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  return RUN_ALL_TESTS();
}
