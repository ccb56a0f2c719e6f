// dmlref: SPLIT (DML_SPLIT_OPERATOR_DESC): cut the input into several outputs along one axis.
// Rules S1-S6 and T1-T13 of docs/split.md and docs/tensors.md; the inverse of JOIN
// (ops/join.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "dmlref/ops/pieces.hpp"

namespace dmlref {

// The page's "Tensor support" table; InputTensor and OutputTensors share it. Unlike JOIN (4-5
// dimensions at 3_0), SPLIT's 3_0 row already takes 1-8 dimensions.
inline constexpr SupportRow kSplitSupport[] = {
    {FeatureLevel::k4_1, 1, 8, kAllTypes},
    {FeatureLevel::k3_0, 1, 8,
     {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::Int8,
      DataType::UInt32, DataType::UInt16, DataType::UInt8}},
    {FeatureLevel::k2_1, 4, 4,
     {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::Int8,
      DataType::UInt32, DataType::UInt16, DataType::UInt8}},
    {FeatureLevel::k1_0, 4, 4,
     {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::UInt32,
      DataType::UInt16}},
};
inline constexpr FeatureLevel kSplitIntroduced = FeatureLevel::k1_0;

struct SplitOptions {
  FeatureLevel feature_level = kLatestFeatureLevel;
};

// DML_SPLIT_OPERATOR_DESC with buffer tensor descriptions.
struct SplitOperatorDesc {
  const BufferTensorDesc* InputTensor = nullptr;
  std::uint32_t OutputCount = 0;
  const BufferTensorDesc* OutputTensors = nullptr;  // OutputCount of them
  std::uint32_t Axis = 0;
};

// What validation proves: every tensor's layout, and where each output starts along Axis in the
// input (base_i of the spec's semantics).
struct SplitLayouts {
  DataType data_type = DataType::Unknown;
  std::uint32_t axis = 0;
  Layout input;
  std::vector<Layout> outputs;
  std::vector<std::uint32_t> axis_offsets;
};

namespace detail {

inline constexpr std::string_view kSplit = "SPLIT";

// S1-S6 are the rules JOIN shares (pieces.hpp), worded from SPLIT's side.
inline constexpr PiecesRoles kSplitRoles{
    kSplit, "OutputTensors", "output", "OutputCount", "InputTensor", "input", true,
    {ErrorCode::S1, ErrorCode::S2, ErrorCode::S3, ErrorCode::S4, ErrorCode::S5, ErrorCode::S6},
    kSplitSupport, kSplitIntroduced};

template <class Deferred = void>
inline std::string split_output_name(std::size_t i) { return piece_name(kSplitRoles, i); }

template <class Deferred = void>
inline SplitLayouts split_layouts(PiecesLayouts&& p) {
  return {p.data_type, p.axis, p.whole, std::move(p.pieces), std::move(p.axis_offsets)};
}

// The golden loop, literally the spec's semantics: Output_i[o] = Input[o with o[Axis] + base_i].
// Arguments must have passed validate_split. Elements are copied as bytes so NaN payloads and
// negative zeros survive on any FPU.
template <class T>
void split_reference(const TensorView<const T>& input, std::span<const TensorView<T>> outputs,
                     std::uint32_t axis) {
  // The mapping is the device-usable one (mapping.hpp), the same a GPU kernel calls.
  const mapping::PieceTable pieces = mapping::piece_table(outputs, axis);
  const mapping::SplitPlan plan = mapping::split_plan(mapping::layout_of(input), pieces);
  for (std::uint32_t i = 0; i < plan.pieces.count; ++i) {
    const TensorView<T>& output = outputs[i];
    for_each_coordinate(output.layout(), [&](const Coord& o) {
      std::memcpy(&output[o], input.data() + mapping::split_source(plan, i, o.data()), sizeof(T));
    });
  }
}

}  // namespace detail

// ------------------------------------------------------------------------------------------------
// Output-size inference

namespace detail {

template <class Deferred = void>
inline Layout check_split_input_sizes(std::span<const std::uint32_t> input_sizes,
                                      std::uint32_t axis) {
  if (input_sizes.empty() || input_sizes.size() > kMaxRank) {
    fail(ErrorCode::T2, kSplit, ": InputTensor.DimensionCount is ", input_sizes.size(),
         "; it must be between 1 and ", kMaxRank);
  }
  const Layout layout = Layout::packed(input_sizes);
  check_layout(kSplit, "InputTensor", layout);
  if (axis >= layout.rank) {
    fail(ErrorCode::S4, kSplit, ": Axis is ", axis, " but InputTensor.DimensionCount is ",
         layout.rank, "; Axis must be in [0, ", layout.rank - 1, "]");
  }
  return layout;
}

}  // namespace detail

// One output per piece: the input's sizes with Sizes[Axis] replaced by the piece. Checks T2-T4 on
// the input, S4, S1 (at least one piece), T3 (no piece of 0) and S6 (the pieces sum to the axis).
template <class Deferred = void>
inline std::vector<std::vector<std::uint32_t>> infer_split_output_sizes(
    std::span<const std::uint32_t> input_sizes, std::uint32_t axis,
    std::span<const std::uint32_t> pieces) {
  using detail::fail;
  using detail::kSplit;
  const Layout input = detail::check_split_input_sizes(input_sizes, axis);
  if (pieces.empty()) {
    fail(ErrorCode::S1, kSplit, ": no pieces given; OutputCount must be greater than 0");
  }
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i] == 0) {
      fail(ErrorCode::T3, kSplit, ": pieces[", i, "] is 0, which would make ",
           detail::split_output_name(i), ".Sizes[", axis,
           "] 0; every size must be at least 1 (DirectML has no empty tensors)");
    }
    sum += pieces[i];
  }
  if (sum != input.sizes[axis]) {
    fail(ErrorCode::S6, kSplit, ": the pieces add up to ", sum, " but InputTensor.Sizes[", axis,
         "] is ", input.sizes[axis], "; along Axis (", axis,
         ") the outputs' sizes must sum to the input's");
  }
  std::vector<std::vector<std::uint32_t>> out;
  out.reserve(pieces.size());
  for (std::uint32_t piece : pieces) {
    out.emplace_back(input_sizes.begin(), input_sizes.end());
    out.back()[axis] = piece;
  }
  return out;
}

