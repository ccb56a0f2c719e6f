// dmlref: the one strided-copy core every operator's fast path is built from.
//
// ONNX Runtime's shape (core/providers/cpu/tensor/copy.h): plan the copy once by dropping size-1
// dimensions and merging dimensions that are contiguous in every operand, then walk the outer
// dimensions with incremental offsets and move each innermost run with std::memcpy (long
// contiguous runs), inlined fixed-size copies (short contiguous runs), 16-byte reversal (reversed
// runs) or a tight element loop (strided, broadcast runs); transposes go through register-blocked
// tiles (SSE2, AVX2 where the CPU has it), and copies larger than a core's share of the caches
// use streaming stores. The plain coordinate loop it must
// equal is `reference_copy`, below; tests/test_fastpath_core.cpp diffs each path against it.
//
// Elements move bit for bit (tensors.md: NaN payloads, negative zero, float16 subnormals): every
// element goes through an unsigned integer of its size or through memcpy, never through a float
// register, where some targets (x87) would quiet a signalling NaN.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#endif

#include "dmlref/error.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/parallel.hpp"
#include "dmlref/prefetch.hpp"
#include "dmlref/tensor_view.hpp"

// For the few small functions whose whole point is to become part of their caller.
#if defined(__GNUC__) || defined(__clang__)
#define DMLREF_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define DMLREF_ALWAYS_INLINE inline
#endif

namespace dmlref {
namespace detail {

// Operands one plan can carry: a copy needs two; SCATTER (output, indices, updates) three.
inline constexpr std::size_t kMaxCopyOperands = 4;

// Contiguous runs of at least this many bytes move with one std::memcpy; shorter ones with
// copy_bytes_short, where memcpy's call and size dispatch cost more than the bytes themselves.
// Chosen from bench_strided_copy's run/ sweep (bench/README.md): below 128 bytes the inlined copy
// was faster for every element size (up to 2x at 16 bytes), 128-192 bytes were a tie within the
// noise, and from 256 bytes memcpy (AVX2 in glibc; the inlined copy is baseline SSE2) won.
inline constexpr std::size_t kMemcpyMinRunBytes = 128;

// A copy reduced to the fewest dimensions that describe it, for `operand_count` operands that
// share one shape. Dimension rank-1 is the innermost run; the others are walked by for_each_run.
// Reduction keeps row-major visiting order, so an operator whose result depends on that order
// (a scatter's last writer) can still use it.
struct CopyPlan {
  std::uint32_t rank = 0;  // 0 only when some size is 0 (nothing to copy); otherwise 1..8
  std::uint32_t operand_count = 0;
  // Only entries [0, rank) of operands [0, operand_count) are set; the rest are left
  // uninitialised on purpose. Zeroing these 320 bytes (a `rep stos`) made each plan cost 28 ns
  // instead of 6, and strided_copy plans on every call (bench/README.md).
  std::array<std::uint64_t, kMaxRank> sizes;
  // strides[operand][dimension], in elements, in the order the operands were given.
  std::array<std::array<std::int64_t, kMaxRank>, kMaxCopyOperands> strides;

  bool empty() const noexcept { return rank == 0; }
  std::uint64_t inner_size() const noexcept { return rank == 0 ? 0 : sizes[rank - 1]; }
  std::int64_t inner_stride(std::size_t operand) const noexcept {
    return rank == 0 ? 0 : strides[operand][rank - 1];
  }
  // How many innermost runs for_each_run visits (the product of the outer sizes).
  std::uint64_t run_count() const noexcept {
    if (rank == 0) return 0;
    std::uint64_t n = 1;
    for (std::uint32_t d = 0; d + 1 < rank; ++d) n *= sizes[d];
    return n;
  }
};

// Plans a copy (or any element-wise walk) over `sizes` for operands with the given strides.
// Drops size-1 dimensions (their stride never contributes) and merges dimension d into the one
// before it when, for every operand, stride[d-1] == stride[d] * size[d]: then the pair addresses
// the same offsets, in the same order, as one dimension of size[d-1] * size[d] and stride[d].
// Zero strides (broadcast) and negative strides (typed-layer reversal) merge by the same rule.
// A single element (all sizes 1, or rank 0) becomes one run of length 1 with unit strides.
inline CopyPlan make_copy_plan(std::span<const std::uint32_t> sizes,
                               std::span<const std::array<std::int64_t, kMaxRank>> strides) {
  if (sizes.size() > kMaxRank) {
    fail(ErrorCode::T2, "make_copy_plan: ", sizes.size(), " dimensions but at most ", kMaxRank,
         " are supported");
  }
  if (strides.empty() || strides.size() > kMaxCopyOperands) {
    fail(ErrorCode::InvalidOption, "make_copy_plan: ", strides.size(),
         " operands but a plan takes 1 to ", kMaxCopyOperands);
  }
  CopyPlan plan;
  plan.operand_count = static_cast<std::uint32_t>(strides.size());
  if (std::find(sizes.begin(), sizes.end(), 0u) != sizes.end()) return plan;

  std::uint32_t r = 0;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool merge = r > 0 && checked_mul(plan.sizes[r - 1], std::uint64_t{sizes[d]}).has_value();
    for (std::size_t k = 0; merge && k < strides.size(); ++k) {
      // Overflowing strides never describe a real tensor; leave such a dimension unmerged.
      const auto span = checked_mul(strides[k][d], static_cast<std::int64_t>(sizes[d]));
      merge = span && *span == plan.strides[k][r - 1];
    }
    if (!merge) ++r;
    plan.sizes[r - 1] = merge ? plan.sizes[r - 1] * sizes[d] : sizes[d];
    for (std::size_t k = 0; k < strides.size(); ++k) plan.strides[k][r - 1] = strides[k][d];
  }
  if (r == 0) {
    r = 1;
    plan.sizes[0] = 1;
    for (std::size_t k = 0; k < strides.size(); ++k) plan.strides[k][0] = 1;
  }
  plan.rank = r;
  return plan;
}

// Element offsets of each operand where a walk starts: a part's place in the whole plan
// (for_each_plan_part), zero for a whole plan.
using PlanBase = std::array<std::int64_t, kMaxCopyOperands>;

// How many runs RunCursor hands out at a time.
inline constexpr std::size_t kRunBatch = 64;

// The innermost runs of a plan, handed out a batch at a time in row-major order of the outer
// dimensions: next() fills offsets[k][i], operand k's element offset of the batch's i-th run
// counted from origin[k], and returns how many it filled (0 once every run was handed out).
// Offsets are updated incrementally (one add per step, one multiply-add per carry), never
// recomputed from a coordinate. The carry logic lives here, compiled once per operand count N,
// and callers loop over each batch inline: a walk per caller would compile it once per lambda.
template <std::size_t N>
class RunCursor {
 public:
  using Batch = std::array<std::array<std::int64_t, kRunBatch>, N>;

  explicit RunCursor(const CopyPlan& plan, const PlanBase& origin = {}) noexcept
      : plan_(plan), remaining_(plan.run_count()) {
    static_assert(N >= 1 && N <= kMaxCopyOperands);
    for (std::size_t k = 0; k < N; ++k) at_[k] = origin[k];
  }
  std::size_t next(Batch& offsets) noexcept;

 private:
  const CopyPlan& plan_;
  std::uint64_t remaining_;
  std::array<std::uint64_t, kMaxRank> c_{};
  std::array<std::int64_t, N> at_;
};

// Out of the class, so not implicitly inline: the compiler keeps one copy per N.
template <std::size_t N>
std::size_t RunCursor<N>::next(Batch& offsets) noexcept {
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, kRunBatch));
  if (n == 0) return 0;
  remaining_ -= n;
  if (plan_.rank <= 2) {
    // One outer dimension (the common case after merging): offsets in arithmetic progression.
    for (std::size_t k = 0; k < N; ++k) {
      const std::int64_t step = plan_.rank == 2 ? plan_.strides[k][0] : 0;
      for (std::size_t i = 0; i < n; ++i) {
        offsets[k][i] = at_[k] + static_cast<std::int64_t>(i) * step;
      }
      at_[k] += static_cast<std::int64_t>(n) * step;
    }
    return n;
  }
  const std::uint32_t outer = plan_.rank - 1;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < N; ++k) offsets[k][i] = at_[k];
    for (std::uint32_t d = outer; d-- > 0;) {
      if (++c_[d] < plan_.sizes[d]) {
        for (std::size_t k = 0; k < N; ++k) at_[k] += plan_.strides[k][d];
        break;
      }
      // Carry: step back over the whole dimension, then let the next outer one advance.
      c_[d] = 0;
      const auto back = static_cast<std::int64_t>(plan_.sizes[d] - 1);
      for (std::size_t k = 0; k < N; ++k) at_[k] -= back * plan_.strides[k][d];
    }
  }
  return n;
}

// Calls f(args...) and says whether the walk calling it should stop: an f that returns bool stops
// it by returning true (a search that must not cost more than the distance to what it finds); an
// f that returns nothing never does.
template <class F, class... Args>
DMLREF_ALWAYS_INLINE bool call_until(F& f, const Args&... args) {
  if constexpr (std::is_void_v<std::invoke_result_t<F&, const Args&...>>) {
    f(args...);
    return false;
  } else {
    return f(args...);
  }
}

// Calls f(offsets) once per innermost run, in row-major order of the outer dimensions, where
// offsets[k] is operand k's element offset of the run's first element, counted from origin[k]
// (RunCursor's batches). N must equal plan.operand_count so every operand gets an offset;
// walk_runs is for_each_run without that check, for the engine, whose plans are built with the
// operand count it walks them with: nothing on the executing path throws. Always inlined: its
// loop becomes the caller's, so no walker is compiled per lambda. An f that returns bool stops
// the walk by returning true (call_until).
template <std::size_t N, class F>
DMLREF_ALWAYS_INLINE void walk_runs(const CopyPlan& plan, F&& f, const PlanBase& origin = {}) {
  RunCursor<N> cursor(plan, origin);
  typename RunCursor<N>::Batch batch;
  while (const std::size_t n = cursor.next(batch)) {
    for (std::size_t i = 0; i < n; ++i) {
      std::array<std::int64_t, N> o;
      for (std::size_t k = 0; k < N; ++k) o[k] = batch[k][i];
      if (call_until(f, o)) return;
    }
  }
}

template <std::size_t N, class F>
void for_each_run(const CopyPlan& plan, F&& f) {
  if (plan.operand_count != N) {
    fail(ErrorCode::InvalidOption, "for_each_run: the plan has ", plan.operand_count,
         " operands but ", N, " offsets were asked for");
  }
  walk_runs<N>(plan, std::forward<F>(f));
}

// ---- plans split for threads -------------------------------------------------------------------

// The dimensions a plan is split along for `parts` parts: `first` to `last`, consecutive
// dimensions whose bits are set in `allowed`, taken together as `positions` positions in
// row-major order. The outermost such run of dimensions whose positions reach `parts`, taken no
// further inward than that (so a part is whole rows wherever the outer dimensions have enough
// positions between them, and an innermost dimension a few elements wide is never cut among
// threads while they do); else the run with the most positions. first == rank where no
// dimension is allowed.
struct PlanSplit {
  std::uint32_t first = 0;
  std::uint32_t last = 0;
  std::uint64_t positions = 1;
};

