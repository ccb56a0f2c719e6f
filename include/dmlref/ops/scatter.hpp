// dmlref: SCATTER (DML_SCATTER_OPERATOR_DESC, alias DML_SCATTER_ELEMENTS_OPERATOR_DESC), rules
// SC1-SC8 of docs/scatter.md: validation, the plan and the reference loop, and what to do with
// duplicate targets. Checking a result computed elsewhere (a GPU), which accepts any colliding
// update, is scatter_check.hpp's, included at the end of this header.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "dmlref/ops/operator.hpp"

namespace dmlref {

// --- feature levels (the page's "Tensor support" tables) ----------------------------------------

// InputTensor, UpdatesTensor and OutputTensor share one table.
inline constexpr SupportRow kScatterSupport[] = {
    {FeatureLevel::k4_1, 1, 8, kAllTypes},
    {FeatureLevel::k3_0, 1, 8,
     {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::Int8,
      DataType::UInt32, DataType::UInt16, DataType::UInt8}},
    {FeatureLevel::k2_1, 4, 4,
     {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::Int8,
      DataType::UInt32, DataType::UInt16, DataType::UInt8}},
    {FeatureLevel::k1_0, 4, 4, {DataType::Float32, DataType::Float16}},
};
inline constexpr SupportRow kScatterIndicesSupport[] = {
    {FeatureLevel::k4_1, 1, 8, kIndexTypes},
    {FeatureLevel::k3_0, 1, 8, kIndexTypes},
    {FeatureLevel::k2_1, 4, 4, {DataType::UInt32}},
    {FeatureLevel::k1_0, 4, 4, {DataType::UInt32}},
};
// The page says 1_0 (DirectML's header says 2_0); the spec follows the page.
inline constexpr FeatureLevel kScatterIntroduced = FeatureLevel::k1_0;

// --- options and the runtime description ----------------------------------------------------

// Two updates for one output element: the page calls it invalid and guarantees no winner.
// LastWins is the deterministic reading of the page's example 1 (the last in row-major order of
// the indices wins); Reject makes it an error (ErrorCode::ScatterDuplicate).
enum class DuplicatePolicy : std::uint8_t {
  LastWins,
  Reject,
};

struct ScatterOptions {
  FeatureLevel feature_level = kLatestFeatureLevel;
  IndexPolicy index_policy = IndexPolicy::Error;
  DuplicatePolicy duplicates = DuplicatePolicy::LastWins;
};

// DML_SCATTER_OPERATOR_DESC, field for field.
struct ScatterOperatorDesc {
  const BufferTensorDesc* InputTensor = nullptr;
  const BufferTensorDesc* IndicesTensor = nullptr;
  const BufferTensorDesc* UpdatesTensor = nullptr;
  const BufferTensorDesc* OutputTensor = nullptr;
  std::uint32_t Axis = 0;
};
// DML_SCATTER_ELEMENTS_OPERATOR_DESC is the same struct under the name that pairs it with
// GATHER_ELEMENTS.
using ScatterElementsOperatorDesc = ScatterOperatorDesc;

namespace detail {

inline constexpr std::string_view kScatterOp = "SCATTER";

// --- validation shared by both layers -------------------------------------------------------

template <class Deferred = void>
inline void check_scatter_options(const ScatterOptions& options) {
  check_target_level(kScatterOp, options.feature_level, kScatterIntroduced);
  if (options.index_policy != IndexPolicy::Error && options.index_policy != IndexPolicy::Clamp) {
    fail(ErrorCode::InvalidOption, kScatterOp, ": ScatterOptions::index_policy is ",
         static_cast<int>(options.index_policy),
         "; it must be IndexPolicy::Error or IndexPolicy::Clamp");
  }
  if (options.duplicates != DuplicatePolicy::LastWins &&
      options.duplicates != DuplicatePolicy::Reject) {
    fail(ErrorCode::InvalidOption, kScatterOp, ": ScatterOptions::duplicates is ",
         static_cast<int>(options.duplicates),
         "; it must be DuplicatePolicy::LastWins or DuplicatePolicy::Reject");
  }
}

// SC1-SC7, then the feature-level tables, on tensors that passed T1-T12; shared by both layers so
// each rule lives once. `output` is null where no output takes part (find_scatter_collisions).
// `types`: InputTensor's, IndicesTensor's, UpdatesTensor's, OutputTensor's; on the typed layer
// SC2 and SC3 hold by construction (one element type T, and I an IndexElement).
template <class Deferred = void>
inline void check_scatter_rules(const Layout& input, const Layout& indices, const Layout& updates,
                                const Layout* output, const std::array<DataType, 4>& types,
                                std::uint32_t axis, FeatureLevel target) {
  const std::uint32_t rank = input.rank;
  const auto same_rank = [&](std::string_view name, const Layout& l) {
    if (l.rank != rank) {
      fail(ErrorCode::SC1, kScatterOp, ": ", name, ".DimensionCount is ", l.rank,
           " but InputTensor.DimensionCount is ", rank,
           "; InputTensor, IndicesTensor, UpdatesTensor and OutputTensor must have the same "
           "DimensionCount");
    }
  };
  same_rank("IndicesTensor", indices);
  same_rank("UpdatesTensor", updates);
  if (output != nullptr) same_rank("OutputTensor", *output);
  const DataType data_type = types[0], index_type = types[1];
  const auto same_type = [&](std::string_view name, DataType type) {
    if (type != data_type) {
      fail(ErrorCode::SC2, kScatterOp, ": ", name, ".DataType is ", describe(type),
           " but InputTensor.DataType is ", describe(data_type),
           "; InputTensor, UpdatesTensor and OutputTensor must have the same DataType");
    }
  };
  same_type("UpdatesTensor", types[2]);
  if (output != nullptr) same_type("OutputTensor", types[3]);
  if (!kIndexTypes.contains(index_type)) {
    fail(ErrorCode::SC3, kScatterOp, ": IndicesTensor.DataType is ", describe(index_type),
         "; it must be one of ", kIndexTypes.to_string());
  }
  if (axis >= rank) {
    fail(ErrorCode::SC4, kScatterOp, ": Axis is ", axis, " but ",
         output != nullptr ? "OutputTensor" : "InputTensor", ".DimensionCount is ", rank,
         "; Axis must lie in [0, DimensionCount)");
  }
  for (std::uint32_t d = 0; output != nullptr && d < rank; ++d) {
    if (output->sizes[d] != input.sizes[d]) {
      fail(ErrorCode::SC5, kScatterOp, ": OutputTensor.Sizes[", d, "] is ", output->sizes[d],
           " but InputTensor.Sizes[", d, "] is ", input.sizes[d], "; OutputTensor.Sizes ",
           output->sizes_string(), " must equal InputTensor.Sizes ", input.sizes_string());
    }
  }
  for (std::uint32_t d = 0; d < rank; ++d) {
    if (updates.sizes[d] != indices.sizes[d]) {
      fail(ErrorCode::SC6, kScatterOp, ": UpdatesTensor.Sizes[", d, "] is ", updates.sizes[d],
           " but IndicesTensor.Sizes[", d, "] is ", indices.sizes[d], "; UpdatesTensor.Sizes ",
           updates.sizes_string(), " must equal IndicesTensor.Sizes ", indices.sizes_string());
    }
  }
  // The page's rule: ONNX lets indices be smaller than the input here, DirectML's page does not.
  for (std::uint32_t d = 0; d < rank; ++d) {
    if (d != axis && indices.sizes[d] != input.sizes[d]) {
      fail(ErrorCode::SC7, kScatterOp, ": IndicesTensor.Sizes[", d, "] is ", indices.sizes[d],
           " but InputTensor.Sizes[", d, "] is ", input.sizes[d],
           "; every dimension except Axis (", axis, ") must match");
    }
  }
  check_support(kScatterOp, "InputTensor", rank, data_type, kScatterSupport, target);
  check_support(kScatterOp, "IndicesTensor", rank, index_type, kScatterIndicesSupport, target);
  check_support(kScatterOp, "UpdatesTensor", rank, data_type, kScatterSupport, target);
  if (output != nullptr) {
    check_support(kScatterOp, "OutputTensor", rank, data_type, kScatterSupport, target);
  }
}

// The output element an index selects along Axis. For every index SC8 admits, clamp_index is
// normalize_index (negative signed indices count from the end), so one call serves both policies
// and the loops never see an index outside [0, n).
template <IndexElement I>
std::uint32_t scatter_target_index(I value, std::uint32_t n) noexcept {
  return static_cast<std::uint32_t>(clamp_index(value, n));
}

// SC8, a pass of its own over every index before any output byte is written. The indices are
// walked with the strided-copy core's planner (contiguous indices become one run); only when a bad
// index is found does the coordinate walk below run, to name the first one. A broadcast dimension
// (stride 0) repeats the same values, so both walks take it at size 1: they cost the indices'
// stored values, not their broadcast count, and the first bad coordinate (row-major) is the same,
// since zeroing a broadcast coordinate keeps an index bad and only moves it earlier. `narrowed`
// (the fast path's): where it pays, the pass also keeps each index's place for the scatter
// (check_and_narrow_indices).
template <IndexElement I>
void check_scatter_indices(const TensorView<const I>& indices, std::uint32_t axis, std::uint32_t n,
                           IndexPolicy policy, NarrowedIndices* narrowed = nullptr) {
  if (policy == IndexPolicy::Clamp) return;  // clamp_index gives every value a target
  Layout stored = indices.layout();
  for (std::uint32_t d = 0; d < stored.rank; ++d) {
    if (stored.strides[d] == 0) stored.sizes[d] = 1;
  }
  if (check_and_narrow_indices(indices.layout(), stored, indices.data(), legal_index_bounds<I>(n),
                               n, narrowed)) {
    return;
  }
  for_each_coordinate(stored, [&](const Coord& u) {
    const I value = indices[u];
    if (!normalize_index(value, n)) {
      fail(ErrorCode::SC8, kScatterOp, ": IndicesTensor", coordinate_string(u, indices.rank()),
           " is ", value, " but InputTensor.Sizes[", axis, "] is ", n,
           "; indices must lie in ", legal_index_range<I>(n));
    }
  });
}

// The engine's ElementTargetsFn for index type I (defined with the fast path, below). `Clamp`:
// false only where SC8 has proved every index legal (IndexPolicy::Error).
template <IndexElement I, bool Clamp = true>
void scatter_targets(const void* context, std::int64_t first, std::int64_t step,
                     std::uint64_t count, std::int64_t* targets);

// DuplicatePolicy::Reject: the first indices coordinate (row-major) whose target an earlier one
// already took is an error naming both and the output element.
template <IndexElement I>
void check_scatter_duplicates(const TensorView<const I>& indices, std::uint32_t axis,
                              const Layout& input) {
  const std::optional<ScatterRepeat> found = first_repeated_scatter_target(
      indices.layout(), indices.data(), input, axis, &scatter_targets<I>);
  if (!found) return;
  const std::uint32_t rank = indices.rank();
  const mapping::TensorLayout shape = mapping::layout_of(indices);
  Coord first{}, u{};  // the two indices' coordinates, from their row-major positions
  mapping::coordinate_of(shape, found->first, first.data());
  mapping::coordinate_of(shape, found->repeat, u.data());
  Coord c = u;
  c[axis] = scatter_target_index(indices[u], input.sizes[axis]);
  fail(ErrorCode::ScatterDuplicate, kScatterOp, ": IndicesTensor", coordinate_string(first, rank),
       " is ", indices[first], " and IndicesTensor", coordinate_string(u, rank), " is ",
       indices[u], "; both target OutputTensor", coordinate_string(c, rank), " along Axis ", axis,
       ", and DuplicatePolicy::Reject forbids two updates for one output element");
}

// --- the typed layer's validation -------------------------------------------------------------

// What a typed call does with the output, which decides the checks that apply to it.
enum class ScatterUse {
  Run,         // writes the output: every rule
  Check,       // reads a result computed elsewhere: no T13 (nothing is written)
  Collisions,  // no output; duplicates are what the caller asks for, so never an error
};

template <class T, IndexElement I>
void validate_scatter_views(const TensorView<const T>& input, const TensorView<const I>& indices,
                            const TensorView<const T>& updates, const TensorView<const T>* output,
                            ScatterUse use, std::uint32_t axis, const ScatterOptions& options,
                            NarrowedIndices* narrowed = nullptr) {
  check_scatter_options(options);
  check_view(kScatterOp, "InputTensor", input, false);
  check_view(kScatterOp, "IndicesTensor", indices, false);
  check_view(kScatterOp, "UpdatesTensor", updates, false);
  if (output != nullptr) check_view(kScatterOp, "OutputTensor", *output, true);
  constexpr DataType t = data_type_of<T>;
  check_scatter_rules(input.layout(), indices.layout(), updates.layout(),
                      output != nullptr ? &output->layout() : nullptr,
                      {t, data_type_of<I>, t, t}, axis, options.feature_level);
  if (use == ScatterUse::Run) {
    check_no_overlap(kScatterOp, {tensor_extent("InputTensor", input, false),
                                  tensor_extent("IndicesTensor", indices, false),
                                  tensor_extent("UpdatesTensor", updates, false),
                                  tensor_extent("OutputTensor", *output, true)});
  }
  check_scatter_indices(indices, axis, input.size(axis), options.index_policy, narrowed);
  if (use != ScatterUse::Collisions && options.duplicates == DuplicatePolicy::Reject) {
    check_scatter_duplicates(indices, axis, input.layout());
  }
}

// --- the golden loop ------------------------------------------------------------------------

// The spec's semantics as written, for validated arguments: output = input, then each update in
// row-major order of the indices, so the last of several updates for one element stays (LastWins).
template <class T, IndexElement I>
void scatter_reference(const TensorView<const T>& input, const TensorView<const I>& indices,
                       const TensorView<const T>& updates, const TensorView<T>& output,
                       std::uint32_t axis) {
  // The mapping is the device-usable one (mapping.hpp), the same a GPU kernel calls. Validated
  // indices all lie in [-n, n), where IndexPolicy::Clamp is the negative-index rule alone, so
  // one plan serves both policies.
  const mapping::ScatterPlan plan =
      mapping::scatter_plan(input, indices, updates, output, axis, IndexPolicy::Clamp);
  for_each_coordinate(output.layout(), [&](const Coord& c) { output[c] = input[c]; });
  for_each_coordinate(indices.layout(), [&](const Coord& u) {
    output.data()[mapping::scatter_target(plan, u.data(), indices[u]).offset] = updates[u];
  });
}

// The engine's ElementTargetsFn: the output offsets along Axis of `count` indices. The one place
// the fast path reads an index. Without `Clamp`, for indices SC8 has proved legal: the
// negative-index rule alone, which is clamp_index for every legal index.
template <IndexElement I, bool Clamp>
void scatter_targets(const void* context, std::int64_t first, std::int64_t step,
                     std::uint64_t count, std::int64_t* targets) {
  const ScatterTargets& t = *static_cast<const ScatterTargets*>(context);
  const I* const ix = static_cast<const I*>(t.indices) + first;
  const std::uint32_t size = t.axis_size;
  const std::int64_t axis_stride = t.axis_stride;
  if (step == 1) {
    // The common layout: a loop with no branch (random indices mispredict
    // scatter_target_index's every time), clamp_index written out (in int64 for signed
    // indices): SC8 proved each index legal, or the policy clamps (IndexPolicy::Clamp), where
    // this is clamp_index too.
    const auto last = static_cast<std::int64_t>(size) - 1;
    const auto target = [=](I v) {  // `last` where the index type needs it
      if constexpr (!Clamp && std::is_signed_v<I>) {
        // v + size where v < 0: the sign bit as a mask, no compare (64-bit compares are
        // scalar below AVX2, and this loop ran at a quarter of SCATTER's time with them).
        const auto k = static_cast<std::int64_t>(v);
        return k + ((k >> 63) & (last + 1));
      } else if constexpr (!Clamp) {
        return static_cast<std::int64_t>(v);
      } else if constexpr (std::is_signed_v<I>) {
        const std::int64_t k = static_cast<std::int64_t>(v) + (v < 0 ? last + 1 : 0);
        return k < 0 ? 0 : (k > last ? last : k);
      } else {
        return static_cast<std::int64_t>(v < static_cast<I>(last) ? v : static_cast<I>(last));
      }
    };
    // The chunk's indices are a stream read once: it asks for those ahead of it first
    // (prefetch_stream). Then blocks of a fixed count, which GCC's -O2 vectorises
    // (all_indices_legal), each computed into a local first: 8-byte indices may alias `targets`
    // as far as the compiler knows, and a loop that stores through one and loads through the
    // other stays scalar (a third of SCATTER's time with int64 indices).
    prefetch_stream(ix, count * sizeof(I));
    if (Clamp || axis_stride != 1) {
      // Scalar: 64-bit compares (the clamp) and multiplies do not vectorise below AVX-512, and
      // blocks built element by element and copied out as vectors stall on every copy (a store
      // forwarded to a wider load; IndexPolicy::Clamp's SCATTER ran at half its speed so).
      for (std::uint64_t i = 0; i < count; ++i) targets[i] = target(ix[i]) * axis_stride;
      return;
    }
    constexpr std::uint64_t kBlock = 8;
    std::uint64_t i = 0;
    for (; i + kBlock <= count; i += kBlock) {
      std::array<std::int64_t, kBlock> block;
      for (std::uint64_t j = 0; j < kBlock; ++j) block[j] = target(ix[i + j]);
      std::memcpy(targets + i, block.data(), sizeof(block));
    }
    for (; i < count; ++i) targets[i] = target(ix[i]);
    return;
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto ii = static_cast<std::int64_t>(i);
    targets[i] = static_cast<std::int64_t>(scatter_target_index(ix[ii * step], size)) * axis_stride;
  }
}

// The update walk: one plan over the indices' sizes for the indices, updates and output (the
// output's Axis stride is 0 there, since the index supplies that coordinate). A dimension along
// which all three strides are 0 (indices and updates both broadcast along Axis) only repeats the
// same stores, and the last repeat leaves what the first did: it is walked once, so the work
// follows the tensors' real elements, not their logical count.
template <class Deferred = void>
inline ElementScatter plan_scatter(const Layout& indices, const Layout& updates,
                                   const Layout& output, std::uint32_t axis) {
  std::array<std::array<std::int64_t, kMaxRank>, 3> strides{indices.strides, updates.strides,
                                                            output.strides};
  strides[2][axis] = 0;
  std::array<std::uint32_t, kMaxRank> sizes = indices.sizes;
  for (std::uint32_t d = 0; d < indices.rank; ++d) {
    if (strides[0][d] == 0 && strides[1][d] == 0 && strides[2][d] == 0) {
      sizes[d] = std::min(sizes[d], 1u);
    }
  }
  return {make_copy_plan(std::span(sizes.data(), indices.rank), strides)};
}

// The targets reader for index type I under `policy`: without the clamp where SC8 has checked
// every index (IndexPolicy::Error).
template <IndexElement I>
ElementTargetsFn scatter_targets_for(IndexPolicy policy) noexcept {
  return policy == IndexPolicy::Error ? &scatter_targets<I, false> : &scatter_targets<I, true>;
}

// The fast path, for arguments validated under `policy` (SC8 included), with the places that
// validation kept, if any.
template <class T, IndexElement I>
void scatter_fast(const TensorView<const T>& input, const TensorView<const I>& indices,
                  const TensorView<const T>& updates, const TensorView<T>& output,
                  std::uint32_t axis, IndexPolicy policy, const NarrowedIndices* narrowed) {
  scatter_by_width<BitsOf<T>>(width_view(input), indices.layout(), indices.data(),
                              width_view(updates), width_view(output), axis,
                              scatter_targets_for<I>(policy), &plan_scatter, narrowed);
}

}  // namespace detail

// --- typed layer ----------------------------------------------------------------------------
// T is deduced from the output (from the input where there is none), so the other data views may
// be views of T or of const T.

// Checks everything the operator checks (SC1-SC8, T2-T4, T8, T12, T13, the feature-level table,
// and duplicates under DuplicatePolicy::Reject) without writing; returns the output sizes.
template <class T, IndexElement I>
  requires(!std::is_const_v<T>)
std::vector<std::uint32_t> validate_scatter(std::type_identity_t<TensorView<const T>> input,
                                            TensorView<const I> indices,
                                            std::type_identity_t<TensorView<const T>> updates,
                                            TensorView<T> output, std::uint32_t axis,
                                            const ScatterOptions& options = {}) {
  const TensorView<const T> out = output;
  detail::validate_scatter_views(input, indices, updates, &out, detail::ScatterUse::Run, axis,
                                 options);
  return detail::size_vector(input.layout());
}

namespace reference {

// Validates, then runs the plain coordinate loop: the golden model faster paths are diffed against.
template <class T, IndexElement I>
  requires(!std::is_const_v<T>)
void scatter(std::type_identity_t<TensorView<const T>> input, TensorView<const I> indices,
             std::type_identity_t<TensorView<const T>> updates, TensorView<T> output,
             std::uint32_t axis, const ScatterOptions& options = {}) {
  validate_scatter<T, I>(input, indices, updates, output, axis, options);
  detail::scatter_reference<T, I>(input, indices, updates, output, axis);
}

}  // namespace reference

// SCATTER: output = input, then output[u with u[Axis] = Indices[u]] = Updates[u] for every
// indices coordinate u in row-major order. Nothing is written unless every check passes. Runs the
// fast path (detail::scatter_fast); reference::scatter is the golden loop it is tested against.
template <class T, IndexElement I>
  requires(!std::is_const_v<T>)
void scatter(std::type_identity_t<TensorView<const T>> input, TensorView<const I> indices,
             std::type_identity_t<TensorView<const T>> updates, TensorView<T> output,
             std::uint32_t axis, const ScatterOptions& options = {}) {
  const TensorView<const T> out = output;
  detail::NarrowedIndices narrowed;
  detail::validate_scatter_views(input, indices, updates, &out, detail::ScatterUse::Run, axis,
                                 options, &narrowed);
  detail::scatter_fast(detail::width_view(input), indices, detail::width_view(updates),
                       detail::width_view(output), axis, options.index_policy, &narrowed);
}

// --- runtime layer --------------------------------------------------------------------------

namespace detail {

struct ScatterDescs {
  ValidatedTensor input, indices, updates, output;
};

// Everything that needs no buffer: T1-T9, T11, T12, SC1-SC7, the feature-level table.
template <class Deferred = void>
inline ScatterDescs validate_scatter_descs(const ScatterOperatorDesc& desc,
                                           const ScatterOptions& options) {
  check_scatter_options(options);
  ScatterDescs v{
      validate_tensor_desc(kScatterOp, "InputTensor", desc.InputTensor, false),
      validate_tensor_desc(kScatterOp, "IndicesTensor", desc.IndicesTensor, false),
      validate_tensor_desc(kScatterOp, "UpdatesTensor", desc.UpdatesTensor, false),
      validate_tensor_desc(kScatterOp, "OutputTensor", desc.OutputTensor, true),
  };
  check_scatter_rules(v.input.layout, v.indices.layout, v.updates.layout, &v.output.layout,
                      {v.input.data_type, v.indices.data_type, v.updates.data_type,
                       v.output.data_type},
                      desc.Axis, options.feature_level);
  return v;
}

struct ScatterBound {
  BoundTensor input, indices, updates, output;  // output.data is null without an output buffer
};

// Calls f(type_identity<W>, type_identity<I>): W the unsigned integer of the data's element width,
// I the bound index type. For the loops that move or compare bits and never read a value.
template <class F>
decltype(auto) visit_width_and_index(const ScatterBound& b, F&& f) {
  return visit_width(b.input.tensor.data_type, [&](auto width) -> decltype(auto) {
    return visit_index(b.indices.tensor.data_type, ErrorCode::SC3,
                       [&](auto index_type) -> decltype(auto) { return f(width, index_type); });
  });
}

// The descriptions, then the buffers (T9, T10), T13 when the output is written, then the index
// pass (SC8) and, unless only collisions are wanted, DuplicatePolicy::Reject.
// `narrowed`: as check_scatter_indices.
template <class Deferred = void>
inline ScatterBound bind_scatter(const ScatterOperatorDesc& desc, ConstBuffer input,
                                 ConstBuffer indices, ConstBuffer updates,
                                 const ConstBuffer* output, ScatterUse use,
                                 const ScatterOptions& options,
                                 NarrowedIndices* narrowed = nullptr) {
  ScatterDescs v = validate_scatter_descs(desc, options);
  const std::string_view op = kScatterOp;
  ScatterBound b{bind_validated(op, std::move(v.input), *desc.InputTensor, input),
                 bind_validated(op, std::move(v.indices), *desc.IndicesTensor, indices),
                 bind_validated(op, std::move(v.updates), *desc.UpdatesTensor, updates),
                 output != nullptr
                     ? bind_validated(op, std::move(v.output), *desc.OutputTensor, *output)
                     : BoundTensor{std::move(v.output), nullptr}};
  if (use == ScatterUse::Run) {
    const BoundTensor all[] = {b.input, b.indices, b.updates, b.output};
    check_no_overlap(kScatterOp, std::span<const BoundTensor>(all));
  }
  visit_index(b.indices.tensor.data_type, ErrorCode::SC3, [&](auto index_type) {
    using I = typename decltype(index_type)::type;
    const TensorView<const I> iv = view_of<const I>(b.indices);
    check_scatter_indices(iv, desc.Axis, b.input.tensor.layout.sizes[desc.Axis],
                          options.index_policy, narrowed);
    if (use != ScatterUse::Collisions && options.duplicates == DuplicatePolicy::Reject) {
      check_scatter_duplicates(iv, desc.Axis, b.input.tensor.layout);
    }
  });
  return b;
}

}  // namespace detail

// Desc-only validation (no buffers): T1-T9, T11, T12, SC1-SC7 and the feature-level table.
// Returns OutputTensor's sizes (equal to InputTensor's, SC5).
template <class Deferred = void>
inline std::vector<std::uint32_t> validate_scatter(const ScatterOperatorDesc& desc,
                                                   const ScatterOptions& options = {}) {
  return detail::size_vector(detail::validate_scatter_descs(desc, options).input.layout);
}

// Full validation with the buffers: the above plus T9 and T10 on each binding, T13, SC8, and
// duplicates under DuplicatePolicy::Reject. Reads the indices, writes nothing.
template <class Deferred = void>
inline std::vector<std::uint32_t> validate_scatter(const ScatterOperatorDesc& desc,
                                                   ConstBuffer input, ConstBuffer indices,
                                                   ConstBuffer updates, Buffer output,
                                                   const ScatterOptions& options = {}) {
  const ConstBuffer out = output;
  return detail::size_vector(
      detail::bind_scatter(desc, input, indices, updates, &out, detail::ScatterUse::Run, options)
          .input.tensor.layout);
}

namespace reference {

// Runtime form of the golden model: validates, then runs the plain loop for the described types.
// A template only so that its body compiles in the translation unit that calls it.
template <class Deferred = void>
void scatter(const ScatterOperatorDesc& desc, ConstBuffer input, ConstBuffer indices,
                    ConstBuffer updates, Buffer output, const ScatterOptions& options = {}) {
  const ConstBuffer out = output;
  const detail::ScatterBound b =
      detail::bind_scatter(desc, input, indices, updates, &out, detail::ScatterUse::Run, options);
  // By element width: the plain loop moves bits and never reads a value, so the loop over the
  // unsigned integer of the element's size is the same loop (4 instantiations serve 11 types).
  detail::visit_width_and_index(b, [&]<class W, class I>(std::type_identity<W>,
                                                         std::type_identity<I>) {
    detail::scatter_reference(view_of<const W>(b.input), view_of<const I>(b.indices),
                              view_of<const W>(b.updates), view_of<W>(b.output), desc.Axis);
  });
}

}  // namespace reference

// The runtime entry point: the same description a harness gives DirectML, plus the buffers.
// Nothing is written unless every check passes. Dispatches on the element width and the index
// type; a template only so that the engine compiles in the translation unit that calls it.
// `reversed`: tensors the descriptions stand in for, InputTensor, IndicesTensor, UpdatesTensor,
// OutputTensor (detail::reverse_dimensions).
template <class Deferred = void>
void scatter(const ScatterOperatorDesc& desc, ConstBuffer input, ConstBuffer indices,
             ConstBuffer updates, Buffer output, const ScatterOptions& options = {},
             std::span<const std::uint8_t> reversed = {}) {
  const ConstBuffer out = output;
  detail::NarrowedIndices narrowed;
  detail::ScatterBound b = detail::bind_scatter(desc, input, indices, updates, &out,
                                                detail::ScatterUse::Run, options, &narrowed);
  detail::check_reversed_count(detail::kScatterOp, reversed, 4);
  if (!reversed.empty()) {
    std::size_t k = 0;
    for (BoundTensor* t : {&b.input, &b.indices, &b.updates, &b.output}) {
      detail::reverse_dimensions(*t, reversed[k++]);
    }
    // The places SC8's pass kept follow the indices as described: turned around with them.
    if (narrowed.places != nullptr) {
      narrowed.places = static_cast<const std::byte*>(narrowed.places) +
                        detail::reverse_layout(narrowed.layout, reversed[1]) *
                            static_cast<std::int64_t>(narrowed.place_bytes);
    }
  }
  // The index type and the element width are dispatched one after the other (4 + 4 paths, not
  // 4 x 4): the targets reader by index type, the moves by width.
  const detail::ElementTargetsFn targets_of =
      visit_index(b.indices.tensor.data_type, ErrorCode::SC3, [&](auto index_type) {
        return detail::scatter_targets_for<typename decltype(index_type)::type>(
            options.index_policy);
      });
  visit_width(b.input.tensor.data_type, [&](auto width) {
    using W = typename decltype(width)::type;
    detail::scatter_by_width<W>(view_of<const W>(b.input), b.indices.tensor.layout,
                                b.indices.data, view_of<const W>(b.updates), view_of<W>(b.output),
                                desc.Axis, targets_of, &detail::plan_scatter, &narrowed);
  });
}

// Compiled once per program with DMLREF_EXTERN_RUNTIME (runtime_instances.hpp).
DMLREF_RUNTIME_INSTANCE(void reference::scatter<void>(const ScatterOperatorDesc&, ConstBuffer,
    ConstBuffer, ConstBuffer, Buffer, const ScatterOptions&));
DMLREF_RUNTIME_INSTANCE(void scatter<void>(const ScatterOperatorDesc&, ConstBuffer, ConstBuffer,
    ConstBuffer, Buffer, const ScatterOptions&, std::span<const std::uint8_t>));

}  // namespace dmlref

// check_scatter_result and find_scatter_collisions, reachable from this header as before.
#include "dmlref/scatter_check.hpp"
