// Tests for SCATTER (docs/scatter.md, SC1-SC8): the spec's examples, every data type
// with every index type, ranks 1-8 and every axis, strided and broadcast operands, the index
// policy, duplicates, the result check, validation messages, and the feature-level table.
// Expected values come from the packed arithmetic below, never from dmlref's loops.
#include "test_support.hpp"

#include <dmlref/ops/scatter.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace test_scatter {  // this file's own names (tests/CMakeLists.txt: unity groups)

namespace {

using namespace dmlref;
using dmlref::test::bits_of;
using dmlref::test::distinct_buffer;
using dmlref::test::distinct_value;
using dmlref::test::same_bits;
using Sizes = std::vector<std::uint32_t>;
using Strides = std::vector<std::int64_t>;

// --- independent arithmetic: packed row-major position <-> coordinate ------------------------

std::uint64_t count_of(const Sizes& sizes) {
  std::uint64_t n = 1;
  for (std::uint32_t s : sizes) n *= s;
  return n;
}

Sizes unravel(std::uint64_t position, const Sizes& sizes) {
  Sizes c(sizes.size());
  for (std::size_t d = sizes.size(); d-- > 0;) {
    c[d] = static_cast<std::uint32_t>(position % sizes[d]);
    position /= sizes[d];
  }
  return c;
}

std::uint64_t ravel(const Sizes& c, const Sizes& sizes) {
  std::uint64_t p = 0;
  for (std::size_t d = 0; d < sizes.size(); ++d) p = p * sizes[d] + c[d];
  return p;
}

std::int64_t strided_offset(const Sizes& c, const Strides& strides) {
  std::int64_t off = 0;
  for (std::size_t d = 0; d < c.size(); ++d) off += static_cast<std::int64_t>(c[d]) * strides[d];
  return off;
}

Coord coord_of(const Sizes& c) {
  Coord out{};
  std::copy(c.begin(), c.end(), out.begin());
  return out;
}

// The packed (logical) contents of a strided tensor.
template <class T>
std::vector<T> materialize(const T* base, const Sizes& sizes, const Strides& strides) {
  std::vector<T> out(count_of(sizes));
  for (std::uint64_t p = 0; p < out.size(); ++p)
    out[p] = base[strided_offset(unravel(p, sizes), strides)];
  return out;
}

// The spec's negative-index rule, for in-range values.
template <class I>
std::uint32_t normalized(I v, std::uint32_t n) {
  if constexpr (std::is_signed_v<I>) {
    if (v < 0) return static_cast<std::uint32_t>(static_cast<std::int64_t>(v) + n);
  }
  return static_cast<std::uint32_t>(v);
}

// The spec's pseudo-code over packed logical arrays.
template <class T, class I>
std::vector<T> expected_scatter(const std::vector<T>& input, const Sizes& input_sizes,
                                const std::vector<I>& indices, const Sizes& indices_sizes,
                                const std::vector<T>& updates, std::uint32_t axis) {
  std::vector<T> out = input;
  for (std::uint64_t j = 0; j < indices.size(); ++j) {
    Sizes c = unravel(j, indices_sizes);
    c[axis] = normalized(indices[j], input_sizes[axis]);
    out[ravel(c, input_sizes)] = updates[j];
  }
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

// --- views and runtime descriptions ------------------------------------------------------------

template <class T>
TensorView<const T> cview(const std::vector<T>& v, const Sizes& sizes) {
  return {v.data(), Layout::packed(std::span<const std::uint32_t>(sizes))};
}
template <class T>
TensorView<T> mview(std::vector<T>& v, const Sizes& sizes) {
  return {v.data(), Layout::packed(std::span<const std::uint32_t>(sizes))};
}
Layout strided_layout(const Sizes& sizes, const Strides& strides) {
  return Layout::strided(std::span<const std::uint32_t>(sizes),
                         std::span<const std::int64_t>(strides));
}

// Four owned descriptions and DirectML's desc pointing at them; pinned so the pointers stay valid.
struct RuntimeScatter {
  TensorDesc input, indices, updates, output;
  BufferTensorDesc input_desc, indices_desc, updates_desc, output_desc;

  RuntimeScatter(TensorDesc in, TensorDesc idx, TensorDesc upd, TensorDesc out)
      : input(std::move(in)),
        indices(std::move(idx)),
        updates(std::move(upd)),
        output(std::move(out)),
        input_desc(input.desc()),
        indices_desc(indices.desc()),
        updates_desc(updates.desc()),
        output_desc(output.desc()) {}
  RuntimeScatter(const RuntimeScatter&) = delete;
  RuntimeScatter& operator=(const RuntimeScatter&) = delete;

  ScatterOperatorDesc desc(std::uint32_t axis) const {
    return {&input_desc, &indices_desc, &updates_desc, &output_desc, axis};
  }
};

// Packed descriptions of one data type and one index type.
RuntimeScatter packed_descs(DataType data, DataType index, const Sizes& input_sizes,
                            const Sizes& indices_sizes, const Sizes& output_sizes) {
  return {TensorDesc(data, input_sizes), TensorDesc(index, indices_sizes),
          TensorDesc(data, indices_sizes), TensorDesc(data, output_sizes)};
}

using dmlref::test::cbuf;
using dmlref::test::mbuf;

// v grown to the description's TotalTensorSizeInBytes (T8 rounds up to 4 bytes; T10 wants it all).
template <class T>
std::vector<T> padded(std::vector<T> v, const TensorDesc& desc) {
  const std::size_t n = (desc.total_tensor_size_in_bytes + sizeof(T) - 1) / sizeof(T);
  if (v.size() < n) v.resize(n);
  return v;
}

// The runtime entry point on packed buffers; returns the packed output.
template <class T, class I>
std::vector<T> run_runtime(const std::vector<T>& input, const Sizes& input_sizes,
                           const std::vector<I>& indices, const Sizes& indices_sizes,
                           const std::vector<T>& updates, std::uint32_t axis,
                           const ScatterOptions& options = {}) {
  const RuntimeScatter r =
      packed_descs(data_type_of<T>, data_type_of<I>, input_sizes, indices_sizes, input_sizes);
  const auto in = padded(input, r.input);
  const auto idx = padded(indices, r.indices);
  const auto upd = padded(updates, r.updates);
  auto out = padded(std::vector<T>(input.size()), r.output);
  scatter(r.desc(axis), cbuf(in), cbuf(idx), cbuf(upd), mbuf(out), options);
  out.resize(input.size());
  return out;
}

// The typed entry point on packed views; returns the output.
template <class T, class I>
std::vector<T> run_typed(const std::vector<T>& input, const Sizes& input_sizes,
                         const std::vector<I>& indices, const Sizes& indices_sizes,
                         const std::vector<T>& updates, std::uint32_t axis,
                         const ScatterOptions& options = {}) {
  std::vector<T> out(input.size());
  scatter(cview(input, input_sizes), cview(indices, indices_sizes), cview(updates, indices_sizes),
          mview(out, input_sizes), axis, options);
  return out;
}

std::vector<float> floats(std::initializer_list<float> values) { return values; }

}  // namespace

// --- the spec's examples -----------------------------------------------------------------------

TEST_CASE("SCATTER spec example 1: 1-D, index 3 twice, the later update wins") {
  const std::vector<float> input{0, 1, 2, 3, 4};
  const std::vector<std::uint32_t> indices{3, 1, 3, 0};
  const std::vector<float> updates{5, 6, 7, 8};
  const std::vector<float> expected{8, 6, 2, 7, 4};
  CHECK(run_typed(input, {5}, indices, {4}, updates, 0) == expected);
  CHECK(run_runtime(input, {5}, indices, {4}, updates, 0) == expected);

  // The reference entry points (what faster paths are diffed against) agree.
  std::vector<float> typed(5), runtime(8);
  reference::scatter(cview(input, {5}), cview(indices, {4}), cview(updates, {4}), mview(typed, {5}),
                     0);
  const RuntimeScatter r = packed_descs(DataType::Float32, DataType::UInt32, {5}, {4}, {5});
  reference::scatter(r.desc(0), cbuf(input), cbuf(indices), cbuf(updates), mbuf(runtime));
  runtime.resize(5);
  CHECK(typed == expected);
  CHECK(runtime == expected);
}

TEST_CASE("SCATTER spec example 2: 2-D, Axis 0, with the 3x3 input the data shows") {
  const std::vector<float> input(9, 0.0f);
  const std::vector<std::uint32_t> indices{1, 0, 2, 0, 2, 1};
  const std::vector<float> updates{10, 11, 12, 20, 21, 22};
  const std::vector<float> expected{20, 11, 0, 10, 0, 22, 0, 21, 12};
  CHECK(run_typed(input, {3, 3}, indices, {2, 3}, updates, 0) == expected);
  CHECK(run_runtime(input, {3, 3}, indices, {2, 3}, updates, 0) == expected);

  const RuntimeScatter r =
      packed_descs(DataType::Float32, DataType::UInt32, {3, 3}, {2, 3}, {3, 3});
  CHECK(validate_scatter(r.desc(0)) == Sizes{3, 3});
}

TEST_CASE("SCATTER spec example 2 as printed (InputTensor {2,3}) is rejected: SC5, then SC8") {
  // The page prints three rows of data under Sizes {2,3}; the buffer holds all nine.
  const std::vector<float> input(9, 0.0f);
  const std::vector<std::uint32_t> indices{1, 0, 2, 0, 2, 1};
  const std::vector<float> updates{10, 11, 12, 20, 21, 22};
  std::vector<float> output(9, -1.0f);
  const std::vector<float> untouched = output;

  SUBCASE("runtime, OutputTensor {3,3}: SC5") {
    const RuntimeScatter r =
        packed_descs(DataType::Float32, DataType::UInt32, {2, 3}, {2, 3}, {3, 3});
    DMLREF_CHECK_ERROR(validate_scatter(r.desc(0)), ErrorCode::SC5,
                       "OutputTensor.Sizes[0] is 3 but InputTensor.Sizes[0] is 2");
    DMLREF_CHECK_ERROR(scatter(r.desc(0), cbuf(input), cbuf(indices), cbuf(updates), mbuf(output)),
                       ErrorCode::SC5,
                       "OutputTensor.Sizes {3,3} must equal InputTensor.Sizes {2,3}");
  }
  SUBCASE("runtime, OutputTensor {2,3} too: SC8, index 2 is out of range for size 2") {
    const RuntimeScatter r =
        packed_descs(DataType::Float32, DataType::UInt32, {2, 3}, {2, 3}, {2, 3});
    CHECK(validate_scatter(r.desc(0)) == Sizes{2, 3});  // the descriptions alone are fine
    DMLREF_CHECK_ERROR(scatter(r.desc(0), cbuf(input), cbuf(indices), cbuf(updates), mbuf(output)),
                       ErrorCode::SC8,
                       "SCATTER: IndicesTensor[0,2] is 2 but InputTensor.Sizes[0] is 2; indices "
                       "must lie in [0, 1]");
  }
  SUBCASE("typed") {
    DMLREF_CHECK_ERROR(scatter(cview(input, {2, 3}), cview(indices, {2, 3}), cview(updates, {2, 3}),
                               mview(output, {3, 3}), 0),
                       ErrorCode::SC5, "OutputTensor.Sizes[0] is 3 but InputTensor.Sizes[0] is 2");
    DMLREF_CHECK_ERROR(scatter(cview(input, {2, 3}), cview(indices, {2, 3}), cview(updates, {2, 3}),
                               mview(output, {2, 3}), 0),
                       ErrorCode::SC8, "IndicesTensor[0,2] is 2 but InputTensor.Sizes[0] is 2");
  }
  CHECK(all_same_bits(output, untouched));
}

// --- every data type with every index type ----------------------------------------------------

namespace {

// Whether the typed and the runtime entry points matched expected_scatter, bit for bit.
struct PairResult {
  bool typed_matches_expected = false;
  bool runtime_matches_expected = false;
  // The runtime result check and collision list, which dispatch on the element's width, not its
  // type, report T's values with T's data type on a good output, a wrong one and a collision.
  bool runtime_check_reports_bits = false;
};

// The low sizeof(U) bytes of `bits`, stored at `at` as a U.
template <class U>
void store_as(std::byte* at, std::uint64_t bits) {
  const auto v = static_cast<U>(bits);
  std::memcpy(at, &v, sizeof(U));
}

// The bit patterns `bits` as elements of `type` (two's complement for signed indices), in a
// buffer of the description's TotalTensorSizeInBytes.
std::vector<std::byte> packed_bytes(DataType type, const std::vector<std::uint64_t>& bits,
                                    const Sizes& sizes) {
  const std::size_t width = element_size(type);
  std::vector<std::byte> out(TensorDesc(type, sizes).total_tensor_size_in_bytes);
  for (std::size_t i = 0; i < bits.size(); ++i) {
    std::byte* at = out.data() + i * width;
    switch (width) {
      case 1: store_as<std::uint8_t>(at, bits[i]); break;
      case 2: store_as<std::uint16_t>(at, bits[i]); break;
      case 4: store_as<std::uint32_t>(at, bits[i]); break;
      default: store_as<std::uint64_t>(at, bits[i]); break;
    }
  }
  return out;
}

// The runtime result check and collision list dispatch on the element's width, not its type:
// they must still report each value's bits with the operands' data type, on a good output, a
// wrong one, and a collision. Built from bit patterns, so it is compiled once, not per pair.
bool runtime_check_reports_bits(DataType data, DataType index, std::uint32_t axis,
                                const Sizes& input_sizes, const Sizes& indices_sizes,
                                const std::vector<std::uint64_t>& input,
                                const std::vector<std::uint64_t>& indices,
                                const std::vector<std::uint64_t>& updates,
                                const std::vector<std::uint64_t>& expected) {
  const RuntimeScatter d = packed_descs(data, index, input_sizes, indices_sizes, input_sizes);
  std::vector<std::uint64_t> wrong = expected;
  for (std::uint64_t& w : wrong) w ^= 1;  // each element differs from the one expected
  const auto in = packed_bytes(data, input, input_sizes);
  const auto idx = packed_bytes(index, indices, indices_sizes);
  const auto upd = packed_bytes(data, updates, indices_sizes);
  const auto good_out = packed_bytes(data, expected, input_sizes);
  const auto wrong_out = packed_bytes(data, wrong, input_sizes);
  const ConstBuffer in_b = cbuf(in), idx_b = cbuf(idx), upd_b = cbuf(upd);

  bool same = check_scatter_result(d.desc(axis), in_b, idx_b, upd_b, cbuf(good_out)).ok();
  const ScatterCheckResult<ScatterElementBits> bad = check_scatter_result(
      d.desc(axis), in_b, idx_b, upd_b, cbuf(wrong_out), {}, wrong.size());  // report them all
  same = same && bad.mismatch_count == wrong.size() && bad.mismatches.size() == wrong.size();
  for (std::size_t p = 0; same && p < wrong.size(); ++p) {
    const ScatterMismatch<ScatterElementBits>& m = bad.mismatches[p];
    same = m.output_coordinate == coord_of(unravel(p, input_sizes)) &&
           m.actual == ScatterElementBits{data, wrong[p]} &&
           m.expected == ScatterElementBits{data, expected[p]} && m.candidates.empty();
  }

  // A collision: three updates to element 1 of a {4} input, the middle one by a negative index
  // where the index type has them; the actual output is the input, so it holds none of them.
  const bool is_signed = index == DataType::Int64 || index == DataType::Int32;
  const std::vector<std::uint64_t> small_input(input.begin(), input.begin() + 4);
  const std::vector<std::uint64_t> small_updates(updates.begin(), updates.begin() + 3);
  const std::vector<std::uint64_t> small_indices{1, is_signed ? std::uint64_t(-3) : 1, 1};
  const RuntimeScatter c = packed_descs(data, index, {4}, {3}, {4});
  const auto small_in = packed_bytes(data, small_input, {4});
  const auto small_idx = packed_bytes(index, small_indices, {3});
  const auto small_upd = packed_bytes(data, small_updates, {3});
  const auto collisions =
      find_scatter_collisions(c.desc(0), cbuf(small_in), cbuf(small_idx), cbuf(small_upd));
  const ScatterCheckResult<ScatterElementBits> missed = check_scatter_result(
      c.desc(0), cbuf(small_in), cbuf(small_idx), cbuf(small_upd), cbuf(small_in));
  same = same && collisions.size() == 1 && collisions[0].output_coordinate == coord_of({1}) &&
         collisions[0].candidates.size() == 3 && missed.mismatch_count == 1 &&
         missed.mismatches.size() == 1 && missed.mismatches[0].output_coordinate == coord_of({1}) &&
         missed.mismatches[0].actual == ScatterElementBits{data, small_input[1]} &&
         missed.mismatches[0].candidates.size() == 3 && missed.mismatches[0].candidate_count == 3;
  for (std::uint32_t j = 0; same && j < 3; ++j) {
    const ScatterElementBits update{data, small_updates[j]};
    same = collisions[0].candidates[j].indices_coordinate == coord_of({j}) &&
           collisions[0].candidates[j].value == update &&
           missed.mismatches[0].candidates[j].value == update;
  }
  return same;
}

// A {3,4} input scattered along `axis`, with negative indices where the type has them.
template <class T, class I>
PairResult run_type_pair(std::uint32_t axis) {
  const Sizes input_sizes{3, 4};
  const std::vector<T> input = distinct_buffer<T>(12);
  const Sizes indices_sizes = axis == 0 ? Sizes{2, 4} : Sizes{3, 3};
  const std::uint32_t n = input_sizes[axis];
  const std::uint64_t m = count_of(indices_sizes);
  std::vector<I> indices(m);
  for (std::uint64_t j = 0; j < m; ++j) {
    const auto k = static_cast<std::int64_t>((j * 7 + 1) % n);
    // Every other index in its negative form (k - n) for signed types.
    indices[j] = static_cast<I>(std::is_signed_v<I> && j % 2 == 1 ? k - n : k);
  }
  const std::vector<T> updates = distinct_buffer<T>(m, 100);
  const std::vector<T> expected =
      expected_scatter(input, input_sizes, indices, indices_sizes, updates, axis);
  PairResult r;
  r.typed_matches_expected = all_same_bits(
      run_typed(input, input_sizes, indices, indices_sizes, updates, axis), expected);
  r.runtime_matches_expected = all_same_bits(
      run_runtime(input, input_sizes, indices, indices_sizes, updates, axis), expected);

  r.runtime_check_reports_bits = runtime_check_reports_bits(
      data_type_of<T>, data_type_of<I>, axis, input_sizes, indices_sizes, bits_of(input),
      bits_of(indices), bits_of(updates), bits_of(expected));
  return r;
}

// Each axis of the {3,4} input; CAPTURE and CHECK stay out of the (T, I) instantiations.
void check_type_pair(PairResult (*run)(std::uint32_t)) {
  for (std::uint32_t axis : {0u, 1u}) {
    CAPTURE(axis);
    const PairResult r = run(axis);
    CHECK(r.typed_matches_expected);
    CHECK(r.runtime_matches_expected);
    CHECK(r.runtime_check_reports_bits);
  }
}

}  // namespace

TEST_CASE_TEMPLATE("SCATTER: every data type with every index type, typed and runtime", T,
                   DMLREF_ALL_TYPES) {
  SUBCASE("INT64 indices") { check_type_pair(&run_type_pair<T, std::int64_t>); }
  SUBCASE("INT32 indices") { check_type_pair(&run_type_pair<T, std::int32_t>); }
  SUBCASE("UINT64 indices") { check_type_pair(&run_type_pair<T, std::uint64_t>); }
  SUBCASE("UINT32 indices") { check_type_pair(&run_type_pair<T, std::uint32_t>); }
}

TEST_CASE("SCATTER moves bits: negative zero and NaN payloads survive") {
  const float nan_payload = std::bit_cast<float>(0x7FA00001u);  // a signalling NaN with a payload
  const std::vector<float> input{-0.0f, 1, std::bit_cast<float>(0xFFC00123u)};
  const std::vector<std::uint32_t> indices{1};
  const std::vector<float> updates{nan_payload};
  const std::vector<float> expected{-0.0f, nan_payload, std::bit_cast<float>(0xFFC00123u)};
  CHECK(all_same_bits(run_typed(input, {3}, indices, {1}, updates, 0), expected));
  CHECK(all_same_bits(run_runtime(input, {3}, indices, {1}, updates, 0), expected));
}

// --- ranks 1-8, every axis ----------------------------------------------------------------------

namespace {

template <class I>
void check_rank_axis(std::uint32_t rank, std::uint32_t axis, std::mt19937& rng) {
  using T = std::uint16_t;
  Sizes input_sizes(rank);
  for (auto& s : input_sizes) s = std::uniform_int_distribution<std::uint32_t>(1, 3)(rng);
  Sizes indices_sizes = input_sizes;
  indices_sizes[axis] = std::uniform_int_distribution<std::uint32_t>(1, 4)(rng);
  const std::uint32_t n = input_sizes[axis];
  CAPTURE(rank);
  CAPTURE(axis);
  CAPTURE(n);

  const std::uint64_t m = count_of(indices_sizes);
  std::vector<I> indices(m);
  const std::int64_t low = std::is_signed_v<I> ? -static_cast<std::int64_t>(n) : 0;
  std::uniform_int_distribution<std::int64_t> pick(low, static_cast<std::int64_t>(n) - 1);
  for (auto& v : indices) v = static_cast<I>(pick(rng));
  const std::vector<T> input = distinct_buffer<T>(count_of(input_sizes));
  const std::vector<T> updates = distinct_buffer<T>(m, 20000);
  const std::vector<T> expected =
      expected_scatter(input, input_sizes, indices, indices_sizes, updates, axis);
  CHECK(run_typed(input, input_sizes, indices, indices_sizes, updates, axis) == expected);
  CHECK(run_runtime(input, input_sizes, indices, indices_sizes, updates, axis) == expected);
}

}  // namespace

TEST_CASE("SCATTER: ranks 1 through 8, every axis (seeded shapes, size-1 dimensions included)") {
  std::mt19937 rng(0x5CA7);
  for (std::uint32_t rank = 1; rank <= 8; ++rank) {
    for (std::uint32_t axis = 0; axis < rank; ++axis) {
      switch ((rank + axis) % 4) {
        case 0:
          check_rank_axis<std::int64_t>(rank, axis, rng);
          break;
        case 1:
          check_rank_axis<std::int32_t>(rank, axis, rng);
          break;
        case 2:
          check_rank_axis<std::uint64_t>(rank, axis, rng);
          break;
        default:
          check_rank_axis<std::uint32_t>(rank, axis, rng);
          break;
      }
    }
  }
}

// --- negative, out-of-range and clamped indices -----------------------------------------------

TEST_CASE_TEMPLATE("SCATTER: negative indices count from the end", I, std::int64_t, std::int32_t) {
  // 1-D: -1 is the last element, -4 the first of 4.
  const std::vector<float> input{0, 1, 2, 3};
  const std::vector<I> indices{-1, -4, -2};
  const std::vector<float> updates{10, 11, 12};
  CHECK(run_typed(input, {4}, indices, {3}, updates, 0) == floats({11, 1, 12, 10}));
  CHECK(run_runtime(input, {4}, indices, {3}, updates, 0) == floats({11, 1, 12, 10}));
  // 2-D along Axis 1: row 0 gets column -1 = 2, row 1 column -3 = 0.
  const std::vector<float> input2{0, 1, 2, 3, 4, 5};
  const std::vector<I> indices2{-1, -3};
  const std::vector<float> updates2{20, 21};
  CHECK(run_typed(input2, {2, 3}, indices2, {2, 1}, updates2, 1) == floats({0, 1, 20, 21, 4, 5}));
  CHECK(run_runtime(input2, {2, 3}, indices2, {2, 1}, updates2, 1) == floats({0, 1, 20, 21, 4, 5}));
}

TEST_CASE_TEMPLATE("SCATTER: an index out of range on either end is SC8, naming the coordinate", I,
                   DMLREF_INDEX_TYPES) {
  // Axis 1 of a {2,3} input: n = 3. The bad index sits at IndicesTensor[1,0].
  const std::vector<float> input(6, 0.0f), updates{1, 2, 3, 4};
  std::vector<float> output(6, -1.0f);
  const std::string range = std::is_signed_v<I> ? "[-3, 2]" : "[0, 2]";
  // Just past the top, and just past the bottom (for unsigned types the largest value, which a
  // signed reading would call -1).
  const I too_high = static_cast<I>(3);
  const I too_low = std::is_signed_v<I> ? static_cast<I>(-4) : std::numeric_limits<I>::max();
  const I extreme =
      std::is_signed_v<I> ? std::numeric_limits<I>::min() : std::numeric_limits<I>::max();
  for (I bad : {too_high, too_low, extreme}) {
    const std::vector<I> indices{0, 1, bad, 2};
    const std::string message = "SCATTER: IndicesTensor[1,0] is " + std::to_string(bad) +
                                " but InputTensor.Sizes[1] is 3; indices must lie in " + range;
    CAPTURE(message);
    DMLREF_CHECK_ERROR(scatter(cview(input, {2, 3}), cview(indices, {2, 2}), cview(updates, {2, 2}),
                               mview(output, {2, 3}), 1),
                       ErrorCode::SC8, message);
    const RuntimeScatter r =
        packed_descs(DataType::Float32, data_type_of<I>, {2, 3}, {2, 2}, {2, 3});
    DMLREF_CHECK_ERROR(scatter(r.desc(1), cbuf(input), cbuf(indices), cbuf(updates), mbuf(output)),
                       ErrorCode::SC8, message);
  }
  CHECK(output == std::vector<float>(6, -1.0f));
}

TEST_CASE_TEMPLATE("SCATTER: IndexPolicy::Clamp clamps instead of failing", I, DMLREF_INDEX_TYPES) {
  // n = 4: too high goes to 3, too low (signed) to 0, in-range negatives still count from the end.
  const std::vector<float> input{0, 1, 2, 3};
  std::vector<I> indices{static_cast<I>(9), std::numeric_limits<I>::max()};
  std::vector<float> updates{10, 11};
  std::vector<float> expected{0, 1, 2, 11};
  if constexpr (std::is_signed_v<I>) {
    indices.insert(indices.end(),
                   {static_cast<I>(-5), std::numeric_limits<I>::min(), static_cast<I>(-3)});
    updates.insert(updates.end(), {12, 13, 14});
    expected = {13, 14, 2, 11};
  }
  const Sizes indices_sizes{static_cast<std::uint32_t>(indices.size())};
  ScatterOptions clamp;
  clamp.index_policy = IndexPolicy::Clamp;
  CHECK(run_typed(input, {4}, indices, indices_sizes, updates, 0, clamp) == expected);
  CHECK(run_runtime(input, {4}, indices, indices_sizes, updates, 0, clamp) == expected);
  // The same indices without the opt-in are an error.
  std::vector<float> output(4);
  DMLREF_CHECK_ERROR(scatter(cview(input, {4}), cview(indices, indices_sizes),
                             cview(updates, indices_sizes), mview(output, {4}), 0),
                     ErrorCode::SC8, "IndicesTensor[0] is 9");
}

TEST_CASE("SCATTER: the SC8 message the spec quotes") {
  const std::vector<float> input(9), updates(6);
  const std::vector<std::int64_t> indices{0, 1, 2, 0, 1, 5};
  std::vector<float> output(9);
  try {
    scatter(cview(input, {3, 3}), cview(indices, {2, 3}), cview(updates, {2, 3}),
            mview(output, {3, 3}), 0);
    FAIL("expected SC8");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::SC8);
    CHECK(std::string(e.what()) ==
          "SCATTER: IndicesTensor[1,2] is 5 but InputTensor.Sizes[0] is 3; indices must lie in "
          "[-3, 2] [SC8]");
  }
}