// Braces pick this overload over the count one, so `{6}` is one piece of 6, never 6 pieces.
template <class Deferred = void>
inline std::vector<std::vector<std::uint32_t>> infer_split_output_sizes(
    std::span<const std::uint32_t> input_sizes, std::uint32_t axis,
    std::initializer_list<std::uint32_t> pieces) {
  return infer_split_output_sizes(input_sizes, axis,
                                  std::span<const std::uint32_t>(pieces.begin(), pieces.size()));
}

// `count` equal outputs; the axis size must divide evenly (S1: count > 0, S6).
template <class Deferred = void>
inline std::vector<std::vector<std::uint32_t>> infer_split_output_sizes(
    std::span<const std::uint32_t> input_sizes, std::uint32_t axis, std::uint32_t count) {
  using detail::fail;
  using detail::kSplit;
  const Layout input = detail::check_split_input_sizes(input_sizes, axis);
  if (count == 0) {
    fail(ErrorCode::S1, kSplit, ": the output count is 0; OutputCount must be greater than 0");
  }
  if (input.sizes[axis] % count != 0) {
    fail(ErrorCode::S6, kSplit, ": InputTensor.Sizes[", axis, "] is ", input.sizes[axis],
         ", which does not divide evenly into ", count, " outputs; along Axis (", axis,
         ") the outputs' sizes must sum to the input's");
  }
  const std::vector<std::uint32_t> pieces(count, input.sizes[axis] / count);
  return infer_split_output_sizes(input_sizes, axis, std::span<const std::uint32_t>(pieces));
}

// ------------------------------------------------------------------------------------------------
// Typed layer. T is deduced from the outputs; the input may be a view of T or of const T.

template <class T>
  requires(!std::is_const_v<T>)
