// dmlref: GATHER_ND1 (DML_GATHER_ND1_OPERATOR_DESC, operator type 140). Gathers whole sub-blocks of
// the input addressed by index tuples, with optional batch dimensions:
//   output[batch, ...] = input[batch, indices[batch, ...], ...]
// Rules: docs/gather_nd1.md (G1-G10), docs/tensors.md (T1-T13).
//
// Notation (the spec's): R the shared DimensionCount; r, q, b the InputDimensionCount,
// IndicesDimensionCount and BatchDimensionCount; m = IndicesTensor.Sizes[R-1], the coordinates per
// index tuple; k = r - b - m, the trailing input dimensions copied whole. All three tensors are
// right-aligned: their meaningful dimensions are the last ones, and the leading ones are 1.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

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

inline constexpr std::string_view kGatherNd1Name = "GATHER_ND1";

inline void check_gather_nd1_options(const GatherNd1Options& options) {
  if (options.index_policy != IndexPolicy::Error && options.index_policy != IndexPolicy::Clamp) {
    fail(ErrorCode::InvalidOption, kGatherNd1Name, ": index_policy is ",
         static_cast<unsigned>(options.index_policy),
         "; it must be IndexPolicy::Error or IndexPolicy::Clamp");
  }
  check_target_level(kGatherNd1Name, options.feature_level, kGatherNd1IntroducedLevel);
}

}  // namespace detail

