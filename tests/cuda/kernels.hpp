// The naive GPU kernels of every operator (kernels.cu), callable from host code compiled by any
// C++ compiler: one thread per output element, each running the operator's per-element body
// (element_ops.hpp) on the operator's plan. Pointers are device pointers, a plan's piece arrays
// included; element and index types are given by width, since the kernels only move bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include <dmlref/mapping.hpp>

namespace dmlref_cuda {

namespace mapping = dmlref::mapping;

// An index or length element type of SCATTER, GATHER_ND1 or REVERSE_SUBSEQUENCES.
struct IndexType {
  std::size_t width = 0;  // 4 or 8
  bool is_signed = false;
};

// Each launches its kernel and waits for it. `status` (a device int, zero before) receives a
// nonzero mapping::Status when an element did not map. An unsupported width or index type is
// cudaErrorInvalidValue.
cudaError_t run_join(const mapping::JoinPlan& plan, const void* const* inputs, void* output,
                     std::size_t width, int* status);
cudaError_t run_split(const mapping::SplitPlan& plan, std::uint32_t piece,
                      const mapping::TensorLayout& piece_layout, const void* input, void* output,
                      std::size_t width, int* status);
cudaError_t run_scatter(const mapping::ScatterPlan& plan, const void* input, const void* indices,
                        IndexType index_type, const void* updates, void* output,
                        std::size_t width, int* status);
cudaError_t run_gather_nd1(const mapping::GatherNd1Plan& plan, const void* input,
                           const void* indices, IndexType index_type, void* output,
                           std::size_t width, int* status);
cudaError_t run_reverse_subsequences(const mapping::ReverseSubsequencesPlan& plan,
                                     const void* input, const void* lengths,
                                     IndexType length_type, void* output, std::size_t width,
                                     int* status);

}  // namespace dmlref_cuda
