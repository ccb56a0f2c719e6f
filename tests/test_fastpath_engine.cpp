// The engine's index-driven plans read indices and lengths kIndexChunk (256) at a time, then move
// elements by width. These cases make every walk longer than two chunks (700 tuples, updates or
// subsequences per run), so each chunk boundary and the short last chunk are crossed, and diff the
// fast paths (typed and runtime) against the golden loops for every data type: GATHER_ND1 rows,
// single elements and two-coordinate tuples with clamping; SCATTER along the inner axis with
// duplicates; REVERSE_SUBSEQUENCES along the inner axis and with subsequences side by side.
#include "test_support.hpp"

#include <dmlref/ops/gather_nd1.hpp>
#include <dmlref/ops/reverse_subsequences.hpp>
#include <dmlref/ops/scatter.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace test_fastpath_engine {  // this file's own names (tests/CMakeLists.txt: unity groups)

namespace {

using dmlref::Layout;
using dmlref::TensorView;
using dmlref::test::distinct_buffer;
using dmlref::test::same_buffers;
using dmlref::test::sentinel_buffer;
using Sizes = std::vector<std::uint32_t>;

constexpr std::uint32_t kLong = 700;  // > 2 * kIndexChunk, not a multiple of it
static_assert(kLong > 2 * dmlref::detail::kIndexChunk && kLong % dmlref::detail::kIndexChunk != 0);

// Elements in a packed tensor of `sizes`, plus 8 of padding: the runtime layer's buffer sizes
// round up to 4 bytes (T10), and the padding, sentinel in every output, is compared too.
std::uint64_t count_of(const Sizes& sizes) {
  std::uint64_t n = 1;
  for (std::uint32_t s : sizes) n *= s;
  return n + 8;
}

// GATHER_ND1 over packed tensors, fast (typed and runtime) against the golden loop.
template <class T>
void check_gather(const Sizes& in_sizes, const Sizes& ix_sizes, std::uint32_t r, std::uint32_t q,
                  dmlref::IndexPolicy policy, std::mt19937& rng) {
  const Sizes out_sizes = dmlref::infer_gather_nd1_output_sizes(
      std::span<const std::uint32_t>(in_sizes), std::span<const std::uint32_t>(ix_sizes), r, q, 0);
  const std::uint32_t rank = static_cast<std::uint32_t>(in_sizes.size());
  const std::vector<T> in = distinct_buffer<T>(count_of(in_sizes));
  std::vector<std::int32_t> ix(count_of(ix_sizes));
  const std::uint32_t m = ix_sizes[rank - 1];
  for (std::size_t i = 0; i < ix.size(); ++i) {
    const auto n = static_cast<std::int32_t>(in_sizes[rank - r + i % m]);
    // In [-n, n) under Error; twice that range under Clamp, so clamping happens too.
    const std::int32_t span = policy == dmlref::IndexPolicy::Clamp ? 4 * n : 2 * n;
    ix[i] = static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(span)) - span / 2;
  }
  const dmlref::GatherNd1Options options{dmlref::kLatestFeatureLevel, policy};
  const TensorView<const T> input(in.data(), Layout::packed(in_sizes));
  const TensorView<const std::int32_t> indices(ix.data(), Layout::packed(ix_sizes));
  std::vector<T> want = sentinel_buffer<T>(count_of(out_sizes));
  std::vector<T> typed = want, runtime = want;
  dmlref::reference::gather_nd1<T, std::int32_t>(
      input, indices, TensorView<T>(want.data(), Layout::packed(out_sizes)), r, q, 0, options);
  dmlref::gather_nd1<T, std::int32_t>(
      input, indices, TensorView<T>(typed.data(), Layout::packed(out_sizes)), r, q, 0, options);
  const dmlref::TensorDesc in_desc(dmlref::data_type_of<T>, in_sizes);
  const dmlref::TensorDesc ix_desc(dmlref::DataType::Int32, ix_sizes);
  const dmlref::TensorDesc out_desc(dmlref::data_type_of<T>, out_sizes);
  const dmlref::BufferTensorDesc descs[] = {in_desc.desc(), ix_desc.desc(), out_desc.desc()};
  dmlref::gather_nd1(dmlref::GatherNd1OperatorDesc{&descs[0], &descs[1], &descs[2], r, q, 0},
                     {in.data(), in_desc.desc().TotalTensorSizeInBytes},
                     {ix.data(), ix_desc.desc().TotalTensorSizeInBytes},
                     {runtime.data(), out_desc.desc().TotalTensorSizeInBytes}, options);
  CHECK(same_buffers(want, typed));
  CHECK(same_buffers(want, runtime));
}

}  // namespace

