// JOIN and SPLIT fast paths (detail::join_fast, detail::split_fast) diffed against the golden loops
// (dmlref::reference::join/split) on seeded random cases: all eleven types, ranks 1-8, every axis,
// transposed, padded, broadcast and reversed inputs, padded, transposed and reversed outputs,
// size-1 dimensions. Both destinations start as the same sentinel bytes and are compared whole,
// so the fast path must write exactly the elements the loop writes and leave padding alone.
#include "test_support.hpp"

#include <dmlref/ops/join.hpp>
#include <dmlref/ops/split.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace test_fastpath_join_split {  // this file's own names (tests/CMakeLists.txt: unity groups)

using namespace dmlref;

namespace {

using test::random_operand;
using test::same_buffers;
using test::sentinel_buffer;
using Operand = test::RandomOperand;

using Sizes = std::vector<std::uint32_t>;
constexpr int kCasesPerType = 160;

// Sizes 1-5 at low ranks, 1-3 at high ones, so rank 8 stays a few thousand elements; size 1 is
// common, which tests that the plan drops such dimensions correctly.
Sizes random_sizes(std::mt19937& rng, std::size_t rank) {
  Sizes sizes(rank);
  const std::uint32_t most = rank <= 4 ? 5 : 3;
  for (auto& s : sizes) s = 1 + static_cast<std::uint32_t>(rng() % most);
  return sizes;
}

// One JOIN (or, with `split`, SPLIT) case: the concatenated tensor's sizes, the axis, and the
// pieces' sizes along it.
struct Shape {
  Sizes whole;
  std::uint32_t axis = 0;
  std::vector<std::uint32_t> pieces;
};

Shape random_shape(std::mt19937& rng, int iteration) {
  Shape s;
  const auto rank = static_cast<std::size_t>(1 + iteration % 8);
  s.whole = random_sizes(rng, rank);
  s.axis = static_cast<std::uint32_t>((iteration / 8) % rank);  // every axis of every rank
  s.pieces.resize(1 + rng() % 4);
  std::uint32_t sum = 0;
  for (auto& p : s.pieces) sum += p = 1 + static_cast<std::uint32_t>(rng() % 3);
  s.whole[s.axis] = sum;
  return s;
}

Sizes piece_sizes(const Shape& s, std::size_t i) {
  Sizes sizes = s.whole;
  sizes[s.axis] = s.pieces[i];
  return sizes;
}

}  // namespace

TEST_CASE_TEMPLATE("fast join equals the golden loop: random shapes, strides and axes", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(20261121);
  for (int iteration = 0; iteration < kCasesPerType; ++iteration) {
    const Shape shape = random_shape(rng, iteration);
    std::vector<Operand> in_ops;
    std::vector<std::vector<T>> in_buffers;
    std::vector<TensorView<const T>> inputs;
    for (std::size_t i = 0; i < shape.pieces.size(); ++i) {
      in_ops.push_back(random_operand(rng, piece_sizes(shape, i), true, true));
      in_buffers.push_back(test::distinct_buffer<T>(in_ops.back().elements, 1000 * i));
    }
    for (std::size_t i = 0; i < in_ops.size(); ++i) {
      inputs.emplace_back(in_buffers[i].data() + in_ops[i].origin, in_ops[i].layout);
    }
    const Operand out = random_operand(rng, shape.whole, false, true);
    std::vector<T> golden = sentinel_buffer<T>(out.elements);
    std::vector<T> fast = sentinel_buffer<T>(out.elements);
    reference::join<T>(inputs, TensorView<T>(golden.data() + out.origin, out.layout), shape.axis);
    join<T>(inputs, TensorView<T>(fast.data() + out.origin, out.layout), shape.axis);
    CAPTURE(iteration);
    CAPTURE(shape.axis);
    CHECK_MESSAGE(same_buffers(golden, fast), "output ", out.layout.sizes_string());
  }
}

