// SCATTER's fast path (dmlref::scatter, typed: validation, strided_copy of the input, then one
// element write per update in row-major order of the indices) against baselines in the same
// process. Rank 1, Axis 0, indices a random permutation of the output (every element updated once):
//   scatter/<type>/<bytes>    the operator
//   indexed/<type>/<bytes>    the bare loop: memcpy(out, in), then `out[idx[i]] = upd[i]`
//   validate/<type>/<bytes>   validate_scatter alone (SC8 over every index plus the other checks)
//   memcpy/<bytes>            for scale
// Bytes counted: output bytes. Command and results: bench/README.md.
#include "bench_baseline.hpp"

#include <dmlref/ops/scatter.hpp>

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

template <class T>
struct ScatterCase {
  std::uint32_t n;
  AlignedBuffer in, ix, up, out;
  explicit ScatterCase(std::uint64_t bytes)
      : n(static_cast<std::uint32_t>(bytes / sizeof(T))),
        in(bytes, 0x11),
        ix(std::uint64_t{n} * sizeof(Index)),
        up(bytes, 0x33),
        out(bytes, 0x22) {
    Index* p = ix.as<Index>();
    std::iota(p, p + n, Index{0});
    std::shuffle(p, p + n, std::mt19937(20261121u));
  }
  TensorView<const T> input() { return {in.as<T>(), Layout::packed({n})}; }
  TensorView<const Index> indices() { return {ix.as<Index>(), Layout::packed({n})}; }
  TensorView<const T> updates() { return {up.as<T>(), Layout::packed({n})}; }
  TensorView<T> output() { return {out.as<T>(), Layout::packed({n})}; }
};

template <class T>
void scatter_op(benchmark::State& state) {
  ScatterCase<T> c(static_cast<std::uint64_t>(state.range(0)));
  for (auto _ : state) {
    dmlref::scatter<T, Index>(c.input(), c.indices(), c.updates(), c.output(), 0);
    benchmark::DoNotOptimize(c.out.data());
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, static_cast<std::uint64_t>(state.range(0)));
}

template <class T>
void scatter_validate(benchmark::State& state) {
  ScatterCase<T> c(static_cast<std::uint64_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        dmlref::validate_scatter<T, Index>(c.input(), c.indices(), c.updates(), c.output(), 0));
  }
  dmlref::bench::set_bytes_processed(state, static_cast<std::uint64_t>(state.range(0)));
}

// The bare loop: no validation, no negative indices, no bit-exact moves.
template <class T>
void indexed_loop(benchmark::State& state) {
  ScatterCase<T> c(static_cast<std::uint64_t>(state.range(0)));
  const T* in = c.in.template as<T>();
  const Index* idx = c.ix.template as<Index>();
  const T* upd = c.up.template as<T>();
  T* out = c.out.template as<T>();
  for (auto _ : state) {
    std::memcpy(static_cast<void*>(out), in, std::size_t{c.n} * sizeof(T));
    for (std::uint32_t i = 0; i < c.n; ++i) out[idx[i]] = upd[i];
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, static_cast<std::uint64_t>(state.range(0)));
}

const std::int64_t kTotals[] = {64 * KiB, 1 * MiB, 16 * MiB};

template <class T>
void register_type(const char* type) {
  auto* s = benchmark::RegisterBenchmark((std::string("scatter/") + type).c_str(), scatter_op<T>);
  auto* x = benchmark::RegisterBenchmark((std::string("indexed/") + type).c_str(), indexed_loop<T>);
  auto* v = benchmark::RegisterBenchmark((std::string("validate/") + type).c_str(),
                                         scatter_validate<T>);
  for (std::int64_t total : kTotals) {
    s->Arg(total);
    x->Arg(total);
    v->Arg(total);
  }
}

const int kRegistered = [] {
  auto* m = benchmark::RegisterBenchmark("memcpy", dmlref::bench::memcpy_baseline);
  for (std::int64_t bytes : kTotals) m->Arg(bytes);
  register_type<float>("float32");
  register_type<dmlref::float16>("float16");
  register_type<std::int64_t>("int64");
  return 0;
}();

}  // namespace
