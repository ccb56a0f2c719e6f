// REVERSE_SUBSEQUENCES: the page's examples, every type, rank and axis, strided and broadcast
// operands, seeded properties, one negative test per rule, and the feature-level table.
//
// Expected values never come from the operator: expected_reverse() below is an independent model
// on packed data (flat outer/axis/inner arithmetic, not coordinates), and strided operands are read
// and written through the test's own offset arithmetic.
#include "test_support.hpp"

#include <dmlref/ops/reverse_subsequences.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace test_reverse_subsequences {  // this file's own names (tests/CMakeLists.txt: unity groups)

namespace {

using namespace dmlref;
using dmlref::test::distinct_value;
using dmlref::test::printable;
using dmlref::test::same_bits;

using Sizes = std::vector<std::uint32_t>;
using Strides = std::vector<std::int64_t>;

// ---- the independent model ---------------------------------------------------------------------

std::uint64_t count_of(const Sizes& sizes) {
  std::uint64_t n = 1;
  for (std::uint32_t s : sizes) n *= s;
  return n;
}

// R3: the lengths tensor has the input's sizes with 1 on Axis.
Sizes lengths_sizes(Sizes sizes, std::uint32_t axis) {
  sizes[axis] = 1;
  return sizes;
}

Strides packed_strides(const Sizes& sizes) {
  Strides s(sizes.size());
  std::int64_t step = 1;
  for (std::size_t d = sizes.size(); d-- > 0;) {
    s[d] = step;
    step *= sizes[d];
  }
  return s;
}

// Element offset of the k-th element in row-major order, under `strides`.
std::int64_t offset_of(std::uint64_t k, const Sizes& sizes, const Strides& strides) {
  std::int64_t off = 0;
  for (std::size_t d = sizes.size(); d-- > 0;) {
    off += static_cast<std::int64_t>(k % sizes[d]) * strides[d];
    k /= sizes[d];
  }
  return off;
}

// The spec's semantics on packed data, written as outer x axis x inner blocks.
template <class T, class L>
std::vector<T> expected_reverse(const std::vector<T>& input, const Sizes& sizes,
                                const std::vector<L>& lengths, std::uint32_t axis) {
  std::uint64_t outer = 1, inner = 1;
  for (std::uint32_t d = 0; d < axis; ++d) outer *= sizes[d];
  for (std::size_t d = axis + 1; d < sizes.size(); ++d) inner *= sizes[d];
  const std::uint64_t n = sizes[axis];
  std::vector<T> out(input.size());
  for (std::uint64_t o = 0; o < outer; ++o) {
    for (std::uint64_t i = 0; i < inner; ++i) {
      const std::uint64_t len = std::min<std::uint64_t>(lengths[o * inner + i], n);
      for (std::uint64_t a = 0; a < n; ++a) {
        const std::uint64_t src = a < len ? len - 1 - a : a;
        std::memcpy(&out[(o * n + a) * inner + i], &input[(o * n + src) * inner + i], sizeof(T));
      }
    }
  }
  return out;
}

// ---- strided operands --------------------------------------------------------------------------

// Memory for one operand; offset 0 sits at memory[origin] so negative strides fit. A few spare
// elements past the end cover DMLCalcBufferTensorSize's rounding to 4 bytes (T8, T10).
template <class T>
struct Strided {
  std::vector<T> memory;
  std::int64_t origin = 0;
  Layout layout;
  T* data() { return memory.data() + origin; }
  std::uint64_t bytes() const { return memory.size() * sizeof(T); }
};

template <class T>
Strided<T> allocate(const Sizes& sizes, const Strides& strides) {
  std::int64_t lo = 0, hi = 0;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    const std::int64_t reach = static_cast<std::int64_t>(sizes[d] - 1) * strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  Strided<T> s;
  s.memory.resize(static_cast<std::size_t>(hi - lo + 1 + 4));
  s.origin = -lo;
  s.layout = Layout::strided(std::span<const std::uint32_t>(sizes),
                             std::span<const std::int64_t>(strides));
  return s;
}

constexpr unsigned char kSentinelByte = 0xA5;

template <class T>
void fill_sentinel(std::vector<T>& v) {
  std::memset(static_cast<void*>(v.data()), kSentinelByte, v.size() * sizeof(T));
}

template <class T>
bool is_sentinel(const T& value) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  return std::all_of(std::begin(bytes), std::end(bytes),
                     [](unsigned char b) { return b == kSentinelByte; });
}

std::vector<std::uint32_t> to_desc_strides(const Strides& strides) {
  return {strides.begin(), strides.end()};
}

