// fill.hpp: reproducible seeded fills, distinct values per type, float16-exact random values,
// integer ranges, and index fills that are valid, unique and negative on request.
#define DMLREF_TEST_NO_OPERATORS  // no operator header: see test_support.hpp
#include "test_support.hpp"

#include <dmlref/fill.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace test_fill {  // this file's own names (tests/CMakeLists.txt: unity groups)

using dmlref::ErrorCode;
using dmlref::float16;
using dmlref::IndexFillOptions;
using dmlref::IndexSign;
using dmlref::Layout;
using dmlref::TensorView;
using dmlref::test::bits_of;

namespace {

template <class T>
std::vector<T> distinct(std::uint32_t n, std::uint64_t seed) {
  std::vector<T> v(n);
  dmlref::fill_distinct(TensorView<T>(v.data(), Layout::packed({n})), seed);
  return v;
}

template <class T>
std::vector<T> random(std::uint32_t n, std::uint64_t seed) {
  std::vector<T> v(n);
  dmlref::fill_random(TensorView<T>(v.data(), Layout::packed({n})), seed);
  return v;
}

template <class T>
double as_double(const T& v) {
  return static_cast<double>(v);
}
template <>
double as_double(const float16& v) {
  return static_cast<double>(static_cast<float>(v));
}

template <class T>
bool is_nan_or_inf(const T& v) {
  if constexpr (std::is_same_v<T, float16>) {
    return (v.bits() & 0x7C00) == 0x7C00;
  } else if constexpr (std::is_floating_point_v<T>) {
    return !std::isfinite(v);
  } else {
    return false;
  }
}

}  // namespace

TEST_CASE("fill: splitmix64 matches the published sequence") {
  // The reference implementation's first outputs for seed 0 (Vigna's splitmix64.c).
  dmlref::SplitMix64 rng(0);
  CHECK(rng.next() == 0xE220A8397B1DCDAFull);
  CHECK(rng.next() == 0x6E789E6AA1B965F4ull);
  CHECK(rng.next() == 0x06C45D188009454Full);
}

TEST_CASE("fill: pinned values, so a change in the generator cannot go unnoticed") {
  // Recorded from this implementation; every platform must reproduce them.
  const auto u8 = distinct<std::uint8_t>(8, 42);
  const auto f16 = random<float16>(4, 7);
  const auto i64 = distinct<std::int64_t>(2, 1);
  CHECK(bits_of(u8) == std::vector<std::uint64_t>{6, 65, 67, 183, 195, 63, 243, 135});
  CHECK(bits_of(f16) == std::vector<std::uint64_t>{0xd9d7, 0x161c, 0x3202, 0x8dcb});
  CHECK(bits_of(i64) == std::vector<std::uint64_t>{0x72dca0f36fe58f55ull, 0xaf1595383e176b8bull});
}

TEST_CASE_TEMPLATE("fill: the same seed gives the same values, another seed others", T, DMLREF_ALL_TYPES) {
  CHECK(bits_of(distinct<T>(64, 5)) == bits_of(distinct<T>(64, 5)));
  CHECK(bits_of(distinct<T>(64, 5)) != bits_of(distinct<T>(64, 6)));
  CHECK(bits_of(random<T>(64, 5)) == bits_of(random<T>(64, 5)));
  CHECK(bits_of(random<T>(64, 5)) != bits_of(random<T>(64, 6)));
}

TEST_CASE_TEMPLATE("fill: distinct values are distinct, finite and non-zero", T, DMLREF_ALL_TYPES) {
  // Up to the type's whole set for the small types, a few thousand for the rest.
  const std::uint64_t n = std::min<std::uint64_t>(dmlref::max_distinct<T>(), 70000);
  const auto v = distinct<T>(static_cast<std::uint32_t>(n), 99);
  const auto b = bits_of(v);
  CHECK(std::set<std::uint64_t>(b.begin(), b.end()).size() == n);
  if constexpr (!std::is_integral_v<T>) {
    CHECK(std::none_of(v.begin(), v.end(), [](const T& x) { return is_nan_or_inf(x); }));
    CHECK(std::none_of(v.begin(), v.end(), [](const T& x) { return as_double(x) == 0.0; }));
  }
  // One more element than there are values is an error, not a wrap.
  if (dmlref::max_distinct<T>() <= 70000) {
    std::vector<T> too_many(n + 1);
    DMLREF_CHECK_ERROR(dmlref::fill_distinct(TensorView<T>(too_many.data(), Layout::packed({static_cast<std::uint32_t>(n + 1)})), 1),
                       ErrorCode::InvalidOption, "distinct values");
  }
}