// The output sizes GATHER_ND1 produces for these input and indices sizes (the spec's "Output
// sizes"), after checking G1 and G4-G8 (and T2-T4 on the sizes themselves); the output's own
// DimensionCount is the validators' to check against R (G1).
// Example 3: ({3,4,5,6,7}, {1,1,1,2,3}, 5, 3, 0) -> {1,1,2,6,7}.
inline std::vector<std::uint32_t> infer_gather_nd1_output_sizes(
    std::span<const std::uint32_t> input_sizes, std::span<const std::uint32_t> indices_sizes,
    std::uint32_t r, std::uint32_t q, std::uint32_t b) {
  using detail::fail;
  const std::string_view op = detail::kGatherNd1Name;
  if (input_sizes.size() < 1 || input_sizes.size() > kMaxRank) {
    fail(ErrorCode::T2, op, ": InputTensor.DimensionCount is ", input_sizes.size(),
         "; it must be between 1 and ", kMaxRank);
  }
  // G1
  if (indices_sizes.size() != input_sizes.size()) {
    fail(ErrorCode::G1, op, ": IndicesTensor.DimensionCount is ", indices_sizes.size(),
         " but InputTensor.DimensionCount is ", input_sizes.size(),
         "; InputTensor, IndicesTensor and OutputTensor must have the same DimensionCount");
  }
  const auto rank = static_cast<std::uint32_t>(input_sizes.size());
  for (std::uint32_t d = 0; d < rank; ++d) {
    if (input_sizes[d] == 0) {
      fail(ErrorCode::T3, op, ": InputTensor.Sizes[", d,
           "] is 0; every size must be at least 1 (DirectML has no empty tensors)");
    }
    if (indices_sizes[d] == 0) {
      fail(ErrorCode::T3, op, ": IndicesTensor.Sizes[", d,
           "] is 0; every size must be at least 1 (DirectML has no empty tensors)");
    }
  }
  // G4
  if (r < 1 || r > rank) {
    fail(ErrorCode::G4, op, ": InputDimensionCount is ", r, " but InputTensor.DimensionCount is ",
         rank, "; it must be between 1 and ", rank);
  }
  if (q < 1 || q > rank) {
    fail(ErrorCode::G4, op, ": IndicesDimensionCount is ", q,
         " but IndicesTensor.DimensionCount is ", rank, "; it must be between 1 and ", rank);
  }
  // G5
  if (b >= r) {
    fail(ErrorCode::G5, op, ": BatchDimensionCount is ", b, " but InputDimensionCount is ", r,
         "; BatchDimensionCount must be smaller");
  }
  if (b >= q) {
    fail(ErrorCode::G5, op, ": BatchDimensionCount is ", b, " but IndicesDimensionCount is ", q,
         "; BatchDimensionCount must be smaller");
  }
  // G6: the spec's bound r - b, stricter than the page's "at most InputTensor.DimensionCount":
  // the tuple addresses input dimensions after the batch ones, and there are only r - b of them.
  const std::uint32_t m = indices_sizes[rank - 1];
  if (m < 1 || m > r - b) {
    fail(ErrorCode::G6, op, ": IndicesTensor.Sizes[", rank - 1,
         "] (the coordinates per index tuple) is ", m, " but InputDimensionCount - "
         "BatchDimensionCount is ", r - b, "; it must be between 1 and ", r - b);
  }
  // G7
  for (std::uint32_t d = 0; d < rank - r; ++d) {
    if (input_sizes[d] != 1) {
      fail(ErrorCode::G7, op, ": InputTensor.Sizes[", d, "] is ", input_sizes[d],
           " but it precedes the last InputDimensionCount (", r,
           ") dimensions; those leading sizes must be 1");
    }
  }
  for (std::uint32_t d = 0; d < rank - q; ++d) {
    if (indices_sizes[d] != 1) {
      fail(ErrorCode::G7, op, ": IndicesTensor.Sizes[", d, "] is ", indices_sizes[d],
           " but it precedes the last IndicesDimensionCount (", q,
           ") dimensions; those leading sizes must be 1");
    }
  }
  // G8
  for (std::uint32_t j = 0; j < b; ++j) {
    const std::uint32_t in_d = rank - r + j;
    const std::uint32_t ix_d = rank - q + j;
    if (input_sizes[in_d] != indices_sizes[ix_d]) {
      fail(ErrorCode::G8, op, ": IndicesTensor.Sizes[", ix_d, "] is ", indices_sizes[ix_d],
           " but InputTensor.Sizes[", in_d, "] is ", input_sizes[in_d], "; batch dimension ", j,
           " of BatchDimensionCount (", b, ") must have the same size in both");
    }
  }
  // Output sizes: the batch and grid dimensions of the indices (the tuple dimension dropped), then
  // the trailing k input dimensions. The page's formula line says the last m input dimensions; its
  // worked example and DirectMLX take the last k = r - b - m, which the spec follows.
  const std::uint32_t k = r - b - m;
  const std::uint32_t meaningful = (q - 1) + k;
  if (meaningful > rank) {
    fail(ErrorCode::G9, op, ": the output needs (IndicesDimensionCount - 1) + (InputDimensionCount"
         " - BatchDimensionCount - IndicesTensor.Sizes[", rank - 1, "]) = ", q - 1, " + ", k, " = ",
         meaningful, " dimensions but DimensionCount is ", rank,
         "; the output's meaningful dimensions must fit in it");
  }
  std::vector<std::uint32_t> out(rank - meaningful, 1u);
  for (std::uint32_t d = rank - q; d + 1 < rank; ++d) out.push_back(indices_sizes[d]);
  for (std::uint32_t d = rank - k; d < rank; ++d) out.push_back(input_sizes[d]);
  // T4 on the inferred output, so the sizes returned always describe a tensor DirectML can hold.
  std::uint64_t count = 1;
  for (std::uint32_t s : out) {
    const auto next = detail::checked_mul(count, std::uint64_t{s});
    if (!next || *next > kMaxElementCount) {
      fail(ErrorCode::T4, op, ": the inferred OutputTensor.Sizes ",
           detail::brace_list(std::span<const std::uint32_t>(out)),
           " hold more than 4294967295 (2^32 - 1) elements, the most a tensor may hold");
    }
    count = *next;
  }
  return out;
}
inline std::vector<std::uint32_t> infer_gather_nd1_output_sizes(
    std::initializer_list<std::uint32_t> input_sizes,
    std::initializer_list<std::uint32_t> indices_sizes, std::uint32_t input_dimension_count,
    std::uint32_t indices_dimension_count, std::uint32_t batch_dimension_count) {
  return infer_gather_nd1_output_sizes(
      std::span<const std::uint32_t>(input_sizes.begin(), input_sizes.size()),
      std::span<const std::uint32_t>(indices_sizes.begin(), indices_sizes.size()),
      input_dimension_count, indices_dimension_count, batch_dimension_count);
}