TEST_CASE_TEMPLATE("engine: GATHER_ND1 across index chunks (rows, elements, pairs, clamping)", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(1200u + static_cast<unsigned>(sizeof(T)));
  check_gather<T>({50, 3}, {kLong, 1}, 2, 2, dmlref::IndexPolicy::Error, rng);   // 3-element rows
  check_gather<T>({50, 1}, {kLong, 1}, 2, 2, dmlref::IndexPolicy::Error, rng);   // one element
  check_gather<T>({1, 9, 11}, {1, kLong, 2}, 2, 2, dmlref::IndexPolicy::Error, rng);  // pairs
  check_gather<T>({9, 11}, {kLong, 2}, 2, 2, dmlref::IndexPolicy::Clamp, rng);
}

TEST_CASE_TEMPLATE("engine: SCATTER along the inner axis across index chunks, duplicates", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(1201u + static_cast<unsigned>(sizeof(T)));
  const Sizes sizes = {3, kLong};
  const std::vector<T> in = distinct_buffer<T>(count_of(sizes));
  const std::vector<T> up = distinct_buffer<T>(count_of(sizes), count_of(sizes));
  std::vector<std::int64_t> ix(3 * kLong);
  // Few distinct targets, negative ones too: many duplicates, whose last update must win.
  for (auto& v : ix) v = static_cast<std::int64_t>(rng() % 80) - 40;
  const Layout layout = Layout::packed(sizes);
  std::vector<T> want = sentinel_buffer<T>(count_of(sizes)), typed = want, runtime = want;
  dmlref::reference::scatter<T, std::int64_t>(TensorView<const T>(in.data(), layout),
                                              TensorView<const std::int64_t>(ix.data(), layout),
                                              TensorView<const T>(up.data(), layout),
                                              TensorView<T>(want.data(), layout), 1);
  dmlref::scatter<T, std::int64_t>(TensorView<const T>(in.data(), layout),
                                   TensorView<const std::int64_t>(ix.data(), layout),
                                   TensorView<const T>(up.data(), layout),
                                   TensorView<T>(typed.data(), layout), 1);
  const dmlref::TensorDesc data_desc(dmlref::data_type_of<T>, sizes);
  const dmlref::TensorDesc ix_desc(dmlref::DataType::Int64, sizes);
  const dmlref::BufferTensorDesc d = data_desc.desc(), i = ix_desc.desc();
  dmlref::scatter(dmlref::ScatterOperatorDesc{&d, &i, &d, &d, 1},
                  {in.data(), d.TotalTensorSizeInBytes}, {ix.data(), i.TotalTensorSizeInBytes},
                  {up.data(), d.TotalTensorSizeInBytes},
                  {runtime.data(), d.TotalTensorSizeInBytes});
  CHECK(same_buffers(want, typed));
  CHECK(same_buffers(want, runtime));
}

