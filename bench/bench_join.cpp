// dmlref::join (validation plus the fast path) against memcpy of the same byte count, in the same
// process; float32, float16 and int64. Cases (bytes = output bytes; joins along the last axis
// unless said):
//   axis0        two packed halves joined along axis 0: each input is one contiguous block
//   blocks1k     two packed inputs whose rows are 1 KiB: contiguous blocks of 1 KiB
//   narrow16/64  four packed inputs whose rows are 16 / 64 bytes: blocks of 16 / 64 bytes
//   transposed   two 1 KiB-row inputs stored column-major (strides {1, rows})
//   broadcast    two 1 KiB-row inputs whose rows repeat one row (strides {0, 1})
//   reference    blocks1k through dmlref::reference::join, the plain coordinate loop
//
// Command and results: bench/README.md.
#include "bench_baseline.hpp"

#include <dmlref/ops/join.hpp>

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
  std::vector<Layout> inputs;
  std::vector<std::uint64_t> input_elements;  // how many elements each input buffer holds
  Layout output;
  std::uint32_t axis = 1;
};

// An output of exactly `bytes` bytes (every size is a power of two, so the shapes divide).
template <class T>
Case make_case(Kind kind, std::uint64_t bytes) {
  const std::uint64_t n = bytes / sizeof(T);
  Case c;
  if (kind == Kind::Axis0) {
    const auto rows = static_cast<std::uint32_t>(n / 64);
    for (int i = 0; i < 2; ++i) {
      c.inputs.push_back(Layout::packed({rows / 2, 64}));
      c.input_elements.push_back(n / 2);
    }
    c.output = Layout::packed({rows, 64});
    c.axis = 0;
    return c;
  }
  const std::uint64_t block_bytes =
      kind == Kind::Narrow16 ? 16 : kind == Kind::Narrow64 ? 64 : 1024;
  const std::uint32_t count = block_bytes < 1024 ? 4 : 2;
  const auto width = static_cast<std::uint32_t>(block_bytes / sizeof(T));
  const auto rows = static_cast<std::uint32_t>(n / (std::uint64_t{count} * width));
  for (std::uint32_t i = 0; i < count; ++i) {
    if (kind == Kind::Transposed) {
      c.inputs.push_back(Layout::strided({rows, width}, {1, rows}));
    } else if (kind == Kind::Broadcast) {
      c.inputs.push_back(Layout::strided({rows, width}, {0, 1}));
    } else {
      c.inputs.push_back(Layout::packed({rows, width}));
    }
    c.input_elements.push_back(kind == Kind::Broadcast ? width : std::uint64_t{rows} * width);
  }
  c.output = Layout::packed({rows, count * width});
  return c;
}

template <class T>
void bm_join(benchmark::State& state, Kind kind) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const Case c = make_case<T>(kind, bytes);
  std::vector<std::unique_ptr<AlignedBuffer>> buffers;
  std::vector<TensorView<const T>> inputs;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    buffers.push_back(std::make_unique<AlignedBuffer>(c.input_elements[i] * sizeof(T), 0x11));
    inputs.emplace_back(buffers.back()->template as<T>(), c.inputs[i]);
  }
  AlignedBuffer dst(bytes, 0x22);
  const TensorView<T> output(dst.as<T>(), c.output);
  for (auto _ : state) {
    if (kind == Kind::Reference) {
      dmlref::reference::join<T>(inputs, output, c.axis);
    } else {
      dmlref::join<T>(inputs, output, c.axis);
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
  constexpr Entry kEntries[] = {{Kind::Axis0, "axis0"},           {Kind::Blocks1k, "blocks1k"},
                                {Kind::Narrow16, "narrow16"},     {Kind::Narrow64, "narrow64"},
                                {Kind::Transposed, "transposed"}, {Kind::Broadcast, "broadcast"},
                                {Kind::Reference, "reference"}};
  for (const Entry& e : kEntries) {
    const std::string name = std::string(e.name) + "/" + type_name;
    const Kind kind = e.kind;
    dmlref::bench::register_sized(
        name, [kind](benchmark::State& state) { bm_join<T>(state, kind); },
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