inline PlanSplit split_dimensions(const CopyPlan& plan, std::size_t parts,
                                  std::uint32_t allowed = ~0u) noexcept {
  const auto is_allowed = [&](std::uint32_t d) { return (allowed >> d & 1u) != 0; };
  PlanSplit best{plan.rank, plan.rank, 1};
  for (std::uint32_t first = 0; first < plan.rank; ++first) {
    if (!is_allowed(first)) continue;
    PlanSplit split{first, first, plan.sizes[first]};
    while (split.positions < parts && split.last + 1 < plan.rank && is_allowed(split.last + 1)) {
      ++split.last;
      // No wrap: positions < parts before the product, and sizes fit in 32 bits after T4.
      split.positions *= plan.sizes[split.last];
    }
    if (split.positions >= parts) return split;
    if (best.first == plan.rank || split.positions > best.positions) best = split;
  }
  return best;
}

// `part` narrowed to positions [begin, end) of dimension `d`; `base` moves to each operand's
// offset of the narrowed part's first element. The part visits its elements in the whole's order.
inline void narrow_plan(CopyPlan& part, PlanBase& base, std::uint32_t d, std::uint64_t begin,
                        std::uint64_t end) noexcept {
  part.sizes[d] = end - begin;
  for (std::uint32_t k = 0; k < part.operand_count; ++k) {
    base[k] += static_cast<std::int64_t>(begin) * part.strides[k][d];
  }
}

// Calls f(block, base) for the blocks of `part` that positions [begin, end) of dimensions d to
// a split's last taken together (row-major) cover, in the whole's order: a partial position of d
// at either end (its blocks one dimension further in), and the whole positions between as one
// block. `inner[d]`: the positions of the split's dimensions after d together (1 for its last).
template <class F>
void for_each_split_block(CopyPlan part, PlanBase base, std::uint32_t d,
                          const std::array<std::uint64_t, kMaxRank>& inner, std::uint64_t begin,
                          std::uint64_t end, F& f) {
  std::uint64_t first = begin / inner[d];
  const std::uint64_t last = end / inner[d];
  const std::uint64_t head = begin % inner[d], tail = end % inner[d];
  const auto at_position = [&](std::uint64_t position, std::uint64_t from, std::uint64_t to) {
    CopyPlan one = part;
    PlanBase one_base = base;
    narrow_plan(one, one_base, d, position, position + 1);
    for_each_split_block(one, one_base, d + 1, inner, from, to, f);
  };
  if (first == last) {  // within one position of d
    at_position(first, head, tail);
    return;
  }
  if (head != 0) at_position(first++, head, inner[d]);
  if (first < last) {
    CopyPlan whole = part;
    PlanBase whole_base = base;
    narrow_plan(whole, whole_base, d, first, last);
    f(static_cast<const CopyPlan&>(whole), static_cast<const PlanBase&>(whole_base));
  }
  if (tail != 0) at_position(last, 0, tail);
}

// Calls f(part, base) for parts of `plan` that together visit each of its elements once, on the
// engine's threads when the call moves `bytes` bytes or more (parallel_parts), else f(plan, {})
// on this thread. Parts split dimensions allowed by `allowed` only, and each is one or a few
// blocks of the plan (f is called once per block), each visiting its elements in the whole's
// order: so a walk whose result depends on order (SCATTER's last update) stays exact when
// elements that differ in an allowed dimension never write one place. f must not throw.
template <class F>
void for_each_plan_part(const CopyPlan& plan, std::uint64_t bytes, F&& f,
                        std::uint32_t allowed = ~0u) {
  // The parts the size and thread count allow, whatever the shape: split_dimensions looks for
  // dimensions with that many positions, then the split takes at most one part per position.
  std::size_t parts = plan.empty() ? 1 : parallel_parts(bytes, ~std::uint64_t{0});
  PlanSplit split{plan.rank, plan.rank, 1};
  if (parts > 1) {
    split = split_dimensions(plan, parts, allowed);
    parts = static_cast<std::size_t>(std::min<std::uint64_t>(parts, split.positions));
  }
  if (parts <= 1 || split.first == plan.rank) {
    f(plan, PlanBase{});
    return;
  }
  std::array<std::uint64_t, kMaxRank> inner{};
  inner[split.last] = 1;
  for (std::uint32_t d = split.last; d > split.first; --d) inner[d - 1] = inner[d] * plan.sizes[d];
  parallel_ranges(parts, split.positions, [&](std::uint64_t begin, std::uint64_t end) {
    for_each_split_block(plan, PlanBase{}, split.first, inner, begin, end, f);
  });
}

// How far ahead a loop over data-dependent places (GATHER_ND1's slices) prefetches, in tuples.
inline constexpr std::uint64_t kPrefetchTuples = 8;

// The unsigned integer an element's bits travel in.
template <std::size_t Bytes>
struct BitsOfSize;
template <> struct BitsOfSize<1> { using type = std::uint8_t; };
template <> struct BitsOfSize<2> { using type = std::uint16_t; };
template <> struct BitsOfSize<4> { using type = std::uint32_t; };
template <> struct BitsOfSize<8> { using type = std::uint64_t; };
template <class T>
using BitsOf = typename BitsOfSize<sizeof(T)>::type;

// `view` with its elements as the unsigned integer of their width. The fast paths run on these
// (see visit_width), so each is compiled once per width (4), not per element type (11). Their
// elements only ever move through memcpy or vector loads, shuffles and stores, never as values.
template <class T>
auto width_view(const TensorView<T>& view) noexcept {
  using W = std::conditional_t<std::is_const_v<T>, const BitsOf<T>, BitsOf<T>>;
  return TensorView<W>(reinterpret_cast<W*>(view.data()), view.layout());
}

template <class T>
inline BitsOf<T> load_bits(const T* p) noexcept {
  BitsOf<T> b;
  std::memcpy(&b, p, sizeof(T));
  return b;
}
template <class T>
inline void store_bits(T* p, BitsOf<T> b) noexcept {
  // Through void*: float16 is trivially copyable but, having a default member initializer, not
  // trivial, and GCC's -Wclass-memaccess would otherwise object to writing its bytes.
  std::memcpy(static_cast<void*>(p), &b, sizeof(T));
}

// dst[i * dst_stride] = src[i * src_stride] for i in [0, n), bit for bit. Any strides, including
// 0 on the source (broadcast) and negative ones. Indexing from the base each time (rather than
// bumping the pointers) never forms a pointer outside the tensor after the last element.
template <class T>
void copy_run_strided(const T* src, std::int64_t src_stride, T* dst, std::int64_t dst_stride,
                      std::uint64_t n) noexcept {
  std::int64_t from = 0, to = 0;  // as copy_fixed_runs: offsets by addition
  for (std::uint64_t i = 0; i < n; ++i, from += src_stride, to += dst_stride) {
    store_bits(dst + to, load_bits(src + from));
  }
}

// `runs` runs of one size `bytes` in [Half, 2 Half], run i from src + i * src_step to
// dst + i * dst_step: each two copies of Half bytes, from either end of the run.
template <std::size_t Half>
DMLREF_ALWAYS_INLINE void copy_runs_overlapping(const unsigned char* src, std::int64_t src_step,
                                                unsigned char* dst, std::int64_t dst_step,
                                                std::uint64_t runs, std::size_t bytes) noexcept {
  const std::size_t tail = bytes - Half;
  std::int64_t from = 0, to = 0;  // as copy_fixed_runs: offsets by addition
  for (std::uint64_t i = 0; i < runs; ++i, from += src_step, to += dst_step) {
    std::memcpy(dst + to, src + from, Half);
    std::memcpy(dst + to + tail, src + from + tail, Half);
  }
}

// `runs` runs of Bytes bytes, run i from src + i * src_step to dst + i * dst_step (steps in
// bytes), each one copy of a constant size (copy_runs' common short lengths, copy_short_runs'
// single bytes). Offsets step by addition (integers, so no pointer is formed past the last run),
// not by multiplying the index, four runs a step: the loop's own instructions were most of it
// (JOIN of two float32 pieces one element wide, 16 MiB, one core: 2.11-2.17 ms with two
// multiplies per run, 1.41-1.56 one run a step, 0.86-0.88 four).
template <std::size_t Bytes>
void copy_fixed_runs(const unsigned char* src, std::int64_t src_step, unsigned char* dst,
                     std::int64_t dst_step, std::uint64_t runs) noexcept {
  std::int64_t from = 0, to = 0;
  std::uint64_t i = 0;
  for (; i + 4 <= runs; i += 4, from += 4 * src_step, to += 4 * dst_step) {
    std::memcpy(dst + to, src + from, Bytes);
    std::memcpy(dst + to + dst_step, src + from + src_step, Bytes);
    std::memcpy(dst + to + 2 * dst_step, src + from + 2 * src_step, Bytes);
    std::memcpy(dst + to + 3 * dst_step, src + from + 3 * src_step, Bytes);
  }
  for (; i < runs; ++i, from += src_step, to += dst_step) std::memcpy(dst + to, src + from, Bytes);
}

// Copies `runs` runs of `bytes` bytes each (as copy_runs_overlapping places them; no run's
// destination overlaps a source) with fixed-size, inlined copies, as glibc's memcpy does for
// small sizes but without the call and its size dispatch: 16-byte blocks from both ends (two up
// to 32 bytes, two of 32 up to 64, then 64 bytes a step and the last 64 from the end), below 16
// bytes one 8-, 4-, 2- or 1-byte block from each end. Blocks overlap and write some bytes twice,
// which is harmless since source and destination are disjoint. The size's class is chosen once
// for all the runs (chosen per run, a chain of compares was most of a JOIN of pieces 5 float32
// wide).
DMLREF_ALWAYS_INLINE void copy_short_runs(const unsigned char* src, std::int64_t src_step,
                                          unsigned char* dst, std::int64_t dst_step,
                                          std::uint64_t runs, std::size_t bytes) noexcept {
  if (bytes > 64) {
    for (std::uint64_t i = 0; i < runs; ++i) {
      unsigned char* const d = dst + static_cast<std::int64_t>(i) * dst_step;
      const unsigned char* const s = src + static_cast<std::int64_t>(i) * src_step;
      for (std::size_t k = 0; k + 64 < bytes; k += 64) std::memcpy(d + k, s + k, 64);
      std::memcpy(d + bytes - 64, s + bytes - 64, 64);
    }
  } else if (bytes > 32) {
    copy_runs_overlapping<32>(src, src_step, dst, dst_step, runs, bytes);
  } else if (bytes >= 16) {
    copy_runs_overlapping<16>(src, src_step, dst, dst_step, runs, bytes);
  } else if (bytes >= 8) {
    copy_runs_overlapping<8>(src, src_step, dst, dst_step, runs, bytes);
  } else if (bytes >= 4) {
    copy_runs_overlapping<4>(src, src_step, dst, dst_step, runs, bytes);
  } else if (bytes >= 2) {
    copy_runs_overlapping<2>(src, src_step, dst, dst_step, runs, bytes);
  } else if (bytes == 1) {
    copy_fixed_runs<1>(src, src_step, dst, dst_step, runs);
  }
}

// One run of copy_short_runs. Always inlined, as it was small enough to be before it shared
// copy_short_runs' body: called per run, it cost JOIN of pieces 33 and 8 float32 5-8%.
DMLREF_ALWAYS_INLINE void copy_bytes_short(void* dst, const void* src,
                                           std::size_t bytes) noexcept {
  copy_short_runs(static_cast<const unsigned char*>(src), 0, static_cast<unsigned char*>(dst), 0,
                  1, bytes);
}

