# Verilated models of the build (platform/cosim, bench/bench_dpi).
#
# Verilator's verilate() adds its runtime (verilated.cpp and friends) to every
# target it is called on, and each generated class is a file of its own that
# parses SystemC again. Here the runtime is two static libraries compiled once
# per build (the SystemC flavour under the co-simulated DUTs, the plain one
# with DPI-C and --timing under the testbenches and bench_dpi), and each model
# is a static library of its generated code alone, compiled as one
# translation unit (Verilator's own makefiles build a model from one
# __ALL.cpp the same way). docs/PERFORMANCE.md "Build time".

find_package(verilator REQUIRED HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)
set(_vl_inc ${VERILATOR_ROOT}/include)
# Verilator's code, not ours: no -Wall -Wextra noise. Under the sanitizers,
# Verilator 5.006's VCD writer stores 64-bit values at 4-byte alignment
# (verilated_trace_imp.h), which UBSan's alignment check would stop on.
set(TPBSIM_VERILATED_OPTIONS -w)
if(TPBSIM_SANITIZE)
  list(APPEND TPBSIM_VERILATED_OPTIONS -fno-sanitize=alignment)
endif()

function(_tpbsim_verilated_runtime name)
  cmake_parse_arguments(R "" "" "SOURCES;DEFINES;PUBLIC_OPTIONS;LINK" ${ARGN})
  list(TRANSFORM R_SOURCES PREPEND ${_vl_inc}/)
  add_library(${name} STATIC ${R_SOURCES})
  set_target_properties(${name} PROPERTIES UNITY_BUILD OFF)
  target_include_directories(${name} SYSTEM PUBLIC ${_vl_inc} ${_vl_inc}/vltstd)
  target_compile_definitions(${name} PUBLIC ${R_DEFINES})
  target_compile_options(${name} PRIVATE ${TPBSIM_VERILATED_OPTIONS} PUBLIC ${R_PUBLIC_OPTIONS})
  target_link_libraries(${name} PUBLIC Threads::Threads ${R_LINK})
endfunction()

# SYSTEMC TRACE models (the DUTs behind the co-simulation pins).
_tpbsim_verilated_runtime(tpb_verilated_sc
  SOURCES verilated.cpp verilated_vcd_c.cpp verilated_threads.cpp
  DEFINES VM_COVERAGE=0 VM_SC=1 VM_TRACE=1 VM_TRACE_VCD=1 VM_TRACE_FST=0
  LINK PkgConfig::SYSTEMC)
# Plain C++ models with DPI-C, --timing allowed (testbenches, bench_dpi).
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-fcoroutines-ts TPBSIM_COROUTINES_TS)
if(TPBSIM_COROUTINES_TS)
  set(_vl_coro -fcoroutines-ts)
else()
  set(_vl_coro -fcoroutines)
endif()
_tpbsim_verilated_runtime(tpb_verilated_dpi
  SOURCES verilated.cpp verilated_dpi.cpp verilated_threads.cpp verilated_timing.cpp
  DEFINES VM_COVERAGE=0 VM_SC=0 VM_TRACE=0 VM_TRACE_VCD=0 VM_TRACE_FST=0
  PUBLIC_OPTIONS ${_vl_coro})

# tpbsim_verilate(MODEL RUNTIME "OPTIONS" <verilate() arguments>): verilate()
# into the static library MODEL (created on first use; a second call adds
# another model to it), its runtime sources left to RUNTIME, the generated
# code compiled as one unit with TPBSIM_VERILATED_OPTIONS and OPTIONS (a
# quoted list, e.g. "-O1;-g0" for the test-only DUTs, or "").
function(tpbsim_verilate model runtime options)
  add_library(${model} STATIC)
  set_target_properties(${model} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
  target_link_libraries(${model} PUBLIC ${runtime})
  target_compile_options(${model} PRIVATE ${TPBSIM_VERILATED_OPTIONS} ${options})
  verilate(${model} ${ARGN})
  get_target_property(_srcs ${model} SOURCES)
  list(FILTER _srcs EXCLUDE REGEX "^${_vl_inc}/")
  set_property(TARGET ${model} PROPERTY SOURCES ${_srcs})
endfunction()
