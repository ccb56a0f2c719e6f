// dmlref::split (validation plus the fast path) against memcpy of the same byte count, in the
// same process; float32, float16 and int64. Cases (bytes = input bytes = output bytes; splits
// along the last axis unless said):
//   axis0        a packed input split along axis 0 into two halves: one contiguous block each
//   blocks1k     a packed input into two outputs whose rows are 1 KiB: blocks of 1 KiB
//   narrow16/64  a packed input into four outputs whose rows are 16 / 64 bytes
//   transposed   the blocks1k shape from an input stored column-major (strides {1, rows})
//   broadcast    the blocks1k shape from an input whose rows repeat one row (strides {0, 1})
//   reference    blocks1k through dmlref::reference::split, the plain coordinate loop
//
// Command and results: bench/README.md.
#include "bench_baseline.hpp"

#include <dmlref/ops/split.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

using dmlref::Layout;
using dmlref::TensorView;
using dmlref::bench::AlignedBuffer;

enum class Kind { Axis0, Blocks1k, Narrow16, Narrow64, Transposed, Broadcast, Reference };

struct Case {
  Layout input;
  std::uint64_t input_elements = 0;  // how many elements the input buffer holds
  std::vector<Layout> outputs;
  std::uint32_t axis = 1;
};

// Outputs of `bytes` bytes in all (every size is a power of two, so the shapes divide).
template <class T>
Case make_case(Kind kind, std::uint64_t bytes) {
  const std::uint64_t n = bytes / sizeof(T);
  Case c;
  if (kind == Kind::Axis0) {
    const auto rows = static_cast<std::uint32_t>(n / 64);
    c.input = Layout::packed({rows, 64});
    c.input_elements = n;
    c.outputs.assign(2, Layout::packed({rows / 2, 64}));
    c.axis = 0;
    return c;
  }
  const std::uint64_t block_bytes =
      kind == Kind::Narrow16 ? 16 : kind == Kind::Narrow64 ? 64 : 1024;
  const std::uint32_t count = block_bytes < 1024 ? 4 : 2;
  const auto width = static_cast<std::uint32_t>(block_bytes / sizeof(T));
  const auto rows = static_cast<std::uint32_t>(n / (std::uint64_t{count} * width));
  const std::uint32_t total = count * width;
  if (kind == Kind::Transposed) {
    c.input = Layout::strided({rows, total}, {1, rows});
  } else if (kind == Kind::Broadcast) {
    c.input = Layout::strided({rows, total}, {0, 1});
  } else {
    c.input = Layout::packed({rows, total});
  }
  c.input_elements = kind == Kind::Broadcast ? total : n;
  c.outputs.assign(count, Layout::packed({rows, width}));
  return c;
}

template <class T>
void bm_split(benchmark::State& state, Kind kind) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const Case c = make_case<T>(kind, bytes);
  AlignedBuffer src(c.input_elements * sizeof(T), 0x11);
  const TensorView<const T> input(src.as<T>(), c.input);
  std::vector<std::unique_ptr<AlignedBuffer>> buffers;
  std::vector<TensorView<T>> outputs;
  for (const Layout& l : c.outputs) {
    const std::uint64_t elements = std::uint64_t{l.sizes[0]} * l.sizes[1];
    buffers.push_back(std::make_unique<AlignedBuffer>(elements * sizeof(T), 0x22));
    outputs.emplace_back(buffers.back()->template as<T>(), l);
  }
  for (auto _ : state) {
    if (kind == Kind::Reference) {
      dmlref::reference::split<T>(input, outputs, c.axis);
    } else {
      dmlref::split<T>(input, outputs, c.axis);
    }
    for (auto& b : buffers) benchmark::DoNotOptimize(b->data());
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
  constexpr Entry kEntries[] = {{Kind::Axis0, "axis0"},           {Kind::Blocks1k, "blocks1k"},
                                {Kind::Narrow16, "narrow16"},     {Kind::Narrow64, "narrow64"},
                                {Kind::Transposed, "transposed"}, {Kind::Broadcast, "broadcast"},
                                {Kind::Reference, "reference"}};
  for (const Entry& e : kEntries) {
    const std::string name = std::string(e.name) + "/" + type_name;
    const Kind kind = e.kind;
    dmlref::bench::register_sized(
        name, [kind](benchmark::State& state) { bm_split<T>(state, kind); },
        [kind](std::int64_t bytes) {
          if (kind == Kind::Reference) return dmlref::bench::reference_size(bytes);
          const bool strided = kind == Kind::Transposed || kind == Kind::Broadcast;
          return !strided || dmlref::bench::at_most_16_mib(bytes);
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
