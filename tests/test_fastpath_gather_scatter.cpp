// The fast paths of GATHER_ND1 and SCATTER (dmlref::gather_nd1 / dmlref::scatter, typed and
// runtime) against the golden loops (dmlref::reference::gather_nd1 / scatter), on seeded random
// cases: every data type, the four index types, ranks 1-8, every (r, q, b, m) geometry (gather) and
// every axis (scatter), packed / padded / transposed / broadcast / reversed operands, padded and
// transposed outputs, size-1 dimensions, negative indices, clamping and duplicate targets. Whole
// output buffers are compared byte for byte after both were pre-filled with the same sentinel, so
// the padding an output layout skips must stay untouched too.
#include "test_support.hpp"

#include <dmlref/ops/gather_nd1.hpp>
#include <dmlref/ops/scatter.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace test_fastpath_gather_scatter {  // this file's own names (tests/CMakeLists.txt: unity groups)

namespace {

using dmlref::Coord;
using dmlref::Layout;
using dmlref::TensorView;
using Sizes = std::vector<std::uint32_t>;

constexpr unsigned char kSentinel = 0xA5;

enum class Kind { Packed, Padded, Transposed, Broadcast, Reversed };

// Storage for one operand at any layout: `origin` is where coordinate 0 lives in `elements`
// (negative strides put it past the start). 8-byte aligned for the runtime layer's T9.
struct Operand {
  Layout layout;
  std::int64_t origin = 0;
  std::size_t element_count = 0;  // how many elements the storage holds
};

// `broadcast_last` false keeps the last dimension's stride: a GATHER_ND1 tuple broadcast along its
// coordinates would reuse one index for input dimensions of different sizes.
Operand make_operand(const Sizes& sizes, Kind kind, std::mt19937& rng, bool broadcast_last = true) {
  const auto rank = static_cast<std::uint32_t>(sizes.size());
  std::vector<std::uint32_t> order(rank);
  std::iota(order.begin(), order.end(), 0u);
  if (kind == Kind::Transposed) std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::int64_t> strides(rank, 0);
  std::int64_t stride = kind == Kind::Padded ? 1 + static_cast<std::int64_t>(rng() % 2) : 1;
  for (std::uint32_t i = rank; i-- > 0;) {
    const std::uint32_t d = order[i];
    strides[d] = stride;
    const std::int64_t pad = kind == Kind::Padded ? static_cast<std::int64_t>(rng() % 3) : 0;
    stride *= static_cast<std::int64_t>(sizes[d]) + pad;
  }
  if (kind == Kind::Broadcast) {
    for (std::uint32_t d = 0; d < rank; ++d) {
      if (rng() % 2 == 0 && (broadcast_last || d + 1 < rank)) strides[d] = 0;
    }
  }
  if (kind == Kind::Reversed) {
    const std::uint32_t d = rng() % rank;
    strides[d] = -strides[d];
  }
  Operand op;
  op.layout = Layout::strided(std::span<const std::uint32_t>(sizes),
                              std::span<const std::int64_t>(strides));
  std::int64_t lo = 0, hi = 0;
  for (std::uint32_t d = 0; d < rank; ++d) {
    const std::int64_t reach = static_cast<std::int64_t>(sizes[d] - 1) * strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  op.origin = -lo;
  op.element_count = static_cast<std::size_t>(hi - lo + 1);
  return op;
}

Kind input_kind(std::mt19937& rng) { return static_cast<Kind>(rng() % 5); }
Kind output_kind(std::mt19937& rng) { return static_cast<Kind>(rng() % 3); }
// The runtime layer takes no negative strides.
Kind runtime_input_kind(std::mt19937& rng) { return static_cast<Kind>(rng() % 4); }

// Byte storage for `count` elements of T, 8-byte aligned.
template <class T>
struct Storage {
  std::vector<std::uint64_t> words;
  std::size_t bytes = 0;
  explicit Storage(std::size_t count, unsigned char fill)
      : words((count * sizeof(T) + 7) / 8 + 1), bytes(words.size() * 8) {
    std::memset(words.data(), fill, words.size() * 8);
  }
  T* data() { return reinterpret_cast<T*>(words.data()); }
  const T* data() const { return reinterpret_cast<const T*>(words.data()); }
};

template <class T>
Storage<T> distinct_storage(const Operand& op, std::uint64_t seed) {
  Storage<T> s(op.element_count, 0);
  for (std::size_t i = 0; i < op.element_count; ++i) {
    const T v = dmlref::test::distinct_value<T>(i + seed);
    std::memcpy(static_cast<void*>(s.data() + i), &v, sizeof(T));
  }
  return s;
}

// A random index for a dimension of n: in range (both signs for signed types) unless `wild`, when
// it may also lie outside [-n, n) (for IndexPolicy::Clamp).
template <class I>
I random_index(std::uint32_t n, bool wild, std::mt19937& rng) {
  const std::int64_t span = wild ? 3 * static_cast<std::int64_t>(n) + 2 : n;
  if constexpr (std::is_signed_v<I>) {
    return static_cast<I>(static_cast<std::int64_t>(rng() % (2 * span)) - span);
  } else {
    return static_cast<I>(rng() % span);
  }
}

// Fills the indices storage element by element through its layout.
template <class I, class F>
Storage<I> index_storage(const Operand& op, F&& value_for) {
  Storage<I> s(op.element_count, 0);
  TensorView<I> v(s.data() + op.origin, op.layout);
  dmlref::for_each_coordinate(op.layout, [&](const Coord& c) { v[c] = value_for(c); });
  return s;
}

std::vector<std::uint32_t> to_u32(const Layout& l) {
  std::vector<std::uint32_t> s;
  for (std::uint32_t d = 0; d < l.rank; ++d) s.push_back(static_cast<std::uint32_t>(l.strides[d]));
  return s;
}

// ---- GATHER_ND1 -----------------------------------------------------------------------------

struct GatherGeometry {
  std::uint32_t rank, r, q, b, m;
};

std::vector<GatherGeometry> all_gather_geometries() {
  std::vector<GatherGeometry> out;
  for (std::uint32_t rank = 1; rank <= 8; ++rank)
    for (std::uint32_t r = 1; r <= rank; ++r)
      for (std::uint32_t q = 1; q <= rank; ++q)
        for (std::uint32_t b = 0; b < std::min(r, q); ++b)
          for (std::uint32_t m = 1; m <= r - b; ++m)
            if ((q - 1) + (r - b - m) <= rank) out.push_back({rank, r, q, b, m});
  return out;
}

// Compile-time budget: everything that does not depend on the element and index types (the
// random geometry, the layouts, the runtime entry point, CAPTURE and CHECK) lives in non-template
// functions; only the storage fill and the typed calls are instantiated per (T, I).

// The two output buffers a case compares, byte for byte (the words of Storage<T>).
struct Outputs {
  std::vector<std::uint64_t> want, got;
};

void check_same_outputs(const Outputs& o) { CHECK(o.want == o.got); }

// The type-independent part of one random GATHER_ND1 case.
struct GatherCase {
  std::uint32_t r = 0, q = 0, b = 0;
  Sizes in_sizes, ix_sizes, out_sizes;
  bool clamp = false, runtime = false;
  dmlref::GatherNd1Options options;
  Operand in_op, ix_op, out_op;
};

GatherCase make_gather_case(const GatherGeometry& g, std::mt19937& rng) {
  const std::uint32_t rank = g.rank, r = g.r, q = g.q, b = g.b, m = g.m;
  GatherCase c;
  c.r = r;
  c.q = q;
  c.b = b;
  // Sizes 1-3 (1-2 from rank 6 on, to keep the tensors small): size-1 dimensions appear often.
  const std::uint32_t max_size = rank >= 6 ? 2 : 3;
  Sizes& in_sizes = c.in_sizes;
  Sizes& ix_sizes = c.ix_sizes;
  in_sizes.assign(rank, 1u);
  ix_sizes.assign(rank, 1u);
  for (std::uint32_t d = rank - r; d < rank; ++d) in_sizes[d] = 1 + rng() % max_size;
  for (std::uint32_t j = 0; j < b; ++j) ix_sizes[rank - q + j] = in_sizes[rank - r + j];
  for (std::uint32_t d = rank - q + b; d + 1 < rank; ++d) ix_sizes[d] = 1 + rng() % max_size;
  ix_sizes[rank - 1] = m;
  c.out_sizes = dmlref::infer_gather_nd1_output_sizes(
      std::span<const std::uint32_t>(in_sizes), std::span<const std::uint32_t>(ix_sizes), r, q, b);

  c.clamp = rng() % 4 == 0;
  c.options.index_policy = c.clamp ? dmlref::IndexPolicy::Clamp : dmlref::IndexPolicy::Error;
  c.runtime = rng() % 2 == 0;
  c.in_op = make_operand(in_sizes, c.runtime ? runtime_input_kind(rng) : input_kind(rng), rng);
  c.ix_op =
      make_operand(ix_sizes, c.runtime ? runtime_input_kind(rng) : input_kind(rng), rng, false);
  c.out_op = make_operand(c.out_sizes, output_kind(rng), rng);
  return c;
}

// The runtime entry point on the case's storages.
void run_gather_runtime(const GatherCase& c, dmlref::DataType data_type,
                        dmlref::DataType index_type, dmlref::ConstBuffer in,
                        dmlref::ConstBuffer ix, dmlref::Buffer out) {
  const dmlref::TensorDesc in_desc(data_type, c.in_sizes, to_u32(c.in_op.layout));
  const dmlref::TensorDesc ix_desc(index_type, c.ix_sizes, to_u32(c.ix_op.layout));
  const dmlref::TensorDesc out_desc(data_type, c.out_sizes, to_u32(c.out_op.layout));
  const dmlref::BufferTensorDesc descs[] = {in_desc.desc(), ix_desc.desc(), out_desc.desc()};
  const dmlref::GatherNd1OperatorDesc desc{&descs[0], &descs[1], &descs[2], c.r, c.q, c.b};
  dmlref::gather_nd1(desc, in, ix, out, c.options);
}

// The typed part of one case: the fast path (typed, or runtime when the layouts allow it) and
// the typed golden loop, each into its own sentinel-filled output.
template <class T, class I>
Outputs run_gather_case(const GatherCase& c, std::mt19937& rng) {
  const std::uint32_t rank = static_cast<std::uint32_t>(c.in_sizes.size());
  const Storage<T> in_store = distinct_storage<T>(c.in_op, rng() % 1000);
  const Storage<I> ix_store = index_storage<I>(c.ix_op, [&](const Coord& co) {
    return random_index<I>(c.in_sizes[rank - c.r + c.b + co[rank - 1]], c.clamp, rng);
  });
  Storage<T> want(c.out_op.element_count, kSentinel), got(c.out_op.element_count, kSentinel);
  const TensorView<const T> input(in_store.data() + c.in_op.origin, c.in_op.layout);
  const TensorView<const I> indices(ix_store.data() + c.ix_op.origin, c.ix_op.layout);
  dmlref::reference::gather_nd1<T, I>(
      input, indices, TensorView<T>(want.data() + c.out_op.origin, c.out_op.layout), c.r, c.q,
      c.b, c.options);
  if (!c.runtime) {
    dmlref::gather_nd1<T, I>(input, indices,
                             TensorView<T>(got.data() + c.out_op.origin, c.out_op.layout), c.r,
                             c.q, c.b, c.options);
  } else {
    run_gather_runtime(c, dmlref::data_type_of<T>, dmlref::data_type_of<I>,
                       {in_store.data(), in_store.bytes}, {ix_store.data(), ix_store.bytes},
                       {got.data(), got.bytes});
  }
  return {std::move(want.words), std::move(got.words)};
}

using GatherRunner = Outputs (*)(const GatherCase&, std::mt19937&);

// One random case of geometry g with the index type `runners` picks.
void check_gather_case(const GatherGeometry& g, std::mt19937& rng, GatherRunner runner) {
  const GatherCase c = make_gather_case(g, rng);
  CAPTURE(c.in_op.layout.sizes_string());
  CAPTURE(c.ix_op.layout.sizes_string());
  CAPTURE(c.clamp);
  CAPTURE(c.runtime);
  check_same_outputs(runner(c, rng));
}

// The four index types, picked by rng() % 4: INT64, INT32, UINT64, UINT32.
template <class T>
constexpr std::array<GatherRunner, 4> kGatherRunners = {
    &run_gather_case<T, std::int64_t>, &run_gather_case<T, std::int32_t>,
    &run_gather_case<T, std::uint64_t>, &run_gather_case<T, std::uint32_t>};

void check_every_gather_geometry(std::mt19937& rng, const std::array<GatherRunner, 4>& runners) {
  const std::vector<GatherGeometry> geometries = all_gather_geometries();
  int cases = 0;
  for (const GatherGeometry& g : geometries) {
    CAPTURE(g.rank);
    CAPTURE(g.r);
    CAPTURE(g.q);
    CAPTURE(g.b);
    CAPTURE(g.m);
    for (int rep = 0; rep < 2; ++rep) {
      check_gather_case(g, rng, runners[rng() % 4]);
      ++cases;
    }
  }
  CHECK(cases > 1000);
}

}  // namespace

TEST_CASE_TEMPLATE("fast GATHER_ND1 == golden loop: every geometry of ranks 1-8, random layouts",
                   T, DMLREF_ALL_TYPES) {
  std::mt19937 rng(20261121u + static_cast<unsigned>(sizeof(T)) * 7u +
                   (std::is_floating_point_v<T> ? 1u : 0u));
  check_every_gather_geometry(rng, kGatherRunners<T>);
}

TEST_CASE("fast GATHER_ND1: a slice of 64 contiguous elements per tuple takes the memcpy run") {
  // Input {16, 64}, tuples of one coordinate pick rows; slices of 256 bytes (float32).
  std::mt19937 rng(7);
  const Sizes in_sizes = {16, 64}, ix_sizes = {40, 1}, out_sizes = {40, 64};
  std::vector<float> in = dmlref::test::distinct_buffer<float>(16 * 64);
  std::vector<std::int32_t> ix(40);
  for (auto& v : ix) v = static_cast<std::int32_t>(rng() % 32) - 16;
  std::vector<float> want(40 * 64, -1.0f), got(40 * 64, -1.0f);
  const TensorView<const float> input(in.data(), Layout::packed(in_sizes));
  const TensorView<const std::int32_t> indices(ix.data(), Layout::packed(ix_sizes));
  dmlref::reference::gather_nd1<float, std::int32_t>(input, indices,
                                                     TensorView<float>(want.data(), Layout::packed(out_sizes)), 2,
                                                     2, 0);
  dmlref::gather_nd1<float, std::int32_t>(input, indices, TensorView<float>(got.data(), Layout::packed(out_sizes)),
                                          2, 2, 0);
  CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
}

TEST_CASE("fast GATHER_ND1: a bad index throws the golden loop's G10 error and writes nothing") {
  // Input {4, 3}; tuples of one coordinate; the second bad index is never reported.
  const Sizes in_sizes = {4, 3}, ix_sizes = {5, 1}, out_sizes = {5, 3};
  std::vector<std::uint16_t> in = dmlref::test::distinct_buffer<std::uint16_t>(12);
  const std::vector<std::int64_t> ix = {0, -4, 4, 3, -5};
  std::vector<std::uint16_t> out(16, 0xBEEF);  // 30 bytes, rounded up to DirectML's 4 (T10)
  const TensorView<const std::uint16_t> input(in.data(), Layout::packed(in_sizes));
  const TensorView<const std::int64_t> indices(ix.data(), Layout::packed(ix_sizes));
  const TensorView<std::uint16_t> output(out.data(), Layout::packed(out_sizes));
  const char* message = "IndicesTensor[2,0] is 4 but InputTensor.Sizes[0] is 4; indices must lie in [-4, 3]";
  DMLREF_CHECK_ERROR((dmlref::gather_nd1<std::uint16_t, std::int64_t>(input, indices, output, 2, 2, 0)),
                     dmlref::ErrorCode::G10, message);
  DMLREF_CHECK_ERROR((dmlref::reference::gather_nd1<std::uint16_t, std::int64_t>(input, indices,
                                                                                 output, 2, 2, 0)),
                     dmlref::ErrorCode::G10, message);
  DMLREF_CHECK_ERROR((dmlref::validate_gather_nd1<std::uint16_t, std::int64_t>(input, indices,
                                                                               output, 2, 2, 0)),
                     dmlref::ErrorCode::G10, message);
  const dmlref::TensorDesc in_desc(dmlref::DataType::UInt16, in_sizes);
  const dmlref::TensorDesc ix_desc(dmlref::DataType::Int64, ix_sizes);
  const dmlref::TensorDesc out_desc(dmlref::DataType::UInt16, out_sizes);
  const dmlref::BufferTensorDesc descs[] = {in_desc.desc(), ix_desc.desc(), out_desc.desc()};
  const dmlref::GatherNd1OperatorDesc desc{&descs[0], &descs[1], &descs[2], 2, 2, 0};
  DMLREF_CHECK_ERROR(dmlref::gather_nd1(desc, {in.data(), 24}, {ix.data(), 40}, {out.data(), 32}),
                     dmlref::ErrorCode::G10, message);
  CHECK(std::all_of(out.begin(), out.end(), [](std::uint16_t v) { return v == 0xBEEF; }));
}

TEST_CASE_TEMPLATE("fast GATHER_ND1: tuples of two indices, a bad index in either place",
                   I, std::int64_t, std::int32_t) {
  // Input {7, 2, 3}, 40 tuples (a, b) against sizes 7 and 2: 5 is legal for a and not for b, so a
  // check that paired an index with the wrong position's bounds would miss it. Packed tuples are
  // read in one pass (bad tuples in its first stretch, a later one and the tail); tuples stored
  // position by position (all a, then all b) a position at a time. The output stays untouched.
  const Sizes in_sizes = {7, 2, 3}, ix_sizes = {1, 40, 2}, out_sizes = {1, 40, 3};
  const std::vector<float> in = dmlref::test::distinct_buffer<float>(42);
  std::vector<I> ix(80);
  for (std::size_t t = 0; t < 40; ++t) {
    ix[2 * t] = static_cast<I>(static_cast<int>(t % 14) - 7);  // -7 to 6
    ix[2 * t + 1] = static_cast<I>(static_cast<int>(t % 4) - 2);  // -2 to 1
  }
  const TensorView<const float> input(in.data(), Layout::packed(in_sizes));
  std::vector<float> want(120, -1.0f), got(120, -1.0f);
  dmlref::reference::gather_nd1<float, I>(
      input, TensorView<const I>(ix.data(), Layout::packed(ix_sizes)),
      TensorView<float>(want.data(), Layout::packed(out_sizes)), 3, 2, 0);
  dmlref::gather_nd1<float, I>(input, TensorView<const I>(ix.data(), Layout::packed(ix_sizes)),
                               TensorView<float>(got.data(), Layout::packed(out_sizes)), 3, 2, 0);
  CHECK(want == got);
  struct Bad {
    std::size_t tuple, place;
    I value;
    const char* message;
  };
  const Bad bads[] = {
      {1, 1, 5,
       "IndicesTensor[0,1,1] is 5 but InputTensor.Sizes[1] is 2; indices must lie in [-2, 1]"},
      {3, 0, 7,
       "IndicesTensor[0,3,0] is 7 but InputTensor.Sizes[0] is 7; indices must lie in [-7, 6]"},
      {21, 1, -3,
       "IndicesTensor[0,21,1] is -3 but InputTensor.Sizes[1] is 2; indices must lie in [-2, 1]"},
      {38, 1, 2,
       "IndicesTensor[0,38,1] is 2 but InputTensor.Sizes[1] is 2; indices must lie in [-2, 1]"},
      {39, 0, -8,
       "IndicesTensor[0,39,0] is -8 but InputTensor.Sizes[0] is 7; indices must lie in [-7, 6]"},
  };

  // Position by position: tuple t's index p at p * 40 + t.
  const std::array<std::uint32_t, 3> by_position_sizes = {1, 40, 2};
  const std::array<std::int64_t, 3> by_position_strides = {80, 1, 40};
  const Layout by_position = Layout::strided(by_position_sizes, by_position_strides);
  for (const bool packed : {true, false}) {
    CAPTURE(packed);
    for (const Bad& bad : bads) {
      CAPTURE(bad.tuple);
      std::vector<I> broken(80);
      for (std::size_t t = 0; t < 40; ++t) {
        for (std::size_t p = 0; p < 2; ++p) {
          broken[packed ? 2 * t + p : p * 40 + t] = ix[2 * t + p];
        }
      }
      broken[packed ? 2 * bad.tuple + bad.place : bad.place * 40 + bad.tuple] = bad.value;
      const Layout layout = packed ? Layout::packed(ix_sizes) : by_position;
      std::vector<float> out(120, -1.0f);
      DMLREF_CHECK_ERROR(
          (dmlref::gather_nd1<float, I>(input, TensorView<const I>(broken.data(), layout),
                                        TensorView<float>(out.data(), Layout::packed(out_sizes)),
                                        3, 2, 0)),
          dmlref::ErrorCode::G10, bad.message);
      CHECK(std::all_of(out.begin(), out.end(), [](float v) { return v == -1.0f; }));
    }
  }
}

TEST_CASE("fast GATHER_ND1: indices along dimensions of size 1 select element 0, not read") {
  // Input {1, 6, 1, 4}, tuples of three indices (x, k, y) where x and y address dimensions of
  // size 1: -1 and 0 under IndexPolicy::Error, anything under Clamp. Only k moves the row, and it
  // is not the tuple's first index. The golden loop resolves every index.
  const Sizes in_sizes = {1, 6, 1, 4}, ix_sizes = {1, 1, 30, 3}, out_sizes = {1, 1, 30, 4};
  const std::vector<std::uint32_t> in = dmlref::test::distinct_buffer<std::uint32_t>(24);
  const TensorView<const std::uint32_t> input(in.data(), Layout::packed(in_sizes));
  for (const bool clamp : {false, true}) {
    CAPTURE(clamp);
    dmlref::GatherNd1Options options;
    if (clamp) options.index_policy = dmlref::IndexPolicy::Clamp;
    std::vector<std::int32_t> ix(90);
    for (std::int32_t t = 0; t < 30; ++t) {
      ix[3 * t] = clamp ? t * 37 - 500 : -(t % 2);
      ix[3 * t + 1] = clamp ? t - 12 : t % 12 - 6;
      ix[3 * t + 2] = clamp ? 500 - t * 41 : -((t / 2) % 2);
    }
    std::vector<std::uint32_t> want(120, 7), got(120, 7);
    const TensorView<const std::int32_t> indices(ix.data(), Layout::packed(ix_sizes));
    dmlref::reference::gather_nd1<std::uint32_t, std::int32_t>(
        input, indices, TensorView<std::uint32_t>(want.data(), Layout::packed(out_sizes)), 4, 2,
        0, options);
    dmlref::gather_nd1<std::uint32_t, std::int32_t>(
        input, indices, TensorView<std::uint32_t>(got.data(), Layout::packed(out_sizes)), 4, 2, 0,
        options);
    CHECK(want == got);
  }
}

// ---- SCATTER --------------------------------------------------------------------------------

namespace {

// The type-independent part of one random SCATTER case.
struct ScatterCase {
  std::uint32_t axis = 0;
  Sizes in_sizes, ix_sizes;
  bool clamp = false, runtime = false;
  dmlref::ScatterOptions options;
  Operand in_op, ix_op, up_op, out_op;
};

ScatterCase make_scatter_case(std::uint32_t rank, std::uint32_t axis, std::mt19937& rng) {
  ScatterCase c;
  c.axis = axis;
  const std::uint32_t max_size = rank >= 6 ? 2 : 3;
  Sizes& in_sizes = c.in_sizes;
  Sizes& ix_sizes = c.ix_sizes;
  in_sizes.resize(rank);
  ix_sizes.resize(rank);
  for (std::uint32_t d = 0; d < rank; ++d) in_sizes[d] = ix_sizes[d] = 1 + rng() % max_size;
  // Along Axis the indices may be shorter or longer than the input: longer forces duplicates.
  ix_sizes[axis] = 1 + rng() % (in_sizes[axis] + 2);
  c.clamp = rng() % 4 == 0;
  c.options.index_policy = c.clamp ? dmlref::IndexPolicy::Clamp : dmlref::IndexPolicy::Error;
  c.runtime = rng() % 2 == 0;
  auto kind = [&] { return c.runtime ? runtime_input_kind(rng) : input_kind(rng); };
  c.in_op = make_operand(in_sizes, kind(), rng);
  c.ix_op = make_operand(ix_sizes, kind(), rng);
  c.up_op = make_operand(ix_sizes, kind(), rng);
  c.out_op = make_operand(in_sizes, output_kind(rng), rng);
  return c;
}

// The runtime entry point, or the runtime form of the plain loop, on the case's storages.
void run_scatter_runtime(const ScatterCase& c, dmlref::DataType data_type,
                         dmlref::DataType index_type, dmlref::ConstBuffer in,
                         dmlref::ConstBuffer ix, dmlref::ConstBuffer up, dmlref::Buffer out,
                         bool reference) {
  const dmlref::TensorDesc in_desc(data_type, c.in_sizes, to_u32(c.in_op.layout));
  const dmlref::TensorDesc ix_desc(index_type, c.ix_sizes, to_u32(c.ix_op.layout));
  const dmlref::TensorDesc up_desc(data_type, c.ix_sizes, to_u32(c.up_op.layout));
  const dmlref::TensorDesc out_desc(data_type, c.in_sizes, to_u32(c.out_op.layout));
  const dmlref::BufferTensorDesc descs[] = {in_desc.desc(), ix_desc.desc(), up_desc.desc(),
                                            out_desc.desc()};
  const dmlref::ScatterOperatorDesc desc{&descs[0], &descs[1], &descs[2], &descs[3], c.axis};
  if (reference) {
    dmlref::reference::scatter(desc, in, ix, up, out, c.options);
  } else {
    dmlref::scatter(desc, in, ix, up, out, c.options);
  }
}

template <class T, class I>
Outputs run_scatter_case(const ScatterCase& c, std::mt19937& rng) {
  const Storage<T> in_store = distinct_storage<T>(c.in_op, 0);
  const Storage<T> up_store = distinct_storage<T>(c.up_op, 5000);
  const std::uint32_t n = c.in_sizes[c.axis];
  const Storage<I> ix_store = index_storage<I>(
      c.ix_op, [&](const Coord&) { return random_index<I>(n, c.clamp, rng); });
  Storage<T> want(c.out_op.element_count, kSentinel), got(c.out_op.element_count, kSentinel);
  const TensorView<const T> input(in_store.data() + c.in_op.origin, c.in_op.layout);
  const TensorView<const I> indices(ix_store.data() + c.ix_op.origin, c.ix_op.layout);
  const TensorView<const T> updates(up_store.data() + c.up_op.origin, c.up_op.layout);
  dmlref::reference::scatter<T, I>(input, indices, updates,
                                   TensorView<T>(want.data() + c.out_op.origin, c.out_op.layout),
                                   c.axis, c.options);
  if (!c.runtime) {
    dmlref::scatter<T, I>(input, indices, updates,
                          TensorView<T>(got.data() + c.out_op.origin, c.out_op.layout), c.axis,
                          c.options);
  } else {
    const auto runtime = [&](Storage<T>& out, bool reference) {
      run_scatter_runtime(c, dmlref::data_type_of<T>, dmlref::data_type_of<I>,
                          {in_store.data(), in_store.bytes}, {ix_store.data(), ix_store.bytes},
                          {up_store.data(), up_store.bytes}, {out.data(), out.bytes}, reference);
    };
    runtime(got, false);
    // The runtime form of the plain loop (by element width) equals the typed one.
    Storage<T> runtime_want(c.out_op.element_count, kSentinel);
    runtime(runtime_want, true);
    CHECK(runtime_want.words == want.words);
  }
  return {std::move(want.words), std::move(got.words)};
}

using ScatterRunner = Outputs (*)(const ScatterCase&, std::mt19937&);

void check_scatter_case(std::uint32_t rank, std::uint32_t axis, std::mt19937& rng,
                        ScatterRunner runner) {
  const ScatterCase c = make_scatter_case(rank, axis, rng);
  CAPTURE(c.in_op.layout.sizes_string());
  CAPTURE(c.ix_op.layout.sizes_string());
  CAPTURE(c.clamp);
  CAPTURE(c.runtime);
  check_same_outputs(runner(c, rng));
}

// The four index types, picked by rng() % 4: INT64, INT32, UINT64, UINT32.
template <class T>
constexpr std::array<ScatterRunner, 4> kScatterRunners = {
    &run_scatter_case<T, std::int64_t>, &run_scatter_case<T, std::int32_t>,
    &run_scatter_case<T, std::uint64_t>, &run_scatter_case<T, std::uint32_t>};

void check_every_scatter_axis(std::mt19937& rng, const std::array<ScatterRunner, 4>& runners) {
  int cases = 0;
  for (std::uint32_t rank = 1; rank <= 8; ++rank) {
    for (std::uint32_t axis = 0; axis < rank; ++axis) {
      CAPTURE(rank);
      CAPTURE(axis);
      for (int rep = 0; rep < 12; ++rep) {
        check_scatter_case(rank, axis, rng, runners[rng() % 4]);
        ++cases;
      }
    }
  }
  CHECK(cases == 12 * 36);
}

}  // namespace

TEST_CASE_TEMPLATE("fast SCATTER == golden loop: ranks 1-8, every axis, random layouts, duplicates",
                   T, DMLREF_ALL_TYPES) {
  std::mt19937 rng(1121u + static_cast<unsigned>(sizeof(T)) * 13u +
                   (std::is_floating_point_v<T> ? 1u : 0u));
  check_every_scatter_axis(rng, kScatterRunners<T>);
}

namespace {

// Rows along the innermost axis, contiguous: the layout whose index reader goes in blocks of a
// fixed count and a tail (scatter_targets). Every row length around a block, legal indices
// (negative ones too) and, under IndexPolicy::Clamp, wild ones.
template <class T, class I>
void check_scatter_long_rows(std::mt19937& rng) {
  for (std::uint32_t n : {1u, 7u, 8u, 9u, 16u, 17u, 33u, 300u}) {
    for (std::uint32_t m : {1u, n, n + 9}) {
      for (bool clamp : {false, true}) {
        CAPTURE(n);
        CAPTURE(m);
        CAPTURE(clamp);
        std::vector<T> in(3 * std::size_t{n}), up(3 * std::size_t{m});
        for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<T>(i % 100);
        for (std::size_t i = 0; i < up.size(); ++i) up[i] = static_cast<T>(100 + i % 27);
        std::vector<I> ix(up.size());
        for (I& v : ix) v = random_index<I>(n, clamp, rng);
        dmlref::ScatterOptions options;
        options.index_policy = clamp ? dmlref::IndexPolicy::Clamp : dmlref::IndexPolicy::Error;
        std::vector<T> got(in.size()), want(in.size());
        const TensorView<const T> input(in.data(), {3, n});
        const TensorView<const I> indices(ix.data(), {3, m});
        const TensorView<const T> updates(up.data(), {3, m});
        dmlref::scatter<T, I>(input, indices, updates, TensorView<T>(got.data(), {3, n}), 1,
                              options);
        dmlref::reference::scatter<T, I>(input, indices, updates,
                                         TensorView<T>(want.data(), {3, n}), 1, options);
        CHECK(got == want);
      }
    }
  }
}

}  // namespace

TEST_CASE("fast SCATTER == golden loop: long contiguous rows, every index type, clamped or not") {
  std::mt19937 rng(4242);
  check_scatter_long_rows<float, std::int32_t>(rng);
  check_scatter_long_rows<float, std::uint32_t>(rng);
  check_scatter_long_rows<std::uint8_t, std::int64_t>(rng);
  check_scatter_long_rows<double, std::uint64_t>(rng);
  check_scatter_long_rows<std::int16_t, std::int32_t>(rng);
}

TEST_CASE("fast SCATTER: duplicates keep the last update in row-major order of the indices") {
  // Input {2, 3}, Axis 1, indices {2, 4}: row 0 writes column 1 three times, row 1 column 0 twice.
  const std::vector<float> in = {0, 1, 2, 3, 4, 5};
  const std::vector<std::uint32_t> ix = {1, 1, 2, 1, 0, 2, 0, 2};
  const std::vector<float> up = {10, 11, 12, 13, 20, 21, 22, 23};
  std::vector<float> got(6, -1), want(6, -1);
  const TensorView<const float> input(in.data(), {2, 3});
  const TensorView<const std::uint32_t> indices(ix.data(), {2, 4});
  const TensorView<const float> updates(up.data(), {2, 4});
  dmlref::scatter<float, std::uint32_t>(input, indices, updates, TensorView<float>(got.data(), {2, 3}),
                                        1);
  dmlref::reference::scatter<float, std::uint32_t>(input, indices, updates,
                                                   TensorView<float>(want.data(), {2, 3}), 1);
  CHECK(got == std::vector<float>{0, 13, 12, 22, 4, 23});
  CHECK(got == want);
}

TEST_CASE("fast SCATTER: updates repeated by broadcast along Axis are stored once, not each time") {
  // Indices and updates {2, 2^31 - 1} with strides {1, 0}: row r stores up[r] at ix[r] 2^31 - 1
  // times over. The plan walks each stored update once; where only the indices are broadcast,
  // the updates are real elements and all of them are walked.
  const Layout repeated = Layout::strided({2, 2147483647}, {1, 0});
  const Layout output = Layout::packed({2, 4});
  const Layout updates = Layout::strided({2, 2147483647}, {2147483647, 1});
  const dmlref::detail::CopyPlan once =
      dmlref::detail::plan_scatter(repeated, repeated, output, 1).walk;
  CHECK(once.run_count() * once.inner_size() == 2);
  const dmlref::detail::CopyPlan every =
      dmlref::detail::plan_scatter(repeated, updates, output, 1).walk;
  CHECK(every.run_count() * every.inner_size() == 2ull * 2147483647);

  const std::vector<float> in = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<std::int32_t> ix = {2, -1};
  const std::vector<float> up = {9, 8};
  std::vector<float> out(8, -1);
  const dmlref::TensorDesc data_desc(dmlref::DataType::Float32, {2, 4});
  const dmlref::TensorDesc ix_desc(dmlref::DataType::Int32, {2, 2147483647}, {1, 0});
  const dmlref::TensorDesc up_desc(dmlref::DataType::Float32, {2, 2147483647}, {1, 0});
  const dmlref::BufferTensorDesc data = data_desc.desc(), index = ix_desc.desc(),
                                 update = up_desc.desc();
  const dmlref::ScatterOperatorDesc desc{&data, &index, &update, &data, 1};
  dmlref::scatter(desc, {in.data(), 32}, {ix.data(), 8}, {up.data(), 8}, {out.data(), 32});
  CHECK(out == std::vector<float>{0, 1, 9, 3, 4, 5, 6, 8});
}

namespace {

// For the scope of a test: SCATTER's SC8 pass narrows the indices of every call, however few
// (detail::check_and_narrow_indices; without AVX2 it never narrows). Then the count is restored
// as it was (test_fastpath_threads lowers it for a whole run).
class NarrowEveryCall {
 public:
  NarrowEveryCall() { dmlref::detail::narrow_min_indices = 1; }
  NarrowEveryCall(const NarrowEveryCall&) = delete;
  NarrowEveryCall& operator=(const NarrowEveryCall&) = delete;
  ~NarrowEveryCall() { dmlref::detail::narrow_min_indices = before_; }

