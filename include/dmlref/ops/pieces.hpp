// dmlref: what JOIN and SPLIT share. Both relate one whole tensor to pieces of it along Axis
// (JOIN: the inputs and the output; SPLIT: the outputs and the input), with the same count rule
// and the same five rules in the same order (J1-J6, S1-S6), worded from each operator's side, the
// same checks of views, descriptions and buffers, and the same movement, described once as the
// engine's PiecesAlongAxis (engine.hpp): piece i and the whole's block at base_i along Axis, copied
// one way (JOIN) or the other (SPLIT). Each operator's header keeps what is its own: its table,
// its description, the sizes it infers, its reference loop and its entry points.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "dmlref/ops/operator.hpp"

namespace dmlref::detail {

// How one operator names its tensors and rules in the shared checks.
struct PiecesRoles {
  std::string_view op;          // "JOIN"
  std::string_view pieces;      // "InputTensors": the array of pieces
  std::string_view piece_noun;  // "input"
  std::string_view count;       // "InputCount"
  std::string_view whole;       // "OutputTensor"
  std::string_view whole_noun;  // "output"
  // SPLIT: the whole is the input, first in the description and so first in every check.
  bool whole_is_input;
  // The rule of each check: count, DimensionCount, DataType, Axis range, other sizes, Axis sum.
  std::array<ErrorCode, 6> rules;
  std::span<const SupportRow> support;  // the page's table, shared by every tensor
  FeatureLevel introduced;
};

// "InputTensors[2]".
template <class Deferred = void>
inline std::string piece_name(const PiecesRoles& roles, std::size_t i) {
  return std::string(roles.pieces) + "[" + std::to_string(i) + "]";
}

// The tensors in the description's order (JOIN: the pieces, then the whole; SPLIT: the whole,
// then the pieces), the order of every per-tensor check and of the bound tensors.
struct PiecesOrder {
  const PiecesRoles& roles;
  std::size_t count;  // pieces

  bool is_whole(std::size_t k) const { return k == (roles.whole_is_input ? 0 : count); }
  std::size_t piece(std::size_t k) const { return roles.whole_is_input ? k - 1 : k; }
  bool is_output(std::size_t k) const { return is_whole(k) != roles.whole_is_input; }
  std::string name(std::size_t k) const {
    return is_whole(k) ? std::string(roles.whole) : piece_name(roles, piece(k));
  }
};

// What validation proves (JoinLayouts and SplitLayouts under the operators' names): every
// tensor's layout, and where each piece starts along Axis in the whole (base_i of the spec's
// semantics), so a faster path needs no arithmetic of its own.
struct PiecesLayouts {
  DataType data_type = DataType::Unknown;  // the whole's, which the pieces share
  std::uint32_t axis = 0;
  std::vector<Layout> pieces;
  Layout whole;
  std::vector<std::uint32_t> axis_offsets;
};

// The five rules, in order, on tensors that passed T1-T12, then the feature-level table in the
// description's order; fills in `layouts.axis_offsets`. `piece_types` is empty on the typed layer,
// where one element type makes the DataType rule hold by construction.
template <class Deferred = void>
inline void check_pieces_rules(const PiecesRoles& roles, PiecesLayouts& layouts,
                               std::span<const DataType> piece_types, FeatureLevel target) {
  const auto [count_rule, rank_rule, type_rule, axis_rule, sizes_rule, sum_rule] = roles.rules;
  const std::span<const Layout> pieces(layouts.pieces);
  const Layout& whole = layouts.whole;
  const DataType whole_type = layouts.data_type;
  const std::uint32_t axis = layouts.axis;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].rank != whole.rank) {
      fail(rank_rule, roles.op, ": ", piece_name(roles, i), ".DimensionCount is ", pieces[i].rank,
           " but ", roles.whole, ".DimensionCount is ", whole.rank, "; every ", roles.piece_noun,
           " must have the ", roles.whole_noun, "'s DimensionCount");
    }
    if (!piece_types.empty() && piece_types[i] != whole_type) {
      fail(type_rule, roles.op, ": ", piece_name(roles, i), ".DataType is ",
           describe(piece_types[i]), " but ", roles.whole, ".DataType is ", describe(whole_type),
           "; every ", roles.piece_noun, " must have the ", roles.whole_noun, "'s DataType");
    }
  }
  if (axis >= whole.rank) {
    fail(axis_rule, roles.op, ": Axis is ", axis, " but ", roles.whole, ".DimensionCount is ",
         whole.rank, "; Axis must be in [0, ", whole.rank - 1, "]");
  }
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    for (std::uint32_t d = 0; d < whole.rank; ++d) {
      if (d != axis && pieces[i].sizes[d] != whole.sizes[d]) {
        fail(sizes_rule, roles.op, ": ", piece_name(roles, i), ".Sizes[", d, "] is ",
             pieces[i].sizes[d], " but ", roles.whole, ".Sizes[", d, "] is ", whole.sizes[d],
             "; every dimension except Axis (", axis, ") must match");
      }
    }
  }
  // 64 bits: up to 2^32 pieces of up to 2^32 - 1 each cannot wrap it.
  std::uint64_t sum = 0;
  for (const Layout& piece : pieces) sum += piece.sizes[axis];
  if (sum != whole.sizes[axis]) {
    fail(sum_rule, roles.op, ": the ", roles.pieces, "' Sizes[", axis, "] add up to ", sum,
         " but ", roles.whole, ".Sizes[", axis, "] is ", whole.sizes[axis], "; along Axis (", axis,
         ") the ", roles.piece_noun, "s' sizes must sum to the ", roles.whole_noun, "'s");
  }
  layouts.axis_offsets.assign(pieces.size(), 0);
  std::uint32_t base = 0;  // the sum rule bounds every partial sum by the whole's size
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    layouts.axis_offsets[i] = base;
    base += pieces[i].sizes[axis];
  }
  const PiecesOrder order{roles, pieces.size()};
  for (std::size_t k = 0; k <= pieces.size(); ++k) {
    const bool whole_k = order.is_whole(k);
    const std::size_t i = whole_k ? 0 : order.piece(k);
    check_support(roles.op, order.name(k), whole_k ? whole.rank : pieces[i].rank,
                  whole_k || piece_types.empty() ? whole_type : piece_types[i], roles.support,
                  target);
  }
}

