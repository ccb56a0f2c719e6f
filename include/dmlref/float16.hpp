// dmlref: a 16-bit IEEE 754 half (binary16) for FLOAT16 storage.
//
// The operators only move data, so a float16 is a bit pattern that is copied, never converted.
// The conversions exist for users (fills, printing, comparing) and are exact: half -> float and
// half -> double are exact for every pattern; float/double -> half round to nearest, ties to even,
// with subnormals, overflow to infinity, and NaN kept NaN (payload top bits kept, quiet bit set).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

namespace dmlref {

class float16 {
 public:
  constexpr float16() noexcept = default;
  // Converting constructors round to nearest even.
  explicit float16(float value) noexcept : bits_(from_float_bits(value)) {}
  explicit float16(double value) noexcept : bits_(from_double_bits(value)) {}

  static constexpr float16 from_bits(std::uint16_t bits) noexcept {
    float16 h;
    h.bits_ = bits;
    return h;
  }
  constexpr std::uint16_t bits() const noexcept { return bits_; }

  explicit operator float() const noexcept { return to_float(bits_); }
  explicit operator double() const noexcept { return static_cast<double>(to_float(bits_)); }

  constexpr bool is_nan() const noexcept {
    return (bits_ & 0x7C00u) == 0x7C00u && (bits_ & 0x03FFu) != 0;
  }

  // Equality is bitwise: data movement must preserve bits, and a golden model that compared
  // numerically would call -0 == +0 and NaN != NaN. Use compare.hpp for numeric comparisons.
  friend constexpr bool operator==(float16 a, float16 b) noexcept { return a.bits_ == b.bits_; }

  static float to_float(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1Fu;
    std::uint32_t mantissa = h & 0x03FFu;
    std::uint32_t out;
    if (exponent == 0x1F) {
      // Infinity or NaN: keep the payload in the top mantissa bits.
      out = sign | 0x7F800000u | (mantissa << 13);
    } else if (exponent != 0) {
      out = sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
      out = sign;
    } else {
      // Subnormal half: normalise into a float (every half subnormal is a normal float).
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while ((mantissa & 0x0400u) == 0);
      out = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mantissa & 0x03FFu) << 13);
    }
    return std::bit_cast<float>(out);
  }

  static std::uint16_t from_float_bits(float value) noexcept {
    const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
    const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
    const std::uint32_t exponent = (f >> 23) & 0xFFu;
    const std::uint32_t mantissa = f & 0x007FFFFFu;
    if (exponent == 0xFF) {
      if (mantissa == 0) return static_cast<std::uint16_t>(sign | 0x7C00u);
      // NaN stays NaN: keep the top payload bits and set the quiet bit so it cannot become inf.
      return static_cast<std::uint16_t>(sign | 0x7C00u | 0x0200u | (mantissa >> 13));
    }
    // Unbiased exponent; half normals cover [-14, 15].
    const int e = static_cast<int>(exponent) - 127;
    if (e > 15) return static_cast<std::uint16_t>(sign | 0x7C00u);
    std::uint32_t full = mantissa | (exponent != 0 ? 0x00800000u : 0u);  // 24-bit significand
    int shift;  // how many low bits of `full` fall below the half's last mantissa bit
    std::uint32_t half_exponent;
    if (e >= -14) {
      shift = 13;
      half_exponent = static_cast<std::uint32_t>(e + 15);
      full &= 0x007FFFFFu;  // implicit bit is carried by half_exponent
    } else {
      // Subnormal half (or underflow to zero): value = full * 2^(e-23), half ulp = 2^-24.
      shift = 13 + (-14 - e);
      half_exponent = 0;
      if (shift > 24) return sign;  // below half the smallest subnormal: rounds to zero
    }
    std::uint32_t kept = full >> shift;
    const std::uint32_t rest = full & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (kept & 1u) != 0)) ++kept;
    // A carry out of the mantissa bumps the exponent, which is exactly right (up to infinity).
    return static_cast<std::uint16_t>(sign | ((half_exponent << 10) + kept));
  }

  static std::uint16_t from_double_bits(double value) noexcept {
    // Round once, directly from double: converting through float would round twice.
    const std::uint64_t d = std::bit_cast<std::uint64_t>(value);
    const auto sign = static_cast<std::uint16_t>((d >> 48) & 0x8000u);
    const std::uint64_t exponent = (d >> 52) & 0x7FFu;
    const std::uint64_t mantissa = d & 0x000FFFFFFFFFFFFFull;
    if (exponent == 0x7FF) {
      if (mantissa == 0) return static_cast<std::uint16_t>(sign | 0x7C00u);
      return static_cast<std::uint16_t>(sign | 0x7C00u | 0x0200u | (mantissa >> 42));
    }
    const int e = static_cast<int>(exponent) - 1023;
    if (e > 15) return static_cast<std::uint16_t>(sign | 0x7C00u);
    std::uint64_t full = mantissa | (exponent != 0 ? (1ull << 52) : 0ull);
    int shift;
    std::uint64_t half_exponent;
    if (e >= -14) {
      shift = 42;
      half_exponent = static_cast<std::uint64_t>(e + 15);
      full &= 0x000FFFFFFFFFFFFFull;
    } else {
      shift = 42 + (-14 - e);
      half_exponent = 0;
      if (shift > 53) return sign;
    }
    std::uint64_t kept = full >> shift;
    const std::uint64_t rest = full & ((1ull << shift) - 1ull);
    const std::uint64_t halfway = 1ull << (shift - 1);
    if (rest > halfway || (rest == halfway && (kept & 1u) != 0)) ++kept;
    return static_cast<std::uint16_t>(sign | ((half_exponent << 10) + kept));
  }

 private:
  std::uint16_t bits_ = 0;
};

static_assert(sizeof(float16) == 2 && alignof(float16) == 2);
static_assert(std::is_trivially_copyable_v<float16>);

}  // namespace dmlref
