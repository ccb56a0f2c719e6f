// REVERSE_SUBSEQUENCES fast path (detail::reverse_subsequences_fast) diffed against the golden loop
// (dmlref::reference::reverse_subsequences) on seeded random cases: all eleven types, both length
// types, ranks 1-8, every axis, transposed, padded, broadcast and reversed inputs, padded,
// transposed and reversed outputs, broadcast lengths, lengths 0, 1, the axis size and beyond it,
// size-1 dimensions. Both outputs start as the same sentinel bytes and are compared whole.
#include "test_support.hpp"

#include <dmlref/ops/reverse_subsequences.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace test_fastpath_reverse {  // this file's own names (tests/CMakeLists.txt: unity groups)

using namespace dmlref;

namespace {

using test::random_operand;
using test::same_buffers;
using test::sentinel_buffer;
using Operand = test::RandomOperand;

using Sizes = std::vector<std::uint32_t>;
constexpr int kCasesPerType = 160;

// A length for an axis of size n: 0, 1, n - 1, n, n + 1, far beyond n, or anything in [0, n].
template <class L>
L random_length(std::mt19937& rng, std::uint32_t n) {
  switch (rng() % 7) {
    case 0: return 0;
    case 1: return 1;
    case 2: return static_cast<L>(n - 1);
    case 3: return static_cast<L>(n);
    case 4: return static_cast<L>(n + 1);
    case 5: return sizeof(L) == 8 ? static_cast<L>(std::uint64_t{1} << 40) : L{0xFFFFFFFFu};
    default: return static_cast<L>(rng() % (n + 1));
  }
}

// The checks of diff_random_cases, outside the template so doctest's macros are expanded once
// rather than once per (T, L).
void check_golden_equals_fast(int iteration, std::uint32_t axis, bool same, const Layout& in) {
  CAPTURE(iteration);
  CAPTURE(axis);
  CHECK_MESSAGE(same, "Sizes ", in.sizes_string());
}
void check_reversed_twice(int iteration, std::uint32_t axis, bool same) {
  CAPTURE(iteration);
  CAPTURE(axis);
  CHECK(same);
}
// The check of the runtime diff below.
void check_runtime_golden_equals_fast(int iteration, bool same) {
  CAPTURE(iteration);
  CHECK(same);
}

template <class T, class L>
void diff_random_cases(std::uint32_t seed) {
  std::mt19937 rng(seed);
  for (int iteration = 0; iteration < kCasesPerType; ++iteration) {
    const auto rank = static_cast<std::size_t>(1 + iteration % 8);
    const auto axis = static_cast<std::uint32_t>((iteration / 8) % rank);  // every axis
    Sizes sizes(rank);
    const std::uint32_t most = rank <= 4 ? 6 : 3;
    for (auto& s : sizes) s = 1 + static_cast<std::uint32_t>(rng() % most);
    Sizes len_sizes = sizes;
    len_sizes[axis] = 1;

    const Operand in = random_operand(rng, sizes, true, true);
    const Operand len = random_operand(rng, len_sizes, true, true);
    const Operand out = random_operand(rng, sizes, false, true);
    const std::vector<T> in_buffer = test::distinct_buffer<T>(in.elements);
    std::vector<L> len_buffer(len.elements);
    for (auto& l : len_buffer) l = random_length<L>(rng, sizes[axis]);
    std::vector<T> golden = sentinel_buffer<T>(out.elements);
    std::vector<T> fast = sentinel_buffer<T>(out.elements);

    const TensorView<const T> input(in_buffer.data() + in.origin, in.layout);
    const TensorView<const L> lengths(len_buffer.data() + len.origin, len.layout);
    reference::reverse_subsequences<T, L>(
        input, lengths, TensorView<T>(golden.data() + out.origin, out.layout), axis);
    reverse_subsequences<T, L>(input, lengths, TensorView<T>(fast.data() + out.origin, out.layout),
                               axis);
    check_golden_equals_fast(iteration, axis, same_buffers(golden, fast), in.layout);

    // Reversing twice with the same lengths is the identity.
    std::vector<T> back = sentinel_buffer<T>(out.elements);
    reverse_subsequences<T, L>(TensorView<const T>(fast.data() + out.origin, out.layout), lengths,
                               TensorView<T>(back.data() + out.origin, out.layout), axis);
    std::vector<T> original = sentinel_buffer<T>(out.elements);
    strided_copy<T>(input, TensorView<T>(original.data() + out.origin, out.layout));
    check_reversed_twice(iteration, axis, same_buffers(original, back));
  }
}

// Axes with the runs side by side (the axis before the last of {lead, n, cols}), a length of its
// own per run, n in [min_n, min_n + spread). Rows of runs of at most 128 bytes (2 to 20 runs)
// take three spans split by the runs' shortest and longest lengths (reverse_narrow_rows; threads
// take ranges of the axis), unless a tile of 1- or 2-byte runs would be 32 bytes wide; where the
// runs are one element apart in both tensors and n >= 32, other rows go a tile of runs at a time
// (transposed into a buffer, reversed, transposed back; threads take runs); otherwise, along long
// axes (n elements of any type span more than 1 KiB, past what 16 runs keep in the L1 cache) it
// takes whole chunks of runs and asks for elements rows ahead (threads take ranges of the axis).
// Fewer runs than a tile or a chunk, and more (chunks of 256), on 1 and 3 threads; the last two
// iterations packed, so the tiles are taken whatever the random layouts.
template <class T, class L>
void diff_side_by_side(std::uint32_t seed, std::uint32_t min_n, std::uint32_t spread) {
  std::mt19937 rng(seed);
  for (int iteration = 0; iteration < 8; ++iteration) {
    const std::uint32_t threads = iteration % 2 == 0 ? 1 : 3;
    const std::uint32_t n = min_n + static_cast<std::uint32_t>(rng() % spread);
    const std::uint32_t cols = iteration % 4 < 2 ? 2 + static_cast<std::uint32_t>(rng() % 19)
                                                 : 257 + static_cast<std::uint32_t>(rng() % 50);
    const Sizes sizes = iteration % 3 == 0 ? Sizes{2, n, cols} : Sizes{n, cols};
    const auto axis = static_cast<std::uint32_t>(sizes.size() - 2);
    Sizes len_sizes = sizes;
    len_sizes[axis] = 1;
    const auto operand = [&](const Sizes& s) {
      if (iteration < 6) return random_operand(rng, s, false, true);
      Operand packed;
      packed.layout = Layout::packed(s);
      packed.elements = packed.layout.element_count();
      return packed;
    };
    const Operand in = operand(sizes);
    const Operand len = random_operand(rng, len_sizes, false, true);
    const Operand out = operand(sizes);
    const std::vector<T> in_buffer = test::distinct_buffer<T>(in.elements);
    std::vector<L> len_buffer(len.elements);
    for (auto& l : len_buffer) l = random_length<L>(rng, n);
    std::vector<T> golden = sentinel_buffer<T>(out.elements), fast = golden;
    const TensorView<const L> lengths(len_buffer.data() + len.origin, len.layout);
    const TensorView<const T> input(in_buffer.data() + in.origin, in.layout);
    reference::reverse_subsequences<T, L>(
        input, lengths, TensorView<T>(golden.data() + out.origin, out.layout), axis);
    // These tensors are mostly under the size the engine splits at: lower it for the call, so
    // that 3 threads do take ranges of the axis (and put back what it was: the split runs of
    // test_fastpath lower it for every call).
    const std::uint64_t min_bytes = detail::parallel_min_bytes;
    const std::uint64_t part_bytes = detail::parallel_part_bytes;
    detail::parallel_min_bytes = detail::parallel_part_bytes = 1;
    set_num_threads(threads);
    const bool pooled = test::reaches_thread_pool([&] {
      reverse_subsequences<T, L>(input, lengths,
                                 TensorView<T>(fast.data() + out.origin, out.layout), axis);
    });
    set_num_threads(0);
    detail::parallel_min_bytes = min_bytes;
    detail::parallel_part_bytes = part_bytes;
    CAPTURE(threads);
    CHECK(pooled == (threads > 1));
    check_golden_equals_fast(iteration, axis, same_buffers(golden, fast), in.layout);
  }
}

}  // namespace