// Copies totalling at least this many bytes write their long runs with non-temporal (streaming)
// stores: a destination larger than a core's share of the last-level cache (a few MiB on current
// server parts) would only evict everything else, and streaming skips reading each destination
// line before writing it (a third of the memory traffic of a copy). glibc's memcpy switches the
// same way, but far later (above a threshold derived from the whole shared cache). At 16 MiB
// (bench_table, same run) JOIN along axis 0 went from 0.92 to 1.6 of memcpy, GATHER_ND1 of
// 256-byte rows from 0.62 to 0.76; 1 MiB and 256 MiB copies were unchanged (bench/README.md).
inline constexpr std::uint64_t kStreamMinBytes = std::uint64_t{8} << 20;

// Runs shorter than this stay on ordinary stores even in a streaming copy: a streamed line that
// is only partly written costs more than it saves.
inline constexpr std::uint64_t kStreamMinRunBytes = 256;

// Runs written back to back (each starting where the one before ended, as gathered rows fill a
// packed output) stream from this size: together they fill whole lines, so streaming still saves
// reading each line before it is written. GATHER_ND1 of 16 MiB of random 48-byte rows, one core:
// 3.5-3.7 ms with ordinary stores, 2.8-3.0 streamed; rows of 16 and 32 bytes gained nothing.
inline constexpr std::uint64_t kStreamMinPackedRunBytes = 48;

#if defined(__SSE2__) || defined(_M_X64)
// One 64-byte line from s to d, written with non-temporal stores (d 16-byte aligned).
DMLREF_ALWAYS_INLINE void stream_line(unsigned char* d, const unsigned char* s) noexcept {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
  const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
  _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
  _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
  _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
  _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
}

// Copies the bytes before d's first cache-line boundary (up to `bytes`) with ordinary stores and
// returns their count: see copy_bytes_streaming_lines. Inline copies, not a call of memcpy per
// run (a third of the time of streaming 64-byte gathered rows, with the tail's).
DMLREF_ALWAYS_INLINE std::size_t copy_stream_head(unsigned char* d, const unsigned char* s,
                                                  std::size_t bytes) noexcept {
  const std::size_t misalign = reinterpret_cast<std::uintptr_t>(d) % 64;
  const std::size_t head = std::min(bytes, misalign == 0 ? std::size_t{0} : 64 - misalign);
  copy_bytes_short(d, s, head);
  return head;
}
#endif

// The page of the interleaved streaming order (stream_interleaves_pages): runs of two pages or
// more go two pages at a time where the core gains from it.
inline constexpr std::size_t kStreamPage = 4096;

// Whether long streamed runs go two pages at a time, a line of each in turn: each page is then a
// stream of its own for the core's prefetchers, which keeps more reads in flight. Measured with
// bench_strided_copy's stream/ cases and bench_table, 256 MiB: on a 16-core Xeon, two threads
// streamed 12.8 GB/s line by line and 16.3 GB/s two pages at a time, and JOIN along axis 0 went
// from 0.70 to 0.89 of memcpy on one thread and from 1.25 to 1.69 on two; on an AMD EPYC (Zen)
// one thread streamed 20.6 GB/s line by line and 11.5 two pages at a time, so other cores keep
// the line order.
inline bool stream_interleaves_pages() noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
  static const bool intel = __builtin_cpu_is("intel");
  return intel;
#else
  return false;
#endif
}

// The unit a run must start and end on to be streamed whole, every byte of it (16 or 64 bytes).
// AMD's cores (Zen) combine a line streamed in parts, 16 bytes at a time, even by runs written
// apart: rows back to back, or a JOIN's pieces side by side, stream every line between them. Intel
// server cores write such a line to memory in parts: a JOIN of 16 MiB of float32 rows of 64
// bytes, output 16 bytes past a line (numpy's own placement), took 5.7 ms so against 1.24 ms
// with the output on a line (np.copyto: 1.3 ms); 256 MiB, 76 against 20.5 ms. There a run streams
// whole only if it is whole lines; others stream the lines they cover whole (16-core Xeon, one
// thread).
inline std::uint64_t stream_unit() noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
  static const std::uint64_t unit = __builtin_cpu_is("intel") ? 64 : 16;
  return unit;
#else
  return 16;
#endif
}

// Whether `bytes` at `dst` start and end on stream_unit() boundaries, so that stream_aligned_run
// writes every byte of them (false where the target has no streaming stores).
inline bool streams_aligned(const void* dst, std::uint64_t bytes) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  const std::uint64_t unit = stream_unit();
  return reinterpret_cast<std::uintptr_t>(dst) % unit == 0 && bytes % unit == 0;
#else
  (void)dst;
  (void)bytes;
  return false;
#endif
}

// memcpy(dst, src, bytes) for a run streams_aligned admits, with streaming stores 16 bytes at a
// time and no alignment work: where runs are narrow, copy_bytes_streaming's head and tail checks
// cost as much as the run (JOIN of 16-byte runs, 16 MiB: half the speed of ordinary stores).
DMLREF_ALWAYS_INLINE void stream_aligned_run(unsigned char* dst, const unsigned char* src,
                                             std::size_t bytes) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  // Whole lines first: a run of 64 bytes (JOIN's rows of 64) is then no loop at all, and its
  // speed no longer hangs on where the compiler places a 16-byte loop (one placement, straddling
  // a 64-byte boundary, cost bench_table's join_rows64 15%).
  std::size_t k = 0;
  for (; k + 64 <= bytes; k += 64) stream_line(dst + k, src + k);
  for (; k < bytes; k += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k)));
  }
#else
  std::memcpy(dst, src, bytes);
#endif
}

// memcpy(d, s, bytes), the lines [d, d + bytes) covers whole with streaming stores and the
// partial lines at either end with ordinary stores: runs side by side that each write their
// partial lines so never write a line both ways (a line written partly by streaming stores and
// partly by ordinary ones is evicted between them: gathering 16 MiB of packed 100-byte rows took
// 14.6 ms so against 0.5 ms for a memcpy of the output, and REVERSE of 260-byte rows 2.7 ms
// against 0.45). The caller issues stream_fence(). Always inlined, as the call costs as much as a
// short run (a gathered 64-byte row).
DMLREF_ALWAYS_INLINE void stream_whole_lines(unsigned char* d, const unsigned char* s,
                                             std::size_t bytes) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  std::size_t i = copy_stream_head(d, s, bytes);
  for (; i + 64 <= bytes; i += 64) stream_line(d + i, s + i);
  copy_bytes_short(d + i, s + i, bytes - i);
#else
  std::memcpy(d, s, bytes);
#endif
}

// memcpy(dst, src, bytes) for non-overlapping ranges, writing with non-temporal stores where the
// target has them (x86-64: SSE2 movntdq). The caller issues stream_fence() before anyone else may
// read the destination. A run that streams_aligned is streamed whole, stream_unit() bytes at a
// time: runs like it side by side (rows of one size in a packed output) stream every line
// between them. Any other run streams the lines it covers whole (stream_whole_lines).
DMLREF_ALWAYS_INLINE void copy_bytes_streaming_lines(void* dst, const void* src,
                                                     std::size_t bytes) noexcept {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (streams_aligned(d, bytes)) {
    stream_aligned_run(d, s, bytes);
  } else {
    stream_whole_lines(d, s, bytes);
  }
}

// A staging area for streamed copies whose narrow runs fill a contiguous destination between
// them but not on line boundaries (numpy places its large arrays 16 bytes past a line): see
// StagedStream. Up to kStageBytes at a time.
inline constexpr std::size_t kStageBytes = 4096;
struct alignas(64) StreamStage {
  unsigned char bytes[kStageBytes + 64];
};

// A contiguous destination written a batch at a time: each batch's runs are copied side by side
// into a StreamStage at the destination's offset within a line (begin), in L1, and the stage's
// whole lines then stream out (end). The partial line a batch ends in is carried into the next
// batch, which continues the destination, and streams whole with it: only a stream's first and
// last partial lines take ordinary stores. Streaming each batch's partial lines with ordinary
// stores stalled every later store on reading that line from memory (AMD, SPLIT of 256 MiB into
// rows of 64 bytes: 4x slower than streaming them in parts). The carry and a partial first line
// (under 64 bytes, once per batch of up to kStageBytes) are copied with memcpy.
class StagedStream {
 public:
  // Where the batch for `dst` goes in `stage`. A dst that does not continue the stream flushes
  // it first.
  unsigned char* begin(StreamStage& stage, unsigned char* dst) noexcept {
    if (dst != next_) flush();
    at_ = dst;
    std::memcpy(stage.bytes, carry_, carried_);
    return stage.bytes + offset(dst);
  }
  // Writes the batch of `bytes` staged since begin: whole lines streamed, the part of the line
  // dst starts in with ordinary stores if the stream did not write that line's start, the last
  // partial line carried.
  void end(const StreamStage& stage, std::size_t bytes) noexcept {
    const std::size_t off = offset(at_), n = off + bytes;
    next_ = at_ + bytes;
    if (carried_ == 0 && off != 0 && n < 64) {
      std::memcpy(at_, stage.bytes + off, bytes);  // no line of this batch is the stream's
      return;
    }
    // From the line's start where a carry continues it, else from dst: stream_whole_lines then
    // writes the rest of dst's line with ordinary stores.
    const std::size_t first = carried_ != 0 ? 0 : off;
    const std::size_t last_line = n / 64 * 64;  // where the stage's last partial line starts
    stream_whole_lines(at_ - (off - first), stage.bytes + first, last_line - first);
    carried_ = n - last_line;
    std::memcpy(carry_, stage.bytes + last_line, carried_);
  }
  // Writes the carried partial line with ordinary stores.
  void flush() noexcept {
    if (carried_ != 0) std::memcpy(next_ - carried_, carry_, carried_);
    carried_ = 0;
  }

 private:
  static std::size_t offset(const void* p) noexcept {
    return reinterpret_cast<std::uintptr_t>(p) % 64;
  }
  unsigned char* next_ = nullptr;  // where the stream continues
  unsigned char* at_ = nullptr;    // the current batch's destination
  std::size_t carried_ = 0;        // bytes of next_'s line carried, from its start
  unsigned char carry_[64];
};

// The same, two 4 KiB pages at a time, a line of each in turn (stream_interleaves_pages); what
// is left after the last pair of pages goes line by line.
inline void copy_bytes_streaming_pages(void* dst, const void* src, std::size_t bytes) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  // As copy_bytes_streaming_lines: ordinary stores for a partial first line, unless every byte
  // streams.
  std::size_t i = streams_aligned(d, bytes) ? 0 : copy_stream_head(d, s, bytes);
  for (; i + 2 * kStreamPage <= bytes; i += 2 * kStreamPage) {
    for (std::size_t j = i; j < i + kStreamPage; j += 64) {
      stream_line(d + j, s + j);
      stream_line(d + j + kStreamPage, s + j + kStreamPage);
    }
  }
  copy_bytes_streaming_lines(d + i, s + i, bytes - i);
#else
  std::memcpy(dst, src, bytes);
#endif
}

