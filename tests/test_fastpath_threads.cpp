// Runs every test of test_fastpath on the engine's threads: with DMLREF_TEST_SPLIT set in the
// environment, calls of any size are split into parts of any size (the engine's size thresholds
// lowered to one byte), on DMLREF_NUM_THREADS threads. tests/CMakeLists.txt registers
// test_fastpath so a second time per thread count, so each of its proofs that a fast path equals
// the golden loop holds on every split the engine can make too.
#include "test_support.hpp"

#include <cstdlib>

namespace test_fastpath_threads {  // this file's own names (tests/CMakeLists.txt: unity groups)

namespace {

// Set before main, while no operator runs (the thresholds' rule).
const bool split_everything = [] {
  if (std::getenv("DMLREF_TEST_SPLIT") == nullptr) return false;
  dmlref::detail::parallel_min_bytes = 1;
  dmlref::detail::parallel_part_bytes = 1;
  return true;
}();

}  // namespace

TEST_CASE("threads: test_fastpath runs split as DMLREF_TEST_SPLIT asks") {
  CHECK(split_everything == (std::getenv("DMLREF_TEST_SPLIT") != nullptr));
  CHECK((dmlref::detail::parallel_min_bytes == 1) == split_everything);
}

}  // namespace test_fastpath_threads
