// The strided-copy core's specialised paths, each diffed against a plain definition over all
// eleven types: the 16-byte reversal of copy_run_reversed (every length 0-100, so every tail),
// the fixed-size short runs of copy_with_plan (every row length 1-70 elements, padded), and the
// slab-by-slab block copies JOIN and SPLIT use (copy_blocks with slabs shrunk to a few bytes, so
// small random shapes cut into slabs at every dimension, on strided, broadcast and reversed
// operands), and REVERSE_SUBSEQUENCES's walk of side-by-side subsequences in column groups.
// The operator-level diffs in test_fastpath_*.cpp use shapes too small for slabs.
// The streaming stores of large copies (copy_bytes_streaming, every length and alignment, and a
// GATHER_ND1 whose output is large enough to stream).
// Also the vectorisable index check (legal_index_bounds, all_indices_legal) against the scalar
// negative-index rule at every edge of every index type.
#include "test_support.hpp"

#include <dmlref/ops/gather_nd1.hpp>
#include <dmlref/ops/join.hpp>
#include <dmlref/ops/reverse_subsequences.hpp>
#include <dmlref/ops/split.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace test_fastpath_core {  // this file's own names (tests/CMakeLists.txt: unity groups)

using namespace dmlref;

namespace {

using test::kSentinel;
using test::random_operand;
using test::same_buffers;
using test::sentinel_buffer;
using Operand = test::RandomOperand;

// Slab sizes from below one element (no slabs) to several rows.
constexpr std::uint64_t kSlabs[] = {1, 8, 24, 64, 200, 1000};

}  // namespace

TEST_CASE_TEMPLATE("copy_run_reversed equals dst[i] = src[n - 1 - i] for every length 0-100", T,
                   DMLREF_ALL_TYPES) {
  const std::vector<T> src = test::distinct_buffer<T>(100);
  for (std::uint64_t n = 0; n <= 100; ++n) {
    std::vector<T> expected = sentinel_buffer<T>(102);
    std::vector<T> actual = expected;
    for (std::uint64_t i = 0; i < n; ++i) expected[1 + i] = src[n - 1 - i];
    detail::copy_run_reversed(src.data(), actual.data() + 1, n);
    CAPTURE(n);
    CHECK(same_buffers(expected, actual));
  }
}

TEST_CASE_TEMPLATE("strided_copy of padded rows equals reference_copy for row lengths 1-70", T,
                   DMLREF_ALL_TYPES) {
  // Every contiguous run length the core dispatches on: the fixed sizes (2-64 bytes), the other
  // short ones and memcpy from 128 bytes, with source and destination pitches that differ.
  constexpr std::uint32_t kRows = 5;
  for (std::uint32_t cols = 1; cols <= 70; ++cols) {
    const std::vector<T> src_data = test::distinct_buffer<T>(kRows * (cols + 3));
    const TensorView<const T> src(src_data.data(),
                                  Layout::strided({kRows, cols}, {cols + 3, 1}));
    std::vector<T> expected = sentinel_buffer<T>(kRows * (cols + 1));
    std::vector<T> actual = expected;
    const Layout dst = Layout::strided({kRows, cols}, {cols + 1, 1});
    reference_copy<T>(src, TensorView<T>(expected.data(), dst));
    strided_copy<T>(src, TensorView<T>(actual.data(), dst));
    CAPTURE(cols);
    CHECK(same_buffers(expected, actual));
  }
}

