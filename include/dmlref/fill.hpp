// dmlref: seeded, reproducible fills for tensor views: distinct values, random values, indices.
//
// Decisions:
// - Reproducible everywhere: the generator is splitmix64 and every value is derived with integer
//   arithmetic of our own (no std::uniform_*_distribution, whose output differs between standard
//   libraries). The same seed and sizes give the same bits on every platform and compiler.
// - A fill is a function of (seed, sizes): elements are visited in row-major coordinate order, so
//   strides (transposed, padded, reversed views) change where values land in memory, not which
//   coordinate gets which value.
// - Views written by a fill must address each element once (T12), except fill_constant.
// - fill_distinct gives every element a different value, so a misplaced element can never pass.
//   Its value set per type (max_distinct<T>() elements at most; more is ErrorCode::InvalidOption,
//   never a silent wrap):
//     int8/uint8: all 256 values; int16/uint16: all 65536; 32/64-bit integers: any value
//     (a tensor holds at most 2^32 - 1 elements, T4);
//     float16/float/double: every finite, non-zero value (63486 for float16): no NaN (under
//     CompareOptions::nan_equal two NaNs would not be told apart), no infinities (values stay
//     finite for whatever else reads them), and no zeros (-0 and +0 are equal under a ULP
//     tolerance, and an element left at zero by the device can never match). Floats use their
//     whole bit range (subnormals, huge exponents): the strongest test of bit-exact data movement.
//   Tensors of int8/uint8 larger than 256 elements need fill_random (values repeat) or a larger type.
//   A seed defines one sequence of distinct values and a fill may start anywhere in it (`first`),
//   so several tensors filled from one seed over disjoint ranges are distinct from each other too.
// - fill_random: integers uniform over the type or over [lo, hi]; float types get values that are
//   exactly representable in float16 (so one set of values serves every float type and survives a
//   float16 round trip), uniform over the finite float16 bit patterns (±0 and subnormals included),
//   or over the float16 values in [lo, hi] (uniform over representable values, not over the reals).
// - fill_indices: valid indices for an axis of size n, optionally unique (over the whole tensor or
//   along one dimension of the indices, which is what SCATTER needs for no two updates to target
//   one output element), optionally written in the negative form k - n for signed index types.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "dmlref/data_type.hpp"
#include "dmlref/error.hpp"
#include "dmlref/float16.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/tensor_view.hpp"
#include "dmlref/validation.hpp"

namespace dmlref {

// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and fully specified by integer arithmetic.
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(std::uint64_t seed) noexcept : state_(seed) {}

  constexpr std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n), unbiased (rejects the top partial block). n == 0 means the full 2^64.
  constexpr std::uint64_t below(std::uint64_t n) noexcept {
    if (n == 0) return next();
    const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    for (;;) {
      const std::uint64_t r = next();
      if (r >= threshold) return r % n;
    }
  }

 private:
  std::uint64_t state_;
};

namespace detail {

// A keyed bijection on [0, limit) (limit 0: all of [0, 2^bits)): xorshift-multiply rounds on
// `bits`-bit words, each a bijection, with cycle walking to stay below `limit`. Since
// 2^bits < 2 * limit, a walk takes under two rounds on average.
class Permutation {
 public:
  Permutation(std::uint64_t limit, std::uint64_t seed) noexcept : limit_(limit) {
    unsigned bits = 64;
    if (limit != 0) {
      bits = 1;
      while (bits < 64 && (std::uint64_t{1} << bits) < limit) ++bits;
    }
    mask_ = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    shift1_ = bits / 2 > 0 ? bits / 2 : 1;
    shift2_ = bits / 3 > 0 ? bits / 3 : 1;
    SplitMix64 rng(seed);
    key0_ = rng.next() & mask_;
    key1_ = rng.next() & mask_;
    mul0_ = (rng.next() | 1) & mask_;
    mul1_ = (rng.next() | 1) & mask_;
  }

  // x must be in the domain.
  std::uint64_t operator()(std::uint64_t x) const noexcept {
    do {
      x = round(x);
    } while (limit_ != 0 && x >= limit_);
    return x;
  }

