// The bodies of the naive GPU kernels (kernels.cu): one output element of each operator, computed
// from the device-usable mapping (dmlref/mapping.hpp) and the operator's plan alone. Host and
// device: test_mapping.cpp runs the same bodies on the CPU (so they are checked on machines
// without a GPU), kernels.cu wraps each in a __global__ grid-stride loop.
//
// T is any type of the element's width: values are moved, never computed with, so the bits
// survive (kernels.cu moves unsigned integers of the element's size).
#pragma once

#include <cstdint>

#include <dmlref/mapping.hpp>

namespace dmlref_cuda {

namespace mapping = dmlref::mapping;

// Output element `linear` (row-major) of JOIN; `inputs[i]` is input i's element 0.
template <class T>
DMLREF_HOST_DEVICE mapping::Status join_element(const mapping::JoinPlan& plan,
                                                const T* const* inputs, T* output,
                                                std::uint64_t linear) {
  std::uint32_t o[mapping::kMaxRank] = {};
  mapping::coordinate_of(plan.output, linear, o);
  const mapping::PieceOffset from = mapping::join_source(plan, o);
  if (!from.ok()) return from.status;
  output[mapping::offset_of(plan.output, o)] = inputs[from.piece][from.offset];
  return mapping::Status::Ok;
}

// Element `linear` of SPLIT's output `piece`.
template <class T>
DMLREF_HOST_DEVICE mapping::Status split_element(const mapping::SplitPlan& plan,
                                                 std::uint32_t piece, const T* input, T* output,
                                                 std::uint64_t linear) {
  const mapping::TensorLayout& out = plan.outputs[piece];
  std::uint32_t o[mapping::kMaxRank] = {};
  mapping::coordinate_of(out, linear, o);
  output[mapping::offset_of(out, o)] = input[mapping::split_source(plan, piece, o)];
  return mapping::Status::Ok;
}

// Output element `linear` of SCATTER, written as a gather so that no two threads write one
// element: the updates that may target output coordinate c are those at indices coordinates
// c with another position j along Axis (SC7), and of several the last in row-major order of the
// indices wins (DuplicatePolicy::LastWins), so the scan runs backwards along Axis and stops at the
// first update whose index selects c[Axis] (mapping::scatter_position, the position
// mapping::scatter_target puts an update at).
template <class T, class I>
DMLREF_HOST_DEVICE mapping::Status scatter_element(const mapping::ScatterPlan& plan,
                                                   const T* input, const I* indices,
                                                   const T* updates, T* output,
                                                   std::uint64_t linear) {
  std::uint32_t c[mapping::kMaxRank] = {};
  mapping::coordinate_of(plan.output, linear, c);
  const std::uint32_t axis = plan.axis;
  T value = input[mapping::offset_of(plan.input, c)];
  for (std::uint32_t j = plan.indices.sizes[axis]; j-- > 0;) {
    const I index = indices[mapping::offset_replacing(plan.indices, c, axis, j)];
    const mapping::ResolvedIndex at = mapping::scatter_position(plan, index);
    if (!at.ok()) return at.status;
    if (at.position == c[axis]) {
      value = updates[mapping::offset_replacing(plan.updates, c, axis, j)];
      break;
    }
  }
  output[mapping::offset_of(plan.output, c)] = value;
  return mapping::Status::Ok;
}

// Output element `linear` of GATHER_ND1; `indices` is IndicesTensor's element 0.
template <class T, class I>
DMLREF_HOST_DEVICE mapping::Status gather_nd1_element(const mapping::GatherNd1Plan& plan,
                                                      const T* input, const I* indices, T* output,
                                                      std::uint64_t linear) {
  std::uint32_t o[mapping::kMaxRank] = {};
  mapping::coordinate_of(plan.output, linear, o);
  const mapping::MappedOffset from = mapping::gather_nd1_source(plan, o, indices);
  if (!from.ok()) return from.status;
  output[mapping::offset_of(plan.output, o)] = input[from.offset];
  return mapping::Status::Ok;
}

// Output element `linear` of REVERSE_SUBSEQUENCES; `lengths` is SequenceLengthsTensor's element 0.
template <class T, class L>
DMLREF_HOST_DEVICE mapping::Status reverse_subsequences_element(
    const mapping::ReverseSubsequencesPlan& plan, const T* input, const L* lengths, T* output,
    std::uint64_t linear) {
  std::uint32_t o[mapping::kMaxRank] = {};
  mapping::coordinate_of(plan.output, linear, o);
  const std::uint64_t length = lengths[mapping::reverse_subsequences_length_offset(plan, o)];
  output[mapping::offset_of(plan.output, o)] =
      input[mapping::reverse_subsequences_source(plan, o, length)];
  return mapping::Status::Ok;
}

}  // namespace dmlref_cuda
