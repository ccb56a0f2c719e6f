// dmlref: the engine's vector paths beyond baseline SSE2, chosen at run time. Each is an
// ordinary function compiled for AVX2 (GCC/Clang's target attribute) and called only when the CPU
// reports AVX2 (engine_avx2_enabled); the SSE2 and scalar paths stay for other CPUs, for MSVC and
// for CUDA translation units (where this header compiles to nothing but the switch). Elements move
// through integer shuffles and stores only, never through float arithmetic.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "dmlref/strided_copy.hpp"

// Written with the compilers' vector extensions (vector_size, __builtin_shufflevector: GCC 12+,
// Clang) rather than <immintrin.h>, whose AVX-512 headers alone cost every including translation
// unit more to parse than all of this.
// The same builds as strided_copy.hpp's AVX2 transposes (DMLREF_HAS_AVX2_PATH).
#if defined(DMLREF_HAS_AVX2_PATH)
#define DMLREF_ENGINE_AVX2 1
#define DMLREF_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define DMLREF_ENGINE_AVX2 0
#endif

namespace dmlref::detail {

// Whether the engine takes its AVX2 paths: avx2_enabled (strided_copy.hpp), the one switch every
// AVX2 path obeys; the tests clear allow_avx2 to run the fallback paths on an AVX2 machine too.
inline bool engine_avx2_enabled() noexcept { return avx2_enabled(); }

#if DMLREF_ENGINE_AVX2

// d[0, 32) = the 32 bytes at s as 32 / Bytes elements in reverse order (a byte shuffle and a
// lane swap, or one cross-lane permute, under AVX2). Unaligned loads and stores, through memcpy.
template <std::size_t Bytes>
DMLREF_TARGET_AVX2 inline void store_reversed_32(unsigned char* d,
                                                 const unsigned char* s) noexcept {
  if constexpr (Bytes == 1) {
    Lanes1x32 v;
    std::memcpy(&v, s, 32);
    v = __builtin_shufflevector(v, v, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17,
                                16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    std::memcpy(d, &v, 32);
  } else if constexpr (Bytes == 2) {
    Lanes2x16 v;
    std::memcpy(&v, s, 32);
    v = __builtin_shufflevector(v, v, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    std::memcpy(d, &v, 32);
  } else if constexpr (Bytes == 4) {
    Lanes4x8 v;
    std::memcpy(&v, s, 32);
    v = __builtin_shufflevector(v, v, 7, 6, 5, 4, 3, 2, 1, 0);
    std::memcpy(d, &v, 32);
  } else {
    Lanes8x4 v;
    std::memcpy(&v, s, 32);
    v = __builtin_shufflevector(v, v, 3, 2, 1, 0);
    std::memcpy(d, &v, 32);
  }
}

// d[0, 32) = s[0, 32), as one 32-byte load and store.
DMLREF_TARGET_AVX2 inline void copy_32(unsigned char* d, const unsigned char* s) noexcept {
  Lanes1x32 v;
  std::memcpy(&v, s, 32);
  std::memcpy(d, &v, 32);
}

// One row of `row_bytes` bytes: its first `reversed_bytes` (whole Bytes-byte elements) reversed,
// the rest copied. Both parts end with a vector that overlaps the previous one instead of an
// element loop, so a row costs two loop exits whatever its length: REVERSE_SUBSEQUENCES' lengths
// vary from row to row, and every extra data-dependent branch is a misprediction.
template <std::size_t Bytes>
DMLREF_TARGET_AVX2 inline void reverse_row_avx2(const unsigned char* s, unsigned char* d,
                                                std::size_t reversed_bytes,
                                                std::size_t row_bytes) noexcept {
  const std::size_t lb = reversed_bytes;
  if (lb >= 32) {
    std::size_t i = 0;
    for (; i + 32 <= lb; i += 32) store_reversed_32<Bytes>(d + i, s + (lb - i - 32));
    if (i < lb) store_reversed_32<Bytes>(d + (lb - 32), s);  // d[lb - 32, lb): s[0, 32) reversed
  } else if (lb >= 16) {  // two 16-byte halves, overlapping when lb < 32
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + (lb - 16)));
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), reverse_elements_16<Bytes>(hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (lb - 16)), reverse_elements_16<Bytes>(lo));
  } else {
    for (std::size_t i = 0; i < lb; i += Bytes) std::memcpy(d + i, s + (lb - Bytes - i), Bytes);
  }
  const std::size_t cb = row_bytes - lb;
  const unsigned char* const from = s + lb;
  unsigned char* const to = d + lb;
  if (cb >= 32) {
    std::size_t i = 0;
    for (; i + 32 <= cb; i += 32) copy_32(to + i, from + i);
    if (i < cb) copy_32(to + (cb - 32), from + (cb - 32));
  } else {
    copy_bytes_short(to, from, cb);
  }
}