std::string describe_case(const Sizes& sizes, std::uint32_t axis, const Strides& in,
                          const Strides& len, const Strides& out) {
  std::ostringstream os;
  auto list = [&](const auto& v) {
    os << '{';
    for (std::size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
    os << '}';
  };
  os << "sizes ";
  list(sizes);
  os << " axis " << axis << " input strides ";
  list(in);
  os << " lengths strides ";
  list(len);
  os << " output strides ";
  list(out);
  return os.str();
}

// Compile-time budget: CAPTURE, CHECK and the runtime entry point live in non-template functions,
// so doctest's macros and the runtime dispatch are expanded once, not once per (T, L).

// The outcome of one layer's run: how many output elements differ from the model (and the first
// one, described) and how many unaddressed elements lost their sentinel.
void report_layer(const char* layer, std::uint64_t wrong, const std::string& first,
                  std::uint64_t clobbered) {
  CAPTURE(layer);
  CHECK_MESSAGE(wrong == 0, wrong, " wrong elements; first: ", first);
  CHECK_MESSAGE(clobbered == 0, clobbered, " unaddressed output elements were written");
}

// The runtime layer on the case's memory (strides all non-negative).
void run_runtime_case(DataType data_type, DataType lengths_type, const Sizes& sizes,
                      const Sizes& len_sizes, std::uint32_t axis, const Strides& in_strides,
                      const Strides& len_strides, const Strides& out_strides, ConstBuffer in,
                      ConstBuffer len, Buffer out) {
  const TensorDesc in_desc(data_type, sizes, to_desc_strides(in_strides));
  const TensorDesc len_desc(lengths_type, len_sizes, to_desc_strides(len_strides));
  const TensorDesc out_desc(data_type, sizes, to_desc_strides(out_strides));
  const BufferTensorDesc i = in_desc.desc(), l = len_desc.desc(), o = out_desc.desc();
  reverse_subsequences(ReverseSubsequencesOperatorDesc{&i, &l, &o, axis}, in, len, out);
}

bool non_negative(const Strides& s) {
  return std::all_of(s.begin(), s.end(), [](std::int64_t v) { return v >= 0; });
}

// Runs one case through the typed layer and (when every stride is DirectML's non-negative kind)
// the runtime layer, and compares every output element, bit for bit, with the model; elements of
// the output memory that the output does not address must keep their sentinel bytes.
template <class T, class L>
void check_case_typed(const Sizes& sizes, std::uint32_t axis, const Strides& in_strides,
                      const Strides& len_strides, const Strides& out_strides, std::mt19937& rng,
                      std::uint64_t max_length) {
  const Sizes len_sizes = lengths_sizes(sizes, axis);
  const std::uint64_t count = count_of(sizes);

  Strided<T> in = allocate<T>(sizes, in_strides);
  for (std::size_t i = 0; i < in.memory.size(); ++i) in.memory[i] = distinct_value<T>(i);
  Strided<L> len = allocate<L>(len_sizes, len_strides);
  for (L& v : len.memory) v = static_cast<L>(rng() % (max_length + 1));

  std::vector<T> in_logical(count);
  for (std::uint64_t k = 0; k < count; ++k) {
    in_logical[k] = in.memory[in.origin + offset_of(k, sizes, in_strides)];
  }
  std::vector<L> len_logical(count_of(len_sizes));
  for (std::uint64_t k = 0; k < len_logical.size(); ++k) {
    len_logical[k] = len.memory[len.origin + offset_of(k, len_sizes, len_strides)];
  }
  const std::vector<T> expected = expected_reverse(in_logical, sizes, len_logical, axis);

  Strided<T> out = allocate<T>(sizes, out_strides);
  auto verify = [&](const char* layer) {
    std::vector<bool> addressed(out.memory.size());
    std::uint64_t wrong = 0;
    std::string first;
    for (std::uint64_t k = 0; k < count; ++k) {
      const auto at = static_cast<std::size_t>(out.origin + offset_of(k, sizes, out_strides));
      addressed[at] = true;
      if (!same_bits(out.memory[at], expected[k]) && wrong++ == 0) {
        std::ostringstream os;
        os << "element " << k << " is " << printable(out.memory[at]) << ", expected "
           << printable(expected[k]);
        first = os.str();
      }
    }
    std::uint64_t clobbered = 0;
    for (std::size_t i = 0; i < out.memory.size(); ++i) {
      if (!addressed[i] && !is_sentinel(out.memory[i])) ++clobbered;
    }
    report_layer(layer, wrong, first, clobbered);
  };

  fill_sentinel(out.memory);
  reverse_subsequences(TensorView<const T>(in.data(), in.layout),
                       TensorView<const L>(len.data(), len.layout),
                       TensorView<T>(out.data(), out.layout), axis);
  verify("typed");

  if (non_negative(in_strides) && non_negative(len_strides) && non_negative(out_strides)) {
    fill_sentinel(out.memory);
    run_runtime_case(data_type_of<T>, data_type_of<L>, sizes, len_sizes, axis, in_strides,
                     len_strides, out_strides, ConstBuffer(in.memory.data(), in.bytes()),
                     ConstBuffer(len.memory.data(), len.bytes()),
                     Buffer{out.memory.data(), out.bytes()});
    verify("runtime");
  }
}

using CaseRunner = void (*)(const Sizes&, std::uint32_t, const Strides&, const Strides&,
                            const Strides&, std::mt19937&, std::uint64_t);

void check_case(CaseRunner run, const Sizes& sizes, std::uint32_t axis, const Strides& in_strides,
                const Strides& len_strides, const Strides& out_strides, std::mt19937& rng,
                std::uint64_t max_length) {
  CAPTURE(describe_case(sizes, axis, in_strides, len_strides, out_strides));
  run(sizes, axis, in_strides, len_strides, out_strides, rng, max_length);
}

template <class T>
void check_case_both_lengths(const Sizes& sizes, std::uint32_t axis, const Strides& in_strides,
                             const Strides& len_strides, const Strides& out_strides,
                             std::mt19937& rng) {
  // Up to two past the axis size, so clamping (seed: "as if clamped to the maximum") is covered.
  const std::uint64_t max_length = sizes[axis] + 2;
  check_case(&check_case_typed<T, std::uint32_t>, sizes, axis, in_strides, len_strides,
             out_strides, rng, max_length);
  check_case(&check_case_typed<T, std::uint64_t>, sizes, axis, in_strides, len_strides,
             out_strides, rng, max_length);
}

// Random sizes of `rank` dimensions with Sizes[axis] in [1, 5] and at most 256 elements, so 8-bit
// types still hold distinct values.
Sizes random_sizes(std::uint32_t rank, std::uint32_t axis, std::mt19937& rng) {
  Sizes sizes(rank);
  for (std::uint32_t d = 0; d < rank; ++d) sizes[d] = 1 + rng() % 3;
  sizes[axis] = 1 + rng() % 5;
  while (count_of(sizes) > 256) {
    const std::uint32_t d = rng() % rank;
    if (d != axis && sizes[d] > 1) --sizes[d];
  }
  return sizes;
}

// Strides for `sizes` in a random dimension order with random padding (0-2 elements per level);
// with `broadcast`, sometimes one dimension gets stride 0 (inputs only, T7).
Strides random_strides(const Sizes& sizes, std::mt19937& rng, bool broadcast) {
  const std::size_t rank = sizes.size();
  std::vector<std::size_t> order(rank);
  for (std::size_t d = 0; d < rank; ++d) order[d] = d;
  for (std::size_t d = rank; d > 1; --d) std::swap(order[d - 1], order[rng() % d]);
  Strides strides(rank);
  std::int64_t step = 1;
  for (std::size_t k = rank; k-- > 0;) {
    strides[order[k]] = step;
    step = step * sizes[order[k]] + static_cast<std::int64_t>(rng() % 3);
  }
  if (broadcast && rng() % 3 == 0) strides[rng() % rank] = 0;
  return strides;
}

// Packed typed call for the properties.
template <class T, class L>
std::vector<T> run_packed(const std::vector<T>& input, const Sizes& sizes,
                          const std::vector<L>& lengths, std::uint32_t axis) {
  std::vector<T> out(input.size());
  const Sizes len_sizes = lengths_sizes(sizes, axis);
  reverse_subsequences(TensorView<const T>(input.data(), Layout::packed(sizes)),
                       TensorView<const L>(lengths.data(), Layout::packed(len_sizes)),
                       TensorView<T>(out.data(), Layout::packed(sizes)), axis);
  return out;
}

template <class T>
bool all_same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!same_bits(a[i], b[i])) return false;
  }
  return true;
}

// ---- the page's examples -----------------------------------------------------------------------

const std::vector<float> kExampleInput = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
const Sizes kExampleSizes = {1, 1, 3, 4};

struct PageExample {
  std::uint32_t axis;
  Sizes lengths_sizes;
  std::vector<std::uint32_t> lengths;
  std::vector<float> output;
};
const PageExample kExample1 = {3, {1, 1, 3, 1}, {2, 4, 3}, {2, 1, 3, 4, 8, 7, 6, 5, 11, 10, 9, 12}};
const PageExample kExample2 = {
    2, {1, 1, 1, 4}, {2, 3, 1, 0}, {5, 10, 3, 4, 1, 6, 7, 8, 9, 2, 11, 12}};

template <class L>
std::vector<float> run_example_runtime(const PageExample& e) {
  const std::vector<L> lengths(e.lengths.begin(), e.lengths.end());
  const TensorDesc in(DataType::Float32, kExampleSizes);
  const TensorDesc len(data_type_of<L>, e.lengths_sizes);
  const TensorDesc out(DataType::Float32, kExampleSizes);
  const BufferTensorDesc i = in.desc(), l = len.desc(), o = out.desc();
  const ReverseSubsequencesOperatorDesc desc{&i, &l, &o, e.axis};
  std::vector<float> output(12, -1.0f);
  CHECK(validate_reverse_subsequences(desc) == kExampleSizes);
  reverse_subsequences(desc, ConstBuffer(kExampleInput.data(), 48),
                       ConstBuffer(lengths.data(), lengths.size() * sizeof(L)),
                       Buffer{output.data(), 48});
  return output;
}

