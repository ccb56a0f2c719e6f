// dmlref: the one strided-copy core every operator's fast path is built from.
//
// ONNX Runtime's shape (core/providers/cpu/tensor/copy.h): plan the copy once by dropping size-1
// dimensions and merging dimensions that are contiguous in every operand, then walk the outer
// dimensions with incremental offsets and move each innermost run with std::memcpy (long
// contiguous runs), inlined fixed-size copies (short contiguous runs), 16-byte reversal (reversed
// runs) or a tight element loop (strided, broadcast runs); transposes go in square tiles, copies
// far larger than the caches use streaming stores, and block copies (JOIN, SPLIT) go slab by
// slab. The plain coordinate loop it must equal is `reference_copy`, below; tests/
// test_fastpath_core.cpp diffs each path against it.
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
#include "dmlref/tensor_view.hpp"

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

// Calls f(offsets) once per innermost run, in row-major order of the outer dimensions, where
// offsets[k] is operand k's element offset of the run's first element. Offsets are updated
// incrementally (one add per step, one multiply-add per carry), never recomputed from a
// coordinate. N must equal plan.operand_count so every operand gets an offset.
// walk_runs is the same without that check, for the engine, whose plans are built with the
// operand count it walks them with: nothing on the executing path throws.
template <std::size_t N, class F>
void walk_runs(const CopyPlan& plan, F&& f) {
  static_assert(N >= 1 && N <= kMaxCopyOperands);
  if (plan.rank == 0) return;
  std::array<std::int64_t, N> offsets{};
  if (plan.rank <= 2) {
    // One outer dimension (the common case after merging): a plain counted loop, which the
    // compiler can unroll, instead of the carry logic below.
    // The steps live in locals: f's stores may alias the plan as far as the compiler knows
    // (memcpy), and would otherwise force a reload of every stride on every run.
    const std::uint64_t runs = plan.rank == 2 ? plan.sizes[0] : 1;
    std::array<std::int64_t, N> step;
    for (std::size_t k = 0; k < N; ++k) step[k] = plan.strides[k][0];
    for (std::uint64_t i = 0; i < runs; ++i) {
      f(static_cast<const std::array<std::int64_t, N>&>(offsets));
      for (std::size_t k = 0; k < N; ++k) offsets[k] += step[k];
    }
    return;
  }
  const std::uint32_t outer = plan.rank - 1;
  std::array<std::uint64_t, kMaxRank> c{};
  for (;;) {
    f(static_cast<const std::array<std::int64_t, N>&>(offsets));
    std::uint32_t d = outer;
    for (;;) {
      if (d == 0) return;
      --d;
      if (++c[d] < plan.sizes[d]) {
        for (std::size_t k = 0; k < N; ++k) offsets[k] += plan.strides[k][d];
        break;
      }
      // Carry: step back over the whole dimension, then let the next outer one advance.
      c[d] = 0;
      const auto back = static_cast<std::int64_t>(plan.sizes[d] - 1);
      for (std::size_t k = 0; k < N; ++k) offsets[k] -= back * plan.strides[k][d];
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

// How far ahead a loop over data-dependent places (GATHER_ND1's slices) prefetches, in tuples.
inline constexpr std::uint64_t kPrefetchTuples = 8;

// Asks the cache for the `bytes` bytes from `p`, one request per 64-byte line. A hint only: it
// never faults, so it is safe on any address the caller is about to read.
inline void prefetch_bytes(const void* p, std::uint64_t bytes) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  const auto* c = static_cast<const char*>(p);
  for (std::uint64_t i = 0; i < bytes; i += 64) __builtin_prefetch(c + i);
#else
  (void)p;
  (void)bytes;
#endif
}

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
// elements only ever move through memcpy or SSE2 loads and stores, never as values.
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
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto j = static_cast<std::int64_t>(i);
    store_bits(dst + j * dst_stride, load_bits(src + j * src_stride));
  }
}

