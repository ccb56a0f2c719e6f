// dmlref: the engine's vector paths beyond baseline SSE2, chosen at run time. Each is an
// ordinary function compiled for AVX2 (GCC/Clang's target attribute) and called only when the CPU
// reports AVX2 (engine_avx2_enabled); the SSE2 and scalar paths stay for other CPUs, for MSVC and
// for CUDA translation units (where this header compiles to nothing but the switch). Elements move
// through integer shuffles and stores only, never through float arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "dmlref/strided_copy.hpp"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && \
    !defined(__CUDACC__) && !defined(__CUDA_ARCH__)
#define DMLREF_ENGINE_AVX2 1
#include <immintrin.h>
#define DMLREF_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define DMLREF_ENGINE_AVX2 0
#endif

namespace dmlref::detail {

// Whether the engine takes its AVX2 paths: the CPU's answer, asked once. A reference so that the
// tests can turn it off and run the fallback paths on an AVX2 machine too.
inline bool& engine_avx2_enabled() noexcept {
#if DMLREF_ENGINE_AVX2
  static bool enabled = __builtin_cpu_supports("avx2") != 0;
#else
  static bool enabled = false;
#endif
  return enabled;
}

#if DMLREF_ENGINE_AVX2

// The 32 bytes of `v` as 32 / Bytes elements in reverse order: one cross-lane permute for 4- and
// 8-byte elements; a byte shuffle within each 16-byte lane, then a lane swap, for 1 and 2 bytes.
template <std::size_t Bytes>
DMLREF_TARGET_AVX2 inline __m256i reverse_elements_32(__m256i v) noexcept {
  if constexpr (Bytes == 8) {
    return _mm256_permute4x64_epi64(v, 0x1B);
  } else if constexpr (Bytes == 4) {
    return _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0));
  } else {
    const __m256i order =
        Bytes == 2 ? _mm256_setr_epi8(14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1, 14,
                                      15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1)
                   : _mm256_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15,
                                      14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    return _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, order), 0x4E);
  }
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
    for (; i + 32 <= lb; i += 32) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + (lb - i - 32)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), reverse_elements_32<Bytes>(v));
    }
    if (i < lb) {  // d[lb - 32, lb) holds s[0, 32) reversed
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + (lb - 32)), reverse_elements_32<Bytes>(v));
    }
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
    for (; i + 32 <= cb; i += 32) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + i),
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + i)));
    }
    if (i < cb) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + (cb - 32)),
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + (cb - 32))));
    }
  } else {
    copy_bytes_short(to, from, cb);
  }
}

// `count` rows, row j at src + j * src_step and dst + j * dst_step (bytes), each `row_bytes` long
// with its first lengths[j] elements reversed: the contiguous case of ReversedRuns, a chunk per call.
template <std::size_t Bytes>
DMLREF_TARGET_AVX2 void reverse_rows_avx2(const unsigned char* src, std::int64_t src_step,
                                          unsigned char* dst, std::int64_t dst_step,
                                          const std::uint64_t* lengths, std::uint64_t count,
                                          std::size_t row_bytes) noexcept {
  for (std::uint64_t j = 0; j < count; ++j) {
    const auto jj = static_cast<std::int64_t>(j);
    reverse_row_avx2<Bytes>(src + jj * src_step, dst + jj * dst_step,
                            static_cast<std::size_t>(lengths[j]) * Bytes, row_bytes);
  }
}

#endif  // DMLREF_ENGINE_AVX2

}  // namespace dmlref::detail
