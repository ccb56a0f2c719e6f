// Feature levels: DirectML's values and names, and the support-table check every operator runs,
// exercised on JOIN's table from docs/join.md.
#define DMLREF_TEST_NO_OPERATORS  // no operator header: see test_support.hpp
#include "test_support.hpp"

#include <cstdint>
#include <iterator>
#include <string>

namespace test_feature_level {  // this file's own names (tests/CMakeLists.txt: unity groups)

using dmlref::DataType;
using dmlref::ErrorCode;
using dmlref::FeatureLevel;
using dmlref::SupportRow;

namespace {

// docs/join.md#feature-levels, in the page's row order
// (newest first) to show the check does not depend on the order.
constexpr SupportRow kJoinTable[] = {
    {FeatureLevel::k4_1, 1, 8, dmlref::kAllTypes},
    {FeatureLevel::k3_0, 4, 5,
     {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::Int8,
      DataType::UInt32, DataType::UInt16, DataType::UInt8}},
    {FeatureLevel::k2_1, 4, 4,
     {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::Int8,
      DataType::UInt32, DataType::UInt16, DataType::UInt8}},
    {FeatureLevel::k1_0, 4, 4,
     {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::UInt32,
      DataType::UInt16}},
};

void check_join(std::uint32_t dims, DataType type, FeatureLevel target) {
  dmlref::detail::check_support("JOIN", "InputTensors[0]", dims, type, kJoinTable, target);
}

}  // namespace

TEST_CASE("FeatureLevel: numeric values are DML_FEATURE_LEVEL's") {
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k1_0) == 0x1000);
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k2_0) == 0x2000);
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k2_1) == 0x2100);
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k3_0) == 0x3000);
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k3_1) == 0x3100);
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k4_0) == 0x4000);
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k4_1) == 0x4100);
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k5_0) == 0x5000);
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k5_1) == 0x5100);
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k5_2) == 0x5200);
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k6_0) == 0x6000);
  CHECK(static_cast<std::uint32_t>(FeatureLevel::k6_4) == 0x6400);
  CHECK(dmlref::kLatestFeatureLevel == FeatureLevel::k6_4);
  // Ordering by value is ordering by age, which check_support relies on.
  CHECK(FeatureLevel::k2_1 < FeatureLevel::k3_0);
  CHECK(FeatureLevel::k4_1 < FeatureLevel::k5_0);
}

TEST_CASE("find_feature_level reads the spellings users type, and only those") {
  CHECK(dmlref::find_feature_level("4_1") == FeatureLevel::k4_1);
  CHECK(dmlref::find_feature_level("4.1") == FeatureLevel::k4_1);
  CHECK(dmlref::find_feature_level("DML_FEATURE_LEVEL_4_1") == FeatureLevel::k4_1);
  CHECK(dmlref::find_feature_level("DML_FEATURE_LEVEL_6.4") == FeatureLevel::k6_4);
  CHECK(dmlref::find_feature_level("1_0") == FeatureLevel::k1_0);
  CHECK_FALSE(dmlref::find_feature_level("04_1").has_value());
  CHECK_FALSE(dmlref::find_feature_level("4_2").has_value());
  CHECK_FALSE(dmlref::find_feature_level("4").has_value());
  CHECK_FALSE(dmlref::find_feature_level("").has_value());
  CHECK_FALSE(dmlref::find_feature_level("DML_FEATURE_LEVEL_").has_value());
  CHECK(dmlref::feature_level_short_name(FeatureLevel::k5_2) == "5_2");
  for (FeatureLevel level : dmlref::kFeatureLevels) {
    CHECK(dmlref::is_known(level));
    CHECK(dmlref::find_feature_level(dmlref::feature_level_short_name(level)) == level);
    CHECK(dmlref::find_feature_level(dmlref::feature_level_name(level)) == level);
  }
  CHECK(std::size(dmlref::kFeatureLevels) == 15);
}

TEST_CASE("feature_level_name spells DirectML's constant, or says it is not one") {
  CHECK(dmlref::feature_level_name(FeatureLevel::k4_1) == "DML_FEATURE_LEVEL_4_1");
  CHECK(dmlref::feature_level_name(FeatureLevel::k1_0) == "DML_FEATURE_LEVEL_1_0");
  CHECK(dmlref::feature_level_name(FeatureLevel::k2_1) == "DML_FEATURE_LEVEL_2_1");
  CHECK(dmlref::feature_level_name(FeatureLevel::k6_4) == "DML_FEATURE_LEVEL_6_4");
  CHECK(dmlref::feature_level_name(static_cast<FeatureLevel>(0x4200)) ==
        "0x4200 (not a DML_FEATURE_LEVEL)");
  CHECK(dmlref::feature_level_name(static_cast<FeatureLevel>(0)) ==
        "0x0000 (not a DML_FEATURE_LEVEL)");
  CHECK(dmlref::is_known(FeatureLevel::k3_1));
  CHECK_FALSE(dmlref::is_known(static_cast<FeatureLevel>(0x4200)));
  CHECK_FALSE(dmlref::is_known(static_cast<FeatureLevel>(0x7000)));
}