// Rows of REVERSE_SUBSEQUENCES up to kReversePrefetchRowBytes are prefetched whole, about
// kReverseAheadBytes of rows ahead (kReversePrefetchRows rows at most, the next one at least). A
// row read partly backwards (its reversed part) and partly forwards, its split varying from row
// to row, is a pattern the hardware prefetchers follow poorly. bench_table's reverse_inner ({N,
// 256} float32, random lengths) went from 0.57-0.64 to 0.82-1.24 of memcpy at 16 MiB over idle
// runs (2 rows ahead: 0.79-0.85). Rows of 5-21 KiB ({rows, 2697} of 2, 4 and 8 bytes, random
// lengths), not prefetched when the limit was 4 KiB, went from 0.35-0.59 to 0.79-1.01 with the
// next row or two asked for, and rows of 16 KiB from 0.52-0.57 to 0.79-0.89. Rows of 64 KiB and
// more are left to the hardware: asked for whole, they were slower (64 KiB: 0.64-0.69 against
// 0.75).
inline constexpr std::size_t kReversePrefetchRowBytes = 32768;
inline constexpr std::uint64_t kReversePrefetchRows = 4;
inline constexpr std::uint64_t kReverseAheadBytes = 16384;

// `count` rows, row j at src + j * src_step and dst + j * dst_step (bytes), each `row_bytes` long
// with its first lengths[j] elements reversed: the contiguous case of ReversedRuns, a chunk of
// rows per call.
template <std::size_t Bytes>
DMLREF_TARGET_AVX2 void reverse_rows_avx2(const unsigned char* src, std::int64_t src_step,
                                          unsigned char* dst, std::int64_t dst_step,
                                          const std::uint64_t* lengths, std::uint64_t count,
                                          std::size_t row_bytes) noexcept {
  const bool fetch = row_bytes <= kReversePrefetchRowBytes;
  const std::uint64_t ahead =
      std::clamp<std::uint64_t>(kReverseAheadBytes / row_bytes, 1, kReversePrefetchRows);
  for (std::uint64_t j = 0; j < count; ++j) {
    const auto jj = static_cast<std::int64_t>(j);
    if (fetch && j + ahead < count) {
      prefetch_bytes(src + static_cast<std::int64_t>(j + ahead) * src_step, row_bytes);
    }
    reverse_row_avx2<Bytes>(src + jj * src_step, dst + jj * dst_step,
                            static_cast<std::size_t>(lengths[j]) * Bytes, row_bytes);
  }
}