// --- strided, padded, reversed and broadcast operands -----------------------------------------

TEST_CASE("SCATTER: broadcast input, broadcast indices, transposed updates, padded output") {
  const Sizes input_sizes{3, 4}, indices_sizes{2, 4};
  const Strides input_strides{0, 1};    // every row reads the same 4 elements (T7)
  const Strides indices_strides{1, 0};  // row 0 all index 2, row 1 all index -3 = 0
  const Strides updates_strides{1, 2};  // stored column-major
  const Strides output_strides{6, 1};   // rows padded from 4 to 6 elements
  const std::vector<float> input_memory = distinct_buffer<float>(4);
  const std::vector<std::int32_t> indices_memory{2, -3};
  const std::vector<float> updates_memory = distinct_buffer<float>(8, 100);
  const float sentinel = -7.5f;

  const std::vector<float> expected = expected_scatter(
      materialize(input_memory.data(), input_sizes, input_strides), input_sizes,
      materialize(indices_memory.data(), indices_sizes, indices_strides), indices_sizes,
      materialize(updates_memory.data(), indices_sizes, updates_strides), 0);
  auto check_output = [&](const std::vector<float>& memory) {
    CHECK(all_same_bits(materialize(memory.data(), input_sizes, output_strides), expected));
    for (std::uint32_t row = 0; row < 3; ++row) {
      CHECK(same_bits(memory[row * 6 + 4], sentinel));  // padding untouched
      CHECK(same_bits(memory[row * 6 + 5], sentinel));
    }
  };

  SUBCASE("typed") {
    std::vector<float> output_memory(18, sentinel);
    scatter(
        TensorView<const float>(input_memory.data(), strided_layout(input_sizes, input_strides)),
        TensorView<const std::int32_t>(indices_memory.data(),
                                       strided_layout(indices_sizes, indices_strides)),
        TensorView<const float>(updates_memory.data(),
                                strided_layout(indices_sizes, updates_strides)),
        TensorView<float>(output_memory.data(), strided_layout(input_sizes, output_strides)), 0);
    check_output(output_memory);
  }
  SUBCASE("runtime") {
    const RuntimeScatter r{TensorDesc(DataType::Float32, input_sizes, {0, 1}),
                           TensorDesc(DataType::Int32, indices_sizes, {1, 0}),
                           TensorDesc(DataType::Float32, indices_sizes, {1, 2}),
                           TensorDesc(DataType::Float32, input_sizes, {6, 1})};
    std::vector<float> output_memory(18, sentinel);
    scatter(r.desc(0), cbuf(input_memory), cbuf(indices_memory), cbuf(updates_memory),
            mbuf(output_memory));
    check_output(output_memory);
  }
}