SplitLayouts validate_split(TensorView<const std::type_identity_t<T>> input,
                            std::span<const TensorView<T>> outputs, std::uint32_t axis,
                            const SplitOptions& options = {}) {
  return detail::split_layouts(detail::validate_piece_views(detail::kSplitRoles, outputs, input,
                                                            axis, options.feature_level));
}

template <class T>
  requires(!std::is_const_v<T>)
SplitLayouts validate_split(TensorView<const std::type_identity_t<T>> input,
                            std::initializer_list<TensorView<T>> outputs, std::uint32_t axis,
                            const SplitOptions& options = {}) {
  return validate_split<T>(input, std::span(outputs.begin(), outputs.size()), axis, options);
}

template <class T>
  requires(!std::is_const_v<T>)
SplitLayouts validate_split(TensorView<const std::type_identity_t<T>> input,
                            const std::vector<TensorView<T>>& outputs, std::uint32_t axis,
                            const SplitOptions& options = {}) {
  return validate_split<T>(input, std::span<const TensorView<T>>(outputs), axis, options);
}

// ------------------------------------------------------------------------------------------------
// Runtime layer

namespace detail {

using BoundSplit = BoundPieces;  // InputTensor, then OutputTensors[0..OutputCount)

inline PiecesDesc pieces_desc(const SplitOperatorDesc& desc) {
  return {desc.OutputTensors, desc.OutputCount, desc.InputTensor, desc.Axis};
}

template <class Deferred = void>
inline BoundSplit bind_split(const SplitOperatorDesc& desc, ConstBuffer input,
                             std::span<const Buffer> outputs, const SplitOptions& options) {
  const std::vector<ConstBuffer> pieces(outputs.begin(), outputs.end());
  return bind_pieces(kSplitRoles, pieces_desc(desc), pieces, input, options.feature_level);
}

// The fast path: each output copied from its block of the input, the sub-view that starts base_i
// elements along Axis and has the output's Sizes (PiecesAlongAxis, engine.hpp), by width. Same
// preconditions as split_reference.
template <class T>
void split_fast(const TensorView<const T>& input, std::span<const TensorView<T>> outputs,
                std::uint32_t axis) {
  copy_pieces<BitsOf<T>>({input.data(), &input.layout(), axis, false, outputs.size(), &outputs,
                          &piece_of_views<TensorView<T>>});
}

// The same for bound tensors: InputTensor, then OutputTensors.
template <class Deferred = void>
inline PiecesAlongAxis split_pieces(const BoundSplit& bound,
                                    const std::span<const BoundTensor>& outputs) {
  return bound_pieces_along_axis(kSplitRoles, bound, outputs);
}

}  // namespace detail

// Every rule that needs no buffer (S1-S6, T1-T9, T11, T12, the feature-level table).
template <class Deferred = void>
inline SplitLayouts validate_split(const SplitOperatorDesc& desc,
                                   const SplitOptions& options = {}) {
  detail::PiecesLayouts layouts;
  detail::validate_pieces_descs(detail::kSplitRoles, detail::pieces_desc(desc),
                                options.feature_level, layouts);
  return detail::split_layouts(std::move(layouts));
}

// All of the above plus the bindings: one buffer per output (T9, T10) and no overlap (T13).
template <class Deferred = void>
inline SplitLayouts validate_split(const SplitOperatorDesc& desc, ConstBuffer input,
                                   std::span<const Buffer> outputs,
                                   const SplitOptions& options = {}) {
  return detail::split_layouts(detail::bind_split(desc, input, outputs, options).layouts);
}
template <class Deferred = void>
inline SplitLayouts validate_split(const SplitOperatorDesc& desc, ConstBuffer input,
                                   std::initializer_list<Buffer> outputs,
                                   const SplitOptions& options = {}) {
  return validate_split(desc, input, std::span(outputs.begin(), outputs.size()), options);
}

// ------------------------------------------------------------------------------------------------
// The reference: validate everything, then run the plain loop. Faster paths are diffed against it.