namespace {

// {kLong, n} along axis 1: kLong subsequences of n in a row; {n, kLong} along axis 0: side by
// side (with n = 40, several L1-sized column groups per chunk of lengths). `same` < 0: random
// lengths in [0, n + 3) (past the axis size too, so clamping is crossed); otherwise every length
// is `same`, and side by side each chunk of subsequences moves whole rows.
template <class T>
void check_reverse(std::uint32_t axis, std::uint32_t n, int same, std::mt19937& rng) {
  CAPTURE(axis);
  CAPTURE(n);
  CAPTURE(same);
  const Sizes sizes = axis == 1 ? Sizes{kLong, n} : Sizes{n, kLong};
  const Sizes length_sizes = axis == 1 ? Sizes{kLong, 1} : Sizes{1, kLong};
  const std::vector<T> in = distinct_buffer<T>(count_of(sizes));
  std::vector<std::uint64_t> lengths(kLong);
  for (auto& l : lengths) l = same < 0 ? rng() % (n + 3) : static_cast<std::uint64_t>(same);
  const Layout layout = Layout::packed(sizes);
  const TensorView<const std::uint64_t> lv(lengths.data(), Layout::packed(length_sizes));
  std::vector<T> want = sentinel_buffer<T>(count_of(sizes)), typed = want, runtime = want;
  dmlref::reference::reverse_subsequences<T>(TensorView<const T>(in.data(), layout), lv,
                                             TensorView<T>(want.data(), layout), axis);
  dmlref::reverse_subsequences<T>(TensorView<const T>(in.data(), layout), lv,
                                  TensorView<T>(typed.data(), layout), axis);
  const dmlref::TensorDesc data_desc(dmlref::data_type_of<T>, sizes);
  const dmlref::TensorDesc length_desc(dmlref::DataType::UInt64, length_sizes);
  const dmlref::BufferTensorDesc d = data_desc.desc(), l = length_desc.desc();
  dmlref::reverse_subsequences(dmlref::ReverseSubsequencesOperatorDesc{&d, &l, &d, axis},
                               {in.data(), d.TotalTensorSizeInBytes},
                               {lengths.data(), l.TotalTensorSizeInBytes},
                               {runtime.data(), d.TotalTensorSizeInBytes});
  CHECK(same_buffers(want, typed));
  CHECK(same_buffers(want, runtime));
}

}  // namespace

TEST_CASE_TEMPLATE("engine: REVERSE_SUBSEQUENCES across length chunks, inner axis and side by side",
                   T, DMLREF_ALL_TYPES) {
  std::mt19937 rng(1202u + static_cast<unsigned>(sizeof(T)));
  for (const int same : {-1, 5, 3, 0, 9}) {
    for (const std::uint32_t axis : {1u, 0u}) check_reverse<T>(axis, 5, same, rng);
  }
  for (const int same : {-1, 40}) check_reverse<T>(0, 40, same, rng);
}

// ---- the vector paths and the layouts that pick them -------------------------------------------

namespace {

// Runs f() with the engine's AVX2 paths on (where the CPU has them) and then off, so both the
// dispatched and the fallback path are diffed; the switch is put back however f() ends.
template <class F>
void with_and_without_avx2(F&& f) {
  const bool has_avx2 = dmlref::detail::engine_avx2_enabled();
  const dmlref::test::Avx2Switch restore;
  if (!has_avx2) MESSAGE("no AVX2 on this CPU (or compiler): only the fallback path runs");
  for (const bool avx2 : {true, false}) {
    if (avx2 && !has_avx2) continue;
    dmlref::detail::allow_avx2 = avx2;
    REQUIRE(dmlref::detail::engine_avx2_enabled() == avx2);
    CAPTURE(avx2);
    f();
  }
}

// {n + 2, n} along axis 1, row j reversed up to length j (so every length from 0 to n + 1, past
// the axis size); rows padded by one element and the tensors starting one element into their
// buffers, so rows sit at every alignment. Typed fast path against the golden loop.
template <class T>
void check_reversed_rows(std::uint32_t n) {
  CAPTURE(n);
  const Sizes sizes{n + 2, n};
  const std::int64_t row = n + 1;
  const Layout layout = Layout::strided(sizes, std::vector<std::int64_t>{row, 1});
  const std::size_t elements = static_cast<std::size_t>((n + 2) * row + 2);
  const std::vector<T> in = distinct_buffer<T>(elements);
  std::vector<std::uint32_t> lengths(n + 2);
  for (std::uint32_t j = 0; j < n + 2; ++j) lengths[j] = j;
  const TensorView<const std::uint32_t> lv(lengths.data(), Layout::packed({n + 2, 1}));
  std::vector<T> want = sentinel_buffer<T>(elements), got = want;
  const TensorView<const T> input(in.data() + 1, layout);
  dmlref::reference::reverse_subsequences<T>(input, lv, TensorView<T>(want.data() + 1, layout), 1);
  dmlref::reverse_subsequences<T>(input, lv, TensorView<T>(got.data() + 1, layout), 1);
  CHECK(same_buffers(want, got));
}

}  // namespace