// Rows of `row_bytes` bytes, 2 to 64 (REVERSE_SUBSEQUENCES' short runs), row j at
// src + j * src_step and dst + j * dst_step, each moved by the shuffle its length selects,
// shuffles[lengths[j]]: the row is loaded as two halves of Half bytes, [0, Half) and
// [row_bytes - Half, row_bytes) (overlapping where row_bytes < 2 * Half), shuffled as one vector
// and stored as the same two halves. So only the row's own bytes are read and written, and no
// branch depends on a length. Halves of 16 and 32 bytes (rows of 4- and 8-byte elements over
// 16 and 32 bytes) move 4-byte lanes across 32-byte vectors; smaller ones bytes within 16.
template <std::size_t Half>
DMLREF_TARGET_AVX2 void reverse_short_rows_avx2(const unsigned char* src, std::int64_t src_step,
                                                unsigned char* dst, std::int64_t dst_step,
                                                const std::uint64_t* lengths, std::uint64_t count,
                                                std::size_t row_bytes,
                                                const unsigned char (*shuffles)[64]) noexcept {
  using Bytes16 = char __attribute__((vector_size(16)));
  using Words2 = std::uint64_t __attribute__((vector_size(16)));
  using Ints4 = int __attribute__((vector_size(16)));
  using Ints8 = int __attribute__((vector_size(32)));
  const std::size_t tail = row_bytes - Half;  // where the second half starts
  // The halves go into the vector through registers: stored to memory in parts and loaded back
  // whole, every row waited on a failed store forwarding (twice the element loop's time).
  for (std::uint64_t j = 0; j < count; ++j) {
    const unsigned char* const s = src + static_cast<std::int64_t>(j) * src_step;
    unsigned char* const d = dst + static_cast<std::int64_t>(j) * dst_step;
    const unsigned char* const m = shuffles[lengths[j]];
    if constexpr (Half == 32) {
      // Output lanes [0, 8) then [8, 16), each from lane k of the two halves side by side: the
      // first half's where k < 8, the second's otherwise (vpermd reads k's low 3 bits).
      Ints8 lo, hi, lanes_lo, lanes_hi;
      std::memcpy(&lo, s, 32);
      std::memcpy(&hi, s + tail, 32);
      std::memcpy(&lanes_lo, m, 32);
      std::memcpy(&lanes_hi, m + 32, 32);
      const Ints8 seven = {7, 7, 7, 7, 7, 7, 7, 7};
      const Ints8 from_hi_lo = lanes_lo > seven, from_hi_hi = lanes_hi > seven;
      const Ints8 r_lo = (__builtin_ia32_permvarsi256(lo, lanes_lo) & ~from_hi_lo) |
                         (__builtin_ia32_permvarsi256(hi, lanes_lo) & from_hi_lo);
      const Ints8 r_hi = (__builtin_ia32_permvarsi256(lo, lanes_hi) & ~from_hi_hi) |
                         (__builtin_ia32_permvarsi256(hi, lanes_hi) & from_hi_hi);
      std::memcpy(d, &r_lo, 32);
      std::memcpy(d + tail, &r_hi, 32);
    } else if constexpr (Half == 16) {
      Ints4 lo, hi;
      std::memcpy(&lo, s, 16);
      std::memcpy(&hi, s + tail, 16);
      Ints8 lanes;
      std::memcpy(&lanes, m, 32);
      const Ints8 r = __builtin_ia32_permvarsi256(
          __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7), lanes);
      const Ints4 r_lo = __builtin_shufflevector(r, r, 0, 1, 2, 3);
      const Ints4 r_hi = __builtin_shufflevector(r, r, 4, 5, 6, 7);
      std::memcpy(d, &r_lo, 16);
      std::memcpy(d + tail, &r_hi, 16);
    } else {
      using Part = std::conditional_t<Half == 8, std::uint64_t,
                                      std::conditional_t<Half == 4, std::uint32_t, std::uint16_t>>;
      Part a, b;
      std::memcpy(&a, s, Half);
      std::memcpy(&b, s + tail, Half);
      Words2 v;
      if constexpr (Half == 8) {
        v = Words2{a, b};
      } else {
        v = Words2{a | static_cast<std::uint64_t>(b) << (8 * Half), 0};
      }
      Bytes16 lanes;
      std::memcpy(&lanes, m, 16);
      const auto r = reinterpret_cast<Words2>(
          __builtin_ia32_pshufb128(reinterpret_cast<Bytes16>(v), lanes));
      if constexpr (Half == 8) {
        const std::uint64_t r_lo = r[0], r_hi = r[1];
        std::memcpy(d, &r_lo, 8);
        std::memcpy(d + tail, &r_hi, 8);
      } else {
        const auto r_lo = static_cast<Part>(r[0]);
        const auto r_hi = static_cast<Part>(r[0] >> (8 * Half));
        std::memcpy(d, &r_lo, Half);
        std::memcpy(d + tail, &r_hi, Half);
      }
    }
  }
}

