// strided_copy against memcpy of the same byte count, in the same process: a packed copy (merges
// to one memcpy), a 2-D transpose, a broadcast row, a broadcast column, padded source rows; for
// float32, float16 and int64. Plus the run-length sweep that chose kMemcpyMinRunBytes: short
// contiguous runs moved by memcpy versus by the inlined copy_bytes_short. And the streaming
// stores' two orders, which chose stream_interleaves_pages: "stream/lines" line by line
// (copy_bytes_streaming_lines), "stream/pages" two 4 KiB pages at a time
// (copy_bytes_streaming_pages), on 1 and 2 threads (each thread its share).
//
// Command and results: bench/README.md.
#include "bench_baseline.hpp"

#include <dmlref/parallel.hpp>
#include <dmlref/strided_copy.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace {

using dmlref::Layout;
using dmlref::TensorView;
using dmlref::bench::AlignedBuffer;

enum class Scenario { Contiguous, Transposed, BroadcastRow, BroadcastColumn, PaddedRows };

constexpr std::array kScenarios{Scenario::Contiguous, Scenario::Transposed,
                                Scenario::BroadcastRow, Scenario::BroadcastColumn,
                                Scenario::PaddedRows};

const char* scenario_name(Scenario s) {
  switch (s) {
    case Scenario::Contiguous: return "contiguous";
    case Scenario::Transposed: return "transposed";
    case Scenario::BroadcastRow: return "broadcast_row";
    case Scenario::BroadcastColumn: return "broadcast_column";
    case Scenario::PaddedRows: return "padded_rows";
  }
  return "?";
}

// Rows of this many elements for the row-shaped scenarios: a typical innermost extent, and long
// enough (128 bytes and up) that contiguous rows take the memcpy path for every type here.
constexpr std::uint32_t kRowElements = 64;
// Padded source rows: each row of 64 elements starts 80 elements after the previous one.
constexpr std::int64_t kPaddedPitch = 80;

struct Case {
  Layout src;
  Layout dst;
  std::uint64_t src_elements;  // how many elements the source buffer must hold
};

// A destination of exactly `bytes` bytes (every size is a power of two, so the shapes divide).
template <class T>
Case make_case(Scenario s, std::uint64_t bytes) {
  const std::uint64_t n = bytes / sizeof(T);
  const auto rows = static_cast<std::uint32_t>(n / kRowElements);
  switch (s) {
    case Scenario::Contiguous: {
      const Layout l = Layout::packed({rows, kRowElements});
      return {l, l, n};
    }
    case Scenario::Transposed: {
      // As square as a power of two allows: the source is the destination stored column-major.
      std::uint32_t r = 1;
      while (std::uint64_t{2} * r * 2 * r <= n) r *= 2;  // largest r with r * r <= n
      const auto c = static_cast<std::uint32_t>(n / r);
      return {Layout::strided({r, c}, {1, r}), Layout::packed({r, c}), n};
    }
    case Scenario::BroadcastRow:
      return {Layout::strided({rows, kRowElements}, {0, 1}), Layout::packed({rows, kRowElements}),
              kRowElements};
    case Scenario::BroadcastColumn:
      return {Layout::strided({rows, kRowElements}, {1, 0}), Layout::packed({rows, kRowElements}),
              rows};
    case Scenario::PaddedRows:
      return {Layout::strided({rows, kRowElements}, {kPaddedPitch, 1}),
              Layout::packed({rows, kRowElements}), std::uint64_t{rows} * kPaddedPitch};
  }
  return {};
}

