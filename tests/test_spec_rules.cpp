// Spec rules the operator test files leave unchecked, or check only where a wrong implementation
// would pass too: each case below breaks (or exercises) exactly one rule of docs/<op>.md and
// asserts the code and the message, or exact values worked out by hand from the spec's formulas.
#include "test_support.hpp"

#include <cstdint>
#include <vector>

namespace test_spec_rules {  // this file's own names (tests/CMakeLists.txt: unity groups)

using namespace dmlref;

namespace {

using Sizes = std::vector<std::uint32_t>;

using dmlref::test::cbuf;
using dmlref::test::mbuf;

// Four packed SCATTER descriptions that tests may break one field at a time.
struct Scatter4 {
  TensorDesc input, indices, updates, output;
  BufferTensorDesc i = input.desc(), x = indices.desc(), u = updates.desc(), o = output.desc();
  ScatterOperatorDesc desc(std::uint32_t axis) const { return {&i, &x, &u, &o, axis}; }
};

Scatter4 scatter4(DataType data, DataType index, const Sizes& in, const Sizes& ix) {
  return {TensorDesc(data, in), TensorDesc(index, ix), TensorDesc(data, ix), TensorDesc(data, in)};
}

}  // namespace

// ---- SCATTER ------------------------------------------------------------------------------------

TEST_CASE("spec SC1: UpdatesTensor's DimensionCount differs (indices and output agree)") {
  // The operator files break IndicesTensor's and OutputTensor's rank only.
  const Scatter4 r{TensorDesc(DataType::Float32, {2, 3}), TensorDesc(DataType::UInt32, {2, 3}),
                   TensorDesc(DataType::Float32, {1, 2, 3}), TensorDesc(DataType::Float32, {2, 3})};
  DMLREF_CHECK_ERROR(validate_scatter(r.desc(0)), ErrorCode::SC1,
                     "SCATTER: UpdatesTensor.DimensionCount is 3 but InputTensor.DimensionCount "
                     "is 2");
  const std::vector<float> in(6), up(6);
  const std::vector<std::uint32_t> ix(6);
  std::vector<float> out(6, -1.0f);
  DMLREF_CHECK_ERROR(scatter(TensorView<const float>(in.data(), {2, 3}),
                             TensorView<const std::uint32_t>(ix.data(), {2, 3}),
                             TensorView<const float>(up.data(), {1, 2, 3}),
                             TensorView<float>(out.data(), {2, 3}), 0),
                     ErrorCode::SC1, "UpdatesTensor.DimensionCount is 3");
  CHECK(out == std::vector<float>(6, -1.0f));
}

TEST_CASE("spec SC7: the Axis dimension is exempt, every other one is not (Axis 1)") {
  // The operator files break SC7 with Axis 0 only; here Axis 1 and dimension 0 differs.
  const Scatter4 bad = scatter4(DataType::Float32, DataType::UInt32, {2, 3}, {1, 3});
  DMLREF_CHECK_ERROR(validate_scatter(bad.desc(1)), ErrorCode::SC7,
                     "SCATTER: IndicesTensor.Sizes[0] is 1 but InputTensor.Sizes[0] is 2; every "
                     "dimension except Axis (1) must match");
  // Along Axis the indices may be smaller or larger than the input (larger: duplicates).
  CHECK(validate_scatter(scatter4(DataType::Float32, DataType::UInt32, {2, 3}, {2, 1}).desc(1)) ==
        Sizes{2, 3});
  const std::vector<float> input = {0, 1, 2, 3, 4, 5};
  const std::vector<std::uint32_t> indices = {2, 0, 1, 1, 1, 0, 0, 2};  // {2,4}, Axis 1
  const std::vector<float> updates = {10, 11, 12, 13, 20, 21, 22, 23};
  std::vector<float> out(6, -1.0f);
  scatter(TensorView<const float>(input.data(), {2, 3}),
          TensorView<const std::uint32_t>(indices.data(), {2, 4}),
          TensorView<const float>(updates.data(), {2, 4}), TensorView<float>(out.data(), {2, 3}),
          1);
  // Row 0: [2]=10, [0]=11, [1]=12, [1]=13 (last wins). Row 1: [1]=20, [0]=21, [0]=22, [2]=23.
  CHECK(out == std::vector<float>{11, 13, 10, 22, 20, 23});
}

TEST_CASE("spec SC8: a negative index counts from the end of Axis, not of another dimension") {
  // Input {2,3}, Axis 1: -1 is column 2 (Sizes[1] = 3); wrapping by Sizes[0] = 2 would give 1.
  const std::vector<float> input = {0, 1, 2, 3, 4, 5};
  const std::vector<std::int32_t> indices = {-1, -3, -2, 0, 1, 2};
  const std::vector<float> updates = {10, 11, 12, 20, 21, 22};
  std::vector<float> out(6, -1.0f);
  scatter(TensorView<const float>(input.data(), {2, 3}),
          TensorView<const std::int32_t>(indices.data(), {2, 3}),
          TensorView<const float>(updates.data(), {2, 3}), TensorView<float>(out.data(), {2, 3}),
          1);
  CHECK(out == std::vector<float>{11, 12, 10, 20, 21, 22});
  // -4 is below -n = -3: rejected, with the signed range of Axis's size.
  const std::vector<std::int32_t> low = {0, 1, 2, -4, 1, 2};
  DMLREF_CHECK_ERROR(scatter(TensorView<const float>(input.data(), {2, 3}),
                             TensorView<const std::int32_t>(low.data(), {2, 3}),
                             TensorView<const float>(updates.data(), {2, 3}),
                             TensorView<float>(out.data(), {2, 3}), 1),
                     ErrorCode::SC8,
                     "IndicesTensor[1,0] is -4 but InputTensor.Sizes[1] is 3; indices must lie in "
                     "[-3, 2]");
}

TEST_CASE("spec SCATTER feature levels: rows the operator file does not reach") {
  ScatterOptions o;
  SUBCASE("2_1 takes UINT32 indices only: UINT64 names 3_0") {
    o.feature_level = FeatureLevel::k2_1;
    const Scatter4 r = scatter4(DataType::Float32, DataType::UInt64, {1, 1, 2, 3}, {1, 1, 2, 3});
    DMLREF_CHECK_ERROR(validate_scatter(r.desc(3), o), ErrorCode::FeatureLevel,
                       "SCATTER: IndicesTensor.DataType UINT64 needs DML_FEATURE_LEVEL_3_0; the "
                       "target is DML_FEATURE_LEVEL_2_1");
  }
  SUBCASE("1_0 takes FLOAT32 and FLOAT16 data only: each integer type names 2_1") {
    o.feature_level = FeatureLevel::k1_0;
    for (DataType t : {DataType::Int32, DataType::Int16, DataType::UInt32, DataType::UInt16,
                       DataType::UInt8}) {
      CAPTURE(data_type_name(t));
      const Scatter4 r = scatter4(t, DataType::UInt32, {1, 1, 2, 3}, {1, 1, 2, 3});
      DMLREF_CHECK_ERROR(validate_scatter(r.desc(3), o), ErrorCode::FeatureLevel,
                         "InputTensor.DataType " + std::string(data_type_name(t)) +
                             " needs DML_FEATURE_LEVEL_2_1; the target is DML_FEATURE_LEVEL_1_0");
    }
    const Scatter4 f32 = scatter4(DataType::Float32, DataType::UInt32, {1, 1, 2, 3}, {1, 1, 2, 3});
    CHECK(validate_scatter(f32.desc(3), o) == Sizes{1, 1, 2, 3});
  }
  SUBCASE("1_0 takes 4-D only: 3-D names 3_0, the lowest row with 1-8 dimensions") {
    o.feature_level = FeatureLevel::k1_0;
    const Scatter4 r = scatter4(DataType::Float32, DataType::UInt32, {1, 2, 3}, {1, 2, 3});
    DMLREF_CHECK_ERROR(validate_scatter(r.desc(2), o), ErrorCode::FeatureLevel,
                       "SCATTER: InputTensor.DimensionCount 3 needs DML_FEATURE_LEVEL_3_0; the "
                       "target is DML_FEATURE_LEVEL_1_0");
  }
}

// ---- JOIN and SPLIT feature levels --------------------------------------------------------------

TEST_CASE("spec JOIN/SPLIT feature levels: 1_0 lacks UINT8 too; JOIN's 3_0 row stops at 5-D") {
  const TensorDesc u8in(DataType::UInt8, {1, 1, 2, 2}), u8out(DataType::UInt8, {1, 1, 2, 4});
  const BufferTensorDesc join_ins[] = {u8in.desc(), u8in.desc()};
  const BufferTensorDesc join_out = u8out.desc();
  const JoinOperatorDesc join_desc{2, join_ins, &join_out, 3};
  DMLREF_CHECK_ERROR(validate_join(join_desc, JoinOptions{FeatureLevel::k1_0}),
                     ErrorCode::FeatureLevel,
                     "JOIN: InputTensors[0].DataType UINT8 needs DML_FEATURE_LEVEL_2_1; the target "
                     "is DML_FEATURE_LEVEL_1_0");
  CHECK_NOTHROW(validate_join(join_desc, JoinOptions{FeatureLevel::k2_1}));

  const BufferTensorDesc split_in = u8out.desc();
  const BufferTensorDesc split_outs[] = {u8in.desc(), u8in.desc()};
  const SplitOperatorDesc split_desc{&split_in, 2, split_outs, 3};
  DMLREF_CHECK_ERROR(validate_split(split_desc, SplitOptions{FeatureLevel::k1_0}),
                     ErrorCode::FeatureLevel,
                     "SPLIT: InputTensor.DataType UINT8 needs DML_FEATURE_LEVEL_2_1; the target is "
                     "DML_FEATURE_LEVEL_1_0");
  CHECK_NOTHROW(validate_split(split_desc, SplitOptions{FeatureLevel::k2_1}));

  // JOIN at 3_0 admits 4-5 dimensions (the operator file tries 3-D only): 6-D names 4_1.
  const TensorDesc in6(DataType::Float32, {1, 1, 1, 1, 2, 2}),
      out6(DataType::Float32, {1, 1, 1, 1, 2, 4});
  const BufferTensorDesc ins6[] = {in6.desc(), in6.desc()};
  const BufferTensorDesc o6 = out6.desc();
  const JoinOperatorDesc six{2, ins6, &o6, 5};
  DMLREF_CHECK_ERROR(validate_join(six, JoinOptions{FeatureLevel::k3_0}), ErrorCode::FeatureLevel,
                     "InputTensors[0].DimensionCount 6 needs DML_FEATURE_LEVEL_4_1; the target is "
                     "DML_FEATURE_LEVEL_3_0 (which allows 4 to 5)");
  CHECK_NOTHROW(validate_join(six, JoinOptions{FeatureLevel::k4_1}));

  // Both are introduced at 1_0, where 4-D FLOAT32 is admitted.
  const TensorDesc f4in(DataType::Float32, {1, 1, 2, 2}), f4out(DataType::Float32, {1, 1, 2, 4});
  const BufferTensorDesc f_ins[] = {f4in.desc(), f4in.desc()};
  const BufferTensorDesc f_out = f4out.desc();
  CHECK_NOTHROW(
      validate_join(JoinOperatorDesc{2, f_ins, &f_out, 3}, JoinOptions{FeatureLevel::k1_0}));
  CHECK_NOTHROW(validate_split(SplitOperatorDesc{&f_out, 2, f_ins, 3},
                               SplitOptions{FeatureLevel::k1_0}));
}

// ---- GATHER_ND1 ---------------------------------------------------------------------------------

TEST_CASE("spec G10: a negative index wraps by the size of the dimension it addresses") {
  // Input {2,3} iota, r = q = 2, b = 0, m = 2: tuple (-1,-1) is element [1,2] = 5 and (-2,-3) is
  // [0,0] = 0. Wrapping both coordinates by Sizes[0] = 2 would give [1,1] and an error.
  const std::vector<float> in = {0, 1, 2, 3, 4, 5};
  const std::vector<std::int64_t> ix = {-1, -1, -2, -3};
  std::vector<float> out(2, -1.0f);
  gather_nd1(TensorView<const float>(in.data(), {2, 3}),
             TensorView<const std::int64_t>(ix.data(), {2, 2}),
             TensorView<float>(out.data(), {1, 2}), 2, 2, 0);
  CHECK(out == std::vector<float>{5, 0});
  // 2 is legal in dimension 1 (size 3) but not in dimension 0 (size 2): the message names the
  // addressed dimension and its own range.
  const std::vector<std::int64_t> bad = {1, 2, 2, 1};
  DMLREF_CHECK_ERROR(gather_nd1(TensorView<const float>(in.data(), {2, 3}),
                                TensorView<const std::int64_t>(bad.data(), {2, 2}),
                                TensorView<float>(out.data(), {1, 2}), 2, 2, 0),
                     ErrorCode::G10,
                     "IndicesTensor[1,0] is 2 but InputTensor.Sizes[0] is 2; indices must lie in "
                     "[-2, 1]");
}

TEST_CASE("spec G10 with a batch dimension: the index addresses Input.Sizes[R-r+b+j]") {
  // Input {2,3,4} iota, Indices {2,1}, r = 3, q = 2, b = 1 -> m = 1, k = 1, Output {1,2,4}.
  // Batch 0 takes row -1 of a size-3 dimension (row 2: 8..11), batch 1 row -3 (row 0: 12..15).
  std::vector<float> in(24);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  const std::vector<std::int32_t> ix = {-1, -3};
  std::vector<float> out(8, -1.0f);
  const TensorDesc di(DataType::Float32, {2, 3, 4}), dx(DataType::Int32, {1, 2, 1}),
      dout(DataType::Float32, {1, 2, 4});
  const BufferTensorDesc i = di.desc(), x = dx.desc(), o = dout.desc();
  const GatherNd1OperatorDesc desc{&i, &x, &o, 3, 2, 1};
  CHECK(infer_gather_nd1_output_sizes({2, 3, 4}, {1, 2, 1}, 3, 2, 1) == Sizes{1, 2, 4});
  gather_nd1(desc, cbuf(in), cbuf(ix), mbuf(out));
  CHECK(out == std::vector<float>{8, 9, 10, 11, 12, 13, 14, 15});
}

// ---- REVERSE_SUBSEQUENCES -----------------------------------------------------------------------

TEST_CASE("spec R3: the rule's own example, input {2,3,4,5} with Axis 1 takes lengths {2,1,4,5}") {
  const TensorDesc in(DataType::Float32, {2, 3, 4, 5}), len(DataType::UInt32, {2, 1, 4, 5});
  const BufferTensorDesc i = in.desc(), l = len.desc(), o = in.desc();
  CHECK(validate_reverse_subsequences(ReverseSubsequencesOperatorDesc{&i, &l, &o, 1}) ==
        Sizes{2, 3, 4, 5});
  // The same lengths with Axis 2 are wrong on Axis (size 4, must be 1) and on dimension 1.
  DMLREF_CHECK_ERROR(validate_reverse_subsequences(ReverseSubsequencesOperatorDesc{&i, &l, &o, 2}),
                     ErrorCode::R3,
                     "SequenceLengthsTensor.Sizes[1] is 1 but InputTensor.Sizes[1] is 3; every "
                     "dimension except Axis (2) must match");
}

TEST_CASE("spec R3: a dimension after Axis must match too") {
  // The operator files break R3 on Axis itself or on a dimension before it only.
  const TensorDesc in(DataType::Float32, {1, 1, 3, 4}), len(DataType::UInt32, {1, 1, 1, 3});
  const BufferTensorDesc i = in.desc(), l = len.desc(), o = in.desc();
  const char* message =
      "REVERSE_SUBSEQUENCES: SequenceLengthsTensor.Sizes[3] is 3 but InputTensor.Sizes[3] is 4; "
      "every dimension except Axis (2) must match";
  DMLREF_CHECK_ERROR(validate_reverse_subsequences(ReverseSubsequencesOperatorDesc{&i, &l, &o, 2}),
                     ErrorCode::R3, message);
  const std::vector<float> x(12);
  const std::vector<std::uint32_t> lengths(3, 2);
  std::vector<float> out(12, -1.0f);
  DMLREF_CHECK_ERROR(reverse_subsequences(TensorView<const float>(x.data(), {1, 1, 3, 4}),
                                          TensorView<const std::uint32_t>(lengths.data(),
                                                                          {1, 1, 1, 3}),
                                          TensorView<float>(out.data(), {1, 1, 3, 4}), 2),
                     ErrorCode::R3, message);
  CHECK(out == std::vector<float>(12, -1.0f));
}

TEST_CASE("spec R semantics: a length beyond the axis clamps to it, 64-bit lengths included") {
  // A length of 2^32 + 2 must reverse the whole sequence; cut to 32 bits it would be 2.
  const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<std::uint64_t> len = {(std::uint64_t{1} << 32) + 2, 5};
  std::vector<float> out(8, -1.0f);
  reverse_subsequences(TensorView<const float>(in.data(), {2, 4}),
                       TensorView<const std::uint64_t>(len.data(), {2, 1}),
                       TensorView<float>(out.data(), {2, 4}), 1);
  CHECK(out == std::vector<float>{4, 3, 2, 1, 8, 7, 6, 5});
  const TensorDesc di(DataType::Float32, {2, 4}), dl(DataType::UInt64, {2, 1});
  const BufferTensorDesc i = di.desc(), l = dl.desc(), o = di.desc();
  std::vector<float> rout(8, -1.0f);
  reverse_subsequences(ReverseSubsequencesOperatorDesc{&i, &l, &o, 1}, cbuf(in), cbuf(len),
                       mbuf(rout));
  CHECK(rout == std::vector<float>{4, 3, 2, 1, 8, 7, 6, 5});
  const std::vector<std::uint32_t> len32 = {0xFFFFFFFFu, 3};
  std::vector<float> out32(8, -1.0f);
  reverse_subsequences(TensorView<const float>(in.data(), {2, 4}),
                       TensorView<const std::uint32_t>(len32.data(), {2, 1}),
                       TensorView<float>(out32.data(), {2, 4}), 1);
  CHECK(out32 == std::vector<float>{4, 3, 2, 1, 7, 6, 5, 8});
}

}  // namespace test_spec_rules
