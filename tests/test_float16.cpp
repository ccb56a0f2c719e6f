// float16: exact widening of every pattern, and round-to-nearest-even narrowing from float and
// from double, checked against an independent reference and on every rounding boundary.
#define DMLREF_TEST_NO_OPERATORS  // no operator header: see test_support.hpp
#include "test_support.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace test_float16 {  // this file's own names (tests/CMakeLists.txt: unity groups)

using dmlref::float16;

namespace {

constexpr std::uint16_t kPositiveInf = 0x7C00;
constexpr std::uint16_t kLargestFinite = 0x7BFF;  // 65504

bool is_nan_bits(std::uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0; }

// The value of a non-NaN half, decoded from the IEEE 754 binary16 definition with ldexp (exact in
// double), independently of float16::to_float.
double decode(std::uint16_t h) {
  const double sign = (h & 0x8000u) != 0 ? -1.0 : 1.0;
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  if (exponent == 0x1F) return sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// Round-to-nearest-even into binary16 by a different route than the library: scale so the half's
// last mantissa bit has weight 1 and let nearbyint (ties to even in the default rounding mode) do
// the rounding. Every step is exact in double.
std::uint16_t reference_half(double x) {
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return static_cast<std::uint16_t>(sign | 0x7E00);
  const double a = std::fabs(x);
  if (a >= 65520.0) return static_cast<std::uint16_t>(sign | kPositiveInf);
  if (a == 0.0) return sign;
  const int e = std::max(std::ilogb(a), -14);  // below 2^-14 the spacing stays 2^-24
  auto q = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(a, 10 - e)));
  int biased = e + 15;
  if (q == 2048) {  // rounded up into the next binade
    q = 1024;
    ++biased;
  }
  if (q < 1024) return static_cast<std::uint16_t>(sign | q);  // subnormal (or zero)
  return static_cast<std::uint16_t>(sign | (biased << 10) | (q - 1024));
}

std::uint16_t from_float(float f) { return float16(f).bits(); }
std::uint16_t from_double(double d) { return float16(d).bits(); }

}  // namespace

TEST_CASE("float16: storage is the bit pattern, equality is bitwise") {
  static_assert(float16::from_bits(0x3C00).bits() == 0x3C00);
  static_assert(float16().bits() == 0);
  CHECK(float16::from_bits(0x0000) != float16::from_bits(0x8000));  // +0 and -0 differ
  CHECK(float16::from_bits(0x7E00) == float16::from_bits(0x7E00));  // a NaN equals itself
  CHECK(float16::from_bits(0x7E00) != float16::from_bits(0x7E01));
}

TEST_CASE("float16: every one of the 65536 patterns widens exactly and round-trips") {
  std::uint32_t nan_patterns = 0;
  for (std::uint32_t i = 0; i <= 0xFFFF; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    const float16 x = float16::from_bits(h);
    const auto f = static_cast<float>(x);
    const auto d = static_cast<double>(x);
    REQUIRE(x.is_nan() == is_nan_bits(h));
    if (is_nan_bits(h)) {
      ++nan_patterns;
      REQUIRE(std::isnan(f));
      REQUIRE(std::isnan(d));
      REQUIRE(std::signbit(f) == ((h & 0x8000u) != 0));
      REQUIRE(std::signbit(d) == ((h & 0x8000u) != 0));
      const std::uint16_t via_float = from_float(f);
      const std::uint16_t via_double = from_double(d);
      REQUIRE(is_nan_bits(via_float));
      REQUIRE(is_nan_bits(via_double));
      REQUIRE((via_float & 0x8000u) == (h & 0x8000u));
      REQUIRE((via_double & 0x8000u) == (h & 0x8000u));
      // The payload survives through float; only the quiet bit may be added.
      REQUIRE(via_float == (h | 0x0200u));
      continue;
    }
    REQUIRE(d == decode(h));
    REQUIRE(std::signbit(d) == ((h & 0x8000u) != 0));  // == alone cannot tell -0 from +0
    REQUIRE(static_cast<double>(f) == d);
    REQUIRE(from_float(f) == h);
    REQUIRE(from_double(d) == h);
  }
  CHECK(nan_patterns == 2 * 1023);
}

TEST_CASE("float16: a NaN's payload is kept in its top bits and the result is quiet") {
  // Built with bit_cast so no hardware float conversion can touch the payload first.
  const auto f = std::bit_cast<float>(std::uint32_t{0xFFA02000});  // -sNaN, payload 0x101 << 13
  CHECK(from_float(f) == 0xFF01);
  const auto d = std::bit_cast<double>(std::uint64_t{0x7FF4040000000000});  // sNaN, payload 0x101 << 42
  CHECK(from_double(d) == 0x7F01);
}

