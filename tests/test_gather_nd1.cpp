// GATHER_ND1 (include/dmlref/ops/gather_nd1.hpp) against docs/gather_nd1.md: the page's
// examples, every data type with every index type, every geometry of ranks 1-8, strided and
// broadcast operands, seeded properties checked against a brute force written here, and one
// negative test per rule.
#include "test_support.hpp"

#include <dmlref/ops/gather_nd1.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace test_gather_nd1 {  // this file's own names (tests/CMakeLists.txt: unity groups)

namespace {

using namespace dmlref;
using dmlref::test::distinct_buffer;
using dmlref::test::distinct_value;
using dmlref::test::printable;
using dmlref::test::same_bits;

using Sizes = std::vector<std::uint32_t>;

std::uint64_t product(const Sizes& sizes) {
  std::uint64_t n = 1;
  for (std::uint32_t s : sizes) n *= s;
  return n;
}

template <class T>
T from_int(int v) {
  if constexpr (std::is_same_v<T, float16>) {
    return float16(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <class T>
std::vector<T> from_ints(std::initializer_list<int> values) {
  std::vector<T> out;
  for (int v : values) out.push_back(from_int<T>(v));
  return out;
}

using test::for_each_index_type;

// Reports for same_elements, outside the template so doctest's macros are expanded once.
bool report_size_mismatch(std::size_t got, std::size_t want) {
  MESSAGE("got ", got, " elements, want ", want);
  return false;
}
bool report_element_mismatch(std::size_t i, const doctest::String& got,
                             const doctest::String& want) {
  MESSAGE("element ", i, ": got ", got, ", want ", want);
  return false;
}

// Bitwise equality of two element lists; reports the first difference.
template <class T>
bool same_elements(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return report_size_mismatch(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!same_bits(got[i], want[i])) {
      return report_element_mismatch(i, doctest::toString(printable(got[i])),
                                     doctest::toString(printable(want[i])));
    }
  }
  return true;
}

// The validators' output sizes against the expected ones (outside the templates that call it).
void check_validated_sizes(const Sizes& validated, const Sizes& out_sizes) {
  CHECK(validated == out_sizes);
}

// The expected output computed independently of the operator: for each batch and each index tuple
// of the packed indices, find the row-major position of the addressed block among the packed
// input's indexed dimensions and copy its contiguous slice of trailing elements. Inputs are
// packed; indices are in range (negative ones count from the end).
template <class T, class I>
std::vector<T> brute_force(const Sizes& in_sizes, const std::vector<T>& in, const Sizes& ix_sizes,
                           const std::vector<I>& ix, std::uint32_t r, std::uint32_t q,
                           std::uint32_t b, Sizes* out_sizes = nullptr) {
  const auto rank = static_cast<std::uint32_t>(in_sizes.size());
  const std::uint32_t m = ix_sizes[rank - 1];
  const std::uint32_t k = r - b - m;
  std::uint64_t batches = 1, grid = 1, slice = 1, block = 1;
  for (std::uint32_t j = 0; j < b; ++j) batches *= in_sizes[rank - r + j];
  for (std::uint32_t d = rank - q + b; d + 1 < rank; ++d) grid *= ix_sizes[d];
  for (std::uint32_t d = rank - k; d < rank; ++d) slice *= in_sizes[d];
  for (std::uint32_t d = rank - r + b; d < rank; ++d) block *= in_sizes[d];
  std::vector<T> out;
  for (std::uint64_t batch = 0; batch < batches; ++batch) {
    for (std::uint64_t g = 0; g < grid; ++g) {
      std::uint64_t row = 0;
      for (std::uint32_t j = 0; j < m; ++j) {
        const std::int64_t n = in_sizes[rank - r + b + j];
        auto v = static_cast<std::int64_t>(ix[(batch * grid + g) * m + j]);
        if (v < 0) v += n;
        REQUIRE((v >= 0 && v < n));
        row = row * static_cast<std::uint64_t>(n) + static_cast<std::uint64_t>(v);
      }
      const std::uint64_t src = batch * block + row * slice;
      out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(src),
                 in.begin() + static_cast<std::ptrdiff_t>(src + slice));
    }
  }
  if (out_sizes != nullptr) {
    *out_sizes = Sizes(rank - ((q - 1) + k), 1u);
    for (std::uint32_t d = rank - q; d + 1 < rank; ++d) out_sizes->push_back(ix_sizes[d]);
    for (std::uint32_t d = rank - k; d < rank; ++d) out_sizes->push_back(in_sizes[d]);
  }
  return out;
}

// An index for tuple position j addressing a dimension of size n: `value` in [0, n), written as
// its negative alias value - n when `negative` and the type is signed.
template <class I>
I encode_index(std::uint32_t value, std::uint32_t n, bool negative) {
  if constexpr (std::is_signed_v<I>) {
    if (negative) return static_cast<I>(static_cast<std::int64_t>(value) - n);
  }
  return static_cast<I>(value);
}

template <class I>
std::vector<I> random_indices(const Sizes& in_sizes, const Sizes& ix_sizes, std::uint32_t r,
                              std::uint32_t b, std::mt19937& rng) {
  const auto rank = static_cast<std::uint32_t>(in_sizes.size());
  const std::uint32_t m = ix_sizes[rank - 1];
  std::vector<I> out(product(ix_sizes));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::uint32_t n = in_sizes[rank - r + b + static_cast<std::uint32_t>(i % m)];
    out[i] = encode_index<I>(static_cast<std::uint32_t>(rng() % n), n, (rng() & 1u) != 0);
  }
  return out;
}

// The sentinel an output starts with, so untouched and written elements differ.
template <class T>
std::vector<T> sentinel_buffer(std::size_t n) {
  return std::vector<T>(n, from_int<T>(99));
}

template <class T, class I>
std::vector<T> run_typed(const Sizes& in_sizes, const std::vector<T>& in, const Sizes& ix_sizes,
                         const std::vector<I>& ix, const Sizes& out_sizes, std::uint32_t r,
                         std::uint32_t q, std::uint32_t b, const GatherNd1Options& options = {}) {
  std::vector<T> out = sentinel_buffer<T>(product(out_sizes));
  const TensorView<const T> input(in.data(), Layout::packed(in_sizes));
  const TensorView<const I> indices(ix.data(), Layout::packed(ix_sizes));
  const TensorView<T> output(out.data(), Layout::packed(out_sizes));
  check_validated_sizes(validate_gather_nd1(input, indices, output, r, q, b, options), out_sizes);
  gather_nd1(input, indices, output, r, q, b, options);
  return out;
}

// A runtime tensor: an owning description and a buffer of at least TotalTensorSizeInBytes, with
// the logical (packed) values placed by the description's strides.
template <class T>
struct RuntimeTensor {
  TensorDesc owner;
  BufferTensorDesc desc;
  std::vector<T> storage;

  explicit RuntimeTensor(Sizes sizes, Sizes strides = {})
      : owner(data_type_of<T>, std::move(sizes), std::move(strides)),
        desc(owner.desc()),
        storage((owner.total_tensor_size_in_bytes + sizeof(T) - 1) / sizeof(T), from_int<T>(77)) {}
  RuntimeTensor(const RuntimeTensor&) = delete;
  RuntimeTensor& operator=(const RuntimeTensor&) = delete;

  Layout layout() const {
    if (owner.strides.empty()) return Layout::packed(owner.sizes);
    const std::vector<std::int64_t> strides(owner.strides.begin(), owner.strides.end());
    return Layout::strided(owner.sizes, strides);
  }
  void set(const std::vector<T>& values) {
    const Layout l = layout();
    std::size_t i = 0;
    for_each_coordinate(l, [&](const Coord& c) {
      storage[static_cast<std::size_t>(l.offset(c))] = values[i++];
    });
  }
  std::vector<T> get() const {
    const Layout l = layout();
    std::vector<T> out;
    for_each_coordinate(l, [&](const Coord& c) {
      out.push_back(storage[static_cast<std::size_t>(l.offset(c))]);
    });
    return out;
  }
  ConstBuffer cbuf() const { return {storage.data(), storage.size() * sizeof(T)}; }
  Buffer buf() { return {storage.data(), storage.size() * sizeof(T)}; }
};

// Both runtime validators (each must return out_sizes), then the operator.
void run_runtime_bound(const GatherNd1OperatorDesc& desc, ConstBuffer input, ConstBuffer indices,
                       Buffer output, const Sizes& out_sizes, const GatherNd1Options& options) {
  CHECK(validate_gather_nd1(desc, options) == out_sizes);
  CHECK(validate_gather_nd1(desc, input, indices, output, options) == out_sizes);
  gather_nd1(desc, input, indices, output, options);
}

template <class T, class I>
std::vector<T> run_runtime(const Sizes& in_sizes, const std::vector<T>& in, const Sizes& ix_sizes,
                           const std::vector<I>& ix, const Sizes& out_sizes, std::uint32_t r,
                           std::uint32_t q, std::uint32_t b, const GatherNd1Options& options = {}) {
  RuntimeTensor<T> input(in_sizes);
  RuntimeTensor<I> indices(ix_sizes);
  RuntimeTensor<T> output(out_sizes);
  input.set(in);
  indices.set(ix);
  output.set(sentinel_buffer<T>(product(out_sizes)));
  const GatherNd1OperatorDesc desc{&input.desc, &indices.desc, &output.desc, r, q, b};
  run_runtime_bound(desc, input.cbuf(), indices.cbuf(), output.buf(), out_sizes, options);
  const std::vector<T> fast = output.get();
  // The runtime form of the plain loop (by element width) gives the same elements.
  output.set(sentinel_buffer<T>(product(out_sizes)));
  reference::gather_nd1(desc, input.cbuf(), indices.cbuf(), output.buf(), options);
  CHECK(same_elements(output.get(), fast));
  return fast;
}

Layout strided(const Sizes& sizes, const std::vector<std::int64_t>& strides) {
  return Layout::strided(sizes, strides);
}

// A typed operand over its own storage, at any layout (negative strides included): the logical
// values are whatever the layout reads, so broadcast layouts stay consistent.
template <class T>
struct StridedOperand {
  Layout layout;
  std::vector<T> storage;
  std::int64_t origin = 0;  // storage index of coordinate 0

