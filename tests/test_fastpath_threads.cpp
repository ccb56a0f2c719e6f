// test_fastpath on the engine's threads: with DMLREF_TEST_SPLIT set in the environment,
// test_main.cpp splits every call into parts of any size, on DMLREF_NUM_THREADS threads.
#include "test_support.hpp"

#include <cstdint>
#include <vector>

namespace test_fastpath_threads {  // this file's own names (tests/CMakeLists.txt: unity groups)

TEST_CASE("threads: test_fastpath runs split as DMLREF_TEST_SPLIT asks") {
  CHECK((dmlref::detail::parallel_min_bytes == 1) == dmlref::test::runs_split());
  CHECK((dmlref::detail::narrow_min_indices == 1) == dmlref::test::runs_split());
  // And a copy of 64 bytes then does reach the pool, wherever more than one thread is asked for.
  const std::vector<std::uint8_t> in = dmlref::test::distinct_buffer<std::uint8_t>(64);
  std::vector<std::uint8_t> out(64);
  CHECK(dmlref::test::reaches_thread_pool([&] {
          dmlref::strided_copy<std::uint8_t>(
              dmlref::TensorView<const std::uint8_t>(in.data(), {8, 8}),
              dmlref::TensorView<std::uint8_t>(out.data(), {8, 8}));
        }) == (dmlref::test::runs_split() && dmlref::get_num_threads() > 1));
  CHECK(in == out);
}

}  // namespace test_fastpath_threads