template <class L>
std::vector<float> run_example_typed(const PageExample& e) {
  const std::vector<L> lengths(e.lengths.begin(), e.lengths.end());
  std::vector<float> output(12, -1.0f);
  const TensorView<const float> in(kExampleInput.data(), Layout::packed(kExampleSizes));
  const TensorView<const L> len(lengths.data(), Layout::packed(e.lengths_sizes));
  const TensorView<float> out(output.data(), Layout::packed(kExampleSizes));
  CHECK(validate_reverse_subsequences(in, len, out, e.axis) == kExampleSizes);
  reverse_subsequences(in, len, out, e.axis);
  return output;
}

TEST_CASE("page example 1: Axis 3, lengths [[2],[4],[3]]") {
  CHECK(run_example_runtime<std::uint32_t>(kExample1) == kExample1.output);
  CHECK(run_example_typed<std::uint32_t>(kExample1) == kExample1.output);
  CHECK(run_example_runtime<std::uint64_t>(kExample1) == kExample1.output);
  CHECK(run_example_typed<std::uint64_t>(kExample1) == kExample1.output);
}

TEST_CASE("page example 2: Axis 2, lengths [2,3,1,0] (1 and 0 copy)") {
  CHECK(run_example_runtime<std::uint32_t>(kExample2) == kExample2.output);
  CHECK(run_example_typed<std::uint32_t>(kExample2) == kExample2.output);
  CHECK(run_example_runtime<std::uint64_t>(kExample2) == kExample2.output);
  CHECK(run_example_typed<std::uint64_t>(kExample2) == kExample2.output);
}

TEST_CASE("the test's own model agrees with the page") {
  for (const PageExample* e : {&kExample1, &kExample2}) {
    CHECK(expected_reverse(kExampleInput, kExampleSizes, e->lengths, e->axis) == e->output);
  }
}

TEST_CASE("reference::reverse_subsequences validates and computes the same") {
  std::vector<float> output(12, -1.0f);
  const std::vector<std::uint32_t> lengths = kExample1.lengths;
  reference::reverse_subsequences(
      TensorView<const float>(kExampleInput.data(), Layout::packed(kExampleSizes)),
      TensorView<const std::uint32_t>(lengths.data(), Layout::packed(kExample1.lengths_sizes)),
      TensorView<float>(output.data(), Layout::packed(kExampleSizes)), 3);
  CHECK(output == kExample1.output);
  DMLREF_CHECK_ERROR(
      reference::reverse_subsequences(
          TensorView<const float>(kExampleInput.data(), Layout::packed(kExampleSizes)),
          TensorView<const std::uint32_t>(lengths.data(), Layout::packed(kExample1.lengths_sizes)),
          TensorView<float>(output.data(), Layout::packed(kExampleSizes)), 2),
      ErrorCode::R3, "SequenceLengthsTensor.Sizes[2] is 3 but it must be 1 on Axis (2)");
}

// ---- every type, rank and axis -----------------------------------------------------------------

TEST_CASE_TEMPLATE("ranks 1-8, every axis, both lengths types", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(0x5eed0001u);
  for (std::uint32_t rank = 1; rank <= 8; ++rank) {
    for (std::uint32_t axis = 0; axis < rank; ++axis) {
      const Sizes sizes = random_sizes(rank, axis, rng);
      const Sizes len_sizes = lengths_sizes(sizes, axis);
      check_case_both_lengths<T>(sizes, axis, packed_strides(sizes), packed_strides(len_sizes),
                                 packed_strides(sizes), rng);
    }
  }
}

TEST_CASE_TEMPLATE("strided and broadcast operands", T, DMLREF_ALL_TYPES) {
  std::mt19937 rng(0x5eed0002u);
  const Sizes s2 = {3, 4};
  const Sizes s3 = {2, 3, 4};
  SUBCASE("transposed input") {
    check_case_both_lengths<T>(s2, 1, {1, 3}, {1, 1}, {4, 1}, rng);
    check_case_both_lengths<T>(s2, 0, {1, 3}, {4, 1}, {4, 1}, rng);
    check_case_both_lengths<T>(s3, 1, {1, 8, 2}, {4, 4, 1}, {12, 4, 1}, rng);
  }
  SUBCASE("padded input") {
    check_case_both_lengths<T>(s3, 2, {20, 6, 1}, {3, 1, 1}, {12, 4, 1}, rng);
    check_case_both_lengths<T>(s3, 0, {40, 7, 2}, {4, 4, 1}, {12, 4, 1}, rng);
  }
  SUBCASE("zero-stride broadcast input: equal rows reversed by different lengths") {
    check_case_both_lengths<T>(s2, 1, {0, 1}, {1, 1}, {4, 1}, rng);
    check_case_both_lengths<T>(s3, 2, {0, 4, 1}, {3, 1, 1}, {12, 4, 1}, rng);
    check_case_both_lengths<T>(s3, 1, {4, 0, 1}, {4, 4, 1}, {12, 4, 1}, rng);  // along Axis
  }
  SUBCASE("negative strides (typed layer only: DirectML strides are unsigned)") {
    check_case_both_lengths<T>(s2, 1, {-4, -1}, {1, 1}, {4, 1}, rng);
    check_case_both_lengths<T>(s2, 1, {4, 1}, {-1, 1}, {-4, -1}, rng);
  }
  SUBCASE("lengths broadcast with zero strides") {
    // One length per batch row (dimension 0), shared by every subsequence in the row.
    check_case_both_lengths<T>(s3, 2, {12, 4, 1}, {1, 0, 0}, {12, 4, 1}, rng);
    // One length per column, reversing along dimension 0.
    check_case_both_lengths<T>(s3, 0, {12, 4, 1}, {0, 0, 1}, {12, 4, 1}, rng);
    // One length for everything.
    check_case_both_lengths<T>(s3, 1, {12, 4, 1}, {0, 0, 0}, {12, 4, 1}, rng);
  }
  SUBCASE("strided outputs that do not self-overlap") {
    check_case_both_lengths<T>(s2, 1, {4, 1}, {1, 1}, {1, 3}, rng);             // transposed
    check_case_both_lengths<T>(s3, 2, {12, 4, 1}, {3, 1, 1}, {16, 5, 1}, rng);  // padded
    check_case_both_lengths<T>(s3, 1, {1, 2, 6}, {4, 4, 1}, {1, 8, 2}, rng);    // both permuted
  }
  SUBCASE("size-1 dimensions, Axis of size 1") {
    check_case_both_lengths<T>({1, 4, 1}, 1, {0, 1, 0}, {1, 1, 1}, {4, 1, 1}, rng);
    check_case_both_lengths<T>({3, 1, 2}, 1, {2, 9, 1}, {2, 2, 1}, {2, 2, 1}, rng);
  }
}