TEST_CASE_TEMPLATE("join and split slab by slab equal the golden loops", T, DMLREF_ALL_TYPES) {
  std::mt19937 rng(20261121);
  for (int iteration = 0; iteration < 96; ++iteration) {
    const auto rank = static_cast<std::size_t>(1 + iteration % 6);
    const auto axis = static_cast<std::uint32_t>((iteration / 6) % rank);
    std::vector<std::uint32_t> whole(rank);
    for (auto& s : whole) s = 1 + static_cast<std::uint32_t>(rng() % (rank <= 3 ? 6 : 3));
    std::vector<std::uint32_t> pieces(2 + rng() % 3);
    whole[axis] = 0;
    for (auto& p : pieces) whole[axis] += p = 1 + static_cast<std::uint32_t>(rng() % 3);
    const auto piece_sizes = [&](std::size_t i) {
      std::vector<std::uint32_t> s = whole;
      s[axis] = pieces[i];
      return s;
    };
    CAPTURE(iteration);
    CAPTURE(axis);
    CAPTURE(Layout::packed(whole).sizes_string());

    // JOIN: the pieces into the whole.
    std::vector<Operand> in_ops;
    std::vector<std::vector<T>> in_data;
    std::vector<TensorView<const T>> inputs;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      in_ops.push_back(random_operand(rng, piece_sizes(i), true, true));
      in_data.push_back(test::distinct_buffer<T>(in_ops[i].elements, 1000 * i));
    }
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      inputs.emplace_back(in_data[i].data() + in_ops[i].origin, in_ops[i].layout);
    }
    const Operand out = random_operand(rng, whole, false, true);
    std::vector<T> golden = sentinel_buffer<T>(out.elements);
    reference::join<T>(inputs, TensorView<T>(golden.data() + out.origin, out.layout), axis);
    for (std::uint64_t slab : kSlabs) {
      std::vector<T> fast = sentinel_buffer<T>(out.elements);
      detail::join_fast<T>(inputs, TensorView<T>(fast.data() + out.origin, out.layout), axis,
                           slab);
      CAPTURE(slab);
      CHECK(same_buffers(golden, fast));
    }

    // SPLIT: the whole into the pieces.
    const Operand in = random_operand(rng, whole, true, true);
    const std::vector<T> whole_data = test::distinct_buffer<T>(in.elements);
    const TensorView<const T> input(whole_data.data() + in.origin, in.layout);
    std::vector<Operand> out_ops;
    std::vector<std::vector<T>> golden_parts;
    std::vector<TensorView<T>> golden_views;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      out_ops.push_back(random_operand(rng, piece_sizes(i), false, true));
      golden_parts.push_back(sentinel_buffer<T>(out_ops[i].elements));
    }
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      golden_views.emplace_back(golden_parts[i].data() + out_ops[i].origin, out_ops[i].layout);
    }
    reference::split<T>(input, golden_views, axis);
    for (std::uint64_t slab : kSlabs) {
      std::vector<std::vector<T>> parts;
      std::vector<TensorView<T>> views;
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        parts.push_back(sentinel_buffer<T>(out_ops[i].elements));
      }
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        views.emplace_back(parts[i].data() + out_ops[i].origin, out_ops[i].layout);
      }
      detail::split_fast<T>(input, views, axis, slab);
      CAPTURE(slab);
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        CHECK(same_buffers(golden_parts[i], parts[i]));
      }
    }
  }
}

TEST_CASE_TEMPLATE("legal_index_bounds and all_indices_legal agree with normalize_index", I,
                   DMLREF_INDEX_TYPES) {
  // Dimension sizes around every edge: 1, small, and near 2^31 and 2^32 (sizes are 32-bit).
  const std::uint64_t sizes[] = {1, 2, 5, 127, 128, 0x7FFFFFFFu, 0x80000000u, 0x80000001u,
                                 0xFFFFFFFFu};
  for (std::uint64_t n : sizes) {
    const IndexBounds<I> bounds = legal_index_bounds<I>(n);
    const auto u = [](std::uint64_t v) { return static_cast<I>(v); };  // two's complement wrap
    std::vector<I> values = {std::numeric_limits<I>::min(), std::numeric_limits<I>::max(),
                             u(0), u(1), u(n - 1), u(n), u(n + 1), u(0 - n), u(0 - n - 1),
                             u(0 - n + 1), u(~std::uint64_t{0})};
    for (I v : values) {
      CAPTURE(n);
      CAPTURE(v);
      const bool legal = normalize_index(v, n).has_value();
      CHECK(bounds.contains(v) == legal);
      // Unit stride and strided, the value at the end of an otherwise legal run.
      const std::vector<I> run = {u(0), u(0), u(0), u(0), u(0), v};
      CHECK(all_indices_legal(run.data(), 1, run.size(), bounds) == legal);
      CHECK(all_indices_legal(run.data(), 5, 2, bounds) == legal);
      CHECK(all_indices_legal(run.data() + 5, -1, run.size(), bounds) == legal);
    }
  }
}

