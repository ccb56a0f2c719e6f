// The naive GPU kernels (kernels.cu, built from the device-usable mapping and the plans alone) on
// seeded random cases of every operator (mapping_cases.hpp: every element width, the index and
// length types, ranks 1-8, packed / padded / transposed / broadcast / reversed operands), each
// output compared bit for bit, padding included, with the CPU operator's. Without a CUDA device
// the program prints why and exits with kSkipExitCode, which CTest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include "mapping_cases.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda/kernels.hpp"

namespace {

namespace mapping = dmlref::mapping;
namespace cases = dmlref::test::mapping_cases;
using dmlref_cuda::IndexType;

// The kernels move bits by element width (1, 2, 4, 8 bytes), so the GPU runs one type per width,
// a float type where there is one, plus a 64-bit integer; test_mapping.cpp runs the same bodies
// over all eleven types on the CPU.
#define DMLREF_CUDA_TYPES double, float, dmlref::float16, std::int64_t, std::int8_t

constexpr int kSkipExitCode = 77;  // SKIP_RETURN_CODE in tests/cuda/CMakeLists.txt
constexpr int kCasesPerType = 12;

void require_success(cudaError_t e) { REQUIRE_MESSAGE(e == cudaSuccess, cudaGetErrorString(e)); }

// Device memory holding a copy of host elements; freed when it goes.
class DeviceBuffer {
 public:
  template <class T>
  explicit DeviceBuffer(const std::vector<T>& host) : bytes_(host.size() * sizeof(T)) {
    require_success(cudaMalloc(&data_, bytes_ == 0 ? 1 : bytes_));
    require_success(cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(other.bytes_) {}
  ~DeviceBuffer() { cudaFree(data_); }

  template <class T>
  T* at(std::int64_t element = 0) const {
    return static_cast<T*>(data_) + element;
  }
  template <class T>
  void read(std::vector<T>& host) const {
    REQUIRE(host.size() * sizeof(T) == bytes_);
    require_success(cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost));
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

template <class T>
const T* device_at0(const DeviceBuffer& buffer, const cases::Operand<T>& op) {
  return buffer.at<const T>(op.origin);
}
template <class T>
T* device_at0(DeviceBuffer& buffer, cases::Operand<T>& op) {
  return buffer.at<T>(op.origin);
}

template <class I>
IndexType index_type() {
  return {sizeof(I), std::is_signed_v<I>};
}

// Runs `launch(status)` and requires that it succeeded and every element mapped.
template <class F>
void launch_and_check(F&& launch) {
  DeviceBuffer status(std::vector<int>{0});
  require_success(launch(status.at<int>()));
  std::vector<int> s{0};
  status.read(s);
  CHECK_MESSAGE(s[0] == 0, "an element did not map: mapping::Status ", s[0]);
}

TEST_CASE_TEMPLATE("CUDA: JOIN's naive kernel agrees with the CPU operator", T,
                   DMLREF_CUDA_TYPES) {
  std::mt19937 rng(1611);
  for (int n = 0; n < kCasesPerType; ++n) {
    auto c = cases::join_case<T>(rng);
    const mapping::PieceTable table = c.pieces();
    const DeviceBuffer ends(table.ends);
    const DeviceBuffer layouts(table.layouts);
    mapping::JoinPlan plan = mapping::join_plan(table, mapping::layout_of(c.actual[0].view()));
    plan.pieces.ends = ends.at<const std::uint32_t>();
    plan.inputs = layouts.at<const mapping::TensorLayout>();
    std::vector<DeviceBuffer> buffers;
    std::vector<const void*> bases;
    for (const auto& input : c.inputs) {
      buffers.emplace_back(input.storage);
      bases.push_back(device_at0(buffers.back(), input));
    }
    const DeviceBuffer device_bases(bases);
    DeviceBuffer output(c.actual[0].storage);
    launch_and_check([&](int* status) {
      return dmlref_cuda::run_join(plan, device_bases.at<const void* const>(),
                                   device_at0(output, c.actual[0]), sizeof(T), status);
    });
    output.read(c.actual[0].storage);
    cases::check_outputs(c.expected, c.actual);
  }
}

TEST_CASE_TEMPLATE("CUDA: SPLIT's naive kernel agrees with the CPU operator", T,
                   DMLREF_CUDA_TYPES) {
  std::mt19937 rng(1612);
  for (int n = 0; n < kCasesPerType; ++n) {
    auto c = cases::split_case<T>(rng);
    const mapping::PieceTable table = c.pieces();
    const DeviceBuffer ends(table.ends);
    const DeviceBuffer layouts(table.layouts);
    mapping::SplitPlan plan = mapping::split_plan(mapping::layout_of(c.input.view()), table);
    plan.pieces.ends = ends.at<const std::uint32_t>();
    plan.outputs = layouts.at<const mapping::TensorLayout>();
    const DeviceBuffer input(c.input.storage);
    for (std::uint32_t p = 0; p < plan.pieces.count; ++p) {
      DeviceBuffer output(c.actual[p].storage);
      launch_and_check([&](int* status) {
        return dmlref_cuda::run_split(plan, p, table.layouts[p], device_at0(input, c.input),
                                      device_at0(output, c.actual[p]), sizeof(T), status);
      });
      output.read(c.actual[p].storage);
    }
    cases::check_outputs(c.expected, c.actual);
  }
}

TEST_CASE_TEMPLATE("CUDA: SCATTER's naive kernel agrees with the CPU operator", T,
                   DMLREF_CUDA_TYPES) {
  std::mt19937 rng(1613);
  dmlref::test::for_each_index_type([&]<class I>(std::type_identity<I>) {
    for (int n = 0; n < kCasesPerType; ++n) {
      auto c = cases::scatter_case<T, I>(rng);
      const mapping::ScatterPlan plan = c.plan();
      const DeviceBuffer input(c.input.storage);
      const DeviceBuffer indices(c.indices.storage);
      const DeviceBuffer updates(c.updates.storage);
      DeviceBuffer output(c.actual[0].storage);
      launch_and_check([&](int* status) {
        return dmlref_cuda::run_scatter(plan, device_at0(input, c.input),
                                        device_at0(indices, c.indices), index_type<I>(),
                                        device_at0(updates, c.updates),
                                        device_at0(output, c.actual[0]), sizeof(T), status);
      });
      output.read(c.actual[0].storage);
      cases::check_outputs(c.expected, c.actual);
    }
  });
}

TEST_CASE_TEMPLATE("CUDA: GATHER_ND1's naive kernel agrees with the CPU operator", T,
                   DMLREF_CUDA_TYPES) {
  std::mt19937 rng(1614);
  dmlref::test::for_each_index_type([&]<class I>(std::type_identity<I>) {
    for (int n = 0; n < kCasesPerType; ++n) {
      auto c = cases::gather_nd1_case<T, I>(rng);
      const mapping::GatherNd1Plan plan = c.plan();
      const DeviceBuffer input(c.input.storage);
      const DeviceBuffer indices(c.indices.storage);
      DeviceBuffer output(c.actual[0].storage);
      launch_and_check([&](int* status) {
        return dmlref_cuda::run_gather_nd1(plan, device_at0(input, c.input),
                                           device_at0(indices, c.indices), index_type<I>(),
                                           device_at0(output, c.actual[0]), sizeof(T), status);
      });
      output.read(c.actual[0].storage);
      cases::check_outputs(c.expected, c.actual);
    }
  });
}

TEST_CASE_TEMPLATE("CUDA: REVERSE_SUBSEQUENCES's naive kernel agrees with the CPU operator", T,
                   DMLREF_CUDA_TYPES) {
  std::mt19937 rng(1615);
  auto run = [&]<class L>(std::type_identity<L>) {
    for (int n = 0; n < kCasesPerType; ++n) {
      auto c = cases::reverse_subsequences_case<T, L>(rng);
      const mapping::ReverseSubsequencesPlan plan = c.plan();
      const DeviceBuffer input(c.input.storage);
      const DeviceBuffer lengths(c.lengths.storage);
      DeviceBuffer output(c.actual[0].storage);
      launch_and_check([&](int* status) {
        return dmlref_cuda::run_reverse_subsequences(
            plan, device_at0(input, c.input), device_at0(lengths, c.lengths), index_type<L>(),
            device_at0(output, c.actual[0]), sizeof(T), status);
      });
      output.read(c.actual[0].storage);
      cases::check_outputs(c.expected, c.actual);
    }
  };
  run(std::type_identity<std::uint32_t>{});
  run(std::type_identity<std::uint64_t>{});
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("no CUDA device (%s): the GPU kernels are not run\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return kSkipExitCode;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