 private:
  std::uint64_t round(std::uint64_t x) const noexcept {
    x = (x + key0_) & mask_;
    x ^= x >> shift1_;
    x = (x * mul0_) & mask_;
    x ^= x >> shift2_;
    x = (x * mul1_) & mask_;
    x ^= x >> shift1_;
    return x ^ key1_;
  }

  std::uint64_t limit_;
  std::uint64_t mask_;
  unsigned shift1_, shift2_;
  std::uint64_t key0_ = 0, key1_ = 0, mul0_ = 1, mul1_ = 1;
};

// Bit patterns of the positive finite non-zero values: 1 .. kLargestFinite.
template <class T>
struct FloatBits;
template <> struct FloatBits<float16> {
  using U = std::uint16_t;
  static constexpr std::uint64_t kLargestFinite = 0x7BFF;
  static constexpr std::uint64_t kSign = 0x8000;
};
template <> struct FloatBits<float> {
  using U = std::uint32_t;
  static constexpr std::uint64_t kLargestFinite = 0x7F7FFFFF;
  static constexpr std::uint64_t kSign = 0x80000000;
};
template <> struct FloatBits<double> {
  using U = std::uint64_t;
  static constexpr std::uint64_t kLargestFinite = 0x7FEFFFFFFFFFFFFF;
  static constexpr std::uint64_t kSign = 0x8000000000000000;
};

template <class T>
T from_bit_pattern(std::uint64_t bits) noexcept {
  if constexpr (std::is_same_v<T, float16>) {
    return float16::from_bits(static_cast<std::uint16_t>(bits));
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::bit_cast<T>(static_cast<typename FloatBits<T>::U>(bits));
  } else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(bits));  // modular: the two's complement pattern
  }
}

template <class T>
constexpr bool is_float_type = std::is_floating_point_v<T> || std::is_same_v<T, float16>;

// The k-th value of fill_distinct's value set (k < max_distinct<T>()).
template <class T>
T distinct_value_of_rank(std::uint64_t k) noexcept {
  if constexpr (is_float_type<T>) {
    constexpr std::uint64_t kHalf = FloatBits<T>::kLargestFinite;
    const std::uint64_t bits = k < kHalf ? 1 + k : (FloatBits<T>::kSign | (1 + (k - kHalf)));
    return from_bit_pattern<T>(bits);
  } else {
    return from_bit_pattern<T>(k);
  }
}

// Size of fill_distinct's value set as a permutation limit (0: all of 2^64).
template <class T>
constexpr std::uint64_t distinct_limit() noexcept {
  if constexpr (is_float_type<T>) {
    return 2 * FloatBits<T>::kLargestFinite;
  } else if constexpr (sizeof(T) == 8) {
    return 0;
  } else {
    return std::uint64_t{1} << (8 * sizeof(T));
  }
}

// A finite float16 chosen uniformly among the bit patterns with exponent != 31 (±0 included).
inline float16 random_finite_half(SplitMix64& rng) noexcept {
  constexpr std::uint64_t kPositive = 0x7C00;  // patterns 0x0000 .. 0x7BFF
  const std::uint64_t k = rng.below(2 * kPositive);
  return float16::from_bits(static_cast<std::uint16_t>(k < kPositive ? k : 0x8000 | (k - kPositive)));
}

// Position of a finite half on the ordered line (-0 and +0 at 0), and back.
inline std::int64_t half_position(float16 h) noexcept {
  const std::int64_t magnitude = h.bits() & 0x7FFF;
  return (h.bits() & 0x8000) != 0 ? -magnitude : magnitude;
}
inline float16 half_at_position(std::int64_t p) noexcept {
  return p < 0 ? float16::from_bits(static_cast<std::uint16_t>(0x8000 | -p))
               : float16::from_bits(static_cast<std::uint16_t>(p));
}

template <class T>
void check_fill_view(std::string_view fill, const TensorView<T>& view) {
  check_view(fill, "the view", view, /*is_output=*/true);
}

}  // namespace detail