// Copies `bytes` bytes between non-overlapping ranges with fixed-size, inlined copies: 16-byte
// blocks and one final block that overlaps the previous one (8, 4, 2 or 1 bytes below 16), as
// glibc's memcpy does for small sizes, without the call and its size dispatch. Overlapping
// stores write the same bytes twice, which is harmless since source and destination are disjoint.
inline void copy_bytes_short(void* dst, const void* src, std::size_t bytes) noexcept {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (bytes >= 16) {
    for (std::size_t i = 0; i + 16 < bytes; i += 16) std::memcpy(d + i, s + i, 16);
    std::memcpy(d + bytes - 16, s + bytes - 16, 16);
  } else if (bytes >= 8) {
    std::memcpy(d, s, 8);
    std::memcpy(d + bytes - 8, s + bytes - 8, 8);
  } else if (bytes >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + bytes - 4, s + bytes - 4, 4);
  } else if (bytes >= 2) {
    std::memcpy(d, s, 2);
    std::memcpy(d + bytes - 2, s + bytes - 2, 2);
  } else if (bytes == 1) {
    *d = *s;
  }
}

// Copies totalling at least this many bytes write their long runs with non-temporal (streaming)
// stores: a destination this much larger than any cache would only evict everything else, and
// streaming skips reading each destination line before writing it (a third of the memory traffic
// of a copy). glibc's memcpy switches the same way above a threshold derived from the cache size
// (192 MiB on the benchmark machine); block copies of many runs never reach it on their own.
inline constexpr std::uint64_t kStreamMinBytes = std::uint64_t{64} << 20;

// Runs shorter than this stay on ordinary stores even in a streaming copy: a streamed line that
// is only partly written costs more than it saves.
inline constexpr std::uint64_t kStreamMinRunBytes = 256;

// memcpy(dst, src, bytes) for non-overlapping ranges, writing with non-temporal stores where the
// target has them (x86-64: SSE2 movntdq on the 16-byte aligned middle, ordinary copies for the
// ends). The caller issues stream_fence() before anyone else may read the destination.
inline void copy_bytes_streaming(void* dst, const void* src, std::size_t bytes) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const std::size_t misalign = reinterpret_cast<std::uintptr_t>(d) % 16;
  const std::size_t head = std::min(bytes, misalign == 0 ? std::size_t{0} : 16 - misalign);
  std::memcpy(d, s, head);
  std::size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  for (; i + 16 <= bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
  }
  std::memcpy(d + i, s + i, bytes - i);
#else
  std::memcpy(dst, src, bytes);
#endif
}

// Orders the streaming stores before everything after it (they are weakly ordered otherwise).
inline void stream_fence() noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  _mm_sfence();
#endif
}

