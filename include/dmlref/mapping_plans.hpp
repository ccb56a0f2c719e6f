// dmlref: the host side of the device-usable mapping (mapping.hpp): each operator's plan built
// from views that passed the operator's validation. The reference loops in ops/*.hpp build their
// plans here, and so does GPU code that wants the same plan for its kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dmlref/layout.hpp"
#include "dmlref/mapping.hpp"
#include "dmlref/tensor_view.hpp"

namespace dmlref::mapping {

static_assert(kMaxRank == dmlref::kMaxRank, "the mapping layer and Layout share one rank limit");

inline TensorLayout layout_of(const Layout& l) noexcept {
  TensorLayout t;
  t.rank = l.rank;
  for (std::uint32_t d = 0; d < l.rank; ++d) {
    t.sizes[d] = l.sizes[d];
    t.strides[d] = l.strides[d];
  }
  return t;
}

template <class T>
TensorLayout layout_of(const TensorView<T>& view) noexcept {
  return layout_of(view.layout());
}

// The per-piece arrays a JoinPlan or SplitPlan points to (JOIN's inputs, SPLIT's outputs), owned
// here; plans made from a PieceTable live no longer than it.
struct PieceTable {
  std::uint32_t axis = 0;
  std::vector<std::uint32_t> ends;  // base_i + Sizes_i[Axis]
  std::vector<TensorLayout> layouts;

  AxisPieces pieces() const noexcept {
    return {axis, static_cast<std::uint32_t>(ends.size()), ends.data()};
  }
};

// J6 / S6 bound the running sum by the whole's Sizes[Axis], so it cannot wrap.
template <class T>
PieceTable piece_table(std::span<const TensorView<T>> pieces, std::uint32_t axis) {
  PieceTable table;
  table.axis = axis;
  table.ends.reserve(pieces.size());
  table.layouts.reserve(pieces.size());
  std::uint32_t running = 0;
  for (const TensorView<T>& piece : pieces) {
    running += piece.size(axis);
    table.ends.push_back(running);
    table.layouts.push_back(layout_of(piece));
  }
  return table;
}

inline JoinPlan join_plan(const PieceTable& inputs, const TensorLayout& output) noexcept {
  return {output, inputs.pieces(), inputs.layouts.data()};
}

inline SplitPlan split_plan(const TensorLayout& input, const PieceTable& outputs) noexcept {
  return {input, outputs.pieces(), outputs.layouts.data()};
}

// The plans below read only the views' layouts, so views of T and of const T are both taken.
template <class In, class Ix, class Up, class Out>
ScatterPlan scatter_plan(const TensorView<In>& input, const TensorView<Ix>& indices,
                         const TensorView<Up>& updates, const TensorView<Out>& output,
                         std::uint32_t axis, IndexPolicy policy) noexcept {
  return {layout_of(input), layout_of(indices), layout_of(updates), layout_of(output), axis,
          policy};
}

template <class In, class Ix, class Out>
GatherNd1Plan gather_nd1_plan(const TensorView<In>& input, const TensorView<Ix>& indices,
                              const TensorView<Out>& output, std::uint32_t r, std::uint32_t q,
                              std::uint32_t b, IndexPolicy policy) noexcept {
  return make_gather_nd1_plan(layout_of(input), layout_of(indices), layout_of(output), r, q, b,
                              policy);
}

template <class In, class Len, class Out>
ReverseSubsequencesPlan reverse_subsequences_plan(const TensorView<In>& input,
                                                  const TensorView<Len>& lengths,
                                                  const TensorView<Out>& output,
                                                  std::uint32_t axis) noexcept {
  return {layout_of(input), layout_of(lengths), layout_of(output), axis};
}

}  // namespace dmlref::mapping