namespace detail {

// G9: the given output sizes equal the inferred ones exactly.
inline void check_gather_nd1_output_sizes(const Layout& output,
                                          const std::vector<std::uint32_t>& inferred) {
  const std::span<const std::uint32_t> expected(inferred);
  bool same = output.rank == inferred.size();
  for (std::uint32_t d = 0; same && d < output.rank; ++d) same = output.sizes[d] == inferred[d];
  if (!same) {
    fail(ErrorCode::G9, kGatherNd1Name, ": OutputTensor.Sizes is ", output.sizes_string(),
         " but the inferred sizes are ", brace_list(expected),
         " (leading 1s, IndicesTensor.Sizes without its last dimension, then the last "
         "InputDimensionCount - BatchDimensionCount - IndicesTensor.Sizes[R-1] InputTensor.Sizes);"
         " they must be equal");
  }
}

// G1, G2, G3, the feature-level tables, then G4-G9, on tensors that passed T1-T12; shared by both
// layers so each rule lives once (on the typed layer G2 and G3 hold by construction: one element
// type T, and I an IndexElement). Returns the output sizes.
inline std::vector<std::uint32_t> check_gather_nd1_rules(
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
  std::vector<std::uint32_t> sizes =
      infer_gather_nd1_output_sizes(input.size_span(), indices.size_span(), r, q, b);
  check_gather_nd1_output_sizes(output, sizes);
  return sizes;
}

// G10 over every index in row-major order of the indices, the message naming the first bad one.
// Only reached once a faster pass found a bad index (or directly, for a caller that wants it).
template <IndexElement I>
void check_gather_nd1_indices_by_coordinate(TensorView<const I> indices, const Layout& input,
                                            std::uint32_t r, std::uint32_t b) {
  const std::uint32_t rank = indices.rank();
  // Tuple coordinate j addresses input dimension R - r + b + j (after the leading 1s and batches).
  const std::uint32_t first = rank - r + b;
  for_each_coordinate(indices.layout(), [&](const Coord& u) {
    const std::uint32_t dim = first + u[rank - 1];
    const std::uint64_t n = input.sizes[dim];
    const I value = indices[u];
    if (!normalize_index(value, n)) {
      fail(ErrorCode::G10, kGatherNd1Name, ": IndicesTensor",
           coordinate_string(u, rank), " is ", value, " but InputTensor.Sizes[", dim,
           "] is ", n, "; indices must lie in ", legal_index_range<I>(n));
    }
  });
}

// The tuple grid (IndicesTensor without its last dimension) as one plan over three operands:
// 0 the tuple's first index, 1 the input offset of its batch coordinates (indices dimension
// R - q + j is input dimension R - r + j), 2 the output offset of its slice (tuple dimension i is
// output dimension `lead` + i). Planned with the strided-copy core, so walking it costs one add
// per tuple and operand.
// `output` may be null (a pass that writes nothing): its operand's strides are then 0.
inline CopyPlan gather_nd1_tuple_plan(const Layout& indices, const Layout& input,
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

// G10, a pass of its own that reads every index once and writes nothing: under IndexPolicy::Error
// every index must lie in the input dimension its tuple position addresses. Branch-free per index
// and in the index type's own width (legal_index_bounds), so the common pass costs little; the
// first bad index is then named by the coordinate walk above.
template <IndexElement I>
void check_gather_nd1_indices(TensorView<const I> indices, const Layout& input, std::uint32_t r,
                              std::uint32_t q, std::uint32_t b, IndexPolicy policy) {
  if (policy == IndexPolicy::Clamp) return;  // clamping gives every value a target
  const std::uint32_t rank = indices.rank();
  const std::uint32_t m = indices.size(rank - 1);
  const std::uint32_t first = rank - r + b;
  const CopyPlan grid = gather_nd1_tuple_plan(indices.layout(), input, nullptr, r, q, b, 0);
  const std::int64_t coord_step = indices.stride(rank - 1);
  bool bad = false;
  for (std::uint32_t j = 0; j < m && !bad; ++j) {
    // One coordinate position at a time: its dimension size is a constant of the inner loop.
    const I* const column = indices.data() + static_cast<std::int64_t>(j) * coord_step;
    bad = !all_run_indices_legal<3>(grid, column, legal_index_bounds<I>(input.sizes[first + j]));
  }
  if (bad) check_gather_nd1_indices_by_coordinate(indices, input, r, b);
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

// What a tuple's coordinates address: the input dimension and stride of each (tuple position j
// indexes input dimension R - r + b + j), and how an index becomes a coordinate (G10).
struct GatherNd1Tuples {
  const void* indices = nullptr;
  std::array<std::uint64_t, kMaxRank> dim_size{};
  std::array<std::int64_t, kMaxRank> dim_stride{};
  std::uint32_t coords = 0;     // m
  std::int64_t coord_step = 0;  // between a tuple's coordinates in IndicesTensor
  bool clamp = false;
};

// The fast path's plan: the tuple grid's rows (each tuple's slice, the k trailing dimensions)
// gathered by the engine, with the tuples' offsets read by gather_nd1_offsets.
struct GatherNd1Plan {
  RowGather rows;
  GatherNd1Tuples tuples;
};

inline GatherNd1Plan plan_gather_nd1(const Layout& input, const Layout& indices,
                                     const Layout& output, std::size_t element_bytes,
                                     std::uint32_t r, std::uint32_t q, std::uint32_t b,
                                     IndexPolicy policy) {
  const std::uint32_t rank = output.rank;
  const std::uint32_t m = indices.sizes[rank - 1];
  const std::uint32_t k = r - b - m;
  const std::uint32_t lead = rank - ((q - 1) + k);  // output dimension lead + i is tuple dim i
  std::array<std::array<std::int64_t, kMaxRank>, 2> slice_strides{};
  for (std::uint32_t s = 0; s < k; ++s) {
    slice_strides[0][s] = input.strides[rank - k + s];
    slice_strides[1][s] = output.strides[rank - k + s];
  }
  GatherNd1Plan plan;
  plan.rows = plan_row_gather(
      gather_nd1_tuple_plan(indices, input, &output, r, q, b, lead),
      make_copy_plan(input.size_span().subspan(rank - k, k), slice_strides), element_bytes,
      output.element_count() * element_bytes);
  for (std::uint32_t j = 0; j < m; ++j) {
    plan.tuples.dim_size[j] = input.sizes[rank - r + b + j];
    plan.tuples.dim_stride[j] = input.strides[rank - r + b + j];
  }
  plan.tuples.coords = m;
  plan.tuples.coord_step = indices.strides[rank - 1];
  plan.tuples.clamp = policy == IndexPolicy::Clamp;
  return plan;
}

// The engine's RowOffsetsFn: the input offsets of `count` tuples. Under IndexPolicy::Error the
// G10 pass proved wrap_index in range. The one place the fast path reads an index.
template <IndexElement I>
void gather_nd1_offsets(const void* context, std::int64_t first, std::int64_t step,
                        std::int64_t base, std::int64_t base_step, std::uint64_t count,
                        std::int64_t* offsets) {
  const GatherNd1Tuples& t = *static_cast<const GatherNd1Tuples*>(context);
  const I* const t0 = static_cast<const I*>(t.indices) + first;
  if (t.coords == 1 && !t.clamp) {  // the common shape: a loop with no inner loop
    const std::uint64_t size = t.dim_size[0];
    const std::int64_t stride = t.dim_stride[0];
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto ii = static_cast<std::int64_t>(i);
      offsets[i] = base + ii * base_step +
                   static_cast<std::int64_t>(wrap_index(t0[ii * step], size)) * stride;
    }
    return;
  }
  const std::array<std::uint64_t, kMaxRank> sizes = t.dim_size;
  const std::array<std::int64_t, kMaxRank> strides = t.dim_stride;
  const std::uint32_t coords = t.coords;
  const std::int64_t cstep = t.coord_step;
  const bool clamped = t.clamp;
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto ii = static_cast<std::int64_t>(i);
    const I* const tuple = t0 + ii * step;
    std::int64_t offset = base + ii * base_step;
    for (std::uint32_t j = 0; j < coords; ++j) {
      const I value = tuple[static_cast<std::int64_t>(j) * cstep];
      const std::uint64_t c = clamped ? clamp_index(value, sizes[j]) : wrap_index(value, sizes[j]);
      offset += static_cast<std::int64_t>(c) * strides[j];
    }
    offsets[i] = offset;
  }
}

// The plan executed by element width, with offsets read by `offsets_of` (gather_nd1_offsets of
// the index type).
template <class W>
void gather_nd1_by_width(const TensorView<const W>& input, const Layout& indices,
                         const void* indices_data, const TensorView<W>& output, std::uint32_t r,
                         std::uint32_t q, std::uint32_t b, IndexPolicy policy,
                         RowOffsetsFn offsets_of) {
  GatherNd1Plan plan =
      plan_gather_nd1(input.layout(), indices, output.layout(), sizeof(W), r, q, b, policy);
  plan.tuples.indices = indices_data;
  gather_rows(plan.rows, input.data(), output.data(), offsets_of, &plan.tuples);
}

// The fast path, over views that passed validation except G10: the G10 pass (reads the indices,
// writes nothing), then the plan.
template <class T, IndexElement I>
void gather_nd1_fast(TensorView<const T> input, TensorView<const I> indices, TensorView<T> output,
                     std::uint32_t r, std::uint32_t q, std::uint32_t b, IndexPolicy policy) {
  check_gather_nd1_indices(indices, input.layout(), r, q, b, policy);
  gather_nd1_by_width<BitsOf<T>>(width_view(input), indices.layout(), indices.data(),
                                 width_view(output), r, q, b, policy, &gather_nd1_offsets<I>);
}

// Everything the runtime layer knows after validating the descriptions.
struct GatherNd1Validated {
  ValidatedTensor input;
  ValidatedTensor indices;
  ValidatedTensor output;
  std::vector<std::uint32_t> output_sizes;
};

// The description-only checks, shared by both runtime validators: options, T1-T9, T11, T12, then
// G1, G2, G3, the feature-level table, G4-G9.
inline GatherNd1Validated validate_gather_nd1_descs(const GatherNd1OperatorDesc& desc,
                                                    const GatherNd1Options& options) {
  const std::string_view op = kGatherNd1Name;
  check_gather_nd1_options(options);
  ValidatedTensor input = validate_tensor_desc(op, "InputTensor", desc.InputTensor, false);
  ValidatedTensor indices = validate_tensor_desc(op, "IndicesTensor", desc.IndicesTensor, false);
  ValidatedTensor output = validate_tensor_desc(op, "OutputTensor", desc.OutputTensor, true);
  std::vector<std::uint32_t> sizes = check_gather_nd1_rules(
      input.layout, input.data_type, indices.layout, indices.data_type, output.layout,
      output.data_type, desc.InputDimensionCount, desc.IndicesDimensionCount,
      desc.BatchDimensionCount, options.feature_level);
  return {std::move(input), std::move(indices), std::move(output), std::move(sizes)};
}

// Both runtime validators' buffer part: T9/T10 per binding, T13, then the G10 index pass.
// `check_indices` false leaves G10 to the caller's own index pass (gather_nd1_fast).
inline GatherNd1Validated validate_gather_nd1_bound(const GatherNd1OperatorDesc& desc,
                                                    ConstBuffer input, ConstBuffer indices,
                                                    Buffer output,
                                                    const GatherNd1Options& options,
                                                    bool check_indices = true) {
  const std::string_view op = kGatherNd1Name;
  GatherNd1Validated v = validate_gather_nd1_descs(desc, options);
  const BoundTensor bound[] = {bind_validated(op, v.input, *desc.InputTensor, input),
                               bind_validated(op, v.indices, *desc.IndicesTensor, indices),
                               bind_validated(op, v.output, *desc.OutputTensor, output)};
  check_no_overlap(op, std::span<const BoundTensor>(bound));
  if (!check_indices) return v;
  visit_index(v.indices.data_type, ErrorCode::G3, [&](auto index_type) {
    using I = typename decltype(index_type)::type;
    check_gather_nd1_indices<I>(view_of<const I>(v.indices, static_cast<const I*>(indices.data)),
                                v.input.layout, desc.InputDimensionCount,
                                desc.IndicesDimensionCount, desc.BatchDimensionCount,
                                options.index_policy);
  });
  return v;
}

// ---- typed layer --------------------------------------------------------------------------------

// The typed checks; `check_indices` false leaves G10 to the caller's own index pass.
template <class T, IndexElement I>
std::vector<std::uint32_t> validate_gather_nd1_views(
    TensorView<const T> input, TensorView<const I> indices, TensorView<T> output,
    std::uint32_t input_dimension_count, std::uint32_t indices_dimension_count,
    std::uint32_t batch_dimension_count, const GatherNd1Options& options, bool check_indices) {
  const std::string_view op = kGatherNd1Name;
  check_gather_nd1_options(options);
  check_view(op, "InputTensor", input, false);
  check_view(op, "IndicesTensor", indices, false);
  check_view(op, "OutputTensor", output, true);
  std::vector<std::uint32_t> sizes = check_gather_nd1_rules(
      input.layout(), data_type_of<T>, indices.layout(), data_type_of<I>, output.layout(),
      data_type_of<T>, input_dimension_count, indices_dimension_count, batch_dimension_count,
      options.feature_level);
  // T13: the output overlaps neither input; the inputs may overlap each other.
  check_no_overlap(op, {tensor_extent("InputTensor", input, false),
                        tensor_extent("IndicesTensor", indices, false),
                        tensor_extent("OutputTensor", output, true)});
  if (check_indices) {
    check_gather_nd1_indices<I>(indices, input.layout(), input_dimension_count,
                                indices_dimension_count, batch_dimension_count,
                                options.index_policy);
  }
  return sizes;
}

}  // namespace detail