// SC8's check of 8 indices of 4 bytes or 4 of 8 (`lanes` of the unsigned type U) that also gives
// each its place along the axis: u = v - lo (wrapping), legal when u <= span, place u - n where
// u >= n (a negative index, counted from the end) and u otherwise. Flags an illegal one in `bad`.
template <class Lanes, class U>
DMLREF_TARGET_AVX2 inline Lanes index_places_avx2(const unsigned char* at, U lo, U span, U n,
                                                  Lanes& bad) noexcept {
  Lanes u;
  std::memcpy(&u, at, 32);
  u -= lo;
  bad |= reinterpret_cast<Lanes>(u > span);
  return u - (reinterpret_cast<Lanes>(u >= n) & n);
}

// narrow_index_run (engine.hpp) for the whole blocks of kNarrowBlock among `count` contiguous
// indices of 4 or 8 bytes: their places written as P, 16 bits (n <= 65536) or 32 (8-byte indices
// only), legality folded into one flag. False when one is illegal; the places written then are
// not meant to be read. The caller takes the rest.
// `stream`: the places are too many to stay cached until the scatter reads them, so the lines
// the run's blocks fill whole are written with streaming stores (fenced here, on the thread that
// wrote them), not read for ownership first. Uint8 4096 x 4096 scattered along axis 1 with int64
// indices, one core: 12.8-13.1 ms -> 11.5-11.8 ms.
inline constexpr std::uint64_t kNarrowBlock = 16;
template <class I, class P>
DMLREF_TARGET_AVX2 bool narrow_index_blocks_avx2(const I* run, std::uint64_t count,
                                              std::make_unsigned_t<I> lo,
                                              std::make_unsigned_t<I> span,
                                              std::make_unsigned_t<I> n, P* places,
                                              bool stream) noexcept {
  static_assert(sizeof(P) == 2 || (sizeof(P) == 4 && sizeof(I) == 8));
  using U = std::make_unsigned_t<I>;
  using Lanes = std::conditional_t<sizeof(I) == 8, Lanes8x4, Lanes4x8>;
  const auto* const at = reinterpret_cast<const unsigned char*>(run);
  // The blocks [stream_from, stream_to) fill whole lines (two blocks to a line of 16-bit places,
  // one of 32-bit); others (a line the run shares with its neighbours) take ordinary stores.
  constexpr std::uint64_t kLinePlaces = 64 / sizeof(P);
  constexpr std::size_t kBlockBytes = kNarrowBlock * sizeof(P);
  const std::uint64_t line_offset = reinterpret_cast<std::uintptr_t>(places) % 64 / sizeof(P);
  const std::uint64_t stream_from = (kLinePlaces - line_offset) % kLinePlaces;
  std::uint64_t stream_to = 0;
  if (stream && stream_from % kNarrowBlock == 0 && stream_from + kLinePlaces <= count) {
    stream_to = stream_from + (count - stream_from) / kLinePlaces * kLinePlaces;
  }
  Lanes bad{};
  std::uint64_t i = 0;
  for (; i + kNarrowBlock <= count; i += kNarrowBlock) {
    prefetch_stream(run + i, kNarrowBlock * sizeof(I));  // a block of int64: two lines
    std::array<Lanes4x8, kBlockBytes / 32> w;  // the block's places
    if constexpr (sizeof(I) == 8) {
      const Lanes a = index_places_avx2<Lanes, U>(at + i * 8, lo, span, n, bad);
      const Lanes b = index_places_avx2<Lanes, U>(at + i * 8 + 32, lo, span, n, bad);
      const Lanes c = index_places_avx2<Lanes, U>(at + i * 8 + 64, lo, span, n, bad);
      const Lanes d = index_places_avx2<Lanes, U>(at + i * 8 + 96, lo, span, n, bad);
      if constexpr (sizeof(P) == 4) {
        // Each place fits 32 bits: the low halves of a and b, then of c and d.
        w[0] = __builtin_shufflevector(reinterpret_cast<Lanes4x8>(a), reinterpret_cast<Lanes4x8>(b),
                                       0, 2, 4, 6, 8, 10, 12, 14);
        w[1] = __builtin_shufflevector(reinterpret_cast<Lanes4x8>(c), reinterpret_cast<Lanes4x8>(d),
                                       0, 2, 4, 6, 8, 10, 12, 14);
      } else {
        // Each place fits 16 bits: the low halves of a and b, within 128-bit lanes (a0 a1 b0 b1 |
        // a2 a3 b2 b3), then their low halves in order.
        const Lanes4x8 ab = __builtin_shufflevector(reinterpret_cast<Lanes4x8>(a),
                                                    reinterpret_cast<Lanes4x8>(b), 0, 2, 8, 10, 4,
                                                    6, 12, 14);
        const Lanes4x8 cd = __builtin_shufflevector(reinterpret_cast<Lanes4x8>(c),
                                                    reinterpret_cast<Lanes4x8>(d), 0, 2, 8, 10, 4,
                                                    6, 12, 14);
        w[0] = reinterpret_cast<Lanes4x8>(__builtin_shufflevector(
            reinterpret_cast<Lanes2x16>(ab), reinterpret_cast<Lanes2x16>(cd), 0, 2, 8, 10, 4, 6,
            12, 14, 16, 18, 24, 26, 20, 22, 28, 30));
      }
    } else {
      const Lanes a = index_places_avx2<Lanes, U>(at + i * 4, lo, span, n, bad);
      const Lanes b = index_places_avx2<Lanes, U>(at + i * 4 + 32, lo, span, n, bad);
      w[0] = reinterpret_cast<Lanes4x8>(__builtin_shufflevector(
          reinterpret_cast<Lanes2x16>(a), reinterpret_cast<Lanes2x16>(b), 0, 2, 4, 6, 8, 10, 12,
          14, 16, 18, 20, 22, 24, 26, 28, 30));
    }
    if (i >= stream_from && i < stream_to) {
      stream_aligned_run(reinterpret_cast<unsigned char*>(places + i),
                         reinterpret_cast<const unsigned char*>(w.data()), kBlockBytes);
    } else {
      std::memcpy(places + i, w.data(), kBlockBytes);
    }
  }
  if (stream_to != 0) stream_fence();
  U any_bad = 0;
  for (std::size_t k = 0; k < sizeof(Lanes) / sizeof(U); ++k) any_bad |= bad[k];
  return any_bad == 0;
}

