// SPLIT (include/dmlref/ops/split.hpp): the spec's examples, every type and rank, strided operands,
// the split-after-join property, one negative test per rule, and the feature-level table.
// Expected values come from explicit coordinate arithmetic, never from the operator itself.
#include "test_support.hpp"

#include <dmlref/ops/join.hpp>
#include <dmlref/ops/split.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace test_split {  // this file's own names (tests/CMakeLists.txt: unity groups)

using namespace dmlref;
using dmlref::test::distinct_value;
using dmlref::test::same_bits;

namespace {

using Sizes = std::vector<std::uint32_t>;

std::uint64_t count_of(const Sizes& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{1},
                         [](std::uint64_t a, std::uint32_t b) { return a * b; });
}

// Row-major coordinate of flat index k, and back.
Sizes unravel(std::uint64_t k, const Sizes& sizes) {
  Sizes c(sizes.size());
  for (std::size_t d = sizes.size(); d-- > 0;) {
    c[d] = static_cast<std::uint32_t>(k % sizes[d]);
    k /= sizes[d];
  }
  return c;
}
std::uint64_t ravel(const Sizes& c, const Sizes& sizes) {
  std::uint64_t k = 0;
  for (std::size_t d = 0; d < sizes.size(); ++d) k = k * sizes[d] + c[d];
  return k;
}

// The spec's result by hand: element k of output i comes from the input coordinate with its Axis
// index shifted by the sizes of the outputs before it.
template <class T>
std::vector<std::vector<T>> expected_split(const std::vector<T>& input, const Sizes& input_sizes,
                                           const std::vector<Sizes>& output_sizes,
                                           std::uint32_t axis) {
  std::vector<std::vector<T>> out;
  std::uint32_t base = 0;
  for (const Sizes& s : output_sizes) {
    out.emplace_back(count_of(s));
    for (std::uint64_t k = 0; k < out.back().size(); ++k) {
      Sizes c = unravel(k, s);
      c[axis] += base;
      out.back()[k] = input[ravel(c, input_sizes)];
    }
    base += s[axis];
  }
  return out;
}

// all_same_bits' report, outside the template so MESSAGE is expanded once.
bool report_first_difference(std::size_t i) {
  MESSAGE("first difference at flat index ", i);
  return false;
}

template <class T>
bool all_same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!same_bits(a[i], b[i])) return report_first_difference(i);
  }
  return true;
}

// Runtime-layer storage: 8-byte words so every element type is aligned, at least
// TotalTensorSizeInBytes long (the rounding to 4 bytes is part of T8/T10).
std::vector<std::uint64_t> words_for(const BufferTensorDesc& d) {
  return std::vector<std::uint64_t>((d.TotalTensorSizeInBytes + 7) / 8 + 1, 0);
}

template <class T>
std::vector<T> read_elements(const std::vector<std::uint64_t>& storage, std::size_t n) {
  std::vector<T> v(n);
  std::memcpy(static_cast<void*>(v.data()), storage.data(), n * sizeof(T));
  return v;
}

// A runtime SPLIT call whose descriptions tests may break one field at a time.
struct SplitCall {
  TensorDesc owned_input;
  std::vector<TensorDesc> owned_outputs;
  BufferTensorDesc input;
  std::vector<BufferTensorDesc> outputs;
  std::uint32_t axis;
  std::vector<std::uint64_t> input_storage;
  std::vector<std::vector<std::uint64_t>> output_storage;

  SplitCall(TensorDesc in, std::vector<TensorDesc> outs, std::uint32_t ax)
      : owned_input(std::move(in)), owned_outputs(std::move(outs)), axis(ax) {
    input = owned_input.desc();
    for (const TensorDesc& d : owned_outputs) outputs.push_back(d.desc());
    input_storage = words_for(input);
    for (const BufferTensorDesc& d : outputs) output_storage.push_back(words_for(d));
  }
  SplitOperatorDesc desc() const {
    return {&input, static_cast<std::uint32_t>(outputs.size()), outputs.data(), axis};
  }
  ConstBuffer input_buffer() const {
    return ConstBuffer(input_storage.data(), input_storage.size() * 8);
  }
  std::vector<Buffer> output_buffers() {
    std::vector<Buffer> b;
    for (auto& s : output_storage) b.push_back({s.data(), s.size() * 8});
    return b;
  }
  void run(const SplitOptions& options = {}) {
    split(desc(), input_buffer(), output_buffers(), options);
  }
};

TensorDesc f32(Sizes sizes, Sizes strides = {}) {
  return TensorDesc(DataType::Float32, std::move(sizes), std::move(strides));
}

// Example 1 of the spec, the baseline that negative tests break one rule at a time.
SplitCall example1() {
  return SplitCall(f32({1, 1, 6, 2}), {f32({1, 1, 2, 2}), f32({1, 1, 1, 2}), f32({1, 1, 3, 2})},
                   2);
}

const std::vector<float> kSpecInput = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // {1,1,6,2}

}  // namespace

// ------------------------------------------------------------------------------------------------
// The spec's examples, exact values

TEST_CASE("split: example 1: axis 2 into {1,1,2,2}, {1,1,1,2}, {1,1,3,2}, both entry points") {
  const std::vector<std::vector<float>> expected = {{1, 2, 3, 4}, {5, 6}, {7, 8, 9, 10, 11, 12}};
  {
    std::vector<float> o0(4, -1), o1(2, -1), o2(6, -1);
    const TensorDesc din = f32({1, 1, 6, 2});
    const TensorDesc douts[] = {f32({1, 1, 2, 2}), f32({1, 1, 1, 2}), f32({1, 1, 3, 2})};
    const BufferTensorDesc id = din.desc();
    const BufferTensorDesc ods[] = {douts[0].desc(), douts[1].desc(), douts[2].desc()};
    split(SplitOperatorDesc{&id, 3, ods, 2}, ConstBuffer(kSpecInput.data(), 48),
          {Buffer{o0.data(), 16}, Buffer{o1.data(), 8}, Buffer{o2.data(), 24}});
    CHECK(o0 == expected[0]);
    CHECK(o1 == expected[1]);
    CHECK(o2 == expected[2]);
  }
  {
    std::vector<float> o0(4, -1), o1(2, -1), o2(6, -1);
    split(TensorView<const float>(kSpecInput.data(), {1, 1, 6, 2}),
          {TensorView<float>(o0.data(), {1, 1, 2, 2}), TensorView<float>(o1.data(), {1, 1, 1, 2}),
           TensorView<float>(o2.data(), {1, 1, 3, 2})},
          2);
    CHECK(o0 == expected[0]);
    CHECK(o1 == expected[1]);
    CHECK(o2 == expected[2]);
  }
}