// Checks everything (options, T2-T4, T8, T12, G1, the feature-level table, G4-G9, T13, then G10
// over every index) without writing; returns the output sizes.
template <class T, IndexElement I>
std::vector<std::uint32_t> validate_gather_nd1(TensorView<const T> input,
                                               TensorView<const I> indices, TensorView<T> output,
                                               std::uint32_t input_dimension_count,
                                               std::uint32_t indices_dimension_count,
                                               std::uint32_t batch_dimension_count,
                                               const GatherNd1Options& options = {}) {
  return detail::validate_gather_nd1_views(input, indices, output, input_dimension_count,
                                           indices_dimension_count, batch_dimension_count, options,
                                           true);
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

// The same on a description and its buffers: every check of the runtime entry point (G10
// included, before anything is written), then the plain loop. A template only so that its body
// compiles in the translation unit that calls it.
template <class Deferred = void>
void gather_nd1(const GatherNd1OperatorDesc& desc, ConstBuffer input, ConstBuffer indices,
                Buffer output, const GatherNd1Options& options = {}) {
  const detail::GatherNd1Validated v =
      detail::validate_gather_nd1_bound(desc, input, indices, output, options);
  // By element width: the plain loop moves bits and never reads a value, so the loop over the
  // unsigned integer of the element's size is the same loop (4 instantiations serve 11 types).
  visit_width(v.input.data_type, [&]<class W>(std::type_identity<W>) {
    visit_index(v.indices.data_type, ErrorCode::G3, [&]<class I>(std::type_identity<I>) {
      detail::gather_nd1_reference(view_of<const W>(v.input, static_cast<const W*>(input.data)),
                                   view_of<const I>(v.indices, static_cast<const I*>(indices.data)),
                                   view_of<W>(v.output, static_cast<W*>(output.data)),
                                   desc.InputDimensionCount, desc.IndicesDimensionCount,
                                   desc.BatchDimensionCount, options.index_policy);
    });
  });
}

}  // namespace reference