TEST_CASE_TEMPLATE("inputs may overlap each other (T13 is about outputs)", L,
                   std::uint32_t, std::uint64_t) {
  // The lengths are read from the input's own buffer: DirectML's samples bind one buffer twice.
  const std::vector<L> memory = {2, 4, 3, 1, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<L> out(12);
  const TensorView<const L> in(memory.data(), Layout::packed({3, 4}));
  const TensorView<const L> len(memory.data(), Layout::strided({3, 1}, {1, 1}));  // [[2],[4],[3]]
  reverse_subsequences(in, len, TensorView<L>(out.data(), Layout::packed({3, 4})), 1);
  CHECK(out == std::vector<L>{4, 2, 3, 1, 8, 7, 6, 5, 11, 10, 9, 12});
}

// ---- bit-exact movement ------------------------------------------------------------------------

template <class T, class Bits>
void check_special_bits(const std::vector<Bits>& patterns) {
  const auto n = static_cast<std::uint32_t>(patterns.size());
  std::vector<T> input(n);
  std::memcpy(static_cast<void*>(input.data()), patterns.data(), n * sizeof(T));
  const std::vector<std::uint32_t> lengths = {n};
  std::vector<T> out(n);
  reverse_subsequences(TensorView<const T>(input.data(), Layout::packed({n})),
                       TensorView<const std::uint32_t>(lengths.data(), Layout::packed({1})),
                       TensorView<T>(out.data(), Layout::packed({n})), 0);
  for (std::uint32_t i = 0; i < n; ++i) CHECK(same_bits(out[i], input[n - 1 - i]));

  const TensorDesc desc(data_type_of<T>, {n});
  const TensorDesc len_desc(DataType::UInt64, {1});
  const BufferTensorDesc d = desc.desc(), l = len_desc.desc();
  const std::vector<std::uint64_t> lengths64 = {n};
  std::vector<T> runtime_out(n + 8 / sizeof(T));  // room for the rounding of T8
  std::vector<T> padded_input(input);
  padded_input.resize(runtime_out.size());
  reverse_subsequences(ReverseSubsequencesOperatorDesc{&d, &l, &d, 0},
                       ConstBuffer(padded_input.data(), padded_input.size() * sizeof(T)),
                       ConstBuffer(lengths64.data(), 8),
                       Buffer{runtime_out.data(), runtime_out.size() * sizeof(T)});
  for (std::uint32_t i = 0; i < n; ++i) CHECK(same_bits(runtime_out[i], input[n - 1 - i]));
}

TEST_CASE("NaN payloads, -0, subnormals, infinities move bit-exactly") {
  SUBCASE("FLOAT16") {
    check_special_bits<float16, std::uint16_t>({
        0x7C01,  // signalling NaN, payload 1
        0x7E00,  // quiet NaN
        0xFD55,  // negative signalling NaN with a payload
        0x7FFF,  // quiet NaN, full payload
        0x8000,  // -0
        0x0001,  // smallest subnormal
        0x83FF,  // negative largest subnormal
        0x7C00,  // +inf
        0xFC00,  // -inf
    });
  }
  SUBCASE("FLOAT32") {
    check_special_bits<float, std::uint32_t>(
        {0x7F800001u, 0xFFC00123u, 0x7FBFFFFFu, 0x80000000u, 0x00000001u, 0x7F800000u});
  }
  SUBCASE("FLOAT64") {
    check_special_bits<double, std::uint64_t>({0x7FF0000000000001ull, 0xFFF8000000000123ull,
                                               0x8000000000000000ull, 0x0000000000000001ull,
                                               0x7FF7FFFFFFFFFFFFull});
  }
}

// ---- properties on seeded random shapes --------------------------------------------------------

// Each iteration checks every property on one random shape (no SUBCASE: doctest re-enters
// subcases per run, which does not mix with a seeded loop).
TEST_CASE_TEMPLATE("properties on seeded random shapes and layouts", T, float,
                   dmlref::float16, std::int8_t, std::uint64_t) {
  std::mt19937 rng(0x5eed0003u);
  for (int iteration = 0; iteration < 60; ++iteration) {
    CAPTURE(iteration);
    const std::uint32_t rank = 1 + rng() % 8;
    const std::uint32_t axis = rng() % rank;
    const Sizes sizes = random_sizes(rank, axis, rng);
    const Sizes len_sizes = lengths_sizes(sizes, axis);
    const std::uint32_t n = sizes[axis];

    // Matches the model on random layouts (permuted, padded, broadcast inputs).
    check_case_both_lengths<T>(sizes, axis, random_strides(sizes, rng, true),
                               random_strides(len_sizes, rng, true),
                               random_strides(sizes, rng, false), rng);

    std::vector<T> input(count_of(sizes));
    for (std::size_t i = 0; i < input.size(); ++i) input[i] = distinct_value<T>(i);
    std::vector<std::uint32_t> lengths(count_of(len_sizes));

    // Reversing twice with the same lengths is the identity.
    for (auto& v : lengths) v = static_cast<std::uint32_t>(rng() % (n + 3));
    const auto once = run_packed(input, sizes, lengths, axis);
    CHECK(all_same_bits(once, expected_reverse(input, sizes, lengths, axis)));
    CHECK(all_same_bits(run_packed(once, sizes, lengths, axis), input));

    // Lengths 0 and 1 copy.
    for (auto& v : lengths) v = static_cast<std::uint32_t>(rng() % 2);
    CHECK(all_same_bits(run_packed(input, sizes, lengths, axis), input));

    // Lengths above the axis size behave as the axis size, up to each type's maximum.
    const std::vector<std::uint32_t> at_size(lengths.size(), n);
    std::vector<std::uint64_t> above(lengths.size());
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      lengths[i] = i % 3 == 0 ? std::numeric_limits<std::uint32_t>::max()
                              : static_cast<std::uint32_t>(n + 1 + rng() % 100);
      above[i] = i % 2 == 0 ? std::numeric_limits<std::uint64_t>::max() : lengths[i];
    }
    const auto full = run_packed(input, sizes, at_size, axis);
    CHECK(all_same_bits(full, expected_reverse(input, sizes, at_size, axis)));
    CHECK(all_same_bits(run_packed(input, sizes, lengths, axis), full));
    CHECK(all_same_bits(run_packed(input, sizes, above, axis), full));
  }
}

// ---- negative tests: one per rule --------------------------------------------------------------