TEST_CASE("SupportRow::admits: dimension range and types") {
  const SupportRow& row = kJoinTable[1];  // 3_0: 4-5 dimensions
  CHECK(row.admits(4, DataType::Int8));
  CHECK(row.admits(5, DataType::UInt8));
  CHECK_FALSE(row.admits(3, DataType::Int8));
  CHECK_FALSE(row.admits(6, DataType::Int8));
  CHECK_FALSE(row.admits(4, DataType::Float64));
  CHECK_FALSE(row.admits(4, DataType::Unknown));
}

TEST_CASE("check_support admits what the target's row admits") {
  for (DataType t : dmlref::kAllDataTypes) {
    CAPTURE(dmlref::data_type_name(t));
    for (std::uint32_t dims = 1; dims <= 8; ++dims) {
      CAPTURE(dims);
      CHECK_NOTHROW(check_join(dims, t, dmlref::kLatestFeatureLevel));
      CHECK_NOTHROW(check_join(dims, t, FeatureLevel::k4_1));
    }
  }
  CHECK_NOTHROW(check_join(4, DataType::Float16, FeatureLevel::k1_0));
  CHECK_NOTHROW(check_join(4, DataType::Int8, FeatureLevel::k2_1));
  CHECK_NOTHROW(check_join(5, DataType::UInt8, FeatureLevel::k3_0));
  // Levels between rows use the newest row at or below them.
  CHECK_NOTHROW(check_join(5, DataType::Int8, FeatureLevel::k3_1));
  CHECK_NOTHROW(check_join(4, DataType::UInt16, FeatureLevel::k2_0));
  CHECK_NOTHROW(check_join(2, DataType::Float32, FeatureLevel::k5_0));
}

TEST_CASE("check_support names the data type's needed level and the target") {
  DMLREF_CHECK_ERROR(check_join(4, DataType::Float64, FeatureLevel::k3_0), ErrorCode::FeatureLevel,
                     "JOIN: InputTensors[0].DataType FLOAT64 needs DML_FEATURE_LEVEL_4_1; the "
                     "target is DML_FEATURE_LEVEL_3_0 [FeatureLevel]");
  // INT8 arrives at 2_1, not 3_0: the lowest row that admits the tensor.
  DMLREF_CHECK_ERROR(check_join(4, DataType::Int8, FeatureLevel::k1_0), ErrorCode::FeatureLevel,
                     "InputTensors[0].DataType INT8 needs DML_FEATURE_LEVEL_2_1; the target is "
                     "DML_FEATURE_LEVEL_1_0");
  DMLREF_CHECK_ERROR(check_join(4, DataType::Int8, FeatureLevel::k2_0), ErrorCode::FeatureLevel,
                     "INT8 needs DML_FEATURE_LEVEL_2_1; the target is DML_FEATURE_LEVEL_2_0");
  // With 5 dimensions INT8 needs the 3_0 row, which admits both.
  DMLREF_CHECK_ERROR(check_join(5, DataType::Int8, FeatureLevel::k1_0), ErrorCode::FeatureLevel,
                     "DataType INT8 needs DML_FEATURE_LEVEL_3_0; the target is "
                     "DML_FEATURE_LEVEL_1_0");
  // Both wrong: the data type is named first, with the level that admits both.
  DMLREF_CHECK_ERROR(check_join(2, DataType::Int64, FeatureLevel::k3_1), ErrorCode::FeatureLevel,
                     "DataType INT64 needs DML_FEATURE_LEVEL_4_1; the target is "
                     "DML_FEATURE_LEVEL_3_1");
}

