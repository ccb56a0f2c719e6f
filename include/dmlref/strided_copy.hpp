// dmlref: the one strided-copy core every operator's fast path is built from.
//
// ONNX Runtime's shape (core/providers/cpu/tensor/copy.h): plan the copy once by dropping size-1
// dimensions and merging dimensions that are contiguous in every operand, then walk the outer
// dimensions with incremental offsets and move each innermost run with std::memcpy (long
// contiguous runs), inlined fixed-size copies (short contiguous runs) or a tight element loop
// (strided, broadcast, reversed runs). The plain coordinate loop it must equal is
// `reference_copy`, below.
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
#include <span>
#include <type_traits>

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
template <std::size_t N, class F>
void for_each_run(const CopyPlan& plan, F&& f) {
  static_assert(N >= 1 && N <= kMaxCopyOperands);
  if (plan.operand_count != N) {
    fail(ErrorCode::InvalidOption, "for_each_run: the plan has ", plan.operand_count,
         " operands but ", N, " offsets were asked for");
  }
  if (plan.rank == 0) return;
  std::array<std::int64_t, N> offsets{};
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

// The unsigned integer an element's bits travel in.
template <std::size_t Bytes>
struct BitsOfSize;
template <> struct BitsOfSize<1> { using type = std::uint8_t; };
template <> struct BitsOfSize<2> { using type = std::uint16_t; };
template <> struct BitsOfSize<4> { using type = std::uint32_t; };
template <> struct BitsOfSize<8> { using type = std::uint64_t; };
template <class T>
using BitsOf = typename BitsOfSize<sizeof(T)>::type;

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

// dst[i] = src[n - 1 - i] for i in [0, n): a contiguous run copied reversed, the inner step of
// REVERSE_SUBSEQUENCES. src and dst point at the first element of each contiguous run.
template <class T>
void copy_run_reversed(const T* src, T* dst, std::uint64_t n) noexcept {
  for (std::uint64_t i = 0; i < n; ++i) store_bits(dst + i, load_bits(src + (n - 1 - i)));
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

// Executes a two-operand plan (operand 0 the source, 1 the destination) over base pointers. The
// kind of inner run is chosen once, outside the outer walk, so each walk's body is one tight loop.
// `memcpy_min_run_bytes` exists for the benchmark that picks kMemcpyMinRunBytes.
template <class T>
void copy_with_plan(const CopyPlan& plan, const T* src, T* dst,
                    std::size_t memcpy_min_run_bytes = kMemcpyMinRunBytes) {
  static_assert(std::is_trivially_copyable_v<T>);
  const std::uint64_t n = plan.inner_size();
  const std::int64_t ss = plan.inner_stride(0);
  const std::int64_t ds = plan.inner_stride(1);
  if (ss == 1 && ds == 1 && n * sizeof(T) >= memcpy_min_run_bytes) {
    const std::size_t bytes = n * sizeof(T);
    for_each_run<2>(plan, [&](const std::array<std::int64_t, 2>& o) {
      std::memcpy(static_cast<void*>(dst + o[1]), src + o[0], bytes);
    });
  } else if (ss == 1 && ds == 1) {
    for_each_run<2>(plan, [&](const std::array<std::int64_t, 2>& o) {
      copy_run_contiguous_short(src + o[0], dst + o[1], n);
    });
  } else if (ss == 0) {
    for_each_run<2>(plan, [&](const std::array<std::int64_t, 2>& o) {
      copy_run_broadcast(src + o[0], dst + o[1], ds, n);
    });
  } else if (ss == -1 && ds == 1) {
    // The run's source starts at its highest address; copy_run_reversed wants the lowest.
    const auto back = static_cast<std::int64_t>(n - 1);
    for_each_run<2>(plan, [&](const std::array<std::int64_t, 2>& o) {
      copy_run_reversed(src + (o[0] - back), dst + o[1], n);
    });
  } else {
    for_each_run<2>(plan, [&](const std::array<std::int64_t, 2>& o) {
      copy_run_strided(src + o[0], ss, dst + o[1], ds, n);
    });
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
  const std::array<std::array<std::int64_t, kMaxRank>, 2> strides{src.layout().strides,
                                                                 dst.layout().strides};
  const detail::CopyPlan plan = detail::make_copy_plan(dst.layout().size_span(), strides);
  detail::copy_with_plan(plan, src.data(), dst.data());
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
