// dmlref: the per-element mapping of every operator (which input element feeds which output
// element), as constexpr functions callable from CUDA device code and from plain C++. The CPU
// reference loops (ops/*.hpp) call exactly these functions, so a GPU kernel built on them follows
// the golden model's semantics by construction.
//
// Everything here works on plain values: a plan is a trivially copyable struct (fixed arrays of
// kMaxRank, plus, for JOIN and SPLIT, a pointer to caller-owned per-piece arrays) that a host
// builds from arguments that already passed the operator's validation (mapping_plans.hpp builds
// them from views). No exceptions, allocation, virtual calls or standard containers; a mapping
// that can fail (an index outside its dimension under IndexPolicy::Error) returns a Status.
// Coordinates are `rank` entries at a `const std::uint32_t*`; offsets are in elements (T6).
#pragma once

#include <cstdint>
#include <type_traits>

#include "dmlref/device.hpp"

namespace dmlref {

// What to do with an index outside the dimension it addresses (SC8, G10). DirectML documents no
// result, so the default is an error; Clamp reproduces what DirectML is observed to do on gathers.
enum class IndexPolicy : std::uint8_t {
  Error,
  Clamp,
};

namespace mapping {

inline constexpr std::uint32_t kMaxRank = 8;

enum class Status : std::uint8_t {
  Ok = 0,
  IndexOutOfRange,     // SC8 / G10 under IndexPolicy::Error
  PositionOutOfRange,  // a position along Axis past the last piece (JOIN)
  InvalidPolicy,       // an IndexPolicy value that is neither Error nor Clamp
};

// Sizes and strides (in elements) of one tensor; the first `rank` entries are meaningful.
struct TensorLayout {
  std::uint32_t rank = 0;
  std::uint32_t sizes[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};
};

// An element offset, or why there is none (offset 0 then).
struct MappedOffset {
  std::int64_t offset = 0;
  Status status = Status::Ok;
  constexpr DMLREF_HOST_DEVICE bool ok() const noexcept { return status == Status::Ok; }
};

// --- shape rules --------------------------------------------------------------------------------

// Product of the sizes; validated tensors hold at most 2^32 - 1 elements (T4), so it cannot wrap.
constexpr DMLREF_HOST_DEVICE std::uint64_t element_count(const TensorLayout& l) noexcept {
  std::uint64_t n = 1;
  for (std::uint32_t d = 0; d < l.rank; ++d) n *= l.sizes[d];
  return n;
}

// The coordinate of the `linear`-th element in row-major order (last dimension fastest).
constexpr DMLREF_HOST_DEVICE void coordinate_of(const TensorLayout& l, std::uint64_t linear,
                                                std::uint32_t* c) noexcept {
  for (std::uint32_t d = l.rank; d-- > 0;) {
    c[d] = static_cast<std::uint32_t>(linear % l.sizes[d]);
    linear /= l.sizes[d];
  }
}

// The row-major rank of a coordinate: the inverse of coordinate_of.
constexpr DMLREF_HOST_DEVICE std::uint64_t linear_index_of(const TensorLayout& l,
                                                           const std::uint32_t* c) noexcept {
  std::uint64_t linear = 0;
  for (std::uint32_t d = 0; d < l.rank; ++d) linear = linear * l.sizes[d] + c[d];
  return linear;
}

// T6: the element offset of a coordinate.
constexpr DMLREF_HOST_DEVICE std::int64_t offset_of(const TensorLayout& l,
                                                    const std::uint32_t* c) noexcept {
  std::int64_t off = 0;
  for (std::uint32_t d = 0; d < l.rank; ++d) off += static_cast<std::int64_t>(c[d]) * l.strides[d];
  return off;
}

// The offset of `c` with its coordinate along `dim` replaced by `value`: how every operator here
// moves along its Axis without copying the coordinate.
constexpr DMLREF_HOST_DEVICE std::int64_t offset_replacing(const TensorLayout& l,
                                                           const std::uint32_t* c,
                                                           std::uint32_t dim,
                                                           std::uint64_t value) noexcept {
  std::int64_t off = static_cast<std::int64_t>(value) * l.strides[dim];
  for (std::uint32_t d = 0; d < l.rank; ++d) {
    if (d != dim) off += static_cast<std::int64_t>(c[d]) * l.strides[d];
  }
  return off;
}

// --- indices (SC8, G10) -------------------------------------------------------------------------

template <class I>
concept IndexValue = std::is_integral_v<I> && !std::is_same_v<I, bool>;

// The negative-index rule without the range check: the result is below n exactly when the index
// is legal (in [-n, n) signed, [0, n) unsigned), and then it is the element the index selects.
// -1 is n - 1; a value below -n wraps modulo 2^64 to n or more (INT64_MIN included: n < 2^63), as
// does any value of n or more. No branch, so a check or a gather loop over it vectorises.
template <IndexValue I>
constexpr DMLREF_HOST_DEVICE std::uint64_t wrap_index(I value, std::uint64_t n) noexcept {
  const auto u = static_cast<std::uint64_t>(value);
  if constexpr (std::is_signed_v<I>) {
    return u + (value < 0 ? n : 0);
  } else {
    return u;
  }
}

// IndexPolicy::Clamp: the negative-index rule first, then clamp into [0, n-1] (n >= 1).
template <IndexValue I>
constexpr DMLREF_HOST_DEVICE std::uint64_t clamp_index(I value, std::uint64_t n) noexcept {
  const std::uint64_t k = wrap_index(value, n);
  if (k < n) return k;
  if constexpr (std::is_signed_v<I>) {
    if (value < 0) return 0;
  }
  return n - 1;
}

// A position along one dimension, or why there is none (position 0 then).
struct ResolvedIndex {
  std::uint64_t position = 0;
  Status status = Status::Ok;
  constexpr DMLREF_HOST_DEVICE bool ok() const noexcept { return status == Status::Ok; }
};

// An index into a dimension of n >= 1 elements under a policy: the element it selects after the
// negative-index rule, clamped under IndexPolicy::Clamp, an error under IndexPolicy::Error when
// it lies outside [-n, n).
template <IndexValue I>
constexpr DMLREF_HOST_DEVICE ResolvedIndex resolve_index(I value, std::uint64_t n,
                                                         IndexPolicy policy) noexcept {
  const std::uint64_t k = wrap_index(value, n);
  if (k < n) return {k, Status::Ok};
  switch (policy) {
    case IndexPolicy::Clamp: return {clamp_index(value, n), Status::Ok};
    case IndexPolicy::Error: return {0, Status::IndexOutOfRange};
  }
  return {0, Status::InvalidPolicy};
}

// --- JOIN and SPLIT: pieces along an axis ------------------------------------------------------

// JOIN's inputs (SPLIT's outputs) laid side by side along Axis: piece i covers positions
// [base_i, ends[i]) of the whole, base_i = ends[i - 1] (0 for the first). `ends` is owned by the
// caller, `count` entries, increasing.
struct AxisPieces {
  std::uint32_t axis = 0;
  std::uint32_t count = 0;
  const std::uint32_t* ends = nullptr;
};

constexpr DMLREF_HOST_DEVICE std::uint32_t piece_base(const AxisPieces& pieces,
                                                      std::uint32_t piece) noexcept {
  return piece == 0 ? 0 : pieces.ends[piece - 1];
}

// Which piece holds `position` of the whole along Axis, and where within it.
struct PiecePosition {
  std::uint32_t piece = 0;
  std::uint32_t position = 0;
  Status status = Status::Ok;
  constexpr DMLREF_HOST_DEVICE bool ok() const noexcept { return status == Status::Ok; }
};

// Binary search for the first piece whose end lies past `position` (J6/S6 make the pieces tile the
// whole, so only a position outside it has no piece).
constexpr DMLREF_HOST_DEVICE PiecePosition locate_piece(const AxisPieces& pieces,
                                                        std::uint32_t position) noexcept {
  std::uint32_t lo = 0;
  std::uint32_t hi = pieces.count;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (pieces.ends[mid] <= position) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == pieces.count) return {0, 0, Status::PositionOutOfRange};
  return {lo, position - piece_base(pieces, lo), Status::Ok};
}

// An element of one piece: which piece, and its offset there.
struct PieceOffset {
  std::uint32_t piece = 0;
  std::int64_t offset = 0;
  Status status = Status::Ok;
  constexpr DMLREF_HOST_DEVICE bool ok() const noexcept { return status == Status::Ok; }
};

// JOIN: `inputs` (caller-owned, pieces.count of them) are the inputs' layouts.
struct JoinPlan {
  TensorLayout output;
  AxisPieces pieces;
  const TensorLayout* inputs = nullptr;
};

// The input element that output coordinate `o` receives: the input i with
// base_i <= o[Axis] < base_i + Sizes_i[Axis], at o with o[Axis] - base_i.
constexpr DMLREF_HOST_DEVICE PieceOffset join_source(const JoinPlan& plan,
                                                     const std::uint32_t* o) noexcept {
  const std::uint32_t axis = plan.pieces.axis;
  const PiecePosition at = locate_piece(plan.pieces, o[axis]);
  if (!at.ok()) return {0, 0, at.status};
  return {at.piece, offset_replacing(plan.inputs[at.piece], o, axis, at.position), Status::Ok};
}

// SPLIT: `outputs` (caller-owned, pieces.count of them) are the outputs' layouts.
struct SplitPlan {
  TensorLayout input;
  AxisPieces pieces;
  const TensorLayout* outputs = nullptr;
};

// The input element that coordinate `o` of output `piece` receives: o with o[Axis] + base_piece.
constexpr DMLREF_HOST_DEVICE std::int64_t split_source(const SplitPlan& plan, std::uint32_t piece,
                                                       const std::uint32_t* o) noexcept {
  const std::uint32_t axis = plan.pieces.axis;
  return offset_replacing(plan.input, o, axis,
                          std::uint64_t{o[axis]} + piece_base(plan.pieces, piece));
}

// --- SCATTER ----------------------------------------------------------------------------------

struct ScatterPlan {
  TensorLayout input;
  TensorLayout indices;
  TensorLayout updates;
  TensorLayout output;
  std::uint32_t axis = 0;
  IndexPolicy policy = IndexPolicy::Error;
};

// The position along Axis that an index value selects (SC8 and the plan's policy).
template <IndexValue I>
constexpr DMLREF_HOST_DEVICE ResolvedIndex scatter_position(const ScatterPlan& plan,
                                                            I index) noexcept {
  return resolve_index(index, plan.output.sizes[plan.axis], plan.policy);
}

// The output element the update at indices coordinate `u` (holding `index`) targets:
// u with u[Axis] = the index's position.
template <IndexValue I>
constexpr DMLREF_HOST_DEVICE MappedOffset scatter_target(const ScatterPlan& plan,
                                                         const std::uint32_t* u,
                                                         I index) noexcept {
  const ResolvedIndex at = scatter_position(plan, index);
  if (!at.ok()) return {0, at.status};
  return {offset_replacing(plan.output, u, plan.axis, at.position), Status::Ok};
}

// --- GATHER_ND1 -------------------------------------------------------------------------------

// The spec's notation: R = output.rank, r / q / b the Input, Indices and Batch DimensionCounts,
// m the coordinates per index tuple, k = r - b - m trailing input dimensions copied whole, and
// `lead` the first meaningful output dimension (the output is right-aligned: t = B ++ G ++ S).
struct GatherNd1Plan {
  TensorLayout input;
  TensorLayout indices;
  TensorLayout output;
  std::uint32_t r = 0;
  std::uint32_t q = 0;
  std::uint32_t b = 0;
  std::uint32_t m = 0;
  std::uint32_t k = 0;
  std::uint32_t lead = 0;
  IndexPolicy policy = IndexPolicy::Error;
};

// The plan of layouts that passed validation (G1-G9).
constexpr DMLREF_HOST_DEVICE GatherNd1Plan make_gather_nd1_plan(
    const TensorLayout& input, const TensorLayout& indices, const TensorLayout& output,
    std::uint32_t r, std::uint32_t q, std::uint32_t b, IndexPolicy policy) noexcept {
  GatherNd1Plan plan{input, indices, output, r, q, b, 0, 0, 0, policy};
  plan.m = indices.sizes[indices.rank - 1];
  plan.k = r - b - plan.m;
  plan.lead = output.rank - ((q - 1) + plan.k);
  return plan;
}

// The offset in IndicesTensor of the first index of the tuple that output coordinate `o` reads:
// indices coordinate [0]*(R-q) ++ B ++ G ++ [0]. Index j of the tuple is Strides[R-1] * j further.
constexpr DMLREF_HOST_DEVICE std::int64_t gather_nd1_tuple_offset(const GatherNd1Plan& plan,
                                                                  const std::uint32_t* o) noexcept {
  const std::uint32_t rank = plan.output.rank;
  std::int64_t off = 0;
  for (std::uint32_t i = 0; i + 1 < plan.q; ++i) {
    off += static_cast<std::int64_t>(o[plan.lead + i]) * plan.indices.strides[rank - plan.q + i];
  }
  return off;
}

// The input element that output coordinate `o` receives, reading its index tuple from `indices`
// (IndicesTensor's element at coordinate 0): input coordinate
// [0]*(R-r) ++ B ++ [idx_0 .. idx_{m-1}] ++ S, each idx_j resolved in input dimension R-r+b+j
// under the plan's policy.
template <IndexValue I>
constexpr DMLREF_HOST_DEVICE MappedOffset gather_nd1_source(const GatherNd1Plan& plan,
                                                            const std::uint32_t* o,
                                                            const I* indices) noexcept {
  const std::uint32_t rank = plan.output.rank;
  const std::int64_t* const strides = plan.input.strides;
  std::int64_t off = 0;
  for (std::uint32_t i = 0; i < plan.b; ++i) {
    off += static_cast<std::int64_t>(o[plan.lead + i]) * strides[rank - plan.r + i];
  }
  const I* const tuple = indices + gather_nd1_tuple_offset(plan, o);
  const std::int64_t step = plan.indices.strides[rank - 1];
  for (std::uint32_t j = 0; j < plan.m; ++j) {
    const std::uint32_t dim = rank - plan.r + plan.b + j;
    const ResolvedIndex at =
        resolve_index(tuple[static_cast<std::int64_t>(j) * step], plan.input.sizes[dim],
                      plan.policy);
    if (!at.ok()) return {0, at.status};
    off += static_cast<std::int64_t>(at.position) * strides[dim];
  }
  for (std::uint32_t s = 0; s < plan.k; ++s) {
    off += static_cast<std::int64_t>(o[plan.lead + (plan.q - 1) + s]) *
           strides[rank - plan.k + s];
  }
  return {off, Status::Ok};
}

// --- REVERSE_SUBSEQUENCES ---------------------------------------------------------------------

struct ReverseSubsequencesPlan {
  TensorLayout input;
  TensorLayout lengths;
  TensorLayout output;
  std::uint32_t axis = 0;
};

// Where position `a` of a subsequence of `axis_size` elements reads from: the first `length`
// positions reversed, the rest unchanged. A length above the axis size clamps ("behaves as if
// clamped to the maximum"), it is not an error.
constexpr DMLREF_HOST_DEVICE std::uint32_t reversed_position(std::uint32_t a, std::uint64_t length,
                                                             std::uint32_t axis_size) noexcept {
  const std::uint64_t l = length < axis_size ? length : axis_size;
  return a < l ? static_cast<std::uint32_t>(l - 1 - a) : a;
}

// The offset in SequenceLengthsTensor of the length of the subsequence holding output coordinate
// `o` (R3: one length per subsequence, stored at coordinate 0 of Axis).
constexpr DMLREF_HOST_DEVICE std::int64_t reverse_subsequences_length_offset(
    const ReverseSubsequencesPlan& plan, const std::uint32_t* o) noexcept {
  return offset_replacing(plan.lengths, o, plan.axis, 0);
}

// The input element that output coordinate `o` receives, its subsequence being `length` long.
constexpr DMLREF_HOST_DEVICE std::int64_t reverse_subsequences_source(
    const ReverseSubsequencesPlan& plan, const std::uint32_t* o, std::uint64_t length) noexcept {
  const std::uint32_t axis = plan.axis;
  return offset_replacing(plan.input, o, axis,
                          reversed_position(o[axis], length, plan.input.sizes[axis]));
}

}  // namespace mapping
}  // namespace dmlref