TEST_CASE_TEMPLATE("engine: reversed contiguous rows, AVX2 and fallback, every length to 3 vectors",
                   T, DMLREF_ALL_TYPES) {
  with_and_without_avx2([] {
    // Up to three 32-byte vectors and a few elements more: the loop, the overlapping last vector,
    // the 16-byte pair and the element loop each run, for every length below the axis size.
    for (std::uint32_t n = 1; n <= 96 / sizeof(T) + 3; ++n) check_reversed_rows<T>(n);
  });
}

TEST_CASE_TEMPLATE("engine: side-by-side subsequences of one length into a padded output", T,
                   DMLREF_ALL_TYPES) {
  // {9, 300} along axis 0, every length L: whole rows of 300 elements move, to rows one element
  // apart from the 300 (so no row of the output is aligned like its source).
  const Sizes sizes{9, 300};
  const Layout in_layout = Layout::packed(sizes);
  const Layout out_layout = Layout::strided(sizes, std::vector<std::int64_t>{301, 1});
  const std::vector<T> in = distinct_buffer<T>(9 * 300);
  for (const std::uint32_t length : {0u, 1u, 4u, 8u, 9u, 12u}) {
    CAPTURE(length);
    const std::vector<std::uint32_t> lengths(300, length);
    const TensorView<const std::uint32_t> lv(lengths.data(), Layout::packed({1, 300}));
    std::vector<T> want = sentinel_buffer<T>(9 * 301 + 1), got = want;
    const TensorView<const T> input(in.data(), in_layout);
    dmlref::reference::reverse_subsequences<T>(input, lv,
                                               TensorView<T>(want.data() + 1, out_layout), 0);
    dmlref::reverse_subsequences<T>(input, lv, TensorView<T>(got.data() + 1, out_layout), 0);
    CHECK(same_buffers(want, got));
  }
}

TEST_CASE_TEMPLATE("engine: GATHER_ND1 rows of each fixed copy size and the sizes around them", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(1203u + static_cast<unsigned>(sizeof(T)));
  for (const std::size_t bytes : {8u, 16u, 24u, 32u, 64u, 96u, 128u, 256u}) {
    CAPTURE(bytes);
    if (bytes % sizeof(T) != 0) continue;
    const auto elements = static_cast<std::uint32_t>(bytes / sizeof(T));
    check_gather<T>({50, elements}, {kLong, 1}, 2, 2, dmlref::IndexPolicy::Error, rng);
    check_gather<T>({1, 50, elements}, {4, kLong / 4, 1}, 2, 3, dmlref::IndexPolicy::Clamp, rng);
  }
}

