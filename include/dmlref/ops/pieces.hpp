// dmlref: what JOIN and SPLIT share. Both relate one whole tensor to pieces of it along Axis
// (JOIN: the inputs and the output; SPLIT: the outputs and the input), with the same five rules
// in the same order (J2-J6, S2-S6), worded from each operator's side, and the same movement,
// described once as the engine's PiecesAlongAxis (engine.hpp): piece i and the whole's block at
// base_i along Axis, copied one way (JOIN) or the other (SPLIT).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmlref/data_type.hpp"
#include "dmlref/error.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/engine.hpp"

namespace dmlref::detail {

// How one operator names its tensors and rules in the shared checks.
struct PiecesRoles {
  std::string_view op;          // "JOIN"
  std::string_view pieces;      // "InputTensors": the array of pieces
  std::string_view piece_noun;  // "input"
  std::string_view whole;       // "OutputTensor"
  std::string_view whole_noun;  // "output"
  // The rule of each check: DimensionCount, DataType, Axis range, other sizes, Axis sum.
  std::array<ErrorCode, 5> rules;
};

// "InputTensors[2]".
inline std::string piece_name(const PiecesRoles& roles, std::size_t i) {
  return std::string(roles.pieces) + "[" + std::to_string(i) + "]";
}

// The five rules, in order, on tensors that passed T1-T12; returns where each piece starts along
// Axis in the whole (base_i of the spec's semantics). `piece_types` is empty on the typed layer,
// where one element type makes the DataType rule hold by construction.
inline std::vector<std::uint32_t> check_pieces_rules(const PiecesRoles& roles,
                                                     std::span<const Layout> pieces,
                                                     std::span<const DataType> piece_types,
                                                     const Layout& whole, DataType whole_type,
                                                     std::uint32_t axis) {
  const auto [rank_rule, type_rule, axis_rule, sizes_rule, sum_rule] = roles.rules;
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
  std::vector<std::uint32_t> offsets(pieces.size());
  std::uint32_t base = 0;  // the sum rule bounds every partial sum by the whole's size
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    offsets[i] = base;
    base += pieces[i].sizes[axis];
  }
  return offsets;
}

}  // namespace dmlref::detail
