// dmlref benchmarks: what every bench_<operator>.cpp shares. Aligned, pre-touched buffers; the
// byte sizes to sweep; the memcpy baseline of the same byte count; bytes-per-second reporting and
// the memcpy_ratio counter.
//
// Absolute speeds depend on the machine and on what else runs on it, so every benchmark also
// reports memcpy_ratio: its bytes per second divided by memcpy's for the same byte count, measured
// in the same process (bench/README.md).
#pragma once

#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace dmlref::bench {

// Page alignment: a buffer's first byte then sits where memcpy's fastest path expects it, and two
// buffers never share a cache line, whatever the size.
inline constexpr std::size_t kBufferAlignment = 4096;

// Bytes past a page every buffer starts at: DMLREF_BENCH_OFFSET in the environment (a multiple
// of 8, below 4096), 0 by default. 16 places buffers as numpy and glibc's malloc place large
// arrays, 16 bytes past a line, where streaming copies cannot start on a line.
inline std::size_t buffer_offset() {
  static const std::size_t offset = [] {
    const char* v = std::getenv("DMLREF_BENCH_OFFSET");
    const unsigned long n = v == nullptr ? 0 : std::strtoul(v, nullptr, 10);
    return n % 8 == 0 && n < kBufferAlignment ? static_cast<std::size_t>(n) : std::size_t{0};
  }();
  return offset;
}

// A heap buffer buffer_offset() bytes past a page boundary, written once on construction, so the
// page faults of first touch land in setup rather than in the first timed iteration.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(std::size_t bytes, unsigned char fill = 0x5A)
      : bytes_(bytes),
        raw_(static_cast<std::byte*>(::operator new(bytes + buffer_offset() + 1,
                                                    std::align_val_t{kBufferAlignment}))),
        data_(raw_ + buffer_offset()) {
    std::memset(data_, fill, bytes_);
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { ::operator delete(raw_, std::align_val_t{kBufferAlignment}); }

  std::byte* data() noexcept { return data_; }
  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }
  // The buffer as elements of T (element-aligned: the offset is a multiple of 8).
  template <class T>
  T* as() noexcept {
    return reinterpret_cast<T*>(data_);
  }

 private:
  std::size_t bytes_;
  std::byte* raw_;
  std::byte* data_;
};

// The CPU time of the calling thread: what Google Benchmark times a benchmark by (its default,
// without UseRealTime or MeasureProcessCPUTime), so memcpy's rate and a benchmark's compare alike.
inline double thread_cpu_seconds() noexcept {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The median of v (0 when v is empty).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// memcpy's speed by byte count in this process: the median rate of its timed loops of comparable
// length (the runs Google Benchmark makes to pick an iteration count are much shorter than the
// measured ones and are dropped; every repetition counts), so one loop slowed by a neighbour's
// burst of load does not move the baseline.
struct MemcpyRate {
  std::vector<double> rates;  // bytes per second of each loop kept
  double seconds = 0;         // the loops' total time
  double longest = 0;         // the longest loop recorded, in seconds

  void record(double loop_bytes, double loop_seconds) {
    if (loop_seconds <= 0) return;
    if (loop_seconds > 2 * longest) *this = {};  // the loops before were warm-up
    if (2 * loop_seconds < longest) return;      // this one is
    rates.push_back(loop_bytes / loop_seconds);
    seconds += loop_seconds;
    if (loop_seconds > longest) longest = loop_seconds;
  }
  double median() const { return bench::median(rates); }
};
inline std::map<std::uint64_t, MemcpyRate>& memcpy_rates() {
  static std::map<std::uint64_t, MemcpyRate> rates;
  return rates;
}

// memcpy between two aligned buffers of `bytes`, `iterations` times, timed; the time is recorded.
inline void timed_memcpy(std::uint64_t bytes, std::uint64_t iterations);

// memcpy's bytes per second for `bytes`: from the memcpy benchmark of this process when it ran
// (it is registered first), else measured here, once, for at least 0.2 s of CPU (a filtered run).
inline double memcpy_bytes_per_second(std::uint64_t bytes) {
  MemcpyRate& r = memcpy_rates()[bytes];
  for (std::uint64_t n = 1; r.seconds < 0.2; n *= 2) timed_memcpy(bytes, n);
  return r.median();
}

// Bytes processed per iteration times iterations: what Google Benchmark turns into bytes/second.
// Count each byte the operation writes once (reads of a broadcast or padded source not included),
// so the figure compares directly with memcpy of the same count. Also sets the memcpy_ratio
// counter: bytes/second over memcpy's bytes/second for bytes_per_iteration (1.0: as fast as
// memcpy; higher is faster). Google Benchmark divides a kIsRate counter by the benchmark's time,
// so the value given is bytes processed over memcpy's rate.
inline void set_bytes_processed(benchmark::State& state, std::uint64_t bytes_per_iteration) {
  const auto iterations = static_cast<std::uint64_t>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(iterations * bytes_per_iteration));
  if (iterations == 0 || bytes_per_iteration == 0) return;
  const double memcpy_rate = memcpy_bytes_per_second(bytes_per_iteration);
  state.counters["memcpy_ratio"] = benchmark::Counter(
      static_cast<double>(iterations) * static_cast<double>(bytes_per_iteration) / memcpy_rate,
      benchmark::Counter::kIsRate);
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

inline void timed_memcpy(std::uint64_t bytes, std::uint64_t iterations) {
  AlignedBuffer src(static_cast<std::size_t>(bytes), 0x11);
  AlignedBuffer dst(static_cast<std::size_t>(bytes), 0x22);
  const double start = thread_cpu_seconds();
  for (std::uint64_t i = 0; i < iterations; ++i) {
    std::memcpy(dst.data(), src.data(), static_cast<std::size_t>(bytes));
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  memcpy_rates()[bytes].record(static_cast<double>(bytes) * static_cast<double>(iterations),
                               thread_cpu_seconds() - start);
}

// The baseline every operator is measured against: one memcpy of state.range(0) bytes between two
// aligned buffers. Its time is recorded too (memcpy_rates), for the other benchmarks' memcpy_ratio.
inline void memcpy_baseline(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  AlignedBuffer src(bytes, 0x11);
  AlignedBuffer dst(bytes, 0x22);
  const double start = thread_cpu_seconds();
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  memcpy_rates()[bytes].record(static_cast<double>(bytes) * static_cast<double>(state.iterations()),
                               thread_cpu_seconds() - start);
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