TEST_CASE("float16: the named boundary cases, from float and from double") {
  // Each row: input (exact in float, hence in double) and the expected half.
  struct Case {
    const char* what;
    double value;
    std::uint16_t bits;
  };
  const double kMin = std::ldexp(1.0, -24);  // smallest subnormal
  const Case cases[] = {
      {"one", 1.0, 0x3C00},
      {"halfway 1 + 2^-11 ties to even 1", 1.0 + std::ldexp(1.0, -11), 0x3C00},
      {"halfway 1 + 3*2^-11 ties to even 1 + 2^-9", 1.0 + 3 * std::ldexp(1.0, -11), 0x3C02},
      {"just above halfway rounds up",
       std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f), 0x3C01},
      {"just below halfway rounds down",
       std::nextafter(1.0f + std::ldexp(1.0f, -11), 0.0f), 0x3C00},
      {"halfway 2049 ties to even 2048", 2049.0, 0x6800},
      {"halfway 2051 ties to even 2052", 2051.0, 0x6802},
      {"largest finite 65504", 65504.0, kLargestFinite},
      {"overflow threshold 65520 rounds to inf", 65520.0, kPositiveInf},
      {"just below 65520 rounds to 65504", std::nextafter(65520.0f, 0.0f), kLargestFinite},
      {"65536 overflows", 65536.0, kPositiveInf},
      {"float max overflows", std::numeric_limits<float>::max(), kPositiveInf},
      {"-65520 rounds to -inf", -65520.0, 0xFC00},
      {"smallest subnormal 2^-24", kMin, 0x0001},
      {"2^-25 ties to even 0", std::ldexp(1.0, -25), 0x0000},
      {"just above 2^-25 rounds to 2^-24", std::nextafter(std::ldexp(1.0f, -25), 1.0f), 0x0001},
      {"3 * 2^-25 ties to even 2 * 2^-24", 3 * std::ldexp(1.0, -25), 0x0002},
      {"below 2^-25 underflows to 0", std::ldexp(1.0, -26), 0x0000},
      {"-2^-26 underflows to -0", -std::ldexp(1.0, -26), 0x8000},
      {"-2^-25 ties to -0", -std::ldexp(1.0, -25), 0x8000},
      {"largest subnormal", 1023 * kMin, 0x03FF},
      {"smallest normal 2^-14", std::ldexp(1.0, -14), 0x0400},
      {"halfway between largest subnormal and smallest normal ties up to even", 2047 * kMin / 2,
       0x0400},
      {"just below that halfway stays subnormal", std::nextafter(2047.0f * std::ldexp(1.0f, -25), 0.0f),
       0x03FF},
      {"halfway between two subnormals ties to even", 1022.5 * kMin, 0x03FE},
      {"float subnormal underflows to 0", std::numeric_limits<float>::denorm_min(), 0x0000},
      {"zero", 0.0, 0x0000},
      {"negative zero keeps its sign", -0.0, 0x8000},
      {"inf", std::numeric_limits<double>::infinity(), kPositiveInf},
      {"-inf", -std::numeric_limits<double>::infinity(), 0xFC00},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    REQUIRE(static_cast<double>(static_cast<float>(c.value)) == c.value);  // the input is exact
    CHECK(from_float(static_cast<float>(c.value)) == c.bits);
    CHECK(from_double(c.value) == c.bits);
    CHECK(reference_half(c.value) == c.bits);  // the reference agrees, so the sweeps mean something
  }
  CHECK(from_double(std::numeric_limits<double>::max()) == kPositiveInf);
  CHECK(from_double(std::numeric_limits<double>::denorm_min()) == 0x0000);
  CHECK(from_double(-std::numeric_limits<double>::denorm_min()) == 0x8000);
}

TEST_CASE("float16: NaN stays NaN, including a NaN whose payload is only in the low bits") {
  // A naive truncation of these payloads would produce infinity.
  const auto low_float = std::bit_cast<float>(std::uint32_t{0x7F800001});
  const auto low_float_neg = std::bit_cast<float>(std::uint32_t{0xFF800001});
  const auto low_double = std::bit_cast<double>(std::uint64_t{0x7FF0000000000001});
  const auto low_double_neg = std::bit_cast<double>(std::uint64_t{0xFFF0000000000001});
  REQUIRE(std::isnan(low_float));
  REQUIRE(std::isnan(low_double));
  CHECK(is_nan_bits(from_float(low_float)));
  CHECK(is_nan_bits(from_float(low_float_neg)));
  CHECK((from_float(low_float_neg) & 0x8000u) != 0);
  CHECK(is_nan_bits(from_double(low_double)));
  CHECK(is_nan_bits(from_double(low_double_neg)));
  CHECK((from_double(low_double_neg) & 0x8000u) != 0);
  CHECK(is_nan_bits(from_float(std::numeric_limits<float>::quiet_NaN())));
  CHECK(is_nan_bits(from_double(std::numeric_limits<double>::quiet_NaN())));
  CHECK(float16(std::numeric_limits<float>::quiet_NaN()).is_nan());
}