 private:
  std::uint64_t before_ = dmlref::detail::narrow_min_indices;
};

// For the scope of a test: places take 32 bits along axes longer than `max_axis` (0: every axis),
// so that small tensors exercise what SCATTER along axes over 65536 elements does with 8-byte
// indices.
class Narrow16UpTo {
 public:
  explicit Narrow16UpTo(std::uint32_t max_axis) { dmlref::detail::narrow16_max_axis = max_axis; }
  Narrow16UpTo(const Narrow16UpTo&) = delete;
  Narrow16UpTo& operator=(const Narrow16UpTo&) = delete;
  ~Narrow16UpTo() { dmlref::detail::narrow16_max_axis = before_; }

 private:
  std::uint32_t before_ = dmlref::detail::narrow16_max_axis;
};

}  // namespace

TEST_CASE("fast SCATTER, indices narrowed by SC8's pass == golden loop: ranks 1-8, every axis") {
  const NarrowEveryCall narrow;
  std::mt19937 rng(7717u);
  check_every_scatter_axis(rng, kScatterRunners<float>);
  check_every_scatter_axis(rng, kScatterRunners<std::uint8_t>);
  check_every_scatter_axis(rng, kScatterRunners<double>);
  check_every_scatter_axis(rng, kScatterRunners<std::int16_t>);
}

TEST_CASE("fast SCATTER, 8-byte indices narrowed to 32-bit places == golden loop") {
  // 4-byte indices are not narrowed then: they run beside as the reader's path.
  const NarrowEveryCall narrow;
  const Narrow16UpTo places32(0);
  std::mt19937 rng(7718u);
  check_every_scatter_axis(rng, kScatterRunners<float>);
  check_every_scatter_axis(rng, kScatterRunners<std::uint8_t>);
  check_every_scatter_axis(rng, kScatterRunners<double>);
  check_every_scatter_axis(rng, kScatterRunners<std::int16_t>);
}

namespace {

// SC8's narrowed pass over `indices` (`stored`: broadcast dimensions at size 1) for an axis of n:
// legal or not as the golden rule says, and where it narrows, each index's place is
// normalize_index of it, read through the places' layout.
template <class I>
void check_narrowed_places(const TensorView<const I>& indices, std::uint32_t n) {
  Layout stored = indices.layout();
  for (std::uint32_t d = 0; d < stored.rank; ++d) {
    if (stored.strides[d] == 0) stored.sizes[d] = 1;
  }
  bool legal = true;
  dmlref::for_each_coordinate(indices.layout(), [&](const Coord& u) {
    legal = legal && dmlref::normalize_index(indices[u], n).has_value();
  });
  dmlref::detail::NarrowedIndices narrowed;
  const NarrowEveryCall narrow;
  CHECK(dmlref::detail::check_and_narrow_indices(indices.layout(), stored, indices.data(),
                                                 dmlref::legal_index_bounds<I>(n), n,
                                                 &narrowed) == legal);
  if (!legal) return;
  // 16-bit places up to narrow16_max_axis, 32-bit ones past it for 8-byte indices only.
  const bool places16 = n <= dmlref::detail::narrow16_max_axis;
  CHECK((narrowed.places != nullptr) ==
        (dmlref::detail::engine_avx2_enabled() && (places16 || sizeof(I) == 8)));
  if (narrowed.places == nullptr) return;
  CHECK(narrowed.place_bytes == (places16 ? 2u : 4u));
  const TensorView<const std::uint16_t> places16_view(
      static_cast<const std::uint16_t*>(narrowed.places), narrowed.layout);
  const TensorView<const std::uint32_t> places32_view(
      static_cast<const std::uint32_t*>(narrowed.places), narrowed.layout);
  int wrong = 0;
  dmlref::for_each_coordinate(indices.layout(), [&](const Coord& u) {
    const std::uint64_t place = places16 ? places16_view[u] : places32_view[u];
    wrong += place != *dmlref::normalize_index(indices[u], n);
  });
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE_TEMPLATE("engine: SC8's narrowed pass keeps each index's place, any layout, any bad one",
                   I, std::int64_t, std::int32_t, std::uint64_t, std::uint32_t) {
  std::mt19937 rng(909u + static_cast<unsigned>(sizeof(I)));
  // Rows of 103: six blocks of 16 and a tail. Along an axis of 37, of 65536 (the most a 16-bit
  // place holds), and past it (32-bit places for 8-byte indices; 4-byte ones are not narrowed).
  for (const std::uint32_t n : {37u, 65536u, 65537u, 3000017u}) {
    CAPTURE(n);
    std::vector<I> storage(5 * 103);
    for (I& v : storage) v = random_index<I>(n, false, rng);
    const TensorView<const I> packed(storage.data(), {5, 103});
    check_narrowed_places(packed, n);
    // Transposed, broadcast along axis 0, and reversed in both dimensions.
    const auto view = [&](std::size_t first, std::int64_t s0, std::int64_t s1) {
      return TensorView<const I>(storage.data() + first, Layout::strided({5, 103}, {s0, s1}));
    };
    check_narrowed_places(view(0, 1, 5), n);
    check_narrowed_places(view(0, 0, 1), n);
    check_narrowed_places(view(514, -103, -1), n);
    // One illegal index, at the ends of a block and in the tail, found wherever it lies.
    std::vector<I> bad_values = {static_cast<I>(n), std::numeric_limits<I>::max()};
    if constexpr (std::is_signed_v<I>) {
      bad_values.push_back(static_cast<I>(-static_cast<std::int64_t>(n) - 1));
      bad_values.push_back(std::numeric_limits<I>::min());
    }
    for (const std::size_t at : {0, 15, 16, 17, 100, 102, 103, 514}) {
      for (const I bad : bad_values) {
        CAPTURE(at);
        CAPTURE(bad);
        std::vector<I> with_bad = storage;
        with_bad[at] = bad;
        check_narrowed_places(TensorView<const I>(with_bad.data(), {5, 103}), n);
      }
    }
    // The extremes that are legal: n - 1, and -n for signed indices.
    std::vector<I> edges = storage;
    edges[7] = static_cast<I>(n - 1);
    if constexpr (std::is_signed_v<I>) edges[8] = static_cast<I>(-static_cast<std::int64_t>(n));
    check_narrowed_places(TensorView<const I>(edges.data(), {5, 103}), n);
  }
}

namespace {

// At least kStreamMinBytes of places (`place_bytes` each) for indices of type I along an axis of
// n: the lines a run fills whole take streaming stores. One run (packed), and rows of 5000 in a
// padded layout, so that runs start at every offset within a line that places take (5000 % 32 =
// 8: multiples of 8 places, a quarter line of 16-bit ones, half a line of 32-bit ones), streamed
// or not; then a bad index inside a streamed line, still found.
template <class I>
void check_streamed_places(std::uint32_t n, std::uint64_t place_bytes, std::uint32_t seed) {
  constexpr std::uint32_t kRow = 5000;
  const auto rows = static_cast<std::uint32_t>(
      (dmlref::detail::kStreamMinBytes / place_bytes + kRow - 1) / kRow);
  std::mt19937 rng(seed);
  std::vector<I> storage(std::size_t{rows} * (kRow + 3));
  for (I& v : storage) v = random_index<I>(n, false, rng);
  const TensorView<const I> packed(storage.data(), {rows, kRow});
  const TensorView<const I> padded(storage.data(), Layout::strided({rows, kRow}, {kRow + 3, 1}));
  REQUIRE(packed.element_count() * place_bytes >= dmlref::detail::kStreamMinBytes);
  REQUIRE(kRow >= dmlref::detail::kNarrowStreamMinRun);
  check_narrowed_places(packed, n);
  check_narrowed_places(padded, n);
  storage[std::size_t{rows / 2} * (kRow + 3) + 700] = static_cast<I>(n);
  check_narrowed_places(padded, n);
}

}  // namespace

TEST_CASE("engine: SC8's narrowed pass streams 8 MiB of places and writes every one") {
  check_streamed_places<std::int32_t>(4099, 2, 4242u);
}

TEST_CASE("engine: SC8's narrowed pass streams 8 MiB of 32-bit places and writes every one") {
  // int64 indices along an axis past 16-bit places.
  static_assert(70001 > dmlref::detail::kNarrow16MaxAxis);
  check_streamed_places<std::int64_t>(70001, 4, 4243u);
}

TEST_CASE("engine: scratch memory is kept between calls and taken again, the larger block kept") {
  using dmlref::detail::Scratch;
  void* kept = nullptr;
  {
    Scratch first;
    REQUIRE(first.reserve(std::size_t{1} << 20));
    kept = first.data();
    REQUIRE(first.reserve(std::size_t{1} << 10));  // smaller: the same block
    CHECK(first.data() == kept);
  }  // given back
  {
    Scratch other;  // destroyed last, so it gives back its smaller block second
    Scratch again;
    REQUIRE(again.reserve(std::size_t{1} << 10));
    CHECK(again.data() == kept);  // the kept block, not fresh memory
    REQUIRE(other.reserve(std::size_t{1} << 10));  // while `again` holds it: memory of its own
    CHECK(other.data() != kept);
    std::memset(other.data(), 0x5a, std::size_t{1} << 10);
    std::memset(again.data(), 0xa5, std::size_t{1} << 10);
  }  // both given back, the larger first: it stays
  Scratch last;
  REQUIRE(last.reserve(std::size_t{1} << 20));
  CHECK(last.data() == kept);
}

TEST_CASE("engine: a large scratch block is whole pages, kept, and freed on request") {
  using dmlref::detail::Scratch;
  const std::size_t bytes = (std::size_t{5} << 20) + 3;  // huge pages from 4 MiB, not a whole one
  void* large_block = nullptr;
  {
    Scratch large;
    REQUIRE(large.reserve(bytes));
    large_block = large.data();
#if defined(__linux__)
    CHECK(reinterpret_cast<std::uintptr_t>(large_block) % (std::uintptr_t{2} << 20) == 0);
#endif
    auto* const p = static_cast<unsigned char*>(large_block);
    std::memset(p, 0x3c, bytes);  // the sanitizers see any byte short of `bytes`
    CHECK(p[bytes - 1] == 0x3c);
  }  // given back: the largest so far, so kept
  {
    Scratch again;
    REQUIRE(again.reserve(std::size_t{1} << 10));
    CHECK(again.data() == large_block);
  }
  dmlref::release_scratch_memory();
  Scratch after;
  REQUIRE(after.reserve(std::size_t{1} << 10));
  CHECK(after.data() != large_block);  // fresh memory: nothing was kept
}

TEST_CASE("fast SCATTER, narrowed: a bad index in the tail names its coordinate, writes nothing") {
  const NarrowEveryCall narrow;
  std::vector<float> in(5 * 37, 1.0f), up(5 * 103, 2.0f), out(5 * 37, -7.0f);
  std::vector<std::int64_t> ix(5 * 103);
  for (std::size_t i = 0; i < ix.size(); ++i) ix[i] = static_cast<std::int64_t>(i % 37) - 18;
  ix[4 * 103 + 101] = -38;
  DMLREF_CHECK_ERROR((dmlref::scatter<float, std::int64_t>(
                         TensorView<const float>(in.data(), {5, 37}),
                         TensorView<const std::int64_t>(ix.data(), {5, 103}),
                         TensorView<const float>(up.data(), {5, 103}),
                         TensorView<float>(out.data(), {5, 37}), 1)),
                     dmlref::ErrorCode::SC8,
                     "IndicesTensor[4,101] is -38 but InputTensor.Sizes[1] is 37");
  CHECK(std::all_of(out.begin(), out.end(), [](float v) { return v == -7.0f; }));
}

TEST_CASE("fast SCATTER, narrowed: the runtime entry point over reversed indices and outputs") {
  // 5000 indices: narrowed without lowering the threshold. The places SC8's pass keeps follow the
  // indices as described, and are turned around with them.
  constexpr std::uint32_t kN = 5000;
  static_assert(kN >= dmlref::detail::kNarrowMinIndices);
  const std::vector<float> in = dmlref::test::distinct_buffer<float>(kN);
  const std::vector<float> up = dmlref::test::distinct_buffer<float>(kN, 9000);
  std::vector<std::int32_t> ix(kN);
  std::mt19937 rng(5000);
  for (auto& v : ix) v = random_index<std::int32_t>(kN, false, rng);
  const dmlref::TensorDesc dd(dmlref::DataType::Float32, {kN}), di(dmlref::DataType::Int32, {kN});
  const dmlref::BufferTensorDesc data = dd.desc(), index = di.desc();
  const dmlref::ScatterOperatorDesc desc{&data, &index, &data, &data, 0};
  for (const std::uint8_t indices_reversed : {0, 1}) {
    CAPTURE(int{indices_reversed});
    // The golden result over the tensors as the caller holds them: input, indices and output
    // read backwards; updates as described.
    std::vector<float> want(kN);
    for (std::uint32_t i = 0; i < kN; ++i) want[i] = in[kN - 1 - i];
    for (std::uint32_t u = 0; u < kN; ++u) {
      const std::int32_t v = indices_reversed ? ix[kN - 1 - u] : ix[u];
      want[*dmlref::normalize_index(v, kN)] = up[u];
    }
    std::reverse(want.begin(), want.end());
    std::vector<float> got(kN, -1.0f);
    const std::vector<std::uint8_t> reversed = {1, indices_reversed, 0, 1};
    dmlref::scatter(desc, {in.data(), kN * 4}, {ix.data(), kN * 4}, {up.data(), kN * 4},
                    {got.data(), kN * 4}, {}, reversed);
    CHECK(got == want);
  }
}

TEST_CASE("fast SCATTER, narrowed: indices reversed along either dimension, or both") {
  // {50, 100} along axis 1, the indices and the output turned around along the dimensions each
  // mask sets: the kept places must turn with the indices, whatever they reverse.
  constexpr std::uint32_t kRows = 50, kCols = 100, kN = kRows * kCols;
  static_assert(kN >= dmlref::detail::kNarrowMinIndices);
  const std::vector<float> in = dmlref::test::distinct_buffer<float>(kN);
  const std::vector<float> up = dmlref::test::distinct_buffer<float>(kN, 9000);
  std::vector<std::int64_t> ix(kN);
  std::mt19937 rng(5050);
  for (auto& v : ix) v = random_index<std::int64_t>(kCols, false, rng);
  const dmlref::TensorDesc dd(dmlref::DataType::Float32, {kRows, kCols});
  const dmlref::TensorDesc di(dmlref::DataType::Int64, {kRows, kCols});
  const dmlref::BufferTensorDesc data = dd.desc(), index = di.desc();
  const dmlref::ScatterOperatorDesc desc{&data, &index, &data, &data, 1};
  // Element (r, c) of a tensor stored with `mask`'s dimensions turned around.
  const auto at = [](std::uint8_t mask, std::uint32_t r, std::uint32_t c) {
    return ((mask & 1) != 0 ? kRows - 1 - r : r) * kCols + ((mask & 2) != 0 ? kCols - 1 - c : c);
  };
  // 16-bit places, then 32-bit ones (taken along this axis of 100 by lowering their limit).
  for (const std::uint32_t max16 : {dmlref::detail::kNarrow16MaxAxis, 0u}) {
    CAPTURE(max16);
    const Narrow16UpTo places(max16);
    for (const std::uint8_t ix_mask : {0, 1, 2, 3}) {
      for (const std::uint8_t out_mask : {0, 3}) {
        CAPTURE(int{ix_mask});
        CAPTURE(int{out_mask});
        std::vector<float> want(kN);  // the caller's output, stored as out_mask says
        for (std::uint32_t r = 0; r < kRows; ++r) {
          for (std::uint32_t c = 0; c < kCols; ++c) want[at(out_mask, r, c)] = in[r * kCols + c];
        }
        for (std::uint32_t r = 0; r < kRows; ++r) {
          for (std::uint32_t c = 0; c < kCols; ++c) {
            const auto place = static_cast<std::uint32_t>(
                *dmlref::normalize_index(ix[at(ix_mask, r, c)], kCols));
            want[at(out_mask, r, place)] = up[r * kCols + c];
          }
        }
        std::vector<float> got(kN, -1.0f);
        const std::vector<std::uint8_t> reversed = {0, ix_mask, 0, out_mask};
        dmlref::scatter(desc, {in.data(), kN * 4}, {ix.data(), kN * 8}, {up.data(), kN * 4},
                        {got.data(), kN * 4}, {}, reversed);
        CHECK(got == want);
      }
    }
  }
}

TEST_CASE("fast SCATTER: a bad index throws the golden loop's SC8 error and writes nothing") {
  const std::vector<std::int32_t> in = {0, 1, 2, 3, 4, 5};
  const std::vector<std::int32_t> ix = {0, -3, 1, 3, -4, 9};
  const std::vector<std::int32_t> up = {9, 9, 9, 9, 9, 9};
  std::vector<std::int32_t> out(6, -7);
  const TensorView<const std::int32_t> input(in.data(), {2, 3});
  const TensorView<const std::int32_t> indices(ix.data(), {2, 3});
  const TensorView<const std::int32_t> updates(up.data(), {2, 3});
  const TensorView<std::int32_t> output(out.data(), {2, 3});
  const char* message = "IndicesTensor[1,0] is 3 but InputTensor.Sizes[1] is 3";
  DMLREF_CHECK_ERROR((dmlref::scatter<std::int32_t, std::int32_t>(input, indices, updates, output, 1)),
                     dmlref::ErrorCode::SC8, message);
  DMLREF_CHECK_ERROR((dmlref::reference::scatter<std::int32_t, std::int32_t>(input, indices,
                                                                             updates, output, 1)),
                     dmlref::ErrorCode::SC8, message);
  CHECK(std::all_of(out.begin(), out.end(), [](std::int32_t v) { return v == -7; }));
}

}  // namespace test_fastpath_gather_scatter
