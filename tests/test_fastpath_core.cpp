// The strided-copy core's specialised paths, each diffed against a plain definition over all
// eleven types: the 16-byte reversal of copy_run_reversed (every length 0-100, so every tail),
// the fixed-size short runs of copy_with_plan (every row length 1-70 elements, padded) and
// copy_bytes_short (every length), the block copies JOIN and SPLIT use (copy_pieces with groups
// and slabs shrunk so small random shapes take several of each, on strided, broadcast and
// reversed operands, and a join large enough to stream), the register-blocked transposes (every
// width, SSE2 and AVX2 kernels, every edge), and REVERSE_SUBSEQUENCES's walk of side-by-side
// subsequences in column groups.
// The streaming stores of large copies (copy_bytes_streaming, every length and alignment, and a
// GATHER_ND1 whose output is large enough to stream).
// Also the vectorisable index checks (legal_index_bounds, all_indices_legal, and
// TupleBounds for packed tuples) against the scalar negative-index rule at every edge
// of every index type.
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
#include <utility>
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

// Slab sizes from below one element (one outer position per slab) to several rows, and the
// default; group sizes from one block to the default.
constexpr std::uint64_t kSlabs[] = {1, 24, 200, detail::kSlabBytes};
constexpr std::size_t kGroups[] = {1, 2, 3, detail::kBlockGroup};

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

TEST_CASE_TEMPLATE("join and split in groups of blocks and in slabs equal the golden loops", T,
                   DMLREF_ALL_TYPES) {
  // copy_pieces moves blocks whose inner dimensions are one contiguous run side by side, in
  // groups (shrunk here to 1-3 blocks, so several groups share each slab) and slabs (shrunk to a
  // few bytes, so slabs start at every outer position); other blocks (transposed, padded,
  // broadcast, reversed) alone. Random operands give every mix, at ranks 1-8 and every axis.
  std::mt19937 rng(20261121);
  for (int iteration = 0; iteration < 128; ++iteration) {
    const auto rank = static_cast<std::size_t>(1 + iteration % 8);
    const auto axis = static_cast<std::uint32_t>((iteration / 8) % rank);
    std::vector<std::uint32_t> whole(rank);
    for (auto& s : whole) s = 1 + static_cast<std::uint32_t>(rng() % (rank <= 3 ? 6 : 3));
    std::vector<std::uint32_t> pieces(2 + rng() % 4);
    whole[axis] = 0;
    for (auto& p : pieces) whole[axis] += p = 1 + static_cast<std::uint32_t>(rng() % 3);
    const auto piece_sizes = [&](std::size_t i) {
      std::vector<std::uint32_t> s = whole;
      s[axis] = pieces[i];
      return s;
    };
    // Mostly contiguous operands, so most blocks take the grouped path.
    const auto operand = [&](const std::vector<std::uint32_t>& sizes, bool is_input) {
      if (rng() % 2 == 0) return random_operand(rng, sizes, is_input, true);
      const Layout packed = Layout::packed(sizes);
      return Operand{packed, 0, packed.element_count()};
    };
    CAPTURE(iteration);
    CAPTURE(axis);
    CAPTURE(Layout::packed(whole).sizes_string());

    // JOIN: the pieces into the whole.
    std::vector<Operand> in_ops;
    std::vector<std::vector<T>> in_data;
    std::vector<TensorView<const T>> inputs;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      in_ops.push_back(operand(piece_sizes(i), true));
      in_data.push_back(test::distinct_buffer<T>(in_ops[i].elements, 1000 * i));
    }
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      inputs.emplace_back(in_data[i].data() + in_ops[i].origin, in_ops[i].layout);
    }
    const std::span<const TensorView<const T>> input_span(inputs);
    const Operand out = operand(whole, false);
    std::vector<T> golden = sentinel_buffer<T>(out.elements);
    reference::join<T>(inputs, TensorView<T>(golden.data() + out.origin, out.layout), axis);
    for (std::uint64_t slab : kSlabs) {
      for (std::size_t group : kGroups) {
        std::vector<T> fast = sentinel_buffer<T>(out.elements);
        const TensorView<T> output(fast.data() + out.origin, out.layout);
        detail::copy_pieces<detail::BitsOf<T>>(
            {output.data(), &output.layout(), axis, true, inputs.size(), &input_span,
             &detail::piece_of_views<TensorView<const T>>},
            slab, group);
        CAPTURE(slab);
        CAPTURE(group);
        CHECK(same_buffers(golden, fast));
      }
    }

    // SPLIT: the whole into the pieces.
    const Operand in = operand(whole, true);
    const std::vector<T> whole_data = test::distinct_buffer<T>(in.elements);
    const TensorView<const T> input(whole_data.data() + in.origin, in.layout);
    std::vector<Operand> out_ops;
    std::vector<std::vector<T>> golden_parts;
    std::vector<TensorView<T>> golden_views;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      out_ops.push_back(operand(piece_sizes(i), false));
      golden_parts.push_back(sentinel_buffer<T>(out_ops[i].elements));
    }
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      golden_views.emplace_back(golden_parts[i].data() + out_ops[i].origin, out_ops[i].layout);
    }
    reference::split<T>(input, golden_views, axis);
    for (std::uint64_t slab : kSlabs) {
      for (std::size_t group : kGroups) {
        std::vector<std::vector<T>> parts;
        std::vector<TensorView<T>> views;
        for (std::size_t i = 0; i < pieces.size(); ++i) {
          parts.push_back(sentinel_buffer<T>(out_ops[i].elements));
        }
        for (std::size_t i = 0; i < pieces.size(); ++i) {
          views.emplace_back(parts[i].data() + out_ops[i].origin, out_ops[i].layout);
        }
        const std::span<const TensorView<T>> view_span(views);
        detail::copy_pieces<detail::BitsOf<T>>(
            {input.data(), &input.layout(), axis, false, views.size(), &view_span,
             &detail::piece_of_views<TensorView<T>>},
            slab, group);
        CAPTURE(slab);
        CAPTURE(group);
        for (std::size_t i = 0; i < pieces.size(); ++i) {
          CHECK(same_buffers(golden_parts[i], parts[i]));
        }
      }
    }
  }
}

