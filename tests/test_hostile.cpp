// Hostile input through the runtime entry points: arithmetic at the edges of 32 and 64 bits
// (sizes, strides, minimum sizes, element counts, axis sums, index and length values), the
// boundaries of T8, T9 and T10, and aliasing across operators (T12, T13, and inputs that overlap
// each other, which is allowed). Nothing here allocates more than a few KiB: element counts near
// 2^32 go through the description-only validate_<op>(desc) overloads, which need no buffers.
#include "test_support.hpp"

#include <dmlref/ops/gather_nd1.hpp>
#include <dmlref/ops/join.hpp>
#include <dmlref/ops/reverse_subsequences.hpp>
#include <dmlref/ops/scatter.hpp>
#include <dmlref/ops/split.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace test_hostile {  // this file's own names (tests/CMakeLists.txt: unity groups)

using namespace dmlref;

namespace {

using Sizes = std::vector<std::uint32_t>;
constexpr std::uint32_t kU32Max = 0xFFFFFFFFu;

// Bytes aligned to 64, where a test places buffers at chosen offsets, overlapping on purpose.
class Arena {
 public:
  explicit Arena(std::size_t bytes = 16384) : words_(bytes / 8 + 8, 0) {}
  std::uint8_t* at(std::size_t offset) {
    const auto p = reinterpret_cast<std::uintptr_t>(words_.data());
    return reinterpret_cast<std::uint8_t*>((p + 63) & ~std::uintptr_t{63}) + offset;
  }
  template <class T>
  void put(std::size_t offset, const std::vector<T>& values) {
    std::memcpy(at(offset), values.data(), values.size() * sizeof(T));
  }
  template <class T>
  std::vector<T> get(std::size_t offset, std::size_t count) {
    std::vector<T> v(count);
    std::memcpy(v.data(), at(offset), count * sizeof(T));
    return v;
  }