// How many distinct values fill_distinct can give a T (the largest tensor it can fill).
template <Element T>
constexpr std::uint64_t max_distinct() noexcept {
  using V = std::remove_const_t<T>;
  const std::uint64_t limit = detail::distinct_limit<V>();
  return limit == 0 ? std::numeric_limits<std::uint64_t>::max() : limit;
}

// Every element a different value (see the header comment for the value sets). A seed defines a
// sequence of distinct values; the fill takes the `first`-th onwards, so fills of several tensors
// with one seed and disjoint ranges (first = the element count of the tensors before) are distinct
// across the tensors too: a JOIN that takes an element from the wrong input cannot pass either.
// Throws ErrorCode::InvalidOption when first + the element count exceeds max_distinct<T>().
template <class T>
  requires(!std::is_const_v<T>)
void fill_distinct(const TensorView<T>& view, std::uint64_t seed, std::uint64_t first = 0) {
  detail::check_fill_view("fill_distinct", view);
  const std::uint64_t count = view.element_count();
  if (count > max_distinct<T>() || first > max_distinct<T>() - count) {
    detail::fail(ErrorCode::InvalidOption, "fill_distinct: the view has ", count,
                 " elements starting at position ", first, " but ", data_type_name(data_type_of<T>),
                 " has only ", max_distinct<T>(),
                 " distinct values for it; use fill_random (values repeat) or a wider type");
  }
  const detail::Permutation permutation(detail::distinct_limit<T>(), seed);
  std::uint64_t i = first;
  for_each_coordinate(view.layout(), [&](const Coord& c) {
    view[c] = detail::distinct_value_of_rank<T>(permutation(i++));
  });
}

// Random values: integers uniform over the whole type; float types uniform over the finite
// float16 bit patterns, converted exactly (±0, subnormals included; no NaN, no infinity).
template <class T>
  requires(!std::is_const_v<T>)
void fill_random(const TensorView<T>& view, std::uint64_t seed) {
  detail::check_fill_view("fill_random", view);
  SplitMix64 rng(seed);
  for_each_coordinate(view.layout(), [&](const Coord& c) {
    if constexpr (std::is_same_v<T, float16>) {
      view[c] = detail::random_finite_half(rng);
    } else if constexpr (std::is_floating_point_v<T>) {
      view[c] = static_cast<T>(static_cast<float>(detail::random_finite_half(rng)));
    } else {
      view[c] = detail::from_bit_pattern<T>(rng.next());
    }
  });
}

// Integers uniform in [lo, hi] (inclusive). lo > hi is ErrorCode::InvalidOption.
template <class T>
  requires(!std::is_const_v<T> && std::is_integral_v<T>)
void fill_random(const TensorView<T>& view, std::uint64_t seed, std::type_identity_t<T> lo,
                 std::type_identity_t<T> hi) {
  detail::check_fill_view("fill_random", view);
  if (lo > hi) {
    detail::fail(ErrorCode::InvalidOption, "fill_random: the range [", +lo, ", ", +hi,
                 "] is empty; lo must be at most hi");
  }
  // Width of the range in wrapping unsigned arithmetic; 0 means all 2^64 values.
  const std::uint64_t span =
      static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  SplitMix64 rng(seed);
  for_each_coordinate(view.layout(), [&](const Coord& c) {
    view[c] = detail::from_bit_pattern<T>(static_cast<std::uint64_t>(lo) + rng.below(span));
  });
}

// Float types: values exactly representable in float16 and within [lo, hi], uniform over those
// representable values. Throws ErrorCode::InvalidOption when no float16 value lies in [lo, hi]
// (or either bound is NaN).
template <class T>
  requires(!std::is_const_v<T> && detail::is_float_type<T>)