  explicit StridedOperand(const Layout& l) : layout(l) {
    const auto range = l.offset_range();
    REQUIRE(range.has_value());
    origin = -range->min;
    storage = sentinel_buffer<T>(static_cast<std::size_t>(range->max - range->min + 1));
  }
  T* data() { return storage.data() + origin; }
  const T* data() const { return storage.data() + origin; }
  T& at(const Coord& c) { return storage[static_cast<std::size_t>(origin + layout.offset(c))]; }
  std::vector<T> logical() const {
    std::vector<T> out;
    for_each_coordinate(layout, [&](const Coord& c) {
      out.push_back(storage[static_cast<std::size_t>(origin + layout.offset(c))]);
    });
    return out;
  }
};

}  // namespace

// ---- the page's examples ------------------------------------------------------------------------

TEST_CASE("GATHER_ND1 example 1 (1D remapping), runtime, as the page gives it") {
  // r = 2, q = 2, b = 0; Input {2,2} [[0,1],[2,3]]; Indices {2,1} UINT32 [[1],[0]].
  const auto out = run_runtime<float, std::uint32_t>({2, 2}, {0, 1, 2, 3}, {2, 1}, {1, 0}, {2, 2},
                                                     2, 2, 0);
  CHECK(same_elements(out, std::vector<float>{2, 3, 0, 1}));
}

TEST_CASE("GATHER_ND1 example 2 (2D remapping with a batch), runtime, as the page gives it") {
  // r = 3, q = 3, b = 1; Input {1,3,2,2}; Indices {1,3,2,2} UINT32 -> Output {1,1,3,2}.
  const std::vector<float> in = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const std::vector<std::uint32_t> ix = {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0};
  const auto out = run_runtime<float, std::uint32_t>({1, 3, 2, 2}, in, {1, 3, 2, 2}, ix,
                                                     {1, 1, 3, 2}, 3, 3, 1);
  CHECK(same_elements(out, std::vector<float>{0, 3, 7, 4, 9, 10}));
}

TEST_CASE_TEMPLATE("GATHER_ND1 examples 1 and 2, typed, every data type", T, DMLREF_ALL_TYPES) {
  const auto out1 = run_typed<T, std::uint32_t>({2, 2}, from_ints<T>({0, 1, 2, 3}), {2, 1}, {1, 0},
                                                {2, 2}, 2, 2, 0);
  CHECK(same_elements(out1, from_ints<T>({2, 3, 0, 1})));
  const auto out2 = run_typed<T, std::uint32_t>(
      {1, 3, 2, 2}, from_ints<T>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), {1, 3, 2, 2},
      {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0}, {1, 1, 3, 2}, 3, 3, 1);
  CHECK(same_elements(out2, from_ints<T>({0, 3, 7, 4, 9, 10})));
}

TEST_CASE("GATHER_ND1 example 3: output sizes by inference, then validated by running with data") {
  // Input {3,4,5,6,7} r = 5; Indices {1,1,1,2,3} q = 3; b = 0 -> m = 3, k = 2, Output {1,1,2,6,7}.
  // The page's formula line (the last m input sizes) would give {1,2,5,6,7}: the example wins.
  const Sizes in_sizes = {3, 4, 5, 6, 7};
  const Sizes ix_sizes = {1, 1, 1, 2, 3};
  const Sizes expected_sizes = {1, 1, 2, 6, 7};
  CHECK(infer_gather_nd1_output_sizes({3, 4, 5, 6, 7}, {1, 1, 1, 2, 3}, 5, 3, 0) == expected_sizes);
  CHECK(infer_gather_nd1_output_sizes(std::span<const std::uint32_t>(in_sizes),
                                      std::span<const std::uint32_t>(ix_sizes), 5, 3, 0) ==
        expected_sizes);

  const std::vector<float> in = distinct_buffer<float>(product(in_sizes));
  // Tuples (2,3,4) and (0,1,2); the second written with negative indices (-3,-3,-3).
  const std::vector<std::int64_t> ix = {2, 3, 4, -3, -3, -3};
  std::vector<float> want;
  for (std::uint64_t block : {(2u * 4u + 3u) * 5u + 4u, (0u * 4u + 1u) * 5u + 2u}) {
    for (std::uint64_t e = 0; e < 42; ++e) want.push_back(in[block * 42 + e]);
  }
  CHECK(same_elements(run_runtime(in_sizes, in, ix_sizes, ix, expected_sizes, 5, 3, 0), want));
  CHECK(same_elements(run_typed(in_sizes, in, ix_sizes, ix, expected_sizes, 5, 3, 0), want));
  // And the brute force agrees with the hand-computed blocks.
  Sizes brute_sizes;
  CHECK(same_elements(brute_force(in_sizes, in, ix_sizes, ix, 5, 3, 0, &brute_sizes), want));
  CHECK(brute_sizes == expected_sizes);
}

// ---- every data type x every index type ---------------------------------------------------------

TEST_CASE_TEMPLATE("GATHER_ND1 every data type with every index type, typed and runtime", T,
                   DMLREF_ALL_TYPES) {
  // Input {2,3,2}, r = 3, b = 1, one-coordinate tuples over the middle dimension:
  // output[batch, g, c] = input[batch, idx[batch, g], c]. Rows {1,2} of batch 0, {0,2} of batch 1.
  const Sizes in_sizes = {2, 3, 2};
  const std::vector<T> in = distinct_buffer<T>(12);
  const std::vector<T> want = {in[2], in[3], in[4], in[5], in[6], in[7], in[10], in[11]};
  for_each_index_type([&]<class I>(std::type_identity<I>) {
    CAPTURE(data_type_name(data_type_of<I>));
    const std::vector<I> ix = {encode_index<I>(1, 3, true), encode_index<I>(2, 3, false),
                               encode_index<I>(0, 3, false), encode_index<I>(2, 3, true)};
    CHECK(same_elements(run_typed<T, I>(in_sizes, in, {2, 2, 1}, ix, {2, 2, 2}, 3, 3, 1), want));
    CHECK(same_elements(run_runtime<T, I>(in_sizes, in, {2, 2, 1}, ix, {2, 2, 2}, 3, 3, 1), want));
  });
}

TEST_CASE("GATHER_ND1 preserves every bit: NaN payloads, negative zero, float16 subnormals") {
  const std::uint32_t f32_nan = 0x7FA01234u;  // a signalling NaN with a payload
  const std::uint64_t f64_nan = 0x7FF4000000ABCDEFull;
  float f32[3];
  double f64[3];
  std::memcpy(&f32[0], &f32_nan, 4);
  std::memcpy(&f64[0], &f64_nan, 8);
  f32[1] = -0.0f;
  f64[1] = -0.0;
  f32[2] = 1.5f;
  f64[2] = 1.5;
  const std::vector<std::uint32_t> ix = {0, 1, 2, 0};
  const std::vector<float> want32 = {f32[0], f32[1], f32[2], f32[0]};
  const std::vector<double> want64 = {f64[0], f64[1], f64[2], f64[0]};
  // Input {1,3}, r = 1; Indices {4,1}, q = 2 -> Output {1,4}.
  CHECK(same_elements(run_runtime<float, std::uint32_t>({1, 3}, {f32[0], f32[1], f32[2]}, {4, 1},
                                                        ix, {1, 4}, 1, 2, 0),
                      want32));
  CHECK(same_elements(run_runtime<double, std::uint32_t>({1, 3}, {f64[0], f64[1], f64[2]}, {4, 1},
                                                         ix, {1, 4}, 1, 2, 0),
                      want64));
  const std::vector<float16> halves = {float16::from_bits(0x7E01), float16::from_bits(0x8000),
                                       float16::from_bits(0x0001)};
  CHECK(
      same_elements(run_typed<float16, std::uint32_t>({1, 3}, halves, {4, 1}, ix, {1, 4}, 1, 2, 0),
                    std::vector<float16>{halves[0], halves[1], halves[2], halves[0]}));
}

// ---- geometry: ranks, batch counts, tuple sizes, leading 1s -------------------------------------