// Page example 1, with buffers, ready to be broken one field at a time. Not copyable: the
// BufferTensorDescs point into the TensorDescs, the buffers into the arrays.
struct Case {
  TensorDesc input{DataType::Float32, {1, 1, 3, 4}};
  TensorDesc lengths{DataType::UInt32, {1, 1, 3, 1}};
  TensorDesc output{DataType::Float32, {1, 1, 3, 4}};
  BufferTensorDesc in = input.desc();
  BufferTensorDesc len = lengths.desc();
  BufferTensorDesc out = output.desc();
  std::uint32_t axis = 3;
  // Larger than needed so misaligned-address tests still lie inside the memory.
  alignas(16) std::array<float, 16> in_mem{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  alignas(16) std::array<std::uint32_t, 4> len_mem{2, 4, 3, 0};
  alignas(16) std::array<float, 16> out_mem{};
  ConstBuffer in_buf{in_mem.data(), 48};
  ConstBuffer len_buf{len_mem.data(), 12};
  Buffer out_buf{out_mem.data(), 48};

  Case() = default;
  Case(const Case&) = delete;
  Case& operator=(const Case&) = delete;

  ReverseSubsequencesOperatorDesc desc() const { return {&in, &len, &out, axis}; }
  void run(const ReverseSubsequencesOptions& options = {}) {
    reverse_subsequences(desc(), in_buf, len_buf, out_buf, options);
  }
  void set_input(TensorDesc d) {
    input = std::move(d);
    in = input.desc();
  }
  void set_lengths(TensorDesc d) {
    lengths = std::move(d);
    len = lengths.desc();
  }
  void set_output(TensorDesc d) {
    output = std::move(d);
    out = output.desc();
  }
};

constexpr unsigned char kCanaryByte = 0xCD;

bool bytes_are(const void* data, std::size_t n, unsigned char value) {
  const auto* p = static_cast<const unsigned char*>(data);
  return std::all_of(p, p + n, [&](unsigned char b) { return b == value; });
}

// The operator and the validator with buffers both reject `c` with `code` and `text`, and the
// output memory keeps its canary bytes. `desc_only`: the rule needs no buffer, so the desc-only
// validator must reject it too.
void expect_rejected(Case& c, ErrorCode code, const std::string& text, bool desc_only,
                     const ReverseSubsequencesOptions& options = {}) {
  std::memset(c.out_mem.data(), kCanaryByte, sizeof(c.out_mem));
  DMLREF_CHECK_ERROR(c.run(options), code, text);
  DMLREF_CHECK_ERROR(
      validate_reverse_subsequences(c.desc(), c.in_buf, c.len_buf, c.out_buf, options), code, text);
  if (desc_only) {
    DMLREF_CHECK_ERROR(validate_reverse_subsequences(c.desc(), options), code, text);
  } else {
    CHECK_NOTHROW(validate_reverse_subsequences(c.desc(), options));
  }
  CHECK_MESSAGE(bytes_are(c.out_mem.data(), sizeof(c.out_mem), kCanaryByte),
                "a rejected call wrote to the output");
}

TEST_CASE("a valid call runs, and validation never writes") {
  Case c;
  std::memset(c.out_mem.data(), kCanaryByte, sizeof(c.out_mem));
  CHECK(validate_reverse_subsequences(c.desc(), c.in_buf, c.len_buf, c.out_buf) == kExampleSizes);
  CHECK(bytes_are(c.out_mem.data(), sizeof(c.out_mem), kCanaryByte));
  c.run();
  CHECK(std::vector<float>(c.out_mem.begin(), c.out_mem.begin() + 12) == kExample1.output);
  CHECK(bytes_are(c.out_mem.data() + 12, 16, kCanaryByte));  // past the tensor: untouched
}

TEST_CASE("R1: the three tensors have the same DimensionCount") {
  Case c;
  SUBCASE("lengths") {
    c.set_lengths(TensorDesc(DataType::UInt32, {1, 3, 1}));
    expect_rejected(c, ErrorCode::R1,
                    "REVERSE_SUBSEQUENCES: SequenceLengthsTensor.DimensionCount is 3 but "
                    "InputTensor.DimensionCount is 4",
                    true);
  }
  SUBCASE("output") {
    c.set_output(TensorDesc(DataType::Float32, {1, 3, 4}));
    expect_rejected(c, ErrorCode::R1, "OutputTensor.DimensionCount is 3 but InputTensor", true);
  }
}

TEST_CASE("R2: Output has the input's DataType and Sizes") {
  Case c;
  SUBCASE("DataType") {
    c.set_output(TensorDesc(DataType::Float16, {1, 1, 3, 4}));
    expect_rejected(c, ErrorCode::R2,
                    "OutputTensor.DataType is FLOAT16 but InputTensor.DataType is FLOAT32", true);
  }
  SUBCASE("Sizes") {
    c.set_output(TensorDesc(DataType::Float32, {1, 1, 4, 3}));
    expect_rejected(c, ErrorCode::R2, "OutputTensor.Sizes[2] is 4 but InputTensor.Sizes[2] is 3",
                    true);
  }
}

TEST_CASE("R3: lengths match the input except for 1 on Axis") {
  Case c;
  SUBCASE("not 1 on Axis (the spec's {2,3,4,5} example)") {
    c.set_input(TensorDesc(DataType::Float32, {2, 3, 4, 5}));
    c.set_output(TensorDesc(DataType::Float32, {2, 3, 4, 5}));
    c.set_lengths(TensorDesc(DataType::UInt32, {2, 3, 4, 5}));
    c.axis = 1;
    expect_rejected(c, ErrorCode::R3,
                    "REVERSE_SUBSEQUENCES: SequenceLengthsTensor.Sizes[1] is 3 but it must be 1 "
                    "on Axis (1)",
                    true);
  }
  SUBCASE("another dimension differs") {
    c.set_lengths(TensorDesc(DataType::UInt32, {1, 1, 2, 1}));
    expect_rejected(c, ErrorCode::R3,
                    "SequenceLengthsTensor.Sizes[2] is 2 but InputTensor.Sizes[2] is 3; every "
                    "dimension except Axis (3) must match",
                    true);
  }
}

TEST_CASE("R4: SequenceLengthsTensor.DataType is UINT32 or UINT64") {
  Case c;
  for (DataType t : {DataType::Int32, DataType::Int64, DataType::Float32, DataType::UInt16}) {
    CAPTURE(describe(t));
    c.set_lengths(TensorDesc(t, {1, 1, 3, 1}));
    expect_rejected(
        c, ErrorCode::R4,
        "SequenceLengthsTensor.DataType is " + describe(t) + "; it must be UINT32 or UINT64", true);
  }
}

TEST_CASE("R5: Axis is less than InputTensor.DimensionCount") {
  Case c;
  c.axis = 4;
  expect_rejected(c, ErrorCode::R5, "Axis is 4 but InputTensor.DimensionCount is 4", true);
  c.axis = 0xFFFFFFFFu;
  expect_rejected(c, ErrorCode::R5, "Axis is 4294967295", true);
}

TEST_CASE("T1: DataType is one of the eleven") {
  Case c;
  c.in.DataType = DataType::Unknown;
  expect_rejected(c, ErrorCode::T1, "InputTensor.DataType is UNKNOWN", true);
  c.in.DataType = DataType::Float32;
  c.len.DataType = static_cast<DataType>(99);
  expect_rejected(c, ErrorCode::T1,
                  "SequenceLengthsTensor.DataType is 99 (not a DML_TENSOR_DATA_TYPE)", true);
}

TEST_CASE("T2: 1 <= DimensionCount <= 8") {
  Case c;
  const std::uint32_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 3, 4};
  c.out.DimensionCount = 9;
  c.out.Sizes = nine;
  expect_rejected(c, ErrorCode::T2, "OutputTensor.DimensionCount is 9; it must be between 1 and 8",
                  true);
  c.out = c.output.desc();
  c.in.DimensionCount = 0;
  expect_rejected(c, ErrorCode::T2, "InputTensor.DimensionCount is 0", true);
}

TEST_CASE("T3: every size is at least 1") {
  Case c;
  const std::uint32_t sizes[4] = {1, 1, 0, 4};
  c.in.Sizes = sizes;
  expect_rejected(c, ErrorCode::T3, "InputTensor.Sizes[2] is 0", true);
}

TEST_CASE("T4: at most 2^32 - 1 elements") {
  Case c;
  const std::uint32_t sizes[4] = {65536, 65536, 1, 1};
  c.in.Sizes = sizes;
  expect_rejected(c, ErrorCode::T4, "InputTensor.Sizes {65536,65536,1,1} hold 4294967296 elements",
                  true);
}

TEST_CASE("T8: TotalTensorSizeInBytes covers DMLCalcBufferTensorSize") {
  Case c;
  c.in.TotalTensorSizeInBytes = 44;
  expect_rejected(c, ErrorCode::T8,
                  "InputTensor.TotalTensorSizeInBytes is 44 but the tensor needs at least 48",
                  true);
  c.in = c.input.desc();
  c.len.TotalTensorSizeInBytes = 8;
  expect_rejected(c, ErrorCode::T8, "SequenceLengthsTensor.TotalTensorSizeInBytes is 8", true);
}