template <class T>
void bm_strided_copy(benchmark::State& state, Scenario scenario) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const Case c = make_case<T>(scenario, bytes);
  AlignedBuffer src(c.src_elements * sizeof(T), 0x11);
  AlignedBuffer dst(bytes, 0x22);
  const TensorView<const T> in(src.as<T>(), c.src);
  const TensorView<T> out(dst.as<T>(), c.dst);
  for (auto _ : state) {
    dmlref::strided_copy(in, out);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

// The sweep: rows of `state.range(0)` bytes from a source whose rows are one element longer
// (so runs start at every alignment, as a JOIN's rows do) into a packed destination of
// kSweepBytes, all in L2, so the per-run cost dominates. The destination starts 1 KiB plus 5
// elements into its buffer so that source and destination addresses do not coincide modulo 4 KiB
// (4K aliasing would stall both strategies alike and blur the comparison).
constexpr std::uint64_t kSweepBytes = std::uint64_t{256} << 10;

template <class T>
void bm_run_length(benchmark::State& state, std::size_t memcpy_min_run_bytes) {
  const auto run_bytes = static_cast<std::uint64_t>(state.range(0));
  const auto run = static_cast<std::uint32_t>(run_bytes / sizeof(T));
  const auto rows = static_cast<std::uint32_t>(kSweepBytes / run_bytes);
  const std::int64_t pitch = std::int64_t{run} + 1;
  AlignedBuffer src(rows * static_cast<std::uint64_t>(pitch) * sizeof(T), 0x11);
  AlignedBuffer dst(std::uint64_t{rows} * run_bytes + 2048, 0x22);
  T* const out = dst.as<T>() + (1024 / sizeof(T) + 5);
  const Layout src_layout = Layout::strided({rows, run}, {pitch, 1});
  const Layout dst_layout = Layout::packed({rows, run});
  const std::array<std::array<std::int64_t, dmlref::kMaxRank>, 2> strides{src_layout.strides,
                                                                         dst_layout.strides};
  for (auto _ : state) {
    // Planned inside the loop, as strided_copy does on every call.
    const auto plan = dmlref::detail::make_copy_plan(dst_layout.size_span(), strides);
    dmlref::detail::copy_with_plan(plan, src.as<T>(), out, false, memcpy_min_run_bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, std::uint64_t{rows} * run_bytes);
}

template <class T>
void register_type(const char* type_name) {
  for (Scenario s : kScenarios) {
    const std::string name = std::string(scenario_name(s)) + "/" + type_name;
    auto* b = benchmark::RegisterBenchmark(
        name.c_str(), [s](benchmark::State& state) { bm_strided_copy<T>(state, s); });
    for (std::int64_t bytes : dmlref::bench::byte_sizes()) b->Arg(bytes);
  }
}

// "run/<type>/memcpy/<bytes>" moves every run with memcpy, "run/<type>/short/<bytes>" with
// copy_bytes_short; the crossover is kMemcpyMinRunBytes. Runs of one element are left out: the
// plan turns a {rows, 1} copy into a strided one-dimensional copy, not a short contiguous run.
template <class T>
void register_sweep(const char* type_name) {
  constexpr std::array<std::int64_t, 11> kRunBytes{8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512};
  const std::string prefix = std::string("run/") + type_name;
  auto* with_memcpy = benchmark::RegisterBenchmark(
      (prefix + "/memcpy").c_str(), [](benchmark::State& state) { bm_run_length<T>(state, 0); });
  auto* with_short = benchmark::RegisterBenchmark(
      (prefix + "/short").c_str(), [](benchmark::State& state) {
        bm_run_length<T>(state, std::numeric_limits<std::size_t>::max());
      });
  for (std::int64_t bytes : kRunBytes) {
    if (bytes < 2 * static_cast<std::int64_t>(sizeof(T))) continue;
    with_memcpy->Arg(bytes);
    with_short->Arg(bytes);
  }
}

// `bytes` copied by copy_bytes_streaming_pages or _lines on range(1) threads of the engine's pool,
// each a share of whole pages; wall-clock time.
void bm_stream(benchmark::State& state, bool pages) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const auto threads = static_cast<std::uint32_t>(state.range(1));
  AlignedBuffer src(bytes), dst(bytes);
  dmlref::set_num_threads(threads);
  const std::uint64_t page_count = bytes / dmlref::detail::kStreamPage;
  const auto copy = [&](std::uint64_t begin, std::uint64_t end) {
    const std::size_t at = begin * dmlref::detail::kStreamPage;
    const std::size_t n = (end - begin) * dmlref::detail::kStreamPage;
    if (pages) {
      dmlref::detail::copy_bytes_streaming_pages(dst.data() + at, src.data() + at, n);
    } else {
      dmlref::detail::copy_bytes_streaming_lines(dst.data() + at, src.data() + at, n);
    }
    dmlref::detail::stream_fence();
  };
  for (auto _ : state) {
    dmlref::detail::parallel_ranges(threads, page_count, copy);
    benchmark::ClobberMemory();
  }
  dmlref::set_num_threads(0);
  dmlref::bench::set_bytes_processed(state, bytes);
}

void register_stream() {
  for (const bool pages : {false, true}) {
    auto* b = benchmark::RegisterBenchmark(pages ? "stream/pages" : "stream/lines",
                                           [pages](benchmark::State& s) { bm_stream(s, pages); });
    b->ArgNames({"bytes", "threads"})->UseRealTime();
    for (std::int64_t mib : {16, 256}) b->Args({mib << 20, 1})->Args({mib << 20, 2});
  }
}

[[maybe_unused]] const bool kRegistered = [] {
  dmlref::bench::register_memcpy_baseline();
  register_type<float>("float32");
  register_type<dmlref::float16>("float16");
  register_type<std::int64_t>("int64");
  register_sweep<std::uint8_t>("uint8");
  register_sweep<dmlref::float16>("float16");
  register_sweep<float>("float32");
  register_sweep<std::int64_t>("int64");
  register_stream();
  return true;
}();

}  // namespace
