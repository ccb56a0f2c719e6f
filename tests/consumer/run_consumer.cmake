# Builds and runs tests/consumer/ against dmlref, either installed into a temporary prefix and
# found with find_package (MODE=find_package) or vendored with add_subdirectory.
# Inputs: SOURCE_DIR (dmlref's source), WORK_DIR (scratch), MODE, CXX (the compiler to use).
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}")
  endif()
  message(STATUS "${out}")
endfunction()

set(consumer_args -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/consumer-build
    -DCMAKE_CXX_COMPILER=${CXX} -DDMLREF_CONSUMER_MODE=${MODE})
if(MODE STREQUAL "find_package")
  # Install dmlref alone (no tests, benchmarks or examples) into a temporary prefix.
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/dmlref-build -DCMAKE_CXX_COMPILER=${CXX}
      -DDMLREF_BUILD_TESTS=OFF -DDMLREF_BUILD_BENCHMARKS=OFF -DDMLREF_BUILD_EXAMPLES=OFF
      -DDMLREF_BUILD_TOOLS=OFF)
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/dmlref-build --prefix ${WORK_DIR}/prefix)
  list(APPEND consumer_args -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
else()
  list(APPEND consumer_args -DDMLREF_SOURCE_DIR=${SOURCE_DIR})
endif()
run(${CMAKE_COMMAND} ${consumer_args})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
run(${WORK_DIR}/consumer-build/consumer)
