// Seeded random cases of every operator for the mapping tests: the CPU operator's result (the
// golden model, its fast path) and the operands a per-element evaluation reads, at random ranks
// 1-8 and random layouts (packed, padded, transposed, broadcast inputs, reversed). Shared by
// test_mapping.cpp (the mapping evaluated on the CPU) and cuda/test_cuda_mapping.cpp (on a GPU);
// each fills a case's `actual` outputs its own way and then calls check_outputs.
#pragma once

#include "test_support.hpp"

#include <dmlref/mapping_plans.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <type_traits>
#include <vector>

namespace dmlref::test::mapping_cases {

// One operand: storage holding every element its layout reaches, coordinate 0 at `origin`.
template <class T>
struct Operand {
  Layout layout;
  std::int64_t origin = 0;
  std::vector<T> storage;

  T* at0() { return storage.data() + origin; }
  const T* at0() const { return storage.data() + origin; }
  TensorView<T> view() { return {at0(), layout}; }
  TensorView<const T> view() const { return {at0(), layout}; }
};

// An input filled with values distinct across the case (seeded by `first`), or an output
// pre-filled with the sentinel so an element written by one path and skipped by the other shows.
template <class T>
Operand<T> make_operand(std::mt19937& rng, const std::vector<std::uint32_t>& sizes, bool is_input,
                        std::uint64_t first = 0) {
  const RandomOperand r = random_operand(rng, sizes, is_input, true);
  Operand<T> op{r.layout, r.origin, {}};
  op.storage = is_input ? distinct_buffer<T>(r.elements, first) : sentinel_buffer<T>(r.elements);
  return op;
}

template <class T>
std::vector<TensorView<const T>> const_views(const std::vector<Operand<T>>& ops) {
  std::vector<TensorView<const T>> views;
  for (const Operand<T>& op : ops) views.push_back(op.view());
  return views;
}

template <class T>
std::vector<TensorView<T>> views(std::vector<Operand<T>>& ops) {
  std::vector<TensorView<T>> out;
  for (Operand<T>& op : ops) out.push_back(op.view());
  return out;
}

// Sizes of 1-3 per dimension (1-2 past rank 5) keep every case below a few thousand elements.
inline std::vector<std::uint32_t> random_sizes(std::mt19937& rng, std::uint32_t rank) {
  std::vector<std::uint32_t> sizes(rank);
  for (std::uint32_t& s : sizes) s = 1 + static_cast<std::uint32_t>(rng() % (rank > 5 ? 2 : 3));
  return sizes;
}

inline std::uint32_t random_rank(std::mt19937& rng) {
  return 1 + static_cast<std::uint32_t>(rng() % kMaxRank);
}

// An index into a dimension of n elements: legal (negative ones included for signed I), or, when
// `out_of_range`, outside [-n, n) for IndexPolicy::Clamp to clamp.
template <class I>
I random_index(std::mt19937& rng, std::uint32_t n, bool out_of_range) {
  const auto spill = static_cast<std::int64_t>(rng() % 3);
  if (out_of_range) {
    if (std::is_signed_v<I> && rng() % 2 == 0) return static_cast<I>(-std::int64_t{n} - 1 - spill);
    return static_cast<I>(std::int64_t{n} + spill);
  }
  if (std::is_signed_v<I> && rng() % 2 == 0) {
    return static_cast<I>(-1 - static_cast<std::int64_t>(rng() % n));
  }
  return static_cast<I>(rng() % n);
}

// Every output: the operator's result and the one under test, byte for byte (padding included),
// reported through dmlref::compare on a difference.
template <class T>
void check_outputs(const std::vector<Operand<T>>& expected, const std::vector<Operand<T>>& actual) {
  REQUIRE(expected.size() == actual.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const bool same = same_buffers(expected[i].storage, actual[i].storage);
    CHECK_MESSAGE(same, compare(expected[i].view(), actual[i].view()).to_string());
  }
}

// JOIN's inputs (SPLIT's outputs): 1-4 pieces of 1-3 along a random axis, and the whole they make.
struct RandomPieces {
  std::uint32_t axis = 0;
  std::vector<std::vector<std::uint32_t>> pieces;
  std::vector<std::uint32_t> whole;
};

inline RandomPieces random_pieces(std::mt19937& rng) {
  const std::uint32_t rank = random_rank(rng);
  RandomPieces p{static_cast<std::uint32_t>(rng() % rank), {}, random_sizes(rng, rank)};
  const auto count = 1 + rng() % 4;
  std::uint32_t total = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    p.whole[p.axis] = 1 + static_cast<std::uint32_t>(rng() % 3);
    total += p.whole[p.axis];
    p.pieces.push_back(p.whole);
  }
  p.whole[p.axis] = total;
  return p;
}