TEST_CASE("split: example 2: axis 3 into two {1,1,6,1}, both entry points") {
  const std::vector<float> e0 = {1, 3, 5, 7, 9, 11}, e1 = {2, 4, 6, 8, 10, 12};
  {
    std::vector<float> o0(6, -1), o1(6, -1);
    const TensorDesc din = f32({1, 1, 6, 2}), dout = f32({1, 1, 6, 1});
    const BufferTensorDesc id = din.desc();
    const BufferTensorDesc ods[] = {dout.desc(), dout.desc()};
    split(SplitOperatorDesc{&id, 2, ods, 3}, ConstBuffer(kSpecInput.data(), 48),
          {Buffer{o0.data(), 24}, Buffer{o1.data(), 24}});
    CHECK(o0 == e0);
    CHECK(o1 == e1);
  }
  {
    std::vector<float> o0(6, -1), o1(6, -1);
    const std::vector<TensorView<float>> outs = {TensorView<float>(o0.data(), {1, 1, 6, 1}),
                                                 TensorView<float>(o1.data(), {1, 1, 6, 1})};
    split(TensorView<const float>(kSpecInput.data(), {1, 1, 6, 2}), outs, 3);
    CHECK(o0 == e0);
    CHECK(o1 == e1);
  }
}

TEST_CASE("split: one output is a copy, and the possible splits of an axis of 3") {
  const std::vector<std::int32_t> in = {5, -6, 7, -8, 9, -10};  // {2,3}
  std::vector<std::int32_t> out(6, 0);
  split(TensorView<const std::int32_t>(in.data(), {2, 3}),
        {TensorView<std::int32_t>(out.data(), {2, 3})}, 1);
  CHECK(out == in);
  for (const Sizes& pieces : {Sizes{1, 1, 1}, Sizes{1, 2}, Sizes{2, 1}, Sizes{3}}) {
    CHECK(infer_split_output_sizes(Sizes{2, 3}, 1, pieces).size() == pieces.size());
  }
}

// ------------------------------------------------------------------------------------------------
// Every type, ranks 1-8, every axis

namespace {

// The runtime layer on a packed input given as bytes; returns each output's first bytes.
std::vector<std::vector<unsigned char>> run_split_runtime(DataType type, const Sizes& in_sizes,
                                                          const void* in_data,
                                                          std::size_t in_bytes,
                                                          const std::vector<Sizes>& out_sizes,
                                                          const std::vector<std::size_t>& out_bytes,
                                                          std::uint32_t axis) {
  const TensorDesc din(type, in_sizes);
  const BufferTensorDesc id = din.desc();
  std::vector<std::uint64_t> in_storage = words_for(id);
  std::memcpy(in_storage.data(), in_data, in_bytes);
  std::vector<TensorDesc> descs;
  std::vector<BufferTensorDesc> raw;
  std::vector<std::vector<std::uint64_t>> storage;
  std::vector<Buffer> buffers;
  for (const Sizes& s : out_sizes) descs.emplace_back(type, s);
  for (std::size_t i = 0; i < descs.size(); ++i) {
    raw.push_back(descs[i].desc());
    storage.push_back(words_for(raw[i]));
  }
  for (auto& s : storage) buffers.push_back({s.data(), s.size() * 8});
  split(SplitOperatorDesc{&id, 3, raw.data(), axis},
        ConstBuffer(in_storage.data(), in_storage.size() * 8), buffers);
  std::vector<std::vector<unsigned char>> outs;
  for (std::size_t i = 0; i < storage.size(); ++i) {
    outs.emplace_back(out_bytes[i]);
    std::memcpy(outs.back().data(), storage[i].data(), out_bytes[i]);
  }
  return outs;
}

// Whether each output of each layer holds what expected_split puts in it.
struct LayerResults {
  std::vector<bool> typed_matches_expected;
  std::vector<bool> runtime_matches_expected;
};

// An input of kBase's first `rank` sizes with 6 along `axis`, split into pieces 1, 2 and 3.
// At most 144 elements per case, so values stay distinct even in 8 bits.
template <class T>
LayerResults split_every_element(std::uint32_t rank, std::uint32_t axis) {
  constexpr std::uint32_t kBase[8] = {2, 3, 1, 2, 1, 2, 1, 1};
  const Sizes pieces = {1, 2, 3};
  Sizes in_sizes(kBase, kBase + rank);
  in_sizes[axis] = 6;
  const std::vector<T> x = dmlref::test::distinct_buffer<T>(count_of(in_sizes));
  std::vector<Sizes> out_sizes;
  for (std::uint32_t p : pieces) {
    out_sizes.push_back(in_sizes);
    out_sizes.back()[axis] = p;
  }
  const auto expected = expected_split(x, in_sizes, out_sizes, axis);

  LayerResults r;
  std::vector<std::vector<T>> outs;
  std::vector<TensorView<T>> views;
  for (const Sizes& s : out_sizes) outs.emplace_back(count_of(s), T{});
  for (std::size_t i = 0; i < outs.size(); ++i) {
    views.emplace_back(outs[i].data(), Layout::packed(out_sizes[i]));
  }
  split(TensorView<const T>(x.data(), Layout::packed(in_sizes)), views, axis);
  for (std::size_t i = 0; i < outs.size(); ++i) {
    r.typed_matches_expected.push_back(all_same_bits(outs[i], expected[i]));
  }

  std::vector<std::size_t> out_bytes;
  for (const auto& e : expected) out_bytes.push_back(e.size() * sizeof(T));
  const auto bytes =
      run_split_runtime(data_type_of<T>, in_sizes, x.data(), x.size() * sizeof(T), out_sizes,
                        out_bytes, axis);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::vector<T> got(expected[i].size());
    std::memcpy(static_cast<void*>(got.data()), bytes[i].data(), bytes[i].size());
    r.runtime_matches_expected.push_back(all_same_bits(got, expected[i]));
  }
  return r;
}