TEST_CASE("SCATTER: fully broadcast updates with indices broadcast along Axis (duplicates)") {
  // Every row of indices is the same, so each column's target is written three times; all three
  // updates are the one broadcast element, so LastWins and any winner agree.
  const std::vector<std::uint32_t> indices_memory{1, 0, 2, 1};
  const std::vector<double> updates_memory{42.5};
  const std::vector<double> input = distinct_buffer<double>(12);
  std::vector<double> expected = input;
  for (std::uint32_t col = 0; col < 4; ++col) expected[indices_memory[col] * 4 + col] = 42.5;

  std::vector<double> typed_out(12);
  scatter(cview(input, {3, 4}),
          TensorView<const std::uint32_t>(indices_memory.data(), strided_layout({3, 4}, {0, 1})),
          TensorView<const double>(updates_memory.data(), strided_layout({3, 4}, {0, 0})),
          mview(typed_out, {3, 4}), 0);
  CHECK(all_same_bits(typed_out, expected));

  const RuntimeScatter r{
      TensorDesc(DataType::Float64, {3, 4}), TensorDesc(DataType::UInt32, {3, 4}, {0, 1}),
      TensorDesc(DataType::Float64, {3, 4}, {0, 0}), TensorDesc(DataType::Float64, {3, 4})};
  std::vector<double> runtime_out(12);
  scatter(r.desc(0), cbuf(input), cbuf(indices_memory), cbuf(updates_memory), mbuf(runtime_out));
  CHECK(all_same_bits(runtime_out, expected));
  CHECK(find_scatter_collisions(
            cview(input, {3, 4}),
            TensorView<const std::uint32_t>(indices_memory.data(), strided_layout({3, 4}, {0, 1})),
            TensorView<const double>(updates_memory.data(), strided_layout({3, 4}, {0, 0})), 0)
            .size() == 4);
}

TEST_CASE("SCATTER (typed): negative strides read and write reversed views") {
  const std::vector<std::int16_t> input_memory{10, 11, 12, 13, 14};  // reversed: 14 13 12 11 10
  const std::vector<std::uint64_t> indices{0, 4};
  const std::vector<std::int16_t> updates{-1, -2};
  std::vector<std::int16_t> output_memory(5);
  scatter(TensorView<const std::int16_t>(input_memory.data() + 4, strided_layout({5}, {-1})),
          cview(indices, {2}), cview(updates, {2}),
          TensorView<std::int16_t>(output_memory.data() + 4, strided_layout({5}, {-1})), 0);
  // Logical output [-1, 13, 12, 11, -2], stored reversed.
  CHECK(output_memory == std::vector<std::int16_t>{-2, 11, 12, 13, -1});
}

// --- properties on seeded random shapes -------------------------------------------------------

namespace {

struct RandomShape {
  Sizes sizes;
  std::uint32_t axis = 0;
};

RandomShape random_shape(std::mt19937& rng, std::uint32_t max_rank, std::uint32_t max_size) {
  RandomShape s;
  s.sizes.resize(std::uniform_int_distribution<std::uint32_t>(1, max_rank)(rng));
  for (auto& v : s.sizes) v = std::uniform_int_distribution<std::uint32_t>(1, max_size)(rng);
  s.axis = std::uniform_int_distribution<std::uint32_t>(
      0, static_cast<std::uint32_t>(s.sizes.size()) - 1)(rng);
  return s;
}

}  // namespace

TEST_CASE("SCATTER property: the identity permutation along Axis returns the updates") {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 40; ++trial) {
    const RandomShape shape = random_shape(rng, 5, 4);
    const std::uint32_t n = shape.sizes[shape.axis];
    const std::uint64_t count = count_of(shape.sizes);
    const std::vector<float> input = distinct_buffer<float>(count);
    const std::vector<float> updates = distinct_buffer<float>(count, 1000);
    CAPTURE(trial);
    if (trial % 2 == 0) {
      std::vector<std::uint32_t> indices(count);
      for (std::uint64_t j = 0; j < count; ++j) indices[j] = unravel(j, shape.sizes)[shape.axis];
      CHECK(run_typed(input, shape.sizes, indices, shape.sizes, updates, shape.axis) == updates);
    } else {
      // The same permutation spelled with negative indices: k - n.
      std::vector<std::int64_t> indices(count);
      for (std::uint64_t j = 0; j < count; ++j) {
        indices[j] = static_cast<std::int64_t>(unravel(j, shape.sizes)[shape.axis]) - n;
      }
      CHECK(run_typed(input, shape.sizes, indices, shape.sizes, updates, shape.axis) == updates);
    }
  }
}