// ---- typed layer -------------------------------------------------------------------------------

// A typed view without its type, as the shared checks take it.
struct ViewRef {
  const void* data = nullptr;
  Layout layout;
};

// Every typed check, in order: the target level, the count rule, each view (pointer, T2-T4, T8
// reach, T12 for outputs), the five rules, the feature-level table, T13. Untyped, so it compiles
// once rather than per element type.
template <class Deferred = void>
inline PiecesLayouts check_piece_views(const PiecesRoles& roles, std::span<const ViewRef> pieces,
                                       const ViewRef& whole, DataType type,
                                       std::size_t element_bytes, std::uint32_t axis,
                                       FeatureLevel target) {
  check_target_level(roles.op, target, roles.introduced);
  if (pieces.empty()) {
    fail(roles.rules[0], roles.op, ": ", roles.count, " is 0 (no ", roles.piece_noun,
         " views); it must be greater than 0");
  }
  const PiecesOrder order{roles, pieces.size()};
  const auto view = [&](std::size_t k) -> const ViewRef& {
    return order.is_whole(k) ? whole : pieces[order.piece(k)];
  };
  PiecesLayouts layouts{type, axis, {}, whole.layout, {}};
  for (std::size_t k = 0; k <= pieces.size(); ++k) {
    check_view(roles.op, order.name(k), view(k).data, view(k).layout, element_bytes,
               order.is_output(k));
    if (!order.is_whole(k)) layouts.pieces.push_back(view(k).layout);
  }
  check_pieces_rules(roles, layouts, {}, target);
  std::vector<TensorExtent> extents;
  extents.reserve(pieces.size() + 1);
  for (std::size_t k = 0; k <= pieces.size(); ++k) {
    extents.push_back(tensor_extent(order.name(k), view(k).data, view(k).layout, element_bytes,
                                    order.is_output(k)));
  }
  check_no_overlap(roles.op, std::span<const TensorExtent>(extents));
  return layouts;
}

template <class P, class W>
PiecesLayouts validate_piece_views(const PiecesRoles& roles, std::span<const TensorView<P>> pieces,
                                   const TensorView<W>& whole, std::uint32_t axis,
                                   FeatureLevel target) {
  std::vector<ViewRef> refs;
  refs.reserve(pieces.size());
  for (const TensorView<P>& piece : pieces) refs.push_back({piece.data(), piece.layout()});
  return check_piece_views(roles, refs, {whole.data(), whole.layout()},
                           data_type_of<std::remove_const_t<W>>, sizeof(W), axis, target);
}

// ---- runtime layer -----------------------------------------------------------------------------

// The fields of JOIN's and SPLIT's descriptions, by role.
struct PiecesDesc {
  const BufferTensorDesc* pieces = nullptr;  // `count` of them
  std::uint32_t count = 0;
  const BufferTensorDesc* whole = nullptr;
  std::uint32_t axis = 0;
};