// Ranks 1-8, every axis; CAPTURE and CHECK stay out of the per-type instantiations.
void check_split_every_element(LayerResults (*run)(std::uint32_t, std::uint32_t)) {
  for (std::uint32_t rank = 1; rank <= 8; ++rank) {
    for (std::uint32_t axis = 0; axis < rank; ++axis) {
      CAPTURE(rank);
      CAPTURE(axis);
      const LayerResults r = run(rank, axis);
      for (std::size_t i = 0; i < r.typed_matches_expected.size(); ++i) {
        CHECK(r.typed_matches_expected[i]);
      }
      for (std::size_t i = 0; i < r.runtime_matches_expected.size(); ++i) {
        CHECK(r.runtime_matches_expected[i]);
      }
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("split: places every element of every type: ranks 1-8, every axis, both layers",
                   T, DMLREF_ALL_TYPES) {
  check_split_every_element(&split_every_element<T>);
}

namespace {

// Bit patterns arithmetic would change: NaN payloads (signalling and quiet, both signs), -0,
// subnormals, infinities.
template <class T>
std::vector<T> special_values() {
  if constexpr (std::is_same_v<T, float16>) {
    return {float16::from_bits(0x7C01), float16::from_bits(0xFE37), float16::from_bits(0x8000),
            float16::from_bits(0x0001), float16::from_bits(0x7DFF), float16::from_bits(0xFC00)};
  } else if constexpr (std::is_same_v<T, float>) {
    return {std::bit_cast<float>(0x7F800001u), std::bit_cast<float>(0xFFC12345u), -0.0f,
            std::bit_cast<float>(0x00000001u), std::bit_cast<float>(0x7FA00000u),
            std::bit_cast<float>(0xFF800000u)};
  } else {
    return {std::bit_cast<double>(0x7FF0000000000001ull),
            std::bit_cast<double>(0xFFF8DEADBEEF0000ull),
            -0.0,
            std::bit_cast<double>(0x0000000000000001ull),
            std::bit_cast<double>(0x7FF4000000000123ull),
            std::bit_cast<double>(0xFFF0000000000000ull)};
  }
}

}  // namespace

TEST_CASE_TEMPLATE("split: moves NaN payloads, negative zero and subnormals bit-exactly", T,
                   float16, float, double) {
  const std::vector<T> x = special_values<T>();  // {6}
  const std::vector<T> e0(x.begin(), x.begin() + 4), e1(x.begin() + 4, x.end());
  {
    std::vector<T> o0(4, T{}), o1(2, T{});
    split(TensorView<const T>(x.data(), {6}),
          {TensorView<T>(o0.data(), {4}), TensorView<T>(o1.data(), {2})}, 0);
    CHECK(all_same_bits(o0, e0));
    CHECK(all_same_bits(o1, e1));
  }
  {
    const TensorDesc din(data_type_of<T>, {6}), d0(data_type_of<T>, {4}), d1(data_type_of<T>, {2});
    const BufferTensorDesc id = din.desc();
    const BufferTensorDesc ods[] = {d0.desc(), d1.desc()};
    std::vector<std::uint64_t> si = words_for(id), s0 = words_for(ods[0]), s1 = words_for(ods[1]);
    std::memcpy(si.data(), x.data(), 6 * sizeof(T));
    split(SplitOperatorDesc{&id, 2, ods, 0}, ConstBuffer(si.data(), si.size() * 8),
          {Buffer{s0.data(), s0.size() * 8}, Buffer{s1.data(), s1.size() * 8}});
    CHECK(all_same_bits(read_elements<T>(s0, 4), e0));
    CHECK(all_same_bits(read_elements<T>(s1, 2), e1));
  }
}

// ------------------------------------------------------------------------------------------------
// Strided operands

TEST_CASE_TEMPLATE("split: reads transposed, padded, broadcast and reversed inputs", T, float,
                   dmlref::float16, std::int64_t, std::uint8_t) {
  // Logical input {2,4}: x(r,c); split along axis 1 into {2,1} and {2,3}.
  auto x = [](std::uint32_t r, std::uint32_t c) { return distinct_value<T>(10 + 4 * r + c); };
  auto check = [&](const std::vector<T>& o0, const std::vector<T>& o1, auto logical) {
    for (std::uint32_t r = 0; r < 2; ++r) {
      CAPTURE(r);
      CHECK(same_bits(o0[r], logical(r, 0)));
      for (std::uint32_t c = 0; c < 3; ++c) CHECK(same_bits(o1[3 * r + c], logical(r, 1 + c)));
    }
  };
  auto run = [](TensorView<const T> input) {
    std::pair<std::vector<T>, std::vector<T>> o{std::vector<T>(2, T{}), std::vector<T>(6, T{})};
    split(input, {TensorView<T>(o.first.data(), {2, 1}), TensorView<T>(o.second.data(), {2, 3})},
          1);
    return o;
  };
  SUBCASE("transposed and padded") {
    std::vector<T> s(12, distinct_value<T>(99));  // column-major, 3 per column
    for (std::uint32_t r = 0; r < 2; ++r)
      for (std::uint32_t c = 0; c < 4; ++c) s[3 * c + r] = x(r, c);
    const auto [o0, o1] = run(TensorView<const T>(s.data(), Layout::strided({2, 4}, {1, 3})));
    check(o0, o1, x);
  }
  SUBCASE("broadcast rows") {
    std::vector<T> s = {x(0, 0), x(0, 1), x(0, 2), x(0, 3)};
    const auto [o0, o1] = run(TensorView<const T>(s.data(), Layout::strided({2, 4}, {0, 1})));
    check(o0, o1, [&](std::uint32_t, std::uint32_t c) { return x(0, c); });
  }
  SUBCASE("reversed (negative strides, typed layer only)") {
    std::vector<T> s(8);
    for (std::uint32_t r = 0; r < 2; ++r)
      for (std::uint32_t c = 0; c < 4; ++c) s[7 - (4 * r + c)] = x(r, c);
    const auto [o0, o1] = run(TensorView<const T>(s.data() + 7, Layout::strided({2, 4}, {-4, -1})));
    check(o0, o1, x);
  }
}

TEST_CASE("split: writes strided outputs and nothing in between") {
  const std::vector<std::uint16_t> in = {1, 2, 3, 4, 5, 6, 7, 8};  // {2,4}
  SUBCASE("padded and transposed outputs, typed") {
    std::vector<std::uint16_t> o0(5, 0xEEEE), o1(6, 0xEEEE);
    split(TensorView<const std::uint16_t>(in.data(), {2, 4}),
          {TensorView<std::uint16_t>(o0.data(), Layout::strided({2, 1}, {4, 1})),
           TensorView<std::uint16_t>(o1.data(), Layout::strided({2, 3}, {1, 2}))},
          1);
    CHECK(o0 == std::vector<std::uint16_t>{1, 0xEEEE, 0xEEEE, 0xEEEE, 5});
    CHECK(o1 == std::vector<std::uint16_t>{2, 6, 3, 7, 4, 8});
  }
  SUBCASE("two outputs in one buffer, disjoint halves, runtime with strides") {
    // Both outputs {2,2} with row stride 4 would interleave; these take separate halves.
    std::vector<std::uint16_t> shared(16, 0xEEEE);
    const TensorDesc din(DataType::UInt16, {2, 4}), dout(DataType::UInt16, {2, 2}, {3, 1});
    const BufferTensorDesc id = din.desc();
    const BufferTensorDesc ods[] = {dout.desc(), dout.desc()};
    split(SplitOperatorDesc{&id, 2, ods, 1}, ConstBuffer(in.data(), 16),
          {Buffer{shared.data(), 12}, Buffer{shared.data() + 8, 12}});
    CHECK(shared == std::vector<std::uint16_t>{1, 2, 0xEEEE, 5, 6, 0xEEEE, 0xEEEE, 0xEEEE, 3, 4,
                                               0xEEEE, 7, 8, 0xEEEE, 0xEEEE, 0xEEEE});
  }
  SUBCASE("broadcast input, runtime") {
    const TensorDesc din(DataType::UInt16, {2, 4}, {0, 1}), d0(DataType::UInt16, {2, 1}),
        d1(DataType::UInt16, {2, 3});
    const BufferTensorDesc id = din.desc();
    const BufferTensorDesc ods[] = {d0.desc(), d1.desc()};
    std::vector<std::uint16_t> o0(2, 0), o1(6, 0);
    split(SplitOperatorDesc{&id, 2, ods, 1}, ConstBuffer(in.data(), 8),
          {Buffer{o0.data(), 4}, Buffer{o1.data(), 12}});
    CHECK(o0 == std::vector<std::uint16_t>{1, 1});
    CHECK(o1 == std::vector<std::uint16_t>{2, 3, 4, 2, 3, 4});
  }
}

TEST_CASE("split: outputs that interleave in one byte range are rejected, conservatively (T13)") {
  // Even and odd elements of one buffer never share a byte, but the byte-range check of T13 cannot
  // tell; the message says the check is conservative.
  const std::vector<std::uint16_t> in = {1, 2, 3, 4};  // {2,2}, split along axis 1
  std::vector<std::uint16_t> shared(4, 0);
  const Layout every_other = Layout::strided({2, 1}, {2, 1});
  DMLREF_CHECK_ERROR(split(TensorView<const std::uint16_t>(in.data(), {2, 2}),
                           {TensorView<std::uint16_t>(shared.data(), every_other),
                            TensorView<std::uint16_t>(shared.data() + 1, every_other)},
                           1),
                     ErrorCode::T13,
                     "tensors that interleave within one range count as overlapping");
}

// ------------------------------------------------------------------------------------------------
// Property: split(join(xs)) == xs on seeded random shapes, every axis

TEST_CASE_TEMPLATE("split: split(join(xs)) == xs on random shapes along every axis", T,
                   std::uint32_t, double) {
  std::mt19937 rng(987654321u);
  auto uniform = [&](std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 60; ++trial) {
    const std::uint32_t rank = uniform(1, 8);
    Sizes sizes(rank);
    for (auto& s : sizes) s = uniform(1, rank > 5 ? 2 : 4);
    for (std::uint32_t axis = 0; axis < rank; ++axis) {
      CAPTURE(trial);
      CAPTURE(axis);
      const std::uint32_t n = uniform(1, 4);
      std::vector<Sizes> xs_sizes;
      std::vector<std::vector<T>> xs;
      std::uint64_t next = 0;
      for (std::uint32_t i = 0; i < n; ++i) {
        xs_sizes.push_back(sizes);
        xs_sizes.back()[axis] = uniform(1, 3);
        xs.push_back(dmlref::test::distinct_buffer<T>(count_of(xs_sizes.back()), next));
        next += xs.back().size();
      }
      const Sizes joined_sizes = infer_join_output_sizes(xs_sizes, axis);
      std::vector<TensorView<const T>> inputs;
      for (std::uint32_t i = 0; i < n; ++i) {
        inputs.emplace_back(xs[i].data(), Layout::packed(xs_sizes[i]));
      }
      std::vector<T> joined(count_of(joined_sizes), T{});
      join(inputs, TensorView<T>(joined.data(), Layout::packed(joined_sizes)), axis);
      std::vector<std::vector<T>> back;
      std::vector<TensorView<T>> outputs;
      for (std::uint32_t i = 0; i < n; ++i) back.emplace_back(xs[i].size(), T{});
      for (std::uint32_t i = 0; i < n; ++i) {
        outputs.emplace_back(back[i].data(), Layout::packed(xs_sizes[i]));
      }
      split(TensorView<const T>(joined.data(), Layout::packed(joined_sizes)), outputs, axis);
      for (std::uint32_t i = 0; i < n; ++i) CHECK(all_same_bits(back[i], xs[i]));
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Output-size inference

TEST_CASE("split: infer_split_output_sizes from pieces or an even count, with its checks") {
  const Sizes in = {1, 1, 6, 2};
  CHECK(infer_split_output_sizes(in, 2, {2, 1, 3}) ==
        std::vector<Sizes>{{1, 1, 2, 2}, {1, 1, 1, 2}, {1, 1, 3, 2}});
  CHECK(infer_split_output_sizes(in, 3, 2u) == std::vector<Sizes>{{1, 1, 6, 1}, {1, 1, 6, 1}});
  CHECK(infer_split_output_sizes(in, 2, 3) ==
        std::vector<Sizes>{{1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 2, 2}});
  CHECK(infer_split_output_sizes(in, 2, {6}) == std::vector<Sizes>{{1, 1, 6, 2}});  // one piece
  DMLREF_CHECK_ERROR(infer_split_output_sizes(in, 4, 2u), ErrorCode::S4,
                     "SPLIT: Axis is 4 but InputTensor.DimensionCount is 4; Axis must be in "
                     "[0, 3]");
  DMLREF_CHECK_ERROR(infer_split_output_sizes(in, 2, {2, 3}), ErrorCode::S6,
                     "the pieces add up to 5 but InputTensor.Sizes[2] is 6");
  DMLREF_CHECK_ERROR(infer_split_output_sizes(in, 2, {2, 0, 4}), ErrorCode::T3,
                     "pieces[1] is 0, which would make OutputTensors[1].Sizes[2] 0");
  DMLREF_CHECK_ERROR(infer_split_output_sizes(in, 2, Sizes{}), ErrorCode::S1, "no pieces given");
  DMLREF_CHECK_ERROR(infer_split_output_sizes(in, 2, 4u), ErrorCode::S6,
                     "InputTensor.Sizes[2] is 6, which does not divide evenly into 4 outputs");
  DMLREF_CHECK_ERROR(infer_split_output_sizes(in, 2, 0u), ErrorCode::S1,
                     "OutputCount must be greater than 0");
  DMLREF_CHECK_ERROR(infer_split_output_sizes(Sizes{}, 0, 1u), ErrorCode::T2,
                     "InputTensor.DimensionCount is 0");
  DMLREF_CHECK_ERROR(infer_split_output_sizes(Sizes(9, 1), 0, 1u), ErrorCode::T2,
                     "InputTensor.DimensionCount is 9");
  DMLREF_CHECK_ERROR(infer_split_output_sizes(Sizes{2, 0}, 0, 1u), ErrorCode::T3,
                     "InputTensor.Sizes[1] is 0");
}

// ------------------------------------------------------------------------------------------------
// Validation without running

TEST_CASE("split: validate_split alone returns the layouts and each output's offset") {
  SplitCall call = example1();
  const SplitLayouts layouts = validate_split(call.desc());
  CHECK(layouts.data_type == DataType::Float32);
  CHECK(layouts.axis == 2);
  CHECK(layouts.input == Layout::packed({1, 1, 6, 2}));
  REQUIRE(layouts.outputs.size() == 3);
  CHECK(layouts.outputs[2] == Layout::packed({1, 1, 3, 2}));
  CHECK(layouts.axis_offsets == std::vector<std::uint32_t>{0, 2, 3});
  CHECK(validate_split(call.desc(), call.input_buffer(), call.output_buffers()).axis_offsets ==
        layouts.axis_offsets);

  std::vector<float> o0(4), o1(2), o2(6);
  const SplitLayouts typed =
      validate_split(TensorView<const float>(kSpecInput.data(), {1, 1, 6, 2}),
                     {TensorView<float>(o0.data(), {1, 1, 2, 2}),
                      TensorView<float>(o1.data(), {1, 1, 1, 2}),
                      TensorView<float>(o2.data(), {1, 1, 3, 2})},
                     2);
  CHECK(typed.axis_offsets == layouts.axis_offsets);
  CHECK(o0 == std::vector<float>(4, 0.0f));  // validation never writes
}

// ------------------------------------------------------------------------------------------------
// One negative test per rule (runtime layer unless stated)

TEST_CASE("split: S1: OutputCount 0") {
  SplitCall call = example1();
  SplitOperatorDesc d = call.desc();
  d.OutputCount = 0;
  DMLREF_CHECK_ERROR(split(d, call.input_buffer(), std::span<const Buffer>()), ErrorCode::S1,
                     "SPLIT: OutputCount is 0; it must be greater than 0");
  DMLREF_CHECK_ERROR(validate_split(d), ErrorCode::S1, "OutputCount is 0");
  const std::vector<float> in(4);
  DMLREF_CHECK_ERROR(split(TensorView<const float>(in.data(), {4}),
                           std::span<const TensorView<float>>(), 0),
                     ErrorCode::S1, "OutputCount is 0 (no output views)");
}

TEST_CASE("split: null pointers and a buffer count that differs from OutputCount") {
  SplitCall call = example1();
  SplitOperatorDesc d = call.desc();
  d.OutputTensors = nullptr;
  DMLREF_CHECK_ERROR(validate_split(d), ErrorCode::NullPointer,
                     "SPLIT: OutputTensors is null but OutputCount is 3");
  d = call.desc();
  d.InputTensor = nullptr;
  DMLREF_CHECK_ERROR(validate_split(d), ErrorCode::NullPointer, "SPLIT: InputTensor is null");
  std::vector<Buffer> buffers = call.output_buffers();
  buffers.pop_back();
  DMLREF_CHECK_ERROR(split(call.desc(), call.input_buffer(), buffers), ErrorCode::InvalidOption,
                     "SPLIT: OutputCount is 3 but 2 output buffer(s) were given");
  buffers = call.output_buffers();
  buffers[2].data = nullptr;
  DMLREF_CHECK_ERROR(split(call.desc(), call.input_buffer(), buffers), ErrorCode::NullPointer,
                     "the buffer of OutputTensors[2] is null");
  DMLREF_CHECK_ERROR(split(call.desc(), ConstBuffer(nullptr, 64), call.output_buffers()),
                     ErrorCode::NullPointer, "the buffer of InputTensor is null");
  const std::vector<float> in(4);
  DMLREF_CHECK_ERROR(split(TensorView<const float>(in.data(), {4}),
                           {TensorView<float>(nullptr, {4})}, 0),
                     ErrorCode::NullPointer, "SPLIT: OutputTensors[0] has a null data pointer");
}

TEST_CASE("split: S2: an output's DimensionCount differs from the input's") {
  SplitCall call(f32({1, 1, 6, 2}), {f32({1, 1, 2, 2}), f32({1, 4, 2})}, 2);
  DMLREF_CHECK_ERROR(call.run(), ErrorCode::S2,
                     "SPLIT: OutputTensors[1].DimensionCount is 3 but InputTensor.DimensionCount "
                     "is 4; every output must have the input's DimensionCount");
}

TEST_CASE("split: S3: an output's DataType differs from the input's") {
  SplitCall call(f32({1, 1, 6, 2}),
                 {f32({1, 1, 2, 2}), TensorDesc(DataType::UInt32, {1, 1, 4, 2})}, 2);
  DMLREF_CHECK_ERROR(call.run(), ErrorCode::S3,
                     "SPLIT: OutputTensors[1].DataType is UINT32 but InputTensor.DataType is "
                     "FLOAT32; every output must have the input's DataType");
}

TEST_CASE("split: S4: Axis not below the DimensionCount") {
  SplitCall call = example1();
  call.axis = 5;
  DMLREF_CHECK_ERROR(call.run(), ErrorCode::S4,
                     "SPLIT: Axis is 5 but InputTensor.DimensionCount is 4; Axis must be in "
                     "[0, 3]");
}

TEST_CASE("split: S5: a dimension other than Axis differs") {
  SplitCall call(f32({4, 6}), {f32({4, 2}), f32({4, 2}), f32({3, 2})}, 1);
  DMLREF_CHECK_ERROR(call.run(), ErrorCode::S5,
                     "SPLIT: OutputTensors[2].Sizes[0] is 3 but InputTensor.Sizes[0] is 4; every "
                     "dimension except Axis (1) must match [S5]");
  const std::vector<float> in(24);
  std::vector<float> o(8);
  DMLREF_CHECK_ERROR(split(TensorView<const float>(in.data(), {4, 6}),
                           {TensorView<float>(o.data(), {2, 4})}, 0),
                     ErrorCode::S5, "OutputTensors[0].Sizes[1] is 4 but InputTensor.Sizes[1] is 6");
}

TEST_CASE("split: S6: the Axis sizes do not sum to the input's") {
  SplitCall call(f32({1, 1, 6, 2}), {f32({1, 1, 2, 2}), f32({1, 1, 3, 2})}, 2);
  DMLREF_CHECK_ERROR(call.run(), ErrorCode::S6,
                     "SPLIT: the OutputTensors' Sizes[2] add up to 5 but InputTensor.Sizes[2] "
                     "is 6");
  const std::vector<float> in(6);
  std::vector<float> a(3), b(6);
  DMLREF_CHECK_ERROR(split(TensorView<const float>(in.data(), {6}),
                           {TensorView<float>(a.data(), {3}), TensorView<float>(b.data(), {6})}, 0),
                     ErrorCode::S6, "add up to 9 but InputTensor.Sizes[0] is 6");
}

TEST_CASE("split: T-rules on its tensors") {
  SUBCASE("T1 DataType") {
    SplitCall call = example1();
    call.outputs[1].DataType = DataType::Unknown;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T1, "SPLIT: OutputTensors[1].DataType is UNKNOWN");
  }
  SUBCASE("T2 DimensionCount") {
    SplitCall call = example1();
    call.input.DimensionCount = 0;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T2,
                       "SPLIT: InputTensor.DimensionCount is 0; it must be between 1 and 8");
  }
  SUBCASE("T3 a size of 0") {
    SplitCall call = example1();
    static const std::uint32_t zero[] = {1, 1, 2, 0};
    call.outputs[0].Sizes = zero;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T3, "SPLIT: OutputTensors[0].Sizes[3] is 0");
    std::vector<float> in(4), o(4);
    DMLREF_CHECK_ERROR(split(TensorView<const float>(in.data(), Layout::packed({0})),
                             {TensorView<float>(o.data(), {4})}, 0),
                       ErrorCode::T3, "InputTensor.Sizes[0] is 0");
  }
  SUBCASE("T4 more than 2^32 - 1 elements") {
    SplitCall call = example1();
    static const std::uint32_t huge[] = {4294967295u, 2, 6, 2};
    call.input.Sizes = huge;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T4, "InputTensor.Sizes {4294967295,2,6,2} hold");
  }
  SUBCASE("T8 TotalTensorSizeInBytes below DMLCalcBufferTensorSize") {
    SplitCall call = example1();
    call.outputs[2].TotalTensorSizeInBytes = 20;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T8,
                       "OutputTensors[2].TotalTensorSizeInBytes is 20 but the tensor needs at "
                       "least 24 bytes");
  }
  SUBCASE("T9 alignment") {
    SplitCall call = example1();
    call.input.GuaranteedBaseOffsetAlignment = 2;  // smaller than FLOAT32's 4 bytes
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T9, "InputTensor.GuaranteedBaseOffsetAlignment is 2");
    call = example1();
    call.outputs[0].GuaranteedBaseOffsetAlignment = 16;
    std::vector<Buffer> buffers = call.output_buffers();
    // Storage is 8-byte aligned: start 8 bytes past a multiple of 16 whatever the allocator gave.
    const std::size_t shift = reinterpret_cast<std::uintptr_t>(buffers[0].data) % 16 == 8 ? 0 : 8;
    buffers[0].data = static_cast<char*>(buffers[0].data) + shift;
    buffers[0].size_in_bytes -= shift;
    DMLREF_CHECK_ERROR(split(call.desc(), call.input_buffer(), buffers), ErrorCode::T9,
                       "OutputTensors[0].GuaranteedBaseOffsetAlignment (16)");
  }
  SUBCASE("T10 a buffer smaller than TotalTensorSizeInBytes") {
    SplitCall call = example1();
    ConstBuffer in = call.input_buffer();
    in.size_in_bytes = 47;
    DMLREF_CHECK_ERROR(split(call.desc(), in, call.output_buffers()), ErrorCode::T10,
                       "the buffer of InputTensor holds 47 bytes but "
                       "InputTensor.TotalTensorSizeInBytes is 48");
  }
  SUBCASE("T11 Flags") {
    SplitCall call = example1();
    call.outputs[1].Flags = TensorFlags::OwnedByDml;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T11,
                       "OutputTensors[1].Flags is DML_TENSOR_FLAG_OWNED_BY_DML (1); that flag is "
                       "for inputs only");
  }
  SUBCASE("T12 an output that addresses an element twice") {
    SplitCall call(f32({2, 4}), {f32({2, 1}), f32({2, 3}, {1, 1})}, 1);
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T12,
                       "OutputTensors[1].Strides {1,1} with Sizes {2,3} address some element "
                       "twice");
    const std::vector<float> in(8);
    std::vector<float> o(8);
    DMLREF_CHECK_ERROR(split(TensorView<const float>(in.data(), {2, 4}),
                             {TensorView<float>(o.data(), Layout::strided({2, 4}, {4, 0}))}, 1),
                       ErrorCode::T12, "OutputTensors[0].Strides[1] is 0 with Sizes[1] 4");
  }
  SUBCASE("T13 two outputs overlap each other") {
    SplitCall call = example1();
    std::vector<Buffer> buffers = call.output_buffers();
    buffers[1] = Buffer{static_cast<char*>(buffers[0].data) + 8, 8};
    DMLREF_CHECK_ERROR(split(call.desc(), call.input_buffer(), buffers), ErrorCode::T13,
                       "OutputTensors[0] (bytes [0, 16)) overlaps OutputTensors[1] "
                       "(bytes [8, 16))");
    const std::vector<float> in(4);
    std::vector<float> o(4);
    DMLREF_CHECK_ERROR(split(TensorView<const float>(in.data(), {4}),
                             {TensorView<float>(o.data(), {2}),
                              TensorView<float>(o.data() + 1, {2})},
                             0),
                       ErrorCode::T13, "OutputTensors[0] (bytes [0, 8)) overlaps OutputTensors[1]");
  }
  SUBCASE("T13 an output overlaps the input") {
    SplitCall call = example1();
    std::vector<Buffer> buffers = call.output_buffers();
    buffers[2] = Buffer{call.input_storage.data() + 1, 24};
    DMLREF_CHECK_ERROR(split(call.desc(), call.input_buffer(), buffers), ErrorCode::T13,
                       "OutputTensors[2] (bytes [8, 32)) overlaps InputTensor (bytes [0, 48))");
    std::vector<float> storage(8);
    DMLREF_CHECK_ERROR(split(TensorView<const float>(storage.data(), {4}),
                             {TensorView<float>(storage.data() + 3, {4})}, 0),
                       ErrorCode::T13, "overlaps InputTensor");
  }
}