TEST_CASE("fill: limits of distinct values per type") {
  CHECK(dmlref::max_distinct<std::int8_t>() == 256);
  CHECK(dmlref::max_distinct<std::uint8_t>() == 256);
  CHECK(dmlref::max_distinct<std::uint16_t>() == 65536);
  CHECK(dmlref::max_distinct<float16>() == 63486);
  CHECK(dmlref::max_distinct<float>() == 2ull * 0x7F7FFFFF);
  CHECK(dmlref::max_distinct<std::uint32_t>() == (1ull << 32));
  CHECK(dmlref::max_distinct<std::int64_t>() == std::numeric_limits<std::uint64_t>::max());
  std::vector<std::int8_t> v(257);
  DMLREF_CHECK_ERROR(dmlref::fill_distinct(TensorView<std::int8_t>(v.data(), Layout::packed({257})), 0),
                     ErrorCode::InvalidOption, "the view has 257 elements starting at position 0 but INT8 has only 256");
}

TEST_CASE_TEMPLATE("fill: one seed, disjoint ranges: distinct across tensors", T, DMLREF_ALL_TYPES) {
  // Two inputs of a JOIN: 100 and 150 elements from one sequence (8-bit types: 100 + 156).
  const std::uint32_t second = sizeof(T) == 1 ? 156 : 150;
  std::vector<T> a(100), b(second), whole(100 + second);
  dmlref::fill_distinct(TensorView<T>(a.data(), Layout::packed({100})), 7);
  dmlref::fill_distinct(TensorView<T>(b.data(), Layout::packed({second})), 7, 100);
  dmlref::fill_distinct(TensorView<T>(whole.data(), Layout::packed({100 + second})), 7);
  std::vector<T> joined = a;
  joined.insert(joined.end(), b.begin(), b.end());
  CHECK(bits_of(joined) == bits_of(whole));
  const auto all = bits_of(joined);
  CHECK(std::set<std::uint64_t>(all.begin(), all.end()).size() == all.size());
  if constexpr (sizeof(T) == 1) {
    DMLREF_CHECK_ERROR(dmlref::fill_distinct(TensorView<T>(b.data(), Layout::packed({second})), 7, 101),
                       ErrorCode::InvalidOption, "starting at position 101");
  }
}

TEST_CASE("fill: a fill depends on sizes and seed, not strides") {
  std::vector<std::int32_t> packed(12), transposed(12);
  dmlref::fill_distinct(TensorView<std::int32_t>(packed.data(), Layout::packed({3, 4})), 3);
  const TensorView<std::int32_t> t(transposed.data(), Layout::strided({3, 4}, {1, 3}));
  dmlref::fill_distinct(t, 3);
  for (std::uint32_t r = 0; r < 3; ++r) {
    for (std::uint32_t c = 0; c < 4; ++c) CHECK(t.at({r, c}) == packed[r * 4 + c]);
  }
  // A broadcast view cannot hold distinct values (T12).
  DMLREF_CHECK_ERROR(dmlref::fill_distinct(TensorView<std::int32_t>(packed.data(), Layout::strided({3, 4}, {0, 1})), 3),
                     ErrorCode::T12, "fill_distinct");
}

