// dmlref: JOIN (DML_JOIN_OPERATOR_DESC): concatenate inputs along one axis. Rules J1-J6 and
// T1-T13 of docs/join.md and docs/tensors.md; the inverse of SPLIT (ops/split.hpp).
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

// The page's "Tensor support" table; InputTensors and OutputTensor share it. Note that 3_0 allows
// 4-5 dimensions for JOIN, where SPLIT's 3_0 row allows 1-8.
inline constexpr SupportRow kJoinSupport[] = {
    {FeatureLevel::k4_1, 1, 8, kAllTypes},
    {FeatureLevel::k3_0, 4, 5,
     {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::Int8,
      DataType::UInt32, DataType::UInt16, DataType::UInt8}},
    {FeatureLevel::k2_1, 4, 4,
     {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::Int8,
      DataType::UInt32, DataType::UInt16, DataType::UInt8}},
    {FeatureLevel::k1_0, 4, 4,
     {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::UInt32,
      DataType::UInt16}},
};
inline constexpr FeatureLevel kJoinIntroduced = FeatureLevel::k1_0;

struct JoinOptions {
  FeatureLevel feature_level = kLatestFeatureLevel;
};

// DML_JOIN_OPERATOR_DESC with buffer tensor descriptions.
struct JoinOperatorDesc {
  std::uint32_t InputCount = 0;
  const BufferTensorDesc* InputTensors = nullptr;  // InputCount of them
  const BufferTensorDesc* OutputTensor = nullptr;
  std::uint32_t Axis = 0;
};

// What validation proves: every tensor's layout, and where each input starts along Axis in the
// output (base_i of the spec's semantics), so a faster path needs no arithmetic of its own.
struct JoinLayouts {
  DataType data_type = DataType::Unknown;
  std::uint32_t axis = 0;
  std::vector<Layout> inputs;
  Layout output;
  std::vector<std::uint32_t> axis_offsets;
};

namespace detail {

inline constexpr std::string_view kJoin = "JOIN";

// J1-J6 are the rules SPLIT shares (pieces.hpp), worded from JOIN's side.
inline constexpr PiecesRoles kJoinRoles{
    kJoin, "InputTensors", "input", "InputCount", "OutputTensor", "output", false,
    {ErrorCode::J1, ErrorCode::J2, ErrorCode::J3, ErrorCode::J4, ErrorCode::J5, ErrorCode::J6},
    kJoinSupport, kJoinIntroduced};

template <class Deferred = void>
inline std::string join_input_name(std::size_t i) { return piece_name(kJoinRoles, i); }

template <class Deferred = void>
inline JoinLayouts join_layouts(PiecesLayouts&& p) {
  return {p.data_type, p.axis, std::move(p.pieces), p.whole, std::move(p.axis_offsets)};
}

// The golden loop, literally the spec's semantics: for every output coordinate o, the input i
// with base_i <= o[Axis] < base_i + Sizes[Axis] supplies Input_i[o with o[Axis] - base_i].
// Arguments must have passed validate_join. Elements are copied as bytes so NaN payloads and
// negative zeros survive on any FPU.
template <class T>
void join_reference(std::span<const TensorView<const T>> inputs, const TensorView<T>& output,
                    std::uint32_t axis) {
  // The mapping is the device-usable one (mapping.hpp), the same a GPU kernel calls.
  const mapping::PieceTable pieces = mapping::piece_table(inputs, axis);
  const mapping::JoinPlan plan = mapping::join_plan(pieces, mapping::layout_of(output));
  for_each_coordinate(output.layout(), [&](const Coord& o) {
    const mapping::PieceOffset from = mapping::join_source(plan, o.data());
    std::memcpy(&output[o], inputs[from.piece].data() + from.offset, sizeof(T));
  });
}

}  // namespace detail

// ------------------------------------------------------------------------------------------------
// Output-size inference

