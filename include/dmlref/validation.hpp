// dmlref: the tensor rules every operator checks (T2-T4, T8 overflow, T12, T13), shared by the
// typed and the runtime layer so no operator carries its own copy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dmlref/error.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/tensor_view.hpp"

namespace dmlref {

// Above this many elements the T12 check does not enumerate offsets: an output whose strides do
// not nest is rejected conservatively, saying so, unless the pigeonhole rule already proves a
// repeat (addresses_each_element_once).
inline constexpr std::uint64_t kExactOverlapCheckLimit = std::uint64_t{1} << 22;

namespace detail {

// T2, T3, T4 and the 64-bit reach of the strides for one tensor's layout.
template <class Deferred = void>
inline void check_layout(std::string_view op, std::string_view tensor, const Layout& layout) {
  if (layout.rank < 1 || layout.rank > kMaxRank) {
    fail(ErrorCode::T2, op, ": ", tensor, ".DimensionCount is ", layout.rank,
         "; it must be between 1 and ", kMaxRank);
  }
  for (std::uint32_t d = 0; d < layout.rank; ++d) {
    if (layout.sizes[d] == 0) {
      fail(ErrorCode::T3, op, ": ", tensor, ".Sizes[", d,
           "] is 0; every size must be at least 1 (DirectML has no empty tensors)");
    }
  }
  const auto count = layout.checked_element_count();
  if (!count || *count > kMaxElementCount) {
    fail(ErrorCode::T4, op, ": ", tensor, ".Sizes ", layout.sizes_string(), " hold ",
         count ? std::to_string(*count) : std::string("more than 2^64"),
         " elements; at most 4294967295 (2^32 - 1) are allowed");
  }
  if (!layout.offset_range()) {
    fail(ErrorCode::T8, op, ": ", tensor, ".Strides ", layout.strides_string(), " with Sizes ",
         layout.sizes_string(), " reach past a 64-bit element offset");
  }
}

// T8 on the typed layer: the byte extent must be representable, so a view's address range can be
// computed without wrapping.
template <class Deferred = void>
inline void check_byte_reach(std::string_view op, std::string_view tensor, const Layout& layout,
                             std::size_t element_bytes) {
  const auto r = layout.offset_range();  // check_layout ran first
  const auto lo = checked_mul(r->min, static_cast<std::int64_t>(element_bytes));
  // r->max may be INT64_MAX itself, so one past it needs the check too.
  const auto end = checked_add(r->max, std::int64_t{1});
  const auto hi = end ? checked_mul(*end, static_cast<std::int64_t>(element_bytes)) : std::nullopt;
  if (!lo || !hi) {
    fail(ErrorCode::T8, op, ": ", tensor, ".Strides ", layout.strides_string(), " with Sizes ",
         layout.sizes_string(), " reach past a 64-bit byte offset");
  }
}

// T12: true when no two coordinates of `layout` share an element offset.
template <class Deferred = void>
inline bool addresses_each_element_once(const Layout& layout, bool* conservative = nullptr) {
  if (conservative) *conservative = false;
  struct Dim {
    std::uint64_t size;
    std::uint64_t stride;
  };
  std::vector<Dim> dims;
  for (std::uint32_t d = 0; d < layout.rank; ++d) {
    if (layout.sizes[d] <= 1) continue;
    if (layout.strides[d] == 0) return false;
    const std::int64_t s = layout.strides[d];
    dims.push_back({layout.sizes[d], s < 0 ? 0 - static_cast<std::uint64_t>(s)
                                           : static_cast<std::uint64_t>(s)});
  }
  // Fast proof: sorted by stride, each stride steps past everything the smaller ones reach.
  std::sort(dims.begin(), dims.end(), [](Dim a, Dim b) { return a.stride < b.stride; });
  std::uint64_t reach = 0;  // largest offset the smaller dimensions span
  bool nested = true;
  for (const Dim& dim : dims) {
    if (dim.stride <= reach) {
      nested = false;
      break;
    }
    reach += (dim.size - 1) * dim.stride;  // bounded by the offset range check_layout proved
  }
  if (nested) return true;
  // Every offset is a multiple of the strides' gcd: dividing it out keeps offsets apart or
  // together, and shrinks what the tests below look at.
  std::uint64_t gcd = 0;
  for (const Dim& dim : dims) {
    for (std::uint64_t b = dim.stride; b != 0;) gcd = std::exchange(b, gcd % b);
  }
  // Pigeonhole: fewer offsets within reach than elements means two coordinates share one, at any
  // size and without enumerating. (The reach is the largest offset minus the smallest over the
  // gcd, which check_layout proved fits.)
  std::uint64_t span = 0;
  for (const Dim& dim : dims) span += (dim.size - 1) * (dim.stride / gcd);
  const std::uint64_t count = layout.element_count();
  if (span < count - 1) return false;
  // Strides that interleave may still be injective: decide exactly when that is affordable.
  if (count > kExactOverlapCheckLimit) {
    if (conservative) *conservative = true;
    return false;
  }
  if (span / 8 <= count) {
    // A bit per offset within reach: no more memory than a byte per element, and no sort. The
    // strides are taken positive (a reflection, which keeps offsets apart or together) and over
    // the gcd, so offsets lie in [0, span].
    Layout reduced = layout;
    for (std::uint32_t d = 0; d < reduced.rank; ++d) {
      const std::int64_t s = reduced.strides[d];
      const std::uint64_t magnitude =
          s < 0 ? 0 - static_cast<std::uint64_t>(s) : static_cast<std::uint64_t>(s);
      reduced.strides[d] =
          reduced.sizes[d] <= 1 ? 0 : static_cast<std::int64_t>(magnitude / gcd);  // <= span
    }
    std::vector<bool> seen(span + 1, false);
    bool repeated = false;
    for_each_coordinate(reduced, [&](const Coord& c) {
      const auto at = static_cast<std::uint64_t>(reduced.offset(c));
      repeated = repeated || seen[at];
      seen[at] = true;
    });
    return !repeated;
  }
  std::vector<std::int64_t> offsets;
  offsets.reserve(count);
  for_each_coordinate(layout, [&](const Coord& c) { offsets.push_back(layout.offset(c)); });
  std::sort(offsets.begin(), offsets.end());
  return std::adjacent_find(offsets.begin(), offsets.end()) == offsets.end();
}

template <class Deferred = void>
inline void check_output_addresses_once(std::string_view op, std::string_view tensor,
                                        const Layout& layout) {
  for (std::uint32_t d = 0; d < layout.rank; ++d) {
    if (layout.sizes[d] > 1 && layout.strides[d] == 0) {
      fail(ErrorCode::T12, op, ": ", tensor, ".Strides[", d, "] is 0 with Sizes[", d, "] ",
           layout.sizes[d], "; an output must not address an element twice (no broadcast outputs)");
    }
  }
  bool conservative = false;
  if (!addresses_each_element_once(layout, &conservative)) {
    fail(ErrorCode::T12, op, ": ", tensor, ".Strides ", layout.strides_string(), " with Sizes ",
         layout.sizes_string(),
         conservative ? " interleave and the output is too large to prove they never address an "
                        "element twice (conservative check); an output must address each element "
                        "once"
                      : " address some element twice; an output must address each element once");
  }
}

}  // namespace detail

// One operand for the aliasing check (T13): where its bytes start and end.
struct TensorExtent {
  std::string name;           // "OutputTensors[1]"
  std::uintptr_t begin = 0;   // first byte addressed
  std::uintptr_t end = 0;     // one past the last byte addressed
  bool is_output = false;
  // The range would run past either end of the address space (only a buffer that claims more
  // bytes than memory has can say so); begin and end are then meaningless and T13 rejects it.
  bool wraps = false;
};

// Byte range of a validated layout over `base` (element offsets times element size), computed in
// unsigned 64-bit arithmetic with every step checked: a range past the address space sets `wraps`.
inline TensorExtent tensor_extent(std::string name, const void* base, const Layout& layout,
                                  std::size_t element_bytes, bool is_output) {
  TensorExtent e{std::move(name), 0, 0, is_output, true};
  const auto r = layout.offset_range();
  if (!r) return e;
  // |min| and max + 1 as unsigned: min is at most 0 and max at least 0.
  const std::uint64_t below = 0 - static_cast<std::uint64_t>(r->min);
  const std::uint64_t above = static_cast<std::uint64_t>(r->max) + 1;
  const auto below_bytes = detail::checked_mul(below, std::uint64_t{element_bytes});
  const auto above_bytes = detail::checked_mul(above, std::uint64_t{element_bytes});
  const auto b = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(base));
  if (!below_bytes || !above_bytes || *below_bytes > b) return e;
  const auto end = detail::checked_add(b, *above_bytes);
  if (!end || *end > std::numeric_limits<std::uintptr_t>::max()) return e;
  e.begin = static_cast<std::uintptr_t>(b - *below_bytes);
  e.end = static_cast<std::uintptr_t>(*end);
  e.wraps = false;
  return e;
}