// copy_bytes_streaming_lines, or _pages for a run of two pages or more where the core streams
// faster so.
DMLREF_ALWAYS_INLINE void copy_bytes_streaming(void* dst, const void* src,
                                               std::size_t bytes) noexcept {
  if (bytes >= 2 * kStreamPage && stream_interleaves_pages()) {
    copy_bytes_streaming_pages(dst, src, bytes);
  } else {
    copy_bytes_streaming_lines(dst, src, bytes);
  }
}

// Orders the streaming stores before everything after it (they are weakly ordered otherwise).
inline void stream_fence() noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  _mm_sfence();
#endif
}

// One contiguous run of `bytes` bytes, with ordinary stores: memcpy from `memcpy_min`
// (kMemcpyMinRunBytes unless the caller knows better), copy_bytes_short below it. Inline: where
// runs go one at a time (copy_run, a JOIN's blocks side by side), a call and a size dispatch
// per run cost more than a narrow run.
DMLREF_ALWAYS_INLINE void copy_one_run(const unsigned char* src, unsigned char* dst,
                                       std::size_t bytes,
                                       std::size_t memcpy_min = kMemcpyMinRunBytes) noexcept {
  if (bytes >= memcpy_min) {
    std::memcpy(dst, src, bytes);
  } else {
    copy_bytes_short(dst, src, bytes);
  }
}

// dst[i * dst_stride] = *src for i in [0, n): the source element is read once.
template <class T>
void copy_run_broadcast(const T* src, T* dst, std::int64_t dst_stride, std::uint64_t n) noexcept {
  const BitsOf<T> value = load_bits(src);
  if (dst_stride == 1) {
    for (std::uint64_t i = 0; i < n; ++i) store_bits(dst + i, value);
  } else {
    for (std::uint64_t i = 0; i < n; ++i) {
      store_bits(dst + static_cast<std::int64_t>(i) * dst_stride, value);
    }
  }
}

// The plain form of copy_run_reversed below, and its tail: dst[i] = src[n - 1 - i], i in [0, n).
template <class T>
void copy_run_reversed_elements(const T* src, T* dst, std::uint64_t n) noexcept {
  for (std::uint64_t i = 0; i < n; ++i) store_bits(dst + i, load_bits(src + (n - 1 - i)));
}

#if defined(__SSE2__) || defined(_M_X64)
// The 16 bytes of `v` as 16 / Bytes elements in reverse order. SSE2 only (baseline x86-64): no
// byte shuffle, so 1- and 2-byte elements are reversed in steps (swap the bytes of each 16-bit
// lane, reverse the lanes within each 64-bit half, swap the halves).
template <std::size_t Bytes>
inline __m128i reverse_elements_16(__m128i v) noexcept {
  if constexpr (Bytes == 1) v = _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8));
  if constexpr (Bytes <= 2) {
    v = _mm_shufflelo_epi16(v, _MM_SHUFFLE(0, 1, 2, 3));
    v = _mm_shufflehi_epi16(v, _MM_SHUFFLE(0, 1, 2, 3));
    return _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2));
  } else if constexpr (Bytes == 4) {
    return _mm_shuffle_epi32(v, _MM_SHUFFLE(0, 1, 2, 3));
  } else {
    return _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2));
  }
}
#endif

// dst[i] = src[n - 1 - i] for i in [0, n): a contiguous run copied reversed, the inner step of
// REVERSE_SUBSEQUENCES. src and dst point at the first element of each contiguous run. On x86-64
// 16 bytes move at a time, reversed in a register; the element loop finishes the tail (and is
// the whole of it elsewhere). Shuffles move bits, never through a float register.
template <class T>
void copy_run_reversed(const T* src, T* dst, std::uint64_t n) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  constexpr std::uint64_t kLanes = 16 / sizeof(T);
  std::uint64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {  // two registers per step: loads overlap
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (n - i - kLanes)));
    const __m128i lo =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (n - i - 2 * kLanes)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), reverse_elements_16<sizeof(T)>(hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + kLanes),
                     reverse_elements_16<sizeof(T)>(lo));
  }
  for (; i + kLanes <= n; i += kLanes) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (n - i - kLanes)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), reverse_elements_16<sizeof(T)>(v));
  }
  copy_run_reversed_elements(src, dst + i, n - i);
#else
  copy_run_reversed_elements(src, dst, n);
#endif
}

// dst[i * dst_stride] = src[i * src_stride] for i in [0, n), choosing the fastest way per run:
// memcpy or copy_bytes_short for unit-stride runs (copy_one_run), then the loops above.
template <class T>
void copy_run(const T* src, std::int64_t src_stride, T* dst, std::int64_t dst_stride,
              std::uint64_t n) noexcept {
  if (src_stride == 1 && dst_stride == 1) {
    copy_one_run(reinterpret_cast<const unsigned char*>(src), reinterpret_cast<unsigned char*>(dst),
                 n * sizeof(T));
  } else if (src_stride == 0) {
    copy_run_broadcast(src, dst, dst_stride, n);
  } else if (src_stride == -1 && dst_stride == 1 && n > 0) {
    copy_run_reversed(src - static_cast<std::ptrdiff_t>(n - 1), dst, n);
  } else {
    copy_run_strided(src, src_stride, dst, dst_stride, n);
  }
}

// Whether copy_runs copies runs of `bytes` bytes as a constant size (its switch below).
constexpr bool copy_runs_size_is_constant(std::uint64_t bytes) noexcept {
  return bytes == 2 || bytes == 4 || bytes == 8 || bytes == 12 || bytes == 16 || bytes == 24 ||
         bytes == 32 || bytes == 48 || bytes == 64;
}

// `runs` runs of `bytes` contiguous bytes, run i from src + i * src_step to dst + i * dst_step
// (steps in bytes), as the fastest of: streaming stores (from `stream_min` bytes, when not 0;
// the caller fences), memcpy (from kMemcpyMinRunBytes), or for the common short lengths (2-64
// bytes: what narrow blocks of a JOIN or SPLIT along the last axis are) a copy whose size is a
// constant, so each run compiles to one or two register moves with no size dispatch, else
// copy_bytes_short. Bytes, not the element type, parameterise it, so all widths share it.
inline void copy_runs(const unsigned char* src, std::int64_t src_step, unsigned char* dst,
                      std::int64_t dst_step, std::uint64_t runs, std::size_t bytes,
                      std::size_t stream_min = 0,
                      std::size_t memcpy_min = kMemcpyMinRunBytes) noexcept {
  const auto at = [=](std::uint64_t i) { return static_cast<std::int64_t>(i); };
  if (stream_min != 0 && bytes >= stream_min) {
    for (std::uint64_t i = 0; i < runs; ++i) {
      copy_bytes_streaming(dst + at(i) * dst_step, src + at(i) * src_step, bytes);
    }
    return;
  }
  if (bytes >= memcpy_min) {
    for (std::uint64_t i = 0; i < runs; ++i) {
      std::memcpy(dst + at(i) * dst_step, src + at(i) * src_step, bytes);
    }
    return;
  }
  switch (bytes) {
    case 2: return copy_fixed_runs<2>(src, src_step, dst, dst_step, runs);
    case 4: return copy_fixed_runs<4>(src, src_step, dst, dst_step, runs);
    case 8: return copy_fixed_runs<8>(src, src_step, dst, dst_step, runs);
    case 12: return copy_fixed_runs<12>(src, src_step, dst, dst_step, runs);
    case 16: return copy_fixed_runs<16>(src, src_step, dst, dst_step, runs);
    case 24: return copy_fixed_runs<24>(src, src_step, dst, dst_step, runs);
    case 32: return copy_fixed_runs<32>(src, src_step, dst, dst_step, runs);
    case 48: return copy_fixed_runs<48>(src, src_step, dst, dst_step, runs);
    case 64: return copy_fixed_runs<64>(src, src_step, dst, dst_step, runs);
    default:
      copy_short_runs(src, src_step, dst, dst_step, runs, bytes);
  }
}

// The part of copy_with_plan (below) where every run is contiguous in both operands: it moves
// bytes, so it is compiled once for every element width. Runs of `run_bytes` bytes start at
// element offsets of `element_size` bytes.
inline void copy_contiguous_runs(const CopyPlan& plan, const unsigned char* src,
                                 unsigned char* dst, std::size_t element_size, bool stream,
                                 std::size_t memcpy_min_run_bytes) {
  const std::size_t bytes = plan.inner_size() * element_size;
  const auto element = static_cast<std::int64_t>(element_size);
  const std::size_t stream_min = stream ? kStreamMinRunBytes : 0;
  if (plan.rank <= 2) {
    // One outer dimension (what narrow blocks merge to): one loop with the steps in registers.
    const std::uint64_t runs = plan.rank == 2 ? plan.sizes[0] : 1;
    const std::int64_t src_step = plan.rank == 2 ? plan.strides[0][0] * element : 0;
    const std::int64_t dst_step = plan.rank == 2 ? plan.strides[1][0] * element : 0;
    copy_runs(src, src_step, dst, dst_step, runs, bytes, stream_min, memcpy_min_run_bytes);
  } else {
    // The dimension before the runs is copy_runs' own loop, so the kind of copy is chosen once
    // per row of runs, not once per run: walk_runs visits the plan without it (as
    // copy_transposed does), with offsets at the start of each row of runs.
    const std::uint32_t r = plan.rank - 2;
    CopyPlan outer = plan;
    outer.rank = plan.rank - 1;
    const std::uint64_t runs = plan.sizes[r];
    const std::int64_t src_step = plan.strides[0][r] * element;
    const std::int64_t dst_step = plan.strides[1][r] * element;
    walk_runs<2>(outer, [=](const std::array<std::int64_t, 2>& o) {
      copy_runs(src + o[0] * element, src_step, dst + o[1] * element, dst_step, runs, bytes,
                stream_min, memcpy_min_run_bytes);
    });
  }
  if (stream_min != 0) stream_fence();
}

// Whether the last two dimensions of a two-operand plan are a transpose: one operand is
// unit-stride along the innermost dimension and the other along the one before it. Walked run
// by run, such a copy touches a new cache line of the other operand at every element.
inline bool is_transpose(const CopyPlan& plan) noexcept {
  if (plan.rank < 2) return false;
  const std::int64_t src_inner = plan.strides[0][plan.rank - 1];
  const std::int64_t dst_inner = plan.strides[1][plan.rank - 1];
  const std::int64_t src_outer = plan.strides[0][plan.rank - 2];
  const std::int64_t dst_outer = plan.strides[1][plan.rank - 2];
  return (dst_inner == 1 && src_outer == 1 && src_inner != 1) ||
         (src_inner == 1 && dst_outer == 1 && dst_inner != 1);
}

// The elements of `element_bytes` from p up to its next 64-byte cache line boundary: 0 where p
// is on one. Where a row's first line starts: the streamed bands of a transpose, REVERSE's tiles.
inline std::uint64_t elements_to_line(const void* p, std::size_t element_bytes) noexcept {
  return (64 - reinterpret_cast<std::uintptr_t>(p) % 64) % 64 / element_bytes;
}

// One transpose in bytes: b[x * b_step + y] = a[y * a_step + x] for x in [0, nx), y in [0, ny),
// elements of `Bytes` bytes (steps in bytes; `a` and `b` each unit-stride along their rows).
struct TransposeArgs {
  const unsigned char* a;
  std::int64_t a_step;
  unsigned char* b;
  std::int64_t b_step;
  std::uint64_t nx;
  std::uint64_t ny;
  bool stream = false;  // b's whole lines through streaming stores (the caller fences)
};