// Validated descriptions bound to their buffers, in the description's order (PiecesOrder).
struct BoundPieces {
  PiecesLayouts layouts;
  std::vector<BoundTensor> tensors;
};

template <class Deferred = void>
inline void check_pieces_counts(const PiecesRoles& roles, const PiecesDesc& desc,
                                FeatureLevel target) {
  check_target_level(roles.op, target, roles.introduced);
  if (desc.count == 0) {
    fail(roles.rules[0], roles.op, ": ", roles.count, " is 0; it must be greater than 0");
  }
  if (desc.pieces == nullptr) {
    fail(ErrorCode::NullPointer, roles.op, ": ", roles.pieces, " is null but ", roles.count,
         " is ", desc.count);
  }
}

// Every rule that needs no buffer, in the order counts, T1-T12 per tensor, the five rules, the
// feature-level table.
template <class Deferred = void>
inline std::vector<ValidatedTensor> validate_pieces_descs(const PiecesRoles& roles,
                                                          const PiecesDesc& desc,
                                                          FeatureLevel target,
                                                          PiecesLayouts& layouts) {
  check_pieces_counts(roles, desc, target);
  const PiecesOrder order{roles, desc.count};
  std::vector<ValidatedTensor> tensors;
  std::vector<DataType> types;
  for (std::size_t k = 0; k <= desc.count; ++k) {
    const bool whole = order.is_whole(k);
    tensors.push_back(validate_tensor_desc(roles.op, order.name(k),
                                           whole ? desc.whole : &desc.pieces[order.piece(k)],
                                           order.is_output(k)));
    if (whole) {
      layouts.whole = tensors.back().layout;
      layouts.data_type = tensors.back().data_type;
    } else {
      layouts.pieces.push_back(tensors.back().layout);
      types.push_back(tensors.back().data_type);
    }
  }
  layouts.axis = desc.axis;
  check_pieces_rules(roles, layouts, types, target);
  return tensors;
}

// All of the above plus the bindings: one buffer per piece, T9, T10, then T13.
template <class Deferred = void>
inline BoundPieces bind_pieces(const PiecesRoles& roles, const PiecesDesc& desc,
                               std::span<const ConstBuffer> pieces, ConstBuffer whole,
                               FeatureLevel target) {
  check_pieces_counts(roles, desc, target);
  if (pieces.size() != desc.count) {
    fail(ErrorCode::InvalidOption, roles.op, ": ", roles.count, " is ", desc.count, " but ",
         pieces.size(), " ", roles.piece_noun,
         " buffer(s) were given; bind exactly one buffer per ", roles.piece_noun, " tensor");
  }
  BoundPieces bound;
  std::vector<ValidatedTensor> tensors = validate_pieces_descs(roles, desc, target, bound.layouts);
  const PiecesOrder order{roles, desc.count};
  bound.tensors.reserve(tensors.size());
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const bool w = order.is_whole(k);
    bound.tensors.push_back(bind_validated(roles.op, std::move(tensors[k]),
                                           w ? *desc.whole : desc.pieces[order.piece(k)],
                                           w ? whole : pieces[order.piece(k)]));
  }
  check_no_overlap(roles.op, std::span<const BoundTensor>(bound.tensors));
  return bound;
}

// Typed views of the bound pieces: V is const T for JOIN's inputs, T for SPLIT's outputs.
template <class V>
std::vector<TensorView<V>> bound_piece_views(const PiecesRoles& roles, const BoundPieces& bound) {
  const std::size_t first = roles.whole_is_input ? 1 : 0;
  std::vector<TensorView<V>> views;
  views.reserve(bound.tensors.size() - 1);
  for (std::size_t i = 0; i + 1 < bound.tensors.size(); ++i) {
    views.push_back(view_of<V>(bound.tensors[first + i]));
  }
  return views;
}

// The engine's description of the bound pieces (`pieces`: the span of them in bound.tensors).
template <class Deferred = void>
inline PiecesAlongAxis bound_pieces_along_axis(const PiecesRoles& roles, const BoundPieces& bound,
                                               const std::span<const BoundTensor>& pieces) {
  const BoundTensor& whole = roles.whole_is_input ? bound.tensors.front() : bound.tensors.back();
  return {whole.data,    &whole.tensor.layout, bound.layouts.axis, !roles.whole_is_input,
          pieces.size(), &pieces,              &piece_of_bound};
}

}  // namespace dmlref::detail