TEST_CASE("GATHER_ND1 every geometry of ranks 1-8: batch counts 0..r-1, tuple sizes 1..r-b") {
  std::mt19937 rng(20240611);
  int cases = 0;
  for (std::uint32_t rank = 1; rank <= 8; ++rank) {
    for (std::uint32_t r = 1; r <= rank; ++r) {
      for (std::uint32_t q = 1; q <= rank; ++q) {
        for (std::uint32_t b = 0; b < std::min(r, q); ++b) {
          for (std::uint32_t m = 1; m <= r - b; ++m) {
            const std::uint32_t k = r - b - m;
            if ((q - 1) + k > rank) continue;  // no room for the output (tested in G9)
            CAPTURE(rank);
            CAPTURE(r);
            CAPTURE(q);
            CAPTURE(b);
            CAPTURE(m);
            // Sizes 2 and 3 in turn (all 2 from rank 6 on, to keep the tensors small); leading 1s
            // whenever r < R or q < R.
            auto size_of = [&](std::uint32_t d) { return rank >= 6 ? 2u : 2u + (d % 2u); };
            Sizes in_sizes(rank, 1u), ix_sizes(rank, 1u);
            for (std::uint32_t d = rank - r; d < rank; ++d) in_sizes[d] = size_of(d);
            for (std::uint32_t j = 0; j < b; ++j) ix_sizes[rank - q + j] = in_sizes[rank - r + j];
            for (std::uint32_t d = rank - q + b; d + 1 < rank; ++d) ix_sizes[d] = size_of(d + 1);
            ix_sizes[rank - 1] = m;
            const std::vector<float> in = distinct_buffer<float>(product(in_sizes));
            const auto ix = random_indices<std::int64_t>(in_sizes, ix_sizes, r, b, rng);
            Sizes out_sizes;
            const auto want = brute_force(in_sizes, in, ix_sizes, ix, r, q, b, &out_sizes);
            CHECK(infer_gather_nd1_output_sizes(std::span<const std::uint32_t>(in_sizes),
                                                std::span<const std::uint32_t>(ix_sizes), r, q,
                                                b) == out_sizes);
            CHECK(same_elements(run_typed(in_sizes, in, ix_sizes, ix, out_sizes, r, q, b), want));
            ++cases;
          }
        }
      }
    }
  }
  MESSAGE(cases, " geometries");
  CHECK(cases > 500);
}

TEST_CASE("GATHER_ND1 R > r and R > q: the leading 1s are ignored, the output right-aligned") {
  // R = 6; Input {1,1,1,3,4,2} (r = 3); Indices {1,1,1,1,5,2} (q = 2); b = 0; m = 2, k = 1.
  const Sizes in_sizes = {1, 1, 1, 3, 4, 2};
  const Sizes ix_sizes = {1, 1, 1, 1, 5, 2};
  const std::vector<std::uint16_t> in = distinct_buffer<std::uint16_t>(24);
  const std::vector<std::int32_t> ix = {0, 0, 2, 3, -1, -1, 1, 2, -3, 0};
  const std::vector<std::uint16_t> want = {in[0],  in[1],  in[22], in[23], in[22],
                                           in[23], in[12], in[13], in[0],  in[1]};
  CHECK(same_elements(run_runtime(in_sizes, in, ix_sizes, ix, {1, 1, 1, 1, 5, 2}, 3, 2, 0), want));
  CHECK(same_elements(run_typed(in_sizes, in, ix_sizes, ix, {1, 1, 1, 1, 5, 2}, 3, 2, 0), want));
}

TEST_CASE("GATHER_ND1 rank 1: one tuple of one coordinate selects one element") {
  // R = r = q = 1, b = 0, m = 1, k = 0: the output is one element.
  CHECK(same_elements(run_runtime<std::int8_t, std::int32_t>({5}, {10, 11, 12, 13, 14}, {1}, {-2},
                                                             {1}, 1, 1, 0),
                      std::vector<std::int8_t>{13}));
}

// ---- indices: negative, out of range, clamping --------------------------------------------------

TEST_CASE_TEMPLATE("GATHER_ND1 negative indices count from the end", I, std::int64_t,
                   std::int32_t) {
  // Input {4,3}; rows -1, -4, -2, 1 -> 3, 0, 2, 1.
  const std::vector<std::uint32_t> in = distinct_buffer<std::uint32_t>(12);
  const std::vector<I> ix = {-1, -4, -2, 1};
  std::vector<std::uint32_t> want;
  for (std::uint32_t row : {3u, 0u, 2u, 1u}) {
    for (std::uint32_t c = 0; c < 3; ++c) want.push_back(in[row * 3 + c]);
  }
  CHECK(same_elements(run_typed<std::uint32_t, I>({4, 3}, in, {4, 1}, ix, {4, 3}, 2, 2, 0), want));
  CHECK(
      same_elements(run_runtime<std::uint32_t, I>({4, 3}, in, {4, 1}, ix, {4, 3}, 2, 2, 0), want));
}

TEST_CASE_TEMPLATE("GATHER_ND1 G10: out-of-range indices on both ends are rejected, naming the "
                   "coordinate", I, DMLREF_INDEX_TYPES) {
  // Input {4,3} r = 2; Indices {2,1} q = 2; b = 0; Output {2,3}. n = 4.
  const Sizes in_sizes = {4, 3};
  const std::vector<float> in = distinct_buffer<float>(12);
  const bool is_signed = std::is_signed_v<I>;
  const std::string range =
      is_signed ? "indices must lie in [-4, 3]" : "indices must lie in [0, 3]";
  struct Case {
    std::vector<I> ix;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({{0, 4}, "IndicesTensor[1,0] is 4 but InputTensor.Sizes[0] is 4; " + range});
  cases.push_back({{std::numeric_limits<I>::max(), 0},
                   "IndicesTensor[0,0] is " + std::to_string(std::numeric_limits<I>::max()) +
                       " but InputTensor.Sizes[0] is 4; " + range});
  if constexpr (std::is_signed_v<I>) {
    cases.push_back({{0, -5}, "IndicesTensor[1,0] is -5 but InputTensor.Sizes[0] is 4; " + range});
    cases.push_back({{std::numeric_limits<I>::min(), 0},
                     "IndicesTensor[0,0] is " + std::to_string(std::numeric_limits<I>::min()) +
                         " but InputTensor.Sizes[0] is 4; " + range});
  }
  for (const Case& c : cases) {
    CAPTURE(c.message);
    std::vector<float> out = sentinel_buffer<float>(6);
    DMLREF_CHECK_ERROR(gather_nd1(TensorView<const float>(in.data(), {4, 3}),
                                  TensorView<const I>(c.ix.data(), {2, 1}),
                                  TensorView<float>(out.data(), {2, 3}), 2, 2, 0),
                       ErrorCode::G10, c.message);
    CHECK(same_elements(out, sentinel_buffer<float>(6)));

    RuntimeTensor<float> input(in_sizes);
    RuntimeTensor<I> indices({2, 1});
    RuntimeTensor<float> output({2, 3});
    input.set(in);
    indices.set(c.ix);
    const std::vector<float> before = output.storage;
    const GatherNd1OperatorDesc desc{&input.desc, &indices.desc, &output.desc, 2, 2, 0};
    CHECK(validate_gather_nd1(desc) == Sizes{2, 3});  // G10 needs the data: descriptions pass
    DMLREF_CHECK_ERROR(validate_gather_nd1(desc, input.cbuf(), indices.cbuf(), output.buf()),
                       ErrorCode::G10, c.message);
    DMLREF_CHECK_ERROR(gather_nd1(desc, input.cbuf(), indices.cbuf(), output.buf()),
                       ErrorCode::G10, c.message);
    DMLREF_CHECK_ERROR(reference::gather_nd1(desc, input.cbuf(), indices.cbuf(), output.buf()),
                       ErrorCode::G10, c.message);
    CHECK(same_elements(output.storage, before));
  }
  // The ends of the legal range are accepted.
  std::vector<I> edges = {0, 3};
  if constexpr (std::is_signed_v<I>) edges = {-4, 3};
  const std::vector<float> want = {in[0], in[1], in[2], in[9], in[10], in[11]};
  CHECK(same_elements(run_typed<float, I>(in_sizes, in, {2, 1}, edges, {2, 3}, 2, 2, 0), want));
}

TEST_CASE("GATHER_ND1 G10 message: the indices coordinate, the value and the legal range") {
  // Input {1,1,3} r = 1; Indices {1,2,1} q = 2; tuple coordinate 0 addresses InputTensor dim 2.
  std::vector<std::uint32_t> ix = {0, 7};
  const std::vector<std::int16_t> in = {5, 6, 7};
  std::vector<std::int16_t> out(2, 99);
  try {
    gather_nd1(TensorView<const std::int16_t>(in.data(), {1, 1, 3}),
               TensorView<const std::uint32_t>(ix.data(), {1, 2, 1}),
               TensorView<std::int16_t>(out.data(), {1, 1, 2}), 1, 2, 0);
    FAIL("expected G10");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::G10);
    CHECK(std::string(e.what()) ==
          "GATHER_ND1: IndicesTensor[0,1,0] is 7 but InputTensor.Sizes[2] is 3; indices must lie "
          "in [0, 2] [G10]");
  }
  // With a batch, tuple coordinate j addresses InputTensor dimension R - r + b + j.
  const std::vector<float> in2 = distinct_buffer<float>(12);
  const std::vector<std::int64_t> ix2 = {0, 0, 1, 1, 1, 1, 0, 0, 0, 2, 1, 0};
  std::vector<float> out2(6);
  DMLREF_CHECK_ERROR(gather_nd1(TensorView<const float>(in2.data(), {1, 3, 2, 2}),
                                TensorView<const std::int64_t>(ix2.data(), {1, 3, 2, 2}),
                                TensorView<float>(out2.data(), {1, 1, 3, 2}), 3, 3, 1),
                     ErrorCode::G10,
                     "IndicesTensor[0,2,0,1] is 2 but InputTensor.Sizes[3] is 2; indices must lie "
                     "in [-2, 1]");
}

