// dmlref::reverse_subsequences (validation plus the fast path) against memcpy of the same byte
// count, in the same process; float32, float16 and int64; UINT32 lengths drawn uniformly from
// [0, axis size] with a fixed seed, so on average half of each subsequence is reversed and half
// copied. Cases (bytes = output bytes; Sizes {rows, 256}, reversing along the last axis unless
// said):
//   contiguous   packed input and output: every subsequence is one contiguous run
//   transposed   the input stored column-major (strides {1, rows})
//   broadcast    every input row the same row (strides {0, 1})
//   axis0        Sizes {64, columns}, reversing along axis 0: each subsequence is a column
//   reference    contiguous through dmlref::reference::reverse_subsequences, the plain loop
//
// Command and results: bench/README.md.
#include "bench_baseline.hpp"

#include <dmlref/ops/reverse_subsequences.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using dmlref::Layout;
using dmlref::TensorView;
using dmlref::bench::AlignedBuffer;

enum class Kind { Contiguous, Transposed, Broadcast, Axis0, Reference };

constexpr std::uint32_t kSequence = 256;  // the axis size of the row-shaped cases
constexpr std::uint32_t kAxis0Sequence = 64;

struct Case {
  Layout input;
  std::uint64_t input_elements = 0;
  Layout lengths;
  Layout output;
  std::uint32_t axis = 1;
};

template <class T>
Case make_case(Kind kind, std::uint64_t bytes) {
  const std::uint64_t n = bytes / sizeof(T);
  Case c;
  if (kind == Kind::Axis0) {
    const auto columns = static_cast<std::uint32_t>(n / kAxis0Sequence);
    c.input = c.output = Layout::packed({kAxis0Sequence, columns});
    c.input_elements = n;
    c.lengths = Layout::packed({1, columns});
    c.axis = 0;
    return c;
  }
  const auto rows = static_cast<std::uint32_t>(n / kSequence);
  c.output = Layout::packed({rows, kSequence});
  c.lengths = Layout::packed({rows, 1});
  c.input_elements = n;
  if (kind == Kind::Transposed) {
    c.input = Layout::strided({rows, kSequence}, {1, rows});
  } else if (kind == Kind::Broadcast) {
    c.input = Layout::strided({rows, kSequence}, {0, 1});
    c.input_elements = kSequence;
  } else {
    c.input = c.output;
  }
  return c;
}

template <class T>
void bm_reverse(benchmark::State& state, Kind kind) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const Case c = make_case<T>(kind, bytes);
  AlignedBuffer src(c.input_elements * sizeof(T), 0x11);
  AlignedBuffer dst(bytes, 0x22);
  const std::uint32_t axis_size = c.output.sizes[c.axis];
  std::vector<std::uint32_t> lengths(std::uint64_t{c.lengths.sizes[0]} * c.lengths.sizes[1]);
  std::mt19937 rng(20261121);
  for (auto& l : lengths) l = static_cast<std::uint32_t>(rng() % (axis_size + 1));
  const TensorView<const T> input(src.as<T>(), c.input);
  const TensorView<const std::uint32_t> len(lengths.data(), c.lengths);
  const TensorView<T> output(dst.as<T>(), c.output);
  for (auto _ : state) {
    if (kind == Kind::Reference) {
      dmlref::reference::reverse_subsequences<T>(input, len, output, c.axis);
    } else {
      dmlref::reverse_subsequences<T>(input, len, output, c.axis);
    }
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  dmlref::bench::set_bytes_processed(state, bytes);
}

template <class T>
void register_type(const char* type_name) {
  struct Entry {
    Kind kind;
    const char* name;
  };
  constexpr Entry kEntries[] = {{Kind::Contiguous, "contiguous"},
                                {Kind::Transposed, "transposed"},
                                {Kind::Broadcast, "broadcast"},
                                {Kind::Axis0, "axis0"},
                                {Kind::Reference, "reference"}};
  for (const Entry& e : kEntries) {
    const std::string name = std::string(e.name) + "/" + type_name;
    const Kind kind = e.kind;
    dmlref::bench::register_sized(
        name, [kind](benchmark::State& state) { bm_reverse<T>(state, kind); },
        [kind](std::int64_t bytes) {
          if (kind == Kind::Reference) return dmlref::bench::reference_size(bytes);
          return kind == Kind::Contiguous || dmlref::bench::at_most_16_mib(bytes);
        });
  }
}

[[maybe_unused]] const bool kRegistered = [] {
  dmlref::bench::register_memcpy_baseline();
  register_type<float>("float32");
  register_type<dmlref::float16>("float16");
  register_type<std::int64_t>("int64");
  return true;
}();

}  // namespace