// dst[i] = src[i] for i in [0, n): a contiguous run too short for memcpy's call to pay off.
template <class T>
void copy_run_contiguous_short(const T* src, T* dst, std::uint64_t n) noexcept {
  copy_bytes_short(static_cast<void*>(dst), src, n * sizeof(T));
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
// memcpy for long unit-stride runs, copy_bytes_short for short ones, then the loops above.
template <class T>
void copy_run(const T* src, std::int64_t src_stride, T* dst, std::int64_t dst_stride,
              std::uint64_t n) noexcept {
  if (src_stride == 1 && dst_stride == 1) {
    if (n * sizeof(T) >= kMemcpyMinRunBytes) {
      std::memcpy(static_cast<void*>(dst), src, n * sizeof(T));
    } else {
      copy_run_contiguous_short(src, dst, n);
    }
  } else if (src_stride == 0) {
    copy_run_broadcast(src, dst, dst_stride, n);
  } else if (src_stride == -1 && dst_stride == 1 && n > 0) {
    copy_run_reversed(src - static_cast<std::ptrdiff_t>(n - 1), dst, n);
  } else {
    copy_run_strided(src, src_stride, dst, dst_stride, n);
  }
}

// Moves every run of a one- or two-dimensional two-operand plan whose runs are contiguous in both
// operands and exactly Bytes long (`element_size`-byte elements). The size is a constant, so each
// run compiles to one or two register moves with no size dispatch: the narrow blocks of a JOIN or
// SPLIT along the last axis. Bytes, not the element type, parameterises it, so all widths share it.
template <std::size_t Bytes>
void copy_fixed_runs(const CopyPlan& plan, const unsigned char* src, unsigned char* dst,
                     std::size_t element_size) noexcept {
  const auto element = static_cast<std::int64_t>(element_size);
  const std::uint64_t runs = plan.rank == 2 ? plan.sizes[0] : 1;
  const std::int64_t src_step = plan.rank == 2 ? plan.strides[0][0] * element : 0;
  const std::int64_t dst_step = plan.rank == 2 ? plan.strides[1][0] * element : 0;
  for (std::uint64_t i = 0; i < runs; ++i) {
    const auto ii = static_cast<std::int64_t>(i);
    std::memcpy(dst + ii * dst_step, src + ii * src_step, Bytes);
  }
}

// copy_fixed_runs for the common short run lengths of 1- and 2-dimensional plans (what narrow
// blocks merge to); false for other lengths and ranks, which take the general loops.
inline bool copy_fixed_runs_if_common(const CopyPlan& plan, const unsigned char* src,
                                      unsigned char* dst, std::size_t bytes,
                                      std::size_t element_size) noexcept {
  if (plan.rank > 2) return false;
  switch (bytes) {
    case 2: copy_fixed_runs<2>(plan, src, dst, element_size); return true;
    case 4: copy_fixed_runs<4>(plan, src, dst, element_size); return true;
    case 8: copy_fixed_runs<8>(plan, src, dst, element_size); return true;
    case 12: copy_fixed_runs<12>(plan, src, dst, element_size); return true;
    case 16: copy_fixed_runs<16>(plan, src, dst, element_size); return true;
    case 24: copy_fixed_runs<24>(plan, src, dst, element_size); return true;
    case 32: copy_fixed_runs<32>(plan, src, dst, element_size); return true;
    case 48: copy_fixed_runs<48>(plan, src, dst, element_size); return true;
    case 64: copy_fixed_runs<64>(plan, src, dst, element_size); return true;
    default: return false;
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
  if (stream && bytes >= kStreamMinRunBytes) {
    walk_runs<2>(plan, [=](const std::array<std::int64_t, 2>& o) {
      copy_bytes_streaming(dst + o[1] * element, src + o[0] * element, bytes);
    });
    stream_fence();
  } else if (bytes >= memcpy_min_run_bytes) {
    walk_runs<2>(plan, [=](const std::array<std::int64_t, 2>& o) {
      std::memcpy(dst + o[1] * element, src + o[0] * element, bytes);
    });
  } else if (!copy_fixed_runs_if_common(plan, src, dst, bytes, element_size)) {
    walk_runs<2>(plan, [=](const std::array<std::int64_t, 2>& o) {
      copy_bytes_short(dst + o[1] * element, src + o[0] * element, bytes);
    });
  }
}

// Tile edge, in elements, of copy_transposed: one 64-byte cache line of either operand.
template <class T>
inline constexpr std::uint64_t kTileElements = 64 / sizeof(T);

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

// A copy whose last two dimensions are a transpose (is_transpose), in square tiles of
// kTileElements: within a tile each operand's rows are whole cache lines, read or written once.
// The tiles change the order elements are written in, so this serves copies only (each
// destination element is written once, from a source it does not overlap), never a walk whose
// result depends on row-major order.
template <class T>
void copy_transposed(const CopyPlan& plan, const T* src, T* dst) noexcept {
  constexpr std::uint64_t kTile = kTileElements<T>;
  const std::uint32_t r = plan.rank;
  const std::uint64_t rows = plan.sizes[r - 2];
  const std::uint64_t cols = plan.sizes[r - 1];
  const std::int64_t src_row = plan.strides[0][r - 2], src_col = plan.strides[0][r - 1];
  const std::int64_t dst_row = plan.strides[1][r - 2], dst_col = plan.strides[1][r - 1];
  // The plan without its last dimension: walk_runs then visits each position of the
  // dimensions before the two transposed ones, with offsets at the start of dimension r - 2.
  CopyPlan outer = plan;
  outer.rank = r - 1;
  walk_runs<2>(outer, [=](const std::array<std::int64_t, 2>& o) {
    // Locals, not the closure's members: the stores may alias those as far as the compiler knows.
    const T* const s = src + o[0];
    T* const d = dst + o[1];
    const std::uint64_t n_rows = rows, n_cols = cols;
    const std::int64_t sr = src_row, sc = src_col, dr = dst_row, dc = dst_col;
    for (std::uint64_t i0 = 0; i0 < n_rows; i0 += kTile) {
      const std::uint64_t i1 = std::min(n_rows, i0 + kTile);
      for (std::uint64_t j0 = 0; j0 < n_cols; j0 += kTile) {
        const std::uint64_t j1 = std::min(n_cols, j0 + kTile);
        for (std::uint64_t i = i0; i < i1; ++i) {
          // Offsets step by addition (no multiply per element) and stay integers, so no pointer
          // is formed past the last element.
          const auto ii = static_cast<std::int64_t>(i), jj = static_cast<std::int64_t>(j0);
          std::int64_t from = ii * sr + jj * sc;
          std::int64_t to = ii * dr + jj * dc;
          for (std::uint64_t j = j0; j < j1; ++j, from += sc, to += dc) {
            store_bits(d + to, load_bits(s + from));
          }
        }
      }
    }
  });
}

// Executes a two-operand plan (operand 0 the source, 1 the destination) over base pointers. The
// kind of inner run is chosen once, outside the outer walk, so each walk's body is one tight loop;
// its lambda captures by value, so no memcpy store forces a reload of the pointers. Transposes
// go tile by tile (copy_transposed): a copy's result does not depend on the order it writes in.
// `stream` asks for streaming stores on runs of kStreamMinRunBytes or more (the caller decides,
// from the size of its whole copy; see kStreamMinBytes), fenced before returning.
// `memcpy_min_run_bytes` exists for the benchmark that picks kMemcpyMinRunBytes.
template <class T>
void copy_with_plan(const CopyPlan& plan, const T* src, T* dst, bool stream = false,
                    std::size_t memcpy_min_run_bytes = kMemcpyMinRunBytes) {
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
    copy_transposed(plan, src, dst);
  } else {
    walk_runs<2>(plan, [=](const std::array<std::int64_t, 2>& o) {
      copy_run_strided(src + o[0], ss, dst + o[1], ds, n);
    });
  }
}

// Plans and runs the copy of `src` to `dst` (same Sizes; the caller checked them), streaming
// when `stream` says so (by default: when the copy is kStreamMinBytes or more).
template <class T>
void copy_view(const TensorView<const T>& src, const TensorView<T>& dst,
               std::optional<bool> stream = std::nullopt) {
  const std::array<std::array<std::int64_t, kMaxRank>, 2> strides{src.layout().strides,
                                                                 dst.layout().strides};
  const bool streaming = stream.value_or(dst.element_count() * sizeof(T) >= kStreamMinBytes);
  copy_with_plan(make_copy_plan(dst.layout().size_span(), strides), src.data(), dst.data(),
                 streaming);
}

// One block of a multi-block copy: `src` copied to `dst`, both over dst's Sizes. JOIN's blocks
// are its inputs and their places in the output; SPLIT's, the input's parts and its outputs.
template <class T>
struct BlockCopy {
  TensorView<const T> src;
  TensorView<T> dst;
};

// The destination bytes one slab of copy_blocks covers, over all blocks. Large enough that
// planning each block once per slab is noise; small enough that the cache lines a slab shares
// between blocks (partly written by one block, completed by the next) are still in the L2.
inline constexpr std::uint64_t kSlabBytes = 16 * 1024;

// Copies every block, with the result of copy_view on each in turn; the blocks must not overlap
// one another's destinations. `for_each_block(f)` calls f(const BlockCopy<T>&) for each of the
// `count` blocks, in order (blocks are produced on the fly, so nothing is allocated). Dimensions
// [0, shared_dims) have the same size in every block.
// Copied one after the other, blocks whose rows interleave in memory (a JOIN or SPLIT along an
// inner axis) would each sweep the whole shared tensor: with narrow rows every cache line is
// fetched once per block. So when one step of a shared dimension covers at most kSlabBytes of
// all blocks together, the copy goes slab by slab (a range of that dimension, each block's part
// of it in turn) and each line is fetched about once.
// `slab_bytes` exists for the tests, which shrink it so small shapes take the slab path too.
template <class T, class ForEachBlock>
void copy_blocks(const ForEachBlock& for_each_block, std::size_t count, std::uint32_t shared_dims,
                 std::uint64_t slab_bytes = kSlabBytes) {
  // Streaming is decided once, from all blocks together: each slab is small, the whole is not.
  std::uint64_t total_bytes = 0;
  Layout first;  // the first block's destination: dimensions [0, shared_dims) are everyone's
  bool have_first = false;
  for_each_block([&](const BlockCopy<T>& b) {
    total_bytes += b.dst.element_count() * sizeof(T);
    if (!have_first) first = b.dst.layout();
    have_first = true;
  });
  const bool stream = total_bytes >= kStreamMinBytes;
  const auto copy_all = [&] {
    for_each_block([&](const BlockCopy<T>& b) { copy_view(b.src, b.dst, stream); });
  };
  if (count < 2 || shared_dims == 0) return copy_all();
  const std::uint32_t rank = first.rank;
  // The outermost shared dimension t one step of which, over all blocks, fits in a slab.
  std::uint32_t t = 0;
  std::uint64_t step_bytes = 0;
  for (; t < shared_dims; ++t) {
    step_bytes = 0;
    for_each_block([&](const BlockCopy<T>& b) {
      std::uint64_t below = sizeof(T);
      for (std::uint32_t d = t + 1; d < rank; ++d) below *= b.dst.size(d);
      step_bytes += below;
    });
    if (step_bytes <= slab_bytes) break;
  }
  if (t == shared_dims || step_bytes == 0) return copy_all();  // blocks as wide as a slab
  const std::uint64_t rows = std::max<std::uint64_t>(1, slab_bytes / step_bytes);
  std::uint64_t prefix = 1;  // the coordinates of the dimensions outside t
  for (std::uint32_t d = 0; d < t; ++d) prefix *= first.sizes[d];
  if (prefix == 1 && rows >= first.sizes[t]) return copy_all();  // one slab: nothing to gain

  Coord c{};
  for (std::uint64_t p = 0; p < prefix; ++p) {
    std::uint64_t q = p;  // c[0, t) from p, row-major
    for (std::uint32_t d = t; d-- > 0;) {
      c[d] = static_cast<std::uint32_t>(q % first.sizes[d]);
      q /= first.sizes[d];
    }
    for (std::uint64_t begin = 0; begin < first.sizes[t]; begin += rows) {
      const auto rows_here =
          static_cast<std::uint32_t>(std::min<std::uint64_t>(rows, first.sizes[t] - begin));
      for_each_block([&](const BlockCopy<T>& b) {
        Layout src = b.src.layout();
        Layout dst = b.dst.layout();
        std::int64_t src_offset = 0;
        std::int64_t dst_offset = 0;
        for (std::uint32_t d = 0; d < t; ++d) {
          src_offset += static_cast<std::int64_t>(c[d]) * src.strides[d];
          dst_offset += static_cast<std::int64_t>(c[d]) * dst.strides[d];
          src.sizes[d] = dst.sizes[d] = 1;
        }
        src_offset += static_cast<std::int64_t>(begin) * src.strides[t];
        dst_offset += static_cast<std::int64_t>(begin) * dst.strides[t];
        src.sizes[t] = dst.sizes[t] = rows_here;
        copy_view(TensorView<const T>(b.src.data() + src_offset, src),
                  TensorView<T>(b.dst.data() + dst_offset, dst), stream);
      });
    }
  }
}

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