TEST_CASE_TEMPLATE("GATHER_ND1 IndexPolicy::Clamp clamps out-of-range indices when opted in", I,
                   DMLREF_INDEX_TYPES) {
  const std::vector<double> in = distinct_buffer<double>(12);  // {4,3}
  GatherNd1Options options;
  options.index_policy = IndexPolicy::Clamp;
  std::vector<I> ix = {4, std::numeric_limits<I>::max(), 1, 3};
  std::vector<std::uint32_t> rows = {3, 3, 1, 3};
  if constexpr (std::is_signed_v<I>) {
    ix = {4, -5, std::numeric_limits<I>::min(), -1};  // -1 is in range: the negative rule first
    rows = {3, 0, 0, 3};
  }
  std::vector<double> want;
  for (std::uint32_t row : rows) {
    for (std::uint32_t c = 0; c < 3; ++c) want.push_back(in[row * 3 + c]);
  }
  CHECK(
      same_elements(run_typed<double, I>({4, 3}, in, {4, 1}, ix, {4, 3}, 2, 2, 0, options), want));
  CHECK(same_elements(run_runtime<double, I>({4, 3}, in, {4, 1}, ix, {4, 3}, 2, 2, 0, options),
                      want));
}

// ---- strided and broadcast operands -------------------------------------------------------------

TEST_CASE("GATHER_ND1 typed: transposed, padded, reversed and broadcast inputs and indices, "
          "strided outputs") {
  // Input {2,3,4} r = 3, b = 1; Indices {2,5,1}; Output {2,5,4}.
  const Sizes in_sizes = {2, 3, 4};
  const Sizes ix_sizes = {2, 5, 1};
  const Sizes out_sizes = {2, 5, 4};
  const std::vector<Layout> inputs = {
      Layout::packed(in_sizes),
      strided(in_sizes, {1, 2, 6}),      // fully transposed
      strided(in_sizes, {40, 12, 2}),    // padded
      strided(in_sizes, {-12, 4, 1}),    // batches reversed (typed layer only)
      strided(in_sizes, {0, 4, 1}),      // both batches read the same data
      strided(in_sizes, {4, 0, 1}),      // every row the same
  };
  const std::vector<Layout> indices = {
      Layout::packed(ix_sizes),
      strided(ix_sizes, {0, 1, 1}),   // both batches use the same tuples
      strided(ix_sizes, {1, 0, 1}),   // one tuple per batch, repeated
      strided(ix_sizes, {7, -1, 1}),  // grid reversed, padded
  };
  const std::vector<Layout> outputs = {
      Layout::packed(out_sizes),
      strided(out_sizes, {1, 2, 10}),     // transposed
      strided(out_sizes, {60, 12, 3}),    // padded
      strided(out_sizes, {20, -4, -1}),   // reversed
  };
  std::mt19937 rng(7);
  for (std::size_t a = 0; a < inputs.size(); ++a) {
    for (std::size_t x = 0; x < indices.size(); ++x) {
      for (std::size_t o = 0; o < outputs.size(); ++o) {
        CAPTURE(a);
        CAPTURE(x);
        CAPTURE(o);
        StridedOperand<std::int32_t> input(inputs[a]);
        for (std::size_t i = 0; i < input.storage.size(); ++i) {
          input.storage[i] = distinct_value<std::int32_t>(i);
        }
        StridedOperand<std::int32_t> ix(indices[x]);
        for_each_coordinate(ix.layout, [&](const Coord& c) {
          ix.at(c) = encode_index<std::int32_t>(static_cast<std::uint32_t>(rng() % 3), 3,
                                                (rng() & 1u) != 0);
        });
        StridedOperand<std::int32_t> output(outputs[o]);
        const auto want = brute_force(in_sizes, input.logical(), ix_sizes, ix.logical(), 3, 3, 1);
        gather_nd1(TensorView<const std::int32_t>(input.data(), input.layout),
                   TensorView<const std::int32_t>(ix.data(), ix.layout),
                   TensorView<std::int32_t>(output.data(), output.layout), 3, 3, 1);
        CHECK(same_elements(output.logical(), want));
      }
    }
  }
}

TEST_CASE("GATHER_ND1 runtime: strided, padded and broadcast descriptions") {
  // Input {1,3,4} r = 2 (leading 1); Indices {1,6,1}; Output {1,6,4}.
  struct Case {
    Sizes in_strides, ix_strides, out_strides;
  };
  const std::vector<Case> cases = {
      {{}, {}, {}},
      {{12, 1, 3}, {}, {}},          // input transposed
      {{50, 16, 2}, {}, {}},         // input padded
      {{12, 0, 1}, {}, {}},          // input rows broadcast
      {{}, {6, 0, 1}, {}},           // one tuple, broadcast
      {{}, {9, 1, 0}, {}},           // the size-1 tuple dimension with stride 0
      {{}, {12, 2, 1}, {1, 1, 6}},   // padded indices, transposed output
      {{12, 4, 0}, {}, {48, 8, 1}},  // input columns broadcast, padded output
  };
  std::mt19937 rng(11);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    RuntimeTensor<std::uint8_t> input({1, 3, 4}, cases[i].in_strides);
    RuntimeTensor<std::uint64_t> indices({1, 6, 1}, cases[i].ix_strides);
    RuntimeTensor<std::uint8_t> output({1, 6, 4}, cases[i].out_strides);
    for (std::size_t e = 0; e < input.storage.size(); ++e) {
      input.storage[e] = distinct_value<std::uint8_t>(e);
    }
    for (auto& v : indices.storage) v = rng() % 3;
    const std::vector<std::uint8_t> before = output.storage;
    const GatherNd1OperatorDesc desc{&input.desc, &indices.desc, &output.desc, 2, 2, 0};
    const auto want = brute_force<std::uint8_t, std::uint64_t>({1, 3, 4}, input.get(), {1, 6, 1},
                                                               indices.get(), 2, 2, 0);
    gather_nd1(desc, input.cbuf(), indices.cbuf(), output.buf());
    CHECK(same_elements(output.get(), want));
    // Padding between output elements stays untouched.
    const Layout l = output.layout();
    std::vector<bool> addressed(output.storage.size(), false);
    for_each_coordinate(l, [&](const Coord& c) {
      addressed[static_cast<std::size_t>(l.offset(c))] = true;
    });
    for (std::size_t e = 0; e < before.size(); ++e) {
      if (!addressed[e]) CHECK(output.storage[e] == before[e]);
    }
  }
}

TEST_CASE("GATHER_ND1 inputs may overlap each other (one buffer bound as input and indices)") {
  // Input {4} INT32 [2,0,3,1] doubling as its own indices {4,1}: output[i] = input[input[i]].
  const std::vector<std::int32_t> data = {2, 0, 3, 1};
  std::vector<std::int32_t> out(4);
  gather_nd1(TensorView<const std::int32_t>(data.data(), {1, 4}),
             TensorView<const std::int32_t>(data.data(), {4, 1}),
             TensorView<std::int32_t>(out.data(), {1, 4}), 1, 2, 0);
  CHECK(same_elements(out, std::vector<std::int32_t>{3, 2, 1, 0}));
}

// ---- properties on seeded random shapes ---------------------------------------------------------

TEST_CASE("GATHER_ND1 property: seeded random geometries equal the brute force") {
  std::mt19937 rng(0x6A7E);
  int cases = 0;
  while (cases < 300) {
    const std::uint32_t rank = 1 + rng() % 8;
    const std::uint32_t r = 1 + rng() % rank;
    const std::uint32_t q = 1 + rng() % rank;
    const std::uint32_t b = rng() % std::min(r, q);
    const std::uint32_t m = 1 + rng() % (r - b);
    if ((q - 1) + (r - b - m) > rank) continue;
    Sizes in_sizes(rank, 1u), ix_sizes(rank, 1u);
    for (std::uint32_t d = rank - r; d < rank; ++d) in_sizes[d] = 1 + rng() % 4;
    for (std::uint32_t j = 0; j < b; ++j) ix_sizes[rank - q + j] = in_sizes[rank - r + j];
    for (std::uint32_t d = rank - q + b; d + 1 < rank; ++d) ix_sizes[d] = 1 + rng() % 4;
    ix_sizes[rank - 1] = m;
    if (product(in_sizes) > 4096 || product(ix_sizes) > 4096) continue;
    CAPTURE(cases);
    const std::vector<float> in = distinct_buffer<float>(product(in_sizes));
    Sizes out_sizes;
    if ((rng() & 1u) != 0) {
      const auto ix = random_indices<std::int32_t>(in_sizes, ix_sizes, r, b, rng);
      const auto want = brute_force(in_sizes, in, ix_sizes, ix, r, q, b, &out_sizes);
      CHECK(same_elements(run_runtime(in_sizes, in, ix_sizes, ix, out_sizes, r, q, b), want));
    } else {
      const auto ix = random_indices<std::uint64_t>(in_sizes, ix_sizes, r, b, rng);
      const auto want = brute_force(in_sizes, in, ix_sizes, ix, r, q, b, &out_sizes);
      CHECK(same_elements(run_typed(in_sizes, in, ix_sizes, ix, out_sizes, r, q, b), want));
    }
    ++cases;
  }
}

