// GATHER_ND1's fast path (dmlref::gather_nd1, typed: validation, the index pass, one slice copy per
// tuple with the strided-copy core) against baselines of the same byte count in the same process:
//   slice/<type>/<slice bytes>/<total bytes>   input {S, L} gathered by S row indices (a random
//                                              permutation), slices of L elements; vs memcpy
//   elementwise/<type>/<bytes>                 k = 0: one element per tuple; vs indexed below
//   indexed/<type>/<bytes>                     the bare loop `out[i] = in[idx[i]]`
//   validate_slice/..., validate_elementwise/...  validate_gather_nd1 alone (G10 over every index
//                                              plus the other checks), to set against the operator
// Bytes counted: output bytes. Command and results: bench/README.md.
#include "bench_baseline.hpp"

#include <dmlref/ops/gather_nd1.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>

namespace {

using dmlref::Layout;
using dmlref::TensorView;
using dmlref::bench::AlignedBuffer;
using Index = std::uint32_t;

constexpr std::int64_t KiB = 1024;
constexpr std::int64_t MiB = 1024 * KiB;

// A random permutation of [0, n): every slice read once, in an order no prefetcher follows.
void fill_permutation(Index* p, std::size_t n) {
  std::iota(p, p + n, Index{0});
  std::shuffle(p, p + n, std::mt19937(20261121u));
}

template <class T>
struct GatherCase {
  std::uint32_t slices, slice_elements;
  AlignedBuffer in, ix, out;
  GatherCase(std::uint64_t total_bytes, std::uint64_t slice_bytes)
      : slices(static_cast<std::uint32_t>(total_bytes / slice_bytes)),
        slice_elements(static_cast<std::uint32_t>(slice_bytes / sizeof(T))),
        in(total_bytes, 0x11),
        ix(std::uint64_t{slices} * sizeof(Index)),
        out(total_bytes, 0x22) {
    fill_permutation(ix.as<Index>(), slices);
  }
  // Input {S, L} (r = 2), indices {S, 1} (q = 2), b = 0, m = 1: output {S, L}.
  TensorView<const T> input() { return {in.as<T>(), Layout::packed({slices, slice_elements})}; }
  TensorView<const Index> indices() { return {ix.as<Index>(), Layout::packed({slices, 1})}; }
  TensorView<T> output() { return {out.as<T>(), Layout::packed({slices, slice_elements})}; }
};

template <class T>
void slice_gather(benchmark::State& state) {
  GatherCase<T> c(static_cast<std::uint64_t>(state.range(1)),
                  static_cast<std::uint64_t>(state.range(0)));
  for (auto _ : state) {
    dmlref::gather_nd1<T, Index>(c.input(), c.indices(), c.output(), 2, 2, 0);
    benchmark::DoNotOptimize(c.out.data());
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, static_cast<std::uint64_t>(state.range(1)));
}

template <class T>
void slice_validate(benchmark::State& state) {
  GatherCase<T> c(static_cast<std::uint64_t>(state.range(1)),
                  static_cast<std::uint64_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        dmlref::validate_gather_nd1<T, Index>(c.input(), c.indices(), c.output(), 2, 2, 0));
  }
  dmlref::bench::set_bytes_processed(state, static_cast<std::uint64_t>(state.range(1)));
}

// Element-wise: input {1, N} (r = 1), indices {N, 1} (q = 2), output {1, N}; k = 0.
template <class T>
struct ElementCase {
  std::uint32_t n;
  AlignedBuffer in, ix, out;
  explicit ElementCase(std::uint64_t bytes)
      : n(static_cast<std::uint32_t>(bytes / sizeof(T))),
        in(bytes, 0x11),
        ix(std::uint64_t{n} * sizeof(Index)),
        out(bytes, 0x22) {
    fill_permutation(ix.as<Index>(), n);
  }
  TensorView<const T> input() { return {in.as<T>(), Layout::packed({1, n})}; }
  TensorView<const Index> indices() { return {ix.as<Index>(), Layout::packed({n, 1})}; }
  TensorView<T> output() { return {out.as<T>(), Layout::packed({1, n})}; }
};

template <class T>
void elementwise_gather(benchmark::State& state) {
  ElementCase<T> c(static_cast<std::uint64_t>(state.range(0)));
  for (auto _ : state) {
    dmlref::gather_nd1<T, Index>(c.input(), c.indices(), c.output(), 1, 2, 0);
    benchmark::DoNotOptimize(c.out.data());
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, static_cast<std::uint64_t>(state.range(0)));
}

template <class T>
void elementwise_validate(benchmark::State& state) {
  ElementCase<T> c(static_cast<std::uint64_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        dmlref::validate_gather_nd1<T, Index>(c.input(), c.indices(), c.output(), 1, 2, 0));
  }
  dmlref::bench::set_bytes_processed(state, static_cast<std::uint64_t>(state.range(0)));
}

// The bare indexed-load loop: no validation, no negative indices, no bit-exact moves.
template <class T>
void indexed_loop(benchmark::State& state) {
  ElementCase<T> c(static_cast<std::uint64_t>(state.range(0)));
  const T* in = c.in.template as<T>();
  const Index* idx = c.ix.template as<Index>();
  T* out = c.out.template as<T>();
  for (auto _ : state) {
    for (std::uint32_t i = 0; i < c.n; ++i) out[i] = in[idx[i]];
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, static_cast<std::uint64_t>(state.range(0)));
}

const std::int64_t kSliceTotals[] = {1 * MiB, 16 * MiB};
const std::int64_t kElementTotals[] = {64 * KiB, 1 * MiB, 16 * MiB};

template <class T>
void register_type(const char* type) {
  const std::int64_t slice_bytes[] = {static_cast<std::int64_t>(sizeof(T)), 16, 64, 256,
                                      1 * KiB, 4 * KiB, 64 * KiB};
  auto* s = benchmark::RegisterBenchmark((std::string("slice/") + type).c_str(), slice_gather<T>);
  auto* v = benchmark::RegisterBenchmark((std::string("validate_slice/") + type).c_str(),
                                         slice_validate<T>);
  for (std::int64_t total : kSliceTotals) {
    for (std::int64_t bytes : slice_bytes) {
      s->Args({bytes, total});
      if (bytes == 256) v->Args({bytes, total});
    }
  }
  if constexpr (sizeof(T) == 4) {
    // 256 MiB, far past the L3, for the slice sizes of the target.
    s->Args({256, 256 * MiB})->Args({64 * KiB, 256 * MiB});
  }
  auto* e = benchmark::RegisterBenchmark((std::string("elementwise/") + type).c_str(),
                                         elementwise_gather<T>);
  auto* x = benchmark::RegisterBenchmark((std::string("indexed/") + type).c_str(), indexed_loop<T>);
  auto* ev = benchmark::RegisterBenchmark((std::string("validate_elementwise/") + type).c_str(),
                                          elementwise_validate<T>);
  for (std::int64_t total : kElementTotals) {
    e->Arg(total);
    x->Arg(total);
    ev->Arg(total);
  }
}

const int kRegistered = [] {
  auto* m = benchmark::RegisterBenchmark("memcpy", dmlref::bench::memcpy_baseline);
  for (std::int64_t bytes : {64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB}) m->Arg(bytes);
  register_type<float>("float32");
  register_type<dmlref::float16>("float16");
  register_type<std::int64_t>("int64");
  return 0;
}();

}  // namespace
