// dmlref: GATHER_ND1 (DML_GATHER_ND1_OPERATOR_DESC, operator type 140). Gathers whole sub-blocks of
// the input addressed by index tuples, with optional batch dimensions:
//   output[batch, ...] = input[batch, indices[batch, ...], ...]
// Rules: docs/gather_nd1.md (G1-G10), docs/tensors.md (T1-T13). Here: G1-G3, the feature-level
// tables and G10; the output sizes and their rules G4-G9 in ops/gather_nd1_sizes.hpp (included);
// T1-T13 in validation.hpp and tensor_desc.hpp. The fast path is the engine's RowGather of rows
// at offsets read from IndexTuples (engine.hpp).
//
// Notation (the spec's): R the shared DimensionCount; r, q, b the InputDimensionCount,
// IndicesDimensionCount and BatchDimensionCount; m = IndicesTensor.Sizes[R-1], the coordinates per
// index tuple; k = r - b - m, the trailing input dimensions copied whole. All three tensors are
// right-aligned: their meaningful dimensions are the last ones, and the leading ones are 1.
//
//   typed:   validate_gather_nd1(input, indices, output, r, q, b, options)
//            gather_nd1(...), reference::gather_nd1(...)  the plain loop, validating
//   runtime: validate_gather_nd1(desc, options)
//            validate_gather_nd1(desc, input, indices, output, options)
//            gather_nd1(desc, ...), reference::gather_nd1(desc, ...)
//   sizes:   infer_gather_nd1_output_sizes(input_sizes, indices_sizes, r, q, b)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "dmlref/ops/gather_nd1_sizes.hpp"
#include "dmlref/ops/operator.hpp"

