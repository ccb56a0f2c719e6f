// dmlref: DirectML's tensor data types, their C++ element types, and the one runtime dispatch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "dmlref/error.hpp"
#include "dmlref/float16.hpp"

namespace dmlref {

// DML_TENSOR_DATA_TYPE, same numeric values, so a DirectML value converts by a cast (T1).
enum class DataType : std::uint32_t {
  Unknown = 0,
  Float32 = 1,
  Float16 = 2,
  UInt32 = 3,
  UInt16 = 4,
  UInt8 = 5,
  Int32 = 6,
  Int16 = 7,
  Int8 = 8,
  Float64 = 9,
  UInt64 = 10,
  Int64 = 11,
};

// The eleven valid types, in the order DirectML's tables list them.
inline constexpr DataType kAllDataTypes[] = {
    DataType::Float64, DataType::Float32, DataType::Float16, DataType::Int64,
    DataType::Int32,   DataType::Int16,   DataType::Int8,    DataType::UInt64,
    DataType::UInt32,  DataType::UInt16,  DataType::UInt8,
};

constexpr bool is_valid(DataType type) noexcept {
  const auto v = static_cast<std::uint32_t>(type);
  return v >= 1 && v <= 11;
}

// Bytes per element; 0 for an invalid type.
constexpr std::size_t element_size(DataType type) noexcept {
  switch (type) {
    case DataType::Float64:
    case DataType::UInt64:
    case DataType::Int64: return 8;
    case DataType::Float32:
    case DataType::UInt32:
    case DataType::Int32: return 4;
    case DataType::Float16:
    case DataType::UInt16:
    case DataType::Int16: return 2;
    case DataType::UInt8:
    case DataType::Int8: return 1;
    case DataType::Unknown: break;
  }
  return 0;
}

// DirectML's spelling without the prefix, as its tables print it ("FLOAT16").
constexpr std::string_view data_type_name(DataType type) noexcept {
  switch (type) {
    case DataType::Unknown: return "UNKNOWN";
    case DataType::Float32: return "FLOAT32";
    case DataType::Float16: return "FLOAT16";
    case DataType::UInt32: return "UINT32";
    case DataType::UInt16: return "UINT16";
    case DataType::UInt8: return "UINT8";
    case DataType::Int32: return "INT32";
    case DataType::Int16: return "INT16";
    case DataType::Int8: return "INT8";
    case DataType::Float64: return "FLOAT64";
    case DataType::UInt64: return "UINT64";
    case DataType::Int64: return "INT64";
  }
  return "INVALID";
}

// Inverse of data_type_name; accepts "FLOAT16" or "DML_TENSOR_DATA_TYPE_FLOAT16", any case.
inline std::optional<DataType> parse_data_type(std::string_view text) {
  constexpr std::string_view kPrefix = "DML_TENSOR_DATA_TYPE_";
  std::string upper(text);
  for (char& c : upper) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  std::string_view name = upper;
  if (name.substr(0, kPrefix.size()) == kPrefix) name.remove_prefix(kPrefix.size());
  for (DataType type : kAllDataTypes) {
    if (data_type_name(type) == name) return type;
  }
  return std::nullopt;
}

// "FLOAT16" for the valid types, "9999 (not a DML_TENSOR_DATA_TYPE)" otherwise; used in messages.
inline std::string describe(DataType type) {
  if (is_valid(type) || type == DataType::Unknown) return std::string(data_type_name(type));
  return std::to_string(static_cast<std::uint32_t>(type)) + " (not a DML_TENSOR_DATA_TYPE)";
}

// Compile-time map from element type to DataType. Only the eleven element types have one.
template <class T>
struct DataTypeOf;
template <> struct DataTypeOf<double> : std::integral_constant<DataType, DataType::Float64> {};
template <> struct DataTypeOf<float> : std::integral_constant<DataType, DataType::Float32> {};
template <> struct DataTypeOf<float16> : std::integral_constant<DataType, DataType::Float16> {};
template <> struct DataTypeOf<std::int64_t> : std::integral_constant<DataType, DataType::Int64> {};
template <> struct DataTypeOf<std::int32_t> : std::integral_constant<DataType, DataType::Int32> {};
template <> struct DataTypeOf<std::int16_t> : std::integral_constant<DataType, DataType::Int16> {};
template <> struct DataTypeOf<std::int8_t> : std::integral_constant<DataType, DataType::Int8> {};
template <> struct DataTypeOf<std::uint64_t> : std::integral_constant<DataType, DataType::UInt64> {};
template <> struct DataTypeOf<std::uint32_t> : std::integral_constant<DataType, DataType::UInt32> {};
template <> struct DataTypeOf<std::uint16_t> : std::integral_constant<DataType, DataType::UInt16> {};
template <> struct DataTypeOf<std::uint8_t> : std::integral_constant<DataType, DataType::UInt8> {};

template <class T>
inline constexpr DataType data_type_of = DataTypeOf<std::remove_cv_t<T>>::value;

template <class T>
concept Element = requires { DataTypeOf<std::remove_cv_t<T>>::value; };

// Index types of SCATTER and GATHER_ND1 (SC3, G3) and lengths of REVERSE_SUBSEQUENCES (R4).
template <class T>
concept IndexElement = std::is_same_v<std::remove_cv_t<T>, std::int64_t> ||
                       std::is_same_v<std::remove_cv_t<T>, std::int32_t> ||
                       std::is_same_v<std::remove_cv_t<T>, std::uint64_t> ||
                       std::is_same_v<std::remove_cv_t<T>, std::uint32_t>;

// A set of data types, for rules and feature-level tables ("INT64, INT32, UINT64, UINT32").
class DataTypeSet {
 public:
  constexpr DataTypeSet() noexcept = default;
  constexpr DataTypeSet(std::initializer_list<DataType> types) noexcept {
    for (DataType t : types) bits_ |= bit(t);
  }
  constexpr bool contains(DataType type) const noexcept {
    return is_valid(type) && (bits_ & bit(type)) != 0;
  }
  // "INT64, INT32, UINT64, UINT32" in the order of kAllDataTypes.
  std::string to_string() const {
    std::string out;
    for (DataType t : kAllDataTypes) {
      if (!contains(t)) continue;
      if (!out.empty()) out += ", ";
      out += data_type_name(t);
    }
    return out;
  }