// GATHER_ND1 on typed views. Validates everything first (G10 in the fast path's index pass, which
// reads each index once and throws before the first write): a rejected call writes nothing.
template <class T, IndexElement I>
void gather_nd1(TensorView<const T> input, TensorView<const I> indices, TensorView<T> output,
                std::uint32_t input_dimension_count, std::uint32_t indices_dimension_count,
                std::uint32_t batch_dimension_count, const GatherNd1Options& options = {}) {
  detail::validate_gather_nd1_views(input, indices, output, input_dimension_count,
                                    indices_dimension_count, batch_dimension_count, options,
                                    false);
  detail::gather_nd1_fast(detail::width_view(input), indices, detail::width_view(output),
                          input_dimension_count, indices_dimension_count, batch_dimension_count,
                          options.index_policy);
}

// ---- runtime layer ------------------------------------------------------------------------------

// The description-only checks (no buffers): options, T1-T9, T11, T12, G1-G9 and the feature-level
// table. Returns the output sizes. G10, T10 and T13 need the buffers: see the overload below.
inline std::vector<std::uint32_t> validate_gather_nd1(const GatherNd1OperatorDesc& desc,
                                                      const GatherNd1Options& options = {}) {
  return detail::validate_gather_nd1_descs(desc, options).output_sizes;
}

