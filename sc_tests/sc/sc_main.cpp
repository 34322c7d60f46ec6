// SystemC test entry point. SystemC allows one elaboration per process, so
// CMake registers every test separately (gtest_discover_tests) and each runs
// in its own process under this sc_main. Set TPB_SC_VERBOSE=1 to keep SystemC
// info reports (silenced by default so test output stays readable).
#include <cstdlib>

#include <gtest/gtest.h>
#include <systemc>

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* verbose = std::getenv("TPB_SC_VERBOSE");
  if (!verbose || *verbose == '0')
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  return RUN_ALL_TESTS();
}