TEST_CASE("split: leaves every output byte untouched when validation fails") {
  auto expect_untouched = [](SplitCall& call, const std::vector<Buffer>& buffers,
                             const SplitOptions& options, ErrorCode code) {
    for (auto& s : call.output_storage) std::memset(s.data(), 0xA5, s.size() * 8);
    const auto before = call.output_storage;
    bool threw = false;
    try {
      split(call.desc(), call.input_buffer(), buffers, options);
    } catch (const Error& e) {
      threw = true;
      CHECK_MESSAGE(e.code() == code, e.what());
    }
    CHECK(threw);
    for (std::size_t i = 0; i < before.size(); ++i) {
      CHECK(std::memcmp(before[i].data(), call.output_storage[i].data(), before[i].size() * 8) ==
            0);
    }
  };
  {
    SplitCall call(f32({1, 1, 6, 2}), {f32({1, 1, 2, 2}), f32({1, 1, 3, 2})}, 2);
    expect_untouched(call, call.output_buffers(), {}, ErrorCode::S6);
  }
  {
    SplitCall call(f32({1, 1, 6, 2}), {f32({1, 1, 2, 2}), f32({1, 1, 4, 1})}, 2);
    expect_untouched(call, call.output_buffers(), {}, ErrorCode::S5);
  }
  {
    SplitCall call = example1();
    std::vector<Buffer> buffers = call.output_buffers();
    buffers[2].size_in_bytes = 8;  // the last binding fails after everything else passed
    expect_untouched(call, buffers, {}, ErrorCode::T10);
  }
  {
    SplitCall call = example1();
    std::vector<Buffer> buffers = call.output_buffers();
    buffers[2] = Buffer{call.output_storage[0].data(), 24};  // the last output overlaps the first
    expect_untouched(call, buffers, {}, ErrorCode::T13);
  }
  {
    SplitCall call(TensorDesc(DataType::Int8, {1, 1, 6, 2}),
                   {TensorDesc(DataType::Int8, {1, 1, 3, 2}),
                    TensorDesc(DataType::Int8, {1, 1, 3, 2})},
                   2);
    expect_untouched(call, call.output_buffers(), SplitOptions{FeatureLevel::k1_0},
                     ErrorCode::FeatureLevel);
  }
  {
    const std::vector<std::uint8_t> in(6, 1);
    std::vector<std::uint8_t> a(2, 0xA5), b(3, 0xA5);
    CHECK_THROWS_AS(split(TensorView<const std::uint8_t>(in.data(), {6}),
                          {TensorView<std::uint8_t>(a.data(), {2}),
                           TensorView<std::uint8_t>(b.data(), {3})},
                          0),
                    Error);
    CHECK(a == std::vector<std::uint8_t>(2, 0xA5));
    CHECK(b == std::vector<std::uint8_t>(3, 0xA5));
  }
}