// One block's runs in stream_shifted_rows_avx2: row r's run is the `bytes` bytes at
// src + r * src_step.
struct ShiftedRowRun {
  const unsigned char* src;
  std::int64_t src_step;
  std::uint64_t bytes;
};

// pshufb controls for stream_shifted_rows_avx2, from the 16 bytes at kShiftControls + o:
// o = 16 - k moves a vector's bytes up by k, zeros below; o = 32 - k moves its bytes from 16 - k
// down to the start, zeros above.
alignas(16) inline constexpr signed char kShiftControls[48] = {
    -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128,
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,   15,
    -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128};

// For a run of n < 16 bytes loaded as two overlapping halves (shifted_row: 8-byte halves from 8
// bytes, 4-byte ones from 4, else its bytes 0, n / 2 and n - 1), the pshufb control that puts
// its byte j at j and zeros from n on.
struct ShortRunControls {
  alignas(16) signed char at[16][16];
};
constexpr ShortRunControls short_run_controls() {
  ShortRunControls c{};
  for (int n = 0; n < 16; ++n) {
    // The second half's load ends at the run's end: its byte j sits at j + (2 * half - n).
    const int half = n >= 8 ? 8 : n >= 4 ? 4 : 0;
    for (int j = 0; j < 16; ++j) {
      const int from = j >= n ? -128 : j < half || half == 0 ? j : j + 2 * half - n;
      c.at[n][j] = static_cast<signed char>(from);
    }
  }
  return c;
}
inline constexpr ShortRunControls kShortRunControls = short_run_controls();