TEST_CASE_TEMPLATE("fast split equals the golden loop: random shapes, strides and axes", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(20261122);
  for (int iteration = 0; iteration < kCasesPerType; ++iteration) {
    const Shape shape = random_shape(rng, iteration);
    const Operand in = random_operand(rng, shape.whole, true, true);
    const std::vector<T> in_buffer = test::distinct_buffer<T>(in.elements);
    const TensorView<const T> input(in_buffer.data() + in.origin, in.layout);
    std::vector<Operand> out_ops;
    std::vector<std::vector<T>> golden, fast;
    std::vector<TensorView<T>> golden_views, fast_views;
    for (std::size_t i = 0; i < shape.pieces.size(); ++i) {
      out_ops.push_back(random_operand(rng, piece_sizes(shape, i), false, true));
      golden.push_back(sentinel_buffer<T>(out_ops.back().elements));
      fast.push_back(sentinel_buffer<T>(out_ops.back().elements));
    }
    for (std::size_t i = 0; i < out_ops.size(); ++i) {
      golden_views.emplace_back(golden[i].data() + out_ops[i].origin, out_ops[i].layout);
      fast_views.emplace_back(fast[i].data() + out_ops[i].origin, out_ops[i].layout);
    }
    reference::split<T>(input, golden_views, shape.axis);
    split<T>(input, fast_views, shape.axis);
    CAPTURE(iteration);
    CAPTURE(shape.axis);
    for (std::size_t i = 0; i < out_ops.size(); ++i) {
      CHECK_MESSAGE(same_buffers(golden[i], fast[i]), "OutputTensors[", i, "]");
    }
  }
}

// The runtime layer routes through the same fast paths; diff it once per type with padded and
// transposed descriptions (runtime strides are unsigned, so no reversal or negative offsets).
TEST_CASE_TEMPLATE("fast runtime join and split equal the runtime reference", T, DMLREF_ALL_TYPES) {
  std::mt19937 rng(20261123);
  const auto desc_strides = [](const Layout& l) {
    return std::vector<std::uint32_t>(l.strides.begin(), l.strides.begin() + l.rank);
  };
  // T10 may round a buffer's required size up; a few spare elements cover it.
  constexpr std::size_t kSpare = 8;
  for (int iteration = 0; iteration < 24; ++iteration) {
    const Shape shape = random_shape(rng, iteration);
    const std::size_t count = shape.pieces.size();
    const Operand whole = random_operand(rng, shape.whole, true, false);
    std::vector<Operand> pieces;
    std::vector<TensorDesc> piece_descs;
    for (std::size_t i = 0; i < count; ++i) {
      pieces.push_back(random_operand(rng, piece_sizes(shape, i), false, false));
      piece_descs.emplace_back(data_type_of<T>, piece_sizes(shape, i),
                               desc_strides(pieces.back().layout));
    }
    std::vector<BufferTensorDesc> piece_buffer_descs;
    for (const TensorDesc& d : piece_descs) piece_buffer_descs.push_back(d.desc());
    CAPTURE(iteration);

    // JOIN: the pieces (distinct values) into the whole (an output, so no broadcast there).
    const Operand out = random_operand(rng, shape.whole, false, false);
    const TensorDesc out_desc(data_type_of<T>, shape.whole, desc_strides(out.layout));
    const BufferTensorDesc out_buffer_desc = out_desc.desc();
    std::vector<std::vector<T>> piece_data;
    std::vector<ConstBuffer> piece_buffers;
    for (std::size_t i = 0; i < count; ++i) {
      piece_data.push_back(test::distinct_buffer<T>(pieces[i].elements + kSpare, 1000 * i));
      piece_buffers.emplace_back(piece_data[i].data(), piece_data[i].size() * sizeof(T));
    }
    std::vector<T> golden = sentinel_buffer<T>(out.elements + kSpare);
    std::vector<T> fast = golden;
    const JoinOperatorDesc join_desc{static_cast<std::uint32_t>(count), piece_buffer_descs.data(),
                                     &out_buffer_desc, shape.axis};
    reference::join(join_desc, piece_buffers, Buffer{golden.data(), golden.size() * sizeof(T)});
    join(join_desc, piece_buffers, Buffer{fast.data(), fast.size() * sizeof(T)});
    CHECK(same_buffers(golden, fast));

    // SPLIT: the whole (possibly broadcast) into the pieces.
    const TensorDesc in_desc(data_type_of<T>, shape.whole, desc_strides(whole.layout));
    const BufferTensorDesc in_buffer_desc = in_desc.desc();
    const std::vector<T> in_data = test::distinct_buffer<T>(whole.elements + kSpare);
    std::vector<std::vector<T>> golden_pieces, fast_pieces;
    std::vector<Buffer> golden_buffers, fast_buffers;
    for (std::size_t i = 0; i < count; ++i) {
      golden_pieces.push_back(sentinel_buffer<T>(pieces[i].elements + kSpare));
      fast_pieces.push_back(golden_pieces.back());
    }
    for (std::size_t i = 0; i < count; ++i) {
      golden_buffers.push_back({golden_pieces[i].data(), golden_pieces[i].size() * sizeof(T)});
      fast_buffers.push_back({fast_pieces[i].data(), fast_pieces[i].size() * sizeof(T)});
    }
    const SplitOperatorDesc split_desc{&in_buffer_desc, static_cast<std::uint32_t>(count),
                                       piece_buffer_descs.data(), shape.axis};
    const ConstBuffer in_buffer(in_data.data(), in_data.size() * sizeof(T));
    reference::split(split_desc, in_buffer, golden_buffers);
    split(split_desc, in_buffer, fast_buffers);
    for (std::size_t i = 0; i < count; ++i) CHECK(same_buffers(golden_pieces[i], fast_pieces[i]));
  }
}

