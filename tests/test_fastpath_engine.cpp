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

#include <cstdint>
#include <random>
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

}  // namespace test_fastpath_engine
