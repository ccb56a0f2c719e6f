// dmlref: the index rule shared by SCATTER (SC8) and GATHER_ND1 (G10): negative signed indices
// count from the end, and an index outside [0, n) is an error unless the caller opts in to clamping.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "dmlref/data_type.hpp"
#include "dmlref/mapping.hpp"
#include "dmlref/prefetch.hpp"

namespace dmlref {

// IndexPolicy (Error, Clamp) is declared with the device-usable mapping (mapping.hpp), whose
// index functions below are the one definition of the rule.

// The negative-index rule without the range check, for loops that test every index: the result
// is below n exactly when the index is legal (in [-n, n) signed, [0, n) unsigned), and then it is
// the element the index selects (mapping::wrap_index).
template <IndexElement I>
constexpr std::uint64_t wrap_index(I value, std::uint64_t n) noexcept {
  return mapping::wrap_index(value, n);
}

// The index after the negative-index rule, or nullopt when it is outside [0, n).
template <IndexElement I>
constexpr std::optional<std::uint64_t> normalize_index(I value, std::uint64_t n) noexcept {
  const std::uint64_t k = wrap_index(value, n);
  if (k >= n) return std::nullopt;
  return k;
}

// The legal indices of a dimension of n >= 1 elements as bounds in I itself: v is legal exactly
// when lo <= v <= hi (the negative-index rule included: lo is -n, or I's minimum when n is
// larger). A loop checking many indices compares in their own width, which vectorises where a
// 64-bit compare would not (baseline x86-64 has no 64-bit vector compare).
template <IndexElement I>
struct IndexBounds {
  I lo;
  I hi;
  constexpr bool contains(I v) const noexcept { return !(v < lo) & !(v > hi); }
};

template <IndexElement I>
constexpr IndexBounds<I> legal_index_bounds(std::uint64_t n) noexcept {
  constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<I>::max());
  const I hi = static_cast<I>(std::min(n - 1, max));
  if constexpr (std::is_signed_v<I>) {
    // -n fits in I when n <= max + 1 (= |min|); otherwise every negative value of I is legal.
    const I lo = n - 1 <= max ? static_cast<I>(-static_cast<std::int64_t>(n - 1) - 1)
                              : std::numeric_limits<I>::min();
    return {lo, hi};
  } else {
    return {0, hi};
  }
}

// True when each of the n indices run[i * step] lies within `bounds`: the inner loop of the SC8
// and G10 passes. An integer AND of the tests, and a unit-stride loop of its own: both vectorise;
// the unit-stride loop asks for its indices ahead (prefetch_stream), since they are read once,
// usually from memory.
template <IndexElement I>
bool all_indices_legal(const I* run, std::int64_t step, std::uint64_t n,
                       IndexBounds<I> bounds) noexcept {
  unsigned good = 1;
  if constexpr (sizeof(I) == 8) {
    if (step == 1) {
      // Baseline x86-64 has no 64-bit vector compare, so this loop is scalar: one unsigned
      // compare per index (v - lo, wrapping, is at most hi - lo exactly when lo <= v <= hi), as
      // four running maxima that do not wait on each other, instead of two signed tests in one
      // chain. With scatter_targets' own change, SCATTER of 16 MiB of float32 with int64 indices
      // went from 7.4 to 5.5 ms on one core (perf: this pass 29% of the time before).
      const auto lo = static_cast<std::uint64_t>(bounds.lo);
      const std::uint64_t span = static_cast<std::uint64_t>(bounds.hi) - lo;
      const auto offset = [lo](I v) { return static_cast<std::uint64_t>(v) - lo; };
      std::uint64_t m0 = 0, m1 = 0, m2 = 0, m3 = 0;
      std::uint64_t i = 0;
      for (; i + 8 <= n; i += 8) {
        detail::prefetch_stream(run + i);
        m0 = std::max({m0, offset(run[i]), offset(run[i + 4])});
        m1 = std::max({m1, offset(run[i + 1]), offset(run[i + 5])});
        m2 = std::max({m2, offset(run[i + 2]), offset(run[i + 6])});
        m3 = std::max({m3, offset(run[i + 3]), offset(run[i + 7])});
      }
      for (; i < n; ++i) m0 = std::max(m0, offset(run[i]));
      return std::max({m0, m1, m2, m3}) <= span;
    }
  }
  if (step == 1) {
    // Blocks of a fixed count: GCC's -O2 vectorises only loops whose trip count the vector
    // width divides, so an open-ended loop stays scalar there (5x slower, bench_table scatter).
    constexpr std::uint64_t kBlock = 64 / sizeof(I);
    std::uint64_t i = 0;
    for (; i + kBlock <= n; i += kBlock) {
      detail::prefetch_stream(run + i);
      unsigned block_good = 1;
      for (std::uint64_t j = 0; j < kBlock; ++j) block_good &= bounds.contains(run[i + j]);
      good &= block_good;
    }
    for (; i < n; ++i) good &= bounds.contains(run[i]);
  } else {
    for (std::uint64_t i = 0; i < n; ++i) {
      good &= bounds.contains(run[static_cast<std::int64_t>(i) * step]);
    }
  }
  return good != 0;
}

