// dmlref: GATHER_ND1's output sizes (the spec's "Output sizes"), from the input's and the indices'
// sizes alone: infer_gather_nd1_output_sizes, the shape inference a framework runs before it
// allocates the output (ONNX Runtime's and WebNN's), and G9, the check that the output's sizes
// equal it. On the way it checks the rules about sizes: T2-T4 on the sizes themselves, G1 between
// input and indices, G4-G8 and G9. The operator (ops/gather_nd1.hpp, which includes this header)
// checks the rest. Needs only layout.hpp, so a framework can include it on its own.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "dmlref/layout.hpp"

namespace dmlref {

namespace detail {
inline constexpr std::string_view kGatherNd1Name = "GATHER_ND1";
}  // namespace detail

// The output sizes GATHER_ND1 produces for these input and indices sizes (the spec's "Output
// sizes"), after checking G1 and G4-G8 (and T2-T4 on the sizes themselves); the output's own
// DimensionCount is the validators' to check against R (G1).
// Example 3: ({3,4,5,6,7}, {1,1,1,2,3}, 5, 3, 0) -> {1,1,2,6,7}.
template <class Deferred = void>
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
template <class Deferred = void>
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

// G4-G9 on the operator's tensors: the output sizes inferred from the input's and the indices',
// then G9, the given output sizes equal to them exactly.
template <class Deferred = void>
inline void check_gather_nd1_sizes(const Layout& input, const Layout& indices, const Layout& output,
                                   std::uint32_t r, std::uint32_t q, std::uint32_t b) {
  const std::vector<std::uint32_t> inferred =
      infer_gather_nd1_output_sizes(input.size_span(), indices.size_span(), r, q, b);
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

}  // namespace detail

}  // namespace dmlref