// The first input's sizes with Sizes[Axis] replaced by the sum of the inputs' Sizes[Axis]; checks
// J1, J2, J4, J5 and T2-T4 on the inputs and the result.
template <class Deferred = void>
inline std::vector<std::uint32_t> infer_join_output_sizes(
    std::span<const std::vector<std::uint32_t>> input_sizes, std::uint32_t axis) {
  using detail::fail;
  using detail::kJoin;
  if (input_sizes.empty()) {
    fail(ErrorCode::J1, kJoin, ": no input sizes given; InputCount must be greater than 0");
  }
  std::vector<Layout> layouts;
  layouts.reserve(input_sizes.size());
  for (std::size_t i = 0; i < input_sizes.size(); ++i) {
    const auto& sizes = input_sizes[i];
    if (sizes.empty() || sizes.size() > kMaxRank) {
      fail(ErrorCode::T2, kJoin, ": ", detail::join_input_name(i), ".DimensionCount is ",
           sizes.size(), "; it must be between 1 and ", kMaxRank);
    }
    layouts.push_back(Layout::packed(sizes));
    detail::check_layout(kJoin, detail::join_input_name(i), layouts.back());
  }
  const Layout& first = layouts.front();
  for (std::size_t i = 1; i < layouts.size(); ++i) {
    if (layouts[i].rank != first.rank) {
      fail(ErrorCode::J2, kJoin, ": ", detail::join_input_name(i), ".DimensionCount is ",
           layouts[i].rank, " but InputTensors[0].DimensionCount is ", first.rank,
           "; every input must have the same DimensionCount");
    }
  }
  if (axis >= first.rank) {
    fail(ErrorCode::J4, kJoin, ": Axis is ", axis, " but the inputs' DimensionCount is ",
         first.rank, "; Axis must be in [0, ", first.rank - 1, "]");
  }
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    for (std::uint32_t d = 0; d < first.rank; ++d) {
      if (d != axis && layouts[i].sizes[d] != first.sizes[d]) {
        fail(ErrorCode::J5, kJoin, ": ", detail::join_input_name(i), ".Sizes[", d, "] is ",
             layouts[i].sizes[d], " but InputTensors[0].Sizes[", d, "] is ", first.sizes[d],
             "; every dimension except Axis (", axis, ") must match");
      }
    }
    sum += layouts[i].sizes[axis];
  }
  std::vector<std::uint32_t> out(input_sizes.front());
  if (sum > kMaxElementCount) {
    fail(ErrorCode::T4, kJoin, ": the inputs' Sizes[", axis, "] add up to ", sum,
         ", more than the 4294967295 (2^32 - 1) elements a tensor may hold");
  }
  out[axis] = static_cast<std::uint32_t>(sum);
  detail::check_layout(kJoin, "OutputTensor", Layout::packed(out));
  return out;
}

template <class Deferred = void>
inline std::vector<std::uint32_t> infer_join_output_sizes(
    std::initializer_list<std::vector<std::uint32_t>> input_sizes, std::uint32_t axis) {
  return infer_join_output_sizes(
      std::span<const std::vector<std::uint32_t>>(input_sizes.begin(), input_sizes.size()), axis);
}

// ------------------------------------------------------------------------------------------------
// Typed layer. T is deduced from the output only, so `inputs` may be a vector, an array or a span.

template <class T>
  requires(!std::is_const_v<T>)
JoinLayouts validate_join(std::span<const TensorView<const std::type_identity_t<T>>> inputs,
                          TensorView<T> output, std::uint32_t axis,
                          const JoinOptions& options = {}) {
  return detail::join_layouts(detail::validate_piece_views(detail::kJoinRoles, inputs, output,
                                                           axis, options.feature_level));
}

template <class T>
  requires(!std::is_const_v<T>)
JoinLayouts validate_join(std::initializer_list<TensorView<const std::type_identity_t<T>>> inputs,
                          TensorView<T> output, std::uint32_t axis,
                          const JoinOptions& options = {}) {
  return validate_join<T>(std::span(inputs.begin(), inputs.size()), output, axis, options);
}

// ------------------------------------------------------------------------------------------------
// Runtime layer

namespace detail {

using BoundJoin = BoundPieces;  // InputTensors[0..InputCount), then OutputTensor

inline PiecesDesc pieces_desc(const JoinOperatorDesc& desc) {
  return {desc.InputTensors, desc.InputCount, desc.OutputTensor, desc.Axis};
}

template <class Deferred = void>
inline BoundJoin bind_join(const JoinOperatorDesc& desc, std::span<const ConstBuffer> inputs,
                           Buffer output, const JoinOptions& options) {
  return bind_pieces(kJoinRoles, pieces_desc(desc), inputs, output, options.feature_level);
}

// The fast path: each input copied into its block of the output, the sub-view that starts base_i
// elements along Axis and has the input's Sizes (PiecesAlongAxis, engine.hpp), by width. Same
// preconditions as join_reference.
template <class T>
void join_fast(std::span<const TensorView<const T>> inputs, const TensorView<T>& output,
               std::uint32_t axis) {
  copy_pieces<BitsOf<T>>({output.data(), &output.layout(), axis, true, inputs.size(), &inputs,
                          &piece_of_views<TensorView<const T>>});
}

// The same for bound tensors: InputTensors, then OutputTensor.
template <class Deferred = void>
inline PiecesAlongAxis join_pieces(const BoundJoin& bound,
                                   const std::span<const BoundTensor>& inputs) {
  return bound_pieces_along_axis(kJoinRoles, bound, inputs);
}

}  // namespace detail

// Every rule that needs no buffer (J1-J6, T1-T9, T11, T12, the feature-level table).
template <class Deferred = void>
inline JoinLayouts validate_join(const JoinOperatorDesc& desc, const JoinOptions& options = {}) {
  detail::PiecesLayouts layouts;
  detail::validate_pieces_descs(detail::kJoinRoles, detail::pieces_desc(desc),
                                options.feature_level, layouts);
  return detail::join_layouts(std::move(layouts));
}