TEST_CASE("copy_pieces streams the runs of an 8 MiB join and split and writes every byte") {
  // Pieces of {rows, width_i} UINT32 joined along the last axis into an 8 MiB output
  // (kStreamMinBytes), and split back. Packed (pad 0), a JOIN whose runs all start and end on
  // stream_unit() boundaries and average kStreamedRowsMinRunBytes or more streams them in row
  // order (StreamedRows): where stream_unit() is 16, {64, 64, 64, 64}, {16, 16, 16, 16} and
  // {4, 32, 8, 16} on a line (shift 0) and 16 bytes past one (numpy's placement), where it is 64
  // the first two on a line. Other packed JOINs whose runs average kStreamedRowsMinRunBytes or
  // more stream in row order through byte shuffles where the CPU has AVX2 (ShiftedRows: {25, 25},
  // {13, 12, 15}, {5, 20}, {33, 5, 3}, and where stream_unit() is 64 the sets above that do not
  // take StreamedRows), each aligned 16 bytes of the output assembled from the runs that cover
  // it, starting wherever a row, a plane or a thread's range of rows does. The rest are staged
  // (StagedStream), but for rows of 20 bytes ({2, 3}), too narrow to stage. A SPLIT's runs
  // stream whole where they start and end on stream_unit() boundaries, and take ordinary stores
  // elsewhere. The packed cases run again as three planes of rows with 16 elements between
  // planes, so the row-order stream restarts at each plane (and at each thread's range of rows
  // in the split runs). With one element of padding per row, rows start at every 4-byte
  // alignment: runs take ordinary stores (a line is never written both ways). Checked row by
  // row against the pieces (the golden loop over 2 Mi elements would be slow under sanitizers).
  const std::vector<std::vector<std::uint32_t>> width_sets = {
      {64, 64, 64, 64}, {16, 16, 16, 16}, {4, 32, 8, 16}, {25, 25},
      {13, 12, 15},     {5, 20},          {33, 5, 3},       {2, 3}};
  // `count` elements `shift` bytes past a line in `store`, a line or more of sentinels before.
  const auto placed = [](std::vector<std::uint32_t>& store, std::size_t count, std::size_t shift) {
    store.assign(count + 48, 0xA5A5A5A5u);
    const auto at = reinterpret_cast<std::uintptr_t>(store.data());
    return store.data() + ((64 - at % 64) % 64 + 64 + shift) / 4;
  };
  constexpr std::uint32_t kPlaneGap = 16;  // elements between planes
  struct Placement {
    std::uint32_t pad;  // elements after each row
    std::size_t shift;  // bytes past a line
    std::uint32_t planes;
  };
  std::vector<Placement> placements;
  for (const std::uint32_t pad : {0u, 1u}) {
    for (const std::size_t shift : {0u, 16u, 4u}) placements.push_back({pad, shift, 1});
  }
  for (const std::size_t shift : {0u, 16u, 4u}) placements.push_back({0, shift, 3});
  for (const std::vector<std::uint32_t>& widths : width_sets) {
    for (const Placement& placement : placements) {
      const std::uint32_t pad = placement.pad, planes = placement.planes;
      const std::size_t shift = placement.shift;
      std::uint32_t total = 0;
      for (const std::uint32_t w : widths) total += w;
      const std::uint32_t plane_rows = (8u << 20) / (4 * total) / planes + 1;
      const std::uint32_t rows = planes * plane_rows;
      CAPTURE(widths.size());
      CAPTURE(widths[0]);
      CAPTURE(pad);
      CAPTURE(shift);
      CAPTURE(planes);
      REQUIRE(std::uint64_t{rows} * total * 4 >= detail::kStreamMinBytes);
      std::vector<std::vector<std::uint32_t>> data;
      std::vector<TensorView<const std::uint32_t>> inputs;
      for (std::size_t i = 0; i < widths.size(); ++i) {
        data.push_back(test::distinct_buffer<std::uint32_t>(
            std::size_t{rows} * widths[i], static_cast<std::uint32_t>(i) * 7919u));
      }
      for (std::size_t i = 0; i < widths.size(); ++i) {
        inputs.emplace_back(data[i].data(), Layout::packed({planes, plane_rows, widths[i]}));
      }
      const std::uint32_t pitch = total + pad;
      const std::uint32_t plane_pitch = plane_rows * pitch + (planes == 1 ? 0 : kPlaneGap);
      std::vector<std::uint32_t> out_store;
      std::uint32_t* const out = placed(out_store, std::size_t{planes} * plane_pitch, shift);
      const Layout out_layout =
          Layout::strided({planes, plane_rows, total}, {plane_pitch, pitch, 1});
      join<std::uint32_t>(inputs, TensorView<std::uint32_t>(out, out_layout), 2);
      // Row r of the pieces (r = plane * plane_rows + its row in the plane) in the output.
      const auto row_at = [&](std::uint32_t r) {
        return out + std::size_t{r / plane_rows} * plane_pitch +
               std::size_t{r % plane_rows} * pitch;
      };
      std::uint32_t wrong = 0;
      for (std::uint32_t r = 0; r < rows; ++r) {
        std::uint32_t at = 0;
        for (std::size_t i = 0; i < widths.size(); ++i) {
          wrong += std::memcmp(row_at(r) + at, data[i].data() + std::size_t{r} * widths[i],
                               widths[i] * 4) != 0;
          at += widths[i];
        }
        if (pad != 0) wrong += row_at(r)[total] != 0xA5A5A5A5u;
      }
      for (std::uint32_t plane = 0; plane < planes; ++plane) {
        const std::uint32_t* const gap = out + std::size_t{plane} * plane_pitch +
                                         std::size_t{plane_rows} * pitch;
        for (std::uint32_t k = 0; k < (plane + 1 < planes ? kPlaneGap : 1); ++k) {
          wrong += gap[k] != 0xA5A5A5A5u;
        }
      }
      wrong += out[-1] != 0xA5A5A5A5u;
      CHECK(wrong == 0);
      // And back: SPLIT of the whole streams each piece's runs one after another.
      std::vector<std::vector<std::uint32_t>> stores(widths.size());
      std::vector<TensorView<std::uint32_t>> outputs;
      std::vector<std::uint32_t*> parts;
      for (std::size_t i = 0; i < widths.size(); ++i) {
        parts.push_back(placed(stores[i], std::size_t{rows} * widths[i], shift));
        outputs.emplace_back(parts[i], Layout::packed({planes, plane_rows, widths[i]}));
      }
      split<std::uint32_t>(TensorView<const std::uint32_t>(out, out_layout), outputs, 2);
      for (std::size_t i = 0; i < widths.size(); ++i) {
        CHECK(std::memcmp(parts[i], data[i].data(), data[i].size() * 4) == 0);
        CHECK(parts[i][-1] == 0xA5A5A5A5u);
        CHECK(parts[i][data[i].size()] == 0xA5A5A5A5u);
      }
    }
  }
}

