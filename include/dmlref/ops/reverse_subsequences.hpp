// dmlref: REVERSE_SUBSEQUENCES (DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC, operator type 106).
//
// Reverses the first L elements of every subsequence along Axis, each subsequence with its own
// length L read from SequenceLengthsTensor; the rest of the subsequence is copied unchanged.
// Rules: docs/reverse_subsequences.md (R1-R5) and docs/tensors.md (T1-T13).
//
//   typed:   validate_reverse_subsequences(input, lengths, output, axis, options)
//            reverse_subsequences(input, lengths, output, axis, options)
//            reference::reverse_subsequences(...)      the plain loop, validating
//   runtime: validate_reverse_subsequences(desc, options)
//            validate_reverse_subsequences(desc, input, lengths, output, options)
//            reverse_subsequences(desc, input, lengths, output, options)
//            reference::reverse_subsequences(desc, ...)  the plain loop, validating
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "dmlref/ops/operator.hpp"

namespace dmlref {

// "This operator was introduced in DML_FEATURE_LEVEL_2_1" (the page's availability line).
inline constexpr FeatureLevel kReverseSubsequencesIntroduced = FeatureLevel::k2_1;

namespace detail {
// The eight types every level before 5_0 admits for InputTensor and OutputTensor.
inline constexpr DataTypeSet kReverseSubsequencesTypesBefore5_0{
    DataType::Float32, DataType::Float16, DataType::Int32,  DataType::Int16,
    DataType::Int8,    DataType::UInt32,  DataType::UInt16, DataType::UInt8};
}  // namespace detail

// The page's "Tensor support" tables. InputTensor and OutputTensor share one table.
inline constexpr SupportRow kReverseSubsequencesSupport[] = {
    {FeatureLevel::k5_0, 1, 8, kAllTypes},
    {FeatureLevel::k4_0, 1, 8, detail::kReverseSubsequencesTypesBefore5_0},
    {FeatureLevel::k3_0, 4, 5, detail::kReverseSubsequencesTypesBefore5_0},
    {FeatureLevel::k2_1, 4, 4, detail::kReverseSubsequencesTypesBefore5_0},
};
inline constexpr SupportRow kReverseSubsequencesSequenceLengthsSupport[] = {
    {FeatureLevel::k5_0, 1, 8, DataTypeSet{DataType::UInt64, DataType::UInt32}},
    {FeatureLevel::k4_0, 1, 8, DataTypeSet{DataType::UInt32}},
    {FeatureLevel::k3_0, 4, 5, DataTypeSet{DataType::UInt32}},
    {FeatureLevel::k2_1, 4, 4, DataTypeSet{DataType::UInt32}},
};

// R4: a sequence length is UINT32 or UINT64 (the typed layer enforces it at compile time).
template <class L>
concept SequenceLengthElement = std::same_as<std::remove_cv_t<L>, std::uint32_t> ||
                                std::same_as<std::remove_cv_t<L>, std::uint64_t>;

struct ReverseSubsequencesOptions {
  FeatureLevel feature_level = kLatestFeatureLevel;
};

// Mirrors DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC with buffer tensor descriptions.
struct ReverseSubsequencesOperatorDesc {
  const BufferTensorDesc* InputTensor = nullptr;
  const BufferTensorDesc* SequenceLengthsTensor = nullptr;
  const BufferTensorDesc* OutputTensor = nullptr;
  std::uint32_t Axis = 0;
};

namespace detail {

inline constexpr std::string_view kReverseSubsequencesOp = "REVERSE_SUBSEQUENCES";

// R1-R5 and the feature-level tables, on tensors that already passed T1-T12. Shared by the typed
// and the runtime layer so each rule lives once. Order: R1 and R5 first, since R2 and R3 index
// Sizes by dimension and by Axis.
template <class Deferred = void>
inline void check_reverse_subsequences_rules(const Layout& input, DataType input_type,
                                             const Layout& lengths, DataType lengths_type,
                                             const Layout& output, DataType output_type,
                                             std::uint32_t axis, FeatureLevel target) {
  constexpr std::string_view op = kReverseSubsequencesOp;
  if (lengths.rank != input.rank) {
    fail(ErrorCode::R1, op, ": SequenceLengthsTensor.DimensionCount is ", lengths.rank,
         " but InputTensor.DimensionCount is ", input.rank,
         "; all three tensors must have the same DimensionCount");
  }
  if (output.rank != input.rank) {
    fail(ErrorCode::R1, op, ": OutputTensor.DimensionCount is ", output.rank,
         " but InputTensor.DimensionCount is ", input.rank,
         "; all three tensors must have the same DimensionCount");
  }
  if (axis >= input.rank) {
    fail(ErrorCode::R5, op, ": Axis is ", axis, " but InputTensor.DimensionCount is ", input.rank,
         "; Axis must be less than it");
  }
  if (output_type != input_type) {
    fail(ErrorCode::R2, op, ": OutputTensor.DataType is ", describe(output_type),
         " but InputTensor.DataType is ", describe(input_type), "; they must be the same");
  }
  for (std::uint32_t d = 0; d < input.rank; ++d) {
    if (output.sizes[d] != input.sizes[d]) {
      fail(ErrorCode::R2, op, ": OutputTensor.Sizes[", d, "] is ", output.sizes[d],
           " but InputTensor.Sizes[", d, "] is ", input.sizes[d],
           "; the output must have the input's Sizes ", input.sizes_string());
    }
  }
  for (std::uint32_t d = 0; d < input.rank; ++d) {
    if (d == axis) {
      if (lengths.sizes[d] != 1) {
        fail(ErrorCode::R3, op, ": SequenceLengthsTensor.Sizes[", d, "] is ", lengths.sizes[d],
             " but it must be 1 on Axis (", axis, ")");
      }
    } else if (lengths.sizes[d] != input.sizes[d]) {
      fail(ErrorCode::R3, op, ": SequenceLengthsTensor.Sizes[", d, "] is ", lengths.sizes[d],
           " but InputTensor.Sizes[", d, "] is ", input.sizes[d],
           "; every dimension except Axis (", axis, ") must match");
    }
  }
  if (lengths_type != DataType::UInt32 && lengths_type != DataType::UInt64) {
    fail(ErrorCode::R4, op, ": SequenceLengthsTensor.DataType is ", describe(lengths_type),
         "; it must be UINT32 or UINT64");
  }
  check_support(op, "InputTensor", input.rank, input_type, kReverseSubsequencesSupport, target);
  check_support(op, "SequenceLengthsTensor", lengths.rank, lengths_type,
                kReverseSubsequencesSequenceLengthsSupport, target);
  check_support(op, "OutputTensor", output.rank, output_type, kReverseSubsequencesSupport, target);
}

// The golden loop: the spec's semantics, one output coordinate at a time. Assumes validated
// arguments (every rule above, T1-T13).
template <class T, SequenceLengthElement L>
void reverse_subsequences_reference(TensorView<const T> input,
                                    TensorView<const L> sequence_lengths, TensorView<T> output,
                                    std::uint32_t axis) {
  // The mapping is the device-usable one (mapping.hpp), the same a GPU kernel calls: the length
  // at coordinate 0 of Axis (R3), clamped to the axis size, then the reversed position.
  const mapping::ReverseSubsequencesPlan plan =
      mapping::reverse_subsequences_plan(input, sequence_lengths, output, axis);
  for_each_coordinate(output.layout(), [&](const Coord& o) {
    const std::uint64_t length =
        sequence_lengths.data()[mapping::reverse_subsequences_length_offset(plan, o.data())];
    // memcpy moves the bits themselves: no floating-point load that could quiet a signalling NaN.
    const std::int64_t from = mapping::reverse_subsequences_source(plan, o.data(), length);
    std::memcpy(&output[o], input.data() + from, sizeof(T));
  });
}

// The fast path's plan: one run per subsequence, found by a plan over every dimension but Axis
// (its size set to 1, which the plan drops) for the three operands input, lengths and output.
template <class Deferred = void>
inline ReversedRuns plan_reverse_subsequences(const Layout& input, const Layout& lengths,
                                              const Layout& output, std::uint32_t axis) {
  std::array<std::uint32_t, kMaxRank> sizes = input.sizes;
  sizes[axis] = 1;
  const std::array<std::array<std::int64_t, kMaxRank>, 3> strides{input.strides, lengths.strides,
                                                                 output.strides};
  return {make_copy_plan(std::span<const std::uint32_t>(sizes.data(), input.rank), strides),
          input.sizes[axis], input.strides[axis], output.strides[axis]};
}

// The engine's RunLengthsFn: `count` sequence lengths, each clamped to the axis size (a longer
// one "behaves as if clamped to the maximum"). The one place the fast path reads a length.
template <SequenceLengthElement L>
void reverse_subsequences_lengths(const void* lengths, std::int64_t first, std::int64_t step,
                                  std::uint64_t count, std::uint64_t axis_size,
                                  std::uint64_t* out) {
  const L* const at = static_cast<const L*>(lengths) + first;
  for (std::uint64_t i = 0; i < count; ++i) {
    out[i] = std::min(static_cast<std::uint64_t>(at[static_cast<std::int64_t>(i) * step]),
                      axis_size);
  }
}

// The fast path: the plan, executed by element width with lengths read by length type. Same
// preconditions as the golden loop above.
template <class T, SequenceLengthElement L>
void reverse_subsequences_fast(TensorView<const T> input, TensorView<const L> sequence_lengths,
                               TensorView<T> output, std::uint32_t axis) {
  reverse_runs<BitsOf<T>>(
      plan_reverse_subsequences(input.layout(), sequence_lengths.layout(), output.layout(), axis),
      width_view(input).data(), sequence_lengths.data(), width_view(output).data(),
      &reverse_subsequences_lengths<L>);
}

}  // namespace detail

// ---- typed layer -------------------------------------------------------------------------------
// T is deduced from the output, so a mutable input view converts to the const one implicitly.

// Checks everything (pointers, T2-T4, T8 reach, T12, T13, R1-R5, the feature-level table) without
// touching data. Returns the output's Sizes (the input's, by R2).
template <class T, SequenceLengthElement L>
  requires(!std::is_const_v<T>)
std::vector<std::uint32_t> validate_reverse_subsequences(
    TensorView<const std::type_identity_t<T>> input, TensorView<const L> sequence_lengths,
    TensorView<T> output, std::uint32_t axis, const ReverseSubsequencesOptions& options = {}) {
  constexpr std::string_view op = detail::kReverseSubsequencesOp;
  detail::check_target_level(op, options.feature_level, kReverseSubsequencesIntroduced);
  detail::check_view(op, "InputTensor", input, false);
  detail::check_view(op, "SequenceLengthsTensor", sequence_lengths, false);
  detail::check_view(op, "OutputTensor", output, true);
  detail::check_reverse_subsequences_rules(input.layout(), data_type_of<T>,
                                           sequence_lengths.layout(), data_type_of<L>,
                                           output.layout(), data_type_of<T>, axis,
                                           options.feature_level);
  // T13: the output must overlap neither input; the two inputs may overlap each other.
  detail::check_no_overlap(op, {tensor_extent("InputTensor", input, false),
                                tensor_extent("SequenceLengthsTensor", sequence_lengths, false),
                                tensor_extent("OutputTensor", output, true)});
  return detail::size_vector(input.layout());
}

namespace reference {

// Validates, then runs the plain coordinate loop: the model a faster path is diffed against.
template <class T, SequenceLengthElement L>
  requires(!std::is_const_v<T>)
void reverse_subsequences(TensorView<const std::type_identity_t<T>> input,
                          TensorView<const L> sequence_lengths, TensorView<T> output,
                          std::uint32_t axis, const ReverseSubsequencesOptions& options = {}) {
  validate_reverse_subsequences(input, sequence_lengths, output, axis, options);
  detail::reverse_subsequences_reference(input, sequence_lengths, output, axis);
}

}  // namespace reference

// The operator: the same validation as the reference, then the fast path
// (detail::reverse_subsequences_fast), which tests/test_fastpath_reverse.cpp diffs against it.
template <class T, SequenceLengthElement L>
  requires(!std::is_const_v<T>)
void reverse_subsequences(TensorView<const std::type_identity_t<T>> input,
                          TensorView<const L> sequence_lengths, TensorView<T> output,
                          std::uint32_t axis, const ReverseSubsequencesOptions& options = {}) {
  validate_reverse_subsequences(input, sequence_lengths, output, axis, options);
  detail::reverse_subsequences_fast(detail::width_view(input), sequence_lengths,
                                    detail::width_view(output), axis);
}

// ---- runtime layer -----------------------------------------------------------------------------

namespace detail {

// T1-T9, T11, T12 on each description, then R1-R5 and the tables. No buffers.
template <class Deferred = void>
inline std::array<ValidatedTensor, 3> validate_reverse_subsequences_descs(
    const ReverseSubsequencesOperatorDesc& desc, const ReverseSubsequencesOptions& options) {
  constexpr std::string_view op = kReverseSubsequencesOp;
  check_target_level(op, options.feature_level, kReverseSubsequencesIntroduced);
  ValidatedTensor input = validate_tensor_desc(op, "InputTensor", desc.InputTensor, false);
  ValidatedTensor lengths =
      validate_tensor_desc(op, "SequenceLengthsTensor", desc.SequenceLengthsTensor, false);
  ValidatedTensor output = validate_tensor_desc(op, "OutputTensor", desc.OutputTensor, true);
  check_reverse_subsequences_rules(input.layout, input.data_type, lengths.layout,
                                   lengths.data_type, output.layout, output.data_type, desc.Axis,
                                   options.feature_level);
  return {std::move(input), std::move(lengths), std::move(output)};
}

// Everything above, then each binding (T9 alignment, T10 size) and T13.
template <class Deferred = void>
inline std::array<BoundTensor, 3> bind_reverse_subsequences(
    const ReverseSubsequencesOperatorDesc& desc, ConstBuffer input, ConstBuffer sequence_lengths,
    Buffer output, const ReverseSubsequencesOptions& options) {
  constexpr std::string_view op = kReverseSubsequencesOp;
  auto [in, lengths, out] = validate_reverse_subsequences_descs(desc, options);
  const std::array<BoundTensor, 3> bound{
      bind_validated(op, std::move(in), *desc.InputTensor, input),
      bind_validated(op, std::move(lengths), *desc.SequenceLengthsTensor, sequence_lengths),
      bind_validated(op, std::move(out), *desc.OutputTensor, output)};
  check_no_overlap(op, std::span<const BoundTensor>(bound));
  return bound;
}

}  // namespace detail

// Desc-only validation: what a harness can check before it has memory. Returns the output's Sizes.
template <class Deferred = void>
inline std::vector<std::uint32_t> validate_reverse_subsequences(
    const ReverseSubsequencesOperatorDesc& desc, const ReverseSubsequencesOptions& options = {}) {
  return detail::size_vector(
      detail::validate_reverse_subsequences_descs(desc, options)[2].layout);
}

// Full validation with the buffers (adds T9 on addresses, T10, T13). Never reads or writes them.
template <class Deferred = void>
inline std::vector<std::uint32_t> validate_reverse_subsequences(
    const ReverseSubsequencesOperatorDesc& desc, ConstBuffer input, ConstBuffer sequence_lengths,
    Buffer output, const ReverseSubsequencesOptions& options = {}) {
  return detail::size_vector(
      detail::bind_reverse_subsequences(desc, input, sequence_lengths, output, options)[2]
          .tensor.layout);
}

namespace reference {

// Validates, then runs the typed golden loop. A template only so that its body compiles in the
// translation unit that calls it, not in every one that includes dmlref.hpp.
template <class Deferred = void>
void reverse_subsequences(const ReverseSubsequencesOperatorDesc& desc, ConstBuffer input,
                          ConstBuffer sequence_lengths, Buffer output,
                          const ReverseSubsequencesOptions& options = {}) {
  const auto bound =
      detail::bind_reverse_subsequences(desc, input, sequence_lengths, output, options);
  // By element width: the plain loop moves bits and never reads a value, so the loop over the
  // unsigned integer of the element's size is the same loop (4 instantiations serve 11 types).
  visit_width(bound[0].tensor.data_type, [&]<class W>(std::type_identity<W>) {
    const auto run = [&]<class L>(std::type_identity<L>) {
      detail::reverse_subsequences_reference(view_of<const W>(bound[0]), view_of<const L>(bound[1]),
                                             view_of<W>(bound[2]), desc.Axis);
    };
    // R4 admitted UINT32 and UINT64 only.
    if (bound[1].tensor.data_type == DataType::UInt64) {
      run(std::type_identity<std::uint64_t>{});
    } else {
      run(std::type_identity<std::uint32_t>{});
    }
  });
}

}  // namespace reference

// Validates, then dispatches on the element width and the lengths type to the fast path. A
// template only so that the engine compiles in the translation unit that calls it (once per
// width), not in every one that includes dmlref.hpp. `reversed`: tensors the descriptions stand
// in for, InputTensor, SequenceLengthsTensor, OutputTensor (detail::reverse_dimensions).
template <class Deferred = void>
void reverse_subsequences(const ReverseSubsequencesOperatorDesc& desc, ConstBuffer input,
                          ConstBuffer sequence_lengths, Buffer output,
                          const ReverseSubsequencesOptions& options = {},
                          std::span<const std::uint8_t> reversed = {}) {
  auto bound = detail::bind_reverse_subsequences(desc, input, sequence_lengths, output, options);
  detail::reverse_dimensions(detail::kReverseSubsequencesOp, bound, reversed);
  // R4 admits UINT32 and UINT64 only; the length type and the element width are dispatched one
  // after the other (2 + 4 paths, not 2 x 4).
  const detail::RunLengthsFn lengths_of =
      bound[1].tensor.data_type == DataType::UInt64
          ? &detail::reverse_subsequences_lengths<std::uint64_t>
          : &detail::reverse_subsequences_lengths<std::uint32_t>;
  const detail::ReversedRuns plan = detail::plan_reverse_subsequences(
      bound[0].tensor.layout, bound[1].tensor.layout, bound[2].tensor.layout, desc.Axis);
  visit_width(bound[0].tensor.data_type, [&](auto width) {
    using W = typename decltype(width)::type;
    detail::reverse_runs(plan, static_cast<const W*>(bound[0].data), bound[1].data,
                         static_cast<W*>(const_cast<void*>(bound[2].data)), lengths_of);
  });
}

// Compiled once per program with DMLREF_EXTERN_RUNTIME (runtime_instances.hpp).
DMLREF_RUNTIME_INSTANCE(void reference::reverse_subsequences<void>(
    const ReverseSubsequencesOperatorDesc&, ConstBuffer, ConstBuffer, Buffer,
    const ReverseSubsequencesOptions&));
DMLREF_RUNTIME_INSTANCE(void reverse_subsequences<void>(const ReverseSubsequencesOperatorDesc&,
    ConstBuffer, ConstBuffer, Buffer, const ReverseSubsequencesOptions&,
    std::span<const std::uint8_t>));

}  // namespace dmlref
