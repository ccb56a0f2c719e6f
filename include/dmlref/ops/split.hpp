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

#include "dmlref/data_type.hpp"
#include "dmlref/error.hpp"
#include "dmlref/feature_level.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/mapping_plans.hpp"
#include "dmlref/ops/pieces.hpp"
#include "dmlref/strided_copy.hpp"
#include "dmlref/tensor_desc.hpp"
#include "dmlref/tensor_view.hpp"
#include "dmlref/validation.hpp"

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

inline constexpr PiecesRoles kSplitRoles{
    kSplit, "OutputTensors", "output", "InputTensor", "input",
    {ErrorCode::S2, ErrorCode::S3, ErrorCode::S4, ErrorCode::S5, ErrorCode::S6}};

inline std::string split_output_name(std::size_t i) { return piece_name(kSplitRoles, i); }

// S2, S3, S4, S5, S6, in that order (the rules JOIN shares, pieces.hpp).
inline std::vector<std::uint32_t> check_split_rules(const Layout& input, DataType input_type,
                                                    std::span<const Layout> outputs,
                                                    std::span<const DataType> output_types,
                                                    std::uint32_t axis) {
  return check_pieces_rules(kSplitRoles, outputs, output_types, input, input_type, axis);
}

inline void check_split_support(const Layout& input, DataType input_type,
                                std::span<const Layout> outputs, std::span<const DataType> types,
                                FeatureLevel target) {
  check_support(kSplit, "InputTensor", input.rank, input_type, kSplitSupport, target);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    check_support(kSplit, split_output_name(i), outputs[i].rank,
                  types.empty() ? input_type : types[i], kSplitSupport, target);
  }
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
inline std::vector<std::vector<std::uint32_t>> infer_split_output_sizes(
    std::span<const std::uint32_t> input_sizes, std::uint32_t axis,
    std::initializer_list<std::uint32_t> pieces) {
  return infer_split_output_sizes(input_sizes, axis,
                                  std::span<const std::uint32_t>(pieces.begin(), pieces.size()));
}

// `count` equal outputs; the axis size must divide evenly (S1: count > 0, S6).
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
  using detail::kSplit;
  detail::check_target_level(kSplit, options.feature_level, kSplitIntroduced);
  if (outputs.empty()) {
    detail::fail(ErrorCode::S1, kSplit,
                 ": OutputCount is 0 (no output views); it must be greater than 0");
  }
  SplitLayouts result;
  result.data_type = data_type_of<T>;
  result.axis = axis;
  detail::check_view(kSplit, "InputTensor", input, false);
  result.input = input.layout();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    detail::check_view(kSplit, detail::split_output_name(i), outputs[i], true);
    result.outputs.push_back(outputs[i].layout());
  }
  result.axis_offsets =
      detail::check_split_rules(result.input, result.data_type, result.outputs, {}, axis);
  detail::check_split_support(result.input, result.data_type, result.outputs, {},
                              options.feature_level);
  std::vector<TensorExtent> extents;
  extents.reserve(outputs.size() + 1);
  extents.push_back(tensor_extent("InputTensor", input, false));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    extents.push_back(tensor_extent(detail::split_output_name(i), outputs[i], true));
  }
  detail::check_no_overlap(kSplit, extents);
  return result;
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

struct BoundSplit {
  SplitLayouts layouts;
  std::vector<BoundTensor> tensors;  // InputTensor, then OutputTensors[0..OutputCount)
};

inline void check_split_counts(const SplitOperatorDesc& desc, const SplitOptions& options) {
  check_target_level(kSplit, options.feature_level, kSplitIntroduced);
  if (desc.OutputCount == 0) {
    fail(ErrorCode::S1, kSplit, ": OutputCount is 0; it must be greater than 0");
  }
  if (desc.OutputTensors == nullptr) {
    fail(ErrorCode::NullPointer, kSplit, ": OutputTensors is null but OutputCount is ",
         desc.OutputCount);
  }
}