// ------------------------------------------------------------------------------------------------
// Feature levels

TEST_CASE("split: feature-level table") {
  auto call_of = [](DataType type, Sizes in, Sizes out, std::uint32_t axis) {
    return SplitCall(TensorDesc(type, in), {TensorDesc(type, out), TensorDesc(type, out)}, axis);
  };
  SUBCASE("FLOAT64 and INT64 need 4_1") {
    for (DataType type : {DataType::Float64, DataType::Int64}) {
      SplitCall call = call_of(type, {1, 1, 2, 4}, {1, 1, 2, 2}, 3);
      DMLREF_CHECK_ERROR(call.run(SplitOptions{FeatureLevel::k3_0}), ErrorCode::FeatureLevel,
                         "SPLIT: InputTensor.DataType " + std::string(data_type_name(type)) +
                             " needs DML_FEATURE_LEVEL_4_1; the target is DML_FEATURE_LEVEL_3_0");
      CHECK_NOTHROW(call.run(SplitOptions{FeatureLevel::k4_1}));
    }
  }
  SUBCASE("3-D is admitted at 3_0 (SPLIT's 3_0 row takes 1-8 dimensions), rejected at 2_1") {
    SplitCall call = call_of(DataType::Float16, {1, 2, 4}, {1, 2, 2}, 2);
    CHECK_NOTHROW(call.run(SplitOptions{FeatureLevel::k3_0}));
    DMLREF_CHECK_ERROR(call.run(SplitOptions{FeatureLevel::k2_1}), ErrorCode::FeatureLevel,
                       "SPLIT: InputTensor.DimensionCount 3 needs DML_FEATURE_LEVEL_3_0; the "
                       "target is DML_FEATURE_LEVEL_2_1 (which allows 4 to 4)");
    SplitCall eight = call_of(DataType::UInt8, {1, 1, 1, 1, 1, 1, 2, 4}, {1, 1, 1, 1, 1, 1, 2, 2},
                              7);
    CHECK_NOTHROW(eight.run(SplitOptions{FeatureLevel::k3_0}));
  }
  SUBCASE("INT8 needs 2_1") {
    SplitCall call = call_of(DataType::Int8, {1, 1, 2, 4}, {1, 1, 2, 2}, 3);
    DMLREF_CHECK_ERROR(call.run(SplitOptions{FeatureLevel::k1_0}), ErrorCode::FeatureLevel,
                       "InputTensor.DataType INT8 needs DML_FEATURE_LEVEL_2_1; the target is "
                       "DML_FEATURE_LEVEL_1_0");
    CHECK_NOTHROW(call.run(SplitOptions{FeatureLevel::k2_1}));
  }
  SUBCASE("the typed layer applies the same table") {
    const std::vector<std::int64_t> in(8);
    std::vector<std::int64_t> a(4), b(4);
    DMLREF_CHECK_ERROR(split(TensorView<const std::int64_t>(in.data(), {1, 1, 2, 4}),
                             {TensorView<std::int64_t>(a.data(), {1, 1, 2, 2}),
                              TensorView<std::int64_t>(b.data(), {1, 1, 2, 2})},
                             3, SplitOptions{FeatureLevel::k3_0}),
                       ErrorCode::FeatureLevel, "DataType INT64 needs DML_FEATURE_LEVEL_4_1");
  }
  SUBCASE("a target that is no DirectML feature level") {
    SplitCall call = example1();
    DMLREF_CHECK_ERROR(call.run(SplitOptions{static_cast<FeatureLevel>(0x7000)}),
                       ErrorCode::InvalidOption, "is not a DirectML feature level");
  }
}