void fill_random(const TensorView<T>& view, std::uint64_t seed, double lo, double hi) {
  detail::check_fill_view("fill_random", view);
  // The float16 values nearest inside the range: round each bound, then step inwards if rounding
  // went outside. Bounds beyond the finite range clamp to the largest finite half.
  auto inside_position = [](double bound, bool is_low) -> std::int64_t {
    const float16 h(bound);
    std::int64_t p = detail::half_position(h);
    if (p > 0x7BFF) p = 0x7BFF;
    if (p < -0x7BFF) p = -0x7BFF;
    const double v = static_cast<double>(detail::half_at_position(p));
    if (is_low && v < bound) ++p;
    if (!is_low && v > bound) --p;
    return p;
  };
  if (!(lo <= hi)) {
    detail::fail(ErrorCode::InvalidOption, "fill_random: the range [", lo, ", ", hi,
                 "] is empty or NaN; lo must be at most hi");
  }
  const std::int64_t plo = inside_position(lo, true);
  const std::int64_t phi = inside_position(hi, false);
  if (plo > phi) {
    detail::fail(ErrorCode::InvalidOption, "fill_random: no float16 value lies in [", lo, ", ",
                 hi, "]");
  }
  SplitMix64 rng(seed);
  const auto span = static_cast<std::uint64_t>(phi - plo + 1);
  for_each_coordinate(view.layout(), [&](const Coord& c) {
    const float16 h = detail::half_at_position(plo + static_cast<std::int64_t>(rng.below(span)));
    if constexpr (std::is_same_v<T, float16>) {
      view[c] = h;
    } else {
      view[c] = static_cast<T>(static_cast<float>(h));
    }
  });
}

// Every element the same value (e.g. a sentinel in an output buffer before the dispatch).
template <class T>
  requires(!std::is_const_v<T>)
void fill_constant(const TensorView<T>& view, std::type_identity_t<T> value) {
  detail::check_view("fill_constant", "the view", view, false);
  for_each_coordinate(view.layout(), [&](const Coord& c) { view[c] = value; });
}

// How fill_indices writes an index k of an axis of size n. Negative forms need a signed type.
enum class IndexSign : std::uint8_t {
  NonNegative,  // k, in [0, n)
  Mixed,        // k or k - n, chosen at random per element
  Negative,     // k - n, in [-n, -1]
};

struct IndexFillOptions {
  IndexSign sign = IndexSign::NonNegative;
  // No two elements of a group address the same element (after the negative-index rule).
  bool unique = false;
  // The groups for `unique`: nullopt, the whole tensor; a dimension d, each line along d of the
  // indices view (all coordinates equal except the d-th). SCATTER with Axis d needs the latter:
  // two updates collide only when they share every coordinate but the axis.
  std::optional<std::uint32_t> unique_along;
};

namespace detail {

template <IndexElement I>
void check_index_fill(std::string_view fill, std::uint64_t axis_size, IndexSign sign) {
  if (axis_size == 0) {
    fail(ErrorCode::InvalidOption, fill, ": the axis size is 0; it must be at least 1");
  }
  if (sign != IndexSign::NonNegative && !std::is_signed_v<I>) {
    fail(ErrorCode::InvalidOption, fill, ": negative indices need a signed index type, not ",
         data_type_name(data_type_of<I>));
  }
  // k <= n - 1 must fit, and so must k - n >= -n for the negative forms; in two's complement
  // both come to n <= max + 1. For uint64 that is 2^64, which wraps to 0: every size fits.
  const std::uint64_t largest = static_cast<std::uint64_t>(std::numeric_limits<I>::max()) + 1;
  if (largest != 0 && axis_size > largest) {
    fail(ErrorCode::InvalidOption, fill, ": the axis size ", axis_size, " does not fit ",
         data_type_name(data_type_of<I>), " indices");
  }
}

template <IndexElement I>
I signed_form(std::uint64_t k, std::uint64_t n, IndexSign sign, SplitMix64& rng) noexcept {
  bool negative = sign == IndexSign::Negative;
  if (sign == IndexSign::Mixed) negative = (rng.next() >> 63) != 0;
  if constexpr (std::is_signed_v<I>) {
    if (negative) return static_cast<I>(static_cast<std::int64_t>(k) - static_cast<std::int64_t>(n));
  }
  return static_cast<I>(k);
}

}  // namespace detail

