# ctest Install.EmbedExample: install this build into a fresh prefix, then
# configure, build and run examples/embed against that prefix only, as
# another project would (find_package(tpbsim)).
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P test_embed.cmake
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_out "${out}" PARENT_SCOPE)
endfunction()
step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f bin/tpbsim share/tpbsim/plot_sweep.py lib/cmake/tpbsim/tpbsimConfig.cmake
          include/tpbsim/platform/core/tpb_core.h)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
step("configure the example" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/embed -B ${WORK_DIR}/build
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
step("build the example" ${CMAKE_COMMAND} --build ${WORK_DIR}/build -j 2)
step("run the example" ${WORK_DIR}/build/embed_core)
if(NOT step_out MATCHES "PASS: 0 mismatches")
  message(FATAL_ERROR "the example did not pass:\n${step_out}")
endif()
message(STATUS "${step_out}")