TEST_CASE_TEMPLATE("fill: random float values round-trip exactly through float16", T, float16, float, double) {
  const auto v = random<T>(4096, 11);
  bool saw_negative = false, saw_subnormal = false;
  std::size_t bad = 0;
  for (const T& x : v) {
    const double d = as_double(x);
    bad += is_nan_or_inf(x) || as_double(float16(d)) != d;
    saw_negative = saw_negative || d < 0;
    saw_subnormal = saw_subnormal || (d != 0 && std::fabs(d) < 6.103515625e-05);
  }
  CHECK(bad == 0);
  CHECK(saw_negative);
  CHECK(saw_subnormal);
  // In a range: every value inside, both ends reachable.
  std::vector<T> r(4096);
  dmlref::fill_random(TensorView<T>(r.data(), Layout::packed({4096})), 12, -2.0, 2.0);
  double lo = 10, hi = -10;
  for (const T& x : r) {
    const double d = as_double(x);
    bad += d < -2.0 || d > 2.0 || as_double(float16(d)) != d;
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  CHECK(bad == 0);
  CHECK(lo < -1.9);
  CHECK(hi > 1.9);
  // A range holding exactly one float16 value gives only it; a range holding none is an error.
  dmlref::fill_random(TensorView<T>(r.data(), Layout::packed({4})), 1, 0.9996, 1.0004);
  for (int i = 0; i < 4; ++i) CHECK(as_double(r[static_cast<std::size_t>(i)]) == 1.0);
  DMLREF_CHECK_ERROR(dmlref::fill_random(TensorView<T>(r.data(), Layout::packed({4})), 1, 1.0001, 1.0002),
                     ErrorCode::InvalidOption, "no float16 value");
  DMLREF_CHECK_ERROR(dmlref::fill_random(TensorView<T>(r.data(), Layout::packed({4})), 1, 2.0, 1.0),
                     ErrorCode::InvalidOption, "empty");
}

TEST_CASE_TEMPLATE("fill: random integers in a range", T, std::int64_t, std::int32_t, std::int16_t,
                   std::int8_t, std::uint64_t, std::uint32_t, std::uint16_t, std::uint8_t) {
  constexpr T lo = std::is_signed_v<T> ? T(-3) : T(5);
  constexpr T hi = T(lo + 6);
  std::vector<T> v(2000);
  dmlref::fill_random(TensorView<T>(v.data(), Layout::packed({2000})), 21, lo, hi);
  std::set<T> seen(v.begin(), v.end());
  CHECK(seen.size() == 7);  // every value of [lo, hi] appears, no other
  CHECK(*seen.begin() == lo);
  CHECK(*seen.rbegin() == hi);
  // The whole range of the type.
  dmlref::fill_random(TensorView<T>(v.data(), Layout::packed({2000})), 21,
                      std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  CHECK(std::set<T>(v.begin(), v.end()).size() > 100);
  DMLREF_CHECK_ERROR(dmlref::fill_random(TensorView<T>(v.data(), Layout::packed({2})), 1, hi, lo),
                     ErrorCode::InvalidOption, "is empty");
}

TEST_CASE("fill: fill_constant writes one value everywhere, broadcast views included") {
  std::vector<std::int16_t> v(6, 0);
  dmlref::fill_constant(TensorView<std::int16_t>(v.data(), Layout::packed({2, 3})), -5);
  CHECK(std::all_of(v.begin(), v.end(), [](std::int16_t x) { return x == -5; }));
  dmlref::fill_constant(TensorView<std::int16_t>(v.data(), Layout::strided({2, 3}, {0, 1})), 7);
  CHECK(v[2] == 7);
  CHECK(v[3] == -5);
  // Plain literals for the bounds, whatever the element type.
  std::vector<std::int8_t> w(50);
  dmlref::fill_random(TensorView<std::int8_t>(w.data(), Layout::packed({50})), 3, -2, 2);
  CHECK(std::all_of(w.begin(), w.end(), [](std::int8_t x) { return x >= -2 && x <= 2; }));
}

TEST_CASE_TEMPLATE("fill: indices are valid for the axis", I, DMLREF_INDEX_TYPES) {
  std::vector<I> v(500);
  const TensorView<I> view(v.data(), Layout::packed({5, 100}));
  dmlref::fill_indices(view, 4, 7);
  std::set<I> seen(v.begin(), v.end());
  CHECK(seen.size() == 7);
  CHECK(*seen.begin() == 0);
  CHECK(*seen.rbegin() == 6);
  std::vector<I> again(500);
  dmlref::fill_indices(TensorView<I>(again.data(), Layout::packed({5, 100})), 4, 7);
  CHECK(again == v);
  if constexpr (std::is_signed_v<I>) {
    IndexFillOptions negative;
    negative.sign = IndexSign::Negative;
    dmlref::fill_indices(view, 4, 7, negative);
    seen = std::set<I>(v.begin(), v.end());
    CHECK(seen.size() == 7);
    CHECK(*seen.begin() == -7);
    CHECK(*seen.rbegin() == -1);
    IndexFillOptions mixed;
    mixed.sign = IndexSign::Mixed;
    dmlref::fill_indices(view, 4, 7, mixed);
    seen = std::set<I>(v.begin(), v.end());
    CHECK(seen.size() == 14);  // [-7, 6]
    CHECK(*seen.begin() == -7);
    CHECK(*seen.rbegin() == 6);
  } else {
    IndexFillOptions negative;
    negative.sign = IndexSign::Mixed;
    DMLREF_CHECK_ERROR(dmlref::fill_indices(view, 4, 7, negative), ErrorCode::InvalidOption,
                       "negative indices need a signed index type");
  }
}

TEST_CASE_TEMPLATE("fill: unique indices", I, DMLREF_INDEX_TYPES) {
  // The whole tensor: a permutation of [0, n) when count == n.
  std::vector<I> v(24);
  IndexFillOptions unique;
  unique.unique = true;
  dmlref::fill_indices(TensorView<I>(v.data(), Layout::packed({2, 3, 4})), 8, 24, unique);
  std::vector<I> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) CHECK(sorted[i] == static_cast<I>(i));
  DMLREF_CHECK_ERROR(dmlref::fill_indices(TensorView<I>(v.data(), Layout::packed({2, 3, 4})), 8, 23, unique),
                     ErrorCode::InvalidOption, "24 unique indices cannot fit an axis of size 23");

  // Along dimension 1 (SCATTER with Axis 1): each line [a, :, c] distinct, in an axis of 5.
  std::vector<I> s(2 * 3 * 4);
  const TensorView<I> sv(s.data(), Layout::packed({2, 3, 4}));
  unique.unique_along = 1;
  if constexpr (std::is_signed_v<I>) unique.sign = IndexSign::Mixed;
  dmlref::fill_indices(sv, 9, 5, unique);
  bool lines_differ = false;
  for (std::uint32_t a = 0; a < 2; ++a) {
    for (std::uint32_t c = 0; c < 4; ++c) {
      std::set<std::uint64_t> line;
      for (std::uint32_t b = 0; b < 3; ++b) {
        const I k = sv.at({a, b, c});
        const auto normalized = dmlref::normalize_index(k, 5);
        REQUIRE(normalized.has_value());
        line.insert(*normalized);
      }
      CHECK(line.size() == 3);
      lines_differ = lines_differ || sv.at({a, 0, c}) != sv.at({0, 0, 0});
    }
  }
  CHECK(lines_differ);
  DMLREF_CHECK_ERROR(dmlref::fill_indices(sv, 9, 2, unique), ErrorCode::InvalidOption,
                     "lines along dimension 1 hold 3 indices");
  unique.unique_along = 3;
  DMLREF_CHECK_ERROR(dmlref::fill_indices(sv, 9, 5, unique), ErrorCode::InvalidOption,
                     "unique_along is 3 but the view has 3 dimensions");
}

TEST_CASE("fill: index fills reject sizes the type cannot hold") {
  std::vector<std::int32_t> v(4);
  const TensorView<std::int32_t> view(v.data(), Layout::packed({4}));
  DMLREF_CHECK_ERROR(dmlref::fill_indices(view, 1, 0), ErrorCode::InvalidOption, "axis size is 0");
  DMLREF_CHECK_ERROR(dmlref::fill_indices(view, 1, (1ull << 31) + 1), ErrorCode::InvalidOption,
                     "does not fit INT32 indices");
  dmlref::fill_indices(view, 1, 1ull << 31);  // -2^31 .. 2^31 - 1 still fits
  std::vector<std::uint64_t> u(4);
  dmlref::fill_indices(TensorView<std::uint64_t>(u.data(), Layout::packed({4})), 1,
                       std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("fill: index tuples for GATHER_ND1") {
  std::vector<std::int64_t> v(3 * 4 * 2);
  const TensorView<std::int64_t> view(v.data(), Layout::packed({3, 4, 2}));
  const std::uint64_t sizes[] = {2, 9};
  dmlref::fill_index_tuples(view, 5, sizes, IndexSign::Mixed);
  bool negative = false;
  for (std::uint32_t a = 0; a < 3; ++a) {
    for (std::uint32_t b = 0; b < 4; ++b) {
      for (std::uint32_t j = 0; j < 2; ++j) {
        const std::int64_t k = view.at({a, b, j});
        CHECK(dmlref::normalize_index(k, sizes[j]).has_value());
        negative = negative || k < 0;
      }
    }
  }
  CHECK(negative);
  const std::uint64_t three[] = {2, 2, 2};
  DMLREF_CHECK_ERROR(dmlref::fill_index_tuples(view, 5, three), ErrorCode::ShapeMismatch,
                     "last size is 2 but 3 axis sizes");
}

}  // namespace test_fill