template <class T>
struct JoinCase {
  std::uint32_t axis = 0;
  std::vector<Operand<T>> inputs;
  std::vector<Operand<T>> expected;  // one output
  std::vector<Operand<T>> actual;

  mapping::PieceTable pieces() const {
    const std::vector<TensorView<const T>> views = const_views(inputs);
    return mapping::piece_table(std::span<const TensorView<const T>>(views), axis);
  }
};

template <class T>
JoinCase<T> join_case(std::mt19937& rng) {
  const RandomPieces p = random_pieces(rng);
  JoinCase<T> c;
  c.axis = p.axis;
  for (std::size_t i = 0; i < p.pieces.size(); ++i) {
    c.inputs.push_back(make_operand<T>(rng, p.pieces[i], true, 1000 * i));
  }
  c.expected.push_back(make_operand<T>(rng, p.whole, false));
  c.actual = c.expected;
  join<T>(std::span<const TensorView<const T>>(const_views(c.inputs)), c.expected[0].view(),
          c.axis);
  return c;
}

template <class T>
struct SplitCase {
  std::uint32_t axis = 0;
  Operand<T> input;
  std::vector<Operand<T>> expected;
  std::vector<Operand<T>> actual;

  mapping::PieceTable pieces() const {
    const std::vector<TensorView<const T>> views = const_views(actual);
    return mapping::piece_table(std::span<const TensorView<const T>>(views), axis);
  }
};

template <class T>
SplitCase<T> split_case(std::mt19937& rng) {
  const RandomPieces p = random_pieces(rng);
  SplitCase<T> c;
  c.axis = p.axis;
  for (const std::vector<std::uint32_t>& sizes : p.pieces) {
    c.expected.push_back(make_operand<T>(rng, sizes, false));
  }
  c.input = make_operand<T>(rng, p.whole, true);
  c.actual = c.expected;
  const std::vector<TensorView<T>> outputs = views(c.expected);
  split<T>(c.input.view(), std::span<const TensorView<T>>(outputs), c.axis);
  return c;
}

template <class T, class I>
struct ScatterCase {
  std::uint32_t axis = 0;
  IndexPolicy policy = IndexPolicy::Error;
  Operand<T> input;
  Operand<I> indices;
  Operand<T> updates;
  std::vector<Operand<T>> expected;
  std::vector<Operand<T>> actual;

  mapping::ScatterPlan plan() const {
    return mapping::scatter_plan(input.view(), indices.view(), updates.view(), actual[0].view(),
                                 axis, policy);
  }
};

// Duplicate targets included: the last update in row-major order of the indices wins.
template <class T, class I>
ScatterCase<T, I> scatter_case(std::mt19937& rng) {
  const std::uint32_t rank = random_rank(rng);
  std::vector<std::uint32_t> sizes = random_sizes(rng, rank);
  ScatterCase<T, I> c;
  c.axis = static_cast<std::uint32_t>(rng() % rank);
  c.policy = rng() % 3 == 0 ? IndexPolicy::Clamp : IndexPolicy::Error;
  c.input = make_operand<T>(rng, sizes, true);
  c.expected.push_back(make_operand<T>(rng, sizes, false));
  c.actual = c.expected;
  const std::uint32_t n = sizes[c.axis];
  sizes[c.axis] = 1 + static_cast<std::uint32_t>(rng() % 4);
  c.updates = make_operand<T>(rng, sizes, true, 5000);
  c.indices = make_operand<I>(rng, sizes, true);
  for_each_coordinate(c.indices.layout, [&](const Coord& u) {
    c.indices.view()[u] =
        random_index<I>(rng, n, c.policy == IndexPolicy::Clamp && rng() % 4 == 0);
  });
  ScatterOptions options;
  options.index_policy = c.policy;
  scatter<T, I>(c.input.view(), c.indices.view(), c.updates.view(), c.expected[0].view(), c.axis,
                options);
  return c;
}

template <class T, class I>
struct GatherNd1Case {
  std::uint32_t r = 0, q = 0, b = 0;
  IndexPolicy policy = IndexPolicy::Error;
  Operand<T> input;
  Operand<I> indices;
  std::vector<Operand<T>> expected;
  std::vector<Operand<T>> actual;

  mapping::GatherNd1Plan plan() const {
    return mapping::gather_nd1_plan(input.view(), indices.view(), actual[0].view(), r, q, b,
                                    policy);
  }
};

