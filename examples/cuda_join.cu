// A GPU JOIN written on dmlref's device-usable mapping (dmlref/mapping.hpp): each thread asks
// mapping::join_source which input element feeds its output element, the very function dmlref's
// CPU reference loop calls, so the kernel cannot drift from the golden model. The device's result
// is then checked against the CPU operator with dmlref::compare. Exits 1 on a mismatch or a CUDA
// error; without a CUDA device it says so and exits 0.
//
// Built with the CUDA tests (-DDMLREF_BUILD_CUDA_TESTS=ON, the default where nvcc is found).
#include <dmlref/compare.hpp>
#include <dmlref/fill.hpp>
#include <dmlref/mapping.hpp>        // the device-usable layer: all the kernel needs
#include <dmlref/mapping_plans.hpp>  // host: the plan from validated views
#include <dmlref/ops/join.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <span>
#include <vector>

namespace mapping = dmlref::mapping;

namespace {

// One thread per output element (grid-stride), moving 4-byte elements as bits.
// README: cuda_join
__global__ void join_kernel(mapping::JoinPlan plan, const float* const* inputs, float* output) {
  const std::uint64_t count = mapping::element_count(plan.output);
  const std::uint64_t step = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += step) {
    std::uint32_t o[mapping::kMaxRank] = {};
    mapping::coordinate_of(plan.output, i, o);
    const mapping::PieceOffset from = mapping::join_source(plan, o);
    if (from.ok()) output[mapping::offset_of(plan.output, o)] = inputs[from.piece][from.offset];
  }
}
// README: end

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cuda_join: %s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// A device copy of a host vector, freed at scope exit.
template <class T>
struct DeviceCopy {
  T* data = nullptr;
  explicit DeviceCopy(const std::vector<T>& host) {
    check(cudaMalloc(&data, host.size() * sizeof(T)), "cudaMalloc");
    check(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
          "cudaMemcpy to the device");
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() { cudaFree(data); }
};

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t found = cudaGetDeviceCount(&devices);
  if (found != cudaSuccess || devices == 0) {
    std::printf("cuda_join: no CUDA device (%s); the GPU JOIN was not run\n",
                found != cudaSuccess ? cudaGetErrorString(found) : "none found");
    return 0;
  }

  // Three inputs {4,a,32} joined along Axis 1 into {4,12,32}; the second input is transposed
  // (its first dimension fastest), so the kernel's reads are strided.
  std::vector<float> a(4 * 3 * 32), b(4 * 5 * 32), c(4 * 4 * 32);
  const dmlref::TensorView<float> va(a.data(), {4, 3, 32});
  const dmlref::TensorView<float> vb(b.data(), dmlref::Layout::strided({4, 5, 32}, {1, 128, 4}));
  const dmlref::TensorView<float> vc(c.data(), {4, 4, 32});
  // One seed, disjoint ranges: no value repeats across the inputs, so a wrong source shows.
  dmlref::fill_distinct(va, 16, 0);
  dmlref::fill_distinct(vb, 16, a.size());
  dmlref::fill_distinct(vc, 16, a.size() + b.size());
  const std::vector<dmlref::TensorView<const float>> inputs{va, vb, vc};
  const std::uint32_t axis = 1;

  // The golden output (dmlref::join validates the views first: J1-J6, T1-T13).
  std::vector<float> golden(4 * 12 * 32);
  const dmlref::TensorView<float> expected(golden.data(), {4, 12, 32});
  dmlref::join<float>(inputs, expected, axis);

  // The plan: where each input ends along Axis and its layout, copied to the device.
  const mapping::PieceTable table =
      mapping::piece_table(std::span<const dmlref::TensorView<const float>>(inputs), axis);
  const DeviceCopy<std::uint32_t> ends(table.ends);
  const DeviceCopy<mapping::TensorLayout> layouts(table.layouts);
  mapping::JoinPlan plan = mapping::join_plan(table, mapping::layout_of(expected));
  plan.pieces.ends = ends.data;
  plan.inputs = layouts.data;

  const DeviceCopy<float> da(a), db(b), dc(c);
  const DeviceCopy<const float*> bases(std::vector<const float*>{da.data, db.data, dc.data});
  const DeviceCopy<float> output(std::vector<float>(golden.size(), 0.0f));
  join_kernel<<<24, 64>>>(plan, bases.data, output.data);
  check(cudaGetLastError(), "the kernel launch");
  check(cudaDeviceSynchronize(), "the kernel");

  std::vector<float> result(golden.size());
  check(cudaMemcpy(result.data(), output.data, result.size() * sizeof(float),
                   cudaMemcpyDeviceToHost),
        "cudaMemcpy from the device");
  const dmlref::CompareResult r = dmlref::compare(
      dmlref::TensorView<const float>(expected),
      dmlref::TensorView<const float>(result.data(), {4, 12, 32}));  // bit-exact
  std::cout << r;
  return r.passed() ? 0 : 1;
}