// The state of stream_shifted_rows_avx2 between runs: the 16 aligned bytes at to + at are the
// next to go out, `at` negative for the first 16 where `to` is not on a boundary (their bytes
// before `to` are not this call's, so ordinary stores write the rest); their first `held_bytes`
// bytes are in `held`, always zeros above.
struct ShiftedStream {
  using Bytes16 = char __attribute__((vector_size(16)));
  unsigned char* to;
  std::int64_t at;
  Bytes16 held;
  std::uint64_t held_bytes;
};

DMLREF_TARGET_AVX2 DMLREF_ALWAYS_INLINE ShiftedStream::Bytes16 shifted_load(const void* p) {
  ShiftedStream::Bytes16 v;
  std::memcpy(&v, p, 16);
  return v;
}

DMLREF_TARGET_AVX2 DMLREF_ALWAYS_INLINE ShiftedStream::Bytes16 shifted_shuffle(
    ShiftedStream::Bytes16 v, const signed char* control) {
  return __builtin_ia32_pshufb128(v, shifted_load(control));
}

DMLREF_TARGET_AVX2 DMLREF_ALWAYS_INLINE void shifted_stream(unsigned char* d,
                                                           ShiftedStream::Bytes16 v) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(d), reinterpret_cast<__m128i>(v));
}

// Writes the next 16 bytes, `v`: kFirstRow where they may be the partial first 16.
template <bool kFirstRow>
DMLREF_TARGET_AVX2 DMLREF_ALWAYS_INLINE void shifted_put(ShiftedStream& st,
                                                        ShiftedStream::Bytes16 v) {
  if (!kFirstRow || st.at >= 0) {
    shifted_stream(st.to + st.at, v);
  } else {
    unsigned char bytes[16];
    std::memcpy(bytes, &v, 16);
    std::memcpy(st.to, bytes - st.at, static_cast<std::size_t>(16 + st.at));
  }
  st.at += 16;
}