TEST_CASE_TEMPLATE("join and split of more pieces than one group, in slabs, equal the golden loops",
                   T, DMLREF_ALL_TYPES) {
  // 37 pieces of 1-37 elements along the last axis of {600, 703}, at the default group size
  // and slabs. Every fifth piece is padded (its inner part not one contiguous run), so those 7
  // are copied whole first; the other 30 move side by side in two groups (16, 14), slab by slab.
  constexpr std::uint32_t kRows = 600, kCount = 37;
  Sizes widths(kCount);
  std::uint32_t total = 0;
  for (std::uint32_t i = 0; i < kCount; ++i) total += widths[i] = i + 1;
  const auto piece_layout = [&](std::uint32_t i) {
    const std::int64_t pitch = i % 5 == 4 ? 2 : 1;  // padded: every other element
    return Layout::strided(Sizes{kRows, widths[i]},
                           std::vector<std::int64_t>{pitch * widths[i], pitch});
  };
  std::vector<std::vector<T>> data;
  std::vector<TensorView<const T>> inputs;
  for (std::uint32_t i = 0; i < kCount; ++i) {
    data.push_back(test::distinct_buffer<T>(2 * std::size_t{kRows} * widths[i], 1000 * i));
  }
  for (std::uint32_t i = 0; i < kCount; ++i) inputs.emplace_back(data[i].data(), piece_layout(i));
  const Layout whole = Layout::packed({kRows, total});
  std::vector<T> golden = sentinel_buffer<T>(whole.element_count());
  std::vector<T> fast = golden;
  reference::join<T>(inputs, TensorView<T>(golden.data(), whole), 1);
  join<T>(inputs, TensorView<T>(fast.data(), whole), 1);
  CHECK(same_buffers(golden, fast));

  std::vector<std::vector<T>> golden_parts, fast_parts;
  std::vector<TensorView<T>> golden_views, fast_views;
  for (std::uint32_t i = 0; i < kCount; ++i) {
    golden_parts.push_back(sentinel_buffer<T>(2 * std::size_t{kRows} * widths[i]));
    fast_parts.push_back(golden_parts.back());
  }
  for (std::uint32_t i = 0; i < kCount; ++i) {
    golden_views.emplace_back(golden_parts[i].data(), piece_layout(i));
    fast_views.emplace_back(fast_parts[i].data(), piece_layout(i));
  }
  const TensorView<const T> input(golden.data(), whole);
  reference::split<T>(input, golden_views, 1);
  split<T>(input, fast_views, 1);
  for (std::uint32_t i = 0; i < kCount; ++i) {
    CAPTURE(i);
    CHECK(same_buffers(golden_parts[i], fast_parts[i]));
  }
}

}  // namespace test_fastpath_join_split