TEST_CASE("copy_pieces streams rows back to back at any byte offset: runs of 1 byte and more") {
  // UINT8 pieces joined along the last axis into rows back to back, 8 MiB (kStreamMinBytes),
  // runs of every short length (1-3, 4-7, 8-15 bytes: their own loads) beside runs of 16 bytes
  // or more, averaging kStreamedRowsMinRunBytes or more: where the CPU has AVX2 they stream in
  // row order (ShiftedRows), each aligned 16 bytes of the output assembled from the runs that
  // cover it; without it (the second pass) they are staged. The output starts 0, 1, 9 or 15 bytes
  // past a 16-byte boundary, and its rows lie in two planes 5 bytes apart, so the stream starts
  // and ends mid-16 at each plane (and at each thread's range in the split runs). Checked row by
  // row against the pieces, with sentinels around the output and between the planes.
  const std::vector<std::vector<std::uint32_t>> width_sets = {
      {160, 1, 2, 3}, {200, 5, 9, 7, 15}, {17, 128, 16, 13}, {255, 4}};
  constexpr std::uint32_t kPlanes = 2, kPlaneGap = 5;
  constexpr std::uint8_t kSentinelByte = 0xA5;
  const test::Avx2Switch restore;
  for (const bool avx2 : {true, false}) {
    detail::allow_avx2 = avx2;
    for (const std::vector<std::uint32_t>& widths : width_sets) {
      for (const std::size_t shift : {0u, 1u, 9u, 15u}) {
        std::uint32_t total = 0;
        for (const std::uint32_t w : widths) total += w;
        const std::uint32_t plane_rows = (8u << 20) / total / kPlanes + 1;
        CAPTURE(avx2);
        CAPTURE(widths[0]);
        CAPTURE(shift);
        std::vector<std::vector<std::uint8_t>> data;
        std::vector<TensorView<const std::uint8_t>> inputs;
        for (std::size_t i = 0; i < widths.size(); ++i) {
          data.push_back(test::distinct_buffer<std::uint8_t>(
              std::size_t{kPlanes} * plane_rows * widths[i], static_cast<std::uint8_t>(i * 31)));
        }
        for (std::size_t i = 0; i < widths.size(); ++i) {
          inputs.emplace_back(data[i].data(), Layout::packed({kPlanes, plane_rows, widths[i]}));
        }
        const std::uint32_t plane_pitch = plane_rows * total + kPlaneGap;
        std::vector<std::uint8_t> store(std::size_t{kPlanes} * plane_pitch + 64, kSentinelByte);
        const auto base = reinterpret_cast<std::uintptr_t>(store.data());
        std::uint8_t* const out = store.data() + (16 - base % 16) % 16 + 16 + shift;
        const Layout out_layout =
            Layout::strided({kPlanes, plane_rows, total}, {plane_pitch, total, 1});
        join<std::uint8_t>(inputs, TensorView<std::uint8_t>(out, out_layout), 2);
        std::uint32_t wrong = 0;
        for (std::uint32_t plane = 0; plane < kPlanes; ++plane) {
          for (std::uint32_t row = 0; row < plane_rows; ++row) {
            const std::uint8_t* at =
                out + std::size_t{plane} * plane_pitch + std::size_t{row} * total;
            const std::size_t r = std::size_t{plane} * plane_rows + row;
            for (std::size_t i = 0; i < widths.size(); ++i) {
              wrong += std::memcmp(at, data[i].data() + r * widths[i], widths[i]) != 0;
              at += widths[i];
            }
          }
          const std::uint8_t* const gap = out + std::size_t{plane} * plane_pitch +
                                          std::size_t{plane_rows} * total;
          for (std::uint32_t k = 0; k < kPlaneGap; ++k) wrong += gap[k] != kSentinelByte;
        }
        for (std::size_t k = 1; k <= 16 + shift; ++k) {
          wrong += out[-static_cast<std::ptrdiff_t>(k)] != kSentinelByte;
        }
        CHECK(wrong == 0);
      }
    }
  }
}