TEST_CASE("GATHER_ND1 property: with b = 0 and m = r every tuple selects a single element") {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 100; ++trial) {
    const std::uint32_t rank = 1 + rng() % 8;
    const std::uint32_t r = 1 + rng() % rank;
    const std::uint32_t q = 1 + rng() % rank;
    CAPTURE(trial);
    Sizes in_sizes(rank, 1u), ix_sizes(rank, 1u);
    for (std::uint32_t d = rank - r; d < rank; ++d) in_sizes[d] = 1 + rng() % 3;
    for (std::uint32_t d = rank - q; d + 1 < rank; ++d) ix_sizes[d] = 1 + rng() % 3;
    ix_sizes[rank - 1] = r;
    const std::vector<std::int64_t> in = distinct_buffer<std::int64_t>(product(in_sizes));
    const auto ix = random_indices<std::int64_t>(in_sizes, ix_sizes, r, 0, rng);
    // The output is the index grid: q - 1 meaningful dimensions, one element per tuple.
    Sizes out_sizes(rank - (q - 1), 1u);
    for (std::uint32_t d = rank - q; d + 1 < rank; ++d) out_sizes.push_back(ix_sizes[d]);
    const auto out = run_typed(in_sizes, in, ix_sizes, ix, out_sizes, r, q, 0);
    REQUIRE(out.size() == product(ix_sizes) / r);
    const TensorView<const std::int64_t> input(in.data(), Layout::packed(in_sizes));
    for (std::size_t t = 0; t < out.size(); ++t) {
      Coord c{};
      for (std::uint32_t j = 0; j < r; ++j) {
        const std::int64_t n = in_sizes[rank - r + j];
        const std::int64_t v = ix[t * r + j];
        c[rank - r + j] = static_cast<std::uint32_t>(v < 0 ? v + n : v);
      }
      CHECK(out[t] == input[c]);
    }
  }
}

TEST_CASE("GATHER_ND1 property: identity index tuples return the input") {
  // Input {1} ++ B ++ M ++ K (R = r + 1); Indices {1...} ++ B ++ M ++ {m} with
  // indices[β, μ, j] = μ_j, q = b + m + 1: the output has the input's sizes and values.
  for (std::uint32_t r = 1; r <= 7; ++r) {
    for (std::uint32_t b = 0; b < r; ++b) {
      for (std::uint32_t m = 1; m <= r - b; ++m) {
        CAPTURE(r);
        CAPTURE(b);
        CAPTURE(m);
        const std::uint32_t rank = r + 1;
        const std::uint32_t q = b + m + 1;
        Sizes in_sizes(rank, 1u);
        for (std::uint32_t d = 1; d < rank; ++d) in_sizes[d] = 2 + (d % 2);
        if (rank > 6) std::fill(in_sizes.begin() + 1, in_sizes.end(), 2u);
        Sizes ix_sizes(rank, 1u);
        Sizes grid_sizes;  // B ++ M
        for (std::uint32_t d = 1; d <= b + m; ++d) grid_sizes.push_back(in_sizes[d]);
        std::copy(grid_sizes.begin(), grid_sizes.end(), ix_sizes.end() - 1 - grid_sizes.size());
        ix_sizes[rank - 1] = m;
        std::vector<std::uint32_t> ix;
        for_each_coordinate(static_cast<std::uint32_t>(grid_sizes.size()),
                            Layout::packed(grid_sizes).sizes, [&](const Coord& c) {
                              for (std::uint32_t j = 0; j < m; ++j) ix.push_back(c[b + j]);
                            });
        const std::vector<std::uint16_t> in = distinct_buffer<std::uint16_t>(product(in_sizes));
        CHECK(same_elements(run_typed(in_sizes, in, ix_sizes, ix, in_sizes, r, q, b), in));
      }
    }
  }
}

// ---- validation: one negative test per rule -----------------------------------------------------

namespace {

struct Geometry {
  Sizes in, ix, out;
  std::uint32_t r, q, b;
};

// Asserts that the typed operator and validator reject `g` with `code` and `substring`, leaving
// the output untouched. Indices are all 0 unless given.
template <class T = float, class I = std::int32_t>
void expect_typed_rejects(const Geometry& g, ErrorCode code, const std::string& substring,
                          std::vector<I> ix = {}, const GatherNd1Options& options = {}) {
  const std::vector<T> in = distinct_buffer<T>(product(g.in));
  if (ix.empty()) ix.assign(product(g.ix), I{0});
  std::vector<T> out = sentinel_buffer<T>(product(g.out));
  const TensorView<const T> input(in.data(), Layout::packed(g.in));
  const TensorView<const I> indices(ix.data(), Layout::packed(g.ix));
  const TensorView<T> output(out.data(), Layout::packed(g.out));
  DMLREF_CHECK_ERROR(validate_gather_nd1(input, indices, output, g.r, g.q, g.b, options), code,
                     substring);
  DMLREF_CHECK_ERROR(gather_nd1(input, indices, output, g.r, g.q, g.b, options), code, substring);
  DMLREF_CHECK_ERROR(reference::gather_nd1(input, indices, output, g.r, g.q, g.b, options), code,
                     substring);
  CHECK(same_elements(out, sentinel_buffer<T>(product(g.out))));
}

// The same through the runtime layer: both validators (the description-only one unless the rule
// needs the data) and the operator, whose output buffer must stay untouched.
template <class T = float, class I = std::int32_t, class U = T>
void expect_runtime_rejects(const Geometry& g, ErrorCode code, const std::string& substring,
                            std::vector<I> ix = {}, const GatherNd1Options& options = {},
                            bool descriptions_reject = true) {
  RuntimeTensor<T> input(g.in);
  RuntimeTensor<I> indices(g.ix);
  RuntimeTensor<U> output(g.out);
  input.set(distinct_buffer<T>(product(g.in)));
  if (!ix.empty()) indices.set(ix);
  const std::vector<U> before = output.storage;
  const GatherNd1OperatorDesc desc{&input.desc, &indices.desc, &output.desc, g.r, g.q, g.b};
  if (descriptions_reject) {
    DMLREF_CHECK_ERROR(validate_gather_nd1(desc, options), code, substring);
  }
  DMLREF_CHECK_ERROR(validate_gather_nd1(desc, input.cbuf(), indices.cbuf(), output.buf(), options),
                     code, substring);
  DMLREF_CHECK_ERROR(gather_nd1(desc, input.cbuf(), indices.cbuf(), output.buf(), options), code,
                     substring);
  CHECK(same_elements(output.storage, before));
}

// Both layers, and the inference helper too unless the rule is about the given output sizes.
void expect_rejects(const Geometry& g, ErrorCode code, const std::string& substring,
                    bool inference_rejects = true) {
  expect_typed_rejects(g, code, substring);
  expect_runtime_rejects(g, code, substring);
  if (inference_rejects) {
    DMLREF_CHECK_ERROR(infer_gather_nd1_output_sizes(std::span<const std::uint32_t>(g.in),
                                                     std::span<const std::uint32_t>(g.ix), g.r,
                                                     g.q, g.b),
                       code, substring);
  }
}

}  // namespace

TEST_CASE("GATHER_ND1 G1: the three DimensionCounts must agree") {
  expect_typed_rejects({{2, 2}, {1, 2, 1}, {2, 2}, 2, 2, 0}, ErrorCode::G1,
                       "GATHER_ND1: IndicesTensor.DimensionCount is 3 but "
                       "InputTensor.DimensionCount is 2; InputTensor, IndicesTensor and "
                       "OutputTensor must have the same DimensionCount");
  expect_runtime_rejects({{2, 2}, {1, 2, 1}, {2, 2}, 2, 2, 0}, ErrorCode::G1,
                         "IndicesTensor.DimensionCount is 3 but InputTensor.DimensionCount is 2");
  expect_typed_rejects({{2, 2}, {2, 1}, {1, 2, 2}, 2, 2, 0}, ErrorCode::G1,
                       "OutputTensor.DimensionCount is 3 but InputTensor.DimensionCount is 2");
  expect_runtime_rejects({{2, 2}, {2, 1}, {1, 2, 2}, 2, 2, 0}, ErrorCode::G1,
                         "OutputTensor.DimensionCount is 3 but InputTensor.DimensionCount is 2");
  const Sizes in = {2, 2}, ix = {1, 2, 1};
  DMLREF_CHECK_ERROR(infer_gather_nd1_output_sizes(std::span<const std::uint32_t>(in),
                                                   std::span<const std::uint32_t>(ix), 2, 2, 0),
                     ErrorCode::G1, "IndicesTensor.DimensionCount is 3");
}