// Everything, without writing: the description checks, then T9/T10 per buffer, T13, and G10 over
// every index. Returns the output sizes.
inline std::vector<std::uint32_t> validate_gather_nd1(const GatherNd1OperatorDesc& desc,
                                                      ConstBuffer input, ConstBuffer indices,
                                                      Buffer output,
                                                      const GatherNd1Options& options = {}) {
  return detail::validate_gather_nd1_bound(desc, input, indices, output, options).output_sizes;
}

// GATHER_ND1 as DirectML describes it: validates (G10 in the fast path's index pass), then
// dispatches on the element width and the index type to the fast path. A rejected call writes
// nothing. A template only so that the engine compiles in the translation unit that calls it
// (once per width and index type), not in every one that includes dmlref.hpp.
template <class Deferred = void>
void gather_nd1(const GatherNd1OperatorDesc& desc, ConstBuffer input, ConstBuffer indices,
                Buffer output, const GatherNd1Options& options = {}) {
  const detail::GatherNd1Validated v =
      detail::validate_gather_nd1_bound(desc, input, indices, output, options, false);
  const std::uint32_t r = desc.InputDimensionCount, q = desc.IndicesDimensionCount,
                      b = desc.BatchDimensionCount;
  // The index type and the element width are dispatched one after the other (4 + 4 paths, not
  // 4 x 4): G10 and the offsets reader by index type, the moves by width.
  const detail::RowOffsetsFn offsets_of =
      visit_index(v.indices.data_type, ErrorCode::G3, [&](auto index_type) {
        using I = typename decltype(index_type)::type;
        const TensorView<const I> index_view =
            view_of<const I>(v.indices, static_cast<const I*>(indices.data));
        detail::check_gather_nd1_indices(index_view, v.input.layout, r, q, b,
                                         options.index_policy);
        return &detail::gather_nd1_offsets<I>;
      });
  visit_width(v.input.data_type, [&](auto width) {
    using W = typename decltype(width)::type;
    detail::gather_nd1_by_width<W>(view_of<const W>(v.input, static_cast<const W*>(input.data)),
                                   v.indices.layout, indices.data,
                                   view_of<W>(v.output, static_cast<W*>(output.data)), r, q, b,
                                   options.index_policy, offsets_of);
  });
}

}  // namespace dmlref