// The bounds of packed tuples of m indices (1 <= m <= kMaxRank, a tuple's indices adjacent,
// tuples back to back), index j of each tuple within bounds[j]: GATHER_ND1's G10 pass over tuples
// of several indices. all_legal checks a run of tuples in one pass over its indices, against the
// bounds repeated to match them (laid out once, here, for every run), in blocks of a fixed count
// as all_indices_legal's (so -O2 vectorises them), where a pass per tuple position read every
// line m times with a stride of m (64-byte rows gathered by 4-index tuples: the check was a
// quarter of the call).
template <IndexElement I>
class TupleBounds {
 public:
  TupleBounds(const IndexBounds<I>* bounds, std::uint32_t m) noexcept : m_(m) {
    for (std::uint64_t k = 0; k < kBlock * m; ++k) pattern_[k] = bounds[k % m];
  }

  // True when every index of the `count` tuples from `tuples` lies within its position's bounds.
  bool all_legal(const I* tuples, std::uint64_t count) const noexcept {
    const std::uint64_t stretch = kBlock * m_;  // whole blocks and whole tuples
    const std::uint64_t n = count * m_;
    unsigned good = 1;
    std::uint64_t i = 0;
    for (; i + stretch <= n; i += stretch) {
      for (std::uint64_t b = 0; b < stretch; b += kBlock) {
        detail::prefetch_stream(tuples + i + b);
        unsigned block_good = 1;
        for (std::uint64_t j = 0; j < kBlock; ++j) {
          block_good &= pattern_[b + j].contains(tuples[i + b + j]);
        }
        good &= block_good;
      }
    }
    for (std::uint64_t k = 0; i + k < n; ++k) good &= pattern_[k].contains(tuples[i + k]);
    return good != 0;
  }

 private:
  static constexpr std::uint64_t kBlock = 64 / sizeof(I);
  std::array<IndexBounds<I>, kBlock * mapping::kMaxRank> pattern_{};  // index k of a stretch
  std::uint64_t m_;
};

// Clamping policy: the negative-index rule first, then clamp into [0, n-1] (n >= 1).
template <IndexElement I>
constexpr std::uint64_t clamp_index(I value, std::uint64_t n) noexcept {
  return mapping::clamp_index(value, n);
}

// The legal range in messages: "[-4, 3]" for signed index types, "[0, 3]" for unsigned.
inline std::string legal_index_range(bool signed_indices, std::uint64_t n) {
  return (signed_indices ? "[-" + std::to_string(n) : std::string("[0")) + ", " +
         std::to_string(n - 1) + "]";
}
template <IndexElement I>
std::string legal_index_range(std::uint64_t n) {
  return legal_index_range(std::is_signed_v<I>, n);
}

}  // namespace dmlref