 private:
  static constexpr std::uint32_t bit(DataType t) noexcept {
    return is_valid(t) ? (1u << static_cast<std::uint32_t>(t)) : 0u;
  }
  std::uint32_t bits_ = 0;
};

inline constexpr DataTypeSet kAllTypes{
    DataType::Float64, DataType::Float32, DataType::Float16, DataType::Int64,
    DataType::Int32,   DataType::Int16,   DataType::Int8,    DataType::UInt64,
    DataType::UInt32,  DataType::UInt16,  DataType::UInt8};
inline constexpr DataTypeSet kIndexTypes{DataType::Int64, DataType::Int32, DataType::UInt64,
                                         DataType::UInt32};

// The one runtime-to-typed dispatch: calls f(std::type_identity<T>{}) with T the element type of
// `type`, and returns what f returns. An invalid type is T1.
template <class F>
decltype(auto) visit(DataType type, F&& f) {
  switch (type) {
    case DataType::Float64: return f(std::type_identity<double>{});
    case DataType::Float32: return f(std::type_identity<float>{});
    case DataType::Float16: return f(std::type_identity<float16>{});
    case DataType::Int64: return f(std::type_identity<std::int64_t>{});
    case DataType::Int32: return f(std::type_identity<std::int32_t>{});
    case DataType::Int16: return f(std::type_identity<std::int16_t>{});
    case DataType::Int8: return f(std::type_identity<std::int8_t>{});
    case DataType::UInt64: return f(std::type_identity<std::uint64_t>{});
    case DataType::UInt32: return f(std::type_identity<std::uint32_t>{});
    case DataType::UInt16: return f(std::type_identity<std::uint16_t>{});
    case DataType::UInt8: return f(std::type_identity<std::uint8_t>{});
    case DataType::Unknown: break;
  }
  detail::fail(ErrorCode::T1, "DataType is ", describe(type), "; it must be one of ",
               kAllTypes.to_string());
}

// Data movement never interprets a value, so the operators' fast paths run on elements as the
// unsigned integer of their width: calls f(std::type_identity<W>{}) with W = std::uint8_t,
// std::uint16_t, std::uint32_t or std::uint64_t for a 1, 2, 4 or 8-byte `type`. Four
// instantiations instead of eleven; an invalid type is T1, as in visit.
template <class F>
decltype(auto) visit_width(DataType type, F&& f) {
  switch (element_size(type)) {
    case 1: return f(std::type_identity<std::uint8_t>{});
    case 2: return f(std::type_identity<std::uint16_t>{});
    case 4: return f(std::type_identity<std::uint32_t>{});
    case 8: return f(std::type_identity<std::uint64_t>{});
    default: break;
  }
  detail::fail(ErrorCode::T1, "DataType is ", describe(type), "; it must be one of ",
               kAllTypes.to_string());
}

// Same, restricted to the four index types (SCATTER/GATHER_ND1 indices, REVERSE_SUBSEQUENCES
// lengths), so an operator instantiates only what it can use. `code` is the rule to cite.
template <class F>
decltype(auto) visit_index(DataType type, ErrorCode code, F&& f) {
  switch (type) {
    case DataType::Int64: return f(std::type_identity<std::int64_t>{});
    case DataType::Int32: return f(std::type_identity<std::int32_t>{});
    case DataType::UInt64: return f(std::type_identity<std::uint64_t>{});
    case DataType::UInt32: return f(std::type_identity<std::uint32_t>{});
    default: break;
  }
  detail::fail(code, "DataType is ", describe(type), "; it must be one of ",
               kIndexTypes.to_string());
}

}  // namespace dmlref