// Any geometry G4-G9 admit: R, r, q, b and m at random, leading sizes 1, batch sizes shared.
template <class T, class I>
GatherNd1Case<T, I> gather_nd1_case(std::mt19937& rng) {
  GatherNd1Case<T, I> c;
  std::uint32_t rank = 0, m = 0;
  for (;;) {
    rank = random_rank(rng);
    c.r = 1 + static_cast<std::uint32_t>(rng() % rank);
    c.q = 1 + static_cast<std::uint32_t>(rng() % rank);
    c.b = static_cast<std::uint32_t>(rng() % std::min(c.r, c.q));
    m = 1 + static_cast<std::uint32_t>(rng() % (c.r - c.b));
    if ((c.q - 1) + (c.r - c.b - m) <= rank) break;
  }
  c.policy = rng() % 3 == 0 ? IndexPolicy::Clamp : IndexPolicy::Error;
  std::vector<std::uint32_t> input_sizes = random_sizes(rng, rank);
  std::vector<std::uint32_t> indices_sizes = random_sizes(rng, rank);
  for (std::uint32_t d = 0; d < rank - c.r; ++d) input_sizes[d] = 1;
  for (std::uint32_t d = 0; d < rank - c.q; ++d) indices_sizes[d] = 1;
  for (std::uint32_t j = 0; j < c.b; ++j) {
    indices_sizes[rank - c.q + j] = input_sizes[rank - c.r + j];
  }
  indices_sizes[rank - 1] = m;
  c.input = make_operand<T>(rng, input_sizes, true);
  c.indices = make_operand<I>(rng, indices_sizes, true);
  // Tuple position j addresses input dimension R - r + b + j. A broadcast tuple dimension makes
  // one stored index serve every position, so it must be legal in the smallest of them.
  const std::uint32_t first = rank - c.r + c.b;
  std::uint32_t smallest = input_sizes[first];
  for (std::uint32_t j = 0; j < m; ++j) smallest = std::min(smallest, input_sizes[first + j]);
  const bool shared = c.indices.layout.strides[rank - 1] == 0;
  for_each_coordinate(c.indices.layout, [&](const Coord& u) {
    const std::uint32_t n = shared ? smallest : input_sizes[first + u[rank - 1]];
    c.indices.view()[u] =
        random_index<I>(rng, n, c.policy == IndexPolicy::Clamp && rng() % 4 == 0);
  });
  const std::vector<std::uint32_t> output_sizes =
      infer_gather_nd1_output_sizes(input_sizes, indices_sizes, c.r, c.q, c.b);
  c.expected.push_back(make_operand<T>(rng, output_sizes, false));
  c.actual = c.expected;
  GatherNd1Options options;
  options.index_policy = c.policy;
  gather_nd1<T, I>(c.input.view(), c.indices.view(), c.expected[0].view(), c.r, c.q, c.b,
                   options);
  return c;
}

template <class T, class L>
struct ReverseSubsequencesCase {
  std::uint32_t axis = 0;
  Operand<T> input;
  Operand<L> lengths;
  std::vector<Operand<T>> expected;
  std::vector<Operand<T>> actual;

  mapping::ReverseSubsequencesPlan plan() const {
    return mapping::reverse_subsequences_plan(input.view(), lengths.view(), actual[0].view(),
                                              axis);
  }
};

// Lengths from 0 to two past the axis size, and the largest L (a longer length clamps).
template <class T, class L>
ReverseSubsequencesCase<T, L> reverse_subsequences_case(std::mt19937& rng) {
  const std::uint32_t rank = random_rank(rng);
  std::vector<std::uint32_t> sizes = random_sizes(rng, rank);
  ReverseSubsequencesCase<T, L> c;
  c.axis = static_cast<std::uint32_t>(rng() % rank);
  sizes[c.axis] = 1 + static_cast<std::uint32_t>(rng() % 5);
  c.input = make_operand<T>(rng, sizes, true);
  c.expected.push_back(make_operand<T>(rng, sizes, false));
  c.actual = c.expected;
  const std::uint32_t n = sizes[c.axis];
  sizes[c.axis] = 1;
  c.lengths = make_operand<L>(rng, sizes, true);
  for_each_coordinate(c.lengths.layout, [&](const Coord& u) {
    c.lengths.view()[u] =
        rng() % 5 == 0 ? std::numeric_limits<L>::max() : static_cast<L>(rng() % (n + 3));
  });
  reverse_subsequences<T, L>(c.input.view(), c.lengths.view(), c.expected[0].view(), c.axis);
  return c;
}

}  // namespace dmlref::test::mapping_cases
