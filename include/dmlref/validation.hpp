// dmlref: the tensor rules every operator checks (T2-T4, T8 overflow, T12, T13), shared by the
// typed and the runtime layer so no operator carries its own copy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmlref/error.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/tensor_view.hpp"

namespace dmlref {

// Above this many elements the exact T12 check (enumerate every offset) is not attempted and an
// output whose strides do not nest is rejected conservatively, saying so.
inline constexpr std::uint64_t kExactOverlapCheckLimit = std::uint64_t{1} << 22;

namespace detail {

// T2, T3, T4 and the 64-bit reach of the strides for one tensor's layout.
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
  // Strides that interleave may still be injective: decide exactly when that is affordable.
  const std::uint64_t count = layout.element_count();
  if (count > kExactOverlapCheckLimit) {
    if (conservative) *conservative = true;
    return false;
  }
  std::vector<std::int64_t> offsets;
  offsets.reserve(count);
  for_each_coordinate(layout, [&](const Coord& c) { offsets.push_back(layout.offset(c)); });
  std::sort(offsets.begin(), offsets.end());
  return std::adjacent_find(offsets.begin(), offsets.end()) == offsets.end();
}

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
};

// Byte range of a validated layout over `base` (element offsets times element size).
inline TensorExtent tensor_extent(std::string name, const void* base, const Layout& layout,
                                  std::size_t element_bytes, bool is_output) {
  const auto r = layout.offset_range();
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  const auto eb = static_cast<std::int64_t>(element_bytes);
  return {std::move(name), b + static_cast<std::uintptr_t>(r->min * eb),
          b + static_cast<std::uintptr_t>((r->max + 1) * eb), is_output};
}

template <class T>
TensorExtent tensor_extent(std::string name, const TensorView<T>& view, bool is_output) {
  return tensor_extent(std::move(name), view.data(), view.layout(), sizeof(T), is_output);
}

namespace detail {

// T13: no output overlaps an input or another output; inputs may overlap each other. Compares the
// byte ranges [begin, end): exact for the ranges, conservative for tensors that interleave inside
// one range, which the message says.
inline void check_no_overlap(std::string_view op, std::span<const TensorExtent> tensors) {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    for (std::size_t j = 0; j < tensors.size(); ++j) {
      const TensorExtent& a = tensors[i];
      const TensorExtent& b = tensors[j];
      if (i == j || !a.is_output) continue;
      if (b.is_output && j < i) continue;  // each output pair once
      if (a.begin < b.end && b.begin < a.end) {
        fail(ErrorCode::T13, op, ": ", a.name, " (bytes [", a.begin - std::min(a.begin, b.begin),
             ", ", a.end - std::min(a.begin, b.begin), ")) overlaps ", b.name, " (bytes [",
             b.begin - std::min(a.begin, b.begin), ", ", b.end - std::min(a.begin, b.begin),
             ")), relative to the lower start; no output may overlap an input or another output "
             "(byte-range check: tensors that interleave within one range count as overlapping)");
      }
    }
  }
}

// The whole per-view check of the typed layer: pointer, T2-T4, T8 reach, and T12 for outputs.
template <class T>
void check_view(std::string_view op, std::string_view tensor, const TensorView<T>& view,
                bool is_output) {
  if (view.data() == nullptr) {
    fail(ErrorCode::NullPointer, op, ": ", tensor, " has a null data pointer");
  }
  check_layout(op, tensor, view.layout());
  check_byte_reach(op, tensor, view.layout(), sizeof(T));
  if (is_output) check_output_addresses_once(op, tensor, view.layout());
}

}  // namespace detail
}  // namespace dmlref