TEST_CASE("copy_bytes_streaming equals memcpy for every length 0-300 and destination alignment") {
  std::vector<unsigned char> src(320);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
  for (std::size_t misalign = 0; misalign < 16; ++misalign) {
    for (std::size_t bytes = 0; bytes <= 300; ++bytes) {
      // 16-byte aligned storage, so `misalign` is the destination's offset from a 16-byte boundary.
      alignas(16) unsigned char expected[336];
      alignas(16) unsigned char actual[336];
      std::memset(expected, kSentinel, sizeof expected);
      std::memset(actual, kSentinel, sizeof actual);
      std::memcpy(expected + misalign, src.data() + 3, bytes);
      detail::copy_bytes_streaming(actual + misalign, src.data() + 3, bytes);
      detail::stream_fence();
      CAPTURE(misalign);
      CAPTURE(bytes);
      CHECK(std::memcmp(expected, actual, sizeof expected) == 0);
    }
  }
}

TEST_CASE_TEMPLATE("copy_with_plan with streaming stores equals reference_copy", T,
                   DMLREF_ALL_TYPES) {
  // Rows from below to well above kStreamMinRunBytes, padded on both sides so every row starts
  // at another alignment; the streaming path is forced (it is normally for copies of 64 MiB+).
  constexpr std::uint32_t kRows = 4;
  for (std::uint32_t cols : {8u, 63u, 64u, 65u, 200u, 257u}) {
    const std::vector<T> src_data = test::distinct_buffer<T>(kRows * (cols + 5));
    const Layout src_layout = Layout::strided({kRows, cols}, {cols + 5, 1});
    const Layout dst_layout = Layout::strided({kRows, cols}, {cols + 3, 1});
    std::vector<T> expected = sentinel_buffer<T>(kRows * (cols + 3));
    std::vector<T> actual = expected;
    reference_copy<T>(TensorView<const T>(src_data.data(), src_layout),
                      TensorView<T>(expected.data(), dst_layout));
    const std::array<std::array<std::int64_t, kMaxRank>, 2> strides{src_layout.strides,
                                                                   dst_layout.strides};
    detail::copy_with_plan(detail::make_copy_plan(dst_layout.size_span(), strides),
                           src_data.data(), actual.data(), true);
    CAPTURE(cols);
    CHECK(same_buffers(expected, actual));
  }
}

TEST_CASE_TEMPLATE("reverse_subsequences along an outer axis, columns in several groups", T,
                   DMLREF_ALL_TYPES) {
  // Axis 0 of {1100, 40}: the subsequences lie side by side and one column's extent is over
  // 1 KiB, so the fast path walks them in groups of 16 columns (16, 16, 8). Lengths cover 0, 1,
  // the axis size, above it (clamped) and values between.
  constexpr std::uint32_t kAxis = 1100, kColumns = 40;
  const std::vector<T> in_data = test::distinct_buffer<T>(kAxis * kColumns);
  std::vector<std::uint32_t> lengths(kColumns);
  for (std::uint32_t j = 0; j < kColumns; ++j) lengths[j] = (j * 389u) % (kAxis + 50);
  lengths[0] = 0;
  lengths[1] = 1;
  lengths[2] = kAxis;
  lengths[3] = 0xFFFFFFFFu;
  const TensorView<const T> input(in_data.data(), {kAxis, kColumns});
  const TensorView<const std::uint32_t> lengths_view(lengths.data(), {1, kColumns});
  std::vector<T> expected = sentinel_buffer<T>(kAxis * kColumns);
  std::vector<T> actual = expected;
  reference::reverse_subsequences<T>(input, lengths_view,
                                     TensorView<T>(expected.data(), {kAxis, kColumns}), 0);
  reverse_subsequences<T>(input, lengths_view, TensorView<T>(actual.data(), {kAxis, kColumns}), 0);
  CHECK(same_buffers(expected, actual));
}

