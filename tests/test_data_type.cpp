// DataType: DirectML's values, sizes and names, the compile-time map, and the one runtime dispatch.
#define DMLREF_TEST_NO_OPERATORS  // no operator header: see test_support.hpp
#include "test_support.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <type_traits>
#include <utility>

namespace test_data_type {  // this file's own names (tests/CMakeLists.txt: unity groups)

using dmlref::DataType;
using dmlref::DataTypeSet;
using dmlref::ErrorCode;

namespace {

// DML_TENSOR_DATA_TYPE from DirectML.h, written out so a renumbering in the header is caught.
struct Expected {
  DataType type;
  std::uint32_t value;
  std::size_t bytes;
  const char* name;
};
constexpr Expected kExpected[] = {
    {DataType::Float32, 1, 4, "FLOAT32"}, {DataType::Float16, 2, 2, "FLOAT16"},
    {DataType::UInt32, 3, 4, "UINT32"},   {DataType::UInt16, 4, 2, "UINT16"},
    {DataType::UInt8, 5, 1, "UINT8"},     {DataType::Int32, 6, 4, "INT32"},
    {DataType::Int16, 7, 2, "INT16"},     {DataType::Int8, 8, 1, "INT8"},
    {DataType::Float64, 9, 8, "FLOAT64"}, {DataType::UInt64, 10, 8, "UINT64"},
    {DataType::Int64, 11, 8, "INT64"},
};

constexpr auto kNinetyNine = static_cast<DataType>(99);

}  // namespace

TEST_CASE("DataType: numeric values, sizes and names are DirectML's") {
  CHECK(static_cast<std::uint32_t>(DataType::Unknown) == 0);
  for (const Expected& e : kExpected) {
    CAPTURE(e.name);
    CHECK(static_cast<std::uint32_t>(e.type) == e.value);
    CHECK(dmlref::is_valid(e.type));
    CHECK(dmlref::element_size(e.type) == e.bytes);
    CHECK(dmlref::data_type_name(e.type) == e.name);
    CHECK(dmlref::describe(e.type) == e.name);
  }
  CHECK_FALSE(dmlref::is_valid(DataType::Unknown));
  CHECK_FALSE(dmlref::is_valid(static_cast<DataType>(12)));
  CHECK_FALSE(dmlref::is_valid(kNinetyNine));
  CHECK(dmlref::element_size(DataType::Unknown) == 0);
  CHECK(dmlref::element_size(kNinetyNine) == 0);
  CHECK(dmlref::data_type_name(DataType::Unknown) == "UNKNOWN");
  CHECK(dmlref::data_type_name(kNinetyNine) == "INVALID");
  CHECK(dmlref::describe(DataType::Unknown) == "UNKNOWN");
  CHECK(dmlref::describe(kNinetyNine) == "99 (not a DML_TENSOR_DATA_TYPE)");
}

TEST_CASE("DataType: kAllDataTypes lists each of the eleven exactly once") {
  std::set<std::uint32_t> seen;
  for (DataType t : dmlref::kAllDataTypes) seen.insert(static_cast<std::uint32_t>(t));
  CHECK(std::size(dmlref::kAllDataTypes) == 11);
  CHECK(seen == std::set<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
}

TEST_CASE("parse_data_type: inverse of data_type_name, with or without the prefix, any case") {
  for (const Expected& e : kExpected) {
    CAPTURE(e.name);
    CHECK(dmlref::parse_data_type(e.name) == e.type);
    CHECK(dmlref::parse_data_type(std::string("DML_TENSOR_DATA_TYPE_") + e.name) == e.type);
    std::string lower = e.name;
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    CHECK(dmlref::parse_data_type(lower) == e.type);
    CHECK(dmlref::parse_data_type("dml_tensor_data_type_" + lower) == e.type);
  }
  // UNKNOWN has a name but is never a valid type (T1), so it does not parse.
  CHECK_FALSE(dmlref::parse_data_type("UNKNOWN").has_value());
  CHECK_FALSE(dmlref::parse_data_type("DML_TENSOR_DATA_TYPE_UNKNOWN").has_value());
  CHECK_FALSE(dmlref::parse_data_type("").has_value());
  CHECK_FALSE(dmlref::parse_data_type("DML_TENSOR_DATA_TYPE_").has_value());
  CHECK_FALSE(dmlref::parse_data_type("FLOAT").has_value());
  CHECK_FALSE(dmlref::parse_data_type("FLOAT16 ").has_value());
  CHECK_FALSE(dmlref::parse_data_type("BFLOAT16").has_value());
  CHECK_FALSE(dmlref::parse_data_type("INVALID").has_value());
}

TEST_CASE("data_type_of maps each of the eleven element types") {
  static_assert(dmlref::data_type_of<double> == DataType::Float64);
  static_assert(dmlref::data_type_of<float> == DataType::Float32);
  static_assert(dmlref::data_type_of<dmlref::float16> == DataType::Float16);
  static_assert(dmlref::data_type_of<std::int64_t> == DataType::Int64);
  static_assert(dmlref::data_type_of<std::int32_t> == DataType::Int32);
  static_assert(dmlref::data_type_of<std::int16_t> == DataType::Int16);
  static_assert(dmlref::data_type_of<std::int8_t> == DataType::Int8);
  static_assert(dmlref::data_type_of<std::uint64_t> == DataType::UInt64);
  static_assert(dmlref::data_type_of<std::uint32_t> == DataType::UInt32);
  static_assert(dmlref::data_type_of<std::uint16_t> == DataType::UInt16);
  static_assert(dmlref::data_type_of<std::uint8_t> == DataType::UInt8);
  // cv-qualified element types (views of const T) map like T.
  static_assert(dmlref::data_type_of<const float> == DataType::Float32);
  static_assert(dmlref::data_type_of<const volatile std::uint8_t> == DataType::UInt8);

  static_assert(dmlref::Element<const dmlref::float16>);
  static_assert(!dmlref::Element<bool>);
  static_assert(!dmlref::Element<char>);  // distinct from int8_t and uint8_t
  static_assert(!dmlref::Element<long double>);
  static_assert(dmlref::IndexElement<std::int64_t> && dmlref::IndexElement<std::int32_t> &&
                dmlref::IndexElement<std::uint64_t> && dmlref::IndexElement<const std::uint32_t>);
  static_assert(!dmlref::IndexElement<std::int16_t> && !dmlref::IndexElement<std::uint8_t> &&
                !dmlref::IndexElement<float> && !dmlref::IndexElement<double>);
}

TEST_CASE_TEMPLATE("data_type_of agrees with element_size and the TensorView's data_type", T,
                   DMLREF_ALL_TYPES) {
  CHECK(dmlref::element_size(dmlref::data_type_of<T>) == sizeof(T));
  CHECK(dmlref::TensorView<const T>::data_type() == dmlref::data_type_of<T>);
}

TEST_CASE("visit dispatches every type to its element type") {
  for (const Expected& e : kExpected) {
    CAPTURE(e.name);
    const auto [mapped, size] = dmlref::visit(e.type, [](auto tag) {
      using T = typename decltype(tag)::type;
      return std::pair{dmlref::data_type_of<T>, sizeof(T)};
    });
    CHECK(mapped == e.type);
    CHECK(size == e.bytes);
  }
  // The callback's result type comes back unchanged, references included.
  int target = 0;
  int& same = dmlref::visit(DataType::Int8, [&](auto) -> int& { return target; });
  CHECK(&same == &target);
  // A callback that returns nothing.
  int calls = 0;
  dmlref::visit(DataType::Float16, [&](auto tag) {
    calls += std::is_same_v<typename decltype(tag)::type, dmlref::float16> ? 1 : 100;
  });
  CHECK(calls == 1);
}

TEST_CASE("visit rejects UNKNOWN and values outside DML_TENSOR_DATA_TYPE (T1)") {
  int calls = 0;
  const auto f = [&](auto) { ++calls; };
  DMLREF_CHECK_ERROR(dmlref::visit(DataType::Unknown, f), ErrorCode::T1,
                     "DataType is UNKNOWN; it must be one of FLOAT64, FLOAT32, FLOAT16, INT64, "
                     "INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8");
  DMLREF_CHECK_ERROR(dmlref::visit(kNinetyNine, f), ErrorCode::T1,
                     "DataType is 99 (not a DML_TENSOR_DATA_TYPE)");
  DMLREF_CHECK_ERROR(dmlref::visit(static_cast<DataType>(12), f), ErrorCode::T1, "12");
  DMLREF_CHECK_ERROR(dmlref::visit(static_cast<DataType>(0xFFFFFFFFu), f), ErrorCode::T1,
                     "4294967295 (not a DML_TENSOR_DATA_TYPE)");
  CHECK(calls == 0);
  // The rule id is part of what() too.
  DMLREF_CHECK_ERROR(dmlref::visit(DataType::Unknown, f), ErrorCode::T1, "UINT8 [T1]");
}

TEST_CASE("visit_index dispatches only the four index types and cites the caller's rule") {
  const DataType index_types[] = {DataType::Int64, DataType::Int32, DataType::UInt64,
                                  DataType::UInt32};
  for (DataType t : index_types) {
    CAPTURE(dmlref::data_type_name(t));
    const DataType mapped = dmlref::visit_index(t, ErrorCode::SC3, [](auto tag) {
      using I = typename decltype(tag)::type;
      static_assert(dmlref::IndexElement<I>);
      return dmlref::data_type_of<I>;
    });
    CHECK(mapped == t);
  }
  int calls = 0;
  const auto f = [&](auto) { ++calls; };
  for (DataType t : dmlref::kAllDataTypes) {
    if (dmlref::kIndexTypes.contains(t)) continue;
    CAPTURE(dmlref::data_type_name(t));
    DMLREF_CHECK_ERROR(dmlref::visit_index(t, ErrorCode::G3, f), ErrorCode::G3,
                       std::string("DataType is ") + std::string(dmlref::data_type_name(t)) +
                           "; it must be one of INT64, INT32, UINT64, UINT32 [G3]");
  }
  DMLREF_CHECK_ERROR(dmlref::visit_index(DataType::Unknown, ErrorCode::R4, f), ErrorCode::R4,
                     "UNKNOWN");
  DMLREF_CHECK_ERROR(dmlref::visit_index(kNinetyNine, ErrorCode::SC3, f), ErrorCode::SC3,
                     "99 (not a DML_TENSOR_DATA_TYPE)");
  CHECK(calls == 0);
}

TEST_CASE("DataTypeSet: membership and listing in DirectML's table order") {
  constexpr DataTypeSet empty;
  constexpr DataTypeSet some{DataType::UInt8, DataType::Float64, DataType::Int32};
  static_assert(some.contains(DataType::UInt8) && !some.contains(DataType::UInt16));
  for (DataType t : dmlref::kAllDataTypes) {
    CAPTURE(dmlref::data_type_name(t));
    CHECK_FALSE(empty.contains(t));
    CHECK(dmlref::kAllTypes.contains(t));
    CHECK(some.contains(t) ==
          (t == DataType::UInt8 || t == DataType::Float64 || t == DataType::Int32));
  }
  // Invalid values are never members, even of the full set.
  CHECK_FALSE(dmlref::kAllTypes.contains(DataType::Unknown));
  CHECK_FALSE(dmlref::kAllTypes.contains(kNinetyNine));
  CHECK_FALSE(dmlref::kAllTypes.contains(static_cast<DataType>(32)));
  CHECK_FALSE(DataTypeSet{DataType::Unknown, kNinetyNine}.contains(DataType::Unknown));

  CHECK(empty.to_string().empty());
  CHECK(some.to_string() == "FLOAT64, INT32, UINT8");
  CHECK(dmlref::kIndexTypes.to_string() == "INT64, INT32, UINT64, UINT32");
  CHECK(dmlref::kAllTypes.to_string() ==
        "FLOAT64, FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8");
}

TEST_CASE("Error: derives from std::invalid_argument and appends the rule id") {
  const dmlref::Error e(ErrorCode::J5, "JOIN: something");
  const std::invalid_argument& base = e;
  CHECK(std::string(base.what()) == "JOIN: something [J5]");
  CHECK(e.code() == ErrorCode::J5);
  CHECK(dmlref::error_code_name(ErrorCode::T13) == "T13");
  CHECK(dmlref::error_code_name(ErrorCode::FeatureLevel) == "FeatureLevel");
}

}  // namespace test_data_type