TEST_CASE("T9: alignment promised and kept") {
  Case c;
  SUBCASE("GuaranteedBaseOffsetAlignment not a power of two") {
    c.in.GuaranteedBaseOffsetAlignment = 12;
    expect_rejected(c, ErrorCode::T9, "InputTensor.GuaranteedBaseOffsetAlignment is 12", true);
  }
  SUBCASE("GuaranteedBaseOffsetAlignment below the element size") {
    c.len.GuaranteedBaseOffsetAlignment = 2;
    expect_rejected(c, ErrorCode::T9, "SequenceLengthsTensor.GuaranteedBaseOffsetAlignment is 2",
                    true);
  }
  SUBCASE("a buffer that breaks the promised alignment") {
    c.in.GuaranteedBaseOffsetAlignment = 16;
    c.in_buf = ConstBuffer(c.in_mem.data() + 1, 48);
    expect_rejected(c, ErrorCode::T9,
                    "the buffer of InputTensor starts at an address that is 4 bytes past a "
                    "multiple of InputTensor.GuaranteedBaseOffsetAlignment (16)",
                    false);
  }
  SUBCASE("a buffer that is not element-aligned") {
    c.out_buf = Buffer{reinterpret_cast<unsigned char*>(c.out_mem.data()) + 2, 48};
    expect_rejected(c, ErrorCode::T9, "the buffer of OutputTensor starts at an address that is 2",
                    false);
  }
}

TEST_CASE("T10: each buffer holds TotalTensorSizeInBytes") {
  Case c;
  SUBCASE("input") {
    c.in_buf = ConstBuffer(c.in_mem.data(), 40);
    expect_rejected(c, ErrorCode::T10,
                    "the buffer of InputTensor holds 40 bytes but "
                    "InputTensor.TotalTensorSizeInBytes is 48",
                    false);
  }
  SUBCASE("lengths") {
    c.len_buf = ConstBuffer(c.len_mem.data(), 8);
    expect_rejected(c, ErrorCode::T10, "the buffer of SequenceLengthsTensor holds 8 bytes", false);
  }
  SUBCASE("output") {
    c.out_buf = Buffer{c.out_mem.data(), 44};
    expect_rejected(c, ErrorCode::T10, "the buffer of OutputTensor holds 44 bytes", false);
  }
}

TEST_CASE("T11: Flags is NONE or OWNED_BY_DML, the latter on inputs only") {
  Case c;
  c.len.Flags = static_cast<TensorFlags>(2);
  expect_rejected(c, ErrorCode::T11, "SequenceLengthsTensor.Flags is 2", true);
  c.len.Flags = TensorFlags::OwnedByDml;  // allowed on an input
  c.out.Flags = TensorFlags::OwnedByDml;
  expect_rejected(c, ErrorCode::T11, "OutputTensor.Flags is DML_TENSOR_FLAG_OWNED_BY_DML (1)",
                  true);
  c.out.Flags = TensorFlags::None;
  CHECK_NOTHROW(c.run());
}

TEST_CASE("T12: the output addresses each element once") {
  Case c;
  SUBCASE("zero stride") {
    c.set_output(TensorDesc(DataType::Float32, {1, 1, 3, 4}, {12, 12, 0, 1}));
    expect_rejected(c, ErrorCode::T12, "OutputTensor.Strides[2] is 0 with Sizes[2] 3", true);
  }
  SUBCASE("overlapping strides") {
    c.set_output(TensorDesc(DataType::Float32, {1, 1, 3, 4}, {12, 12, 2, 1}));
    expect_rejected(c, ErrorCode::T12,
                    "OutputTensor.Strides {12,12,2,1} with Sizes {1,1,3,4} address some element "
                    "twice",
                    true);
  }
}

TEST_CASE("T13: the output overlaps neither the input nor the lengths") {
  Case c;
  alignas(16) std::array<std::uint32_t, 32> block{};
  SUBCASE("output overlaps the input") {
    c.in_buf = ConstBuffer(block.data(), 48);
    c.out_buf = Buffer{block.data() + 8, 48};
    expect_rejected(c, ErrorCode::T13,
                    "OutputTensor (bytes [32, 80)) overlaps InputTensor (bytes [0, 48))", false);
  }
  SUBCASE("output overlaps the lengths") {
    c.out_buf = Buffer{block.data(), 48};
    c.len_buf = ConstBuffer(block.data() + 11, 12);
    expect_rejected(c, ErrorCode::T13,
                    "OutputTensor (bytes [0, 48)) overlaps SequenceLengthsTensor", false);
  }
  SUBCASE("adjacent ranges do not overlap") {
    c.out_buf = Buffer{block.data(), 48};
    c.len_buf = ConstBuffer(block.data() + 12, 12);
    block[12] = 2;
    block[13] = 4;
    block[14] = 3;
    CHECK_NOTHROW(c.run());
  }
}

TEST_CASE("null descriptions and buffers") {
  Case c;
  ReverseSubsequencesOperatorDesc d = c.desc();
  d.SequenceLengthsTensor = nullptr;
  DMLREF_CHECK_ERROR(validate_reverse_subsequences(d), ErrorCode::NullPointer,
                     "SequenceLengthsTensor is null");
  c.in.Sizes = nullptr;
  DMLREF_CHECK_ERROR(c.run(), ErrorCode::NullPointer, "InputTensor.Sizes is null");
  c.in = c.input.desc();
  c.out_buf = Buffer{nullptr, 48};
  DMLREF_CHECK_ERROR(c.run(), ErrorCode::NullPointer, "the buffer of OutputTensor is null");
}

TEST_CASE("a rejected call leaves every output byte untouched (canary)") {
  // expect_rejected checks the canary for every rule above; this covers the typed layer and a
  // larger output whose rejection comes late in validation (feature level, T13).
  Case c;
  SUBCASE("feature level") {
    ReverseSubsequencesOptions at_2_1;
    at_2_1.feature_level = FeatureLevel::k2_1;
    c.set_input(TensorDesc(DataType::Float32, {1, 1, 1, 3, 4}));
    c.set_lengths(TensorDesc(DataType::UInt32, {1, 1, 1, 3, 1}));
    c.set_output(TensorDesc(DataType::Float32, {1, 1, 1, 3, 4}));
    c.axis = 4;
    expect_rejected(c, ErrorCode::FeatureLevel,
                    "InputTensor.DimensionCount 5 needs "
                    "DML_FEATURE_LEVEL_3_0",
                    true, at_2_1);
  }
  SUBCASE("typed layer: R3, R5, T12, T13 and the feature level") {
    std::vector<float> input(24, 1.0f);
    std::vector<std::uint32_t> lengths(6, 2);
    std::vector<float> output(24);
    std::memset(output.data(), kCanaryByte, output.size() * sizeof(float));
    const TensorView<const float> in(input.data(), Layout::packed({2, 3, 4}));
    const TensorView<float> out(output.data(), Layout::packed({2, 3, 4}));
    ReverseSubsequencesOptions at_3_0;
    at_3_0.feature_level = FeatureLevel::k3_0;
    DMLREF_CHECK_ERROR(
        reverse_subsequences(
            in, TensorView<const std::uint32_t>(lengths.data(), Layout::packed({2, 3, 2})), out, 2),
        ErrorCode::R3, "SequenceLengthsTensor.Sizes[2] is 2");
    const TensorView<const std::uint32_t> len(lengths.data(), Layout::packed({2, 3, 1}));
    DMLREF_CHECK_ERROR(reverse_subsequences(in, len, out, 3), ErrorCode::R5, "Axis is 3");
    DMLREF_CHECK_ERROR(
        reverse_subsequences(
            in, len, TensorView<float>(output.data(), Layout::strided({2, 3, 4}, {0, 4, 1})), 2),
        ErrorCode::T12, "OutputTensor.Strides[0] is 0");
    DMLREF_CHECK_ERROR(
        reverse_subsequences(TensorView<const float>(output.data(), Layout::packed({2, 3, 4})), len,
                             TensorView<float>(output.data() + 1, Layout::packed({2, 3, 4})), 2),
        ErrorCode::T13, "OutputTensor");
    DMLREF_CHECK_ERROR(reverse_subsequences(in, len, out, 2, at_3_0), ErrorCode::FeatureLevel,
                       "InputTensor.DimensionCount 3 needs DML_FEATURE_LEVEL_4_0");
    CHECK(bytes_are(output.data(), output.size() * sizeof(float), kCanaryByte));
  }
}

