// dmlref: DirectML feature levels and the per-tensor support tables of the operator pages.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "dmlref/data_type.hpp"
#include "dmlref/error.hpp"

namespace dmlref {

// DML_FEATURE_LEVEL, same numeric values.
enum class FeatureLevel : std::uint32_t {
  k1_0 = 0x1000,
  k2_0 = 0x2000,
  k2_1 = 0x2100,
  k3_0 = 0x3000,
  k3_1 = 0x3100,
  k4_0 = 0x4000,
  k4_1 = 0x4100,
  k5_0 = 0x5000,
  k5_1 = 0x5100,
  k5_2 = 0x5200,
  k6_0 = 0x6000,
  k6_1 = 0x6100,
  k6_2 = 0x6200,
  k6_3 = 0x6300,
  k6_4 = 0x6400,
};

// The default target: the newest level, where every operator here takes 1-8 dims and all types.
inline constexpr FeatureLevel kLatestFeatureLevel = FeatureLevel::k6_4;

constexpr bool is_known(FeatureLevel level) noexcept {
  switch (level) {
    case FeatureLevel::k1_0: case FeatureLevel::k2_0: case FeatureLevel::k2_1:
    case FeatureLevel::k3_0: case FeatureLevel::k3_1: case FeatureLevel::k4_0:
    case FeatureLevel::k4_1: case FeatureLevel::k5_0: case FeatureLevel::k5_1:
    case FeatureLevel::k5_2: case FeatureLevel::k6_0: case FeatureLevel::k6_1:
    case FeatureLevel::k6_2: case FeatureLevel::k6_3: case FeatureLevel::k6_4:
      return true;
  }
  return false;
}

// "DML_FEATURE_LEVEL_4_1"
inline std::string feature_level_name(FeatureLevel level) {
  const auto v = static_cast<std::uint32_t>(level);
  if (!is_known(level)) return "0x" + [&] {
    constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (int shift = 12; shift >= 0; shift -= 4) s += kHex[(v >> shift) & 0xF];
    return s;
  }() + " (not a DML_FEATURE_LEVEL)";
  return "DML_FEATURE_LEVEL_" + std::to_string(v >> 12) + "_" + std::to_string((v >> 8) & 0xF);
}

// "4_1": the name without its DML_FEATURE_LEVEL_ prefix, as the CLI and Python spell it.
inline std::string feature_level_short_name(FeatureLevel level) {
  std::string name = feature_level_name(level);
  return is_known(level) ? name.substr(sizeof("DML_FEATURE_LEVEL_") - 1) : name;
}

// Every DML_FEATURE_LEVEL, oldest first.
inline constexpr FeatureLevel kFeatureLevels[] = {
    FeatureLevel::k1_0, FeatureLevel::k2_0, FeatureLevel::k2_1, FeatureLevel::k3_0,
    FeatureLevel::k3_1, FeatureLevel::k4_0, FeatureLevel::k4_1, FeatureLevel::k5_0,
    FeatureLevel::k5_1, FeatureLevel::k5_2, FeatureLevel::k6_0, FeatureLevel::k6_1,
    FeatureLevel::k6_2, FeatureLevel::k6_3, FeatureLevel::k6_4};

// The level a user's text names: "4_1", "4.1" or "DML_FEATURE_LEVEL_4_1" (feature_level_name's
// spelling); nothing where it names none. The CLI's --feature-level and Python's feature_level=.
inline std::optional<FeatureLevel> find_feature_level(std::string_view text) {
  constexpr std::string_view kPrefix = "DML_FEATURE_LEVEL_";
  if (text.substr(0, kPrefix.size()) == kPrefix) text.remove_prefix(kPrefix.size());
  for (FeatureLevel level : kFeatureLevels) {
    const std::string short_name = feature_level_short_name(level);
    if (text.size() == short_name.size() &&
        std::equal(text.begin(), text.end(), short_name.begin(),
                   [](char t, char n) { return t == n || (t == '.' && n == '_'); })) {
      return level;
    }
  }
  return std::nullopt;
}

// One row of a page's "Tensor support" table: from `level` on, this tensor takes these dimension
// counts and these types.
struct SupportRow {
  FeatureLevel level;
  std::uint32_t min_dimensions;
  std::uint32_t max_dimensions;
  DataTypeSet types;

  constexpr bool admits(std::uint32_t dimension_count, DataType type) const noexcept {
    return dimension_count >= min_dimensions && dimension_count <= max_dimensions &&
           types.contains(type);
  }
};

namespace detail {

inline void check_target_level(std::string_view op, FeatureLevel target, FeatureLevel introduced) {
  if (!is_known(target)) {
    fail(ErrorCode::InvalidOption, op, ": the target feature level ", feature_level_name(target),
         " is not a DirectML feature level");
  }
  if (target < introduced) {
    fail(ErrorCode::FeatureLevel, op, ": the operator needs ", feature_level_name(introduced),
         "; the target is ", feature_level_name(target));
  }
}

// Checks one tensor against an operator's table (rows in any order). The row that applies is the
// newest whose level is at most the target. When it does not admit the tensor, the error names the
// lowest level whose row does (spec: "the lowest level whose row admits the tensor").
inline void check_support(std::string_view op, std::string_view tensor,
                          std::uint32_t dimension_count, DataType type,
                          std::span<const SupportRow> rows, FeatureLevel target) {
  const SupportRow* current = nullptr;
  for (const SupportRow& row : rows) {
    if (row.level <= target && (current == nullptr || row.level > current->level)) current = &row;
  }
  if (current != nullptr && current->admits(dimension_count, type)) return;
  std::optional<FeatureLevel> needed_for_type, needed_for_dims, needed_for_both;
  for (const SupportRow& row : rows) {
    auto lower = [&](std::optional<FeatureLevel>& best) {
      if (!best || row.level < *best) best = row.level;
    };
    if (row.types.contains(type)) lower(needed_for_type);
    if (dimension_count >= row.min_dimensions && dimension_count <= row.max_dimensions) {
      lower(needed_for_dims);
    }
    if (row.admits(dimension_count, type)) lower(needed_for_both);
  }
  const std::string target_name = feature_level_name(target);
  // Name the field that the target's row rejects; if both, the data type first.
  const bool type_ok = current != nullptr && current->types.contains(type);
  if (!type_ok) {
    if (!needed_for_type) {
      fail(ErrorCode::FeatureLevel, op, ": ", tensor, ".DataType ", describe(type),
           " is not supported at any feature level");
    }
    fail(ErrorCode::FeatureLevel, op, ": ", tensor, ".DataType ", describe(type), " needs ",
         feature_level_name(needed_for_both.value_or(*needed_for_type)), "; the target is ",
         target_name);
  }
  if (!needed_for_dims) {
    fail(ErrorCode::FeatureLevel, op, ": ", tensor, ".DimensionCount ", dimension_count,
         " is not supported at any feature level");
  }
  fail(ErrorCode::FeatureLevel, op, ": ", tensor, ".DimensionCount ", dimension_count, " needs ",
       feature_level_name(needed_for_both.value_or(*needed_for_dims)), "; the target is ",
       target_name, " (which allows ", current->min_dimensions, " to ", current->max_dimensions,
       ")");
}

}  // namespace detail
}  // namespace dmlref