TEST_CASE("SCATTER property: a random permutation matches the inverse-permutation gather") {
  std::mt19937 rng(5678);
  for (int trial = 0; trial < 40; ++trial) {
    const RandomShape shape = random_shape(rng, 5, 5);
    const std::uint32_t n = shape.sizes[shape.axis];
    std::vector<std::uint32_t> perm(n), inverse(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (std::uint32_t i = 0; i < n; ++i) inverse[perm[i]] = i;
    const std::uint64_t count = count_of(shape.sizes);
    std::vector<std::int32_t> indices(count);
    for (std::uint64_t j = 0; j < count; ++j) {
      indices[j] = static_cast<std::int32_t>(perm[unravel(j, shape.sizes)[shape.axis]]);
    }
    const std::vector<std::int16_t> input = distinct_buffer<std::int16_t>(count);
    const std::vector<std::int16_t> updates = distinct_buffer<std::int16_t>(count, 7000);
    // output[v] = updates[v with v[Axis] = perm^-1(v[Axis])]
    std::vector<std::int16_t> expected(count);
    for (std::uint64_t p = 0; p < count; ++p) {
      Sizes v = unravel(p, shape.sizes);
      v[shape.axis] = inverse[v[shape.axis]];
      expected[p] = updates[ravel(v, shape.sizes)];
    }
    CAPTURE(trial);
    CHECK(run_typed(input, shape.sizes, indices, shape.sizes, updates, shape.axis) == expected);
    CHECK(run_runtime(input, shape.sizes, indices, shape.sizes, updates, shape.axis) == expected);
  }
}

TEST_CASE(
    "SCATTER property: gathering a scatter's targets returns the updates, the rest is input") {
  std::mt19937 rng(91011);
  for (int trial = 0; trial < 40; ++trial) {
    const RandomShape shape = random_shape(rng, 4, 5);
    const std::uint32_t n = shape.sizes[shape.axis];
    Sizes indices_sizes = shape.sizes;
    indices_sizes[shape.axis] = std::uniform_int_distribution<std::uint32_t>(1, n)(rng);
    // Distinct targets within each fiber along Axis: a prefix of a per-fiber shuffle.
    std::map<std::uint64_t, std::vector<std::uint32_t>> fibers;
    const std::uint64_t m = count_of(indices_sizes);
    std::vector<std::uint64_t> indices(m);
    for (std::uint64_t j = 0; j < m; ++j) {
      Sizes u = unravel(j, indices_sizes);
      const std::uint32_t along = u[shape.axis];
      u[shape.axis] = 0;
      auto [it, fresh] = fibers.try_emplace(ravel(u, indices_sizes));
      if (fresh) {
        it->second.resize(n);
        std::iota(it->second.begin(), it->second.end(), 0u);
        std::shuffle(it->second.begin(), it->second.end(), rng);
      }
      indices[j] = it->second[along];
    }
    const std::vector<float16> input = distinct_buffer<float16>(count_of(shape.sizes));
    const std::vector<float16> updates = distinct_buffer<float16>(m, 3000);
    const std::vector<float16> out =
        run_typed(input, shape.sizes, indices, indices_sizes, updates, shape.axis);
    std::vector<bool> targeted(out.size(), false);
    CAPTURE(trial);
    for (std::uint64_t j = 0; j < m; ++j) {
      Sizes c = unravel(j, indices_sizes);
      c[shape.axis] = static_cast<std::uint32_t>(indices[j]);
      const std::uint64_t p = ravel(c, shape.sizes);
      targeted[p] = true;
      CHECK(same_bits(out[p], updates[j]));
    }
    for (std::uint64_t p = 0; p < out.size(); ++p) {
      if (!targeted[p]) CHECK(same_bits(out[p], input[p]));
    }
  }
}

TEST_CASE_TEMPLATE("SCATTER property: the result check accepts each candidate at a collision only",
                   T, float, dmlref::float16) {
  std::mt19937 rng(424242);
  std::uint64_t collisions_seen = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const RandomShape shape = random_shape(rng, 4, 3);
    const std::uint32_t n = shape.sizes[shape.axis];
    Sizes indices_sizes = shape.sizes;
    // At least n indices per fiber, with values drawn at random: collisions are common.
    indices_sizes[shape.axis] = n + std::uniform_int_distribution<std::uint32_t>(0, 3)(rng);
    const std::uint64_t m = count_of(indices_sizes);
    std::vector<std::int32_t> indices(m);
    std::uniform_int_distribution<std::int32_t> pick(-static_cast<std::int32_t>(n),
                                                     static_cast<std::int32_t>(n) - 1);
    for (auto& v : indices) v = pick(rng);
    const std::vector<T> input = distinct_buffer<T>(count_of(shape.sizes));  // values 1..<1000
    const std::vector<T> updates = distinct_buffer<T>(m, 1000);
    const auto in_v = cview(input, shape.sizes);
    const auto idx_v = cview(indices, indices_sizes);
    const auto upd_v = cview(updates, indices_sizes);
    const std::vector<T> reference =
        run_typed(input, shape.sizes, indices, indices_sizes, updates, shape.axis);
    CAPTURE(trial);

    // Independent collision list: target position -> updates in row-major order of the indices.
    std::map<std::uint64_t, std::vector<std::uint64_t>> writers;
    for (std::uint64_t j = 0; j < m; ++j) {
      Sizes c = unravel(j, indices_sizes);
      c[shape.axis] = normalized(indices[j], n);
      writers[ravel(c, shape.sizes)].push_back(j);
    }
    std::erase_if(writers, [](const auto& kv) { return kv.second.size() < 2; });
    const auto collisions = find_scatter_collisions(in_v, idx_v, upd_v, shape.axis);
    REQUIRE(collisions.size() == writers.size());
    collisions_seen += collisions.size();
    std::size_t i = 0;
    for (const auto& [position, sources] : writers) {
      const ScatterCollision<T>& c = collisions[i++];
      CHECK(c.output_coordinate == coord_of(unravel(position, shape.sizes)));
      REQUIRE(c.candidates.size() == sources.size());
      for (std::size_t k = 0; k < sources.size(); ++k) {
        CHECK(c.candidates[k].indices_coordinate == coord_of(unravel(sources[k], indices_sizes)));
        CHECK(same_bits(c.candidates[k].value, updates[sources[k]]));
      }
      // LastWins: the reference holds the last candidate.
      CHECK(same_bits(reference[position], updates[sources.back()]));
    }

    const auto check = [&](const std::vector<T>& actual) {
      return check_scatter_result(in_v, idx_v, upd_v, cview(actual, shape.sizes), shape.axis);
    };
    const ScatterCheckResult<T> clean = check(reference);
    CHECK(clean.ok());
    CHECK(clean.colliding_element_count == writers.size());
    for (const auto& [position, sources] : writers) {
      std::vector<T> actual = reference;
      for (std::uint64_t source : sources) {
        actual[position] = updates[source];
        CHECK(check(actual).ok());
      }
      actual[position] = input[position];  // never a candidate: input and updates are disjoint
      const ScatterCheckResult<T> bad = check(actual);
      CHECK(bad.mismatch_count == 1);
      REQUIRE(bad.mismatches.size() == 1);
      CHECK(bad.mismatches[0].output_coordinate == coord_of(unravel(position, shape.sizes)));
      CHECK(bad.mismatches[0].candidate_count == sources.size());
      REQUIRE(bad.mismatches[0].candidates.size() ==
              std::min(sources.size(), kScatterCheckMaxCandidates));
      for (std::size_t k = 0; k < bad.mismatches[0].candidates.size(); ++k) {
        CHECK(bad.mismatches[0].candidates[k].indices_coordinate ==
              coord_of(unravel(sources[k], indices_sizes)));
        CHECK(same_bits(bad.mismatches[0].candidates[k].value, updates[sources[k]]));
      }
      CHECK(same_bits(bad.mismatches[0].actual, input[position]));
    }
    for (std::uint64_t p = 0; p < reference.size(); ++p) {
      if (writers.count(p) != 0) continue;
      std::vector<T> actual = reference;
      actual[p] = distinct_value<T>(5000);
      const ScatterCheckResult<T> bad = check(actual);
      CHECK(bad.mismatch_count == 1);
      REQUIRE(bad.mismatches.size() == 1);
      CHECK(bad.mismatches[0].output_coordinate == coord_of(unravel(p, shape.sizes)));
      CHECK(bad.mismatches[0].candidates.empty());
      CHECK(same_bits(bad.mismatches[0].expected, reference[p]));
      CHECK(!bad);
      break;  // one non-colliding element per trial is enough
    }
  }
  CHECK(collisions_seen > 10);
}

// --- duplicates and the result check
// --------------------------------------------------------------

TEST_CASE("SCATTER duplicates: last wins, find_scatter_collisions lists them, Reject raises") {
  // Axis 0 of {3,3}: [0,0] and [2,0] both target [1,0] (the second through -2 = 1); [0,2] and
  // [1,2] both target [2,2]. The later update in row-major order of the indices wins.
  const std::vector<float> input(9, 0.5f);
  const std::vector<std::int32_t> indices{1, 0, 2, 0, 1, 2, -2, 2, 0};
  const std::vector<float> updates{10, 11, 12, 20, 21, 22, 30, 31, 32};
  const std::vector<float> expected{20, 11, 32, 30, 21, 0.5f, 0.5f, 31, 22};
  CHECK(run_typed(input, {3, 3}, indices, {3, 3}, updates, 0) == expected);
  CHECK(run_runtime(input, {3, 3}, indices, {3, 3}, updates, 0) == expected);

  const auto collisions = find_scatter_collisions(cview(input, {3, 3}), cview(indices, {3, 3}),
                                                  cview(updates, {3, 3}), 0);
  std::map<std::uint64_t, std::vector<std::uint64_t>> writers;
  for (std::uint64_t j = 0; j < 9; ++j) {
    const std::uint32_t row = normalized(indices[j], 3);
    writers[row * 3 + j % 3].push_back(j);
  }
  std::erase_if(writers, [](const auto& kv) { return kv.second.size() < 2; });
  REQUIRE(collisions.size() == writers.size());
  std::size_t i = 0;
  for (const auto& [position, sources] : writers) {
    CHECK(collisions[i].output_coordinate == coord_of(unravel(position, {3, 3})));
    REQUIRE(collisions[i].candidates.size() == sources.size());
    for (std::size_t k = 0; k < sources.size(); ++k) {
      CHECK(collisions[i].candidates[k].indices_coordinate ==
            coord_of(unravel(sources[k], {3, 3})));
      CHECK(collisions[i].candidates[k].value == updates[sources[k]]);
    }
    ++i;
  }
  REQUIRE(collisions.size() == 2);
  CHECK(collisions[0].to_string() ==
        "OutputTensor[1,0]: IndicesTensor[0,0] -> 10 (0x41200000), "
        "IndicesTensor[2,0] -> 30 (0x41f00000)");

  ScatterOptions reject;
  reject.duplicates = DuplicatePolicy::Reject;
  std::vector<float> output(9, -1.0f);
  // Scanning the indices in row-major order, [1,2] is the first whose target ([2,2]) an earlier
  // one ([0,2]) took; [2,0] comes later.
  DMLREF_CHECK_ERROR(scatter(cview(input, {3, 3}), cview(indices, {3, 3}), cview(updates, {3, 3}),
                             mview(output, {3, 3}), 0, reject),
                     ErrorCode::ScatterDuplicate,
                     "SCATTER: IndicesTensor[0,2] is 2 and IndicesTensor[1,2] is 2; both target "
                     "OutputTensor[2,2] along Axis 0");
  const RuntimeScatter r = packed_descs(DataType::Float32, DataType::Int32, {3, 3}, {3, 3}, {3, 3});
  DMLREF_CHECK_ERROR(
      scatter(r.desc(0), cbuf(input), cbuf(indices), cbuf(updates), mbuf(output), reject),
      ErrorCode::ScatterDuplicate, "IndicesTensor[0,2] is 2 and IndicesTensor[1,2] is 2");
  CHECK(output == std::vector<float>(9, -1.0f));
  // Reject also governs the result check; find_scatter_collisions ignores it (listing is its job).
  DMLREF_CHECK_ERROR(
      check_scatter_result(cview(input, {3, 3}), cview(indices, {3, 3}), cview(updates, {3, 3}),
                           cview(expected, {3, 3}), 0, reject),
      ErrorCode::ScatterDuplicate, "both target OutputTensor[2,2]");
  CHECK(find_scatter_collisions(cview(input, {3, 3}), cview(indices, {3, 3}),
                                cview(updates, {3, 3}), 0, reject)
            .size() == writers.size());
}