TEST_CASE("typed layer: the view rules and R1-R5") {
  std::vector<std::uint32_t> input(24);
  std::vector<std::uint32_t> lengths(6, 1);
  std::vector<std::uint32_t> output(24);
  const TensorView<const std::uint32_t> in(input.data(), Layout::packed({2, 3, 4}));
  const TensorView<const std::uint32_t> len(lengths.data(), Layout::packed({2, 3, 1}));
  const TensorView<std::uint32_t> out(output.data(), Layout::packed({2, 3, 4}));
  CHECK(validate_reverse_subsequences(in, len, out, 2) == Sizes{2, 3, 4});

  DMLREF_CHECK_ERROR(
      validate_reverse_subsequences(
          in, TensorView<const std::uint32_t>(lengths.data(), Layout::packed({6, 1})), out, 1),
      ErrorCode::R1,
      "SequenceLengthsTensor.DimensionCount is 2 but InputTensor.DimensionCount is 3");
  DMLREF_CHECK_ERROR(
      validate_reverse_subsequences(
          in, len, TensorView<std::uint32_t>(output.data(), Layout::packed({2, 4, 3})), 2),
      ErrorCode::R2, "OutputTensor.Sizes[1] is 4 but InputTensor.Sizes[1] is 3");
  DMLREF_CHECK_ERROR(validate_reverse_subsequences(in, len, out, 1), ErrorCode::R3,
                     "SequenceLengthsTensor.Sizes[1] is 3 but it must be 1 on Axis (1)");
  DMLREF_CHECK_ERROR(validate_reverse_subsequences(in, len, out, 3), ErrorCode::R5,
                     "Axis is 3 but InputTensor.DimensionCount is 3");
  DMLREF_CHECK_ERROR(validate_reverse_subsequences(
                         TensorView<const std::uint32_t>(input.data(), Layout{}), len, out, 0),
                     ErrorCode::T2, "InputTensor.DimensionCount is 0");
  DMLREF_CHECK_ERROR(
      validate_reverse_subsequences(
          in, len, TensorView<std::uint32_t>(output.data(), Layout::packed({2, 0, 4})), 2),
      ErrorCode::T3, "OutputTensor.Sizes[1] is 0");
  DMLREF_CHECK_ERROR(
      validate_reverse_subsequences(
          TensorView<const std::uint32_t>(input.data(), Layout::packed({65536, 65536})), len, out,
          0),
      ErrorCode::T4, "InputTensor.Sizes {65536,65536} hold 4294967296");
  DMLREF_CHECK_ERROR(
      validate_reverse_subsequences(
          in,
          TensorView<const std::uint32_t>(
              lengths.data(), Layout::strided({2, 3, 1}, {std::int64_t{1} << 61, 1, 1})),
          out, 2),
      ErrorCode::T8, "SequenceLengthsTensor.Strides {2305843009213693952,1,1}");
  DMLREF_CHECK_ERROR(
      validate_reverse_subsequences(
          in, len, TensorView<std::uint32_t>(output.data(), Layout::strided({2, 3, 4}, {1, 1, 1})),
          2),
      ErrorCode::T12, "OutputTensor.Strides {1,1,1} with Sizes {2,3,4} address some element");
  DMLREF_CHECK_ERROR(
      validate_reverse_subsequences(
          in, len, TensorView<std::uint32_t>(input.data() + 4, Layout::packed({2, 3, 4})), 2),
      ErrorCode::T13, "OutputTensor (bytes [16, 112)) overlaps InputTensor (bytes [0, 96))");
  DMLREF_CHECK_ERROR(
      validate_reverse_subsequences(
          in, len, TensorView<std::uint32_t>(lengths.data(), Layout::packed({2, 3, 4})), 2),
      ErrorCode::T13, "overlaps SequenceLengthsTensor");
  DMLREF_CHECK_ERROR(
      validate_reverse_subsequences(in, len, TensorView<std::uint32_t>(nullptr, out.layout()), 2),
      ErrorCode::NullPointer, "OutputTensor has a null data pointer");
}

// ---- feature levels ----------------------------------------------------------------------------

// Three packed descriptions for one shape, for the table tests.
struct Descs {
  TensorDesc input, lengths, output;
  BufferTensorDesc in, len, out;
  std::uint32_t axis;
  Descs(DataType type, const Sizes& sizes, DataType lengths_type, std::uint32_t axis_in)
      : input(type, sizes),
        lengths(lengths_type, lengths_sizes(sizes, axis_in)),
        output(type, sizes),
        in(input.desc()),
        len(lengths.desc()),
        out(output.desc()),
        axis(axis_in) {}
  Descs(const Descs&) = delete;
  Descs& operator=(const Descs&) = delete;
  ReverseSubsequencesOperatorDesc desc() const { return {&in, &len, &out, axis}; }
};

ReverseSubsequencesOptions at(FeatureLevel level) {
  ReverseSubsequencesOptions o;
  o.feature_level = level;
  return o;
}

TEST_CASE("feature levels: the newest level admits everything") {
  for (DataType t : kAllDataTypes) {
    for (DataType l : {DataType::UInt32, DataType::UInt64}) {
      for (std::uint32_t rank : {1u, 3u, 8u}) {
        CAPTURE(describe(t));
        CAPTURE(rank);
        const Descs d(t, Sizes(rank, 2), l, rank - 1);
        CHECK_NOTHROW(validate_reverse_subsequences(d.desc()));
        CHECK_NOTHROW(validate_reverse_subsequences(d.desc(), at(FeatureLevel::k5_0)));
      }
    }
  }
}