// b[x][y] = a[y][x] element by element, for x in [x0, x1), y in [y0, y1): the edges of the tiles,
// and the whole of a transpose with a side shorter than a block. The longer side is the outer loop,
// so each operand is walked once: with few x (a 3-element a row, b three long rows) the rows of a
// go by in order, each read whole, not once per x (float32 {N, 3} transposed, 256 MiB, one core:
// 56 ms, 62 the other way). One-byte elements walk b's rows instead: a byte stored to each of
// several rows in turn was slower than re-reading a (uint8 {N, 3}: 188 ms, 110 along b's rows).
// The fields are read into locals once: the stores go through bytes, which may alias `t`, and
// reloading them every element cost 1.6-2x.
template <std::size_t Bytes>
inline void transpose_elements(const TransposeArgs& t, std::uint64_t x0, std::uint64_t x1,
                               std::uint64_t y0, std::uint64_t y1) noexcept {
  if (x0 >= x1 || y0 >= y1) return;
  constexpr auto kBytes = static_cast<std::int64_t>(Bytes);
  const std::int64_t a_step = t.a_step, b_step = t.b_step;
  const auto xs = static_cast<std::int64_t>(x0), ys = static_cast<std::int64_t>(y0);
  const unsigned char* const a = t.a + (ys * a_step + xs * kBytes);
  unsigned char* const b = t.b + (xs * b_step + ys * kBytes);
  const std::uint64_t nx = x1 - x0, ny = y1 - y0;
  // (outer, inner): the steps of a and of b along each, the outer loop along the longer side.
  const bool y_outer = Bytes > 1 && nx < ny;
  const std::uint64_t n_outer = y_outer ? ny : nx, n_inner = y_outer ? nx : ny;
  const std::int64_t a_outer = y_outer ? a_step : kBytes, a_inner = y_outer ? kBytes : a_step;
  const std::int64_t b_outer = y_outer ? kBytes : b_step, b_inner = y_outer ? b_step : kBytes;
  // An inner side of 2, 3 or 4 (pairs, RGB, RGBA) as a constant count, the loop gone: float32
  // {N, 3} transposed, 16 MiB, one core, 3.1-3.8 ms with a loop of 3, 2.3-2.4 without; uint8
  // {3, N} 13.3-13.7 and 8.9-9.2.
  const auto loop = [&]<std::uint64_t kInner>(std::integral_constant<std::uint64_t, kInner>) {
    const std::uint64_t inner = kInner != 0 ? kInner : n_inner;
    for (std::uint64_t i = 0; i < n_outer; ++i) {
      const unsigned char* ap = a + static_cast<std::int64_t>(i) * a_outer;
      unsigned char* bp = b + static_cast<std::int64_t>(i) * b_outer;
      std::uint64_t j = 0;
      // Four at a time: a loop of one small element a step ran at the speed of its own
      // bookkeeping, and of where the compiler placed it (uint8 {N, 3}: 6.5-10.7 ms by build).
      for (; j + 4 <= inner; j += 4, ap += 4 * a_inner, bp += 4 * b_inner) {
        std::memcpy(bp, ap, Bytes);
        std::memcpy(bp + b_inner, ap + a_inner, Bytes);
        std::memcpy(bp + 2 * b_inner, ap + 2 * a_inner, Bytes);
        std::memcpy(bp + 3 * b_inner, ap + 3 * a_inner, Bytes);
      }
      for (; j < inner; ++j, ap += a_inner, bp += b_inner) std::memcpy(bp, ap, Bytes);
    }
  };
  switch (n_inner) {
    case 2: return loop(std::integral_constant<std::uint64_t, 2>{});
    case 3: return loop(std::integral_constant<std::uint64_t, 3>{});
    case 4: return loop(std::integral_constant<std::uint64_t, 4>{});
    default: return loop(std::integral_constant<std::uint64_t, 0>{});
  }
}

// The tiles of a transpose, register-blocked: K x KX element blocks moved by `block` (which loads K
// rows of a, KX elements each, and stores them transposed as KX rows of b, K elements each). The
// blocks go in bands one cache line of a wide (64 bytes of x), each swept along all of y: every
// line of a is used whole by consecutive blocks, and the band's lines of b are written in address
// order, row by row, each completed while still in the L1 cache. The edges go element by element.
// (Bands one line of b wide swept along x, as the streaming copy below goes, were half as fast
// in the cache: bench_table's join_transposed at 1 MiB 0.36-0.37 of memcpy against 0.66-0.70 in
// the same runs, bench_strided_copy's square float32 transpose at 256 KiB 0.31 against 0.77.
// The b lines such a sweep leaves half written, a power of two apart, share a few L1 sets and
// were evicted before they were complete.)
// In a streaming copy, bands one line of b wide are swept along x instead, a chunk of
// kTransposeChunkLines lines of a at a time: the chunk is transposed into a small buffer first
// and each of b's lines then written whole with streaming stores, so b's lines are never read
// before being written and none leaves the write-combining buffers half full (bench_table's
// join_transposed, idle: 0.32-0.34 to 0.52-0.53 of memcpy at 16 MiB, 0.40-0.44 to 0.82-0.85 at
// 256 MiB).
inline constexpr std::uint64_t kTransposeChunkLines = 4;

// A streaming transpose streams b's lines only where b has at least this many rows: a band's
// lines of b (one per row) then outgrow the L1 and L2 caches' share for them, and ordinary
// stores would read each line before writing it; with fewer rows the lines are completed while
// cached, and the streamed bands' small chunks cost more than they save. float32, one core, b's
// rows (nx) by the rest, ms with ordinary stores / streamed: 4 rows, 16 MiB 1.51 / 3.07, 256 MiB
// 24.7 / 34.5; 64 rows 1.88 / 3.33, 59.9 / 59.0; 256 rows 2.36 / 3.66, 65.4 / 64.9; 1024 rows
// 2.90 / 3.25, 76.5 / 61.5; 4096 rows 4.42 / 3.29, 74.2 / 63.0 (float64, 2 rows: 1.27-1.33 /
// 2.05-2.22, 25.7 / 35.4).
inline constexpr std::uint64_t kTransposeStreamMinRows = 1024;

// Always inlined, so that in transpose_tiles_avx2 it and its AVX2 blocks compile as one function.
template <std::size_t Bytes, std::uint64_t K, std::uint64_t KX = K, class Block>
DMLREF_ALWAYS_INLINE void transpose_tiles(const TransposeArgs& t, Block block) noexcept {
  constexpr std::uint64_t kBand = std::max<std::uint64_t>(64 / Bytes, std::max(K, KX));
  constexpr std::uint64_t kChunk = kTransposeChunkLines * kBand;
  static_assert(kBand * Bytes == 64 && kBand % K == 0 && kBand % KX == 0);
  constexpr auto kBytes = static_cast<std::int64_t>(Bytes);
  const std::uint64_t nx = t.nx, ny = t.ny;
  const std::uint64_t x_end = nx - nx % KX;
  // Streamed: the whole bands of b's lines, y in [y_stream, y_streamed), where those are whole
  // cache lines: b's row step a multiple of 64 bytes, and the bands starting at the first line
  // boundary of b's rows (y_stream elements in: numpy's arrays start 16 bytes past a line, and
  // 256 MiB float32 {16384, 4096} transposed there ran at 0.29 of memcpy with nothing streamed,
  // against 0.39 for arrays on a line). Otherwise each 64 bytes of a row straddle two lines, and
  // streaming stores to parts of lines cost more than ordinary ones (16 MiB float32 {1171,
  // 3583} transposed, one core, bench_table's matrix: 0.05 of memcpy streamed, 0.55-0.59 not;
  // float64 {1875, 1117}: 0.13, 0.47-0.51). And only with kTransposeStreamMinRows rows of b or
  // more.
  const bool streams = t.stream && t.b_step % 64 == 0 && nx >= kTransposeStreamMinRows;
  const std::uint64_t y_stream = streams ? std::min(ny, elements_to_line(t.b, Bytes)) : 0;
  const std::uint64_t y_streamed = streams ? y_stream + (ny - y_stream) / kBand * kBand : 0;
  for (std::uint64_t y0 = y_stream; y0 < y_streamed; y0 += kBand) {
    // One line of b per x (kBand * Bytes = 64): built in `lines`, then streamed whole.
    alignas(64) unsigned char lines[kChunk * 64];
    const auto yy0 = static_cast<std::int64_t>(y0);
    for (std::uint64_t x0 = 0; x0 < x_end; x0 += kChunk) {
      const std::uint64_t x1 = std::min(x_end, x0 + kChunk);
      for (std::uint64_t y = y0; y < y0 + kBand; y += K) {
        const auto yy = static_cast<std::int64_t>(y);
        for (std::uint64_t x = x0; x < x1; x += KX) {
          block(t.a + (yy * t.a_step + static_cast<std::int64_t>(x) * kBytes), t.a_step,
                lines + ((x - x0) * 64 + (y - y0) * Bytes), 64);
        }
      }
      for (std::uint64_t x = x0; x < x1; ++x) {
        copy_bytes_streaming(t.b + (static_cast<std::int64_t>(x) * t.b_step + yy0 * kBytes),
                             lines + (x - x0) * 64, 64);
      }
    }
  }
  // The rest (all of it when not streaming), in bands of a's lines: y in [0, y_stream) and
  // [y_streamed, ny), the whole blocks and then the elements left over. (A loop, not a lambda,
  // whose body would not inherit transpose_tiles_avx2's target attribute.)
  const std::uint64_t ranges[2][2] = {{0, y_stream}, {std::max(y_stream, y_streamed), ny}};
  for (const auto& range : ranges) {
    const std::uint64_t y_begin = range[0], y_stop = range[1];
    const std::uint64_t y_end = y_begin + (y_stop - y_begin) / K * K;
    for (std::uint64_t x0 = 0; x0 < x_end; x0 += kBand) {
      const std::uint64_t x1 = std::min(x_end, x0 + kBand);
      for (std::uint64_t y = y_begin; y < y_end; y += K) {
        const auto yy = static_cast<std::int64_t>(y);
        for (std::uint64_t x = x0; x < x1; x += KX) {
          const auto xx = static_cast<std::int64_t>(x);
          block(t.a + (yy * t.a_step + xx * kBytes), t.a_step,
                t.b + (xx * t.b_step + yy * kBytes), t.b_step);
        }
      }
    }
    transpose_elements<Bytes>(t, 0, x_end, y_end, y_stop);
  }
  transpose_elements<Bytes>(t, x_end, nx, 0, ny);
}

#if defined(__SSE2__) || defined(_M_X64)
// SSE2 K x K blocks (K = 16 / Bytes): rows interleaved pairwise at doubling widths (unpack of
// 8-, 16-, 32-, 64-bit lanes), which moves bits only. Bytes go 16 x 16 (16-byte loads and stores)
// rather than 8 x 8 through 8-byte ones: a quarter of the stores per byte, and 1-byte transposes
// were the slowest of bench_table's matrix.
template <std::size_t Bytes>
inline constexpr std::uint64_t kSse2Block = 16 / Bytes;