template <class T>
TensorExtent tensor_extent(std::string name, const TensorView<T>& view, bool is_output) {
  return tensor_extent(std::move(name), view.data(), view.layout(), sizeof(T), is_output);
}

namespace detail {

inline bool extents_overlap(const TensorExtent& a, const TensorExtent& b) noexcept {
  return a.begin < b.end && b.begin < a.end;
}

// T13: no output overlaps an input or another output; inputs may overlap each other. Compares the
// byte ranges [begin, end): exact for the ranges, conservative for tensors that interleave inside
// one range, which the message says. O(n log n): a sweep over the ranges sorted by start finds
// every output that overlaps anything; the message names the first such output (by position) and
// the first tensor it overlaps, the same pair a check of every pair in order would name.
template <class Deferred = void>
inline void check_no_overlap(std::string_view op, std::span<const TensorExtent> tensors) {
  for (const TensorExtent& t : tensors) {
    if (t.wraps) {
      fail(ErrorCode::T13, op, ": ", t.name,
           "'s bytes run past the end of the 64-bit address space from its buffer's address; "
           "no buffer can hold them, so its overlap with the other tensors cannot be checked "
           "(no output may overlap an input or another output)");
    }
  }
  std::vector<std::size_t> by_begin(tensors.size());
  for (std::size_t i = 0; i < by_begin.size(); ++i) by_begin[i] = i;
  std::stable_sort(by_begin.begin(), by_begin.end(), [&](std::size_t x, std::size_t y) {
    return tensors[x].begin < tensors[y].begin;
  });
  // A tensor overlaps one that starts no later iff the largest end before it passes its begin,
  // and one that starts no earlier iff its successor in this order starts before its end.
  std::size_t first_output = tensors.size();
  std::uintptr_t max_end_before = 0;
  for (std::size_t k = 0; k < by_begin.size(); ++k) {
    const TensorExtent& t = tensors[by_begin[k]];
    const bool overlaps = (k > 0 && max_end_before > t.begin) ||
                          (k + 1 < by_begin.size() && tensors[by_begin[k + 1]].begin < t.end);
    if (t.is_output && overlaps) first_output = std::min(first_output, by_begin[k]);
    max_end_before = std::max(max_end_before, t.end);
  }
  if (first_output == tensors.size()) return;
  const TensorExtent& a = tensors[first_output];
  for (std::size_t j = 0; j < tensors.size(); ++j) {
    const TensorExtent& b = tensors[j];
    if (j == first_output || !extents_overlap(a, b)) continue;
    const std::uintptr_t low = std::min(a.begin, b.begin);
    fail(ErrorCode::T13, op, ": ", a.name, " (bytes [", a.begin - low, ", ", a.end - low,
         ")) overlaps ", b.name, " (bytes [", b.begin - low, ", ", b.end - low,
         ")), relative to the lower start; no output may overlap an input or another output "
         "(byte-range check: tensors that interleave within one range count as overlapping)");
  }
}

// A layout's Sizes as the vector the validators return.
template <class Deferred = void>
inline std::vector<std::uint32_t> size_vector(const Layout& layout) {
  const std::span<const std::uint32_t> sizes = layout.size_span();
  return {sizes.begin(), sizes.end()};
}

// T13 over extents listed in place: check_no_overlap(op, {tensor_extent(...), ...}).
template <class Deferred = void>
inline void check_no_overlap(std::string_view op, std::initializer_list<TensorExtent> tensors) {
  check_no_overlap(op, std::span<const TensorExtent>(tensors.begin(), tensors.size()));
}

// The whole per-view check of the typed layer: pointer, T2-T4, T8 reach, and T12 for outputs.
// Untyped (the element size given), so it compiles once rather than once per element type.
template <class Deferred = void>
inline void check_view(std::string_view op, std::string_view tensor, const void* data,
                       const Layout& layout, std::size_t element_bytes, bool is_output) {
  if (data == nullptr) fail(ErrorCode::NullPointer, op, ": ", tensor, " has a null data pointer");
  check_layout(op, tensor, layout);
  check_byte_reach(op, tensor, layout, element_bytes);
  if (is_output) check_output_addresses_once(op, tensor, layout);
}

template <class T>
void check_view(std::string_view op, std::string_view tensor, const TensorView<T>& view,
                bool is_output) {
  check_view(op, tensor, view.data(), view.layout(), sizeof(T), is_output);
}

}  // namespace detail
}  // namespace dmlref