TEST_CASE_TEMPLATE("fast reverse_subsequences equals the golden loop: long axes, runs side by side",
                   T, DMLREF_ALL_TYPES) {
  SUBCASE("UINT32 lengths") { diff_side_by_side<T, std::uint32_t>(20261127, 1025, 200); }
  SUBCASE("UINT64 lengths") { diff_side_by_side<T, std::uint64_t>(20261128, 1025, 200); }
}

TEST_CASE_TEMPLATE("fast reverse_subsequences equals the golden loop: short axes, runs side by side",
                   T, DMLREF_ALL_TYPES) {
  SUBCASE("UINT32 lengths") { diff_side_by_side<T, std::uint32_t>(20261129, 20, 60); }
  SUBCASE("UINT64 lengths") { diff_side_by_side<T, std::uint64_t>(20261130, 20, 60); }
}

TEST_CASE_TEMPLATE("fast reverse_subsequences equals the golden loop: random cases", T,
                   DMLREF_ALL_TYPES) {
  SUBCASE("UINT32 lengths") { diff_random_cases<T, std::uint32_t>(20261121); }
  SUBCASE("UINT64 lengths") { diff_random_cases<T, std::uint64_t>(20261122); }
}

// The runtime layer dispatches to the same fast path; diff it against the runtime reference.
TEST_CASE_TEMPLATE("fast runtime reverse_subsequences equals the runtime reference", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(20261123);
  const auto desc_strides = [](const Layout& l) {
    return std::vector<std::uint32_t>(l.strides.begin(), l.strides.begin() + l.rank);
  };
  constexpr std::size_t kSpare = 8;  // T10 may round a buffer's required size up
  // Both lengths types (R4): the runtime reference picks the lengths' type at run time too.
  const auto diff = [&]<class L>(std::type_identity<L>) {
    for (int iteration = 0; iteration < 24; ++iteration) {
      const auto rank = static_cast<std::size_t>(1 + iteration % 8);
      const auto axis = static_cast<std::uint32_t>((iteration / 8) % rank);
      Sizes sizes(rank);
      for (auto& s : sizes) s = 1 + static_cast<std::uint32_t>(rng() % 3);
      Sizes len_sizes = sizes;
      len_sizes[axis] = 1;
      const Operand in = random_operand(rng, sizes, true, false);
      const Operand len = random_operand(rng, len_sizes, true, false);
      const Operand out = random_operand(rng, sizes, false, false);
      const TensorDesc in_desc(data_type_of<T>, sizes, desc_strides(in.layout));
      const TensorDesc len_desc(data_type_of<L>, len_sizes, desc_strides(len.layout));
      const TensorDesc out_desc(data_type_of<T>, sizes, desc_strides(out.layout));
      const BufferTensorDesc i = in_desc.desc(), l = len_desc.desc(), o = out_desc.desc();
      const ReverseSubsequencesOperatorDesc desc{&i, &l, &o, axis};
      const std::vector<T> in_data = test::distinct_buffer<T>(in.elements + kSpare);
      std::vector<L> len_data(len.elements + kSpare);
      for (auto& x : len_data) x = random_length<L>(rng, sizes[axis]);
      std::vector<T> golden = sentinel_buffer<T>(out.elements + kSpare);
      std::vector<T> fast = golden;
      const ConstBuffer in_buffer(in_data.data(), in_data.size() * sizeof(T));
      const ConstBuffer len_buffer(len_data.data(), len_data.size() * sizeof(L));
      reference::reverse_subsequences(desc, in_buffer, len_buffer,
                                      Buffer{golden.data(), golden.size() * sizeof(T)});
      reverse_subsequences(desc, in_buffer, len_buffer,
                           Buffer{fast.data(), fast.size() * sizeof(T)});
      check_runtime_golden_equals_fast(iteration, same_buffers(golden, fast));
    }
  };
  diff(std::type_identity<std::uint32_t>{});
  diff(std::type_identity<std::uint64_t>{});
}

}  // namespace test_fastpath_reverse
