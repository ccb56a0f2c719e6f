// dmlref: the one exception type and its codes.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace dmlref {

// One code per rule of docs/*.md (the rule id is the name), plus the few conditions the spec
// does not number. Tests assert codes; messages carry the rule id too.
enum class ErrorCode : std::uint32_t {
  // tensors.md
  T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13,
  // join.md, split.md
  J1, J2, J3, J4, J5, J6,
  S1, S2, S3, S4, S5, S6,
  // scatter.md
  SC1, SC2, SC3, SC4, SC5, SC6, SC7, SC8,
  // gather_nd1.md
  G1, G2, G3, G4, G5, G6, G7, G8, G9, G10,
  // reverse_subsequences.md
  R1, R2, R3, R4, R5,
  FeatureLevel,      // a tensor or operator outside the target level's table
  ScatterDuplicate,  // strict scatter: two updates for one output element
  NullPointer,       // a required pointer (desc, Sizes, buffer) is null
  InvalidOption,     // an option value the library does not know
  ShapeMismatch,     // compare/tools: two views that must agree do not
  NpyFormat,         // .npy file that cannot be read or written
  Io,                // file open/read/write failure
};

constexpr std::string_view error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::T1: return "T1";
    case ErrorCode::T2: return "T2";
    case ErrorCode::T3: return "T3";
    case ErrorCode::T4: return "T4";
    case ErrorCode::T5: return "T5";
    case ErrorCode::T6: return "T6";
    case ErrorCode::T7: return "T7";
    case ErrorCode::T8: return "T8";
    case ErrorCode::T9: return "T9";
    case ErrorCode::T10: return "T10";
    case ErrorCode::T11: return "T11";
    case ErrorCode::T12: return "T12";
    case ErrorCode::T13: return "T13";
    case ErrorCode::J1: return "J1";
    case ErrorCode::J2: return "J2";
    case ErrorCode::J3: return "J3";
    case ErrorCode::J4: return "J4";
    case ErrorCode::J5: return "J5";
    case ErrorCode::J6: return "J6";
    case ErrorCode::S1: return "S1";
    case ErrorCode::S2: return "S2";
    case ErrorCode::S3: return "S3";
    case ErrorCode::S4: return "S4";
    case ErrorCode::S5: return "S5";
    case ErrorCode::S6: return "S6";
    case ErrorCode::SC1: return "SC1";
    case ErrorCode::SC2: return "SC2";
    case ErrorCode::SC3: return "SC3";
    case ErrorCode::SC4: return "SC4";
    case ErrorCode::SC5: return "SC5";
    case ErrorCode::SC6: return "SC6";
    case ErrorCode::SC7: return "SC7";
    case ErrorCode::SC8: return "SC8";
    case ErrorCode::G1: return "G1";
    case ErrorCode::G2: return "G2";
    case ErrorCode::G3: return "G3";
    case ErrorCode::G4: return "G4";
    case ErrorCode::G5: return "G5";
    case ErrorCode::G6: return "G6";
    case ErrorCode::G7: return "G7";
    case ErrorCode::G8: return "G8";
    case ErrorCode::G9: return "G9";
    case ErrorCode::G10: return "G10";
    case ErrorCode::R1: return "R1";
    case ErrorCode::R2: return "R2";
    case ErrorCode::R3: return "R3";
    case ErrorCode::R4: return "R4";
    case ErrorCode::R5: return "R5";
    case ErrorCode::FeatureLevel: return "FeatureLevel";
    case ErrorCode::ScatterDuplicate: return "ScatterDuplicate";
    case ErrorCode::NullPointer: return "NullPointer";
    case ErrorCode::InvalidOption: return "InvalidOption";
    case ErrorCode::ShapeMismatch: return "ShapeMismatch";
    case ErrorCode::NpyFormat: return "NpyFormat";
    case ErrorCode::Io: return "Io";
  }
  return "unknown";
}

// The library's only exception. what() reads
//   "JOIN: InputTensors[1].Sizes[2] is 3 but OutputTensor.Sizes[2] is 4; every dimension except
//    Axis (3) must match [J5]"
// : operator, tensor and field in DirectML's words, both values, the requirement, the rule id.
class Error : public std::invalid_argument {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::invalid_argument(message + " [" + std::string(error_code_name(code)) + "]"),
        code_(code) {}

  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

namespace detail {

// One argument of fail(): text, a character or a number, formatted as std::ostream formats it.
// fail() turns its arguments into these and calls one function, so formatting a message compiles
// once, not once per combination of argument types (which every call site used to instantiate).
class MessagePart {
 public:
  MessagePart(std::string_view text) noexcept : kind_(Kind::Text), text_(text) {}
  MessagePart(const std::string& text) noexcept : kind_(Kind::Text), text_(text) {}
  MessagePart(const char* text) noexcept : kind_(Kind::Text), text_(text) {}
  // Characters, as a stream prints them (int8_t and uint8_t included).
  template <class C>
    requires(std::same_as<C, char> || std::same_as<C, signed char> ||
             std::same_as<C, unsigned char>)
  MessagePart(C c) noexcept : kind_(Kind::Char), char_(static_cast<char>(c)) {}
  template <std::signed_integral I>
    requires(!std::same_as<I, char> && !std::same_as<I, signed char>)
  MessagePart(I value) noexcept : kind_(Kind::Signed), signed_(value) {}
  template <std::unsigned_integral I>
    requires(!std::same_as<I, char> && !std::same_as<I, unsigned char>)
  MessagePart(I value) noexcept : kind_(Kind::Unsigned), unsigned_(value) {}
  template <std::floating_point F>
  MessagePart(F value) noexcept : kind_(Kind::Double), double_(static_cast<double>(value)) {}

  void append_to(std::string& message) const {
    switch (kind_) {
      case Kind::Text: message += text_; return;
      case Kind::Char: message += char_; return;
      case Kind::Signed: message += std::to_string(signed_); return;
      case Kind::Unsigned: message += std::to_string(unsigned_); return;
      case Kind::Double: {
        std::ostringstream os;  // a stream's default format, as before
        os << double_;
        message += os.str();
        return;
      }
    }
  }

 private:
  enum class Kind : unsigned char { Text, Char, Signed, Unsigned, Double };
  Kind kind_;
  // One value, the one kind_ names: each call site of fail() builds only what it passes.
  union {
    std::string_view text_;
    char char_;
    long long signed_;
    unsigned long long unsigned_;
    double double_;
  };
};

[[noreturn]] inline void fail_with(ErrorCode code, std::initializer_list<MessagePart> parts) {
  std::string message;
  for (const MessagePart& part : parts) part.append_to(message);
  throw Error(code, message);
}

// Builds a message from its parts and throws. Only reached once validation has failed.
template <class... Parts>
[[noreturn]] inline void fail(ErrorCode code, const Parts&... parts) {
  fail_with(code, {MessagePart(parts)...});
}

}  // namespace detail
}  // namespace dmlref