TEST_CASE("GATHER_ND1 G2: InputTensor and OutputTensor share a DataType") {
  expect_runtime_rejects<float, std::int32_t, std::int32_t>(
      {{2, 2}, {2, 1}, {2, 2}, 2, 2, 0}, ErrorCode::G2,
      "GATHER_ND1: OutputTensor.DataType is INT32 but InputTensor.DataType is FLOAT32; they must "
      "be the same");
}

TEST_CASE("GATHER_ND1 G3: IndicesTensor.DataType is INT64, INT32, UINT64 or UINT32") {
  expect_runtime_rejects<float, float>({{2, 2}, {2, 1}, {2, 2}, 2, 2, 0}, ErrorCode::G3,
                                       "GATHER_ND1: IndicesTensor.DataType is FLOAT32; it must be "
                                       "one of INT64, INT32, UINT64, UINT32");
  expect_runtime_rejects<float, std::int16_t>({{2, 2}, {2, 1}, {2, 2}, 2, 2, 0}, ErrorCode::G3,
                                              "IndicesTensor.DataType is INT16");
}

TEST_CASE("GATHER_ND1 G4: 1 <= InputDimensionCount, IndicesDimensionCount <= DimensionCount") {
  expect_rejects({{2, 2}, {2, 1}, {2, 2}, 3, 2, 0}, ErrorCode::G4,
                 "GATHER_ND1: InputDimensionCount is 3 but InputTensor.DimensionCount is 2; it "
                 "must be between 1 and 2");
  expect_rejects({{2, 2}, {2, 1}, {2, 2}, 0, 2, 0}, ErrorCode::G4, "InputDimensionCount is 0");
  expect_rejects({{2, 2}, {2, 1}, {2, 2}, 2, 3, 0}, ErrorCode::G4,
                 "IndicesDimensionCount is 3 but IndicesTensor.DimensionCount is 2");
  expect_rejects({{2, 2}, {2, 1}, {2, 2}, 2, 0, 0}, ErrorCode::G4, "IndicesDimensionCount is 0");
}

TEST_CASE("GATHER_ND1 G5: BatchDimensionCount < InputDimensionCount and < IndicesDimensionCount") {
  expect_rejects({{2, 2}, {2, 1}, {2, 2}, 2, 2, 2}, ErrorCode::G5,
                 "GATHER_ND1: BatchDimensionCount is 2 but InputDimensionCount is 2; "
                 "BatchDimensionCount must be smaller");
  // b = 1 < r = 2 but not < q = 1 (the page's own range, b < DimensionCount, would admit it).
  expect_rejects({{1, 2, 2}, {1, 1, 1}, {1, 1, 2}, 2, 1, 1}, ErrorCode::G5,
                 "BatchDimensionCount is 1 but IndicesDimensionCount is 1");
}

TEST_CASE("GATHER_ND1 G6: 1 <= IndicesTensor.Sizes[R-1] <= InputDimensionCount - "
          "BatchDimensionCount") {
  expect_rejects({{2, 2}, {2, 2}, {1, 2}, 2, 2, 1}, ErrorCode::G6,
                 "GATHER_ND1: IndicesTensor.Sizes[1] (the coordinates per index tuple) is 2 but "
                 "InputDimensionCount - BatchDimensionCount is 1; it must be between 1 and 1");
  // m = 3 <= InputTensor.DimensionCount (the page's bound) but > r - b = 2 (the spec's).
  expect_rejects({{1, 2, 2}, {1, 1, 3}, {1, 1, 1}, 2, 2, 0}, ErrorCode::G6,
                 "IndicesTensor.Sizes[2] (the coordinates per index tuple) is 3 but "
                 "InputDimensionCount - BatchDimensionCount is 2");
}

TEST_CASE("GATHER_ND1 G7: the leading dimensions outside r and q are 1") {
  expect_rejects({{2, 2, 2}, {1, 2, 1}, {1, 2, 2}, 2, 2, 0}, ErrorCode::G7,
                 "GATHER_ND1: InputTensor.Sizes[0] is 2 but it precedes the last "
                 "InputDimensionCount (2) dimensions; those leading sizes must be 1");
  expect_rejects({{1, 2, 2}, {3, 2, 1}, {1, 2, 2}, 2, 2, 0}, ErrorCode::G7,
                 "IndicesTensor.Sizes[0] is 3 but it precedes the last IndicesDimensionCount (2)");
}

TEST_CASE("GATHER_ND1 G8: batch sizes agree between InputTensor and IndicesTensor") {
  expect_rejects({{2, 3}, {3, 1}, {3, 1}, 2, 2, 1}, ErrorCode::G8,
                 "GATHER_ND1: IndicesTensor.Sizes[0] is 3 but InputTensor.Sizes[0] is 2; batch "
                 "dimension 0 of BatchDimensionCount (1) must have the same size in both");
  // Right-aligned batch dimensions at different positions: Input dims 1-2, Indices dims 0-1.
  expect_rejects({{1, 2, 3, 4}, {2, 4, 5, 1}, {1, 2, 4, 5}, 3, 4, 2}, ErrorCode::G8,
                 "IndicesTensor.Sizes[1] is 4 but InputTensor.Sizes[2] is 3; batch dimension 1");
}

TEST_CASE("GATHER_ND1 G9: OutputTensor.Sizes equals the inferred sizes") {
  expect_rejects({{2, 2}, {2, 1}, {2, 3}, 2, 2, 0}, ErrorCode::G9,
                 "GATHER_ND1: OutputTensor.Sizes is {2,3} but the inferred sizes are {2,2}", false);
  // The page's formula line (the last m input sizes) gives {1,2,5,6,7} for example 3: rejected.
  expect_rejects({{3, 4, 5, 6, 7}, {1, 1, 1, 2, 3}, {1, 2, 5, 6, 7}, 5, 3, 0}, ErrorCode::G9,
                 "OutputTensor.Sizes is {1,2,5,6,7} but the inferred sizes are {1,1,2,6,7}", false);
  // meaningful = (q - 1) + k must fit in R: {2,3,4} gathered by a {5,6} grid needs 4 dimensions.
  expect_rejects({{2, 3, 4}, {5, 6, 1}, {5, 6, 3}, 3, 3, 0}, ErrorCode::G9,
                 "the output needs (IndicesDimensionCount - 1) + (InputDimensionCount - "
                 "BatchDimensionCount - IndicesTensor.Sizes[2]) = 2 + 2 = 4 dimensions but "
                 "DimensionCount is 3");
}

TEST_CASE("GATHER_ND1 G10: an out-of-range index is rejected only with the data") {
  const Geometry g{{2, 2}, {2, 1}, {2, 2}, 2, 2, 0};
  expect_typed_rejects<float, std::uint32_t>(
      g, ErrorCode::G10,
      "GATHER_ND1: IndicesTensor[1,0] is 2 but "
      "InputTensor.Sizes[0] is 2; indices must lie in [0, 1]",
      {0, 2});
  expect_runtime_rejects<float, std::uint32_t>(g, ErrorCode::G10,
                                               "IndicesTensor[1,0] is 2 but InputTensor.Sizes[0] "
                                               "is 2; indices must lie in [0, 1]",
                                               {0, 2}, {}, false);
}

TEST_CASE("GATHER_ND1 inference names the broken rule (G1, G4-G8, T2, T3, T4)") {
  auto infer = [](const Sizes& in, const Sizes& ix, std::uint32_t r, std::uint32_t q,
                  std::uint32_t b) {
    return infer_gather_nd1_output_sizes(std::span<const std::uint32_t>(in),
                                         std::span<const std::uint32_t>(ix), r, q, b);
  };
  CHECK(infer({2, 2}, {2, 1}, 2, 2, 0) == Sizes{2, 2});
  CHECK(infer({1, 3, 2, 2}, {1, 3, 2, 2}, 3, 3, 1) == Sizes{1, 1, 3, 2});
  DMLREF_CHECK_ERROR(infer({}, {}, 1, 1, 0), ErrorCode::T2, "InputTensor.DimensionCount is 0");
  DMLREF_CHECK_ERROR(infer(Sizes(9, 1u), Sizes(9, 1u), 1, 1, 0), ErrorCode::T2,
                     "InputTensor.DimensionCount is 9");
  DMLREF_CHECK_ERROR(infer({2, 0}, {2, 1}, 2, 2, 0), ErrorCode::T3, "InputTensor.Sizes[1] is 0");
  DMLREF_CHECK_ERROR(infer({2, 2}, {2, 0}, 2, 2, 0), ErrorCode::T3, "IndicesTensor.Sizes[1] is 0");
  // A {65536,65536} grid of one-element gathers: 2^32 output elements.
  DMLREF_CHECK_ERROR(infer({1, 1, 65536}, {65536, 65536, 1}, 1, 3, 0), ErrorCode::T4,
                     "the inferred OutputTensor.Sizes {1,65536,65536} hold more than 4294967295");
  // The seed bounds m by InputTensor.DimensionCount (m = 2 passes); the spec bounds it by r - b.
  DMLREF_CHECK_ERROR(infer({1, 2}, {1, 2}, 1, 1, 0), ErrorCode::G6, "between 1 and 1");
}