namespace {

// Strides of `sizes` packed with one element of padding after every dimension, so no two
// dimensions merge in a plan.
std::vector<std::int64_t> padded_strides(const Sizes& sizes) {
  std::vector<std::int64_t> strides(sizes.size());
  std::int64_t stride = 1;
  for (std::size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride = stride * sizes[d] + 1;
  }
  return strides;
}

std::vector<std::uint32_t> as_desc_strides(const std::vector<std::int64_t>& strides) {
  return {strides.begin(), strides.end()};
}

// SCATTER of `ix_sizes` indices (INT64, both signs, duplicates) into `sizes` along `axis`, the
// output packed or padded: fast (typed and runtime) against the golden loop. Large enough that the
// output is built in several slabs per run of the dimensions before Axis, or not in slabs at all.
template <class T>
void check_scatter(const Sizes& sizes, const Sizes& ix_sizes, std::uint32_t axis, bool padded,
                   std::mt19937& rng) {
  CAPTURE(axis);
  CAPTURE(padded);
  const Layout in_layout = Layout::packed(sizes), ix_layout = Layout::packed(ix_sizes);
  const std::vector<std::int64_t> out_strides =
      padded ? padded_strides(sizes)
             : std::vector<std::int64_t>(in_layout.strides.begin(),
                                         in_layout.strides.begin() + in_layout.rank);
  const Layout out_layout = Layout::strided(sizes, out_strides);
  const std::vector<T> in = distinct_buffer<T>(count_of(sizes));
  const std::vector<T> up = distinct_buffer<T>(count_of(ix_sizes), count_of(sizes));
  std::vector<std::int64_t> ix(count_of(ix_sizes));
  const auto n = static_cast<std::int64_t>(sizes[axis]);
  for (auto& v : ix) v = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(2 * n)) - n;
  const std::size_t out_elements = static_cast<std::size_t>(out_layout.offset_range()->max) + 9;
  std::vector<T> want = sentinel_buffer<T>(out_elements), typed = want, runtime = want;
  dmlref::reference::scatter<T, std::int64_t>(
      TensorView<const T>(in.data(), in_layout),
      TensorView<const std::int64_t>(ix.data(), ix_layout),
      TensorView<const T>(up.data(), ix_layout), TensorView<T>(want.data(), out_layout), axis);
  dmlref::scatter<T, std::int64_t>(
      TensorView<const T>(in.data(), in_layout),
      TensorView<const std::int64_t>(ix.data(), ix_layout),
      TensorView<const T>(up.data(), ix_layout), TensorView<T>(typed.data(), out_layout), axis);
  const dmlref::TensorDesc in_desc(dmlref::data_type_of<T>, sizes);
  const dmlref::TensorDesc ix_desc(dmlref::DataType::Int64, ix_sizes);
  const dmlref::TensorDesc up_desc(dmlref::data_type_of<T>, ix_sizes);
  const dmlref::TensorDesc out_desc(dmlref::data_type_of<T>, sizes, as_desc_strides(out_strides));
  const dmlref::BufferTensorDesc d[] = {in_desc.desc(), ix_desc.desc(), up_desc.desc(),
                                        out_desc.desc()};
  dmlref::scatter(dmlref::ScatterOperatorDesc{&d[0], &d[1], &d[2], &d[3], axis},
                  {in.data(), d[0].TotalTensorSizeInBytes},
                  {ix.data(), d[1].TotalTensorSizeInBytes},
                  {up.data(), d[2].TotalTensorSizeInBytes},
                  {runtime.data(), d[3].TotalTensorSizeInBytes});
  CHECK(same_buffers(want, typed));
  CHECK(same_buffers(want, runtime));
}

}  // namespace

TEST_CASE_TEMPLATE("engine: SCATTER built slab by slab, and blocks too large for a slab", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(1204u + static_cast<unsigned>(sizeof(T)));
  for (const bool padded : {false, true}) {
    // Several slabs per run of the dimensions before Axis (which merge when packed).
    check_scatter<T>({7, 60, 90}, {7, 60, 50}, 2, padded, rng);
    check_scatter<T>({40, 300, 3}, {40, 200, 3}, 1, padded, rng);
    check_scatter<T>({2, 3, 5, 40, 7}, {2, 3, 5, 40, 9}, 4, padded, rng);
    // Axis 0 (one block: no slabs) and a block above the slab limit for 4- and 8-byte types.
    check_scatter<T>({50, 40}, {70, 40}, 0, padded, rng);
  }
  check_scatter<T>({2, 70000}, {2, 300}, 1, false, rng);
}

