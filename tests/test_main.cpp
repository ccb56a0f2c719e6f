#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <dmlref/engine.hpp>

#include <cstdlib>

// With DMLREF_TEST_SPLIT in the environment, every test program runs split: calls of any size are
// split into parts of any size (the engine's size thresholds lowered to one byte, and SCATTER's
// indices narrowed whatever their count), on DMLREF_NUM_THREADS threads. tests/CMakeLists.txt
// registers test_fastpath and test_ops so once more per thread count, so their proofs that a fast
// path equals the golden loop, and that bad input is refused with the right message, hold on every
// split the engine can make too. Set before main, while no operator runs (the thresholds' rule).
namespace {

[[maybe_unused]] const bool split_everything = [] {
  if (std::getenv("DMLREF_TEST_SPLIT") == nullptr) return false;
  dmlref::detail::parallel_min_bytes = 1;
  dmlref::detail::parallel_part_bytes = 1;
  dmlref::detail::narrow_min_indices = 1;  // check_and_narrow_indices narrows every call
  return true;
}();

}  // namespace
