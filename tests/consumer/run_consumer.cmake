# The library as another project uses it. Inputs: SOURCE_DIR (dmlref's source), WORK_DIR
# (scratch), CXX (the compiler to use), MODE:
#   find_package    configure dmlref with doctest and Google Benchmark made unfindable (tests and
#                   benchmarks must be skipped, not fail) and install it into WORK_DIR/prefix; then
#                   build tests/consumer/ with find_package(dmlref <major.minor>) and with
#                   `pkg-config --cflags dmlref`, each checking the version its build system
#                   reports against the header's; a newer major version must be refused.
#   tool_version    install BUILD_DIR (the build running the tests, whose dmlref-check is built)
#                   into WORK_DIR/prefix: bin/dmlref-check --version prints the header's version,
#                   which is also the installed CMake package's.
#   add_subdirectory  a vendored copy: no tests, examples or install rules of dmlref's own.
#   find_package also builds and runs consumer_runtime (the installed dmlref::runtime: the runtime
#   entry points compiled once, in their own unit); add_subdirectory checks that units compiled
#   with DMLREF_EXTERN_RUNTIME hold no entry point's body (consumer_extern_only must fail to link).
#   missing_deps    -DDMLREF_BUILD_TESTS=ON / -DDMLREF_BUILD_BENCHMARKS=ON without doctest /
#                   Google Benchmark stop the configure with a message saying what is missing.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# run(OUTPUT var COMMAND...): runs a command, fails the test on a non-zero exit.
function(run)
  cmake_parse_arguments(RUN "" "OUTPUT" "" ${ARGN})
  execute_process(COMMAND ${RUN_UNPARSED_ARGUMENTS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${RUN_UNPARSED_ARGUMENTS}\n${out}")
  endif()
  message(STATUS "${out}")
  if(RUN_OUTPUT)
    set(${RUN_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

# run_failing(EXPECT text COMMAND...): the command must fail and say `text`.
function(run_failing)
  cmake_parse_arguments(RUN "" "EXPECT" "" ${ARGN})
  execute_process(COMMAND ${RUN_UNPARSED_ARGUMENTS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  string(FIND "${out}" "${RUN_EXPECT}" at)
  if(rc EQUAL 0 OR at EQUAL -1)
    message(FATAL_ERROR "expected a failure saying '${RUN_EXPECT}', got exit ${rc}: "
                        "${RUN_UNPARSED_ARGUMENTS}\n${out}")
  endif()
  message(STATUS "failed as expected (${rc}), saying '${RUN_EXPECT}'")
endfunction()

# The header's version, the one every other place must agree with.
function(header_version include_dir out_var)
  file(STRINGS ${include_dir}/dmlref/version.hpp lines
       REGEX "^#define DMLREF_VERSION_(MAJOR|MINOR|PATCH) [0-9]+$")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define DMLREF_VERSION_${part} ([0-9]+).*" "\\1" ${part} "${lines}")
  endforeach()
  set(${out_var} ${MAJOR}.${MINOR}.${PATCH} PARENT_SCOPE)
endfunction()

# Also no CUDA: these configures check packaging and messages, which the CUDA kernels do not touch,
# and detecting nvcc costs each of them about 1.5 s of CPU.
set(no_deps -DCMAKE_DISABLE_FIND_PACKAGE_doctest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON
            -DDMLREF_BUILD_CUDA_TESTS=OFF)

if(MODE STREQUAL "find_package")
  # Defaults (tests and benchmarks AUTO) with neither dependency findable: skipped with a message.
  run(OUTPUT configured ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/dmlref-build
      -DCMAKE_CXX_COMPILER=${CXX} -DDMLREF_BUILD_EXAMPLES=OFF -DDMLREF_BUILD_TOOLS=OFF ${no_deps})
  foreach(said "unit tests skipped" "benchmarks skipped")
    string(FIND "${configured}" "${said}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "configure did not say '${said}':\n${configured}")
    endif()
  endforeach()
  set(prefix ${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/dmlref-build --prefix ${prefix})
  include(GNUInstallDirs)
  foreach(file ${CMAKE_INSTALL_INCLUDEDIR}/dmlref/dmlref.hpp
               ${CMAKE_INSTALL_INCLUDEDIR}/dmlref/version.hpp
               ${CMAKE_INSTALL_INCLUDEDIR}/dmlref/ops/join.hpp
               ${CMAKE_INSTALL_DATADIR}/cmake/dmlref/dmlrefConfig.cmake
               ${CMAKE_INSTALL_DATADIR}/cmake/dmlref/dmlrefConfigVersion.cmake
               ${CMAKE_INSTALL_DATADIR}/pkgconfig/dmlref.pc)
    if(NOT EXISTS ${prefix}/${file})
      message(FATAL_ERROR "cmake --install did not install ${file}")
    endif()
  endforeach()
  header_version(${prefix}/${CMAKE_INSTALL_INCLUDEDIR} version)
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" major_minor ${version})
  string(REGEX MATCH "^[0-9]+" major ${version})
  math(EXPR next_major "${major} + 1")

  # find_package(dmlref <major.minor> CONFIG): found, and its dmlref_VERSION is the header's.
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/consumer-build
      -DCMAKE_CXX_COMPILER=${CXX} -DDMLREF_CONSUMER_MODE=find_package
      -DDMLREF_REQUESTED_VERSION=${major_minor} -DCMAKE_PREFIX_PATH=${prefix})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
  run(${WORK_DIR}/consumer-build/consumer)
  run(${WORK_DIR}/consumer-build/consumer_runtime)
  # A newer major version is not this package (SameMinorVersion).
  run_failing(EXPECT "but not accepted"
      ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/consumer-too-new
      -DCMAKE_CXX_COMPILER=${CXX} -DDMLREF_CONSUMER_MODE=find_package
      -DDMLREF_REQUESTED_VERSION=${next_major}.0 -DCMAKE_PREFIX_PATH=${prefix})

  # pkg-config: dmlref.pc from the prefix gives the version and the include path, and a program
  # compiled with nothing but its flags works.
  find_program(PKG_CONFIG pkg-config)
  if(NOT PKG_CONFIG)
    message(FATAL_ERROR "pkg-config is needed to test dmlref.pc (Debian: pkg-config)")
  endif()
  set(pc_env ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/${CMAKE_INSTALL_DATADIR}/pkgconfig)
  run(OUTPUT pc_version ${pc_env} ${PKG_CONFIG} --modversion dmlref)
  string(STRIP "${pc_version}" pc_version)
  if(NOT pc_version STREQUAL version)
    message(FATAL_ERROR "pkg-config --modversion dmlref is '${pc_version}', the header ${version}")
  endif()
  run(OUTPUT pc_cflags ${pc_env} ${PKG_CONFIG} --cflags dmlref)
  string(STRIP "${pc_cflags}" pc_cflags)
  string(FIND "${pc_cflags}" "${prefix}/" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "pkg-config --cflags dmlref is '${pc_cflags}', not into ${prefix}")
  endif()
  separate_arguments(pc_cflags UNIX_COMMAND "${pc_cflags}")
  run(${CXX} -std=c++20 ${pc_cflags} -DDMLREF_EXPECTED_VERSION="${pc_version}"
      ${SOURCE_DIR}/tests/consumer/main.cpp -o ${WORK_DIR}/pkg_config_consumer)
  run(${WORK_DIR}/pkg_config_consumer)
elseif(MODE STREQUAL "tool_version")
  set(prefix ${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
  include(GNUInstallDirs)
  header_version(${prefix}/${CMAKE_INSTALL_INCLUDEDIR} version)
  include(${prefix}/${CMAKE_INSTALL_DATADIR}/cmake/dmlref/dmlrefConfigVersion.cmake)
  if(NOT PACKAGE_VERSION STREQUAL version)
    message(FATAL_ERROR "the CMake package says ${PACKAGE_VERSION}, the header ${version}")
  endif()
  run(OUTPUT said ${prefix}/${CMAKE_INSTALL_BINDIR}/dmlref-check --version)
  string(REPLACE "." "\\." version_regex ${version})
  if(NOT said MATCHES "(^|[^0-9.])${version_regex}([^0-9.]|$)")
    message(FATAL_ERROR "the installed dmlref-check --version says '${said}'; the header and the "
                        "CMake package say ${version}")
  endif()
elseif(MODE STREQUAL "add_subdirectory")
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/consumer-build
      -DCMAKE_CXX_COMPILER=${CXX} -DDMLREF_CONSUMER_MODE=add_subdirectory
      -DDMLREF_SOURCE_DIR=${SOURCE_DIR})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
  run(${WORK_DIR}/consumer-build/consumer)
  # DMLREF_EXTERN_RUNTIME keeps the entry points' bodies out of the calling units: without
  # dmlref::runtime's instances the calls have nothing to link to.
  run_failing(EXPECT "dmlref::join<void>"
      ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build --target consumer_extern_only)
  # DMLREF_INSTALL is OFF here: installing the parent installs nothing of dmlref's.
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/consumer-build --prefix ${WORK_DIR}/prefix)
  if(EXISTS ${WORK_DIR}/prefix)
    file(GLOB_RECURSE installed RELATIVE ${WORK_DIR}/prefix ${WORK_DIR}/prefix/*)
    if(installed)
      message(FATAL_ERROR "a vendored dmlref installed files with its parent: ${installed}")
    endif()
  endif()
elseif(MODE STREQUAL "missing_deps")
  run_failing(EXPECT "DMLREF_BUILD_TESTS is ON but doctest was not found"
      ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/tests-on -DCMAKE_CXX_COMPILER=${CXX}
      -DDMLREF_BUILD_TESTS=ON -DDMLREF_BUILD_BENCHMARKS=OFF ${no_deps})
  run_failing(EXPECT "DMLREF_BUILD_BENCHMARKS is ON but Google Benchmark was not found"
      ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/benchmarks-on -DCMAKE_CXX_COMPILER=${CXX}
      -DDMLREF_BUILD_TESTS=OFF -DDMLREF_BUILD_BENCHMARKS=ON ${no_deps})
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