namespace {

// A bad index at the very end of the indices: the index pass must reject it before the first
// slab (or row) is written, so the output stays sentinel in every byte.
void check_untouched(const std::vector<float>& out) {
  CHECK(std::all_of(out.begin(), out.end(), [](float v) {
    return dmlref::test::same_bits(v, dmlref::test::sentinel_buffer<float>(1)[0]);
  }));
}

}  // namespace

TEST_CASE("engine: SC8 and G10 reject the last index before any output byte is written") {
  const Sizes sizes{40, 300};
  const dmlref::TensorDesc data(dmlref::DataType::Float32, sizes);
  const std::vector<float> in = distinct_buffer<float>(40 * 300);
  SUBCASE("SCATTER along axis 1 (slabs)") {
    std::vector<std::uint32_t> ix(40 * 300);
    for (std::size_t i = 0; i < ix.size(); ++i) ix[i] = static_cast<std::uint32_t>(i % 300);
    ix.back() = 300;
    const dmlref::TensorDesc ix_desc(dmlref::DataType::UInt32, sizes);
    const dmlref::BufferTensorDesc d = data.desc(), i = ix_desc.desc();
    std::vector<float> out = sentinel_buffer<float>(40 * 300);
    DMLREF_CHECK_ERROR(
        dmlref::scatter(dmlref::ScatterOperatorDesc{&d, &i, &d, &d, 1},
                        {in.data(), d.TotalTensorSizeInBytes},
                        {ix.data(), i.TotalTensorSizeInBytes},
                        {in.data(), d.TotalTensorSizeInBytes},
                        {out.data(), d.TotalTensorSizeInBytes}),
        dmlref::ErrorCode::SC8, "IndicesTensor[39,299] is 300 but InputTensor.Sizes[1] is 300");
    check_untouched(out);
  }
  SUBCASE("GATHER_ND1 of 64-byte rows (fixed copies)") {
    const Sizes in_sizes{600, 16};
    const dmlref::TensorDesc in_desc(dmlref::DataType::Float32, in_sizes);
    const dmlref::TensorDesc ix_desc(dmlref::DataType::Int32, {600, 1});
    std::vector<std::int32_t> ix(600);
    for (std::size_t i = 0; i < ix.size(); ++i) ix[i] = static_cast<std::int32_t>(599 - i);
    ix.back() = -601;
    const std::vector<float> src = distinct_buffer<float>(600 * 16);
    std::vector<float> out = sentinel_buffer<float>(600 * 16);
    const dmlref::BufferTensorDesc d = in_desc.desc(), i = ix_desc.desc();
    DMLREF_CHECK_ERROR(
        dmlref::gather_nd1(dmlref::GatherNd1OperatorDesc{&d, &i, &d, 2, 2, 0},
                           {src.data(), d.TotalTensorSizeInBytes},
                           {ix.data(), i.TotalTensorSizeInBytes},
                           {out.data(), d.TotalTensorSizeInBytes}),
        dmlref::ErrorCode::G10, "IndicesTensor[599,0] is -601 but InputTensor.Sizes[0] is 600");
    check_untouched(out);
  }
}

namespace {

// "[1,0,2]": a coordinate as the error messages write it.
std::string coordinate_text(const dmlref::Coord& c, std::uint32_t rank) {
  std::string s = "[";
  for (std::uint32_t d = 0; d < rank; ++d) s += (d ? "," : "") + std::to_string(c[d]);
  return s + "]";
}

}  // namespace