TEST_CASE(
    "SCATTER duplicates: a negative and a positive index for one element; Reject names both") {
  const std::vector<float> input{0, 1, 2, 3, 4};
  const std::vector<std::int64_t> indices{1, 3, -4};
  const std::vector<float> updates{5, 6, 7};
  ScatterOptions reject;
  reject.duplicates = DuplicatePolicy::Reject;
  std::vector<float> output(5);
  DMLREF_CHECK_ERROR(
      scatter(cview(input, {5}), cview(indices, {3}), cview(updates, {3}), mview(output, {5}), 0,
              reject),
      ErrorCode::ScatterDuplicate,
      "IndicesTensor[0] is 1 and IndicesTensor[2] is -4; both target OutputTensor[1]");
  // Without duplicates, Reject changes nothing.
  const std::vector<std::int64_t> distinct{1, 3, -5};
  CHECK(run_typed(input, {5}, distinct, {3}, updates, 0, reject) == floats({7, 5, 2, 6, 4}));
}

TEST_CASE("SCATTER: a rejection costs the indices' stored values, not their broadcast count") {
  // Indices and updates broadcast along Axis to 2^31 - 1 elements per row (2^32 - 2 in all, just
  // under T4's limit), from two stored values: a walk over every broadcast element would take
  // seconds, and a rejection must not.
  constexpr std::uint32_t kBig = 0x7FFFFFFFu;
  const std::vector<float> input = distinct_buffer<float>(8);
  const std::vector<float> updates{7.5f};
  const Strides broadcast_along_axis{1, 0};
  auto indices_view = [&](const std::vector<std::int32_t>& values) {
    return TensorView<const std::int32_t>(values.data(),
                                          strided_layout({2, kBig}, broadcast_along_axis));
  };
  const TensorView<const float> updates_view(updates.data(), strided_layout({2, kBig}, {0, 0}));
  const RuntimeScatter r{TensorDesc(DataType::Float32, {2, 4}),
                         TensorDesc(DataType::Int32, {2, kBig}, {1, 0}),
                         TensorDesc(DataType::Float32, {2, kBig}, {0, 0}),
                         TensorDesc(DataType::Float32, {2, 4})};
  std::vector<float> output(8, -1.0f);

  SUBCASE("Reject: the second index of row 0 repeats the first") {
    const std::vector<std::int32_t> indices{3, 1};
    ScatterOptions reject;
    reject.duplicates = DuplicatePolicy::Reject;
    const char* message = "SCATTER: IndicesTensor[0,0] is 3 and IndicesTensor[0,1] is 3; both "
                          "target OutputTensor[0,3] along Axis 1";
    DMLREF_CHECK_ERROR(scatter(cview(input, {2, 4}), indices_view(indices), updates_view,
                               mview(output, {2, 4}), 1, reject),
                       ErrorCode::ScatterDuplicate, message);
    DMLREF_CHECK_ERROR(scatter(r.desc(1), cbuf(input), cbuf(indices), cbuf(updates),
                               mbuf(output), reject),
                       ErrorCode::ScatterDuplicate, message);
    DMLREF_CHECK_ERROR(check_scatter_result(cview(input, {2, 4}), indices_view(indices),
                                            updates_view, cview(input, {2, 4}), 1, reject),
                       ErrorCode::ScatterDuplicate, message);
  }
  SUBCASE("SC8: row 0 is legal throughout, row 1 is not; the first bad coordinate is [1,0]") {
    const std::vector<std::int32_t> indices{1, 9};
    const char* message = "SCATTER: IndicesTensor[1,0] is 9 but InputTensor.Sizes[1] is 4";
    DMLREF_CHECK_ERROR(scatter(cview(input, {2, 4}), indices_view(indices), updates_view,
                               mview(output, {2, 4}), 1),
                       ErrorCode::SC8, message);
    DMLREF_CHECK_ERROR(
        scatter(r.desc(1), cbuf(input), cbuf(indices), cbuf(updates), mbuf(output)),
        ErrorCode::SC8, message);
  }
  CHECK(output == std::vector<float>(8, -1.0f));
}

