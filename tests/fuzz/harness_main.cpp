// libFuzzer's entry points of one operator's executable (fuzz_<op>): the harness registered under
// DMLREF_FUZZ_OP (a compile definition, tests/fuzz/CMakeLists.txt). Every operator's harness is
// linked in from one object library; this file only picks one, so it includes no engine header.
#include "harness.hpp"

#include <cstddef>
#include <cstdint>

#ifndef DMLREF_FUZZ_OP
#error "DMLREF_FUZZ_OP must name the operator whose harness this executable runs"
#endif

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  dmlref::fuzz::select_harness(DMLREF_FUZZ_OP);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dmlref::fuzz::execute_selected(data, size);
  return 0;
}