TEST_CASE("engine: DuplicatePolicy::Reject names the first repeated target, any layout") {
  // The oracle: a plain walk of the indices in row-major order with a map from each output
  // coordinate to the first index that took it. Random ranks, axes and index layouts (padded,
  // transposed, broadcast), values of both signs; about half the cases have no duplicate.
  std::mt19937 rng(1205u);
  int rejected = 0, accepted = 0;
  for (int iteration = 0; iteration < 300; ++iteration) {
    const auto rank = static_cast<std::uint32_t>(1 + iteration % 5);
    const auto axis = static_cast<std::uint32_t>(rng() % rank);
    Sizes sizes(rank), ix_sizes(rank);
    for (std::uint32_t d = 0; d < rank; ++d) sizes[d] = ix_sizes[d] = 1 + rng() % 3;
    sizes[axis] = 2 + rng() % 6;
    ix_sizes[axis] = 1 + rng() % 3;
    const dmlref::test::RandomOperand ix_op =
        dmlref::test::random_operand(rng, ix_sizes, true, false);
    std::vector<std::int32_t> ix(ix_op.elements);
    const auto n = static_cast<std::int32_t>(sizes[axis]);
    for (auto& v : ix) v = static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(2 * n)) - n;
    const TensorView<const std::int32_t> indices(ix.data() + ix_op.origin, ix_op.layout);
    std::map<dmlref::Coord, dmlref::Coord> first_of;
    std::string expected;
    dmlref::for_each_coordinate(ix_op.layout, [&](const dmlref::Coord& u) {
      dmlref::Coord c = u;
      c[axis] = static_cast<std::uint32_t>(indices[u] < 0 ? indices[u] + n : indices[u]);
      const auto [it, inserted] = first_of.emplace(c, u);
      if (inserted || !expected.empty()) return;
      expected = "IndicesTensor" + coordinate_text(it->second, rank) + " is " +
                 std::to_string(indices[it->second]) + " and IndicesTensor" +
                 coordinate_text(u, rank) + " is " + std::to_string(indices[u]) +
                 "; both target OutputTensor" + coordinate_text(c, rank);
    });
    const std::vector<float> in = distinct_buffer<float>(count_of(sizes));
    const std::vector<float> up = distinct_buffer<float>(count_of(ix_sizes), 1000);
    std::vector<float> out = sentinel_buffer<float>(count_of(sizes)), want = out;
    const Layout layout = Layout::packed(sizes), up_layout = Layout::packed(ix_sizes);
    dmlref::ScatterOptions reject;
    reject.duplicates = dmlref::DuplicatePolicy::Reject;
    const auto run = [&](std::vector<float>& into, const dmlref::ScatterOptions& options) {
      dmlref::scatter<float, std::int32_t>(TensorView<const float>(in.data(), layout), indices,
                                           TensorView<const float>(up.data(), up_layout),
                                           TensorView<float>(into.data(), layout), axis, options);
    };
    CAPTURE(iteration);
    if (!expected.empty()) {
      ++rejected;
      DMLREF_CHECK_ERROR(run(out, reject), dmlref::ErrorCode::ScatterDuplicate, expected);
      CHECK(same_buffers(out, sentinel_buffer<float>(count_of(sizes))));
    } else {
      ++accepted;
      run(out, reject);
      dmlref::reference::scatter<float, std::int32_t>(
          TensorView<const float>(in.data(), layout), indices,
          TensorView<const float>(up.data(), up_layout), TensorView<float>(want.data(), layout),
          axis);
      CHECK(same_buffers(out, want));
    }
  }
  CHECK(rejected > 50);
  CHECK(accepted > 50);
}

}  // namespace test_fastpath_engine