TEST_CASE("copy_bytes_short equals memcpy for every length 0-300 and alignment") {
  std::vector<unsigned char> src(320);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 13 + 5);
  for (std::size_t misalign = 0; misalign < 4; ++misalign) {
    for (std::size_t bytes = 0; bytes <= 300; ++bytes) {
      unsigned char expected[320];
      unsigned char actual[320];
      std::memset(expected, kSentinel, sizeof expected);
      std::memset(actual, kSentinel, sizeof actual);
      std::memcpy(expected + misalign, src.data() + 1, bytes);
      detail::copy_bytes_short(actual + misalign, src.data() + 1, bytes);
      CAPTURE(misalign);
      CAPTURE(bytes);
      CHECK(std::memcmp(expected, actual, sizeof expected) == 0);
    }
  }
}

TEST_CASE("copy_short_runs equals memcpy run by run for every length 0-300, strides either way") {
  // Five runs of one length, each the length plus a gap apart in the source and spaced
  // differently in the destination (ascending, and descending from the last run): every run
  // lands where memcpy puts it and nothing between runs is written.
  constexpr std::size_t kRuns = 5;
  std::vector<unsigned char> src(kRuns * 320);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 13 + 5);
  for (const std::int64_t sign : {1, -1}) {
    for (std::size_t bytes = 0; bytes <= 300; ++bytes) {
      const auto src_step = static_cast<std::int64_t>(bytes + 3);
      const std::int64_t dst_step = sign * static_cast<std::int64_t>(bytes + 7);
      const std::int64_t dst_first = sign > 0 ? 0 : -dst_step * (kRuns - 1);
      std::vector<unsigned char> expected(kRuns * 320, kSentinel);
      std::vector<unsigned char> actual = expected;
      for (std::size_t r = 0; r < kRuns; ++r) {
        const auto rr = static_cast<std::int64_t>(r);
        std::memcpy(expected.data() + dst_first + rr * dst_step, src.data() + 1 + rr * src_step,
                    bytes);
      }
      detail::copy_short_runs(src.data() + 1, src_step, actual.data() + dst_first, dst_step,
                              kRuns, bytes);
      CAPTURE(sign);
      CAPTURE(bytes);
      CHECK(expected == actual);
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
      // Inside a run long enough for the unit-stride loop's blocks.
      std::vector<I> long_run(11, u(0));
      long_run[3] = v;
      CHECK(all_indices_legal(long_run.data(), 1, long_run.size(), bounds) == legal);
    }
  }
}

TEST_CASE_TEMPLATE("all_indices_legal finds one bad index at every position of runs of 1-40", I,
                   DMLREF_INDEX_TYPES) {
  // Unit-stride runs go in blocks of a fixed count and a tail: every run length up to past two
  // blocks, every position of the one bad index (too large, and for signed types below -n).
  const std::uint64_t n = 100;
  const IndexBounds<I> bounds = legal_index_bounds<I>(n);
  std::vector<I> bad_values = {static_cast<I>(n), std::numeric_limits<I>::max()};
  if constexpr (std::is_signed_v<I>) {
    bad_values.push_back(static_cast<I>(-101));
    bad_values.push_back(std::numeric_limits<I>::min());
  }
  for (std::size_t length = 1; length <= 40; ++length) {
    std::vector<I> run(length);
    for (std::size_t i = 0; i < length; ++i) run[i] = static_cast<I>(i % n);
    CAPTURE(length);
    CHECK(all_indices_legal(run.data(), 1, length, bounds));
    for (std::size_t at = 0; at < length; ++at) {
      for (I bad : bad_values) {
        std::vector<I> broken = run;
        broken[at] = bad;
        CAPTURE(at);
        CHECK_FALSE(all_indices_legal(broken.data(), 1, length, bounds));
      }
    }
  }
}