template <std::size_t Bytes>
inline void transpose_block_sse2(const unsigned char* a, std::int64_t as, unsigned char* b,
                                 std::int64_t bs) noexcept {
  const auto load = [&](std::int64_t y) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + y * as));
  };
  const auto store = [&](std::int64_t x, __m128i v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b + x * bs), v);
  };
  if constexpr (Bytes == 8) {
    const __m128i r0 = load(0), r1 = load(1);
    store(0, _mm_unpacklo_epi64(r0, r1));
    store(1, _mm_unpackhi_epi64(r0, r1));
  } else if constexpr (Bytes == 4) {
    const __m128i r0 = load(0), r1 = load(1), r2 = load(2), r3 = load(3);
    const __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpackhi_epi32(r0, r1);
    const __m128i t2 = _mm_unpacklo_epi32(r2, r3), t3 = _mm_unpackhi_epi32(r2, r3);
    store(0, _mm_unpacklo_epi64(t0, t2));
    store(1, _mm_unpackhi_epi64(t0, t2));
    store(2, _mm_unpacklo_epi64(t1, t3));
    store(3, _mm_unpackhi_epi64(t1, t3));
  } else if constexpr (Bytes == 2) {
    // Eight 16-bit lanes: pairs of rows, then quads, then all eight.
    __m128i r[8];
    for (std::int64_t y = 0; y < 8; ++y) r[static_cast<std::size_t>(y)] = load(y);
    __m128i p[8];  // pairs of rows interleaved: p[i] columns 0-3, p[i + 1] columns 4-7
    for (std::size_t i = 0; i < 8; i += 2) {
      p[i] = _mm_unpacklo_epi16(r[i], r[i + 1]);
      p[i + 1] = _mm_unpackhi_epi16(r[i], r[i + 1]);
    }
    for (std::size_t h = 0; h < 2; ++h) {  // columns 0-3, then 4-7
      const __m128i q0 = _mm_unpacklo_epi32(p[h], p[2 + h]);
      const __m128i q1 = _mm_unpackhi_epi32(p[h], p[2 + h]);
      const __m128i q2 = _mm_unpacklo_epi32(p[4 + h], p[6 + h]);
      const __m128i q3 = _mm_unpackhi_epi32(p[4 + h], p[6 + h]);
      const auto x = static_cast<std::int64_t>(4 * h);
      store(x, _mm_unpacklo_epi64(q0, q2));
      store(x + 1, _mm_unpackhi_epi64(q0, q2));
      store(x + 2, _mm_unpacklo_epi64(q1, q3));
      store(x + 3, _mm_unpackhi_epi64(q1, q3));
    }
  } else {
    // Sixteen bytes: pair[i] pairs of rows (columns 0-7 in pair[2i], 8-15 in pair[2i + 1]);
    // quad[4q + k] quads of rows, columns 4k to 4k + 3; octet[8o + j] octets of rows, columns 2j
    // and 2j + 1; then each column's two octets side by side.
    __m128i pair[16], quad[16];
    for (std::size_t i = 0; i < 16; i += 2) {
      const __m128i r0 = load(static_cast<std::int64_t>(i));
      const __m128i r1 = load(static_cast<std::int64_t>(i + 1));
      pair[i] = _mm_unpacklo_epi8(r0, r1);
      pair[i + 1] = _mm_unpackhi_epi8(r0, r1);
    }
    for (std::size_t q = 0; q < 16; q += 4) {
      quad[q] = _mm_unpacklo_epi16(pair[q], pair[q + 2]);
      quad[q + 1] = _mm_unpackhi_epi16(pair[q], pair[q + 2]);
      quad[q + 2] = _mm_unpacklo_epi16(pair[q + 1], pair[q + 3]);
      quad[q + 3] = _mm_unpackhi_epi16(pair[q + 1], pair[q + 3]);
    }
    __m128i octet[16];
    for (std::size_t o = 0; o < 2; ++o) {
      for (std::size_t k = 0; k < 4; ++k) {
        const __m128i lo = quad[8 * o + k], hi = quad[8 * o + 4 + k];
        octet[8 * o + 2 * k] = _mm_unpacklo_epi32(lo, hi);
        octet[8 * o + 2 * k + 1] = _mm_unpackhi_epi32(lo, hi);
      }
    }
    for (std::size_t j = 0; j < 8; ++j) {
      const auto x = static_cast<std::int64_t>(2 * j);
      store(x, _mm_unpacklo_epi64(octet[j], octet[8 + j]));
      store(x + 1, _mm_unpackhi_epi64(octet[j], octet[8 + j]));
    }
  }
}
#endif

// AVX2 (runtime-dispatched): 16 x 32 blocks of bytes, 16 x 16 of 2-byte elements, 8 x 8 of 4-byte
// ones and 4 x 4 of 8-byte ones, in 32-byte registers. Written with the compilers' generic vectors
// and __builtin_shufflevector rather than <immintrin.h>, whose declarations alone cost every
// including TU 0.4 s; the shuffles are the lane interleaves (vpunpck*) and half swaps (vperm2i128)
// of the transpose, and like them move bits only. Not under nvcc, whose host pass takes the SSE2
// path.
#if defined(__x86_64__) && !defined(__CUDACC__) && \
    (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12))
#define DMLREF_HAS_AVX2_PATH 1
// 32 bytes as 32 / Bytes elements of Bytes bytes: the AVX2 paths' registers (here and in
// engine_simd.hpp).
using Lanes1x32 = std::uint8_t __attribute__((vector_size(32)));
using Lanes2x16 = std::uint16_t __attribute__((vector_size(32)));
using Lanes4x8 = std::uint32_t __attribute__((vector_size(32)));
using Lanes8x4 = std::uint64_t __attribute__((vector_size(32)));
// Bytes at any address, aliasing anything: one unaligned load each.
typedef std::uint8_t Lanes1x32Unaligned __attribute__((vector_size(32), aligned(1), may_alias));

// One round of the 2-byte kernel over rows x (bit M of the row index clear) and y = x + M, the
// columns C = 0..15: x keeps its columns with bit M clear and takes y's such columns into the
// others, y keeps its columns with bit M set and takes x's (shuffle indices 16-31 are y's).
template <int M, int... C>
__attribute__((target("avx2"), always_inline)) inline void transpose_round_avx2(
    Lanes2x16& x, Lanes2x16& y, std::integer_sequence<int, C...>) noexcept {
  const Lanes2x16 low = __builtin_shufflevector(x, y, ((C & M) != 0 ? 16 + (C ^ M) : C)...);
  y = __builtin_shufflevector(x, y, ((C & M) != 0 ? 16 + C : (C ^ M))...);
  x = low;
}

// AVX2's in-lane interleave of W-byte elements (vpunpckl* or vpunpckh*, as High): in each 128-bit
// half, the low (high) halves' elements of a and b alternately. Indices 32-63 are b's bytes.
template <int W, bool High, int... J>
__attribute__((target("avx2"), always_inline)) inline Lanes1x32 interleave_avx2(
    Lanes1x32 a, Lanes1x32 b, std::integer_sequence<int, J...>) noexcept {
  constexpr int kHalf = 16 / W;  // elements per 128-bit half
  return __builtin_shufflevector(
      a, b,
      (((J / W) / kHalf * kHalf + (J / W) % kHalf / 2 + (High ? kHalf / 2 : 0)) * W + J % W +
       ((J / W) % 2 != 0 ? 32 : 0))...);
}

// Two interleaves of one pair, low into `lo`, high into `hi`.
template <int W>
__attribute__((target("avx2"), always_inline)) inline void interleave_pair_avx2(
    Lanes1x32 a, Lanes1x32 b, Lanes1x32& lo, Lanes1x32& hi) noexcept {
  constexpr auto j = std::make_integer_sequence<int, 32>{};
  lo = interleave_avx2<W, false>(a, b, j);
  hi = interleave_avx2<W, true>(a, b, j);
}

// Stores lane 0 of v as b's row x and lane 1 as row 16 + x, 16 bytes each.
__attribute__((target("avx2"), always_inline)) inline void store_halves_avx2(
    unsigned char* b, std::int64_t bs, std::int64_t x, Lanes1x32 v) noexcept {
  std::memcpy(b + x * bs, &v, 16);
  std::memcpy(b + (16 + x) * bs, reinterpret_cast<const unsigned char*>(&v) + 16, 16);
}

// 16 rows of 32 bytes from a, as two 16 x 16 blocks side by side, one per 128-bit half: the SSE2
// kernel's four rounds of interleaves (bytes, 2-, 4-, 8-byte elements), in-lane under AVX2, so
// one instruction moves both blocks. Lane 0 of result x holds column x of the left block, lane 1
// column x of the right one: b's rows x and 16 + x, 16 bytes each. Named registers throughout,
// as in transpose_block_avx2: arrays went through the stack.
__attribute__((target("avx2"))) inline void transpose_bytes_16x32_avx2(const unsigned char* a,
                                                                        std::int64_t as,
                                                                        unsigned char* b,
                                                                        std::int64_t bs) noexcept {
#define DMLREF_ROW(y) (*reinterpret_cast<const Lanes1x32Unaligned*>(a + (y) * as))
  // Pairs of rows (bytes interleaved), then quads (2-byte elements), octets (4-byte ones), and
  // the columns (8-byte ones).
  Lanes1x32 p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15;
  interleave_pair_avx2<1>(DMLREF_ROW(0), DMLREF_ROW(1), p0, p1);
  interleave_pair_avx2<1>(DMLREF_ROW(2), DMLREF_ROW(3), p2, p3);
  interleave_pair_avx2<1>(DMLREF_ROW(4), DMLREF_ROW(5), p4, p5);
  interleave_pair_avx2<1>(DMLREF_ROW(6), DMLREF_ROW(7), p6, p7);
  interleave_pair_avx2<1>(DMLREF_ROW(8), DMLREF_ROW(9), p8, p9);
  interleave_pair_avx2<1>(DMLREF_ROW(10), DMLREF_ROW(11), p10, p11);
  interleave_pair_avx2<1>(DMLREF_ROW(12), DMLREF_ROW(13), p12, p13);
  interleave_pair_avx2<1>(DMLREF_ROW(14), DMLREF_ROW(15), p14, p15);
#undef DMLREF_ROW
  Lanes1x32 q0, q1, q2, q3, q4, q5, q6, q7, q8, q9, q10, q11, q12, q13, q14, q15;
  interleave_pair_avx2<2>(p0, p2, q0, q1), interleave_pair_avx2<2>(p1, p3, q2, q3);
  interleave_pair_avx2<2>(p4, p6, q4, q5), interleave_pair_avx2<2>(p5, p7, q6, q7);
  interleave_pair_avx2<2>(p8, p10, q8, q9), interleave_pair_avx2<2>(p9, p11, q10, q11);
  interleave_pair_avx2<2>(p12, p14, q12, q13), interleave_pair_avx2<2>(p13, p15, q14, q15);
  Lanes1x32 o0, o1, o2, o3, o4, o5, o6, o7, o8, o9, o10, o11, o12, o13, o14, o15;
  interleave_pair_avx2<4>(q0, q4, o0, o1), interleave_pair_avx2<4>(q1, q5, o2, o3);
  interleave_pair_avx2<4>(q2, q6, o4, o5), interleave_pair_avx2<4>(q3, q7, o6, o7);
  interleave_pair_avx2<4>(q8, q12, o8, o9), interleave_pair_avx2<4>(q9, q13, o10, o11);
  interleave_pair_avx2<4>(q10, q14, o12, o13), interleave_pair_avx2<4>(q11, q15, o14, o15);
  Lanes1x32 c0, c1;
  interleave_pair_avx2<8>(o0, o8, c0, c1);
  store_halves_avx2(b, bs, 0, c0), store_halves_avx2(b, bs, 1, c1);
  interleave_pair_avx2<8>(o1, o9, c0, c1);
  store_halves_avx2(b, bs, 2, c0), store_halves_avx2(b, bs, 3, c1);
  interleave_pair_avx2<8>(o2, o10, c0, c1);
  store_halves_avx2(b, bs, 4, c0), store_halves_avx2(b, bs, 5, c1);
  interleave_pair_avx2<8>(o3, o11, c0, c1);
  store_halves_avx2(b, bs, 6, c0), store_halves_avx2(b, bs, 7, c1);
  interleave_pair_avx2<8>(o4, o12, c0, c1);
  store_halves_avx2(b, bs, 8, c0), store_halves_avx2(b, bs, 9, c1);
  interleave_pair_avx2<8>(o5, o13, c0, c1);
  store_halves_avx2(b, bs, 10, c0), store_halves_avx2(b, bs, 11, c1);
  interleave_pair_avx2<8>(o6, o14, c0, c1);
  store_halves_avx2(b, bs, 12, c0), store_halves_avx2(b, bs, 13, c1);
  interleave_pair_avx2<8>(o7, o15, c0, c1);
  store_halves_avx2(b, bs, 14, c0), store_halves_avx2(b, bs, 15, c1);
}