// Every rule that needs no buffer, in the order counts, T1-T12 per tensor, S2-S6, feature level.
inline std::vector<ValidatedTensor> validate_split_descs(const SplitOperatorDesc& desc,
                                                         const SplitOptions& options,
                                                         SplitLayouts& layouts) {
  check_split_counts(desc, options);
  std::vector<ValidatedTensor> tensors;
  tensors.push_back(validate_tensor_desc(kSplit, "InputTensor", desc.InputTensor, false));
  layouts.input = tensors.back().layout;
  layouts.data_type = tensors.back().data_type;
  std::vector<DataType> types;
  for (std::uint32_t i = 0; i < desc.OutputCount; ++i) {
    tensors.push_back(
        validate_tensor_desc(kSplit, split_output_name(i), &desc.OutputTensors[i], true));
    layouts.outputs.push_back(tensors.back().layout);
    types.push_back(tensors.back().data_type);
  }
  layouts.axis = desc.Axis;
  layouts.axis_offsets =
      check_split_rules(layouts.input, layouts.data_type, layouts.outputs, types, desc.Axis);
  check_split_support(layouts.input, layouts.data_type, layouts.outputs, types,
                      options.feature_level);
  return tensors;
}

inline BoundSplit bind_split(const SplitOperatorDesc& desc, ConstBuffer input,
                             std::span<const Buffer> outputs, const SplitOptions& options) {
  check_split_counts(desc, options);
  if (outputs.size() != desc.OutputCount) {
    fail(ErrorCode::InvalidOption, kSplit, ": OutputCount is ", desc.OutputCount, " but ",
         outputs.size(), " output buffer(s) were given; bind exactly one buffer per output tensor");
  }
  BoundSplit bound;
  std::vector<ValidatedTensor> tensors = validate_split_descs(desc, options, bound.layouts);
  bound.tensors.reserve(tensors.size());
  check_binding(kSplit, tensors[0], *desc.InputTensor, input.data, input.size_in_bytes);
  bound.tensors.push_back({std::move(tensors[0]), input.data});
  for (std::uint32_t i = 0; i < desc.OutputCount; ++i) {
    check_binding(kSplit, tensors[i + 1], desc.OutputTensors[i], outputs[i].data,
                  outputs[i].size_in_bytes);
    bound.tensors.push_back({std::move(tensors[i + 1]), outputs[i].data});
  }
  check_no_overlap(kSplit, std::span<const BoundTensor>(bound.tensors));
  return bound;
}

// The fast path: each output copied from its block of the input, the sub-view that starts base_i
// elements along Axis and has the output's Sizes (PiecesAlongAxis, engine.hpp), by width. Same
// preconditions as split_reference.
template <class T>
void split_fast(const TensorView<const T>& input, std::span<const TensorView<T>> outputs,
                std::uint32_t axis, std::uint64_t slab_bytes = kSlabBytes) {
  copy_pieces<BitsOf<T>>({input.data(), &input.layout(), axis, false, outputs.size(), &outputs,
                          &piece_of_views<TensorView<T>>},
                         slab_bytes);
}

// The same for bound tensors: InputTensor, then OutputTensors.
inline PiecesAlongAxis split_pieces(const BoundSplit& bound,
                                    const std::span<const BoundTensor>& outputs) {
  const BoundTensor& input = bound.tensors.front();
  return {input.data, &input.tensor.layout, bound.layouts.axis, false, outputs.size(), &outputs,
          &piece_of_bound};
}

}  // namespace detail

// Every rule that needs no buffer (S1-S6, T1-T9, T11, T12, the feature-level table).
inline SplitLayouts validate_split(const SplitOperatorDesc& desc,
                                   const SplitOptions& options = {}) {
  SplitLayouts layouts;
  detail::validate_split_descs(desc, options, layouts);
  return layouts;
}

// All of the above plus the bindings: one buffer per output (T9, T10) and no overlap (T13).
inline SplitLayouts validate_split(const SplitOperatorDesc& desc, ConstBuffer input,
                                   std::span<const Buffer> outputs,
                                   const SplitOptions& options = {}) {
  return detail::bind_split(desc, input, outputs, options).layouts;
}
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
  visit(bound.layouts.data_type, [&]<class T>(std::type_identity<T>) {
    std::vector<TensorView<T>> output_views;
    output_views.reserve(bound.tensors.size() - 1);
    for (std::size_t i = 1; i < bound.tensors.size(); ++i) {
      output_views.push_back(view_of<T>(bound.tensors[i]));
    }
    detail::split_reference<T>(view_of<const T>(bound.tensors.front()), output_views,
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
template <class Deferred = void>
void split(const SplitOperatorDesc& desc, ConstBuffer input, std::span<const Buffer> outputs,
           const SplitOptions& options = {}) {
  const detail::BoundSplit bound = detail::bind_split(desc, input, outputs, options);
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

}  // namespace dmlref