namespace dmlref {

// The page's "Tensor support" tables. InputTensor and OutputTensor share a row; IndicesTensor has
// its own. The operator itself exists from 3_0 on.
inline constexpr FeatureLevel kGatherNd1IntroducedLevel = FeatureLevel::k3_0;
inline constexpr SupportRow kGatherNd1DataSupport[] = {
    {FeatureLevel::k4_1, 1, kMaxRank, kAllTypes},
    {FeatureLevel::k3_0, 1, kMaxRank,
     DataTypeSet{DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16,
                 DataType::Int8, DataType::UInt32, DataType::UInt16, DataType::UInt8}},
};
inline constexpr SupportRow kGatherNd1IndicesSupport[] = {
    {FeatureLevel::k4_1, 1, kMaxRank, kIndexTypes},
    {FeatureLevel::k3_0, 1, kMaxRank, kIndexTypes},
};

struct GatherNd1Options {
  FeatureLevel feature_level = kLatestFeatureLevel;
  // G10: an index outside the dimension it addresses is an error unless the caller opts in to
  // clamping (DirectML documents no result for it).
  IndexPolicy index_policy = IndexPolicy::Error;
};

// Mirrors DML_GATHER_ND1_OPERATOR_DESC field for field (buffer tensor descriptions only).
struct GatherNd1OperatorDesc {
  const BufferTensorDesc* InputTensor = nullptr;
  const BufferTensorDesc* IndicesTensor = nullptr;
  const BufferTensorDesc* OutputTensor = nullptr;
  std::uint32_t InputDimensionCount = 0;
  std::uint32_t IndicesDimensionCount = 0;
  std::uint32_t BatchDimensionCount = 0;
};

namespace detail {

template <class Deferred = void>
inline void check_gather_nd1_options(const GatherNd1Options& options) {
  if (options.index_policy != IndexPolicy::Error && options.index_policy != IndexPolicy::Clamp) {
    fail(ErrorCode::InvalidOption, kGatherNd1Name, ": index_policy is ",
         static_cast<unsigned>(options.index_policy),
         "; it must be IndexPolicy::Error or IndexPolicy::Clamp");
  }
  check_target_level(kGatherNd1Name, options.feature_level, kGatherNd1IntroducedLevel);
}

// G1, G2, G3, the feature-level tables, then G4-G9, on tensors that passed T1-T12; shared by both
// layers so each rule lives once (on the typed layer G2 and G3 hold by construction: one element
// type T, and I an IndexElement).
template <class Deferred = void>
inline void check_gather_nd1_rules(
    const Layout& input, DataType input_type, const Layout& indices, DataType indices_type,
    const Layout& output, DataType output_type, std::uint32_t r, std::uint32_t q, std::uint32_t b,
    FeatureLevel target) {
  const std::string_view op = kGatherNd1Name;
  const auto same_rank = [&](std::string_view name, std::uint32_t rank) {
    if (rank != input.rank) {
      fail(ErrorCode::G1, op, ": ", name, ".DimensionCount is ", rank,
           " but InputTensor.DimensionCount is ", input.rank,
           "; InputTensor, IndicesTensor and OutputTensor must have the same DimensionCount");
    }
  };
  same_rank("IndicesTensor", indices.rank);
  same_rank("OutputTensor", output.rank);
  if (output_type != input_type) {
    fail(ErrorCode::G2, op, ": OutputTensor.DataType is ", describe(output_type),
         " but InputTensor.DataType is ", describe(input_type), "; they must be the same");
  }
  if (!kIndexTypes.contains(indices_type)) {
    fail(ErrorCode::G3, op, ": IndicesTensor.DataType is ", describe(indices_type),
         "; it must be one of ", kIndexTypes.to_string());
  }
  check_support(op, "InputTensor", input.rank, input_type, kGatherNd1DataSupport, target);
  check_support(op, "IndicesTensor", indices.rank, indices_type, kGatherNd1IndicesSupport, target);
  check_support(op, "OutputTensor", output.rank, output_type, kGatherNd1DataSupport, target);
  check_gather_nd1_sizes(input, indices, output, r, q, b);  // G4-G9: gather_nd1_sizes.hpp
}

// The tuple grid (IndicesTensor without its last dimension) as one plan over three operands:
// 0 the tuple's first index, 1 the input offset of its batch coordinates (indices dimension
// R - q + j is input dimension R - r + j), 2 the output offset of its slice (tuple dimension i is
// output dimension `lead` + i; strides 0 without an output, for a pass that writes nothing).
// Planned with the strided-copy core, so walking it costs one add per tuple and operand.
template <class Deferred = void>
inline CopyPlan gather_nd1_tuple_grid(const Layout& indices, const Layout& input,
                                      const Layout* output, std::uint32_t r, std::uint32_t q,
                                      std::uint32_t b, std::uint32_t lead) {
  const std::uint32_t rank = indices.rank;
  std::array<std::array<std::int64_t, kMaxRank>, 3> strides{};
  for (std::uint32_t d = 0; d + 1 < rank; ++d) strides[0][d] = indices.strides[d];
  for (std::uint32_t j = 0; j < b; ++j) strides[1][rank - q + j] = input.strides[rank - r + j];
  for (std::uint32_t i = 0; output != nullptr && i + 1 < q; ++i) {
    strides[2][rank - q + i] = output->strides[lead + i];
  }
  return make_copy_plan(indices.size_span().first(rank - 1), strides);
}

// What a tuple's m indices address: index j selects along input dimension R - r + b + j (after
// the leading 1s and the batch dimensions), resolved by G10's policy.
template <class Deferred = void>
inline IndexTuples gather_nd1_tuples(const Layout& indices, const Layout& input, std::uint32_t r,
                                     std::uint32_t b, IndexPolicy policy, const void* data) {
  const std::uint32_t rank = indices.rank;
  IndexTuples tuples;
  tuples.indices = data;
  tuples.coords = indices.sizes[rank - 1];
  for (std::uint32_t j = 0; j < tuples.coords; ++j) {
    tuples.dim_size[j] = input.sizes[rank - r + b + j];
    tuples.dim_stride[j] = input.strides[rank - r + b + j];
    if (tuples.dim_size[j] != 1) tuples.selecting[tuples.selecting_count++] = j;
  }
  tuples.coord_step = indices.strides[rank - 1];
  tuples.clamp = policy == IndexPolicy::Clamp;
  return tuples;
}

// G10, a pass of its own that reads every index once and writes nothing: under IndexPolicy::Error
// every index lies in the input dimension its tuple position addresses. Branch-free, in the index
// type's own width: packed tuples in one pass against their positions' bounds
// (TupleBounds), others a position at a time (its dimension's size a constant of the
// inner loop). Only once it finds a bad index, a row-major walk names the first.
template <IndexElement I>
void check_gather_nd1_indices(TensorView<const I> indices, const Layout& input, std::uint32_t r,
                              std::uint32_t q, std::uint32_t b, IndexPolicy policy) {
  if (policy == IndexPolicy::Clamp) return;  // clamping gives every value a target
  const IndexTuples tuples = gather_nd1_tuples(indices.layout(), input, r, b, policy, nullptr);
  const CopyPlan grid = gather_nd1_tuple_grid(indices.layout(), input, nullptr, r, q, b, 0);
  const std::uint32_t m = tuples.coords;
  const bool packed = m > 1 && tuples.coord_step == 1 && grid.inner_stride(0) == m;
  std::array<IndexBounds<I>, kMaxRank> bounds{};
  for (std::uint32_t j = 0; j < m; ++j) bounds[j] = legal_index_bounds<I>(tuples.dim_size[j]);
  const TupleBounds<I> tuple_bounds(bounds.data(), packed ? m : 1);
  IndexBounds<I> position_bounds = bounds[0];
  // One check for both layouts (one lambda type), so the walk compiles once per index type.
  const auto legal = [&](const I* run, std::int64_t step, std::uint64_t n) {
    return packed ? tuple_bounds.all_legal(run, n)
                  : all_indices_legal(run, step, n, position_bounds);
  };
  bool bad = false;
  if (packed) {
    // Packed tuples (the usual layout): each run's m * length indices in one pass.
    bad = !all_runs_legal<3>(grid, indices.data(), m, legal);
  } else {
    for (std::uint32_t j = 0; j < m && !bad; ++j) {
      position_bounds = bounds[j];
      const I* const column = indices.data() + static_cast<std::int64_t>(j) * tuples.coord_step;
      bad = !all_runs_legal<3>(grid, column, 1, legal);
    }
  }
  if (!bad) return;
  const std::uint32_t rank = indices.rank();
  for_each_coordinate(indices.layout(), [&](const Coord& u) {
    const std::uint32_t dim = rank - r + b + u[rank - 1];
    const std::uint64_t n = input.sizes[dim];
    const I value = indices[u];
    if (!normalize_index(value, n)) {
      fail(ErrorCode::G10, kGatherNd1Name, ": IndicesTensor",
           coordinate_string(u, rank), " is ", value, " but InputTensor.Sizes[", dim,
           "] is ", n, "; indices must lie in ", legal_index_range<I>(n));
    }
  });
}

// The golden loop: the spec's "Semantics", one output element at a time, over views that passed
// validation (G1-G10, T1-T13).
template <class T, IndexElement I>
void gather_nd1_reference(TensorView<const T> input, TensorView<const I> indices,
                          TensorView<T> output, std::uint32_t r, std::uint32_t q, std::uint32_t b,
                          IndexPolicy policy) {
  // The mapping is the device-usable one (mapping.hpp), the same a GPU kernel calls: the tuple
  // t = B ++ G ++ S of `o`, its m indices resolved under `policy` (G10 proved them in range under
  // IndexPolicy::Error), the input element they address.
  const mapping::GatherNd1Plan plan = mapping::gather_nd1_plan(input, indices, output, r, q, b,
                                                               policy);
  for_each_coordinate(output.layout(), [&](const Coord& o) {
    output[o] = input.data()[mapping::gather_nd1_source(plan, o.data(), indices.data()).offset];
  });
}

// The fast path's plan: the tuple grid's rows (each tuple's slice, the k trailing dimensions)
// gathered by the engine, at the input offsets index_tuple_offsets reads from the tuples.
struct GatherNd1Plan {
  RowGather rows;
  IndexTuples tuples;
};

template <class Deferred = void>
inline GatherNd1Plan plan_gather_nd1(const Layout& input, const Layout& indices,
                                     const Layout& output, std::size_t element_bytes,
                                     std::uint32_t r, std::uint32_t q, std::uint32_t b,
                                     IndexPolicy policy, const void* indices_data) {
  const std::uint32_t rank = output.rank;
  const std::uint32_t k = r - b - indices.sizes[rank - 1];
  const std::uint32_t lead = rank - ((q - 1) + k);  // output dimension lead + i is tuple dim i
  std::array<std::array<std::int64_t, kMaxRank>, 2> slice_strides{};
  for (std::uint32_t s = 0; s < k; ++s) {
    slice_strides[0][s] = input.strides[rank - k + s];
    slice_strides[1][s] = output.strides[rank - k + s];
  }
  return {plan_row_gather(gather_nd1_tuple_grid(indices, input, &output, r, q, b, lead),
                          make_copy_plan(input.size_span().subspan(rank - k, k), slice_strides),
                          element_bytes, output.element_count() * element_bytes),
          gather_nd1_tuples(indices, input, r, b, policy, indices_data)};
}

}  // namespace detail

// ---- typed layer --------------------------------------------------------------------------------

// Checks everything (options, T2-T4, T8, T12, G1, the feature-level table, G4-G9, T13, then G10
// over every index) without writing; returns the output sizes.
template <class T, IndexElement I>
std::vector<std::uint32_t> validate_gather_nd1(
    TensorView<const T> input, TensorView<const I> indices, TensorView<T> output,
    std::uint32_t input_dimension_count, std::uint32_t indices_dimension_count,
    std::uint32_t batch_dimension_count, const GatherNd1Options& options = {}) {
  const std::string_view op = detail::kGatherNd1Name;
  detail::check_gather_nd1_options(options);
  detail::check_view(op, "InputTensor", input, false);
  detail::check_view(op, "IndicesTensor", indices, false);
  detail::check_view(op, "OutputTensor", output, true);
  detail::check_gather_nd1_rules(input.layout(), data_type_of<T>, indices.layout(),
                                 data_type_of<I>, output.layout(), data_type_of<T>,
                                 input_dimension_count, indices_dimension_count,
                                 batch_dimension_count, options.feature_level);
  // T13: the output overlaps neither input; the inputs may overlap each other.
  detail::check_no_overlap(op, {tensor_extent("InputTensor", input, false),
                                tensor_extent("IndicesTensor", indices, false),
                                tensor_extent("OutputTensor", output, true)});
  detail::check_gather_nd1_indices(indices, input.layout(), input_dimension_count,
                                   indices_dimension_count, batch_dimension_count,
                                   options.index_policy);
  return detail::size_vector(output.layout());  // the inferred sizes, by G9
}

namespace reference {

// Validates, then runs the plain coordinate loop: the golden path faster ones are diffed against.
template <class T, IndexElement I>
void gather_nd1(TensorView<const T> input, TensorView<const I> indices, TensorView<T> output,
                std::uint32_t input_dimension_count, std::uint32_t indices_dimension_count,
                std::uint32_t batch_dimension_count, const GatherNd1Options& options = {}) {
  validate_gather_nd1(input, indices, output, input_dimension_count, indices_dimension_count,
                      batch_dimension_count, options);
  detail::gather_nd1_reference(input, indices, output, input_dimension_count,
                               indices_dimension_count, batch_dimension_count,
                               options.index_policy);
}

}  // namespace reference

// GATHER_ND1 on typed views. Validates everything first (G10 in a pass that reads each index once
// and throws before the first write): a rejected call writes nothing. Then the plan, with elements
// moved as the unsigned integer of their width and the indices read as I.
template <class T, IndexElement I>
void gather_nd1(TensorView<const T> input, TensorView<const I> indices, TensorView<T> output,
                std::uint32_t input_dimension_count, std::uint32_t indices_dimension_count,
                std::uint32_t batch_dimension_count, const GatherNd1Options& options = {}) {
  validate_gather_nd1(input, indices, output, input_dimension_count, indices_dimension_count,
                      batch_dimension_count, options);
  const detail::GatherNd1Plan plan = detail::plan_gather_nd1(
      input.layout(), indices.layout(), output.layout(), sizeof(T), input_dimension_count,
      indices_dimension_count, batch_dimension_count, options.index_policy, indices.data());
  detail::gather_rows(plan.rows, detail::width_view(input).data(),
                      detail::width_view(output).data(), &detail::index_tuple_offsets<I>,
                      &plan.tuples);
}

// ---- runtime layer ------------------------------------------------------------------------------

namespace detail {

// The description-only checks: options, T1-T9, T11, T12, then G1-G3, the tables and G4-G9.
template <class Deferred = void>
inline std::array<ValidatedTensor, 3> validate_gather_nd1_descs(const GatherNd1OperatorDesc& desc,
                                                                const GatherNd1Options& options) {
  const std::string_view op = kGatherNd1Name;
  check_gather_nd1_options(options);
  ValidatedTensor input = validate_tensor_desc(op, "InputTensor", desc.InputTensor, false);
  ValidatedTensor indices = validate_tensor_desc(op, "IndicesTensor", desc.IndicesTensor, false);
  ValidatedTensor output = validate_tensor_desc(op, "OutputTensor", desc.OutputTensor, true);
  check_gather_nd1_rules(input.layout, input.data_type, indices.layout, indices.data_type,
                         output.layout, output.data_type, desc.InputDimensionCount,
                         desc.IndicesDimensionCount, desc.BatchDimensionCount,
                         options.feature_level);
  return {std::move(input), std::move(indices), std::move(output)};
}

// Everything: the description checks, then T9/T10 per binding, T13, and the G10 pass.
template <class Deferred = void>
inline std::array<BoundTensor, 3> bind_gather_nd1(const GatherNd1OperatorDesc& desc,
                                                  ConstBuffer input, ConstBuffer indices,
                                                  Buffer output, const GatherNd1Options& options) {
  const std::string_view op = kGatherNd1Name;
  auto [in, ix, out] = validate_gather_nd1_descs(desc, options);
  const std::array<BoundTensor, 3> bound{
      bind_validated(op, std::move(in), *desc.InputTensor, input),
      bind_validated(op, std::move(ix), *desc.IndicesTensor, indices),
      bind_validated(op, std::move(out), *desc.OutputTensor, output)};
  check_no_overlap(op, std::span<const BoundTensor>(bound));
  visit_index(bound[1].tensor.data_type, ErrorCode::G3, [&]<class I>(std::type_identity<I>) {
    check_gather_nd1_indices(view_of<const I>(bound[1]), bound[0].tensor.layout,
                             desc.InputDimensionCount, desc.IndicesDimensionCount,
                             desc.BatchDimensionCount, options.index_policy);
  });
  return bound;
}

}  // namespace detail

// The description-only checks (no buffers): options, T1-T9, T11, T12, G1-G9 and the feature-level
// table. Returns the output sizes. G10, T10 and T13 need the buffers: see the overload below.
template <class Deferred = void>
inline std::vector<std::uint32_t> validate_gather_nd1(const GatherNd1OperatorDesc& desc,
                                                      const GatherNd1Options& options = {}) {
  return detail::size_vector(detail::validate_gather_nd1_descs(desc, options)[2].layout);
}

// Everything, without writing: the description checks, then T9/T10 per buffer, T13, and G10 over
// every index. Returns the output sizes.
template <class Deferred = void>
inline std::vector<std::uint32_t> validate_gather_nd1(
    const GatherNd1OperatorDesc& desc, ConstBuffer input, ConstBuffer indices, Buffer output,
    const GatherNd1Options& options = {}) {
  return detail::size_vector(
      detail::bind_gather_nd1(desc, input, indices, output, options)[2].tensor.layout);
}

namespace reference {

// The same on a description and its buffers: every check of the runtime entry point (G10
// included, before anything is written), then the plain loop. A template only so that its body
// compiles in the translation unit that calls it.
template <class Deferred = void>
void gather_nd1(const GatherNd1OperatorDesc& desc, ConstBuffer input, ConstBuffer indices,
                Buffer output, const GatherNd1Options& options = {}) {
  const auto bound = detail::bind_gather_nd1(desc, input, indices, output, options);
  // By element width: the plain loop moves bits and never reads a value, so the loop over the
  // unsigned integer of the element's size is the same loop (4 instantiations serve 11 types).
  visit_width(bound[0].tensor.data_type, [&]<class W>(std::type_identity<W>) {
    visit_index(bound[1].tensor.data_type, ErrorCode::G3, [&]<class I>(std::type_identity<I>) {
      detail::gather_nd1_reference(view_of<const W>(bound[0]), view_of<const I>(bound[1]),
                                   view_of<W>(bound[2]), desc.InputDimensionCount,
                                   desc.IndicesDimensionCount, desc.BatchDimensionCount,
                                   options.index_policy);
    });
  });
}

}  // namespace reference

// GATHER_ND1 as DirectML describes it: validates (G10 included), then runs the plan by element
// width, with the indices read by their own type. A rejected call writes nothing. A template only
// so that the engine compiles in the translation unit that calls it (once per width and index
// type), not in every one that includes dmlref.hpp. `reversed`: tensors the descriptions stand in
// for, InputTensor, IndicesTensor, OutputTensor (detail::reverse_dimensions).
template <class Deferred = void>
void gather_nd1(const GatherNd1OperatorDesc& desc, ConstBuffer input, ConstBuffer indices,
                Buffer output, const GatherNd1Options& options = {},
                std::span<const std::uint8_t> reversed = {}) {
  auto bound = detail::bind_gather_nd1(desc, input, indices, output, options);
  detail::reverse_dimensions(detail::kGatherNd1Name, bound, reversed);
  const detail::GatherNd1Plan plan = detail::plan_gather_nd1(
      bound[0].tensor.layout, bound[1].tensor.layout, bound[2].tensor.layout,
      element_size(bound[0].tensor.data_type), desc.InputDimensionCount,
      desc.IndicesDimensionCount, desc.BatchDimensionCount, options.index_policy, bound[1].data);
  // The index type and the element width are dispatched one after the other (4 + 4 paths, not
  // 4 x 4): the offsets reader by index type, the moves by width.
  const detail::RowOffsetsFn offsets_of = visit_index(
      bound[1].tensor.data_type, ErrorCode::G3,
      []<class I>(std::type_identity<I>) -> detail::RowOffsetsFn {
        return &detail::index_tuple_offsets<I>;
      });
  visit_width(bound[0].tensor.data_type, [&]<class W>(std::type_identity<W>) {
    detail::gather_rows(plan.rows, view_of<const W>(bound[0]).data(), view_of<W>(bound[2]).data(),
                        offsets_of, &plan.tuples);
  });
}

// Compiled once per program with DMLREF_EXTERN_RUNTIME (runtime_instances.hpp).
DMLREF_RUNTIME_INSTANCE(void reference::gather_nd1<void>(const GatherNd1OperatorDesc&, ConstBuffer,
    ConstBuffer, Buffer, const GatherNd1Options&));
DMLREF_RUNTIME_INSTANCE(void gather_nd1<void>(const GatherNd1OperatorDesc&, ConstBuffer,
    ConstBuffer, Buffer, const GatherNd1Options&, std::span<const std::uint8_t>));

}  // namespace dmlref