// ------------------------------------------------------------------------------------------------
// `reversed`: tensors the descriptions stand in for, turned around after every check

TEST_CASE("split: the runtime entry point over a reversed input its description stands in for") {
  const std::vector<float> in = {1, 2, 3, 4, 5, 6};  // read backwards along dimension 1
  std::vector<float> out0(2, -1.0f), out1(4, -1.0f);
  const TensorDesc din(DataType::Float32, {2, 3}), d0(DataType::Float32, {2, 1}),
      d1(DataType::Float32, {2, 2});
  const BufferTensorDesc id = din.desc();
  const BufferTensorDesc outs[] = {d0.desc(), d1.desc()};
  const SplitOperatorDesc desc{&id, 2, outs, 1};
  const std::vector<Buffer> buffers = {{out0.data(), 8}, {out1.data(), 16}};
  // The caller's input is [[3, 2, 1], [6, 5, 4]].
  split(desc, ConstBuffer(in.data(), 24), buffers, {}, std::vector<std::uint8_t>{0b10, 0, 0});
  CHECK(out0 == std::vector<float>{3, 6});
  CHECK(out1 == std::vector<float>{2, 1, 5, 4});
  DMLREF_CHECK_ERROR(split(desc, ConstBuffer(in.data(), 24), buffers, {},
                           std::vector<std::uint8_t>{0b10, 0, 0, 0}),
                     ErrorCode::InvalidOption, "SPLIT: 4 reversed masks were given for 3 tensors");
}

}  // namespace test_split