TEST_CASE("GATHER_ND1 into a 64 MiB output streams its slices and copies the rows it selects") {
  // Output {262144, 256} UINT8 (64 MiB, kStreamMinBytes) gathers 256-byte rows of a {5, 256}
  // input: the fast path takes the streaming slice copy. Checked row by row against the input
  // row each index selects (the golden loop over 64 Mi elements would be slow under sanitizers).
  constexpr std::uint32_t kRows = 262144, kWidth = 256, kInputRows = 5;
  REQUIRE(std::uint64_t{kRows} * kWidth >= detail::kStreamMinBytes);
  const std::vector<std::uint8_t> in_data =
      test::distinct_buffer<std::uint8_t>(kInputRows * kWidth);
  std::vector<std::int32_t> rows(kRows);
  for (std::uint32_t i = 0; i < kRows; ++i) {
    // -5 .. 4: negative indices count from the end.
    rows[i] = static_cast<std::int32_t>((i * 7u) % (2 * kInputRows)) -
              static_cast<std::int32_t>(kInputRows);
  }
  std::vector<std::uint8_t> out(std::size_t{kRows} * kWidth, kSentinel);
  gather_nd1<std::uint8_t, std::int32_t>(
      TensorView<const std::uint8_t>(in_data.data(), {kInputRows, kWidth}),
      TensorView<const std::int32_t>(rows.data(), {kRows, 1}),
      TensorView<std::uint8_t>(out.data(), {kRows, kWidth}), 2, 2, 0);
  std::uint32_t wrong = 0;
  for (std::uint32_t i = 0; i < kRows; ++i) {
    const std::int32_t r = rows[i] < 0 ? rows[i] + static_cast<std::int32_t>(kInputRows) : rows[i];
    wrong += std::memcmp(out.data() + std::size_t{i} * kWidth,
                         in_data.data() + static_cast<std::size_t>(r) * kWidth, kWidth) != 0;
  }
  CHECK(wrong == 0);
}

TEST_CASE_TEMPLATE("strided_copy of transposes in tiles equals reference_copy", T,
                   DMLREF_ALL_TYPES) {
  // Transposed last two dimensions (both directions), sizes that are not multiples of the tile
  // (64 bytes of elements) on either side, with and without an outer dimension, so full tiles,
  // edge tiles and the walk over outer positions are all diffed.
  struct Case {
    std::vector<std::uint32_t> sizes;
    std::vector<std::int64_t> src_strides;
    std::vector<std::int64_t> dst_strides;
  };
  const Case cases[] = {
      {{37, 70}, {1, 37}, {70, 1}},                       // column-major source
      {{70, 37}, {37, 1}, {1, 70}},                       // column-major destination
      {{3, 37, 70}, {37 * 70, 1, 37}, {37 * 70, 70, 1}},  // outer dimension, source transposed
      {{2, 65, 3, 129}, {65 * 3 * 129, 1, 65 * 129, 65}, {65 * 3 * 129, 3 * 129, 129, 1}},
  };
  for (const Case& c : cases) {
    const Layout src_layout = Layout::strided(c.sizes, c.src_strides);
    const Layout dst_layout = Layout::strided(c.sizes, c.dst_strides);
    const std::size_t count = Layout::packed(c.sizes).element_count();
    const std::vector<T> src = test::distinct_buffer<T>(count);
    std::vector<T> expected = sentinel_buffer<T>(count);
    std::vector<T> actual = expected;
    reference_copy<T>(TensorView<const T>(src.data(), src_layout),
                      TensorView<T>(expected.data(), dst_layout));
    strided_copy<T>(TensorView<const T>(src.data(), src_layout),
                    TensorView<T>(actual.data(), dst_layout));
    CAPTURE(src_layout.sizes_string());
    CAPTURE(src_layout.strides_string());
    CHECK(same_buffers(expected, actual));
  }
}

}  // namespace test_fastpath_core