// Valid indices into an axis of `axis_size` elements (SCATTER's Axis, a GATHER_ND1 dimension).
// Errors (ErrorCode::InvalidOption): axis_size 0 or too large for I, negative forms for an unsigned
// I, `unique` with a group larger than axis_size, `unique_along` outside the view's rank.
template <class I>
  requires(!std::is_const_v<I> && IndexElement<I>)
void fill_indices(const TensorView<I>& view, std::uint64_t seed, std::uint64_t axis_size,
                  const IndexFillOptions& options = {}) {
  detail::check_fill_view("fill_indices", view);
  detail::check_index_fill<I>("fill_indices", axis_size, options.sign);
  SplitMix64 rng(seed);
  if (!options.unique) {
    for_each_coordinate(view.layout(), [&](const Coord& c) {
      const std::uint64_t k = rng.below(axis_size);
      view[c] = detail::signed_form<I>(k, axis_size, options.sign, rng);
    });
    return;
  }
  if (!options.unique_along) {
    const std::uint64_t count = view.element_count();
    if (count > axis_size) {
      detail::fail(ErrorCode::InvalidOption, "fill_indices: ", count,
                   " unique indices cannot fit an axis of size ", axis_size);
    }
    const detail::Permutation permutation(axis_size, rng.next());
    std::uint64_t i = 0;
    for_each_coordinate(view.layout(), [&](const Coord& c) {
      view[c] = detail::signed_form<I>(permutation(i++), axis_size, options.sign, rng);
    });
    return;
  }
  const std::uint32_t along = *options.unique_along;
  if (along >= view.rank()) {
    detail::fail(ErrorCode::InvalidOption, "fill_indices: unique_along is ", along,
                 " but the view has ", view.rank(), " dimensions");
  }
  if (view.size(along) > axis_size) {
    detail::fail(ErrorCode::InvalidOption, "fill_indices: lines along dimension ", along, " hold ",
                 view.size(along), " indices, which cannot be unique in an axis of size ",
                 axis_size);
  }
  // Each line gets its own permutation, keyed by the line's row-major number (the coordinate
  // with the `along` component dropped), so the result does not depend on visiting order.
  const std::uint64_t base_key = rng.next();
  for_each_coordinate(view.layout(), [&](const Coord& c) {
    std::uint64_t line = 0;
    for (std::uint32_t d = 0; d < view.rank(); ++d) {
      if (d != along) line = line * view.size(d) + c[d];
    }
    const detail::Permutation permutation(axis_size, base_key ^ (line * 0x9E3779B97F4A7C15ull));
    view[c] = detail::signed_form<I>(permutation(c[along]), axis_size, options.sign, rng);
  });
}

// Index tuples for GATHER_ND1: the last dimension of the view holds tuples whose j-th component
// addresses a dimension of size axis_sizes[j]. The view's last size must equal axis_sizes.size()
// (ErrorCode::ShapeMismatch otherwise).
template <class I>
  requires(!std::is_const_v<I> && IndexElement<I>)
void fill_index_tuples(const TensorView<I>& view, std::uint64_t seed,
                       std::span<const std::uint64_t> axis_sizes,
                       IndexSign sign = IndexSign::NonNegative) {
  detail::check_fill_view("fill_index_tuples", view);
  const std::uint32_t last = view.rank() - 1;
  if (view.size(last) != axis_sizes.size()) {
    detail::fail(ErrorCode::ShapeMismatch, "fill_index_tuples: the view's last size is ",
                 view.size(last), " but ", axis_sizes.size(), " axis sizes were given");
  }
  for (std::uint64_t n : axis_sizes) detail::check_index_fill<I>("fill_index_tuples", n, sign);
  SplitMix64 rng(seed);
  for_each_coordinate(view.layout(), [&](const Coord& c) {
    const std::uint64_t n = axis_sizes[c[last]];
    view[c] = detail::signed_form<I>(rng.below(n), n, sign, rng);
  });
}

}  // namespace dmlref
