// The naive GPU kernels (kernels.hpp): a grid-stride loop over the output elements around each
// operator's per-element body. Built from the device-usable mapping and the plan alone: this file
// includes no other dmlref header.
#include "kernels.hpp"

#include <cstdint>

#include "element_ops.hpp"

namespace dmlref_cuda {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::uint64_t kMaxBlocks = 4096;

// Calls body(i) for every i < count across the grid; a failed element leaves its status.
template <class Body>
__device__ void for_each_output(std::uint64_t count, int* status, const Body& body) {
  const std::uint64_t step = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += step) {
    const mapping::Status s = body(i);
    if (s != mapping::Status::Ok) *status = static_cast<int>(s);
  }
}

template <class T>
__global__ void join_kernel(mapping::JoinPlan plan, const T* const* inputs, T* output,
                            std::uint64_t count, int* status) {
  for_each_output(count, status,
                  [&](std::uint64_t i) { return join_element(plan, inputs, output, i); });
}

template <class T>
__global__ void split_kernel(mapping::SplitPlan plan, std::uint32_t piece, const T* input,
                             T* output, std::uint64_t count, int* status) {
  for_each_output(count, status,
                  [&](std::uint64_t i) { return split_element(plan, piece, input, output, i); });
}

template <class T, class I>
__global__ void scatter_kernel(mapping::ScatterPlan plan, const T* input, const I* indices,
                               const T* updates, T* output, std::uint64_t count, int* status) {
  for_each_output(count, status, [&](std::uint64_t i) {
    return scatter_element(plan, input, indices, updates, output, i);
  });
}

template <class T, class I>
__global__ void gather_nd1_kernel(mapping::GatherNd1Plan plan, const T* input, const I* indices,
                                  T* output, std::uint64_t count, int* status) {
  for_each_output(count, status, [&](std::uint64_t i) {
    return gather_nd1_element(plan, input, indices, output, i);
  });
}

template <class T, class L>
__global__ void reverse_subsequences_kernel(mapping::ReverseSubsequencesPlan plan, const T* input,
                                            const L* lengths, T* output, std::uint64_t count,
                                            int* status) {
  for_each_output(count, status, [&](std::uint64_t i) {
    return reverse_subsequences_element(plan, input, lengths, output, i);
  });
}

unsigned blocks_for(std::uint64_t count) {
  const std::uint64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? (blocks == 0 ? 1 : blocks) : kMaxBlocks);
}

// Calls f(T{}) with T the unsigned integer of `width` bytes: the kernels move bits only.
template <class F>
cudaError_t with_width(std::size_t width, F&& f) {
  switch (width) {
    case 1: return f(std::uint8_t{});
    case 2: return f(std::uint16_t{});
    case 4: return f(std::uint32_t{});
    case 8: return f(std::uint64_t{});
    default: return cudaErrorInvalidValue;
  }
}

template <class F>
cudaError_t with_index(IndexType type, F&& f) {
  if (type.width == 4) return type.is_signed ? f(std::int32_t{}) : f(std::uint32_t{});
  if (type.width == 8) return type.is_signed ? f(std::int64_t{}) : f(std::uint64_t{});
  return cudaErrorInvalidValue;
}

// R4: lengths are UINT32 or UINT64.
template <class F>
cudaError_t with_length(IndexType type, F&& f) {
  if (type.is_signed) return cudaErrorInvalidValue;
  if (type.width == 4) return f(std::uint32_t{});
  if (type.width == 8) return f(std::uint64_t{});
  return cudaErrorInvalidValue;
}

// Launches `kernel(args..., count, status)` over `count` output elements and waits for it.
template <class... Params, class... Args>
cudaError_t launch(void (*kernel)(Params...), std::uint64_t count, int* status, Args... args) {
  kernel<<<blocks_for(count), kThreads>>>(args..., count, status);
  const cudaError_t launched = cudaGetLastError();
  return launched != cudaSuccess ? launched : cudaDeviceSynchronize();
}

}  // namespace

cudaError_t run_join(const mapping::JoinPlan& plan, const void* const* inputs, void* output,
                     std::size_t width, int* status) {
  return with_width(width, [&](auto t) {
    using T = decltype(t);
    return launch(join_kernel<T>, mapping::element_count(plan.output), status, plan,
                  reinterpret_cast<const T* const*>(inputs), static_cast<T*>(output));
  });
}

cudaError_t run_split(const mapping::SplitPlan& plan, std::uint32_t piece,
                      const mapping::TensorLayout& piece_layout, const void* input, void* output,
                      std::size_t width, int* status) {
  return with_width(width, [&](auto t) {
    using T = decltype(t);
    return launch(split_kernel<T>, mapping::element_count(piece_layout), status, plan, piece,
                  static_cast<const T*>(input), static_cast<T*>(output));
  });
}

cudaError_t run_scatter(const mapping::ScatterPlan& plan, const void* input, const void* indices,
                        IndexType index_type, const void* updates, void* output,
                        std::size_t width, int* status) {
  return with_width(width, [&](auto t) {
    return with_index(index_type, [&](auto index) {
      using T = decltype(t);
      using I = decltype(index);
      return launch(scatter_kernel<T, I>, mapping::element_count(plan.output), status, plan,
                    static_cast<const T*>(input), static_cast<const I*>(indices),
                    static_cast<const T*>(updates), static_cast<T*>(output));
    });
  });
}

cudaError_t run_gather_nd1(const mapping::GatherNd1Plan& plan, const void* input,
                           const void* indices, IndexType index_type, void* output,
                           std::size_t width, int* status) {
  return with_width(width, [&](auto t) {
    return with_index(index_type, [&](auto index) {
      using T = decltype(t);
      using I = decltype(index);
      return launch(gather_nd1_kernel<T, I>, mapping::element_count(plan.output), status, plan,
                    static_cast<const T*>(input), static_cast<const I*>(indices),
                    static_cast<T*>(output));
    });
  });
}

cudaError_t run_reverse_subsequences(const mapping::ReverseSubsequencesPlan& plan,
                                     const void* input, const void* lengths,
                                     IndexType length_type, void* output, std::size_t width,
                                     int* status) {
  return with_width(width, [&](auto t) {
    return with_length(length_type, [&](auto length) {
      using T = decltype(t);
      using L = decltype(length);
      return launch(reverse_subsequences_kernel<T, L>, mapping::element_count(plan.output),
                    status, plan, static_cast<const T*>(input), static_cast<const L*>(lengths),
                    static_cast<T*>(output));
    });
  });
}

}  // namespace dmlref_cuda
