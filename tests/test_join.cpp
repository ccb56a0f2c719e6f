// JOIN (include/dmlref/ops/join.hpp): the spec's examples, every type and rank, strided operands,
// the join-after-split property, one negative test per rule, and the feature-level table.
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

namespace test_join {  // this file's own names (tests/CMakeLists.txt: unity groups)

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

// The spec's result computed the other way round: every element of input i goes to the output
// coordinate with its Axis index shifted by the sizes of the inputs before it.
template <class T>
std::vector<T> expected_join(const std::vector<std::vector<T>>& inputs,
                             const std::vector<Sizes>& input_sizes, const Sizes& output_sizes,
                             std::uint32_t axis) {
  std::vector<T> out(count_of(output_sizes));
  std::vector<bool> written(out.size(), false);
  std::uint32_t base = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (std::uint64_t k = 0; k < inputs[i].size(); ++k) {
      Sizes c = unravel(k, input_sizes[i]);
      c[axis] += base;
      const std::uint64_t at = ravel(c, output_sizes);
      REQUIRE(!written[at]);
      written[at] = true;
      out[at] = inputs[i][k];
    }
    base += input_sizes[i][axis];
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

// A runtime JOIN call whose descriptions tests may break one field at a time.
struct JoinCall {
  std::vector<TensorDesc> owned_inputs;
  TensorDesc owned_output;
  std::vector<BufferTensorDesc> inputs;
  BufferTensorDesc output;
  std::uint32_t axis;
  std::vector<std::vector<std::uint64_t>> input_storage;
  std::vector<std::uint64_t> output_storage;

  JoinCall(std::vector<TensorDesc> ins, TensorDesc out, std::uint32_t ax)
      : owned_inputs(std::move(ins)), owned_output(std::move(out)), axis(ax) {
    for (const TensorDesc& d : owned_inputs) inputs.push_back(d.desc());
    output = owned_output.desc();
    for (const BufferTensorDesc& d : inputs) input_storage.push_back(words_for(d));
    output_storage = words_for(output);
  }
  JoinOperatorDesc desc() const {
    return {static_cast<std::uint32_t>(inputs.size()), inputs.data(), &output, axis};
  }
  std::vector<ConstBuffer> input_buffers() const {
    std::vector<ConstBuffer> b;
    for (const auto& s : input_storage) b.emplace_back(s.data(), s.size() * 8);
    return b;
  }
  Buffer output_buffer() { return {output_storage.data(), output_storage.size() * 8}; }
  void run(const JoinOptions& options = {}) {
    join(desc(), input_buffers(), output_buffer(), options);
  }
};

TensorDesc f32(Sizes sizes, Sizes strides = {}) {
  return TensorDesc(DataType::Float32, std::move(sizes), std::move(strides));
}

// Example 1 of the spec, the baseline that negative tests break one rule at a time.
JoinCall example1() {
  return JoinCall({f32({1, 1, 2, 3}), f32({1, 1, 2, 4})}, f32({1, 1, 2, 7}), 3);
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// The spec's examples, exact values

TEST_CASE("join: example 1 through the runtime entry point: axis 3, {1,1,2,3} + {1,1,2,4}") {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {7, 8, 9, 10, 11, 12, 13, 14};
  std::vector<float> out(14, -1.0f);
  const TensorDesc da = f32({1, 1, 2, 3}), db = f32({1, 1, 2, 4}), dout = f32({1, 1, 2, 7});
  const BufferTensorDesc ins[] = {da.desc(), db.desc()};
  const BufferTensorDesc od = dout.desc();
  const JoinOperatorDesc desc{2, ins, &od, 3};
  join(desc, {ConstBuffer(a.data(), 24), ConstBuffer(b.data(), 32)}, Buffer{out.data(), 56});
  CHECK(out == std::vector<float>{1, 2, 3, 7, 8, 9, 10, 4, 5, 6, 11, 12, 13, 14});
}

TEST_CASE("join: example 1 through the typed entry point, no other axis is possible (J5)") {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {7, 8, 9, 10, 11, 12, 13, 14};
  std::vector<float> out(14, -1.0f);
  const std::vector<TensorView<const float>> ins = {{a.data(), {1, 1, 2, 3}},
                                                    {b.data(), {1, 1, 2, 4}}};
  join(ins, TensorView<float>(out.data(), {1, 1, 2, 7}), 3);
  CHECK(out == std::vector<float>{1, 2, 3, 7, 8, 9, 10, 4, 5, 6, 11, 12, 13, 14});
  for (std::uint32_t axis = 0; axis < 3; ++axis) {
    DMLREF_CHECK_ERROR(validate_join(ins, TensorView<float>(out.data(), {1, 1, 2, 7}), axis),
                       ErrorCode::J5, "every dimension except Axis");
  }
}

TEST_CASE("join: example 2: three {1,1,2,2} inputs along axes 1, 2 and 3, both entry points") {
  const std::vector<float> in0 = {1, 2, 3, 4}, in1 = {5, 6, 7, 8}, in2 = {9, 10, 11, 12};
  struct Case {
    std::uint32_t axis;
    Sizes output_sizes;
    std::vector<float> expected;
  };
  const Case cases[] = {
      {1, {1, 3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
      {2, {1, 1, 6, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
      {3, {1, 1, 2, 6}, {1, 2, 5, 6, 9, 10, 3, 4, 7, 8, 11, 12}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.axis);
    {
      std::vector<float> out(12, -1.0f);
      const TensorDesc din = f32({1, 1, 2, 2}), dout = f32(c.output_sizes);
      const BufferTensorDesc ins[] = {din.desc(), din.desc(), din.desc()};
      const BufferTensorDesc od = dout.desc();
      join(JoinOperatorDesc{3, ins, &od, c.axis},
           {ConstBuffer(in0.data(), 16), ConstBuffer(in1.data(), 16), ConstBuffer(in2.data(), 16)},
           Buffer{out.data(), 48});
      CHECK(out == c.expected);
    }
    {
      std::vector<float> out(12, -1.0f);
      const Layout out_layout = Layout::packed(c.output_sizes);
      join({TensorView<const float>(in0.data(), {1, 1, 2, 2}),
            TensorView<const float>(in1.data(), {1, 1, 2, 2}),
            TensorView<const float>(in2.data(), {1, 1, 2, 2})},
           TensorView<float>(out.data(), out_layout), c.axis);
      CHECK(out == c.expected);
    }
  }
}

TEST_CASE("join: joining one input is a copy") {
  const std::vector<std::int32_t> in = {5, -6, 7, -8, 9, -10};
  std::vector<std::int32_t> out(6, 0);
  join({TensorView<const std::int32_t>(in.data(), {2, 3})},
       TensorView<std::int32_t>(out.data(), {2, 3}), 1);
  CHECK(out == in);
}

// ------------------------------------------------------------------------------------------------
// Every type, ranks 1-8, every axis

namespace {

// The runtime layer on packed inputs given as bytes; returns the output's first `out_bytes` bytes.
std::vector<unsigned char> run_join_runtime(DataType type, const std::vector<Sizes>& in_sizes,
                                            const std::vector<const void*>& in_data,
                                            const std::vector<std::size_t>& in_bytes,
                                            const Sizes& out_sizes, std::size_t out_bytes,
                                            std::uint32_t axis) {
  std::vector<TensorDesc> descs;
  std::vector<BufferTensorDesc> raw;
  std::vector<std::vector<std::uint64_t>> storage;
  std::vector<ConstBuffer> buffers;
  for (std::size_t i = 0; i < 3; ++i) descs.emplace_back(type, in_sizes[i]);
  for (std::size_t i = 0; i < 3; ++i) {
    raw.push_back(descs[i].desc());
    storage.push_back(words_for(raw[i]));
    std::memcpy(storage[i].data(), in_data[i], in_bytes[i]);
    buffers.emplace_back(storage[i].data(), storage[i].size() * 8);
  }
  const TensorDesc dout(type, out_sizes);
  const BufferTensorDesc od = dout.desc();
  std::vector<std::uint64_t> out_storage = words_for(od);
  join(JoinOperatorDesc{3, raw.data(), &od, axis}, buffers,
       Buffer{out_storage.data(), out_storage.size() * 8});
  std::vector<unsigned char> out(out_bytes);
  std::memcpy(out.data(), out_storage.data(), out_bytes);
  return out;
}

// Whether each layer placed every element where expected_join puts it.
struct LayerResults {
  bool typed_matches_expected = false;
  bool runtime_matches_expected = false;
};

// Three inputs of Axis sizes 1, 2 and 3 around kBase's first `rank` sizes, joined along `axis`.
// At most 144 elements per case, so values stay distinct even in 8 bits.
template <class T>
LayerResults join_every_element(std::uint32_t rank, std::uint32_t axis) {
  // Size-1 dimensions mixed with larger ones; three inputs of different Axis sizes.
  constexpr std::uint32_t kBase[8] = {2, 3, 1, 2, 1, 2, 1, 1};
  constexpr std::uint32_t kPieces[3] = {1, 2, 3};
  const Sizes base(kBase, kBase + rank);
  std::vector<Sizes> in_sizes;
  std::vector<std::vector<T>> in_values;
  std::uint64_t next = 0;
  for (std::uint32_t piece : kPieces) {
    Sizes s = base;
    s[axis] = piece;
    in_values.push_back(dmlref::test::distinct_buffer<T>(count_of(s), next));
    next += count_of(s);
    in_sizes.push_back(s);
  }
  Sizes out_sizes = base;
  out_sizes[axis] = 6;
  const std::vector<T> expected = expected_join(in_values, in_sizes, out_sizes, axis);

  LayerResults r;
  std::vector<T> out(count_of(out_sizes), T{});
  std::vector<TensorView<const T>> views;
  for (std::size_t i = 0; i < 3; ++i) {
    views.emplace_back(in_values[i].data(), Layout::packed(in_sizes[i]));
  }
  join(views, TensorView<T>(out.data(), Layout::packed(out_sizes)), axis);
  r.typed_matches_expected = all_same_bits(out, expected);

  std::vector<const void*> in_data;
  std::vector<std::size_t> in_bytes;
  for (const auto& v : in_values) {
    in_data.push_back(v.data());
    in_bytes.push_back(v.size() * sizeof(T));
  }
  const std::vector<unsigned char> bytes = run_join_runtime(
      data_type_of<T>, in_sizes, in_data, in_bytes, out_sizes, out.size() * sizeof(T), axis);
  std::vector<T> runtime_out(out.size());
  std::memcpy(static_cast<void*>(runtime_out.data()), bytes.data(), bytes.size());
  r.runtime_matches_expected = all_same_bits(runtime_out, expected);
  return r;
}

// Ranks 1-8, every axis; CAPTURE and CHECK stay out of the per-type instantiations.
void check_join_every_element(LayerResults (*run)(std::uint32_t, std::uint32_t)) {
  for (std::uint32_t rank = 1; rank <= 8; ++rank) {
    for (std::uint32_t axis = 0; axis < rank; ++axis) {
      CAPTURE(rank);
      CAPTURE(axis);
      const LayerResults r = run(rank, axis);
      CHECK(r.typed_matches_expected);
      CHECK(r.runtime_matches_expected);
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("join: places every element of every type: ranks 1-8, every axis, both layers",
                   T, DMLREF_ALL_TYPES) {
  check_join_every_element(&join_every_element<T>);
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

TEST_CASE_TEMPLATE("join: moves NaN payloads, negative zero and subnormals bit-exactly", T, float16,
                   float, double) {
  const std::vector<T> special = special_values<T>();
  const std::vector<T> a(special.begin(), special.begin() + 2);  // {1,2}
  const std::vector<T> b(special.begin() + 2, special.end());    // {1,4}
  for (const bool runtime : {false, true}) {
    CAPTURE(runtime);
    std::vector<T> out(6, T{});
    if (runtime) {
      const TensorDesc da(data_type_of<T>, {1, 2}), db(data_type_of<T>, {1, 4}),
          dout(data_type_of<T>, {1, 6});
      const BufferTensorDesc ins[] = {da.desc(), db.desc()};
      const BufferTensorDesc od = dout.desc();
      std::vector<std::uint64_t> sa = words_for(ins[0]), sb = words_for(ins[1]),
                                 so = words_for(od);
      std::memcpy(sa.data(), a.data(), 2 * sizeof(T));
      std::memcpy(sb.data(), b.data(), 4 * sizeof(T));
      join(JoinOperatorDesc{2, ins, &od, 1},
           {ConstBuffer(sa.data(), sa.size() * 8), ConstBuffer(sb.data(), sb.size() * 8)},
           Buffer{so.data(), so.size() * 8});
      std::memcpy(static_cast<void*>(out.data()), so.data(), 6 * sizeof(T));
    } else {
      join({TensorView<const T>(a.data(), {1, 2}), TensorView<const T>(b.data(), {1, 4})},
           TensorView<T>(out.data(), {1, 6}), 1);
    }
    CHECK(all_same_bits(out, special));
  }
}

// ------------------------------------------------------------------------------------------------
// Strided operands

TEST_CASE_TEMPLATE("join: reads transposed, padded, broadcast and reversed inputs", T, float,
                   dmlref::float16, std::int64_t, std::uint8_t) {
  // Logical inputs (axis 1 of a {2, n} join): A {2,3} = a(r,c), B {2,2} = b(r,c), C {2,1}.
  auto a = [](std::uint32_t r, std::uint32_t c) { return distinct_value<T>(10 + 3 * r + c); };
  auto b = [](std::uint32_t r, std::uint32_t c) { return distinct_value<T>(20 + 2 * r + c); };
  // A stored transposed (column-major), padded to 4 per column.
  std::vector<T> sa(12, distinct_value<T>(99));
  for (std::uint32_t r = 0; r < 2; ++r)
    for (std::uint32_t c = 0; c < 3; ++c) sa[4 * c + r] = a(r, c);
  // B stored with rows padded to 5 elements.
  std::vector<T> sb(10, distinct_value<T>(98));
  for (std::uint32_t r = 0; r < 2; ++r)
    for (std::uint32_t c = 0; c < 2; ++c) sb[5 * r + c] = b(r, c);
  // C broadcasts one element down the rows (stride 0).
  const std::vector<T> sc = {distinct_value<T>(30)};
  // D {2,2} read reversed along both dimensions (typed layer only: negative strides).
  const std::vector<T> sd = {distinct_value<T>(40), distinct_value<T>(41), distinct_value<T>(42),
                             distinct_value<T>(43)};

  std::vector<T> out(16, T{});
  join({TensorView<const T>(sa.data(), Layout::strided({2, 3}, {1, 4})),
        TensorView<const T>(sb.data(), Layout::strided({2, 2}, {5, 1})),
        TensorView<const T>(sc.data(), Layout::strided({2, 1}, {0, 0})),
        TensorView<const T>(sd.data() + 3, Layout::strided({2, 2}, {-2, -1}))},
       TensorView<T>(out.data(), {2, 8}), 1);
  for (std::uint32_t r = 0; r < 2; ++r) {
    CAPTURE(r);
    for (std::uint32_t c = 0; c < 3; ++c) CHECK(same_bits(out[8 * r + c], a(r, c)));
    for (std::uint32_t c = 0; c < 2; ++c) CHECK(same_bits(out[8 * r + 3 + c], b(r, c)));
    CHECK(same_bits(out[8 * r + 5], sc[0]));
    for (std::uint32_t c = 0; c < 2; ++c) {
      CHECK(same_bits(out[8 * r + 6 + c], sd[3 - (2 * r + c)]));
    }
  }
}

TEST_CASE("join: writes strided outputs (padded, transposed) and nothing in between") {
  const std::vector<std::uint16_t> a = {1, 2, 3, 4, 5, 6};  // {2,3}
  const std::vector<std::uint16_t> b = {7, 8};              // {2,1}
  SUBCASE("padded rows, typed") {
    std::vector<std::uint16_t> out(14, 0xEEEE);  // {2,4} with row stride 7
    join({TensorView<const std::uint16_t>(a.data(), {2, 3}),
          TensorView<const std::uint16_t>(b.data(), {2, 1})},
         TensorView<std::uint16_t>(out.data(), Layout::strided({2, 4}, {7, 1})), 1);
    CHECK(out == std::vector<std::uint16_t>{1, 2, 3, 7, 0xEEEE, 0xEEEE, 0xEEEE, 4, 5, 6, 8, 0xEEEE,
                                            0xEEEE, 0xEEEE});
  }
  SUBCASE("transposed, runtime") {
    std::vector<std::uint16_t> out(8, 0xEEEE);  // {2,4} column-major
    const TensorDesc da(DataType::UInt16, {2, 3}), db(DataType::UInt16, {2, 1}),
        dout(DataType::UInt16, {2, 4}, {1, 2});
    const BufferTensorDesc ins[] = {da.desc(), db.desc()};
    const BufferTensorDesc od = dout.desc();
    std::vector<std::uint16_t> bb = {7, 8};
    join(JoinOperatorDesc{2, ins, &od, 1},
         {ConstBuffer(a.data(), 12), ConstBuffer(bb.data(), 4)}, Buffer{out.data(), 16});
    CHECK(out == std::vector<std::uint16_t>{1, 4, 2, 5, 3, 6, 7, 8});
  }
  SUBCASE("broadcast and padded inputs, runtime") {
    // InputTensors[0] {2,3} strides {0,1}: both rows read {1,2,3}; [1] {2,1} strides {3,1}.
    const TensorDesc da(DataType::UInt16, {2, 3}, {0, 1}), db(DataType::UInt16, {2, 1}, {3, 1}),
        dout(DataType::UInt16, {2, 4});
    const BufferTensorDesc ins[] = {da.desc(), db.desc()};
    const BufferTensorDesc od = dout.desc();
    const std::vector<std::uint16_t> sb = {7, 0, 0, 8};
    std::vector<std::uint16_t> out(8, 0xEEEE);
    join(JoinOperatorDesc{2, ins, &od, 1}, {ConstBuffer(a.data(), 8), ConstBuffer(sb.data(), 8)},
         Buffer{out.data(), 16});
    CHECK(out == std::vector<std::uint16_t>{1, 2, 3, 7, 1, 2, 3, 8});
  }
}

TEST_CASE("join: inputs may share one buffer (T13 allows inputs to overlap each other)") {
  const std::vector<std::int16_t> a = {1, 2, 3, 4};
  std::vector<std::int16_t> out(8, 0);
  const TensorDesc da(DataType::Int16, {2, 2}), dout(DataType::Int16, {4, 2});
  const BufferTensorDesc ins[] = {da.desc(), da.desc()};
  const BufferTensorDesc od = dout.desc();
  join(JoinOperatorDesc{2, ins, &od, 0}, {ConstBuffer(a.data(), 8), ConstBuffer(a.data(), 8)},
       Buffer{out.data(), 16});
  CHECK(out == std::vector<std::int16_t>{1, 2, 3, 4, 1, 2, 3, 4});
}

// ------------------------------------------------------------------------------------------------
// Property: join(split(x)) == x on seeded random shapes, every axis

TEST_CASE_TEMPLATE("join: join(split(x)) == x on random shapes along every axis", T,
                   std::uint32_t, dmlref::float16) {
  std::mt19937 rng(20240611u);
  auto uniform = [&](std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 60; ++trial) {
    const std::uint32_t rank = uniform(1, 8);
    Sizes sizes(rank);
    for (auto& s : sizes) s = uniform(1, rank > 5 ? 2 : 4);
    for (std::uint32_t axis = 0; axis < rank; ++axis) {
      Sizes x_sizes = sizes;
      x_sizes[axis] = uniform(1, 7);
      CAPTURE(trial);
      CAPTURE(axis);
      std::vector<std::uint32_t> pieces;
      for (std::uint32_t left = x_sizes[axis]; left > 0;) {
        pieces.push_back(uniform(1, left));
        left -= pieces.back();
      }
      const std::vector<T> x = dmlref::test::distinct_buffer<T>(count_of(x_sizes), 7);
      const auto piece_sizes = infer_split_output_sizes(x_sizes, axis, pieces);
      std::vector<std::vector<T>> storage;
      std::vector<TensorView<T>> parts;
      for (const Sizes& s : piece_sizes) storage.emplace_back(count_of(s), T{});
      for (std::size_t i = 0; i < piece_sizes.size(); ++i) {
        parts.emplace_back(storage[i].data(), Layout::packed(piece_sizes[i]));
      }
      split(TensorView<const T>(x.data(), Layout::packed(x_sizes)), parts, axis);
      std::vector<T> back(x.size(), T{});
      join(parts, TensorView<T>(back.data(), Layout::packed(x_sizes)), axis);
      CHECK(all_same_bits(back, x));
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Output-size inference

TEST_CASE("join: infer_join_output_sizes sums the Axis sizes and checks J1, J2, J4, J5, T2-T4") {
  CHECK(infer_join_output_sizes({{1, 1, 2, 3}, {1, 1, 2, 4}}, 3) == Sizes{1, 1, 2, 7});
  CHECK(infer_join_output_sizes({{1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 2, 2}}, 1) ==
        Sizes{1, 3, 2, 2});
  CHECK(infer_join_output_sizes({{5}}, 0) == Sizes{5});
  DMLREF_CHECK_ERROR(infer_join_output_sizes(std::span<const Sizes>(), 0), ErrorCode::J1,
                     "InputCount must be greater than 0");
  DMLREF_CHECK_ERROR(infer_join_output_sizes({{1, 2}, {1, 2, 3}}, 0), ErrorCode::J2,
                     "InputTensors[1].DimensionCount is 3 but InputTensors[0].DimensionCount is 2");
  DMLREF_CHECK_ERROR(infer_join_output_sizes({{1, 2}, {1, 2}}, 2), ErrorCode::J4,
                     "Axis is 2 but the inputs' DimensionCount is 2; Axis must be in [0, 1]");
  DMLREF_CHECK_ERROR(infer_join_output_sizes({{1, 1, 2, 3}, {1, 1, 2, 4}}, 2), ErrorCode::J5,
                     "InputTensors[1].Sizes[3] is 4 but InputTensors[0].Sizes[3] is 3");
  DMLREF_CHECK_ERROR(infer_join_output_sizes({{}}, 0), ErrorCode::T2,
                     "InputTensors[0].DimensionCount is 0");
  DMLREF_CHECK_ERROR(infer_join_output_sizes({{1, 0}}, 0), ErrorCode::T3,
                     "InputTensors[0].Sizes[1] is 0");
  DMLREF_CHECK_ERROR(infer_join_output_sizes({{65536, 65536}}, 0), ErrorCode::T4,
                     "InputTensors[0].Sizes {65536,65536} hold 4294967296 elements");
  DMLREF_CHECK_ERROR(infer_join_output_sizes({{65536, 32768}, {65536, 32768}}, 1), ErrorCode::T4,
                     "OutputTensor.Sizes {65536,65536}");
}

// ------------------------------------------------------------------------------------------------
// Validation without running

TEST_CASE("join: validate_join alone returns the layouts and each input's offset") {
  const TensorDesc a = f32({1, 1, 2, 3}), b = f32({1, 1, 2, 4}, {8, 8, 4, 1}),
                   out = f32({1, 1, 2, 7});
  const BufferTensorDesc ins[] = {a.desc(), b.desc()};
  const BufferTensorDesc od = out.desc();
  const JoinLayouts layouts = validate_join(JoinOperatorDesc{2, ins, &od, 3});
  CHECK(layouts.data_type == DataType::Float32);
  CHECK(layouts.axis == 3);
  REQUIRE(layouts.inputs.size() == 2);
  CHECK(layouts.inputs[1] == Layout::strided({1, 1, 2, 4}, {8, 8, 4, 1}));
  CHECK(layouts.output == Layout::packed({1, 1, 2, 7}));
  CHECK(layouts.axis_offsets == std::vector<std::uint32_t>{0, 3});

  const std::vector<float> x(6), y(8);
  std::vector<float> o(14);
  const JoinLayouts typed = validate_join({TensorView<const float>(x.data(), {1, 1, 2, 3}),
                                           TensorView<const float>(y.data(), {1, 1, 2, 4})},
                                          TensorView<float>(o.data(), {1, 1, 2, 7}), 3);
  CHECK(typed.axis_offsets == std::vector<std::uint32_t>{0, 3});
  CHECK(typed.data_type == DataType::Float32);
}

// ------------------------------------------------------------------------------------------------
// One negative test per rule (runtime layer unless stated)

TEST_CASE("join: J1: InputCount 0") {
  JoinCall call = example1();
  JoinOperatorDesc d = call.desc();
  d.InputCount = 0;
  DMLREF_CHECK_ERROR(join(d, std::span<const ConstBuffer>(), call.output_buffer()), ErrorCode::J1,
                     "JOIN: InputCount is 0; it must be greater than 0");
  DMLREF_CHECK_ERROR(validate_join(d), ErrorCode::J1, "InputCount is 0");
  std::vector<float> out(4);
  DMLREF_CHECK_ERROR(join(std::span<const TensorView<const float>>(),
                          TensorView<float>(out.data(), {4}), 0),
                     ErrorCode::J1, "InputCount is 0 (no input views)");
}

TEST_CASE("join: null pointers and a buffer count that differs from InputCount") {
  JoinCall call = example1();
  JoinOperatorDesc d = call.desc();
  d.InputTensors = nullptr;
  DMLREF_CHECK_ERROR(validate_join(d), ErrorCode::NullPointer,
                     "JOIN: InputTensors is null but InputCount is 2");
  d = call.desc();
  d.OutputTensor = nullptr;
  DMLREF_CHECK_ERROR(validate_join(d), ErrorCode::NullPointer, "JOIN: OutputTensor is null");
  call.inputs[1].Sizes = nullptr;
  DMLREF_CHECK_ERROR(validate_join(call.desc()), ErrorCode::NullPointer,
                     "InputTensors[1].Sizes is null");
  call = example1();
  const std::vector<ConstBuffer> one = {call.input_buffers()[0]};
  DMLREF_CHECK_ERROR(join(call.desc(), one, call.output_buffer()), ErrorCode::InvalidOption,
                     "JOIN: InputCount is 2 but 1 input buffer(s) were given");
  std::vector<ConstBuffer> with_null = call.input_buffers();
  with_null[1].data = nullptr;
  DMLREF_CHECK_ERROR(join(call.desc(), with_null, call.output_buffer()), ErrorCode::NullPointer,
                     "the buffer of InputTensors[1] is null");
  DMLREF_CHECK_ERROR(join(call.desc(), call.input_buffers(), Buffer{nullptr, 64}),
                     ErrorCode::NullPointer, "the buffer of OutputTensor is null");
  std::vector<float> out(6);
  DMLREF_CHECK_ERROR(join({TensorView<const float>(nullptr, {2, 3})},
                          TensorView<float>(out.data(), {2, 3}), 0),
                     ErrorCode::NullPointer, "JOIN: InputTensors[0] has a null data pointer");
}

TEST_CASE("join: J2: an input's DimensionCount differs from the output's") {
  JoinCall call({f32({1, 1, 2, 3}), f32({1, 2, 4})}, f32({1, 1, 2, 7}), 3);
  DMLREF_CHECK_ERROR(call.run(), ErrorCode::J2,
                     "JOIN: InputTensors[1].DimensionCount is 3 but OutputTensor.DimensionCount is "
                     "4; every input must have the output's DimensionCount");
  std::vector<float> a(6), o(14);
  DMLREF_CHECK_ERROR(join({TensorView<const float>(a.data(), {2, 3})},
                          TensorView<float>(o.data(), {1, 2, 3}), 0),
                     ErrorCode::J2, "InputTensors[0].DimensionCount is 2");
}

TEST_CASE("join: J3: an input's DataType differs from the output's") {
  JoinCall call({f32({1, 1, 2, 3}), TensorDesc(DataType::Int32, {1, 1, 2, 4})}, f32({1, 1, 2, 7}),
                3);
  DMLREF_CHECK_ERROR(call.run(), ErrorCode::J3,
                     "JOIN: InputTensors[1].DataType is INT32 but OutputTensor.DataType is "
                     "FLOAT32; every input must have the output's DataType");
}

TEST_CASE("join: J4: Axis not below the DimensionCount") {
  JoinCall call = example1();
  call.axis = 4;
  DMLREF_CHECK_ERROR(call.run(), ErrorCode::J4,
                     "JOIN: Axis is 4 but OutputTensor.DimensionCount is 4; Axis must be in "
                     "[0, 3]");
  std::vector<float> a(6), o(6);
  DMLREF_CHECK_ERROR(join({TensorView<const float>(a.data(), {2, 3})},
                          TensorView<float>(o.data(), {2, 3}), 7),
                     ErrorCode::J4, "Axis is 7");
}

TEST_CASE("join: J5: a dimension other than Axis differs") {
  JoinCall call({f32({1, 1, 2, 3}), f32({1, 1, 3, 3})}, f32({1, 1, 2, 6}), 3);
  DMLREF_CHECK_ERROR(call.run(), ErrorCode::J5,
                     "JOIN: InputTensors[1].Sizes[2] is 3 but OutputTensor.Sizes[2] is 2; every "
                     "dimension except Axis (3) must match [J5]");
}

TEST_CASE("join: J6: the Axis sizes do not sum to the output's") {
  JoinCall call({f32({1, 1, 2, 3}), f32({1, 1, 2, 4})}, f32({1, 1, 2, 8}), 3);
  DMLREF_CHECK_ERROR(call.run(), ErrorCode::J6,
                     "JOIN: the InputTensors' Sizes[3] add up to 7 but OutputTensor.Sizes[3] is 8");
  std::vector<float> a(6), o(8);
  DMLREF_CHECK_ERROR(join({TensorView<const float>(a.data(), {2, 3})},
                          TensorView<float>(o.data(), {2, 4}), 1),
                     ErrorCode::J6, "add up to 3 but OutputTensor.Sizes[1] is 4");
}

TEST_CASE("join: T-rules on its tensors") {
  SUBCASE("T1 DataType") {
    JoinCall call = example1();
    call.inputs[0].DataType = DataType::Unknown;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T1, "JOIN: InputTensors[0].DataType is UNKNOWN");
    call.inputs[0].DataType = static_cast<DataType>(42);
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T1, "42 (not a DML_TENSOR_DATA_TYPE)");
  }
  SUBCASE("T2 DimensionCount") {
    JoinCall call = example1();
    call.output.DimensionCount = 9;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T2,
                       "JOIN: OutputTensor.DimensionCount is 9; it must be between 1 and 8");
    std::vector<float> a(4), o(4);
    DMLREF_CHECK_ERROR(join({TensorView<const float>(a.data(), Layout{})},
                            TensorView<float>(o.data(), {4}), 0),
                       ErrorCode::T2, "InputTensors[0].DimensionCount is 0");
  }
  SUBCASE("T3 a size of 0") {
    JoinCall call = example1();
    static const std::uint32_t zero[] = {1, 1, 0, 3};
    call.inputs[0].Sizes = zero;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T3, "JOIN: InputTensors[0].Sizes[2] is 0");
  }
  SUBCASE("T4 more than 2^32 - 1 elements") {
    JoinCall call = example1();
    static const std::uint32_t huge[] = {65536, 65536, 1, 3};
    call.inputs[1].Sizes = huge;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T4,
                       "InputTensors[1].Sizes {65536,65536,1,3} hold 12884901888 elements");
  }
  SUBCASE("T8 TotalTensorSizeInBytes below DMLCalcBufferTensorSize") {
    JoinCall call = example1();
    call.inputs[1].TotalTensorSizeInBytes = 28;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T8,
                       "InputTensors[1].TotalTensorSizeInBytes is 28 but the tensor needs at "
                       "least 32 bytes");
  }
  SUBCASE("T9 alignment") {
    JoinCall call = example1();
    call.output.GuaranteedBaseOffsetAlignment = 3;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T9,
                       "OutputTensor.GuaranteedBaseOffsetAlignment is 3");
    call = example1();
    std::vector<ConstBuffer> buffers = call.input_buffers();
    buffers[0].data = static_cast<const char*>(buffers[0].data) + 2;
    buffers[0].size_in_bytes -= 2;
    DMLREF_CHECK_ERROR(join(call.desc(), buffers, call.output_buffer()), ErrorCode::T9,
                       "the buffer of InputTensors[0] starts at an address that is 2 bytes past");
  }
  SUBCASE("T10 a buffer smaller than TotalTensorSizeInBytes") {
    JoinCall call = example1();
    Buffer out = call.output_buffer();
    out.size_in_bytes = 52;
    DMLREF_CHECK_ERROR(join(call.desc(), call.input_buffers(), out), ErrorCode::T10,
                       "the buffer of OutputTensor holds 52 bytes but "
                       "OutputTensor.TotalTensorSizeInBytes is 56");
  }
  SUBCASE("T11 Flags") {
    JoinCall call = example1();
    call.inputs[0].Flags = TensorFlags::OwnedByDml;  // allowed on inputs
    CHECK_NOTHROW(call.run());
    call.inputs[0].Flags = static_cast<TensorFlags>(4);
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T11, "InputTensors[0].Flags is 4");
    call.inputs[0].Flags = TensorFlags::None;
    call.output.Flags = TensorFlags::OwnedByDml;
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T11, "that flag is for inputs only");
  }
  SUBCASE("T12 an output that addresses an element twice") {
    JoinCall call({f32({1, 1, 2, 3}), f32({1, 1, 2, 4})}, f32({1, 1, 2, 7}, {0, 0, 0, 1}), 3);
    DMLREF_CHECK_ERROR(call.run(), ErrorCode::T12, "OutputTensor.Strides[2] is 0 with Sizes[2] 2");
    JoinCall overlapping({f32({1, 1, 2, 3}), f32({1, 1, 2, 4})}, f32({1, 1, 2, 7}, {14, 14, 3, 1}),
                         3);
    DMLREF_CHECK_ERROR(overlapping.run(), ErrorCode::T12, "address some element twice");
    std::vector<float> a(6), b(8), o(14);
    DMLREF_CHECK_ERROR(
        join({TensorView<const float>(a.data(), {2, 3}), TensorView<const float>(b.data(), {2, 4})},
             TensorView<float>(o.data(), Layout::strided({2, 7}, {0, 1})), 1),
        ErrorCode::T12, "OutputTensor.Strides[0] is 0");
  }
  SUBCASE("T13 the output overlaps an input") {
    JoinCall call = example1();
    std::vector<ConstBuffer> buffers = call.input_buffers();
    buffers[1] = ConstBuffer(call.output_storage.data() + 2, 32);
    DMLREF_CHECK_ERROR(join(call.desc(), buffers, call.output_buffer()), ErrorCode::T13,
                       "OutputTensor (bytes [0, 56)) overlaps InputTensors[1] (bytes [16, 48))");
    std::vector<float> storage(20);
    DMLREF_CHECK_ERROR(join({TensorView<const float>(storage.data() + 10, {2, 3})},
                            TensorView<float>(storage.data() + 5, {2, 3}), 0),
                       ErrorCode::T13, "OutputTensor (bytes [0, 24)) overlaps InputTensors[0]");
  }
}

TEST_CASE("join: leaves every output byte untouched when validation fails") {
  auto expect_untouched = [](JoinCall& call, const JoinOperatorDesc& desc,
                             const std::vector<ConstBuffer>& buffers, ErrorCode code) {
    std::memset(call.output_storage.data(), 0xA5, call.output_storage.size() * 8);
    const std::vector<std::uint64_t> before = call.output_storage;
    bool threw = false;
    try {
      join(desc, buffers, call.output_buffer());
    } catch (const Error& e) {
      threw = true;
      CHECK_MESSAGE(e.code() == code, e.what());
    }
    CHECK(threw);
    CHECK(std::memcmp(before.data(), call.output_storage.data(), before.size() * 8) == 0);
  };
  {
    JoinCall call({f32({1, 1, 2, 3}), f32({1, 1, 2, 4})}, f32({1, 1, 2, 8}), 3);
    expect_untouched(call, call.desc(), call.input_buffers(), ErrorCode::J6);
  }
  {
    JoinCall call({f32({1, 1, 2, 3}), f32({1, 1, 3, 4})}, f32({1, 1, 2, 7}), 3);
    expect_untouched(call, call.desc(), call.input_buffers(), ErrorCode::J5);
  }
  {
    JoinCall call = example1();
    std::vector<ConstBuffer> buffers = call.input_buffers();
    buffers[1].size_in_bytes = 4;  // the last input's binding fails after all else passed
    expect_untouched(call, call.desc(), buffers, ErrorCode::T10);
  }
  {
    JoinCall call = example1();
    std::vector<ConstBuffer> buffers = call.input_buffers();
    buffers[1] = ConstBuffer(call.output_storage.data(), 32);
    expect_untouched(call, call.desc(), buffers, ErrorCode::T13);
  }
  {
    JoinCall call({TensorDesc(DataType::Float64, {1, 1, 2, 3}),
                   TensorDesc(DataType::Float64, {1, 1, 2, 4})},
                  TensorDesc(DataType::Float64, {1, 1, 2, 7}), 3);
    std::memset(call.output_storage.data(), 0xA5, call.output_storage.size() * 8);
    const std::vector<std::uint64_t> before = call.output_storage;
    CHECK_THROWS_AS(call.run(JoinOptions{FeatureLevel::k3_0}), Error);
    CHECK(before == call.output_storage);
  }
  {
    std::vector<std::uint8_t> a(6, 1), out(8, 0xA5);
    CHECK_THROWS_AS(join({TensorView<const std::uint8_t>(a.data(), {2, 3})},
                         TensorView<std::uint8_t>(out.data(), {2, 4}), 1),
                    Error);
    CHECK(out == std::vector<std::uint8_t>(8, 0xA5));
  }
}

// ------------------------------------------------------------------------------------------------
// Feature levels

TEST_CASE("join: feature-level table") {
  auto call_of = [](DataType type, Sizes in, Sizes out, std::uint32_t axis) {
    return JoinCall({TensorDesc(type, in), TensorDesc(type, in)}, TensorDesc(type, out), axis);
  };
  SUBCASE("FLOAT64 and INT64 need 4_1") {
    for (DataType type : {DataType::Float64, DataType::Int64}) {
      JoinCall call = call_of(type, {1, 1, 2, 2}, {1, 1, 2, 4}, 3);
      DMLREF_CHECK_ERROR(call.run(JoinOptions{FeatureLevel::k3_0}), ErrorCode::FeatureLevel,
                         "JOIN: InputTensors[0].DataType " + std::string(data_type_name(type)) +
                             " needs DML_FEATURE_LEVEL_4_1; the target is DML_FEATURE_LEVEL_3_0");
      CHECK_NOTHROW(call.run(JoinOptions{FeatureLevel::k4_1}));
    }
  }
  SUBCASE("5-D needs 3_0") {
    JoinCall call = call_of(DataType::Float32, {1, 1, 1, 2, 2}, {1, 1, 1, 2, 4}, 4);
    DMLREF_CHECK_ERROR(call.run(JoinOptions{FeatureLevel::k2_1}), ErrorCode::FeatureLevel,
                       "InputTensors[0].DimensionCount 5 needs DML_FEATURE_LEVEL_3_0; the target "
                       "is DML_FEATURE_LEVEL_2_1");
    CHECK_NOTHROW(call.run(JoinOptions{FeatureLevel::k3_0}));
  }
  SUBCASE("3-D needs 4_1 (JOIN's 3_0 row allows only 4-5 dimensions)") {
    JoinCall call = call_of(DataType::Float32, {1, 2, 2}, {1, 2, 4}, 2);
    DMLREF_CHECK_ERROR(call.run(JoinOptions{FeatureLevel::k3_0}), ErrorCode::FeatureLevel,
                       "InputTensors[0].DimensionCount 3 needs DML_FEATURE_LEVEL_4_1; the target "
                       "is DML_FEATURE_LEVEL_3_0 (which allows 4 to 5)");
    CHECK_NOTHROW(call.run(JoinOptions{FeatureLevel::k4_1}));
  }
  SUBCASE("INT8 needs 2_1") {
    JoinCall call = call_of(DataType::Int8, {1, 1, 2, 2}, {1, 1, 2, 4}, 3);
    DMLREF_CHECK_ERROR(call.run(JoinOptions{FeatureLevel::k1_0}), ErrorCode::FeatureLevel,
                       "InputTensors[0].DataType INT8 needs DML_FEATURE_LEVEL_2_1; the target is "
                       "DML_FEATURE_LEVEL_1_0");
    CHECK_NOTHROW(call.run(JoinOptions{FeatureLevel::k2_1}));
  }
  SUBCASE("the output is checked too, and the typed layer applies the same table") {
    std::vector<double> a(4), o(8);
    DMLREF_CHECK_ERROR(join({TensorView<const double>(a.data(), {1, 1, 2, 2}),
                             TensorView<const double>(a.data(), {1, 1, 2, 2})},
                            TensorView<double>(o.data(), {1, 1, 2, 4}), 3,
                            JoinOptions{FeatureLevel::k3_0}),
                       ErrorCode::FeatureLevel, "DataType FLOAT64 needs DML_FEATURE_LEVEL_4_1");
    std::vector<float> fa(4), fo(8);
    DMLREF_CHECK_ERROR(join({TensorView<const float>(fa.data(), {2, 2})},
                            TensorView<float>(fo.data(), {2, 2}), 0,
                            JoinOptions{FeatureLevel::k2_0}),
                       ErrorCode::FeatureLevel, "DimensionCount 2 needs DML_FEATURE_LEVEL_4_1");
  }
  SUBCASE("a target that is no DirectML feature level") {
    JoinCall call = example1();
    DMLREF_CHECK_ERROR(call.run(JoinOptions{static_cast<FeatureLevel>(0x1234)}),
                       ErrorCode::InvalidOption, "is not a DirectML feature level");
  }
}

// ------------------------------------------------------------------------------------------------
// `reversed`: tensors the descriptions stand in for, turned around after every check

TEST_CASE("join: the runtime entry point over reversed tensors its descriptions stand in for") {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};  // read backwards along dimension 0
  const std::vector<float> b = {7, 8};
  std::vector<float> out(8, -1.0f);  // written backwards along dimension 1
  const TensorDesc da(DataType::Float32, {2, 3}), db(DataType::Float32, {2, 1}),
      dout(DataType::Float32, {2, 4});
  const BufferTensorDesc ins[] = {da.desc(), db.desc()};
  const BufferTensorDesc od = dout.desc();
  const JoinOperatorDesc desc{2, ins, &od, 1};
  const std::vector<ConstBuffer> buffers = {{a.data(), 24}, {b.data(), 8}};
  join(desc, buffers, Buffer{out.data(), 32}, {}, std::vector<std::uint8_t>{0b01, 0, 0b10});
  // The caller's output is [[4, 5, 6, 7], [1, 2, 3, 8]], each row stored backwards.
  CHECK(out == std::vector<float>{7, 6, 5, 4, 8, 3, 2, 1});
  std::vector<float> untouched(8, -1.0f);
  DMLREF_CHECK_ERROR(join(desc, buffers, Buffer{untouched.data(), 32}, {},
                          std::vector<std::uint8_t>{0b01}),
                     ErrorCode::InvalidOption, "JOIN: 1 reversed mask was given for 3 tensors");
  CHECK(untouched == std::vector<float>(8, -1.0f));
}

}  // namespace test_join