TEST_CASE_TEMPLATE("TupleBounds: tuples of 1-8 indices, one bad index anywhere", I,
                   DMLREF_INDEX_TYPES) {
  // Packed tuples go in stretches of whole blocks and whole tuples, then a tail. Each position has
  // its own dimension (sizes 1 to 9, so a value legal at one position is not at the next), every
  // tuple count up to past two stretches, and at every index each of the bad values of its
  // position: one above its last element, the type's maximum, and for signed types one below -n
  // and the minimum.
  const std::uint64_t stretch_tuples = 64 / sizeof(I);
  for (std::uint32_t m = 1; m <= 8; ++m) {
    std::array<IndexBounds<I>, 8> bounds{};
    std::array<std::uint64_t, 8> size{};
    for (std::uint32_t j = 0; j < m; ++j) {
      size[j] = 1 + (j * 3 + m) % 9;
      bounds[j] = legal_index_bounds<I>(size[j]);
    }
    for (std::uint64_t count = 1; count <= 2 * stretch_tuples + 3; ++count) {
      // Legal values, each position's extremes included.
      std::vector<I> tuples(count * m);
      for (std::uint64_t i = 0; i < tuples.size(); ++i) {
        const std::uint64_t j = i % m;
        tuples[i] = i % 3 == 0 ? bounds[j].lo : i % 3 == 1 ? bounds[j].hi : static_cast<I>(0);
      }
      CAPTURE(m);
      CAPTURE(count);
      const TupleBounds<I> legal(bounds.data(), m);
      REQUIRE(legal.all_legal(tuples.data(), count));
      for (std::uint64_t at = 0; at < tuples.size(); ++at) {
        const std::uint64_t n = size[at % m];
        std::vector<I> bad_values = {static_cast<I>(n), std::numeric_limits<I>::max()};
        if constexpr (std::is_signed_v<I>) {
          bad_values.push_back(static_cast<I>(-static_cast<std::int64_t>(n) - 1));
          bad_values.push_back(std::numeric_limits<I>::min());
        }
        for (I bad : bad_values) {
          CAPTURE(at);
          CAPTURE(bad);
          std::vector<I> broken = tuples;
          broken[at] = bad;
          CHECK_FALSE(legal.all_legal(broken.data(), count));
        }
      }
    }
  }
}

