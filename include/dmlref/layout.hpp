// dmlref: sizes and strides of a 1-8 dimensional tensor, with overflow-checked arithmetic.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "dmlref/error.hpp"

namespace dmlref {

inline constexpr std::uint32_t kMaxRank = 8;
// T4: DirectML addresses at most 2^32 - 1 elements per tensor.
inline constexpr std::uint64_t kMaxElementCount = 0xFFFFFFFFull;

// A coordinate: one index per dimension, the first `rank` entries meaningful.
using Coord = std::array<std::uint32_t, kMaxRank>;

namespace detail {

inline std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// "{1,1,2,3}", the pages' notation.
template <class Int>
std::string brace_list(std::span<const Int> values, char open = '{', char close = '}') {
  std::string s(1, open);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) s += ',';
    s += std::to_string(values[i]);
  }
  return s + close;
}

// "[0,1,2]": an element's coordinate as messages and reports name it after a tensor's name.
inline std::string coordinate_string(const Coord& c, std::uint32_t rank) {
  return brace_list(std::span<const std::uint32_t>(c.data(), rank), '[', ']');
}

}  // namespace detail

// Sizes and strides (in elements) of one tensor. Only the first `rank` entries are meaningful;
// the rest stay zero so two equal layouts compare equal.
struct Layout {
  std::uint32_t rank = 0;
  std::array<std::uint32_t, kMaxRank> sizes{};
  std::array<std::int64_t, kMaxRank> strides{};

  // Packed row-major strides (T5). Strides of a tensor too large for T4 saturate instead of
  // wrapping; validation rejects such a tensor before any stride is used.
  static Layout packed(std::span<const std::uint32_t> sizes) {
    Layout l = with_rank(sizes.size());
    std::int64_t stride = 1;
    for (std::size_t d = sizes.size(); d-- > 0;) {
      l.sizes[d] = sizes[d];
      l.strides[d] = stride;
      stride = detail::checked_mul(stride, static_cast<std::int64_t>(sizes[d]))
                   .value_or(std::numeric_limits<std::int64_t>::max());
    }
    return l;
  }
  static Layout packed(std::initializer_list<std::uint32_t> sizes) {
    return packed(std::span<const std::uint32_t>(sizes.begin(), sizes.size()));
  }

  static Layout strided(std::span<const std::uint32_t> sizes, std::span<const std::int64_t> strides) {
    if (sizes.size() != strides.size()) {
      detail::fail(ErrorCode::T2, "Layout: ", sizes.size(), " sizes but ", strides.size(),
                   " strides; each dimension needs one of each");
    }
    Layout l = with_rank(sizes.size());
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      l.sizes[d] = sizes[d];
      l.strides[d] = strides[d];
    }
    return l;
  }
  static Layout strided(std::initializer_list<std::uint32_t> sizes,
                        std::initializer_list<std::int64_t> strides) {
    return strided(std::span<const std::uint32_t>(sizes.begin(), sizes.size()),
                   std::span<const std::int64_t>(strides.begin(), strides.size()));
  }

  std::span<const std::uint32_t> size_span() const noexcept { return {sizes.data(), rank}; }
  std::span<const std::int64_t> stride_span() const noexcept { return {strides.data(), rank}; }

  // Product of the sizes, or nullopt when it overflows 64 bits. T4 bounds it further.
  std::optional<std::uint64_t> checked_element_count() const noexcept {
    std::uint64_t n = 1;
    for (std::uint32_t d = 0; d < rank; ++d) {
      auto next = detail::checked_mul(n, sizes[d]);
      if (!next) return std::nullopt;
      n = *next;
    }
    return n;
  }
  // Only for layouts that passed validation (T4), where the count cannot overflow.
  std::uint64_t element_count() const noexcept { return checked_element_count().value_or(0); }

  // Smallest and largest element offset addressed (T6), or nullopt when they overflow 64 bits.
  // Negative strides (typed layer only) make the smallest offset negative.
  struct OffsetRange {
    std::int64_t min;
    std::int64_t max;
  };
  std::optional<OffsetRange> offset_range() const noexcept {
    OffsetRange r{0, 0};
    for (std::uint32_t d = 0; d < rank; ++d) {
      if (sizes[d] == 0) return std::nullopt;
      auto reach = detail::checked_mul(static_cast<std::int64_t>(sizes[d] - 1), strides[d]);
      if (!reach) return std::nullopt;
      auto& end = *reach < 0 ? r.min : r.max;
      auto sum = detail::checked_add(end, *reach);
      if (!sum) return std::nullopt;
      end = *sum;
    }
    return r;
  }

  // T6: element offset of a coordinate. No bounds check: see TensorView::at for a checked access.
  std::int64_t offset(const Coord& c) const noexcept {
    std::int64_t off = 0;
    for (std::uint32_t d = 0; d < rank; ++d) off += static_cast<std::int64_t>(c[d]) * strides[d];
    return off;
  }

  bool is_packed() const noexcept { return *this == packed(size_span()); }

  std::string sizes_string() const { return detail::brace_list(size_span()); }
  std::string strides_string() const { return detail::brace_list(stride_span()); }

  friend bool operator==(const Layout&, const Layout&) = default;

 private:
  static Layout with_rank(std::size_t rank) {
    if (rank > kMaxRank) {
      detail::fail(ErrorCode::T2, "Layout: DimensionCount is ", rank, " but at most ", kMaxRank,
                   " dimensions are supported");
    }
    Layout l;
    l.rank = static_cast<std::uint32_t>(rank);
    return l;
  }
};

// The coordinate iteration core every operator's reference loop uses: calls f(c) for every
// coordinate of `sizes[0..rank)` in row-major order (last dimension fastest). Does nothing when
// a size is 0.
template <class F>
void for_each_coordinate(std::uint32_t rank, const std::array<std::uint32_t, kMaxRank>& sizes,
                         F&& f) {
  for (std::uint32_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0) return;
  }
  Coord c{};
  for (;;) {
    f(static_cast<const Coord&>(c));
    std::uint32_t d = rank;
    while (d > 0) {
      --d;
      if (++c[d] < sizes[d]) break;
      c[d] = 0;
      if (d == 0) return;
    }
    if (rank == 0) return;
  }
}

template <class F>
void for_each_coordinate(const Layout& layout, F&& f) {
  for_each_coordinate(layout.rank, layout.sizes, std::forward<F>(f));
}

}  // namespace dmlref
