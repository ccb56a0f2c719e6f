// dmlref: the index rule shared by SCATTER (SC8) and GATHER_ND1 (G10): negative signed indices
// count from the end, and an index outside [0, n) is an error unless the caller opts in to clamping.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "dmlref/data_type.hpp"

namespace dmlref {

// What to do with an index outside the dimension it addresses. DirectML documents no result, so
// the default is an error; Clamp reproduces what DirectML is observed to do on gathers.
enum class IndexPolicy : std::uint8_t {
  Error,
  Clamp,
};

// The index after the negative-index rule, or nullopt when it is outside [0, n).
template <IndexElement I>
constexpr std::optional<std::uint64_t> normalize_index(I value, std::uint64_t n) noexcept {
  if constexpr (std::is_signed_v<I>) {
    if (value < 0) {
      // -1 is the last element; -n the first. Compare in unsigned to avoid overflow at INT64_MIN.
      const std::uint64_t magnitude = 0 - static_cast<std::uint64_t>(value);
      if (magnitude > n) return std::nullopt;
      return n - magnitude;
    }
  }
  const auto u = static_cast<std::uint64_t>(value);
  if (u >= n) return std::nullopt;
  return u;
}

// Clamping policy: the negative-index rule first, then clamp into [0, n-1] (n >= 1).
template <IndexElement I>
constexpr std::uint64_t clamp_index(I value, std::uint64_t n) noexcept {
  if (auto k = normalize_index(value, n)) return *k;
  if constexpr (std::is_signed_v<I>) {
    if (value < 0) return 0;
  }
  return n - 1;
}

// The legal range in messages: "[-4, 3]" for signed index types, "[0, 3]" for unsigned.
template <IndexElement I>
std::string legal_index_range(std::uint64_t n) {
  if constexpr (std::is_signed_v<I>) {
    return "[-" + std::to_string(n) + ", " + std::to_string(n - 1) + "]";
  } else {
    return "[0, " + std::to_string(n - 1) + "]";
  }
}

}  // namespace dmlref