template <std::size_t Bytes>
__attribute__((target("avx2"))) inline void transpose_block_avx2(const unsigned char* a,
                                                                 std::int64_t as, unsigned char* b,
                                                                 std::int64_t bs) noexcept {
  static_assert(Bytes == 2 || Bytes == 4 || Bytes == 8);
  using Lane = typename BitsOfSize<Bytes>::type;
  typedef Lane Vec __attribute__((vector_size(32)));
  // The same vector at any address and aliasing anything: one unaligned load or store each.
  typedef Lane Unaligned __attribute__((vector_size(32), aligned(1), may_alias));
  // Named registers, no arrays or lambdas: arrays went through the stack, and a lambda's body
  // would not inherit the target attribute.
#define DMLREF_ROW(y) (*reinterpret_cast<const Unaligned*>(a + (y) * as))
#define DMLREF_OUT(x) (*reinterpret_cast<Unaligned*>(b + (x) * bs))
  if constexpr (Bytes == 2) {
    // 16 x 16: four rounds (transpose_round_avx2, m = 8, 4, 2, 1), each swapping one bit of the
    // row index with the same bit of the column index: after all four, row x holds column x.
    Vec r0 = DMLREF_ROW(0), r1 = DMLREF_ROW(1), r2 = DMLREF_ROW(2), r3 = DMLREF_ROW(3);
    Vec r4 = DMLREF_ROW(4), r5 = DMLREF_ROW(5), r6 = DMLREF_ROW(6), r7 = DMLREF_ROW(7);
    Vec r8 = DMLREF_ROW(8), r9 = DMLREF_ROW(9), r10 = DMLREF_ROW(10), r11 = DMLREF_ROW(11);
    Vec r12 = DMLREF_ROW(12), r13 = DMLREF_ROW(13), r14 = DMLREF_ROW(14), r15 = DMLREF_ROW(15);
    constexpr auto c = std::make_integer_sequence<int, 16>{};
    transpose_round_avx2<8>(r0, r8, c), transpose_round_avx2<8>(r1, r9, c);
    transpose_round_avx2<8>(r2, r10, c), transpose_round_avx2<8>(r3, r11, c);
    transpose_round_avx2<8>(r4, r12, c), transpose_round_avx2<8>(r5, r13, c);
    transpose_round_avx2<8>(r6, r14, c), transpose_round_avx2<8>(r7, r15, c);
    transpose_round_avx2<4>(r0, r4, c), transpose_round_avx2<4>(r1, r5, c);
    transpose_round_avx2<4>(r2, r6, c), transpose_round_avx2<4>(r3, r7, c);
    transpose_round_avx2<4>(r8, r12, c), transpose_round_avx2<4>(r9, r13, c);
    transpose_round_avx2<4>(r10, r14, c), transpose_round_avx2<4>(r11, r15, c);
    transpose_round_avx2<2>(r0, r2, c), transpose_round_avx2<2>(r1, r3, c);
    transpose_round_avx2<2>(r4, r6, c), transpose_round_avx2<2>(r5, r7, c);
    transpose_round_avx2<2>(r8, r10, c), transpose_round_avx2<2>(r9, r11, c);
    transpose_round_avx2<2>(r12, r14, c), transpose_round_avx2<2>(r13, r15, c);
    transpose_round_avx2<1>(r0, r1, c), transpose_round_avx2<1>(r2, r3, c);
    transpose_round_avx2<1>(r4, r5, c), transpose_round_avx2<1>(r6, r7, c);
    transpose_round_avx2<1>(r8, r9, c), transpose_round_avx2<1>(r10, r11, c);
    transpose_round_avx2<1>(r12, r13, c), transpose_round_avx2<1>(r14, r15, c);
    DMLREF_OUT(0) = r0; DMLREF_OUT(1) = r1; DMLREF_OUT(2) = r2; DMLREF_OUT(3) = r3;
    DMLREF_OUT(4) = r4; DMLREF_OUT(5) = r5; DMLREF_OUT(6) = r6; DMLREF_OUT(7) = r7;
    DMLREF_OUT(8) = r8; DMLREF_OUT(9) = r9; DMLREF_OUT(10) = r10; DMLREF_OUT(11) = r11;
    DMLREF_OUT(12) = r12; DMLREF_OUT(13) = r13; DMLREF_OUT(14) = r14; DMLREF_OUT(15) = r15;
  } else if constexpr (Bytes == 8) {
    // Rows hold columns 0-1 | 2-3: pairs of rows interleaved per half, then the halves swapped.
    const Vec r0 = DMLREF_ROW(0), r1 = DMLREF_ROW(1), r2 = DMLREF_ROW(2), r3 = DMLREF_ROW(3);
    const Vec t0 = __builtin_shufflevector(r0, r1, 0, 4, 2, 6);
    const Vec t1 = __builtin_shufflevector(r0, r1, 1, 5, 3, 7);
    const Vec t2 = __builtin_shufflevector(r2, r3, 0, 4, 2, 6);
    const Vec t3 = __builtin_shufflevector(r2, r3, 1, 5, 3, 7);
    DMLREF_OUT(0) = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
    DMLREF_OUT(1) = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
    DMLREF_OUT(2) = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
    DMLREF_OUT(3) = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
  } else {
    // Per quad of rows: pairs interleaved, then quads, leaving columns c | c + 4 in the halves.
#define DMLREF_QUAD(y, u0, u1, u2, u3)                                                  \
  const Vec u0##_r0 = DMLREF_ROW(y), u0##_r1 = DMLREF_ROW(y + 1);                       \
  const Vec u0##_r2 = DMLREF_ROW(y + 2), u0##_r3 = DMLREF_ROW(y + 3);                   \
  const Vec u0##_t0 = __builtin_shufflevector(u0##_r0, u0##_r1, 0, 8, 1, 9, 4, 12, 5, 13);  \
  const Vec u0##_t1 = __builtin_shufflevector(u0##_r0, u0##_r1, 2, 10, 3, 11, 6, 14, 7, 15); \
  const Vec u0##_t2 = __builtin_shufflevector(u0##_r2, u0##_r3, 0, 8, 1, 9, 4, 12, 5, 13);  \
  const Vec u0##_t3 = __builtin_shufflevector(u0##_r2, u0##_r3, 2, 10, 3, 11, 6, 14, 7, 15); \
  const Vec u0 = __builtin_shufflevector(u0##_t0, u0##_t2, 0, 1, 8, 9, 4, 5, 12, 13);       \
  const Vec u1 = __builtin_shufflevector(u0##_t0, u0##_t2, 2, 3, 10, 11, 6, 7, 14, 15);     \
  const Vec u2 = __builtin_shufflevector(u0##_t1, u0##_t3, 0, 1, 8, 9, 4, 5, 12, 13);       \
  const Vec u3 = __builtin_shufflevector(u0##_t1, u0##_t3, 2, 3, 10, 11, 6, 7, 14, 15);
    DMLREF_QUAD(0, u0, u1, u2, u3)
    DMLREF_QUAD(4, u4, u5, u6, u7)
#undef DMLREF_QUAD
    DMLREF_OUT(0) = __builtin_shufflevector(u0, u4, 0, 1, 2, 3, 8, 9, 10, 11);
    DMLREF_OUT(1) = __builtin_shufflevector(u1, u5, 0, 1, 2, 3, 8, 9, 10, 11);
    DMLREF_OUT(2) = __builtin_shufflevector(u2, u6, 0, 1, 2, 3, 8, 9, 10, 11);
    DMLREF_OUT(3) = __builtin_shufflevector(u3, u7, 0, 1, 2, 3, 8, 9, 10, 11);
    DMLREF_OUT(4) = __builtin_shufflevector(u0, u4, 4, 5, 6, 7, 12, 13, 14, 15);
    DMLREF_OUT(5) = __builtin_shufflevector(u1, u5, 4, 5, 6, 7, 12, 13, 14, 15);
    DMLREF_OUT(6) = __builtin_shufflevector(u2, u6, 4, 5, 6, 7, 12, 13, 14, 15);
    DMLREF_OUT(7) = __builtin_shufflevector(u3, u7, 4, 5, 6, 7, 12, 13, 14, 15);
  }
#undef DMLREF_ROW
#undef DMLREF_OUT
}

template <std::size_t Bytes>
__attribute__((target("avx2"))) inline void transpose_tiles_avx2(const TransposeArgs& t) noexcept {
  if constexpr (Bytes == 1) {
    transpose_tiles<1, 16, 32>(t, &transpose_bytes_16x32_avx2);
  } else {
    transpose_tiles<Bytes, 32 / Bytes>(t, &transpose_block_avx2<Bytes>);
  }
}

inline bool cpu_has_avx2() noexcept {
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
}
#endif

// Whether AVX2 kernels (transposes here, the engine's reversal) may run on a CPU that has them;
// the tests clear it to run the SSE2 ones on the same machine. A plain bool, read without
// synchronisation: set it only while no operator runs. (std::atomic cost every translation unit
// 3.5% of an include-only compile, for a test switch.)
inline bool allow_avx2 = true;

// The one test every AVX2 path makes: this build has them, the CPU has AVX2, and allow_avx2.
inline bool avx2_enabled() noexcept {
#if defined(DMLREF_HAS_AVX2_PATH)
  return allow_avx2 && cpu_has_avx2();
#else
  return false;
#endif
}

// The elements of an nx x ny transpose that tiles of K rows of a by KX elements leave to the
// element loop (transpose_elements): the edges past the last whole tile on either side.
constexpr std::uint64_t transpose_edge_elements(std::uint64_t nx, std::uint64_t ny,
                                                std::uint64_t k, std::uint64_t kx) noexcept {
  return nx * ny - (nx - nx % kx) * (ny - ny % k);
}

// The transpose as bytes, through the widest kernels this build and CPU have, unless the AVX2
// tiles would leave a quarter of the elements or more to the element loop and SSE2's smaller
// ones fewer: float32 {N, 12} transposed, one core, 16 MiB, 0.68-0.71 of memcpy in AVX2 tiles
// (a third of it element by element) against 1.15 in SSE2 tiles; {N, 4} 0.40-0.59 against
// 1.07-1.28. With long sides the AVX2 tiles win (1021 or 1024 wide: 0.32-0.43 against 0.22-0.30).
template <std::size_t Bytes>
void transpose_bytes(const TransposeArgs& t) noexcept {
#if defined(DMLREF_HAS_AVX2_PATH)
  if (avx2_enabled()) {
    constexpr std::uint64_t k = Bytes == 1 ? 16 : 32 / Bytes, kx = Bytes == 1 ? 32 : k;
    const std::uint64_t edge = transpose_edge_elements(t.nx, t.ny, k, kx);
    const bool sse_covers_more =
        edge >= t.nx * t.ny / 4 &&
        transpose_edge_elements(t.nx, t.ny, kSse2Block<Bytes>, kSse2Block<Bytes>) < edge;
    if (!sse_covers_more) return transpose_tiles_avx2<Bytes>(t);
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  transpose_tiles<Bytes, kSse2Block<Bytes>>(t, &transpose_block_sse2<Bytes>);
#else
  transpose_tiles<Bytes, 1>(t, [](const unsigned char* a, std::int64_t, unsigned char* b,
                                  std::int64_t) { std::memcpy(b, a, Bytes); });
#endif
}

// A copy whose last two dimensions are a transpose (is_transpose), as register-blocked tiles
// (transpose_tiles) at each position of the dimensions before them. The tiles change the order
// elements are written in, so this serves copies only (each destination element is written once,
// from a source it does not overlap), never a walk whose result depends on row-major order.
template <class T>
void copy_transposed(const CopyPlan& plan, const T* src, T* dst, bool stream) noexcept {
  const std::uint32_t r = plan.rank;
  const std::uint64_t rows = plan.sizes[r - 2];
  const std::uint64_t cols = plan.sizes[r - 1];
  constexpr auto kBytes = static_cast<std::int64_t>(sizeof(T));
  // b is the operand unit-stride along the last dimension (x its rows), a the other.
  const bool dst_rows = plan.strides[1][r - 1] == 1;
  const std::int64_t a_step = (dst_rows ? plan.strides[0][r - 1] : plan.strides[0][r - 2]) * kBytes;
  const std::int64_t b_step = (dst_rows ? plan.strides[1][r - 2] : plan.strides[1][r - 1]) * kBytes;
  const std::uint64_t nx = dst_rows ? rows : cols;
  const std::uint64_t ny = dst_rows ? cols : rows;
  // The plan without its last dimension: walk_runs then visits each position of the
  // dimensions before the two transposed ones, with offsets at the start of dimension r - 2.
  CopyPlan outer = plan;
  outer.rank = r - 1;
  walk_runs<2>(outer, [=](const std::array<std::int64_t, 2>& o) {
    transpose_bytes<sizeof(T)>({reinterpret_cast<const unsigned char*>(src + o[0]), a_step,
                                reinterpret_cast<unsigned char*>(dst + o[1]), b_step, nx, ny,
                                stream});
  });
  if (stream) stream_fence();
}

// Executes a two-operand plan (operand 0 the source, 1 the destination) over base pointers. The
// kind of inner run is chosen once, outside the outer walk, so each walk's body is one tight loop;
// its lambda captures by value, so no memcpy store forces a reload of the pointers. Transposes
// go tile by tile (copy_transposed): a copy's result does not depend on the order it writes in.
// `stream` asks for streaming stores on runs of kStreamMinRunBytes or more (the caller decides,
// from the size of its whole copy; see kStreamMinBytes), fenced before returning.
// `memcpy_min_run_bytes` exists for the benchmark that picks kMemcpyMinRunBytes.
template <class T>
void copy_with_plan_on_thread(const CopyPlan& plan, const T* src, T* dst, bool stream,
                              std::size_t memcpy_min_run_bytes) {
  static_assert(std::is_trivially_copyable_v<T>);
  const std::uint64_t n = plan.inner_size();
  const std::int64_t ss = plan.inner_stride(0);
  const std::int64_t ds = plan.inner_stride(1);
  if (ss == 1 && ds == 1) {
    // Through bytes: the same function for every width. The pointers come from validated views,
    // so they address whole elements of the tensors.
    copy_contiguous_runs(plan, reinterpret_cast<const unsigned char*>(src),
                         reinterpret_cast<unsigned char*>(dst), sizeof(T), stream,
                         memcpy_min_run_bytes);
  } else if (ss == 0) {
    walk_runs<2>(plan, [=](const std::array<std::int64_t, 2>& o) {
      copy_run_broadcast(src + o[0], dst + o[1], ds, n);
    });
  } else if (ss == -1 && ds == 1) {
    // The run's source starts at its highest address; copy_run_reversed wants the lowest.
    const auto back = static_cast<std::int64_t>(n - 1);
    walk_runs<2>(plan, [=](const std::array<std::int64_t, 2>& o) {
      copy_run_reversed(src + (o[0] - back), dst + o[1], n);
    });
  } else if (is_transpose(plan)) {
    copy_transposed(plan, src, dst, stream);
  } else {
    walk_runs<2>(plan, [=](const std::array<std::int64_t, 2>& o) {
      copy_run_strided(src + o[0], ss, dst + o[1], ds, n);
    });
  }
}

// `plan` (a copy: two operands) with its dimensions reordered so that the last two are a
// transpose where they can be, once per plan (copy_view, GATHER_ND1's row plans): where one
// operand is unit-stride along the innermost dimension and the other along a dimension further
// out than the one before it, that dimension moves next to the innermost. A copy writes each
// element once, so the order it visits them in does not change the result; as runs, each element
// of the other operand is on a line of its own, as tiles (copy_transposed) lines are read whole.
// {8, 3, N} float32 transposed to {N, 3, 8}, one core: 0.17 of memcpy as runs at 4 MiB,
// 0.49-0.54 in tiles; at 64 MiB 0.20 and 0.34.
inline CopyPlan with_transpose_last(const CopyPlan& plan) noexcept {
  const std::uint32_t r = plan.rank;
  if (r < 3 || plan.operand_count != 2 || is_transpose(plan)) return plan;
  const std::int64_t src_inner = plan.strides[0][r - 1];
  const std::int64_t dst_inner = plan.strides[1][r - 1];
  // Broadcast (0) and reversed (-1) runs have loops of their own.
  const auto strided = [](std::int64_t stride) { return stride > 1 || stride < -1; };
  std::size_t other = 0;  // the operand whose unit stride is further out
  if (dst_inner == 1 && strided(src_inner)) {
    other = 0;
  } else if (src_inner == 1 && strided(dst_inner)) {
    other = 1;
  } else {
    return plan;
  }
  for (std::uint32_t d = r - 2; d-- > 0;) {
    if (plan.strides[other][d] != 1) continue;
    // Dimension d moves to r - 2; those between move out by one.
    CopyPlan moved = plan;
    for (std::uint32_t k = d; k + 1 < r - 1; ++k) {
      moved.sizes[k] = plan.sizes[k + 1];
      for (std::size_t op = 0; op < 2; ++op) moved.strides[op][k] = plan.strides[op][k + 1];
    }
    moved.sizes[r - 2] = plan.sizes[d];
    for (std::size_t op = 0; op < 2; ++op) moved.strides[op][r - 2] = plan.strides[op][d];
    return moved;
  }
  return plan;
}

// copy_with_plan_on_thread over the parts of the plan (for_each_plan_part): a copy writes each
// destination element once, so any split gives the same bytes.
template <class T>
void copy_with_plan(const CopyPlan& plan, const T* src, T* dst, bool stream = false,
                    std::size_t memcpy_min_run_bytes = kMemcpyMinRunBytes) {
  const std::uint64_t bytes = plan.run_count() * plan.inner_size() * sizeof(T);
  for_each_plan_part(plan, bytes, [&](const CopyPlan& part, const PlanBase& base) {
    copy_with_plan_on_thread(part, src + base[0], dst + base[1], stream, memcpy_min_run_bytes);
  });
}

// Plans and runs the copy of `src` to `dst` (same Sizes; the caller checked them), streaming
// when `stream` says so (by default: when the copy is kStreamMinBytes or more).
template <class T>
void copy_view(const TensorView<const T>& src, const TensorView<T>& dst,
               std::optional<bool> stream = std::nullopt) {
  const std::array<std::array<std::int64_t, kMaxRank>, 2> strides{src.layout().strides,
                                                                 dst.layout().strides};
  const bool streaming = stream.value_or(dst.element_count() * sizeof(T) >= kStreamMinBytes);
  copy_with_plan(with_transpose_last(make_copy_plan(dst.layout().size_span(), strides)),
                 src.data(), dst.data(), streaming);
}

// A working set that stays in the L1 and L2 caches: the engine's slabs (copy_pieces' of many
// blocks, SCATTER's) and REVERSE_SUBSEQUENCES's column groups are about this many bytes.
inline constexpr std::uint64_t kSlabBytes = 16 * 1024;

template <class T>
void check_copy_sizes(const char* op, const TensorView<const T>& src, const TensorView<T>& dst) {
  // A plain loop rather than std::ranges::equal, which becomes a memcmp call: on small copies
  // that call was a fifth of strided_copy's time.
  bool equal = src.rank() == dst.rank();
  for (std::uint32_t d = 0; equal && d < dst.rank(); ++d) equal = src.size(d) == dst.size(d);
  if (!equal) {
    fail(ErrorCode::ShapeMismatch, op, ": the source Sizes ", src.layout().sizes_string(),
         " and the destination Sizes ", dst.layout().sizes_string(), " differ; they must be equal");
  }
}

}  // namespace detail

// Copies every element of `src` to the same coordinate of `dst`, bit for bit:
//   for each coordinate c: dst[c] = src[c]
// Preconditions (the calling operator's validation establishes them; not re-checked here, since
// T12 and T13 cost more than the copy): both views validated (detail::check_view), `dst`
// addresses each element once (T12), and `dst` shares no byte with `src` (T13). Strides may
// differ between the views; the source's may be 0 (broadcast) and either's negative. Throws
// ShapeMismatch when the sizes differ, before writing anything.
template <class T>
  requires(!std::is_const_v<T>)
void strided_copy(std::type_identity_t<TensorView<const T>> src, TensorView<T> dst) {
  detail::check_copy_sizes("strided_copy", src, dst);
  detail::copy_view<detail::BitsOf<T>>(detail::width_view(src), detail::width_view(dst));
}

// The golden definition strided_copy is tested against: the plain coordinate loop, one element at
// a time through its bits. Same preconditions and ShapeMismatch check.
template <class T>
  requires(!std::is_const_v<T>)
void reference_copy(std::type_identity_t<TensorView<const T>> src, TensorView<T> dst) {
  detail::check_copy_sizes("reference_copy", src, dst);
  for_each_coordinate(dst.layout(), [&](const Coord& c) {
    detail::store_bits(&dst[c], detail::load_bits(&src[c]));
  });
}

}  // namespace dmlref