TEST_CASE("feature levels: older targets reject what they lack") {
  const Sizes four = {1, 2, 3, 4};
  SUBCASE("FLOAT64 needs 5_0") {
    const Descs d(DataType::Float64, four, DataType::UInt32, 3);
    DMLREF_CHECK_ERROR(validate_reverse_subsequences(d.desc(), at(FeatureLevel::k4_0)),
                       ErrorCode::FeatureLevel,
                       "REVERSE_SUBSEQUENCES: InputTensor.DataType FLOAT64 needs "
                       "DML_FEATURE_LEVEL_5_0; the target is DML_FEATURE_LEVEL_4_0");
    DMLREF_CHECK_ERROR(validate_reverse_subsequences(d.desc(), at(FeatureLevel::k4_1)),
                       ErrorCode::FeatureLevel, "needs DML_FEATURE_LEVEL_5_0");
  }
  SUBCASE("INT64 and UINT64 data need 5_0") {
    for (DataType t : {DataType::Int64, DataType::UInt64}) {
      const Descs d(t, four, DataType::UInt32, 3);
      DMLREF_CHECK_ERROR(validate_reverse_subsequences(d.desc(), at(FeatureLevel::k4_0)),
                         ErrorCode::FeatureLevel,
                         "InputTensor.DataType " + describe(t) + " needs DML_FEATURE_LEVEL_5_0");
    }
  }
  SUBCASE("UINT64 lengths need 5_0") {
    const Descs d(DataType::Float32, four, DataType::UInt64, 3);
    DMLREF_CHECK_ERROR(validate_reverse_subsequences(d.desc(), at(FeatureLevel::k4_0)),
                       ErrorCode::FeatureLevel,
                       "SequenceLengthsTensor.DataType UINT64 needs DML_FEATURE_LEVEL_5_0; the "
                       "target is DML_FEATURE_LEVEL_4_0");
    CHECK_NOTHROW(validate_reverse_subsequences(d.desc(), at(FeatureLevel::k5_0)));
  }
  SUBCASE("3-D needs 4_0; 4-D and 5-D are admitted from 3_0") {
    const Descs three(DataType::Float32, {2, 3, 4}, DataType::UInt32, 1);
    DMLREF_CHECK_ERROR(validate_reverse_subsequences(three.desc(), at(FeatureLevel::k3_0)),
                       ErrorCode::FeatureLevel,
                       "InputTensor.DimensionCount 3 needs DML_FEATURE_LEVEL_4_0; the target is "
                       "DML_FEATURE_LEVEL_3_0 (which allows 4 to 5)");
    DMLREF_CHECK_ERROR(validate_reverse_subsequences(three.desc(), at(FeatureLevel::k3_1)),
                       ErrorCode::FeatureLevel, "needs DML_FEATURE_LEVEL_4_0");
    CHECK_NOTHROW(validate_reverse_subsequences(three.desc(), at(FeatureLevel::k4_0)));
    const Descs five(DataType::Float16, {1, 2, 1, 3, 4}, DataType::UInt32, 3);
    CHECK_NOTHROW(validate_reverse_subsequences(five.desc(), at(FeatureLevel::k3_0)));
  }
  SUBCASE("6-D at 3_0 is rejected, naming 4_0") {
    const Descs six(DataType::Int8, {1, 1, 2, 1, 3, 4}, DataType::UInt32, 5);
    DMLREF_CHECK_ERROR(validate_reverse_subsequences(six.desc(), at(FeatureLevel::k3_0)),
                       ErrorCode::FeatureLevel,
                       "InputTensor.DimensionCount 6 needs DML_FEATURE_LEVEL_4_0; the target is "
                       "DML_FEATURE_LEVEL_3_0");
    CHECK_NOTHROW(validate_reverse_subsequences(six.desc(), at(FeatureLevel::k4_0)));
  }
  SUBCASE("2_1 admits exactly 4-D with the eight older types") {
    const Descs four_d(DataType::UInt16, four, DataType::UInt32, 0);
    CHECK_NOTHROW(validate_reverse_subsequences(four_d.desc(), at(FeatureLevel::k2_1)));
    const Descs five(DataType::UInt16, {1, 1, 2, 3, 4}, DataType::UInt32, 0);
    DMLREF_CHECK_ERROR(validate_reverse_subsequences(five.desc(), at(FeatureLevel::k2_1)),
                       ErrorCode::FeatureLevel,
                       "InputTensor.DimensionCount 5 needs DML_FEATURE_LEVEL_3_0; the target is "
                       "DML_FEATURE_LEVEL_2_1 (which allows 4 to 4)");
  }
  SUBCASE("before 2_1 the operator does not exist") {
    const Descs d(DataType::Float32, four, DataType::UInt32, 3);
    for (FeatureLevel level : {FeatureLevel::k2_0, FeatureLevel::k1_0}) {
      DMLREF_CHECK_ERROR(validate_reverse_subsequences(d.desc(), at(level)),
                         ErrorCode::FeatureLevel,
                         "REVERSE_SUBSEQUENCES: the operator needs DML_FEATURE_LEVEL_2_1; the "
                         "target is " +
                             feature_level_name(level));
    }
    Case c;  // through the operator, with buffers, leaving the output untouched
    expect_rejected(c, ErrorCode::FeatureLevel, "the operator needs DML_FEATURE_LEVEL_2_1", true,
                    at(FeatureLevel::k1_0));
  }
  SUBCASE("through the operator and the typed layer") {
    Case c;
    c.set_lengths(TensorDesc(DataType::UInt64, {1, 1, 3, 1}));
    expect_rejected(c, ErrorCode::FeatureLevel,
                    "SequenceLengthsTensor.DataType UINT64 needs "
                    "DML_FEATURE_LEVEL_5_0",
                    true, at(FeatureLevel::k4_0));
    std::vector<double> input(12), output(12);
    const std::vector<std::uint32_t> lengths = {1, 2, 3};
    DMLREF_CHECK_ERROR(
        reverse_subsequences(
            TensorView<const double>(input.data(), Layout::packed(kExampleSizes)),
            TensorView<const std::uint32_t>(lengths.data(), Layout::packed({1, 1, 3, 1})),
            TensorView<double>(output.data(), Layout::packed(kExampleSizes)), 3,
            at(FeatureLevel::k4_0)),
        ErrorCode::FeatureLevel,
        "InputTensor.DataType FLOAT64 needs DML_FEATURE_LEVEL_5_0; the target is "
        "DML_FEATURE_LEVEL_4_0");
  }
  SUBCASE("an unknown target is an invalid option") {
    const Descs d(DataType::Float32, four, DataType::UInt32, 3);
    DMLREF_CHECK_ERROR(
        validate_reverse_subsequences(d.desc(), at(static_cast<FeatureLevel>(0x4200))),
        ErrorCode::InvalidOption, "0x4200 (not a DML_FEATURE_LEVEL)");
  }
}

}  // namespace

// ---- `reversed`: tensors the descriptions stand in for, turned around after every check ---------

TEST_CASE("REVERSE_SUBSEQUENCES: the runtime entry point over a reversed input") {
  const std::vector<float> in = {1, 2, 3, 4, 5};  // read backwards: [5, 4, 3, 2, 1]
  const std::vector<std::uint32_t> lengths = {3};
  std::vector<float> out(5, -1.0f);
  const TensorDesc din(DataType::Float32, {5}), dl(DataType::UInt32, {1});
  const BufferTensorDesc i = din.desc(), l = dl.desc();
  const ReverseSubsequencesOperatorDesc desc{&i, &l, &i, 0};
  reverse_subsequences(desc, ConstBuffer(in.data(), 20), ConstBuffer(lengths.data(), 4),
                       Buffer{out.data(), 20}, {}, std::vector<std::uint8_t>{1, 0, 0});
  CHECK(out == std::vector<float>{3, 4, 5, 2, 1});
  DMLREF_CHECK_ERROR(reverse_subsequences(desc, ConstBuffer(in.data(), 20),
                                          ConstBuffer(lengths.data(), 4), Buffer{out.data(), 20},
                                          {}, std::vector<std::uint8_t>{1, 0}),
                     ErrorCode::InvalidOption,
                     "REVERSE_SUBSEQUENCES: 2 reversed masks were given for 3 tensors");
}

}  // namespace test_reverse_subsequences