TEST_CASE("copy_bytes_streaming equals memcpy for every length 0-300 and destination alignment") {
  std::vector<unsigned char> src(320);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
  for (std::size_t misalign = 0; misalign < 64; ++misalign) {
    for (std::size_t bytes = 0; bytes <= 300; ++bytes) {
      // Line-aligned storage, so `misalign` is the destination's offset from a cache line: runs
      // that start and end on 16-byte boundaries stream whole, others only their whole lines.
      alignas(64) unsigned char expected[384];
      alignas(64) unsigned char actual[384];
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

TEST_CASE("StagedStream writes batches of any size at any line offset, and only them") {
  // Batches staged into one StreamStage, each continuing the destination or jumping past a gap
  // (which flushes the carried line), from every offset within a line: the destination equals
  // memcpy of the same batches, and the gaps and the bytes around keep their sentinel.
  const std::size_t total = 6 * detail::kStageBytes;
  std::vector<unsigned char> src(total);
  for (std::size_t i = 0; i < src.size(); ++i) {
    src[i] = static_cast<unsigned char>((i * 29 + 3) ^ (i >> 7));
  }
  std::minstd_rand rng(36);
  std::vector<unsigned char> expected_store(total + 4 * 64);
  std::vector<unsigned char> actual_store(expected_store.size());
  for (std::size_t misalign = 0; misalign < 64; ++misalign) {
    // A line past the first line boundary of each store, so `misalign` is the first batch's
    // offset in a line and a line of sentinels lies before it.
    const auto base = [&](std::vector<unsigned char>& v) {
      const auto at = reinterpret_cast<std::uintptr_t>(v.data());
      return v.data() + (64 - at % 64) % 64 + 64 + misalign;
    };
    std::fill(expected_store.begin(), expected_store.end(), kSentinel);
    std::fill(actual_store.begin(), actual_store.end(), kSentinel);
    unsigned char* const expected = base(expected_store);
    unsigned char* const actual = base(actual_store);
    detail::StreamStage stage;
    detail::StagedStream stream;
    std::size_t at = 0;
    while (true) {
      // Mostly short batches (a line's carry crossing several of them), some up to the stage.
      const std::size_t bytes = rng() % 4 == 0 ? 1 + rng() % detail::kStageBytes : rng() % 150;
      if (at + bytes > total) break;
      unsigned char* const staged = stream.begin(stage, actual + at);
      std::memcpy(staged, src.data() + at, bytes);
      stream.end(stage, bytes);
      std::memcpy(expected + at, src.data() + at, bytes);
      at += bytes;
      if (rng() % 8 == 0) at += 1 + rng() % 100;  // a gap: the next batch starts a new stream
    }
    stream.flush();
    detail::stream_fence();
    CAPTURE(misalign);
    CHECK(std::memcmp(expected - 64, actual - 64, total + 128) == 0);
  }
}

TEST_CASE("copy_bytes_streaming two pages at a time equals memcpy around every page boundary") {
  // Both orders, called directly, so the interleaved one (stream_interleaves_pages) runs on any
  // core: lengths on both sides of one and of several 8 KiB blocks, with tails of every kind.
  const std::size_t page = detail::kStreamPage;
  std::vector<unsigned char> src(5 * page + 64);
  // Bytes that differ a page apart (i * 13 alone repeats every 256), so a line taken from the
  // wrong page shows.
  for (std::size_t i = 0; i < src.size(); ++i) {
    src[i] = static_cast<unsigned char>((i * 13 + 5) ^ (i >> 8));
  }
  std::vector<unsigned char> expected(src.size() + 32), actual(src.size() + 32);
  for (const bool pages : {true, false}) {
    for (std::size_t misalign : {0u, 1u, 8u, 15u}) {
      for (std::size_t bytes : {2 * page - 1, 2 * page, 2 * page + 1, 2 * page + 77, 4 * page,
                                4 * page + 63, 4 * page + 64, 5 * page + 17}) {
        std::fill(expected.begin(), expected.end(), kSentinel);
        std::fill(actual.begin(), actual.end(), kSentinel);
        // The vectors' storage is 16-byte aligned (operator new), so `misalign` is the offset.
        std::memcpy(expected.data() + misalign, src.data() + 3, bytes);
        if (pages) {
          detail::copy_bytes_streaming_pages(actual.data() + misalign, src.data() + 3, bytes);
        } else {
          detail::copy_bytes_streaming_lines(actual.data() + misalign, src.data() + 3, bytes);
        }
        detail::stream_fence();
        CAPTURE(pages);
        CAPTURE(misalign);
        CAPTURE(bytes);
        CHECK(expected == actual);
      }
    }
  }
}

TEST_CASE_TEMPLATE("copy_with_plan with streaming stores equals reference_copy", T,
                   DMLREF_ALL_TYPES) {
  // Rows from below to well above kStreamMinRunBytes, padded on both sides so every row starts
  // at another alignment; the streaming path is forced (it is normally for copies of 8 MiB+),
  // and also left off. Rank 2 (one row of runs) and rank 3 padded in two dimensions (rows of
  // runs walked by walk_runs), so both shapes of copy_contiguous_runs are taken.
  constexpr std::uint32_t kRows = 4, kPlanes = 3;
  for (std::uint32_t cols : {8u, 63u, 64u, 65u, 200u, 257u}) {
    const std::int64_t src_pitch = cols + 5, dst_pitch = cols + 3;
    const std::int64_t src_plane = kRows * src_pitch + 7, dst_plane = kRows * dst_pitch + 2;
    const std::vector<T> src_data = test::distinct_buffer<T>(kPlanes * src_plane);
    const std::vector<std::pair<Layout, Layout>> layouts = {
        {Layout::strided({kRows, cols}, {src_pitch, 1}),
         Layout::strided({kRows, cols}, {dst_pitch, 1})},
        {Layout::strided({kPlanes, kRows, cols}, {src_plane, src_pitch, 1}),
         Layout::strided({kPlanes, kRows, cols}, {dst_plane, dst_pitch, 1})}};
    for (const auto& pair : layouts) {
      // Plain references, not a structured binding: CAPTURE's lambda may not name one (clang 14).
      const Layout& src_layout = pair.first;
      const Layout& dst_layout = pair.second;
      for (const bool stream : {true, false}) {
        std::vector<T> expected = sentinel_buffer<T>(kPlanes * dst_plane);
        std::vector<T> actual = expected;
        reference_copy<T>(TensorView<const T>(src_data.data(), src_layout),
                          TensorView<T>(expected.data(), dst_layout));
        const std::array<std::array<std::int64_t, kMaxRank>, 2> strides{src_layout.strides,
                                                                       dst_layout.strides};
        const detail::CopyPlan plan = detail::make_copy_plan(dst_layout.size_span(), strides);
        REQUIRE(plan.rank == src_layout.rank);  // the padding keeps every dimension apart
        detail::copy_with_plan(plan, src_data.data(), actual.data(), stream);
        CAPTURE(cols);
        CAPTURE(src_layout.rank);
        CAPTURE(stream);
        CHECK(same_buffers(expected, actual));
      }
    }
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

TEST_CASE("reverse_subsequences of an 8 MiB output along the outer axis streams its rows") {
  // {8192, 257} UINT32 with one length for every column: the fast path visits source rows in
  // order and streams each to its output row. The output rows are padded by one element, so they
  // start at every 4-byte alignment; the first 5000 rows are reversed, the rest copied. Checked
  // row by row (the golden loop over 2 Mi elements would be slow under sanitizers).
  constexpr std::uint32_t kAxis = 8192, kColumns = 257, kPitch = kColumns + 1, kLength = 5000;
  REQUIRE(std::uint64_t{kAxis} * kColumns * 4 >= detail::kStreamMinBytes);
  const std::vector<std::uint32_t> in_data =
      test::distinct_buffer<std::uint32_t>(std::size_t{kAxis} * kColumns);
  const std::vector<std::uint32_t> lengths(kColumns, kLength);
  std::vector<std::uint32_t> out(std::size_t{kAxis} * kPitch, 0xA5A5A5A5u);
  reverse_subsequences<std::uint32_t>(
      TensorView<const std::uint32_t>(in_data.data(), {kAxis, kColumns}),
      TensorView<const std::uint32_t>(lengths.data(), {1, kColumns}),
      TensorView<std::uint32_t>(out.data(), Layout::strided({kAxis, kColumns}, {kPitch, 1})), 0);
  std::uint32_t wrong = 0;
  for (std::uint32_t a = 0; a < kAxis; ++a) {
    const std::uint32_t from = a < kLength ? kLength - 1 - a : a;
    wrong += std::memcmp(out.data() + std::size_t{a} * kPitch,
                         in_data.data() + std::size_t{from} * kColumns, kColumns * 4) != 0;
    wrong += out[std::size_t{a} * kPitch + kColumns] != 0xA5A5A5A5u;
  }
  CHECK(wrong == 0);
}

TEST_CASE("reverse_subsequences of narrow rows moves them as runs, streamed where packed") {
  // {rows, columns} UINT32 along axis 0 with one length for every column: each row is a run of
  // bytes, the reversed rows copied with a negative step. Outputs of 8 MiB (kStreamMinBytes) and
  // 64 KiB; rows of 16, 64 and 128 bytes stream whole where the output is packed (the reversed
  // ones only from 128 bytes, kStreamReversedRowMinBytes), rows of 12 bytes and padded outputs
  // take ordinary stores. Lengths: none, part, all of the axis.
  for (const std::uint64_t bytes : {std::uint64_t{8} << 20, std::uint64_t{64} << 10}) {
    for (const std::uint32_t columns : {4u, 16u, 32u, 3u}) {
      for (const std::uint32_t pad : {0u, 1u}) {
        const auto axis = static_cast<std::uint32_t>(bytes / (4 * columns));
        for (const std::uint32_t length : {0u, axis / 3, axis}) {
          CAPTURE(bytes);
          CAPTURE(columns);
          CAPTURE(pad);
          CAPTURE(length);
          const std::vector<std::uint32_t> in_data =
              test::distinct_buffer<std::uint32_t>(std::size_t{axis} * columns);
          const std::vector<std::uint32_t> lengths(columns, length);
          const std::uint32_t pitch = columns + pad;
          std::vector<std::uint32_t> out(std::size_t{axis} * pitch, 0xA5A5A5A5u);
          reverse_subsequences<std::uint32_t>(
              TensorView<const std::uint32_t>(in_data.data(), {axis, columns}),
              TensorView<const std::uint32_t>(lengths.data(), {1, columns}),
              TensorView<std::uint32_t>(out.data(),
                                        Layout::strided({axis, columns}, {pitch, 1})),
              0);
          std::uint32_t wrong = 0;
          for (std::uint32_t a = 0; a < axis; ++a) {
            const std::uint32_t from = a < length ? length - 1 - a : a;
            wrong += std::memcmp(out.data() + std::size_t{a} * pitch,
                                 in_data.data() + std::size_t{from} * columns, columns * 4) != 0;
            if (pad != 0) wrong += out[std::size_t{a} * pitch + columns] != 0xA5A5A5A5u;
          }
          CHECK(wrong == 0);
        }
      }
    }
  }
}

TEST_CASE("GATHER_ND1 into an 8 MiB output streams its slices and copies the rows it selects") {
  // Output {rows, width} UINT8 (8 MiB, kStreamMinBytes) gathers rows of a {5, width} input: the
  // fast path streams the slices, 256-byte ones anywhere, 64- and 48-byte ones because they lie
  // back to back in the output (kStreamMinPackedRunBytes), 100-byte ones only in the lines each
  // covers whole. Checked row by row against the input row each index selects (the golden loop
  // over 8 Mi elements would be slow under sanitizers).
  constexpr std::uint32_t kInputRows = 5;
  for (const std::uint32_t width : {256u, 64u, 48u, 100u}) {
    const std::uint32_t rows = (8u << 20) / width + 1;
    CAPTURE(width);
    REQUIRE(std::uint64_t{rows} * width >= detail::kStreamMinBytes);
    const std::vector<std::uint8_t> in_data =
        test::distinct_buffer<std::uint8_t>(kInputRows * width);
    std::vector<std::int32_t> index(rows);
    for (std::uint32_t i = 0; i < rows; ++i) {
      // -5 .. 4: negative indices count from the end.
      index[i] = static_cast<std::int32_t>((i * 7u) % (2 * kInputRows)) -
                 static_cast<std::int32_t>(kInputRows);
    }
    std::vector<std::uint8_t> out(std::size_t{rows} * width, kSentinel);
    gather_nd1<std::uint8_t, std::int32_t>(
        TensorView<const std::uint8_t>(in_data.data(), {kInputRows, width}),
        TensorView<const std::int32_t>(index.data(), {rows, 1}),
        TensorView<std::uint8_t>(out.data(), {rows, width}), 2, 2, 0);
    std::uint32_t wrong = 0;
    for (std::uint32_t i = 0; i < rows; ++i) {
      const std::int32_t r =
          index[i] < 0 ? index[i] + static_cast<std::int32_t>(kInputRows) : index[i];
      wrong += std::memcmp(out.data() + std::size_t{i} * width,
                           in_data.data() + static_cast<std::size_t>(r) * width, width) != 0;
    }
    CHECK(wrong == 0);
  }
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

TEST_CASE_TEMPLATE("permutes whose unit strides are dimensions apart copy as transposes", T,
                   DMLREF_ALL_TYPES) {
  // {a, b, c} stored packed, copied to its permutation: the destination is unit-stride
  // innermost, the source along a dimension further out than the one before it (or the other
  // way round). with_transpose_last (copy_view's plan) moves that dimension next to the
  // innermost, so the plan's last two dimensions are a transpose (the tiles), and the copy
  // equals reference_copy.
  // Broadcast or reversed inner runs keep their order (their loops read each run once).
  struct Case {
    std::vector<std::uint32_t> sizes;
    std::vector<std::int64_t> src_strides;
    std::vector<std::int64_t> dst_strides;
    bool reordered;
  };
  const Case cases[] = {
      // {8, 3, 70} permuted (2, 1, 0): source unit-stride along the outermost dimension
      {{70, 3, 8}, {1, 70, 210}, {24, 8, 1}, true},
      // the other way round: destination unit-stride outermost
      {{70, 3, 8}, {24, 8, 1}, {1, 70, 210}, true},
      // four dimensions, the unit stride two away from the innermost
      {{33, 2, 3, 5}, {1, 33 * 5, 33 * 5 * 2, 33}, {30, 15, 5, 1}, true},
      // broadcast inner runs of the source: the broadcast loop stays
      {{70, 3, 8}, {1, 70, 0}, {24, 8, 1}, false},
  };
  for (const Case& c : cases) {
    const Layout src_layout = Layout::strided(c.sizes, c.src_strides);
    const Layout dst_layout = Layout::strided(c.sizes, c.dst_strides);
    const std::array<std::array<std::int64_t, kMaxRank>, 2> strides{src_layout.strides,
                                                                   dst_layout.strides};
    const detail::CopyPlan plan = detail::make_copy_plan(dst_layout.size_span(), strides);
    CAPTURE(src_layout.strides_string());
    CHECK_FALSE(detail::is_transpose(plan));
    CHECK(detail::is_transpose(detail::with_transpose_last(plan)) == c.reordered);
    const auto range = *src_layout.offset_range();
    const std::vector<T> src = test::distinct_buffer<T>(static_cast<std::size_t>(range.max + 1));
    const std::size_t count = Layout::packed(c.sizes).element_count();
    std::vector<T> expected = sentinel_buffer<T>(count);
    std::vector<T> actual = expected;
    reference_copy<T>(TensorView<const T>(src.data(), src_layout),
                      TensorView<T>(expected.data(), dst_layout));
    strided_copy<T>(TensorView<const T>(src.data(), src_layout),
                    TensorView<T>(actual.data(), dst_layout));
    CHECK(same_buffers(expected, actual));
  }
}

TEST_CASE_TEMPLATE("register-blocked transposes equal reference_copy: every width, kernel, edge", T,
                   std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t) {
  // copy_transposed moves K x K blocks (K = 2-16 by width; bytes 16 x 32 under AVX2) in bands of 64
  // bytes (streaming: in chunks of kTransposeChunkLines lines), element by element at the edges:
  // sizes around every multiple of those, in both directions, with padded rows, a reversed source,
  // bases off their alignment, and an outer dimension. Once with the AVX2 kernels (where the CPU
  // has them) and once with the SSE2 ones, each with and without streaming stores. Streaming stores
  // take only whole lines of the destination's rows, and only where it has
  // kTransposeStreamMinRows rows or more (1030 rows, a column-major source): with pitches of whole
  // lines, the destination starts 0, 1 or 5 elements past a line, so the streamed bands start at
  // the rows' first line boundary after a head of ordinary stores (or none).
  const std::uint32_t sizes[] = {1,  2,  3,  4,  5,  7,   8,   9,   15,
                                 16, 17, 31, 33, 63, 64, 65, 130, 1030};
  const std::uint32_t few[] = {2, 9, 17, 64, 65};
  const test::Avx2Switch restore;
  for (const bool avx2 : {true, false}) {
    detail::allow_avx2 = avx2;
    for (std::uint32_t rows : sizes) {
      for (std::uint32_t cols : few) {
        for (int variant = 0; variant < 16; ++variant) {
          const bool source_columns = variant % 2 == 0;  // source column-major, else destination
          const bool reversed = variant / 2 % 2 == 1;    // the strided source dimension negated
          const std::uint32_t outer = variant / 4 % 2 == 0 ? 1 : 3;
          const bool line_pitches = variant / 8 == 1;  // pitches of whole 64-byte lines
          // Column-major side: element (o, i, j) at o * rows * cols + i + j * pitch_c; the other
          // side row-major with a padded pitch.
          constexpr std::int64_t line = 64 / sizeof(T);
          const auto pitch = [&](std::int64_t p) {
            return line_pitches ? (p + line - 1) / line * line : p;
          };
          const std::int64_t pitch_c = pitch(rows + 2), pitch_r = pitch(cols + 3);
          const std::int64_t block_c = pitch_c * cols, block_r = pitch_r * rows;
          const std::vector<std::uint32_t> shape{outer, rows, cols};
          const std::vector<std::int64_t> columns{block_c, 1, pitch_c};
          const std::vector<std::int64_t> rows_first{block_r, pitch_r, 1};
          Layout src_layout = Layout::strided(shape, source_columns ? columns : rows_first);
          const Layout dst_layout = Layout::strided(shape, source_columns ? rows_first : columns);
          std::int64_t origin = 1;  // one element past the buffer's start: unaligned
          if (reversed) {
            const std::uint32_t d = source_columns ? 2 : 1;
            src_layout.strides[d] = -src_layout.strides[d];
            origin += -src_layout.strides[d] * (shape[d] - 1);
          }
          const auto elements =
              static_cast<std::size_t>(outer * std::max(block_c, block_r)) + 2 + line;
          const std::vector<T> src_data =
              test::distinct_buffer<T>(elements + static_cast<std::size_t>(origin));
          const TensorView<const T> src(src_data.data() + origin, src_layout);
          CAPTURE(avx2);
          CAPTURE(rows);
          CAPTURE(cols);
          CAPTURE(variant);
          // Without and with streaming stores (whole bands built in a buffer first).
          for (const bool stream : {false, true}) {
            std::vector<T> actual = sentinel_buffer<T>(elements);
            const std::size_t to_line = detail::elements_to_line(actual.data(), sizeof(T));
            const std::size_t past_line = rows % 3 == 0 ? 0 : rows % 3 == 1 ? 1 : 5;
            const std::size_t at = to_line + past_line;
            std::vector<T> expected = sentinel_buffer<T>(elements);
            reference_copy<T>(src, TensorView<T>(expected.data() + at, dst_layout));
            detail::copy_view<T>(src, TensorView<T>(actual.data() + at, dst_layout), stream);
            CAPTURE(stream);
            CAPTURE(at);
            CHECK(same_buffers(expected, actual));
          }
        }
      }
    }
  }
}

}  // namespace test_fastpath_core