namespace test_fastpath_engine {

namespace {

// Gathers rows of `width` elements into an output of at least kStreamMinBytes (8 MiB, so the
// rows stream) at `shift` elements from a 16-byte boundary, and checks every row against the
// input row its index selects and the elements around the output against their sentinels.
template <class T>
bool gathered_rows_match(std::uint32_t width, std::size_t shift) {
  constexpr std::uint32_t kInputRows = 7;
  const std::uint64_t row_bytes = width * sizeof(T);
  // Rounded up: 8 MiB is no whole number of 80-byte rows, and one row fewer would not stream.
  const auto rows =
      static_cast<std::uint32_t>((dmlref::detail::kStreamMinBytes + row_bytes - 1) / row_bytes);
  const std::vector<T> in = distinct_buffer<T>(std::size_t{kInputRows} * width);
  std::vector<std::int64_t> index(rows);
  for (std::uint32_t i = 0; i < rows; ++i) index[i] = (i * 5u + 3u) % kInputRows;
  std::vector<T> out = sentinel_buffer<T>(std::size_t{rows} * width + 2);
  T* const first = out.data() + shift;
  dmlref::gather_nd1<T, std::int64_t>(TensorView<const T>(in.data(), {kInputRows, width}),
                                      TensorView<const std::int64_t>(index.data(), {rows, 1}),
                                      TensorView<T>(first, {rows, width}), 2, 2, 0);
  bool same = true;
  for (std::uint32_t i = 0; i < rows; ++i) {
    same = same && std::memcmp(static_cast<const void*>(first + std::size_t{i} * width),
                               static_cast<const void*>(in.data() + index[i] * width),
                               width * sizeof(T)) == 0;
  }
  // Nothing before or after the output is written (a staged stream's first and last partial
  // lines take ordinary stores, and must stop at the output's ends).
  const std::vector<T> outside = sentinel_buffer<T>(2);
  same = same && (shift == 0 || std::memcmp(static_cast<const void*>(out.data()),
                                             static_cast<const void*>(outside.data()),
                                             shift * sizeof(T)) == 0);
  same = same && std::memcmp(static_cast<const void*>(first + std::size_t{rows} * width),
                             static_cast<const void*>(outside.data()),
                             (2 - shift) * sizeof(T)) == 0;
  return same;
}

}  // namespace

TEST_CASE_TEMPLATE("engine: streamed GATHER_ND1 rows into aligned and misaligned outputs", T,
                   std::uint8_t, std::uint16_t, float, double) {
  // Rows of 64, 256 and 80 bytes: moved by stream_aligned_rows where the output starts on a
  // stream_unit() boundary (shift 0 where operator new's 16 bytes are the unit), through a
  // StagedStream where it does not and rows are 128 bytes or more (shift 1, or shift 0 off a
  // line where the unit is 64), and by copy_bytes_streaming otherwise.
  for (const std::uint32_t bytes : {64u, 256u, 80u}) {
    const std::uint32_t width = bytes / static_cast<std::uint32_t>(sizeof(T));
    for (const std::size_t shift : {std::size_t{0}, std::size_t{1}}) {
      CAPTURE(bytes);
      CAPTURE(shift);
      CHECK(gathered_rows_match<T>(width, shift));
    }
  }
}

}  // namespace test_fastpath_engine

namespace test_fastpath_engine {

TEST_CASE_TEMPLATE("engine: side-by-side REVERSE whose lengths agree in a run, in chunks, or not", T,
                   std::uint8_t, dmlref::float16, float, double) {
  // {9, 700} along axis 0: 700 runs side by side (three chunks of lengths). Lengths one for the
  // whole run (rows move whole), one per chunk of kIndexChunk but not across chunks, or one
  // except the very last run.
  constexpr std::uint32_t kRows = 9;
  const Sizes sizes = {kRows, kLong};
  const std::vector<T> in = distinct_buffer<T>(count_of(sizes));
  for (int pattern = 0; pattern < 3; ++pattern) {
    std::vector<std::uint32_t> len(kLong);
    for (std::uint32_t j = 0; j < kLong; ++j) {
      len[j] = pattern == 0   ? 6u
               : pattern == 1 ? static_cast<std::uint32_t>(j / dmlref::detail::kIndexChunk * 4 % 11)
                              : (j + 1 == kLong ? 2u : 7u);
    }
    std::vector<T> want = sentinel_buffer<T>(count_of(sizes)), got = want;
    const TensorView<const T> input(in.data(), Layout::packed(sizes));
    const TensorView<const std::uint32_t> lengths(len.data(), {1, kLong});
    dmlref::reference::reverse_subsequences<T, std::uint32_t>(
        input, lengths, TensorView<T>(want.data(), Layout::packed(sizes)), 0);
    dmlref::reverse_subsequences<T, std::uint32_t>(
        input, lengths, TensorView<T>(got.data(), Layout::packed(sizes)), 0);
    CAPTURE(pattern);
    CHECK(same_buffers(want, got));
  }
}

}  // namespace test_fastpath_engine