TEST_CASE("float16: from double rounds once, not through float") {
  // 1 + 2^-11 + 2^-40 is above the halfway point between 1 and 1 + 2^-10, but rounding to float
  // first lands exactly on that halfway point, which then ties down to 1.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  REQUIRE(from_float(static_cast<float>(x)) == 0x3C00);
  CHECK(from_double(x) == 0x3C01);
  const double y = 1.0 + std::ldexp(1.0, -11) - std::ldexp(1.0, -40);
  CHECK(from_double(y) == 0x3C00);
  // The same trap at the overflow threshold and at the bottom of the subnormals.
  CHECK(from_double(std::nextafter(65520.0, 0.0)) == kLargestFinite);
  CHECK(from_double(std::nextafter(std::ldexp(1.0, -25), 1.0)) == 0x0001);
  CHECK(from_double(std::nextafter(std::ldexp(1.0, -25), 0.0)) == 0x0000);
}

TEST_CASE("float16: every rounding boundary between adjacent halves, both signs, both inputs") {
  // For each pair of adjacent finite magnitudes (lo, hi), including (65504, 65536) whose midpoint
  // is the overflow threshold: the midpoint ties to the even pattern, the next float or double
  // toward either side rounds to that side.
  for (std::uint32_t lo = 0; lo <= kLargestFinite; ++lo) {
    const auto hi = lo + 1;
    const double lo_value = decode(static_cast<std::uint16_t>(lo));
    const double hi_value = hi == kPositiveInf ? 65536.0 : decode(static_cast<std::uint16_t>(hi));
    const double mid = (lo_value + hi_value) / 2;  // exact: 12 significant bits
    const std::uint32_t even = (lo & 1u) == 0 ? lo : hi;
    for (const std::uint16_t sign : {std::uint16_t{0}, std::uint16_t{0x8000}}) {
      const double s = sign != 0 ? -1.0 : 1.0;
      const float sf = sign != 0 ? -1.0f : 1.0f;  // keeps nextafter in float
      const auto expect = [&](std::uint32_t magnitude) {
        return static_cast<std::uint16_t>(sign | magnitude);
      };
      const auto mid_f = static_cast<float>(s * mid);
      REQUIRE(static_cast<double>(mid_f) == s * mid);
      REQUIRE(from_float(mid_f) == expect(even));
      REQUIRE(from_float(std::nextafter(mid_f, sf * 1e30f)) == expect(hi));
      REQUIRE(from_float(std::nextafter(mid_f, 0.0f)) == expect(lo));
      REQUIRE(from_double(s * mid) == expect(even));
      REQUIRE(from_double(std::nextafter(s * mid, s * 1e300)) == expect(hi));
      REQUIRE(from_double(std::nextafter(s * mid, 0.0)) == expect(lo));
    }
  }
}

TEST_CASE("float16: narrowing agrees with an independent reference across the range") {
  // Floats: a strided sweep over every binade from below half the smallest subnormal to past the
  // overflow threshold (the stride is odd, so every mantissa bit varies).
  const std::uint32_t first = std::bit_cast<std::uint32_t>(std::ldexp(1.0f, -27));
  const std::uint32_t last = std::bit_cast<std::uint32_t>(131072.0f);
  std::uint64_t checked = 0;
  for (std::uint32_t b = first; b <= last; b += 1021) {
    for (const std::uint32_t sign : {0u, 0x80000000u}) {
      const auto f = std::bit_cast<float>(b | sign);
      CAPTURE(f);
      REQUIRE(from_float(f) == reference_half(f));
      ++checked;
    }
  }
  CHECK(checked > 500000);

  // Doubles: seeded random patterns over the same exponent range with all 52 mantissa bits random,
  // which float cannot represent, so a conversion that goes through float fails here.
  std::mt19937_64 rng(20240531);
  std::uniform_int_distribution<int> exponent(-28, 17);
  for (int i = 0; i < 300000; ++i) {
    const std::uint64_t bits = rng();
    const std::uint64_t biased = static_cast<std::uint64_t>(exponent(rng) + 1023);
    const auto d = std::bit_cast<double>((bits & 0x800FFFFFFFFFFFFFull) | (biased << 52));
    CAPTURE(d);
    REQUIRE(from_double(d) == reference_half(d));
  }
}

}  // namespace test_float16