// ---- tensor rules (T1-T13) ----------------------------------------------------------------------

namespace {

// Example 1 through the runtime layer, for breaking one field at a time.
struct Example1 {
  RuntimeTensor<float> input{Sizes{2, 2}};
  RuntimeTensor<std::uint32_t> indices{Sizes{2, 1}};
  RuntimeTensor<float> output{Sizes{2, 2}};
  std::vector<float> before;

  Example1() {
    input.set({0, 1, 2, 3});
    indices.set({1, 0});
    before = output.storage;
  }
  GatherNd1OperatorDesc desc() const {
    return {&input.desc, &indices.desc, &output.desc, 2, 2, 0};
  }
  void run(const GatherNd1Options& options = {}) {
    gather_nd1(desc(), input.cbuf(), indices.cbuf(), output.buf(), options);
  }
  bool untouched() const { return output.storage == before; }
};

}  // namespace

TEST_CASE("GATHER_ND1 the unbroken Example1 runs") {
  Example1 ex;
  ex.run();
  CHECK(same_elements(ex.output.get(), std::vector<float>{2, 3, 0, 1}));
}

TEST_CASE("GATHER_ND1 T1: an invalid DataType") {
  Example1 ex;
  ex.input.desc.DataType = DataType::Unknown;
  DMLREF_CHECK_ERROR(validate_gather_nd1(ex.desc()), ErrorCode::T1,
                     "GATHER_ND1: InputTensor.DataType is UNKNOWN");
  DMLREF_CHECK_ERROR(ex.run(), ErrorCode::T1, "InputTensor.DataType is UNKNOWN");
  ex.input.desc.DataType = DataType::Float32;
  ex.indices.desc.DataType = static_cast<DataType>(42);
  DMLREF_CHECK_ERROR(ex.run(), ErrorCode::T1, "IndicesTensor.DataType is 42 (not a");
  CHECK(ex.untouched());
}

TEST_CASE("GATHER_ND1 T2: DimensionCount between 1 and 8") {
  Example1 ex;
  ex.indices.desc.DimensionCount = 9;
  DMLREF_CHECK_ERROR(ex.run(), ErrorCode::T2,
                     "IndicesTensor.DimensionCount is 9; it must be between 1 and 8");
  ex.indices.desc.DimensionCount = 0;
  DMLREF_CHECK_ERROR(ex.run(), ErrorCode::T2, "IndicesTensor.DimensionCount is 0");
  CHECK(ex.untouched());
  // Typed: a view of rank 0.
  const float in[4] = {0, 1, 2, 3};
  const std::uint32_t ix[2] = {1, 0};
  float out[4] = {};
  DMLREF_CHECK_ERROR(gather_nd1(TensorView<const float>(in, Layout{}),
                                TensorView<const std::uint32_t>(ix, {2, 1}),
                                TensorView<float>(out, {2, 2}), 2, 2, 0),
                     ErrorCode::T2, "InputTensor.DimensionCount is 0");
}

TEST_CASE("GATHER_ND1 T3: no size is 0") {
  Example1 ex;
  const std::uint32_t sizes[] = {2, 0};
  ex.output.desc.Sizes = sizes;
  DMLREF_CHECK_ERROR(ex.run(), ErrorCode::T3, "OutputTensor.Sizes[1] is 0");
  CHECK(ex.untouched());
  const float in[4] = {0, 1, 2, 3};
  const std::uint32_t ix[2] = {1, 0};
  float out[4] = {};
  DMLREF_CHECK_ERROR(gather_nd1(TensorView<const float>(in, {2, 2}),
                                TensorView<const std::uint32_t>(ix, {0, 1}),
                                TensorView<float>(out, {2, 2}), 2, 2, 0),
                     ErrorCode::T3, "IndicesTensor.Sizes[0] is 0");
}

TEST_CASE("GATHER_ND1 T8: TotalTensorSizeInBytes covers the tensor") {
  Example1 ex;
  ex.input.desc.TotalTensorSizeInBytes = 12;
  DMLREF_CHECK_ERROR(validate_gather_nd1(ex.desc()), ErrorCode::T8,
                     "InputTensor.TotalTensorSizeInBytes is 12 but the tensor needs at least 16 "
                     "bytes");
  DMLREF_CHECK_ERROR(ex.run(), ErrorCode::T8, "InputTensor.TotalTensorSizeInBytes is 12");
  CHECK(ex.untouched());
}

TEST_CASE("GATHER_ND1 T9: GuaranteedBaseOffsetAlignment and buffer alignment") {
  Example1 ex;
  ex.indices.desc.GuaranteedBaseOffsetAlignment = 3;
  DMLREF_CHECK_ERROR(ex.run(), ErrorCode::T9, "IndicesTensor.GuaranteedBaseOffsetAlignment is 3");
  ex.indices.desc.GuaranteedBaseOffsetAlignment = 0;
  // A buffer one byte past an element boundary.
  std::vector<std::uint32_t> shifted(4, 0);
  const ConstBuffer misaligned(reinterpret_cast<const unsigned char*>(shifted.data()) + 1, 12);
  DMLREF_CHECK_ERROR(gather_nd1(ex.desc(), ex.input.cbuf(), misaligned, ex.output.buf()),
                     ErrorCode::T9, "the buffer of IndicesTensor starts at an address");
  CHECK(ex.untouched());
}

TEST_CASE("GATHER_ND1 T10: each buffer holds TotalTensorSizeInBytes") {
  Example1 ex;
  DMLREF_CHECK_ERROR(
      gather_nd1(ex.desc(), ConstBuffer(ex.input.storage.data(), 8), ex.indices.cbuf(),
                 ex.output.buf()),
      ErrorCode::T10,
      "the buffer of InputTensor holds 8 bytes but InputTensor.TotalTensorSizeInBytes "
      "is 16");
  DMLREF_CHECK_ERROR(gather_nd1(ex.desc(), ex.input.cbuf(), ex.indices.cbuf(),
                                Buffer{ex.output.storage.data(), 15}),
                     ErrorCode::T10, "the buffer of OutputTensor holds 15 bytes");
  DMLREF_CHECK_ERROR(gather_nd1(ex.desc(), ex.input.cbuf(), ConstBuffer(nullptr, 8),
                                ex.output.buf()),
                     ErrorCode::NullPointer, "the buffer of IndicesTensor is null");
  CHECK(ex.untouched());
}

TEST_CASE("GATHER_ND1 T11: Flags NONE or OWNED_BY_DML, the latter for inputs only") {
  Example1 ex;
  ex.input.desc.Flags = TensorFlags::OwnedByDml;  // allowed on an input, no effect
  ex.run();
  CHECK(same_elements(ex.output.get(), std::vector<float>{2, 3, 0, 1}));
  Example1 ex2;
  ex2.indices.desc.Flags = static_cast<TensorFlags>(2);
  DMLREF_CHECK_ERROR(ex2.run(), ErrorCode::T11, "IndicesTensor.Flags is 2");
  ex2.indices.desc.Flags = TensorFlags::None;
  ex2.output.desc.Flags = TensorFlags::OwnedByDml;
  DMLREF_CHECK_ERROR(ex2.run(), ErrorCode::T11, "that flag is for inputs only");
  CHECK(ex2.untouched());
}

TEST_CASE("GATHER_ND1 T12: an output addresses each element once") {
  RuntimeTensor<float> input(Sizes{2, 2});
  RuntimeTensor<std::uint32_t> indices(Sizes{2, 1});
  RuntimeTensor<float> output(Sizes{2, 2}, Sizes{0, 1});
  const GatherNd1OperatorDesc desc{&input.desc, &indices.desc, &output.desc, 2, 2, 0};
  DMLREF_CHECK_ERROR(validate_gather_nd1(desc), ErrorCode::T12,
                     "OutputTensor.Strides[0] is 0 with Sizes[0] 2");
  const float in[4] = {0, 1, 2, 3};
  const std::uint32_t ix[2] = {1, 0};
  float out[4] = {};
  DMLREF_CHECK_ERROR(gather_nd1(TensorView<const float>(in, {2, 2}),
                                TensorView<const std::uint32_t>(ix, {2, 1}),
                                TensorView<float>(out, Layout::strided({2, 2}, {1, 1})), 2, 2, 0),
                     ErrorCode::T12, "address some element twice");
}