// Row r of stream_shifted_rows_avx2 (kFirstRow: one before the first whole 16 went out). Always
// inlined, so the stream's state stays in registers, never written to memory between the
// streaming stores (see copy_block_runs). `skip`: bytes of the first run already written.
template <bool kShortRuns, bool kFirstRow>
DMLREF_TARGET_AVX2 DMLREF_ALWAYS_INLINE void shifted_row(const ShiftedRowRun* runs,
                                                        std::size_t count, std::uint64_t r,
                                                        ShiftedStream& st, std::uint64_t& skip) {
  using Bytes16 = ShiftedStream::Bytes16;
  using Words2 = std::uint64_t __attribute__((vector_size(16)));
  for (std::size_t b = 0; b < count; ++b) {
    const unsigned char* const s = runs[b].src + static_cast<std::int64_t>(r) * runs[b].src_step;
    const std::uint64_t n = runs[b].bytes;
    if (!kShortRuns || n >= 16) {
      std::uint64_t i = skip;
      skip = 0;
      if (st.held_bytes != 0) {
        shifted_put<kFirstRow>(
            st, st.held | shifted_shuffle(shifted_load(s), kShiftControls + 16 - st.held_bytes));
        i = 16 - st.held_bytes;
      }
      for (; i + 16 <= n; i += 16, st.at += 16) shifted_stream(st.to + st.at, shifted_load(s + i));
      // None held: the control is all zeros, and so is `held`, which a short run's bytes are
      // ORed into.
      st.held_bytes = n - i;
      if (kShortRuns || st.held_bytes != 0) {
        st.held = shifted_shuffle(shifted_load(s + n - 16), kShiftControls + 32 - st.held_bytes);
      }
    } else {
      // Two overlapping loads of 8 or 4 bytes (the ends of the run), or its 1-3 bytes.
      std::uint64_t lo = 0, hi = 0;
      if (n >= 8) {
        std::memcpy(&lo, s, 8);
        std::memcpy(&hi, s + n - 8, 8);
      } else if (n >= 4) {
        std::uint32_t first = 0, last = 0;
        std::memcpy(&first, s, 4);
        std::memcpy(&last, s + n - 4, 4);
        lo = first | std::uint64_t{last} << 32;
      } else {
        lo = s[0] | std::uint64_t{s[n / 2]} << 8 | std::uint64_t{s[n - 1]} << 16;
      }
      const Bytes16 v =
          shifted_shuffle(reinterpret_cast<Bytes16>(Words2{lo, hi}), kShortRunControls.at[n]);
      const Bytes16 merged = st.held | shifted_shuffle(v, kShiftControls + 16 - st.held_bytes);
      if (st.held_bytes + n < 16) {
        st.held = merged;
        st.held_bytes += n;
      } else {
        shifted_put<kFirstRow>(st, merged);
        st.held = shifted_shuffle(v, kShiftControls + 32 - st.held_bytes);  // what did not fit
        st.held_bytes = st.held_bytes + n - 16;
      }
    }
  }
}

// Rows back to back from `to`, each the runs of `count` blocks in turn (a JOIN into a packed
// whole), for `rows` rows, streamed in address order at any byte offset. The output goes 16
// aligned bytes at a time, assembled in a register: a run's bytes are shifted into place after
// those held from the runs before (a run of 16 bytes or more loaded 16 at a time, its last
// partial 16 held; a shorter one loaded whole from two overlapping halves). Only the 16 bytes
// around `to`'s start and the bytes after the last whole 16 take ordinary stores, and loads stay
// within each run. The caller fences.
// kShortRuns: whether any run is under 16 bytes. Without, that branch is compiled out and the
// bytes before the first boundary (the first run's) are copied first: the general form took
// runs of 48 and 52 bytes at 1.06-1.09 ms for 16 MiB, against 0.86-0.96.
template <bool kShortRuns>
DMLREF_TARGET_AVX2 void stream_shifted_rows_avx2(const ShiftedRowRun* runs, std::size_t count,
                                                 std::uint64_t rows, unsigned char* to) noexcept {
  const auto misalign = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(to) % 16);
  ShiftedStream st{to, -misalign, {}, static_cast<std::uint64_t>(misalign)};
  std::uint64_t skip = 0;
  if (!kShortRuns && misalign != 0 && rows != 0) {
    skip = static_cast<std::uint64_t>(16 - misalign);
    std::memcpy(to, runs[0].src, skip);
    st.at = static_cast<std::int64_t>(skip);
    st.held_bytes = 0;
  }
  std::uint64_t r = 0;
  for (; r < rows && st.at < 0; ++r) shifted_row<kShortRuns, true>(runs, count, r, st, skip);
  for (; r < rows; ++r) shifted_row<kShortRuns, false>(runs, count, r, st, skip);
  // The bytes held after the last whole 16 (from `to` on, if no 16 went out).
  unsigned char tail[16];
  std::memcpy(tail, &st.held, 16);
  const std::uint64_t from = st.at < 0 ? static_cast<std::uint64_t>(-st.at) : 0;
  if (st.held_bytes > from) {
    std::memcpy(to + (st.at + static_cast<std::int64_t>(from)), tail + from,
                st.held_bytes - from);
  }
}

#endif  // DMLREF_ENGINE_AVX2

}  // namespace dmlref::detail
