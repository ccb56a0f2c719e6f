// dmlref benchmarks: what every bench_<operator>.cpp shares. Aligned, pre-touched buffers; the
// byte sizes to sweep; the memcpy baseline of the same byte count; bytes-per-second reporting.
//
// The machines these run on are shared and noisy, so absolute numbers mean little: each benchmark
// binary runs the memcpy baseline next to its own cases, and results are read as ratios to it
// (bench/README.md has the command and the script that computes them).
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace dmlref::bench {

// Page alignment: a buffer's first byte then sits where memcpy's fastest path expects it, and two
// buffers never share a cache line, whatever the size.
inline constexpr std::size_t kBufferAlignment = 4096;

// A heap buffer aligned to kBufferAlignment and written once on construction, so the page faults
// of first touch land in setup rather than in the first timed iteration.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(std::size_t bytes, unsigned char fill = 0x5A)
      : bytes_(bytes),
        data_(static_cast<std::byte*>(
            ::operator new(bytes == 0 ? 1 : bytes, std::align_val_t{kBufferAlignment}))) {
    std::memset(data_, fill, bytes_);
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { ::operator delete(data_, std::align_val_t{kBufferAlignment}); }

  std::byte* data() noexcept { return data_; }
  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }
  // The buffer as elements of T (element-aligned, since kBufferAlignment is a multiple of any
  // element size).
  template <class T>
  T* as() noexcept {
    return reinterpret_cast<T*>(data_);
  }

 private:
  std::size_t bytes_;
  std::byte* data_;
};

// Bytes processed per iteration times iterations: what Google Benchmark turns into bytes/second.
// Count each byte the operation writes once (reads of a broadcast or padded source not included),
// so the figure compares directly with memcpy of the same count.
inline void set_bytes_processed(benchmark::State& state, std::uint64_t bytes_per_iteration) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(bytes_per_iteration));
}

// Every size from 4 KiB to 256 MiB in powers of 4 (L1-resident to far past any cache).
inline std::vector<std::int64_t> all_byte_sizes() {
  std::vector<std::int64_t> sizes;
  for (std::int64_t bytes = std::int64_t{4} << 10; bytes <= (std::int64_t{256} << 20); bytes *= 4) {
    sizes.push_back(bytes);
  }
  return sizes;
}

// The sizes a run uses: by default every other power of 4 (4 KiB, 64 KiB, 1 MiB, 16 MiB,
// 256 MiB), which keeps a whole binary to a minute or two on two cores; all nine with
// DMLREF_BENCH_SIZES=all in the environment.
inline std::vector<std::int64_t> byte_sizes() {
  const std::vector<std::int64_t> all = all_byte_sizes();
  const char* env = std::getenv("DMLREF_BENCH_SIZES");
  if (env != nullptr && std::string_view(env) == "all") return all;
  std::vector<std::int64_t> some;
  for (std::size_t i = 0; i < all.size(); i += 2) some.push_back(all[i]);
  return some;
}

// The baseline every operator is measured against: one memcpy of state.range(0) bytes between two
// aligned buffers.
inline void memcpy_baseline(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  AlignedBuffer src(bytes, 0x11);
  AlignedBuffer dst(bytes, 0x22);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  set_bytes_processed(state, bytes);
}

// Registers memcpy_baseline as "memcpy/<bytes>" for each of byte_sizes(). Call it from the
// file's static registration, before its own cases, so the baseline runs first in the same process.
inline void register_memcpy_baseline() {
  benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark("memcpy", memcpy_baseline);
  for (std::int64_t bytes : byte_sizes()) b->Arg(bytes);
}

// Registers `run` as "<name>/<bytes>" for each of byte_sizes() that `wanted(bytes)` accepts: the
// registration every operator benchmark case shares.
template <class Run, class Wanted>
void register_sized(const std::string& name, Run run, Wanted wanted) {
  benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(name.c_str(), run);
  for (std::int64_t bytes : byte_sizes()) {
    if (wanted(bytes)) b->Arg(bytes);
  }
}

// The sizes of the slow cases. The plain reference loops run at 64 KiB and 1 MiB only; strided
// cases stop at 16 MiB, since the contiguous ones already show the far-past-cache behaviour.
inline bool reference_size(std::int64_t bytes) {
  return bytes == (64 << 10) || bytes == (1 << 20);
}
inline bool at_most_16_mib(std::int64_t bytes) { return bytes <= (16 << 20); }

}  // namespace dmlref::bench