TEST_CASE("GATHER_ND1 T13: the output overlaps neither the input nor the indices") {
  Example1 ex;
  // Runtime: the output bound to the input's buffer, then to memory shared with the indices.
  DMLREF_CHECK_ERROR(gather_nd1(ex.desc(), ex.input.cbuf(), ex.indices.cbuf(),
                                Buffer{ex.input.storage.data(), 16}),
                     ErrorCode::T13, "OutputTensor (bytes [0, 16)) overlaps InputTensor");
  std::vector<std::uint32_t> shared = {1, 0, 0, 0};
  DMLREF_CHECK_ERROR(gather_nd1(ex.desc(), ex.input.cbuf(), ConstBuffer(shared.data(), 8),
                                Buffer{shared.data(), 16}),
                     ErrorCode::T13, "OutputTensor (bytes [0, 16)) overlaps IndicesTensor");
  CHECK(shared == std::vector<std::uint32_t>{1, 0, 0, 0});
  CHECK(ex.input.get() == std::vector<float>{0, 1, 2, 3});

  // Typed: UINT32 data and indices, so one buffer can hold all three.
  std::vector<std::uint32_t> memory = {0, 1, 2, 3, 1, 0, 9, 9, 9, 9};
  const TensorView<const std::uint32_t> input(memory.data(), {2, 2});
  const TensorView<const std::uint32_t> indices(memory.data() + 4, {2, 1});
  DMLREF_CHECK_ERROR(
      gather_nd1(input, indices, TensorView<std::uint32_t>(memory.data() + 2, {2, 2}), 2, 2, 0),
      ErrorCode::T13, "OutputTensor (bytes [8, 24)) overlaps InputTensor (bytes [0, 16))");
  DMLREF_CHECK_ERROR(
      gather_nd1(input, indices, TensorView<std::uint32_t>(memory.data() + 5, {2, 2}), 2, 2, 0),
      ErrorCode::T13, "overlaps IndicesTensor");
  CHECK(memory == std::vector<std::uint32_t>{0, 1, 2, 3, 1, 0, 9, 9, 9, 9});
}

TEST_CASE("GATHER_ND1 null descriptions and options the library does not know") {
  Example1 ex;
  GatherNd1OperatorDesc desc = ex.desc();
  desc.IndicesTensor = nullptr;
  DMLREF_CHECK_ERROR(validate_gather_nd1(desc), ErrorCode::NullPointer, "IndicesTensor is null");
  GatherNd1Options options;
  options.index_policy = static_cast<IndexPolicy>(7);
  DMLREF_CHECK_ERROR(ex.run(options), ErrorCode::InvalidOption, "index_policy is 7");
  options = {};
  options.feature_level = static_cast<FeatureLevel>(0x3050);
  DMLREF_CHECK_ERROR(ex.run(options), ErrorCode::InvalidOption, "is not a DirectML feature level");
  CHECK(ex.untouched());
}

// ---- a rejected call writes nothing -------------------------------------------------------------

TEST_CASE("GATHER_ND1 canary: a rejected call leaves every output byte untouched") {
  // G10 with the bad index last: the index pass runs before anything is written.
  const Geometry g{{1, 3, 2, 2}, {1, 3, 2, 2}, {1, 1, 3, 2}, 3, 3, 1};
  const std::vector<std::int64_t> bad_last = {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 2};
  expect_typed_rejects<std::int8_t, std::int64_t>(g, ErrorCode::G10, "IndicesTensor[0,2,1,1] is 2",
                                                  bad_last);
  expect_runtime_rejects<std::int8_t, std::int64_t>(g, ErrorCode::G10,
                                                    "IndicesTensor[0,2,1,1] is 2", bad_last, {},
                                                    false);
  // A batch mismatch, a wrong output size, a data type the target level lacks.
  expect_typed_rejects({{2, 3}, {3, 1}, {3, 1}, 2, 2, 1}, ErrorCode::G8, "batch dimension 0");
  expect_runtime_rejects({{2, 2}, {2, 1}, {2, 3}, 2, 2, 0}, ErrorCode::G9, "inferred sizes");
  GatherNd1Options level_3_0;
  level_3_0.feature_level = FeatureLevel::k3_0;
  expect_runtime_rejects<double, std::uint32_t>({{2, 2}, {2, 1}, {2, 2}, 2, 2, 0},
                                                ErrorCode::FeatureLevel, "needs", {1, 0},
                                                level_3_0);
  // T13: the output shares the indices' buffer; neither is written.
  Example1 ex;
  std::vector<std::uint32_t> shared = {1, 0, 0, 0, 0, 0};
  DMLREF_CHECK_ERROR(gather_nd1(ex.desc(), ex.input.cbuf(), ConstBuffer(shared.data(), 8),
                                Buffer{shared.data() + 1, 16}),
                     ErrorCode::T13, "overlaps IndicesTensor");
  CHECK(shared == std::vector<std::uint32_t>{1, 0, 0, 0, 0, 0});
}

// ---- feature levels -----------------------------------------------------------------------------

TEST_CASE("GATHER_ND1 feature levels: introduced at 3_0; FLOAT64 and INT64 data need 4_1") {
  GatherNd1Options options;
  options.feature_level = FeatureLevel::k2_1;
  Example1 ex;
  DMLREF_CHECK_ERROR(validate_gather_nd1(ex.desc(), options), ErrorCode::FeatureLevel,
                     "GATHER_ND1: the operator needs DML_FEATURE_LEVEL_3_0; the target is "
                     "DML_FEATURE_LEVEL_2_1");
  DMLREF_CHECK_ERROR(ex.run(options), ErrorCode::FeatureLevel, "needs DML_FEATURE_LEVEL_3_0");
  options.feature_level = FeatureLevel::k1_0;
  expect_typed_rejects({{2, 2}, {2, 1}, {2, 2}, 2, 2, 0}, ErrorCode::FeatureLevel,
                       "needs DML_FEATURE_LEVEL_3_0; the target is DML_FEATURE_LEVEL_1_0", {},
                       options);
  CHECK(ex.untouched());

  options.feature_level = FeatureLevel::k3_0;
  const Geometry g{{2, 2}, {2, 1}, {2, 2}, 2, 2, 0};
  expect_runtime_rejects<double, std::uint32_t>(
      g, ErrorCode::FeatureLevel,
      "GATHER_ND1: InputTensor.DataType FLOAT64 needs DML_FEATURE_LEVEL_4_1; the target is "
      "DML_FEATURE_LEVEL_3_0",
      {1, 0}, options);
  expect_typed_rejects<std::int64_t, std::uint32_t>(
      g, ErrorCode::FeatureLevel,
      "InputTensor.DataType INT64 needs DML_FEATURE_LEVEL_4_1; the target is "
      "DML_FEATURE_LEVEL_3_0",
      {1, 0}, options);
  expect_typed_rejects<std::uint64_t, std::int32_t>(
      g, ErrorCode::FeatureLevel, "InputTensor.DataType UINT64 needs DML_FEATURE_LEVEL_4_1", {1, 0},
      options);

  // At 3_0: INT32 data with INT64 indices (64-bit indices are in the 3_0 row), negative included.
  const std::vector<std::int32_t> in = {10, 11, 12, 13};
  const std::vector<std::int64_t> ix = {-1, 0};
  const std::vector<std::int32_t> want = {12, 13, 10, 11};
  CHECK(same_elements(run_runtime<std::int32_t, std::int64_t>({2, 2}, in, {2, 1}, ix, {2, 2}, 2,
                                                              2, 0, options),
                      want));
  CHECK(same_elements(run_typed<std::int32_t, std::int64_t>({2, 2}, in, {2, 1}, ix, {2, 2}, 2, 2,
                                                            0, options),
                      want));
  // FLOAT64 from 4_1 on.
  options.feature_level = FeatureLevel::k4_1;
  CHECK(same_elements(run_runtime<double, std::uint32_t>({2, 2}, {0.5, 1.5, 2.5, 3.5}, {2, 1},
                                                         {1, 0}, {2, 2}, 2, 2, 0, options),
                      std::vector<double>{2.5, 3.5, 0.5, 1.5}));
}

// ---- `reversed`: tensors the descriptions stand in for, turned around after every check ---------

TEST_CASE("GATHER_ND1: the runtime entry point over reversed tensors its descriptions stand in") {
  // Example 1 with the input read backwards along dimension 1 ([[1, 0], [3, 2]]) and the output
  // written backwards along dimension 0.
  const std::vector<float> in = {0, 1, 2, 3};
  const std::vector<std::uint32_t> indices = {1, 0};
  std::vector<float> out(4, -1.0f);
  const TensorDesc din(DataType::Float32, {2, 2}), dix(DataType::UInt32, {2, 1}),
      dout(DataType::Float32, {2, 2});
  const BufferTensorDesc i = din.desc(), x = dix.desc(), o = dout.desc();
  const GatherNd1OperatorDesc desc{&i, &x, &o, 2, 2, 0};
  gather_nd1(desc, ConstBuffer(in.data(), 16), ConstBuffer(indices.data(), 8),
             Buffer{out.data(), 16}, {}, std::vector<std::uint8_t>{0b10, 0, 0b01});
  // The caller's output is [[3, 2], [1, 0]], its rows stored the other way round.
  CHECK(out == std::vector<float>{1, 0, 3, 2});
  DMLREF_CHECK_ERROR(gather_nd1(desc, ConstBuffer(in.data(), 16), ConstBuffer(indices.data(), 8),
                                Buffer{out.data(), 16}, {}, std::vector<std::uint8_t>{0b10}),
                     ErrorCode::InvalidOption,
                     "GATHER_ND1: 1 reversed mask was given for 3 tensors");
}

}  // namespace test_gather_nd1