namespace reference {

template <class T>
  requires(!std::is_const_v<T>)
void split(TensorView<const std::type_identity_t<T>> input, std::span<const TensorView<T>> outputs,
           std::uint32_t axis, const SplitOptions& options = {}) {
  validate_split<T>(input, outputs, axis, options);
  detail::split_reference<T>(input, outputs, axis);
}

// A template only so that its body compiles in the translation unit that calls it, not in every
// one that includes dmlref.hpp; callers never name the parameter.
template <class Deferred = void>
void split(const SplitOperatorDesc& desc, ConstBuffer input, std::span<const Buffer> outputs,
           const SplitOptions& options = {}) {
  const detail::BoundSplit bound = detail::bind_split(desc, input, outputs, options);
  // By element width: the plain loop moves bits and never reads a value, so the loop over the
  // unsigned integer of the element's size is the same loop (4 instantiations serve 11 types).
  visit_width(bound.layouts.data_type, [&]<class W>(std::type_identity<W>) {
    detail::split_reference<W>(view_of<const W>(bound.tensors.front()),
                               detail::bound_piece_views<W>(detail::kSplitRoles, bound),
                               bound.layouts.axis);
  });
}

}  // namespace reference

// ------------------------------------------------------------------------------------------------
// The operator: the same validation as the reference, then the fast path (detail::split_fast),
// which tests/test_fastpath_join_split.cpp diffs against the plain loop.

template <class T>
  requires(!std::is_const_v<T>)
void split(TensorView<const std::type_identity_t<T>> input, std::span<const TensorView<T>> outputs,
           std::uint32_t axis, const SplitOptions& options = {}) {
  validate_split<T>(input, outputs, axis, options);
  detail::split_fast<T>(input, outputs, axis);
}

template <class T>
  requires(!std::is_const_v<T>)
void split(TensorView<const std::type_identity_t<T>> input,
           std::initializer_list<TensorView<T>> outputs, std::uint32_t axis,
           const SplitOptions& options = {}) {
  split<T>(input, std::span(outputs.begin(), outputs.size()), axis, options);
}

template <class T>
  requires(!std::is_const_v<T>)
void split(TensorView<const std::type_identity_t<T>> input,
           const std::vector<TensorView<T>>& outputs, std::uint32_t axis,
           const SplitOptions& options = {}) {
  split<T>(input, std::span<const TensorView<T>>(outputs), axis, options);
}

// The runtime entry point: a template only so that the engine compiles in the translation unit
// that calls it (once per element width), not in every one that includes dmlref.hpp.
// `reversed`: tensors the descriptions stand in for, InputTensor then OutputTensors
// (detail::reverse_dimensions).
template <class Deferred = void>
void split(const SplitOperatorDesc& desc, ConstBuffer input, std::span<const Buffer> outputs,
           const SplitOptions& options = {}, std::span<const std::uint8_t> reversed = {}) {
  detail::BoundSplit bound = detail::bind_split(desc, input, outputs, options);
  detail::reverse_dimensions(detail::kSplit, bound.tensors, reversed);
  const std::span<const BoundTensor> pieces(bound.tensors.data() + 1, bound.tensors.size() - 1);
  visit_width(bound.layouts.data_type, [&]<class W>(std::type_identity<W>) {
    detail::copy_pieces<W>(detail::split_pieces(bound, pieces));
  });
}
template <class Deferred = void>
void split(const SplitOperatorDesc& desc, ConstBuffer input, std::initializer_list<Buffer> outputs,
           const SplitOptions& options = {}) {
  split(desc, input, std::span(outputs.begin(), outputs.size()), options);
}

// Compiled once per program with DMLREF_EXTERN_RUNTIME (runtime_instances.hpp).
DMLREF_RUNTIME_INSTANCE(void reference::split<void>(const SplitOperatorDesc&, ConstBuffer,
    std::span<const Buffer>, const SplitOptions&));
DMLREF_RUNTIME_INSTANCE(void split<void>(const SplitOperatorDesc&, ConstBuffer,
    std::span<const Buffer>, const SplitOptions&, std::span<const std::uint8_t>));

}  // namespace dmlref