TEST_CASE("SCATTER result check: several wrong colliding elements, a cut report, broadcasts") {
  // Each of the 4 elements is targeted 3 times; the updates are 10..21 in row-major order.
  const std::vector<float> input{0, 0, 0, 0};
  const std::vector<std::uint32_t> indices{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
  const std::vector<float> updates{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21};
  const std::vector<float> actual{18, 99, 16, -1};  // [1] and [3] hold none of their updates
  const auto check = [&](std::size_t max_reported) {
    return check_scatter_result(cview(input, {4}), cview(indices, {12}), cview(updates, {12}),
                                cview(actual, {4}), 0, {}, max_reported);
  };
  const auto all = check(kScatterCheckMaxReported);
  CHECK(all.colliding_element_count == 4);
  CHECK(all.mismatch_count == 2);
  CHECK(all.to_string() ==
        "SCATTER result check: 2 of 4 elements mismatch (4 colliding output elements accept any "
        "one of their updates)\n"
        "  OutputTensor[1]: expected one of the colliding updates {IndicesTensor[1] -> 11 "
        "(0x41300000), IndicesTensor[5] -> 15 (0x41700000), IndicesTensor[9] -> 19 (0x41980000)}, "
        "actual 99 (0x42c60000)\n"
        "  OutputTensor[3]: expected one of the colliding updates {IndicesTensor[3] -> 13 "
        "(0x41500000), IndicesTensor[7] -> 17 (0x41880000), IndicesTensor[11] -> 21 (0x41a80000)}, "
        "actual -1 (0xbf800000)");
  const auto cut = check(1);
  CHECK(cut.mismatch_count == 2);
  REQUIRE(cut.mismatches.size() == 1);
  CHECK(cut.mismatches[0].candidates.size() == 3);
  CHECK(cut.mismatches[0].candidate_count == 3);
  CHECK(cut.to_string().find("OutputTensor[1]: expected one of") != std::string::npos);
  CHECK(cut.to_string().find("OutputTensor[3]") == std::string::npos);

  // Broadcast indices and updates (stride 0): 1000 updates of 7 all target [1].
  const std::vector<std::uint32_t> one_index{1};
  const std::vector<float> seven{7};
  const TensorView<const std::uint32_t> broadcast_indices(one_index.data(),
                                                          Layout::strided({1000}, {0}));
  const TensorView<const float> broadcast_updates(seven.data(), Layout::strided({1000}, {0}));
  const std::vector<float> two{0, 0};
  const auto broadcast_check = [&](const std::vector<float>& result) {
    return check_scatter_result(cview(two, {2}), broadcast_indices, broadcast_updates,
                                cview(result, {2}), 0);
  };
  const auto good = broadcast_check({0, 7});
  CHECK(good.ok());
  CHECK(good.colliding_element_count == 1);
  const auto wrong = broadcast_check({0, 8});
  CHECK(wrong.mismatch_count == 1);
  REQUIRE(wrong.mismatches.size() == 1);
  // The report lists the first kScatterCheckMaxCandidates of the 1000 candidates and counts them
  // all: a report holding each one would cost memory by the logical update count.
  CHECK(wrong.mismatches[0].candidate_count == 1000);
  REQUIRE(wrong.mismatches[0].candidates.size() == kScatterCheckMaxCandidates);
  for (std::uint32_t k = 0; k < kScatterCheckMaxCandidates; ++k) {
    CHECK(wrong.mismatches[0].candidates[k].indices_coordinate == coord_of({k}));
    CHECK(wrong.mismatches[0].candidates[k].value == 7.0f);
  }
  CHECK(wrong.to_string() ==
        "SCATTER result check: 1 of 2 elements mismatch (1 colliding output element accepts any "
        "one of its updates)\n"
        "  OutputTensor[1]: expected one of the colliding updates {IndicesTensor[0] -> 7 "
        "(0x40e00000), IndicesTensor[1] -> 7 (0x40e00000), IndicesTensor[2] -> 7 (0x40e00000), "
        "IndicesTensor[3] -> 7 (0x40e00000), IndicesTensor[4] -> 7 (0x40e00000), "
        "IndicesTensor[5] -> 7 (0x40e00000), IndicesTensor[6] -> 7 (0x40e00000), "
        "IndicesTensor[7] -> 7 (0x40e00000), IndicesTensor[8] -> 7 (0x40e00000), "
        "IndicesTensor[9] -> 7 (0x40e00000), IndicesTensor[10] -> 7 (0x40e00000), "
        "IndicesTensor[11] -> 7 (0x40e00000), IndicesTensor[12] -> 7 (0x40e00000), "
        "IndicesTensor[13] -> 7 (0x40e00000), IndicesTensor[14] -> 7 (0x40e00000), "
        "IndicesTensor[15] -> 7 (0x40e00000), and 984 more}, actual 8 (0x41000000)");
}

TEST_CASE("SCATTER result check: report text, bitwise comparison, runtime entry point") {
  const std::vector<float> input{0, 1, 2, 3, 4};
  const std::vector<std::uint32_t> indices{3, 1, 3, 0};
  const std::vector<float> updates{5, 6, 7, 8};
  const auto check = [&](const std::vector<float>& actual,
                         std::size_t max_reported = kScatterCheckMaxReported) {
    return check_scatter_result(cview(input, {5}), cview(indices, {4}), cview(updates, {4}),
                                cview(actual, {5}), 0, {}, max_reported);
  };
  CHECK(check({8, 6, 2, 7, 4}).ok());
  CHECK(check({8, 6, 2, 5, 4}).ok());  // the other colliding update is just as correct
  CHECK(check({8, 6, 2, 7, 4}).to_string() ==
        "SCATTER result check: all 5 elements match (1 colliding output element accepts any one of "
        "its updates)");

  const auto bad = check({8, -0.0f, 2, 3, 4});
  CHECK(bad.mismatch_count == 2);
  CHECK(bad.to_string() ==
        "SCATTER result check: 2 of 5 elements mismatch (1 colliding output element accepts any "
        "one of its updates)\n"
        "  OutputTensor[1]: expected 6 (0x40c00000), actual -0 (0x80000000)\n"
        "  OutputTensor[3]: expected one of the colliding updates {IndicesTensor[0] -> 5 "
        "(0x40a00000), IndicesTensor[2] -> 7 (0x40e00000)}, actual 3 (0x40400000)");
  // +0 expected, -0 given: bits differ, so it is a mismatch.
  const std::vector<float> zero_input{0.0f, 0.0f};
  const std::vector<std::uint32_t> one{0};
  const std::vector<float> one_update{9};
  const std::vector<float> negative_zero{9, -0.0f};
  CHECK(!check_scatter_result(cview(zero_input, {2}), cview(one, {1}), cview(one_update, {1}),
                              cview(negative_zero, {2}), 0));

  const auto truncated = check({0, 0, 0, 0, 0}, 2);
  CHECK(truncated.mismatch_count == 5);
  CHECK(truncated.mismatches.size() == 2);
  CHECK(truncated.to_string().find("\n  ... and 3 more") != std::string::npos);

  SUBCASE("runtime") {
    const RuntimeScatter r = packed_descs(DataType::Float32, DataType::UInt32, {5}, {4}, {5});
    const auto in = padded(input, r.input);
    const auto upd = padded(updates, r.updates);
    const std::vector<float> good = padded(floats({8, 6, 2, 5, 4}), r.output);
    CHECK(check_scatter_result(r.desc(0), cbuf(in), cbuf(indices), cbuf(upd), cbuf(good)).ok());
    const std::vector<float> wrong = padded(floats({8, 6, 2, 6, 4}), r.output);
    const ScatterCheckResult<ScatterElementBits> rb =
        check_scatter_result(r.desc(0), cbuf(in), cbuf(indices), cbuf(upd), cbuf(wrong));
    REQUIRE(rb.mismatches.size() == 1);
    CHECK(rb.mismatches[0].actual == ScatterElementBits{DataType::Float32, 0x40c00000u});
    REQUIRE(rb.mismatches[0].candidates.size() == 2);
    CHECK(rb.mismatches[0].candidate_count == 2);
    CHECK(rb.mismatches[0].candidates[1].value ==
          ScatterElementBits{DataType::Float32, 0x40e00000u});
    CHECK(rb.to_string().find("OutputTensor[3]: expected one of the colliding updates "
                              "{IndicesTensor[0] -> 5 (0x40a00000)") != std::string::npos);

    const auto found = find_scatter_collisions(r.desc(0), cbuf(in), cbuf(indices), cbuf(upd));
    REQUIRE(found.size() == 1);
    CHECK(
        found[0].to_string() ==
        "OutputTensor[3]: IndicesTensor[0] -> 5 (0x40a00000), IndicesTensor[2] -> 7 (0x40e00000)");
  }
  SUBCASE("runtime values keep their type: 8-bit and float16") {
    const std::vector<std::int8_t> in8{-1, -2, -3, -4};
    const std::vector<std::uint32_t> idx{2, 2};
    const std::vector<std::int8_t> up8{-100, 127};
    const RuntimeScatter r = packed_descs(DataType::Int8, DataType::UInt32, {4}, {2}, {4});
    const auto found =
        find_scatter_collisions(r.desc(0), cbuf(in8), cbuf(idx), cbuf(padded(up8, r.updates)));
    REQUIRE(found.size() == 1);
    CHECK(found[0].to_string() ==
          "OutputTensor[2]: IndicesTensor[0] -> -100, IndicesTensor[1] -> 127");
    CHECK(found[0].candidates[0].value == ScatterElementBits{DataType::Int8, 0x9Cu});

    const std::vector<float16> in16{float16(1.0f), float16(2.0f)};
    const std::vector<std::uint32_t> idx16{1, 1};
    const std::vector<float16> up16{float16(0.5f), float16::from_bits(0x7E01)};
    const RuntimeScatter h = packed_descs(DataType::Float16, DataType::UInt32, {2}, {2}, {2});
    const auto found16 = find_scatter_collisions(h.desc(0), cbuf(in16), cbuf(idx16), cbuf(up16));
    REQUIRE(found16.size() == 1);
    CHECK(found16[0].to_string() ==
          "OutputTensor[1]: IndicesTensor[0] -> 0.5 (0x3800), IndicesTensor[1] -> nan (0x7e01)");
  }
}

TEST_CASE_TEMPLATE("SCATTER result check and collision list read every index type, negative too",
                   I, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t) {
  // n = 5, targets 3, 1, 1, 3, 3, 1: OutputTensor[1] takes updates 1, 2 and 5, [3] updates 0, 3
  // and 4 (the last wins in the reference).
  std::vector<I> indices{3, 1, 1, 3, 3, 1};
  if constexpr (std::is_signed_v<I>) indices = {3, -4, 1, -2, 3, -4};
  const std::vector<std::int16_t> input{10, 11, 12, 13, 14};
  const std::vector<std::int16_t> updates{20, 21, 22, 23, 24, 25};
  const std::vector<std::int16_t> reference{10, 25, 12, 24, 14};
  const std::vector<std::int16_t> other_winners{10, 21, 12, 20, 14};
  // [1] holds an update that targets [3]; [2] is not the input's value.
  const std::vector<std::int16_t> wrong{10, 20, 11, 23, 14};
  const std::string wrong_report =
      "SCATTER result check: 2 of 5 elements mismatch (2 colliding output elements accept any one "
      "of their updates)\n"
      "  OutputTensor[1]: expected one of the colliding updates {IndicesTensor[1] -> 21, "
      "IndicesTensor[2] -> 22, IndicesTensor[5] -> 25}, actual 20\n"
      "  OutputTensor[2]: expected 12, actual 11";
  const std::vector<std::string> collisions{
      "OutputTensor[1]: IndicesTensor[1] -> 21, IndicesTensor[2] -> 22, IndicesTensor[5] -> 25",
      "OutputTensor[3]: IndicesTensor[0] -> 20, IndicesTensor[3] -> 23, IndicesTensor[4] -> 24"};
  const auto texts = [](const auto& found) {
    std::vector<std::string> out;
    for (const auto& c : found) out.push_back(c.to_string());
    return out;
  };

  const auto typed = [&](const std::vector<std::int16_t>& actual) {
    return check_scatter_result(cview(input, {5}), cview(indices, {6}), cview(updates, {6}),
                                cview(actual, {5}), 0);
  };
  CHECK(typed(reference).ok());
  CHECK(typed(other_winners).ok());
  CHECK(typed(wrong).to_string() == wrong_report);
  CHECK(texts(find_scatter_collisions(cview(input, {5}), cview(indices, {6}),
                                      cview(updates, {6}), 0)) == collisions);

  const RuntimeScatter r = packed_descs(DataType::Int16, data_type_of<I>, {5}, {6}, {5});
  const auto in = padded(input, r.input);
  const auto upd = padded(updates, r.updates);
  const auto runtime = [&](const std::vector<std::int16_t>& actual) {
    return check_scatter_result(r.desc(0), cbuf(in), cbuf(indices), cbuf(upd),
                                cbuf(padded(actual, r.output)));
  };
  CHECK(runtime(reference).ok());
  CHECK(runtime(other_winners).ok());
  CHECK(runtime(wrong).to_string() == wrong_report);
  CHECK(texts(find_scatter_collisions(r.desc(0), cbuf(in), cbuf(indices), cbuf(upd))) ==
        collisions);
}

// --- validation: one negative test per rule -----------------------------------------------------

namespace {

// A valid FLOAT32 scatter: input/output {2,3}, indices/updates {2,3} UINT32, Axis 0.
struct ValidCase {
  std::vector<float> input = distinct_buffer<float>(6);
  std::vector<std::uint32_t> indices{0, 1, 0, 1, 0, 1};
  std::vector<float> updates = distinct_buffer<float>(6, 50);
  std::vector<float> output = std::vector<float>(6, -1.0f);
};

}  // namespace

TEST_CASE("SCATTER validation (runtime): SC1-SC8, each with its code and message") {
  ValidCase v;
  const auto run = [&](const RuntimeScatter& r, std::uint32_t axis = 0) {
    scatter(r.desc(axis), cbuf(v.input), cbuf(v.indices), cbuf(v.updates), mbuf(v.output));
  };
  SUBCASE("valid") {
    const RuntimeScatter r =
        packed_descs(DataType::Float32, DataType::UInt32, {2, 3}, {2, 3}, {2, 3});
    run(r);
    CHECK(validate_scatter(r.desc(0), cbuf(v.input), cbuf(v.indices), cbuf(v.updates),
                           mbuf(v.output)) == Sizes{2, 3});
  }
  SUBCASE("SC1") {
    const RuntimeScatter r{TensorDesc(DataType::Float32, {2, 3}), TensorDesc(DataType::UInt32, {6}),
                           TensorDesc(DataType::Float32, {6}),
                           TensorDesc(DataType::Float32, {2, 3})};
    DMLREF_CHECK_ERROR(
        run(r), ErrorCode::SC1,
        "SCATTER: IndicesTensor.DimensionCount is 1 but InputTensor.DimensionCount is 2");
    DMLREF_CHECK_ERROR(validate_scatter(r.desc(0)), ErrorCode::SC1,
                       "must have the same DimensionCount");
  }
  SUBCASE("SC2") {
    const RuntimeScatter r{
        TensorDesc(DataType::Float32, {2, 3}), TensorDesc(DataType::UInt32, {2, 3}),
        TensorDesc(DataType::Int32, {2, 3}), TensorDesc(DataType::Float32, {2, 3})};
    DMLREF_CHECK_ERROR(
        run(r), ErrorCode::SC2,
        "SCATTER: UpdatesTensor.DataType is INT32 but InputTensor.DataType is FLOAT32");
    const RuntimeScatter o{
        TensorDesc(DataType::Float32, {2, 3}), TensorDesc(DataType::UInt32, {2, 3}),
        TensorDesc(DataType::Float32, {2, 3}), TensorDesc(DataType::UInt32, {2, 3})};
    DMLREF_CHECK_ERROR(run(o), ErrorCode::SC2,
                       "OutputTensor.DataType is UINT32 but InputTensor.DataType is FLOAT32");
  }
  SUBCASE("SC3") {
    const RuntimeScatter r =
        packed_descs(DataType::Float32, DataType::Float32, {2, 3}, {2, 3}, {2, 3});
    DMLREF_CHECK_ERROR(run(r), ErrorCode::SC3,
                       "SCATTER: IndicesTensor.DataType is FLOAT32; it must be one of INT64, "
                       "INT32, UINT64, UINT32");
    const RuntimeScatter s =
        packed_descs(DataType::Float32, DataType::Int16, {2, 3}, {2, 3}, {2, 3});
    DMLREF_CHECK_ERROR(validate_scatter(s.desc(0)), ErrorCode::SC3,
                       "IndicesTensor.DataType is INT16");
  }
  SUBCASE("SC4") {
    const RuntimeScatter r =
        packed_descs(DataType::Float32, DataType::UInt32, {2, 3}, {2, 3}, {2, 3});
    DMLREF_CHECK_ERROR(run(r, 2), ErrorCode::SC4,
                       "SCATTER: Axis is 2 but OutputTensor.DimensionCount is 2");
  }
  SUBCASE("SC5") {
    const RuntimeScatter r =
        packed_descs(DataType::Float32, DataType::UInt32, {2, 3}, {2, 3}, {2, 2});
    DMLREF_CHECK_ERROR(run(r), ErrorCode::SC5,
                       "OutputTensor.Sizes[1] is 2 but InputTensor.Sizes[1] is 3");
  }
  SUBCASE("SC6") {
    const RuntimeScatter r{
        TensorDesc(DataType::Float32, {2, 3}), TensorDesc(DataType::UInt32, {2, 3}),
        TensorDesc(DataType::Float32, {2, 2}), TensorDesc(DataType::Float32, {2, 3})};
    DMLREF_CHECK_ERROR(
        run(r), ErrorCode::SC6,
        "UpdatesTensor.Sizes[1] is 2 but IndicesTensor.Sizes[1] is 3; UpdatesTensor.Sizes "
        "{2,2} must equal IndicesTensor.Sizes {2,3}");
  }
  SUBCASE("SC7") {
    const RuntimeScatter r =
        packed_descs(DataType::Float32, DataType::UInt32, {2, 3}, {2, 2}, {2, 3});
    DMLREF_CHECK_ERROR(run(r), ErrorCode::SC7,
                       "SCATTER: IndicesTensor.Sizes[1] is 2 but InputTensor.Sizes[1] is 3; every "
                       "dimension except Axis (0) must match");
    // Along Axis the indices may be longer than the input.
    const RuntimeScatter ok =
        packed_descs(DataType::Float32, DataType::UInt32, {2, 3}, {4, 3}, {2, 3});
    CHECK(validate_scatter(ok.desc(0)) == Sizes{2, 3});
  }
  SUBCASE("SC8") {
    v.indices[4] = 2;
    const RuntimeScatter r =
        packed_descs(DataType::Float32, DataType::UInt32, {2, 3}, {2, 3}, {2, 3});
    DMLREF_CHECK_ERROR(
        run(r), ErrorCode::SC8,
        "IndicesTensor[1,1] is 2 but InputTensor.Sizes[0] is 2; indices must lie in [0, 1]");
  }
}

TEST_CASE("SCATTER validation (typed): SC1, SC4-SC8") {
  ValidCase v;
  const auto in = cview(v.input, {2, 3});
  const auto idx = cview(v.indices, {2, 3});
  const auto upd = cview(v.updates, {2, 3});
  const auto out = mview(v.output, {2, 3});
  CHECK(validate_scatter(in, idx, upd, out, 0) == Sizes{2, 3});
  DMLREF_CHECK_ERROR(scatter(in, cview(v.indices, {6}), cview(v.updates, {6}), out, 0),
                     ErrorCode::SC1,
                     "IndicesTensor.DimensionCount is 1 but InputTensor.DimensionCount is 2");
  DMLREF_CHECK_ERROR(scatter(in, idx, upd, mview(v.output, {6}), 0), ErrorCode::SC1,
                     "OutputTensor.DimensionCount is 1");
  DMLREF_CHECK_ERROR(scatter(in, idx, upd, out, 5), ErrorCode::SC4, "Axis is 5");
  DMLREF_CHECK_ERROR(scatter(in, idx, upd, mview(v.output, {3, 2}), 0), ErrorCode::SC5,
                     "OutputTensor.Sizes[0] is 3 but InputTensor.Sizes[0] is 2");
  DMLREF_CHECK_ERROR(scatter(in, idx, cview(v.updates, {3, 2}), out, 0), ErrorCode::SC6,
                     "UpdatesTensor.Sizes[0] is 3 but IndicesTensor.Sizes[0] is 2");
  DMLREF_CHECK_ERROR(scatter(in, cview(v.indices, {3, 2}), cview(v.updates, {3, 2}), out, 0),
                     ErrorCode::SC7, "IndicesTensor.Sizes[1] is 2 but InputTensor.Sizes[1] is 3");
  v.indices[5] = 7;
  DMLREF_CHECK_ERROR(scatter(in, idx, upd, out, 0), ErrorCode::SC8, "IndicesTensor[1,2] is 7");
  DMLREF_CHECK_ERROR(validate_scatter(in, idx, upd, out, 0), ErrorCode::SC8,
                     "IndicesTensor[1,2] is 7");
  CHECK(v.output == std::vector<float>(6, -1.0f));
}

TEST_CASE("SCATTER validation: tensor rules T1-T13 through the operator") {
  ValidCase v;
  const auto base = [] {
    return packed_descs(DataType::Float32, DataType::UInt32, {2, 3}, {2, 3}, {2, 3});
  };
  const auto run = [&](const ScatterOperatorDesc& d) {
    scatter(d, cbuf(v.input), cbuf(v.indices), cbuf(v.updates), mbuf(v.output));
  };
  SUBCASE("T1") {
    RuntimeScatter r = base();
    r.input_desc.DataType = DataType::Unknown;
    DMLREF_CHECK_ERROR(run(r.desc(0)), ErrorCode::T1, "SCATTER: InputTensor.DataType is UNKNOWN");
    r.input_desc.DataType = static_cast<DataType>(99);
    DMLREF_CHECK_ERROR(validate_scatter(r.desc(0)), ErrorCode::T1,
                       "99 (not a DML_TENSOR_DATA_TYPE)");
  }
  SUBCASE("T2") {
    RuntimeScatter r = base();
    r.indices_desc.DimensionCount = 9;
    DMLREF_CHECK_ERROR(run(r.desc(0)), ErrorCode::T2, "IndicesTensor.DimensionCount is 9");
    r.indices_desc.DimensionCount = 0;
    DMLREF_CHECK_ERROR(run(r.desc(0)), ErrorCode::T2, "IndicesTensor.DimensionCount is 0");
    // Typed: a rank-0 view (a default Layout) is below the range.
    DMLREF_CHECK_ERROR(
        scatter(TensorView<const float>(v.input.data(), Layout{}), cview(v.indices, {2, 3}),
                cview(v.updates, {2, 3}), mview(v.output, {2, 3}), 0),
        ErrorCode::T2, "SCATTER: InputTensor.DimensionCount is 0; it must be between 1 and 8");
  }
  SUBCASE("T3") {
    RuntimeScatter r = base();
    const std::uint32_t zero_sizes[] = {2, 0};
    r.updates_desc.Sizes = zero_sizes;
    DMLREF_CHECK_ERROR(run(r.desc(0)), ErrorCode::T3, "UpdatesTensor.Sizes[1] is 0");
    DMLREF_CHECK_ERROR(scatter(cview(v.input, {2, 3}), cview(v.indices, {0, 3}),
                               cview(v.updates, {0, 3}), mview(v.output, {2, 3}), 0),
                       ErrorCode::T3, "IndicesTensor.Sizes[0] is 0");
  }
  SUBCASE("T8") {
    RuntimeScatter r = base();
    r.output_desc.TotalTensorSizeInBytes = 20;
    DMLREF_CHECK_ERROR(
        run(r.desc(0)), ErrorCode::T8,
        "OutputTensor.TotalTensorSizeInBytes is 20 but the tensor needs at least 24 bytes");
  }
  SUBCASE("T9") {
    RuntimeScatter r = base();
    r.input_desc.GuaranteedBaseOffsetAlignment = 3;
    DMLREF_CHECK_ERROR(run(r.desc(0)), ErrorCode::T9,
                       "InputTensor.GuaranteedBaseOffsetAlignment is 3");
    RuntimeScatter s = base();
    std::vector<std::uint32_t> shifted(7);
    DMLREF_CHECK_ERROR(
        scatter(s.desc(0), cbuf(v.input),
                ConstBuffer(reinterpret_cast<const std::byte*>(shifted.data()) + 2, 24),
                cbuf(v.updates), mbuf(v.output)),
        ErrorCode::T9, "the buffer of IndicesTensor starts at an address");
  }
  SUBCASE("T10") {
    RuntimeScatter r = base();
    DMLREF_CHECK_ERROR(scatter(r.desc(0), cbuf(v.input), cbuf(v.indices),
                               ConstBuffer(v.updates.data(), 20), mbuf(v.output)),
                       ErrorCode::T10, "the buffer of UpdatesTensor holds 20 bytes but");
  }
  SUBCASE("T11") {
    RuntimeScatter r = base();
    r.indices_desc.Flags = static_cast<TensorFlags>(2);
    DMLREF_CHECK_ERROR(run(r.desc(0)), ErrorCode::T11, "IndicesTensor.Flags is 2");
    RuntimeScatter s = base();
    s.output_desc.Flags = TensorFlags::OwnedByDml;
    DMLREF_CHECK_ERROR(run(s.desc(0)), ErrorCode::T11,
                       "OutputTensor.Flags is DML_TENSOR_FLAG_OWNED_BY_DML");
    RuntimeScatter owned = base();
    owned.input_desc.Flags = TensorFlags::OwnedByDml;  // allowed on inputs, no effect
    std::vector<float> owned_output(6);
    scatter(owned.desc(0), cbuf(v.input), cbuf(v.indices), cbuf(v.updates), mbuf(owned_output));
  }
  SUBCASE("T12") {
    const RuntimeScatter r{
        TensorDesc(DataType::Float32, {2, 3}), TensorDesc(DataType::UInt32, {2, 3}),
        TensorDesc(DataType::Float32, {2, 3}), TensorDesc(DataType::Float32, {2, 3}, {0, 1})};
    DMLREF_CHECK_ERROR(run(r.desc(0)), ErrorCode::T12,
                       "OutputTensor.Strides[0] is 0 with Sizes[0] 2");
    DMLREF_CHECK_ERROR(
        scatter(cview(v.input, {2, 3}), cview(v.indices, {2, 3}), cview(v.updates, {2, 3}),
                TensorView<float>(v.output.data(), strided_layout({2, 3}, {1, 1})), 0),
        ErrorCode::T12, "OutputTensor.Strides {1,1}");
  }
  SUBCASE("T13: the output overlapping each input") {
    // One 8-byte-aligned arena: input at byte 0, indices at 64, updates at 128, output at 192.
    std::vector<std::uint64_t> arena(32, 0);
    std::byte* bytes = reinterpret_cast<std::byte*>(arena.data());
    const RuntimeScatter r = base();
    const auto with_output_at = [&](std::size_t offset) {
      scatter(r.desc(0), ConstBuffer(bytes, 24), ConstBuffer(bytes + 64, 24),
              ConstBuffer(bytes + 128, 24), Buffer{bytes + offset, 24});
    };
    with_output_at(192);
    DMLREF_CHECK_ERROR(with_output_at(8), ErrorCode::T13,
                       "OutputTensor (bytes [8, 32)) overlaps InputTensor");
    DMLREF_CHECK_ERROR(with_output_at(80), ErrorCode::T13, "overlaps IndicesTensor");
    DMLREF_CHECK_ERROR(with_output_at(124), ErrorCode::T13, "overlaps UpdatesTensor");
    // Inputs may overlap each other (one buffer bound twice).
    scatter(r.desc(0), ConstBuffer(bytes, 24), ConstBuffer(bytes + 64, 24), ConstBuffer(bytes, 24),
            Buffer{bytes + 192, 24});

    std::vector<float> shared(12, 0.0f);
    DMLREF_CHECK_ERROR(
        scatter(cview(shared, {2, 3}), cview(v.indices, {2, 3}), cview(v.updates, {2, 3}),
                TensorView<float>(shared.data() + 3, Layout::packed({2, 3})), 0),
        ErrorCode::T13, "overlaps InputTensor");
    DMLREF_CHECK_ERROR(
        scatter(cview(v.input, {2, 3}), cview(v.indices, {2, 3}), cview(shared, {2, 3}),
                TensorView<float>(shared.data() + 5, Layout::packed({2, 3})), 0),
        ErrorCode::T13, "overlaps UpdatesTensor");
  }
  SUBCASE("null pointers and options") {
    RuntimeScatter r = base();
    ScatterOperatorDesc d = r.desc(0);
    d.UpdatesTensor = nullptr;
    DMLREF_CHECK_ERROR(validate_scatter(d), ErrorCode::NullPointer, "UpdatesTensor is null");
    DMLREF_CHECK_ERROR(scatter(r.desc(0), cbuf(v.input), ConstBuffer(nullptr, 24), cbuf(v.updates),
                               mbuf(v.output)),
                       ErrorCode::NullPointer, "the buffer of IndicesTensor is null");
    ScatterOptions bad;
    bad.index_policy = static_cast<IndexPolicy>(7);
    DMLREF_CHECK_ERROR(validate_scatter(r.desc(0), bad), ErrorCode::InvalidOption,
                       "index_policy is 7");
    ScatterOptions bad_dup;
    bad_dup.duplicates = static_cast<DuplicatePolicy>(9);
    DMLREF_CHECK_ERROR(validate_scatter(r.desc(0), bad_dup), ErrorCode::InvalidOption,
                       "duplicates is 9");
  }
  CHECK(v.output == std::vector<float>(6, -1.0f));
}

// --- a rejected call writes nothing
// ----------------------------------------------------------------

TEST_CASE("SCATTER canary: a rejected call leaves every output byte untouched") {
  // Every index is valid except the last in row-major order, so a loop that validated as it wrote
  // would have written five elements before failing.
  const std::vector<float> input = distinct_buffer<float>(9);
  const std::vector<float> updates = distinct_buffer<float>(6, 100);
  const std::vector<float> sentinel(9, -3.25f);
  std::vector<float> output = sentinel;
  const RuntimeScatter r = packed_descs(DataType::Float32, DataType::Int64, {3, 3}, {2, 3}, {3, 3});
  const auto expect_untouched = [&](auto&& call, ErrorCode code, const char* substring) {
    output = sentinel;
    DMLREF_CHECK_ERROR(call(), code, substring);
    CHECK(all_same_bits(output, sentinel));
  };

  const std::vector<std::int64_t> bad_last{0, 1, 2, 1, 2, 3};
  expect_untouched(
      [&] {
        scatter(cview(input, {3, 3}), cview(bad_last, {2, 3}), cview(updates, {2, 3}),
                mview(output, {3, 3}), 0);
      },
      ErrorCode::SC8, "IndicesTensor[1,2] is 3");
  expect_untouched(
      [&] { scatter(r.desc(0), cbuf(input), cbuf(bad_last), cbuf(updates), mbuf(output)); },
      ErrorCode::SC8, "IndicesTensor[1,2] is 3");

  const std::vector<std::int64_t> low_last{0, 1, 2, 1, 2, -4};
  expect_untouched(
      [&] { scatter(r.desc(0), cbuf(input), cbuf(low_last), cbuf(updates), mbuf(output)); },
      ErrorCode::SC8, "IndicesTensor[1,2] is -4");

  ScatterOptions reject;
  reject.duplicates = DuplicatePolicy::Reject;
  const std::vector<std::int64_t> duplicate_last{0, 1, 2, 1, 2, -1};  // -1 -> 2, as [0,2]
  expect_untouched(
      [&] {
        scatter(cview(input, {3, 3}), cview(duplicate_last, {2, 3}), cview(updates, {2, 3}),
                mview(output, {3, 3}), 0, reject);
      },
      ErrorCode::ScatterDuplicate, "IndicesTensor[0,2] is 2 and IndicesTensor[1,2] is -1");
  expect_untouched(
      [&] {
        scatter(r.desc(0), cbuf(input), cbuf(duplicate_last), cbuf(updates), mbuf(output), reject);
      },
      ErrorCode::ScatterDuplicate, "both target OutputTensor[2,2]");

  const RuntimeScatter sc7 =
      packed_descs(DataType::Float32, DataType::Int64, {3, 3}, {2, 2}, {3, 3});
  expect_untouched(
      [&] { scatter(sc7.desc(0), cbuf(input), cbuf(bad_last), cbuf(updates), mbuf(output)); },
      ErrorCode::SC7, "IndicesTensor.Sizes[1] is 2");

  ScatterOptions old;
  old.feature_level = FeatureLevel::k3_0;
  const RuntimeScatter f64 =
      packed_descs(DataType::Float64, DataType::Int64, {3, 3}, {2, 3}, {3, 3});
  std::vector<double> in64(9), up64(6), out64(9, -3.25);
  const std::vector<std::int64_t> good{0, 1, 2, 1, 2, 0};
  DMLREF_CHECK_ERROR(scatter(f64.desc(0), cbuf(in64), cbuf(good), cbuf(up64), mbuf(out64), old),
                     ErrorCode::FeatureLevel, "FLOAT64 needs DML_FEATURE_LEVEL_4_1");
  CHECK(out64 == std::vector<double>(9, -3.25));
}

// --- feature levels ------------------------------------------------------------------------------

TEST_CASE("SCATTER feature levels: the page's table, naming the level required") {
  const auto at = [](FeatureLevel level) {
    ScatterOptions o;
    o.feature_level = level;
    return o;
  };
  SUBCASE("INT64 and FLOAT64 data need 4_1") {
    const RuntimeScatter i64 =
        packed_descs(DataType::Int64, DataType::UInt32, {2, 3}, {2, 3}, {2, 3});
    DMLREF_CHECK_ERROR(
        validate_scatter(i64.desc(0), at(FeatureLevel::k3_0)), ErrorCode::FeatureLevel,
        "SCATTER: InputTensor.DataType INT64 needs DML_FEATURE_LEVEL_4_1; the target is "
        "DML_FEATURE_LEVEL_3_0");
    const RuntimeScatter f64 =
        packed_descs(DataType::Float64, DataType::UInt32, {2, 3}, {2, 3}, {2, 3});
    DMLREF_CHECK_ERROR(validate_scatter(f64.desc(0), at(FeatureLevel::k3_0)),
                       ErrorCode::FeatureLevel,
                       "InputTensor.DataType FLOAT64 needs DML_FEATURE_LEVEL_4_1");
    CHECK(validate_scatter(f64.desc(0), at(FeatureLevel::k4_1)) == Sizes{2, 3});
    // Typed: the same table.
    const std::vector<double> in(6), up(6);
    std::vector<double> out(6);
    const std::vector<std::uint32_t> idx(6);
    DMLREF_CHECK_ERROR(scatter(cview(in, {2, 3}), cview(idx, {2, 3}), cview(up, {2, 3}),
                               mview(out, {2, 3}), 0, at(FeatureLevel::k3_0)),
                       ErrorCode::FeatureLevel,
                       "InputTensor.DataType FLOAT64 needs DML_FEATURE_LEVEL_4_1");
  }
  SUBCASE("at 2_1 indices must be UINT32 and tensors 4-D: both name 3_0") {
    const RuntimeScatter i32 =
        packed_descs(DataType::Float32, DataType::Int32, {1, 1, 2, 3}, {1, 1, 2, 3}, {1, 1, 2, 3});
    DMLREF_CHECK_ERROR(
        validate_scatter(i32.desc(2), at(FeatureLevel::k2_1)), ErrorCode::FeatureLevel,
        "SCATTER: IndicesTensor.DataType INT32 needs DML_FEATURE_LEVEL_3_0; the target is "
        "DML_FEATURE_LEVEL_2_1");
    CHECK(validate_scatter(i32.desc(2), at(FeatureLevel::k3_0)) == Sizes{1, 1, 2, 3});
    const RuntimeScatter d3 =
        packed_descs(DataType::Float32, DataType::UInt32, {1, 2, 3}, {1, 2, 3}, {1, 2, 3});
    DMLREF_CHECK_ERROR(
        validate_scatter(d3.desc(1), at(FeatureLevel::k2_1)), ErrorCode::FeatureLevel,
        "SCATTER: InputTensor.DimensionCount 3 needs DML_FEATURE_LEVEL_3_0; the target is "
        "DML_FEATURE_LEVEL_2_1");
    const std::vector<float> in(6), up(6);
    std::vector<float> out(6);
    const std::vector<std::int64_t> idx(6);
    DMLREF_CHECK_ERROR(
        scatter(cview(in, {1, 1, 2, 3}), cview(idx, {1, 1, 2, 3}), cview(up, {1, 1, 2, 3}),
                mview(out, {1, 1, 2, 3}), 0, at(FeatureLevel::k2_1)),
        ErrorCode::FeatureLevel, "IndicesTensor.DataType INT64 needs DML_FEATURE_LEVEL_3_0");
  }
  SUBCASE("at 1_0 data must be FLOAT32 or FLOAT16: INT8 names 2_1") {
    const RuntimeScatter i8 =
        packed_descs(DataType::Int8, DataType::UInt32, {1, 1, 2, 3}, {1, 1, 2, 3}, {1, 1, 2, 3});
    DMLREF_CHECK_ERROR(
        validate_scatter(i8.desc(3), at(FeatureLevel::k1_0)), ErrorCode::FeatureLevel,
        "SCATTER: InputTensor.DataType INT8 needs DML_FEATURE_LEVEL_2_1; the target is "
        "DML_FEATURE_LEVEL_1_0");
    CHECK(validate_scatter(i8.desc(3), at(FeatureLevel::k2_1)) == Sizes{1, 1, 2, 3});
    const RuntimeScatter f16 =
        packed_descs(DataType::Float16, DataType::UInt32, {1, 1, 2, 3}, {1, 1, 2, 3}, {1, 1, 2, 3});
    CHECK(validate_scatter(f16.desc(3), at(FeatureLevel::k1_0)) == Sizes{1, 1, 2, 3});
  }
  SUBCASE("newest by default; an unknown level is an invalid option") {
    const RuntimeScatter r =
        packed_descs(DataType::Int64, DataType::Int64, {2, 2, 2, 2, 2, 2, 2, 2},
                     {2, 2, 2, 2, 2, 2, 2, 2}, {2, 2, 2, 2, 2, 2, 2, 2});
    CHECK(validate_scatter(r.desc(7)).size() == 8);
    DMLREF_CHECK_ERROR(validate_scatter(r.desc(7), at(static_cast<FeatureLevel>(0x1234))),
                       ErrorCode::InvalidOption, "is not a DirectML feature level");
  }
}

// ---- `reversed`: tensors the descriptions stand in for, turned around after every check ---

TEST_CASE("SCATTER: the runtime entry point over reversed tensors its descriptions stand in for") {
  const std::vector<float> in = {1, 2, 3, 4};          // read backwards: [4, 3, 2, 1]
  const std::vector<std::int32_t> indices = {0, 1};    // read backwards: [1, 0]
  const std::vector<float> updates = {10, 20};         // as described
  std::vector<float> out(4, -1.0f);                    // written backwards
  const TensorDesc dd(DataType::Float32, {4}), di(DataType::Int32, {2}),
      du(DataType::Float32, {2});
  const BufferTensorDesc data = dd.desc(), ix = di.desc(), up = du.desc();
  const ScatterOperatorDesc desc{&data, &ix, &up, &data, 0};
  const std::vector<std::uint8_t> reversed = {1, 1, 0, 1};
  scatter(desc, ConstBuffer(in.data(), 16), ConstBuffer(indices.data(), 8),
          ConstBuffer(updates.data(), 8), Buffer{out.data(), 16}, {}, reversed);
  // The caller's output is [20, 10, 2, 1]: updates[1] at index 0, updates[0] at index 1.
  CHECK(out == std::vector<float>{1, 2, 10, 20});
  DMLREF_CHECK_ERROR(scatter(desc, ConstBuffer(in.data(), 16), ConstBuffer(indices.data(), 8),
                             ConstBuffer(updates.data(), 8), Buffer{out.data(), 16}, {},
                             std::vector<std::uint8_t>{1, 1, 0}),
                     ErrorCode::InvalidOption,
                     "SCATTER: 3 reversed masks were given for 4 tensors");
}

}  // namespace test_scatter