TEST_CASE("check_support names the dimension count's needed level and the target's range") {
  DMLREF_CHECK_ERROR(check_join(5, DataType::Float32, FeatureLevel::k2_1), ErrorCode::FeatureLevel,
                     "JOIN: InputTensors[0].DimensionCount 5 needs DML_FEATURE_LEVEL_3_0; the "
                     "target is DML_FEATURE_LEVEL_2_1 (which allows 4 to 4)");
  DMLREF_CHECK_ERROR(check_join(3, DataType::Float32, FeatureLevel::k3_0), ErrorCode::FeatureLevel,
                     "DimensionCount 3 needs DML_FEATURE_LEVEL_4_1; the target is "
                     "DML_FEATURE_LEVEL_3_0 (which allows 4 to 5)");
  DMLREF_CHECK_ERROR(check_join(6, DataType::UInt8, FeatureLevel::k4_0), ErrorCode::FeatureLevel,
                     "DimensionCount 6 needs DML_FEATURE_LEVEL_4_1; the target is "
                     "DML_FEATURE_LEVEL_4_0 (which allows 4 to 5)");
  DMLREF_CHECK_ERROR(check_join(1, DataType::Float16, FeatureLevel::k1_0), ErrorCode::FeatureLevel,
                     "DimensionCount 1 needs DML_FEATURE_LEVEL_4_1; the target is "
                     "DML_FEATURE_LEVEL_1_0 (which allows 4 to 4)");
}

TEST_CASE("check_support: what no level admits says so") {
  DMLREF_CHECK_ERROR(check_join(9, DataType::Float32, dmlref::kLatestFeatureLevel),
                     ErrorCode::FeatureLevel,
                     "JOIN: InputTensors[0].DimensionCount 9 is not supported at any feature level");
  DMLREF_CHECK_ERROR(check_join(0, DataType::Float32, dmlref::kLatestFeatureLevel),
                     ErrorCode::FeatureLevel, "DimensionCount 0 is not supported at any");
  // A table whose types never include FLOAT64.
  constexpr SupportRow kNarrow[] = {{FeatureLevel::k1_0, 1, 4, {DataType::Float32}}};
  DMLREF_CHECK_ERROR(dmlref::detail::check_support("SCATTER", "IndicesTensor", 2,
                                                   DataType::Float64, kNarrow,
                                                   dmlref::kLatestFeatureLevel),
                     ErrorCode::FeatureLevel,
                     "SCATTER: IndicesTensor.DataType FLOAT64 is not supported at any feature "
                     "level");
  DMLREF_CHECK_ERROR(dmlref::detail::check_support("SCATTER", "IndicesTensor", 2,
                                                   DataType::Unknown, kNarrow,
                                                   dmlref::kLatestFeatureLevel),
                     ErrorCode::FeatureLevel, "DataType UNKNOWN is not supported");
  // A target older than every row admits nothing, and names the first row's level.
  constexpr SupportRow kLate[] = {{FeatureLevel::k2_1, 4, 4, {DataType::Float32}}};
  DMLREF_CHECK_ERROR(dmlref::detail::check_support("OP", "OutputTensor", 4, DataType::Float32,
                                                   kLate, FeatureLevel::k1_0),
                     ErrorCode::FeatureLevel,
                     "needs DML_FEATURE_LEVEL_2_1; the target is DML_FEATURE_LEVEL_1_0");
}

TEST_CASE("check_target_level: the operator's introduction and known levels") {
  CHECK_NOTHROW(dmlref::detail::check_target_level("JOIN", FeatureLevel::k1_0, FeatureLevel::k1_0));
  CHECK_NOTHROW(dmlref::detail::check_target_level("JOIN", dmlref::kLatestFeatureLevel,
                                                   FeatureLevel::k1_0));
  CHECK_NOTHROW(dmlref::detail::check_target_level("REVERSE_SUBSEQUENCES", FeatureLevel::k3_0,
                                                   FeatureLevel::k3_0));
  DMLREF_CHECK_ERROR(dmlref::detail::check_target_level("REVERSE_SUBSEQUENCES",
                                                        FeatureLevel::k2_1, FeatureLevel::k3_0),
                     ErrorCode::FeatureLevel,
                     "REVERSE_SUBSEQUENCES: the operator needs DML_FEATURE_LEVEL_3_0; the target "
                     "is DML_FEATURE_LEVEL_2_1 [FeatureLevel]");
  // An unknown value is an invalid option, even one above every real level.
  DMLREF_CHECK_ERROR(dmlref::detail::check_target_level("JOIN", static_cast<FeatureLevel>(0x4200),
                                                        FeatureLevel::k1_0),
                     ErrorCode::InvalidOption,
                     "JOIN: the target feature level 0x4200 (not a DML_FEATURE_LEVEL) is not a "
                     "DirectML feature level");
  DMLREF_CHECK_ERROR(dmlref::detail::check_target_level("JOIN", static_cast<FeatureLevel>(0xFFFF),
                                                        FeatureLevel::k1_0),
                     ErrorCode::InvalidOption, "0xffff (not a DML_FEATURE_LEVEL)");
  DMLREF_CHECK_ERROR(dmlref::detail::check_target_level("JOIN", static_cast<FeatureLevel>(0),
                                                        FeatureLevel::k1_0),
                     ErrorCode::InvalidOption, "0x0000");
}

}  // namespace test_feature_level