 private:
  std::vector<std::uint64_t> words_;
};

TensorDesc desc_of(DataType type, Sizes sizes, Sizes strides = {}) {
  return TensorDesc(type, std::move(sizes), std::move(strides));
}

// A description whose minimum size (T8) is not computed: for sizes past T4 or T8 on purpose.
TensorDesc raw_desc(DataType type, Sizes sizes, Sizes strides, std::uint64_t total) {
  TensorDesc d(type, {1});
  d.sizes = std::move(sizes);
  d.strides = std::move(strides);
  d.total_tensor_size_in_bytes = total;
  return d;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// DMLCalcBufferTensorSize (T4, T8) at the edges of 32 and 64 bits

TEST_CASE("hostile: calc_buffer_tensor_size past 32 bits computes in 64") {
  // 65535 * 65537 = 2^32 - 1 elements: the most T4 allows, 2^32 - 1 bytes rounded up to 4.
  CHECK(calc_buffer_tensor_size(DataType::UInt8, Sizes{65535, 65537}) == 4294967296ull);
  CHECK(calc_buffer_tensor_size(DataType::UInt8, Sizes{kU32Max}) == 4294967296ull);
  CHECK(calc_buffer_tensor_size(DataType::Float64, Sizes{kU32Max}) == 34359738360ull);
  CHECK(calc_buffer_tensor_size(DataType::Float32, Sizes{1, 65535, 65537}) == 17179869180ull);
  // The last offset itself passes 2^32: (2^32 - 1) + 1.
  CHECK(calc_buffer_tensor_size(DataType::UInt8, Sizes{2, 2}, Sizes{kU32Max, 1}) == 4294967300ull);
  // Eight dimensions of stride 2^32 - 1: about 2^35 elements of reach, no wrap anywhere.
  const Sizes twos(8, 2);
  const Sizes huge(8, kU32Max);
  CHECK(calc_buffer_tensor_size(DataType::Int64, twos, huge) == (8ull * kU32Max + 1) * 8);
  // 2^61 elements of reach in a 1-byte type: representable; in an 8-byte type: not (T8 below).
  CHECK(calc_buffer_tensor_size(DataType::UInt8, Sizes{0x40000001u}, Sizes{0x80000000u}) ==
        (std::uint64_t{1} << 61) + 4);
  // A size-1 dimension contributes nothing, however huge its stride.
  CHECK(calc_buffer_tensor_size(DataType::Float32, Sizes{1, 3}, Sizes{kU32Max, 1}) == 12);
  // Broadcast: 2^32 - 1 elements in 4 bytes.
  CHECK(calc_buffer_tensor_size(DataType::Float32, Sizes{65535, 65537}, Sizes{0, 0}) == 4);
}

TEST_CASE("hostile: calc_buffer_tensor_size rejects counts past 2^32 - 1 and reaches past 2^64") {
  DMLREF_CHECK_ERROR(calc_buffer_tensor_size(DataType::UInt8, Sizes{65536, 65536}), ErrorCode::T4,
                     "hold 4294967296 elements");
  DMLREF_CHECK_ERROR(calc_buffer_tensor_size(DataType::UInt8, Sizes{2, 2, 0x40000000u}),
                     ErrorCode::T4, "hold 4294967296 elements");
  // The product overflows 64 bits: the same error, never a wrapped count.
  DMLREF_CHECK_ERROR(calc_buffer_tensor_size(DataType::UInt8, Sizes{kU32Max, kU32Max, kU32Max}),
                     ErrorCode::T4, "more than 2^64");
  DMLREF_CHECK_ERROR(
      calc_buffer_tensor_size(DataType::UInt8, Sizes{65536, 65536, 65536, 65536, 65536}),
      ErrorCode::T4, "more than 2^64");
  // A zero anywhere is T3, even after sizes whose product would overflow.
  DMLREF_CHECK_ERROR(calc_buffer_tensor_size(DataType::UInt8, Sizes{kU32Max, kU32Max, kU32Max, 0}),
                     ErrorCode::T3, "Sizes[3] is 0");
  // Element offsets past 2^63: (2^31 + 1) * (2^32 - 1).
  DMLREF_CHECK_ERROR(calc_buffer_tensor_size(DataType::UInt8, Sizes{0x80000002u}, Sizes{kU32Max}),
                     ErrorCode::T8, "reach past a 64-bit element offset");
  // Offsets fit, bytes do not: (2^61 + 1) * 8.
  DMLREF_CHECK_ERROR(
      calc_buffer_tensor_size(DataType::Int64, Sizes{0x40000001u}, Sizes{0x80000000u}),
      ErrorCode::T8, "needs more than 2^64 bytes");
  // T5: one stride per dimension or none.
  DMLREF_CHECK_ERROR(calc_buffer_tensor_size(DataType::UInt8, Sizes{2, 3}, Sizes{1}), ErrorCode::T5,
                     "2 sizes but 1 strides");
}

// ------------------------------------------------------------------------------------------------
// Element counts at 2^32 - 1 (accepted) and 2^32 (T4) through every operator, description only

TEST_CASE("hostile: JOIN and SPLIT of 2^32 - 1 elements validate without buffers, 2^32 is T4") {
  const TensorDesc a = desc_of(DataType::UInt8, {65535, 65536});
  const TensorDesc b = desc_of(DataType::UInt8, {65535, 1});
  const TensorDesc whole = desc_of(DataType::UInt8, {65535, 65537});
  const BufferTensorDesc parts[] = {a.desc(), b.desc()};
  const BufferTensorDesc w = whole.desc();
  const JoinLayouts j = validate_join(JoinOperatorDesc{2, parts, &w, 1});
  CHECK(j.output.element_count() == 4294967295ull);
  CHECK(j.axis_offsets == std::vector<std::uint32_t>{0, 65536});
  const SplitLayouts s = validate_split(SplitOperatorDesc{&w, 2, parts, 1});
  CHECK(s.input.element_count() == 4294967295ull);

  // One 1-D input of 2^32 - 1 elements joined (copied) into an output of as many.
  const TensorDesc line = desc_of(DataType::UInt8, {kU32Max});
  const BufferTensorDesc l = line.desc();
  CHECK(validate_join(JoinOperatorDesc{1, &l, &l, 0}).output.element_count() == 4294967295ull);

  // 2^32: the inputs are fine (65536 * 65535 and 65536 elements), the whole is not.
  const TensorDesc a2 = desc_of(DataType::UInt8, {65536, 65535});
  const TensorDesc b2 = desc_of(DataType::UInt8, {65536, 1});
  const TensorDesc whole2 = raw_desc(DataType::UInt8, {65536, 65536}, {}, 4294967296ull);
  const BufferTensorDesc parts2[] = {a2.desc(), b2.desc()};
  const BufferTensorDesc w2 = whole2.desc();
  DMLREF_CHECK_ERROR(validate_join(JoinOperatorDesc{2, parts2, &w2, 1}), ErrorCode::T4,
                     "OutputTensor.Sizes {65536,65536} hold 4294967296 elements");
  DMLREF_CHECK_ERROR(validate_split(SplitOperatorDesc{&w2, 2, parts2, 1}), ErrorCode::T4,
                     "InputTensor.Sizes {65536,65536} hold 4294967296 elements");
}

TEST_CASE("hostile: SCATTER, GATHER_ND1, REVERSE_SUBSEQUENCES at 2^32 - 1 elements, 2^32 is T4") {
  const TensorDesc big = desc_of(DataType::UInt8, {65535, 65537});
  const TensorDesc too_big = raw_desc(DataType::UInt8, {65536, 65536}, {}, 4294967296ull);
  const BufferTensorDesc bd = big.desc(), tbd = too_big.desc();
  {
    const TensorDesc indices = desc_of(DataType::UInt32, {1, 65537});
    const TensorDesc updates = desc_of(DataType::UInt8, {1, 65537});
    const BufferTensorDesc id = indices.desc(), ud = updates.desc();
    CHECK(validate_scatter(ScatterOperatorDesc{&bd, &id, &ud, &bd, 0}) ==
          std::vector<std::uint32_t>{65535, 65537});
    DMLREF_CHECK_ERROR(validate_scatter(ScatterOperatorDesc{&tbd, &id, &ud, &tbd, 0}),
                       ErrorCode::T4, "InputTensor.Sizes {65536,65536} hold 4294967296");
  }
  {
    // Input {1, 2^32 - 1}, one 1-tuple: the output is the input's last dimension whole.
    const TensorDesc input = desc_of(DataType::UInt8, {1, kU32Max});
    const TensorDesc indices = desc_of(DataType::UInt32, {1, 1});
    const BufferTensorDesc in = input.desc(), id = indices.desc();
    CHECK(validate_gather_nd1(GatherNd1OperatorDesc{&in, &id, &in, 2, 2, 0}) ==
          std::vector<std::uint32_t>{1, kU32Max});
    DMLREF_CHECK_ERROR(validate_gather_nd1(GatherNd1OperatorDesc{&tbd, &id, &tbd, 2, 2, 0}),
                       ErrorCode::T4, "hold 4294967296");
    // Input and indices within T4 whose inferred output is not: 65536 tuples of 65536 elements.
    DMLREF_CHECK_ERROR(infer_gather_nd1_output_sizes({2, 65536}, {65536, 1}, 2, 2, 0),
                       ErrorCode::T4, "the inferred OutputTensor.Sizes {65536,65536}");
  }
  {
    const TensorDesc lengths = desc_of(DataType::UInt32, {65535, 1});
    const BufferTensorDesc ld = lengths.desc();
    CHECK(validate_reverse_subsequences(ReverseSubsequencesOperatorDesc{&bd, &ld, &bd, 1}) ==
          std::vector<std::uint32_t>{65535, 65537});
    DMLREF_CHECK_ERROR(
        validate_reverse_subsequences(ReverseSubsequencesOperatorDesc{&tbd, &ld, &tbd, 1}),
        ErrorCode::T4, "hold 4294967296");
  }
}

TEST_CASE("hostile: sums along Axis past 2^32 are errors, never wrapped (J6, S6, inference)") {
  // Inputs of 2^32 - 1 (broadcast, 4 bytes) and 2 elements: 2^32 + 1, which wraps to 1 in 32 bits
  // and would then match the output's 1.
  const TensorDesc huge = desc_of(DataType::UInt8, {kU32Max}, {0});
  const TensorDesc two = desc_of(DataType::UInt8, {2});
  const TensorDesc one = desc_of(DataType::UInt8, {1});
  const BufferTensorDesc parts[] = {huge.desc(), two.desc()};
  const BufferTensorDesc o = one.desc();
  DMLREF_CHECK_ERROR(validate_join(JoinOperatorDesc{2, parts, &o, 0}), ErrorCode::J6,
                     "add up to 4294967297");
  const TensorDesc huge_out = desc_of(DataType::UInt8, {kU32Max});
  const BufferTensorDesc outs[] = {huge_out.desc(), two.desc()};
  DMLREF_CHECK_ERROR(validate_split(SplitOperatorDesc{&o, 2, outs, 0}), ErrorCode::S6,
                     "add up to 4294967297");
  DMLREF_CHECK_ERROR(infer_join_output_sizes({{kU32Max}, {1}}, 0), ErrorCode::T4,
                     "add up to 4294967296");
  DMLREF_CHECK_ERROR(infer_split_output_sizes(Sizes{4}, 0, {kU32Max, 5}), ErrorCode::S6,
                     "add up to 4294967300");
}

TEST_CASE("hostile: a minimum size past 2^64 through an operator is T8, not a small wrapped size") {
  // (2^61 + 1) * 8 bytes wraps to 8 in 64 bits: a TotalTensorSizeInBytes of 8 must not pass.
  const TensorDesc input = raw_desc(DataType::Int64, {0x40000001u}, {0x80000000u}, 8);
  const TensorDesc output = raw_desc(DataType::Int64, {0x40000001u}, {}, 8);
  const BufferTensorDesc in = input.desc(), out = output.desc();
  DMLREF_CHECK_ERROR(validate_join(JoinOperatorDesc{1, &in, &out, 0}), ErrorCode::T8,
                     "InputTensors[0].Strides {2147483648} with Sizes {1073741825} need more than "
                     "2^64 bytes");
  DMLREF_CHECK_ERROR(
      validate_reverse_subsequences(ReverseSubsequencesOperatorDesc{&in, &in, &out, 0}),
      ErrorCode::T8, "need more than 2^64 bytes");
}

TEST_CASE("hostile: an output too large to prove injective is rejected conservatively (T12)") {
  // Strides {2,3} over {3, n} never repeat an offset, but they interleave: small, the exact check
  // accepts them; past kExactOverlapCheckLimit elements the check says it is conservative.
  const TensorDesc in_small = desc_of(DataType::UInt8, {3, 2});
  const TensorDesc out_small = desc_of(DataType::UInt8, {3, 2}, {2, 3});
  const BufferTensorDesc is = in_small.desc(), os = out_small.desc();
  Arena arena;
  arena.put<std::uint8_t>(0, {1, 2, 3, 4, 5, 6});
  std::memset(arena.at(64), 0xEE, 16);
  join(JoinOperatorDesc{1, &is, &os, 0}, {ConstBuffer(arena.at(0), 8)}, Buffer{arena.at(64), 8});
  // Output offset of (a, b) is 2a + 3b.
  CHECK(arena.get<std::uint8_t>(64, 8) == std::vector<std::uint8_t>{1, 0xEE, 3, 2, 5, 4, 0xEE, 6});

  const std::uint32_t n = 2000000;  // 6,000,000 elements > 2^22
  const TensorDesc in_big = desc_of(DataType::UInt8, {3, n});
  const TensorDesc out_big = desc_of(DataType::UInt8, {3, n}, {2, 3});
  const BufferTensorDesc ib = in_big.desc(), ob = out_big.desc();
  DMLREF_CHECK_ERROR(validate_join(JoinOperatorDesc{1, &ib, &ob, 0}), ErrorCode::T12,
                     "conservative check");
}

// ------------------------------------------------------------------------------------------------
// T8, T9, T10 at their boundaries through every operator's runtime entry point

namespace {

enum class Op { Join, Split, Scatter, GatherNd1, ReverseSubsequences };
constexpr Op kOps[] = {Op::Join, Op::Split, Op::Scatter, Op::GatherNd1, Op::ReverseSubsequences};
const char* op_name(Op op) {
  switch (op) {
    case Op::Join:
      return "JOIN";
    case Op::Split:
      return "SPLIT";
    case Op::Scatter:
      return "SCATTER";
    case Op::GatherNd1:
      return "GATHER_ND1";
    case Op::ReverseSubsequences:
      return "REVERSE_SUBSEQUENCES";
  }
  return "?";
}

enum Role : int { kInput = 0, kOutput = 1, kIndex = 2 };

// What a test changes about one tensor of a small call.
struct Knobs {
  Role role = kInput;
  std::uint64_t total = 0;      // TotalTensorSizeInBytes, 0: the minimum
  std::uint64_t buffer = 0;     // buffer bytes, 0: TotalTensorSizeInBytes
  std::size_t offset = 0;       // bytes past a 64-aligned address
  std::uint32_t alignment = 0;  // GuaranteedBaseOffsetAlignment
};

// A five-element UINT8 call of `op` (indices and lengths UINT32), each tensor in its own 256-byte
// region of one arena, with `k` applied; throws what the operator throws, and otherwise checks
// the output. JOIN and SPLIT copy; SCATTER, GATHER_ND1 and REVERSE_SUBSEQUENCES reverse.
void small_call(Op op, const Knobs& k) {
  const std::vector<std::uint8_t> data = {10, 11, 12, 13, 14};
  const std::vector<std::uint8_t> updates = {20, 21, 22, 23, 24};
  const std::vector<std::uint32_t> reversing = {4, 3, 2, 1, 0};
  const bool gather = op == Op::GatherNd1;
  TensorDesc descs[] = {
      desc_of(DataType::UInt8, gather ? Sizes{1, 5} : Sizes{5}),
      desc_of(DataType::UInt8, gather ? Sizes{1, 5} : Sizes{5}),
      op == Op::ReverseSubsequences ? desc_of(DataType::UInt32, {1})
      : gather                      ? desc_of(DataType::UInt32, {5, 1})
                                    : desc_of(DataType::UInt32, {5}),
      desc_of(DataType::UInt8, {5}),  // SCATTER's updates
  };
  TensorDesc& mine = descs[k.role];
  if (k.total != 0) mine.total_tensor_size_in_bytes = k.total;
  mine.guaranteed_base_offset_alignment = k.alignment;
  Arena arena;
  std::size_t offsets[] = {0, 256, 512, 768};
  offsets[k.role] += k.offset;
  std::uint64_t bytes[4];
  for (int i = 0; i < 4; ++i) bytes[i] = descs[i].total_tensor_size_in_bytes;
  if (k.buffer != 0) bytes[k.role] = k.buffer;
  arena.put(offsets[kInput], data);
  arena.put(offsets[3], updates);
  if (op == Op::ReverseSubsequences) {
    arena.put(offsets[kIndex], std::vector<std::uint32_t>{5});
  } else {
    arena.put(offsets[kIndex], reversing);
  }
  std::memset(arena.at(offsets[kOutput]), 0xEE, 8);
  const BufferTensorDesc in = descs[kInput].desc(), out = descs[kOutput].desc(),
                         ix = descs[kIndex].desc(), up = descs[3].desc();
  const ConstBuffer in_buf(arena.at(offsets[kInput]), bytes[kInput]);
  const ConstBuffer ix_buf(arena.at(offsets[kIndex]), bytes[kIndex]);
  const ConstBuffer up_buf(arena.at(offsets[3]), bytes[3]);
  const Buffer out_buf{arena.at(offsets[kOutput]), bytes[kOutput]};
  std::vector<std::uint8_t> expected = {14, 13, 12, 11, 10};
  switch (op) {
    case Op::Join:
      join(JoinOperatorDesc{1, &in, &out, 0}, {in_buf}, out_buf);
      expected = data;
      break;
    case Op::Split:
      split(SplitOperatorDesc{&in, 1, &out, 0}, in_buf, {out_buf});
      expected = data;
      break;
    case Op::Scatter:
      scatter(ScatterOperatorDesc{&in, &ix, &up, &out, 0}, in_buf, ix_buf, up_buf, out_buf);
      expected = {24, 23, 22, 21, 20};
      break;
    case Op::GatherNd1:
      gather_nd1(GatherNd1OperatorDesc{&in, &ix, &out, 1, 2, 0}, in_buf, ix_buf, out_buf);
      break;
    case Op::ReverseSubsequences:
      reverse_subsequences(ReverseSubsequencesOperatorDesc{&in, &ix, &out, 0}, in_buf, ix_buf,
                           out_buf);
      break;
  }
  CHECK(arena.get<std::uint8_t>(offsets[kOutput], 5) == expected);
  // Past the five elements the output's bytes are untouched, padding to 8 included.
  CHECK(arena.get<std::uint8_t>(offsets[kOutput] + 5, 3) == std::vector<std::uint8_t>(3, 0xEE));
}

}  // namespace

TEST_CASE("hostile: TotalTensorSizeInBytes at, above and below the minimum (T8), every operator") {
  for (Op op : kOps) {
    CAPTURE(op_name(op));
    for (Role role : {kInput, kOutput}) {
      CAPTURE(static_cast<int>(role));
      // Five UINT8 elements need 5 bytes, rounded up to 8.
      small_call(op, {role, 8});
      small_call(op, {role, 12});
      small_call(op, {role, 4096});
      DMLREF_CHECK_ERROR(small_call(op, {role, 7}), ErrorCode::T8,
                         "TotalTensorSizeInBytes is 7 but the tensor needs at least 8 bytes");
      DMLREF_CHECK_ERROR(small_call(op, {role, 5}), ErrorCode::T8, "needs at least 8");
      DMLREF_CHECK_ERROR(small_call(op, {role, 1}), ErrorCode::T8, "needs at least 8");
    }
    if (op == Op::Join || op == Op::Split) continue;
    // UINT32 indices: 20 bytes for five, 4 for one length.
    const std::uint64_t minimum = op == Op::ReverseSubsequences ? 4 : 20;
    small_call(op, {kIndex, minimum});
    DMLREF_CHECK_ERROR(small_call(op, {kIndex, minimum - 1}), ErrorCode::T8, "needs at least");
  }
}

TEST_CASE("hostile: a buffer one byte smaller than TotalTensorSizeInBytes (T10), every operator") {
  for (Op op : kOps) {
    CAPTURE(op_name(op));
    for (Role role : {kInput, kOutput}) {
      CAPTURE(static_cast<int>(role));
      small_call(op, {role, 8, 8});
      small_call(op, {role, 8, 9});
      // Seven bytes hold all five elements, but the description promised eight.
      DMLREF_CHECK_ERROR(small_call(op, {role, 8, 7}), ErrorCode::T10, "holds 7 bytes but");
      DMLREF_CHECK_ERROR(small_call(op, {role, 64, 63}), ErrorCode::T10, "holds 63 bytes but");
      DMLREF_CHECK_ERROR(small_call(op, {role, 8, 1}), ErrorCode::T10, "holds 1 bytes but");
    }
    if (op == Op::Join || op == Op::Split) continue;
    const std::uint64_t minimum = op == Op::ReverseSubsequences ? 4 : 20;
    small_call(op, {kIndex, minimum, minimum});
    DMLREF_CHECK_ERROR(small_call(op, {kIndex, minimum, minimum - 1}), ErrorCode::T10,
                       "TotalTensorSizeInBytes is " + std::to_string(minimum));
  }
}

TEST_CASE("hostile: base offsets against GuaranteedBaseOffsetAlignment (T9), every operator") {
  for (Op op : kOps) {
    CAPTURE(op_name(op));
    for (Role role : {kInput, kOutput}) {
      CAPTURE(static_cast<int>(role));
      // UINT8: any address is element-aligned; only a promised alignment can be broken.
      small_call(op, {role, 0, 0, 1, 0});
      small_call(op, {role, 0, 0, 3, 1});
      small_call(op, {role, 0, 0, 4, 4});
      small_call(op, {role, 0, 0, 64, 64});
      DMLREF_CHECK_ERROR(small_call(op, {role, 0, 0, 1, 4}), ErrorCode::T9,
                         "1 bytes past a multiple of");
      DMLREF_CHECK_ERROR(small_call(op, {role, 0, 0, 2, 4}), ErrorCode::T9,
                         "2 bytes past a multiple of");
      DMLREF_CHECK_ERROR(small_call(op, {role, 0, 0, 32, 64}), ErrorCode::T9,
                         "GuaranteedBaseOffsetAlignment (64)");
      DMLREF_CHECK_ERROR(small_call(op, {role, 0, 0, 0, 3}), ErrorCode::T9,
                         "GuaranteedBaseOffsetAlignment is 3");
      DMLREF_CHECK_ERROR(small_call(op, {role, 0, 0, 0, 0x80000001u}), ErrorCode::T9,
                         "GuaranteedBaseOffsetAlignment is 2147483649");
    }
    if (op == Op::Join || op == Op::Split) continue;
    // UINT32 indices: the address must be 4-aligned, and a promise below 4 is invalid.
    small_call(op, {kIndex, 0, 0, 4, 0});
    small_call(op, {kIndex, 0, 0, 8, 8});
    DMLREF_CHECK_ERROR(small_call(op, {kIndex, 0, 0, 2, 0}), ErrorCode::T9,
                       "multiple of its element size (4)");
    DMLREF_CHECK_ERROR(small_call(op, {kIndex, 0, 0, 4, 8}), ErrorCode::T9,
                       "GuaranteedBaseOffsetAlignment (8)");
    DMLREF_CHECK_ERROR(small_call(op, {kIndex, 0, 0, 0, 2}), ErrorCode::T9,
                       "no smaller than the element size (4)");
  }
}

// ------------------------------------------------------------------------------------------------
// Index and length values at the edges of 32 and 64 bits

TEST_CASE("hostile: SCATTER indices at the edges: no truncation, no overflow at INT64_MIN") {
  struct Case {
    DataType type;
    std::int64_t value;  // the last index; the others are 0, 1, 2
    bool valid;
    std::uint32_t target;  // under IndexPolicy::Error when valid, else under Clamp
  };
  const Case cases[] = {
      {DataType::UInt64, (std::int64_t{1} << 32) + 1, false, 3},  // truncated, it would be 1
      {DataType::UInt64, std::int64_t{1} << 32, false, 3},        // truncated, it would be 0
      {DataType::UInt64, -1, false, 3},                           // 2^64 - 1, not -1
      {DataType::UInt32, -1, false, 3},                           // 2^32 - 1, not -1
      {DataType::Int64, std::numeric_limits<std::int64_t>::min(), false, 0},
      {DataType::Int64, std::numeric_limits<std::int64_t>::max(), false, 3},
      {DataType::Int32, std::numeric_limits<std::int32_t>::min(), false, 0},
      {DataType::Int32, -4, true, 0},
      {DataType::Int32, -5, false, 0},
      {DataType::Int64, -1, true, 3},
      {DataType::UInt32, 3, true, 3},
      {DataType::UInt32, 4, false, 3},
  };
  for (const Case& c : cases) {
    CAPTURE(data_type_name(c.type));
    CAPTURE(c.value);
    const std::size_t eb = element_size(c.type);
    const TensorDesc input = desc_of(DataType::Float32, {4});
    const TensorDesc indices = desc_of(c.type, {4});
    const BufferTensorDesc in = input.desc(), ix = indices.desc();
    const std::vector<float> data = {1, 2, 3, 4};
    const std::vector<float> updates = {10, 20, 30, 40};
    std::vector<std::uint8_t> index_bytes(4 * eb);
    const std::int64_t values[] = {0, 1, 2, c.value};
    for (int i = 0; i < 4; ++i) std::memcpy(index_bytes.data() + i * eb, &values[i], eb);
    std::vector<float> out(4, -1.0f);
    auto run = [&](IndexPolicy policy) {
      out.assign(4, -1.0f);
      scatter(ScatterOperatorDesc{&in, &ix, &in, &in, 0}, ConstBuffer(data.data(), 16),
              ConstBuffer(index_bytes.data(), index_bytes.size()), ConstBuffer(updates.data(), 16),
              Buffer{out.data(), 16}, ScatterOptions{kLatestFeatureLevel, policy});
    };
    std::vector<float> expected = {10, 20, 30, 4};
    expected[c.target] = 40;
    if (c.valid) {
      run(IndexPolicy::Error);
      CHECK(out == expected);
    } else {
      DMLREF_CHECK_ERROR(run(IndexPolicy::Error), ErrorCode::SC8, "IndicesTensor[3] is ");
      CHECK(out == std::vector<float>(4, -1.0f));
      run(IndexPolicy::Clamp);
      CHECK(out == expected);
    }
  }
}

TEST_CASE("hostile: GATHER_ND1 indices at the edges: no truncation, no overflow at INT64_MIN") {
  struct Case {
    DataType type;
    std::int64_t value;
    bool valid;
    std::uint32_t element;  // what the tuple selects (under Clamp when invalid)
  };
  const Case cases[] = {
      {DataType::UInt64, std::int64_t{1} << 32, false, 3},
      {DataType::UInt64, (std::int64_t{1} << 32) + 2, false, 3},
      {DataType::UInt32, -1, false, 3},
      {DataType::Int64, std::numeric_limits<std::int64_t>::min(), false, 0},
      {DataType::Int64, -4, true, 0},
      {DataType::Int64, -5, false, 0},
      {DataType::Int32, -1, true, 3},
      {DataType::Int32, std::numeric_limits<std::int32_t>::max(), false, 3},
  };
  for (const Case& c : cases) {
    CAPTURE(data_type_name(c.type));
    CAPTURE(c.value);
    const TensorDesc input = desc_of(DataType::Int16, {4});
    const TensorDesc indices = desc_of(c.type, {1});
    const TensorDesc output = desc_of(DataType::Int16, {1});
    const BufferTensorDesc in = input.desc(), ix = indices.desc(), od = output.desc();
    const std::vector<std::int16_t> data = {-7, 8, -9, 10};
    std::vector<std::uint8_t> index_bytes(8, 0);
    std::memcpy(index_bytes.data(), &c.value, element_size(c.type));
    std::int16_t out[2] = {99, 99};
    auto run = [&](IndexPolicy policy) {
      gather_nd1(GatherNd1OperatorDesc{&in, &ix, &od, 1, 1, 0}, ConstBuffer(data.data(), 8),
                 ConstBuffer(index_bytes.data(), 8), Buffer{out, 4},
                 GatherNd1Options{kLatestFeatureLevel, policy});
    };
    if (c.valid) {
      run(IndexPolicy::Error);
    } else {
      DMLREF_CHECK_ERROR(run(IndexPolicy::Error), ErrorCode::G10, "IndicesTensor[0] is ");
      CHECK(out[0] == 99);
      run(IndexPolicy::Clamp);
    }
    CHECK(out[0] == data[c.element]);
    CHECK(out[1] == 99);
  }
}

TEST_CASE("hostile: REVERSE_SUBSEQUENCES lengths past 32 bits clamp, never truncate") {
  const TensorDesc input = desc_of(DataType::Int8, {4});
  const BufferTensorDesc in = input.desc();
  const std::vector<std::int8_t> data = {1, 2, 3, 4};
  struct Case {
    DataType type;
    std::uint64_t length;
    std::vector<std::int8_t> expected;
  };
  const std::vector<std::int8_t> reversed = {4, 3, 2, 1}, same = {1, 2, 3, 4};
  const Case cases[] = {
      {DataType::UInt64, (std::uint64_t{1} << 32) + 1, reversed},  // truncated it would be 1
      {DataType::UInt64, std::uint64_t{1} << 32, reversed},        // truncated it would be 0
      {DataType::UInt64, ~std::uint64_t{0}, reversed},
      {DataType::UInt32, 0xFFFFFFFFu, reversed},
      {DataType::UInt64, 5, reversed},
      {DataType::UInt32, 4, reversed},
      {DataType::UInt32, 3, {3, 2, 1, 4}},
      {DataType::UInt64, 1, same},
      {DataType::UInt64, 0, same},
  };
  for (const Case& c : cases) {
    CAPTURE(data_type_name(c.type));
    CAPTURE(c.length);
    const TensorDesc lengths = desc_of(c.type, {1});
    const BufferTensorDesc ld = lengths.desc();
    std::uint64_t length_bytes = c.length;  // little-endian: a UINT32 reads the low half
    std::vector<std::int8_t> out(8, 99);
    reverse_subsequences(ReverseSubsequencesOperatorDesc{&in, &ld, &in, 0},
                         ConstBuffer(data.data(), 4), ConstBuffer(&length_bytes, 8),
                         Buffer{out.data(), 8});
    CHECK(std::vector<std::int8_t>(out.begin(), out.begin() + 4) == c.expected);
    CHECK(std::vector<std::int8_t>(out.begin() + 4, out.end()) == std::vector<std::int8_t>(4, 99));
  }
}

// ------------------------------------------------------------------------------------------------
// Aliasing: outputs over inputs or each other (T13), addressing an element twice (T12), inputs
// over each other (accepted, and correct)

TEST_CASE("hostile aliasing: JOIN") {
  const TensorDesc part = desc_of(DataType::Float32, {2, 3});
  const TensorDesc whole = desc_of(DataType::Float32, {4, 3});
  const BufferTensorDesc p = part.desc(), w = whole.desc();
  const BufferTensorDesc twice[] = {p, p};
  const JoinOperatorDesc desc{2, twice, &w, 0};
  Arena arena;
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  arena.put(0, values);

  SUBCASE("one buffer bound as both inputs: accepted, the output holds it twice") {
    join(desc, {ConstBuffer(arena.at(0), 24), ConstBuffer(arena.at(0), 24)},
         Buffer{arena.at(64), 48});
    CHECK(arena.get<float>(64, 12) == std::vector<float>{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
  }
  SUBCASE("two inputs overlapping by part of their bytes: accepted") {
    join(desc, {ConstBuffer(arena.at(0), 24), ConstBuffer(arena.at(8), 24)},
         Buffer{arena.at(64), 48});
    std::vector<float> expected = {1, 2, 3, 4, 5, 6, 3, 4, 5, 6};
    const std::vector<float> got = arena.get<float>(64, 12);
    CHECK(std::vector<float>(got.begin(), got.begin() + 10) == expected);
  }
  SUBCASE("the output right after the input in one allocation: accepted") {
    join(desc, {ConstBuffer(arena.at(0), 24), ConstBuffer(arena.at(0), 24)},
         Buffer{arena.at(24), 48});
    CHECK(arena.get<float>(24, 12) == std::vector<float>{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
    CHECK(arena.get<float>(0, 6) == values);
  }
  SUBCASE("the output overlapping an input by one element: T13, nothing written") {
    DMLREF_CHECK_ERROR(join(desc, {ConstBuffer(arena.at(0), 24), ConstBuffer(arena.at(128), 24)},
                            Buffer{arena.at(20), 48}),
                       ErrorCode::T13, "OutputTensor (bytes [20, 68)) overlaps InputTensors[0]");
    CHECK(arena.get<float>(0, 6) == values);
    DMLREF_CHECK_ERROR(join(desc, {ConstBuffer(arena.at(128), 24), ConstBuffer(arena.at(0), 24)},
                            Buffer{arena.at(0), 48}),
                       ErrorCode::T13, "overlaps InputTensors[1]");
    CHECK(arena.get<float>(0, 6) == values);
  }
  SUBCASE("an output interleaving an input within one byte range: T13, conservatively") {
    // Input: even elements; output: odd elements. No byte is shared, but the ranges overlap, and
    // the check compares ranges (and says so).
    const TensorDesc even = desc_of(DataType::Float32, {3}, {2});
    const BufferTensorDesc e = even.desc();
    DMLREF_CHECK_ERROR(join(JoinOperatorDesc{1, &e, &e, 0}, {ConstBuffer(arena.at(0), 20)},
                            Buffer{arena.at(4), 20}),
                       ErrorCode::T13,
                       "tensors that interleave within one range count as overlapping");
  }
  SUBCASE("a zero-stride output: T12") {
    const TensorDesc broadcast = desc_of(DataType::Float32, {4, 3}, {0, 1});
    const BufferTensorDesc b = broadcast.desc();
    DMLREF_CHECK_ERROR(join(JoinOperatorDesc{2, twice, &b, 0},
                            {ConstBuffer(arena.at(0), 24), ConstBuffer(arena.at(0), 24)},
                            Buffer{arena.at(64), 12}),
                       ErrorCode::T12, "OutputTensor.Strides[0] is 0 with Sizes[0] 4");
  }
}

TEST_CASE("hostile aliasing: SPLIT") {
  const TensorDesc whole = desc_of(DataType::Int32, {2, 4});
  const TensorDesc half = desc_of(DataType::Int32, {2, 2});
  const BufferTensorDesc w = whole.desc(), h = half.desc();
  const BufferTensorDesc halves[] = {h, h};
  const SplitOperatorDesc desc{&w, 2, halves, 1};
  Arena arena;
  const std::vector<std::int32_t> values = {1, 2, 3, 4, 5, 6, 7, 8};
  arena.put(0, values);

  SUBCASE("two outputs side by side in one allocation: accepted") {
    split(desc, ConstBuffer(arena.at(0), 32), {Buffer{arena.at(64), 16}, Buffer{arena.at(80), 16}});
    CHECK(arena.get<std::int32_t>(64, 8) == std::vector<std::int32_t>{1, 2, 5, 6, 3, 4, 7, 8});
  }
  SUBCASE("two outputs overlapping each other: T13, nothing written") {
    std::memset(arena.at(64), 0x5A, 64);
    DMLREF_CHECK_ERROR(
        split(desc, ConstBuffer(arena.at(0), 32),
              {Buffer{arena.at(64), 16}, Buffer{arena.at(76), 16}}),
        ErrorCode::T13,
        "OutputTensors[0] (bytes [0, 16)) overlaps OutputTensors[1] (bytes [12, 28))");
    DMLREF_CHECK_ERROR(split(desc, ConstBuffer(arena.at(0), 32),
                             {Buffer{arena.at(64), 16}, Buffer{arena.at(64), 16}}),
                       ErrorCode::T13, "overlaps OutputTensors[1]");
    CHECK(arena.get<std::uint8_t>(64, 64) == std::vector<std::uint8_t>(64, 0x5A));
  }
  SUBCASE("an output overlapping the input: T13, nothing written") {
    DMLREF_CHECK_ERROR(split(desc, ConstBuffer(arena.at(0), 32),
                             {Buffer{arena.at(64), 16}, Buffer{arena.at(28), 16}}),
                       ErrorCode::T13,
                       "OutputTensors[1] (bytes [28, 44)) overlaps InputTensor (bytes [0, 32))");
    CHECK(arena.get<std::int32_t>(0, 8) == values);
  }
  SUBCASE("a zero-stride output: T12") {
    const TensorDesc broadcast = desc_of(DataType::Int32, {2, 2}, {2, 0});
    const BufferTensorDesc outs[] = {h, broadcast.desc()};
    DMLREF_CHECK_ERROR(split(SplitOperatorDesc{&w, 2, outs, 1}, ConstBuffer(arena.at(0), 32),
                             {Buffer{arena.at(64), 16}, Buffer{arena.at(128), 16}}),
                       ErrorCode::T12, "OutputTensors[1].Strides[1] is 0 with Sizes[1] 2");
  }
}

TEST_CASE("hostile aliasing: SCATTER") {
  Arena arena;
  SUBCASE("the input bound again as the updates: accepted and correct") {
    const TensorDesc data = desc_of(DataType::Float32, {4});
    const TensorDesc indices = desc_of(DataType::UInt32, {4});
    const BufferTensorDesc d = data.desc(), i = indices.desc();
    arena.put(0, std::vector<float>{1, 2, 3, 4});
    arena.put(64, std::vector<std::uint32_t>{3, 2, 1, 0});
    scatter(ScatterOperatorDesc{&d, &i, &d, &d, 0}, ConstBuffer(arena.at(0), 16),
            ConstBuffer(arena.at(64), 16), ConstBuffer(arena.at(0), 16), Buffer{arena.at(128), 16});
    CHECK(arena.get<float>(128, 4) == std::vector<float>{4, 3, 2, 1});
  }
  SUBCASE("the input's bytes read as the indices too (INT32 both): accepted and correct") {
    const TensorDesc data = desc_of(DataType::Int32, {4});
    const BufferTensorDesc d = data.desc();
    arena.put(0, std::vector<std::int32_t>{3, 2, 1, 0});
    arena.put(64, std::vector<std::int32_t>{10, 20, 30, 40});
    scatter(ScatterOperatorDesc{&d, &d, &d, &d, 0}, ConstBuffer(arena.at(0), 16),
            ConstBuffer(arena.at(0), 16), ConstBuffer(arena.at(64), 16), Buffer{arena.at(128), 16});
    CHECK(arena.get<std::int32_t>(128, 4) == std::vector<std::int32_t>{40, 30, 20, 10});
    // Negative indices read from the same bytes as data: -1 is the last element.
    arena.put(0, std::vector<std::int32_t>{-1, -2, -3, -4});
    scatter(ScatterOperatorDesc{&d, &d, &d, &d, 0}, ConstBuffer(arena.at(0), 16),
            ConstBuffer(arena.at(0), 16), ConstBuffer(arena.at(64), 16), Buffer{arena.at(128), 16});
    CHECK(arena.get<std::int32_t>(128, 4) == std::vector<std::int32_t>{40, 30, 20, 10});
  }
  SUBCASE("the output overlapping the indices or the updates: T13, nothing written") {
    const TensorDesc data = desc_of(DataType::UInt32, {4});
    const BufferTensorDesc d = data.desc();
    arena.put(0, std::vector<std::uint32_t>{7, 7, 7, 7});
    arena.put(64, std::vector<std::uint32_t>{0, 1, 2, 3});
    arena.put(128, std::vector<std::uint32_t>{5, 6, 7, 8});
    const std::vector<std::uint32_t> before = arena.get<std::uint32_t>(0, 48);
    DMLREF_CHECK_ERROR(scatter(ScatterOperatorDesc{&d, &d, &d, &d, 0}, ConstBuffer(arena.at(0), 16),
                               ConstBuffer(arena.at(64), 16), ConstBuffer(arena.at(128), 16),
                               Buffer{arena.at(72), 16}),
                       ErrorCode::T13, "overlaps IndicesTensor");
    DMLREF_CHECK_ERROR(scatter(ScatterOperatorDesc{&d, &d, &d, &d, 0}, ConstBuffer(arena.at(0), 16),
                               ConstBuffer(arena.at(64), 16), ConstBuffer(arena.at(128), 16),
                               Buffer{arena.at(128), 16}),
                       ErrorCode::T13, "overlaps UpdatesTensor");
    DMLREF_CHECK_ERROR(scatter(ScatterOperatorDesc{&d, &d, &d, &d, 0}, ConstBuffer(arena.at(0), 16),
                               ConstBuffer(arena.at(64), 16), ConstBuffer(arena.at(128), 16),
                               Buffer{arena.at(0), 16}),
                       ErrorCode::T13, "overlaps InputTensor");
    CHECK(arena.get<std::uint32_t>(0, 48) == before);
  }
  SUBCASE("a zero-stride output: T12") {
    const TensorDesc data = desc_of(DataType::Float32, {4});
    const TensorDesc broadcast = desc_of(DataType::Float32, {4}, {0});
    const TensorDesc indices = desc_of(DataType::UInt32, {4});
    const BufferTensorDesc d = data.desc(), b = broadcast.desc(), i = indices.desc();
    DMLREF_CHECK_ERROR(scatter(ScatterOperatorDesc{&d, &i, &d, &b, 0}, ConstBuffer(arena.at(0), 16),
                               ConstBuffer(arena.at(64), 16), ConstBuffer(arena.at(128), 16),
                               Buffer{arena.at(192), 4}),
                       ErrorCode::T12, "OutputTensor.Strides[0] is 0 with Sizes[0] 4");
  }
}

TEST_CASE("hostile aliasing: GATHER_ND1") {
  Arena arena;
  // Input {1,4} (r = 1), indices {2,1} (q = 2, one coordinate per tuple) -> output {1,2}.
  const TensorDesc input = desc_of(DataType::UInt32, {1, 4});
  const TensorDesc indices = desc_of(DataType::UInt32, {2, 1});
  const TensorDesc output = desc_of(DataType::UInt32, {1, 2});
  const BufferTensorDesc in = input.desc(), ix = indices.desc(), out = output.desc();
  const GatherNd1OperatorDesc desc{&in, &ix, &out, 1, 2, 0};
  SUBCASE("the input's first elements read as the indices: accepted and correct") {
    arena.put(0, std::vector<std::uint32_t>{2, 3, 5, 7});
    gather_nd1(desc, ConstBuffer(arena.at(0), 16), ConstBuffer(arena.at(0), 8),
               Buffer{arena.at(64), 8});
    CHECK(arena.get<std::uint32_t>(64, 2) == std::vector<std::uint32_t>{5, 7});
    // The same bytes through a view one element in: indices {3, 5}, 5 is out of range (G10).
    DMLREF_CHECK_ERROR(gather_nd1(desc, ConstBuffer(arena.at(0), 16), ConstBuffer(arena.at(4), 8),
                                  Buffer{arena.at(64), 8}),
                       ErrorCode::G10, "IndicesTensor[1,0] is 5");
  }
  SUBCASE("the output overlapping the input or the indices: T13, nothing written") {
    arena.put(0, std::vector<std::uint32_t>{2, 3, 5, 7});
    arena.put(64, std::vector<std::uint32_t>{1, 0});
    DMLREF_CHECK_ERROR(gather_nd1(desc, ConstBuffer(arena.at(0), 16), ConstBuffer(arena.at(64), 8),
                                  Buffer{arena.at(68), 8}),
                       ErrorCode::T13, "OutputTensor (bytes [4, 12)) overlaps IndicesTensor");
    DMLREF_CHECK_ERROR(gather_nd1(desc, ConstBuffer(arena.at(0), 16), ConstBuffer(arena.at(64), 8),
                                  Buffer{arena.at(8), 8}),
                       ErrorCode::T13, "overlaps InputTensor");
    CHECK(arena.get<std::uint32_t>(0, 4) == std::vector<std::uint32_t>{2, 3, 5, 7});
    CHECK(arena.get<std::uint32_t>(64, 2) == std::vector<std::uint32_t>{1, 0});
  }
  SUBCASE("a zero-stride output: T12") {
    const TensorDesc broadcast = desc_of(DataType::UInt32, {1, 2}, {2, 0});
    const BufferTensorDesc b = broadcast.desc();
    DMLREF_CHECK_ERROR(
        gather_nd1(GatherNd1OperatorDesc{&in, &ix, &b, 1, 2, 0}, ConstBuffer(arena.at(0), 16),
                   ConstBuffer(arena.at(64), 8), Buffer{arena.at(128), 4}),
        ErrorCode::T12, "OutputTensor.Strides[1] is 0 with Sizes[1] 2");
  }
}

TEST_CASE("hostile aliasing: REVERSE_SUBSEQUENCES") {
  Arena arena;
  const TensorDesc data = desc_of(DataType::UInt32, {2, 3});
  const TensorDesc lengths = desc_of(DataType::UInt32, {2, 1});
  const BufferTensorDesc d = data.desc(), l = lengths.desc();
  const ReverseSubsequencesOperatorDesc desc{&d, &l, &d, 1};
  SUBCASE("the lengths read from the input's first elements: accepted and correct") {
    arena.put(0, std::vector<std::uint32_t>{2, 1, 9, 4, 5, 6});  // lengths {2, 1}
    reverse_subsequences(desc, ConstBuffer(arena.at(0), 24), ConstBuffer(arena.at(0), 8),
                         Buffer{arena.at(64), 24});
    CHECK(arena.get<std::uint32_t>(64, 6) == std::vector<std::uint32_t>{1, 2, 9, 4, 5, 6});
    // The same bytes broadcast as one length for both rows (stride 0 on an input: allowed).
    const TensorDesc one = desc_of(DataType::UInt32, {2, 1}, {0, 0});
    const BufferTensorDesc o = one.desc();
    reverse_subsequences(ReverseSubsequencesOperatorDesc{&d, &o, &d, 1},
                         ConstBuffer(arena.at(0), 24), ConstBuffer(arena.at(8), 4),
                         Buffer{arena.at(64), 24});
    CHECK(arena.get<std::uint32_t>(64, 6) == std::vector<std::uint32_t>{9, 1, 2, 6, 5, 4});
  }
  SUBCASE("the output overlapping the lengths or the input: T13, nothing written") {
    arena.put(0, std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6});
    arena.put(64, std::vector<std::uint32_t>{3, 3});
    DMLREF_CHECK_ERROR(
        reverse_subsequences(desc, ConstBuffer(arena.at(0), 24), ConstBuffer(arena.at(64), 8),
                             Buffer{arena.at(48), 24}),
        ErrorCode::T13,
        "OutputTensor (bytes [0, 24)) overlaps SequenceLengthsTensor (bytes [16, 24))");
    DMLREF_CHECK_ERROR(reverse_subsequences(desc, ConstBuffer(arena.at(0), 24),
                                            ConstBuffer(arena.at(64), 8), Buffer{arena.at(0), 24}),
                       ErrorCode::T13, "overlaps InputTensor");
    CHECK(arena.get<std::uint32_t>(0, 6) == std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6});
    CHECK(arena.get<std::uint32_t>(64, 2) == std::vector<std::uint32_t>{3, 3});
  }
  SUBCASE("a zero-stride output: T12") {
    const TensorDesc broadcast = desc_of(DataType::UInt32, {2, 3}, {0, 1});
    const BufferTensorDesc b = broadcast.desc();
    DMLREF_CHECK_ERROR(
        reverse_subsequences(ReverseSubsequencesOperatorDesc{&d, &l, &b, 1},
                             ConstBuffer(arena.at(0), 24), ConstBuffer(arena.at(64), 8),
                             Buffer{arena.at(128), 12}),
        ErrorCode::T12, "OutputTensor.Strides[0] is 0 with Sizes[0] 2");
  }
}

// ------------------------------------------------------------------------------------------------
// Untrusted counts, extents at the end of the address space, and T13 over many tensors

TEST_CASE("hostile: a huge InputCount/OutputCount over a short array is an error, not an allocation") {
  // The description-only overloads must read and check the elements a count promises before
  // allocating anything for it: here the array's second element is invalid, so validation stops
  // there with T1 whatever the count says (and never reads past it).
  const TensorDesc good = desc_of(DataType::Float32, {2, 3});
  BufferTensorDesc array[2] = {good.desc(), good.desc()};
  array[1].DataType = DataType::Unknown;
  const BufferTensorDesc whole = good.desc();
  for (const std::uint32_t count : {std::uint32_t{1} << 28, std::uint32_t{1} << 31, kU32Max}) {
    CAPTURE(count);
    DMLREF_CHECK_ERROR(validate_join(JoinOperatorDesc{count, array, &whole, 0}), ErrorCode::T1,
                       "JOIN: InputTensors[1].DataType is");
    DMLREF_CHECK_ERROR(validate_split(SplitOperatorDesc{&whole, count, array, 0}), ErrorCode::T1,
                       "SPLIT: OutputTensors[1].DataType is");
  }
}

TEST_CASE("hostile: a buffer that claims a range past the address space is T13, never a wrapped range") {
  // UINT16 {2^31 + 1} with stride 2^32 - 1: the last element sits at offset 2^63 - 2^31, so the
  // tensor spans 2^64 - 2^32 + 2 bytes. That passes T8 (it fits 64 bits unsigned) and the buffer
  // below claims that size (T10), although it is 64 bytes. (max + 1) * 2 overflows int64; wrapped,
  // the range ended below its start and the aliased output went unnoticed, then the copy ran off
  // the buffer. The output and the input share one pointer: the call must be T13.
  const std::uint32_t n = (std::uint32_t{1} << 31) + 1;
  const TensorDesc far = desc_of(DataType::UInt16, {n}, {kU32Max});
  REQUIRE(far.total_tensor_size_in_bytes == 0xFFFFFFFF00000004ull);
  const TensorDesc packed = desc_of(DataType::UInt16, {n});
  const BufferTensorDesc f = far.desc(), p = packed.desc();
  Arena arena;
  const std::vector<std::uint16_t> values = {1, 2, 3, 4};
  arena.put(0, values);
  DMLREF_CHECK_ERROR(join(JoinOperatorDesc{1, &f, &p, 0},
                          {ConstBuffer(arena.at(0), f.TotalTensorSizeInBytes)},
                          Buffer{arena.at(0), p.TotalTensorSizeInBytes}),
                     ErrorCode::T13, "JOIN: ");
  DMLREF_CHECK_ERROR(split(SplitOperatorDesc{&f, 1, &p, 0},
                           ConstBuffer(arena.at(0), f.TotalTensorSizeInBytes),
                           {Buffer{arena.at(0), p.TotalTensorSizeInBytes}}),
                     ErrorCode::T13, "SPLIT: ");
  CHECK(arena.get<std::uint16_t>(0, 4) == values);

  // The extent itself, in unsigned 64-bit: near the top of the address space it wraps.
  const auto* top = reinterpret_cast<const void*>(std::numeric_limits<std::uintptr_t>::max() - 7);
  CHECK(tensor_extent("x", top, Layout::packed({1}), 4, false).wraps == false);
  CHECK(tensor_extent("x", top, Layout::packed({2}), 4, false).wraps == true);  // ends at 2^64
  const TensorExtent wrapping = tensor_extent("OutputTensor", top, Layout::packed({2}), 4, true);
  DMLREF_CHECK_ERROR(detail::check_no_overlap("JOIN", std::span<const TensorExtent>(&wrapping, 1)),
                     ErrorCode::T13, "JOIN: OutputTensor's bytes run past the end of the 64-bit");
  // Negative strides (typed layer) below address 0 wrap too.
  const auto* bottom = reinterpret_cast<const void*>(std::uintptr_t{8});
  CHECK(tensor_extent("x", bottom, Layout::strided({3}, {-1}), 8, false).wraps == true);
  CHECK(tensor_extent("x", bottom, Layout::strided({3}, {-1}), 4, false).wraps == false);
  const TensorExtent low = tensor_extent("x", bottom, Layout::strided({3}, {-1}), 2, false);
  CHECK(low.wraps == false);
  CHECK(low.begin == 4);
  CHECK(low.end == 10);
}

namespace {

// T13 as a check of every pair in order: the first output (by position) that overlaps any tensor,
// and the first tensor it overlaps. The sweep must name the same pair.
std::string pairwise_t13(const std::vector<TensorExtent>& tensors) {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    for (std::size_t j = 0; j < tensors.size(); ++j) {
      const TensorExtent& a = tensors[i];
      const TensorExtent& b = tensors[j];
      if (i == j || !a.is_output || (b.is_output && j < i)) continue;
      if (a.begin < b.end && b.begin < a.end) return a.name + " overlaps " + b.name;
    }
  }
  return "";
}

}  // namespace

TEST_CASE("hostile: T13 over many tensors names the pair a check of every pair names") {
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  const auto next = [&](std::uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  std::size_t overlapping = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<TensorExtent> tensors;
    const std::size_t count = 1 + next(12);
    for (std::size_t i = 0; i < count; ++i) {
      const std::uintptr_t begin = 4096 + next(200);
      tensors.push_back({"T" + std::to_string(i), begin, begin + 1 + next(40), next(2) == 0, false});
    }
    const std::string expected = pairwise_t13(tensors);
    std::string got;
    try {
      detail::check_no_overlap("OP", std::span<const TensorExtent>(tensors));
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::T13);
      const std::string what = e.what();
      const auto open = what.find(" (bytes ["), mid = what.find(")) overlaps "),
                 close = what.find(" (bytes [", mid);
      got = what.substr(4, open - 4) + " overlaps " + what.substr(mid + 12, close - mid - 12);
    }
    CHECK_MESSAGE(got == expected, "round ", round);
    overlapping += !expected.empty();
  }
  CHECK(overlapping > 500);  // both outcomes are well exercised
  CHECK(overlapping < 1900);
}

TEST_CASE("hostile: SPLIT into 65,536 outputs and JOIN back (T13 over 65,537 tensors)") {
  constexpr std::uint32_t kPieces = 65536;
  const TensorDesc whole = desc_of(DataType::UInt8, {1, kPieces});
  const TensorDesc one = desc_of(DataType::UInt8, {1, 1});
  const std::vector<BufferTensorDesc> pieces(kPieces, one.desc());
  const BufferTensorDesc w = whole.desc();
  std::vector<std::uint8_t> input(kPieces), outputs(std::size_t{kPieces} * 4, 0), back(kPieces);
  for (std::uint32_t i = 0; i < kPieces; ++i) input[i] = static_cast<std::uint8_t>(i * 7 + 1);
  std::vector<Buffer> out_buffers;
  std::vector<ConstBuffer> in_buffers;
  for (std::uint32_t i = 0; i < kPieces; ++i) {
    out_buffers.push_back({outputs.data() + 4 * std::size_t{i}, 4});
    in_buffers.push_back(out_buffers.back());
  }
  split(SplitOperatorDesc{&w, kPieces, pieces.data(), 1}, ConstBuffer(input.data(), input.size()),
        out_buffers);
  // Piece i holds element i and nothing else touched its 4-byte slot (a split and a join that
  // misplaced pieces alike would still round-trip).
  std::vector<std::uint8_t> expected(outputs.size(), 0);
  for (std::uint32_t i = 0; i < kPieces; ++i) expected[4 * std::size_t{i}] = input[i];
  CHECK(outputs == expected);
  join(JoinOperatorDesc{kPieces, pieces.data(), &w, 1}, in_buffers, Buffer{back.data(), back.size()});
  CHECK(back == input);
  // The last output moved onto the first: named as a check of every pair would name it.
  out_buffers.back().data = outputs.data();
  DMLREF_CHECK_ERROR(split(SplitOperatorDesc{&w, kPieces, pieces.data(), 1},
                           ConstBuffer(input.data(), input.size()), out_buffers),
                     ErrorCode::T13, "SPLIT: OutputTensors[0] (bytes [0, 1)) overlaps "
                                     "OutputTensors[65535] (bytes [0, 1))");
}

}  // namespace test_hostile