// All of the above plus the bindings: one buffer per input (T9, T10) and no overlap (T13).
template <class Deferred = void>
inline JoinLayouts validate_join(const JoinOperatorDesc& desc, std::span<const ConstBuffer> inputs,
                                 Buffer output, const JoinOptions& options = {}) {
  return detail::join_layouts(detail::bind_join(desc, inputs, output, options).layouts);
}
template <class Deferred = void>
inline JoinLayouts validate_join(const JoinOperatorDesc& desc,
                                 std::initializer_list<ConstBuffer> inputs, Buffer output,
                                 const JoinOptions& options = {}) {
  return validate_join(desc, std::span(inputs.begin(), inputs.size()), output, options);
}

// ------------------------------------------------------------------------------------------------
// The reference: validate everything, then run the plain loop. Faster paths are diffed against it.

namespace reference {

template <class T>
  requires(!std::is_const_v<T>)
void join(std::span<const TensorView<const std::type_identity_t<T>>> inputs, TensorView<T> output,
          std::uint32_t axis, const JoinOptions& options = {}) {
  validate_join<T>(inputs, output, axis, options);
  detail::join_reference<T>(inputs, output, axis);
}

// A template only so that its body compiles in the translation unit that calls it, not in every
// one that includes dmlref.hpp; callers never name the parameter.
template <class Deferred = void>
void join(const JoinOperatorDesc& desc, std::span<const ConstBuffer> inputs, Buffer output,
          const JoinOptions& options = {}) {
  const detail::BoundJoin bound = detail::bind_join(desc, inputs, output, options);
  // By element width: the plain loop moves bits and never reads a value, so the loop over the
  // unsigned integer of the element's size is the same loop (4 instantiations serve 11 types).
  visit_width(bound.layouts.data_type, [&]<class W>(std::type_identity<W>) {
    detail::join_reference<W>(detail::bound_piece_views<const W>(detail::kJoinRoles, bound),
                              view_of<W>(bound.tensors.back()), bound.layouts.axis);
  });
}

}  // namespace reference

// ------------------------------------------------------------------------------------------------
// The operator: the same validation as the reference, then the fast path (detail::join_fast),
// which tests/test_fastpath_join_split.cpp diffs against the plain loop.

template <class T>
  requires(!std::is_const_v<T>)
void join(std::span<const TensorView<const std::type_identity_t<T>>> inputs, TensorView<T> output,
          std::uint32_t axis, const JoinOptions& options = {}) {
  validate_join<T>(inputs, output, axis, options);
  detail::join_fast<T>(inputs, output, axis);
}

template <class T>
  requires(!std::is_const_v<T>)
void join(std::initializer_list<TensorView<const std::type_identity_t<T>>> inputs,
          TensorView<T> output, std::uint32_t axis, const JoinOptions& options = {}) {
  join<T>(std::span(inputs.begin(), inputs.size()), output, axis, options);
}

// Views of mutable elements (e.g. SPLIT's outputs) joined without rebuilding them by hand.
template <class T>
  requires(!std::is_const_v<T>)
void join(const std::vector<TensorView<T>>& inputs, TensorView<T> output, std::uint32_t axis,
          const JoinOptions& options = {}) {
  const std::vector<TensorView<const T>> views(inputs.begin(), inputs.end());
  join<T>(std::span<const TensorView<const T>>(views), output, axis, options);
}

// The runtime entry point: a template only so that the engine compiles in the translation unit
// that calls it (once per element width), not in every one that includes dmlref.hpp.
// `reversed`: tensors the descriptions stand in for, InputTensors then OutputTensor
// (detail::reverse_dimensions).
template <class Deferred = void>
void join(const JoinOperatorDesc& desc, std::span<const ConstBuffer> inputs, Buffer output,
          const JoinOptions& options = {}, std::span<const std::uint8_t> reversed = {}) {
  detail::BoundJoin bound = detail::bind_join(desc, inputs, output, options);
  detail::reverse_dimensions(detail::kJoinRoles.op, bound.tensors, reversed);
  const std::span<const BoundTensor> pieces(bound.tensors.data(), bound.tensors.size() - 1);
  visit_width(bound.layouts.data_type, [&]<class W>(std::type_identity<W>) {
    detail::copy_pieces<W>(detail::join_pieces(bound, pieces));
  });
}
template <class Deferred = void>
void join(const JoinOperatorDesc& desc, std::initializer_list<ConstBuffer> inputs, Buffer output,
          const JoinOptions& options = {}) {
  join(desc, std::span(inputs.begin(), inputs.size()), output, options);
}

// Compiled once per program with DMLREF_EXTERN_RUNTIME (runtime_instances.hpp).
DMLREF_RUNTIME_INSTANCE(void reference::join<void>(const JoinOperatorDesc&,
    std::span<const ConstBuffer>, Buffer, const JoinOptions&));
DMLREF_RUNTIME_INSTANCE(void join<void>(const JoinOperatorDesc&, std::span<const ConstBuffer>,
    Buffer, const JoinOptions&, std::span<const std::uint8_t>));

}  // namespace dmlref
