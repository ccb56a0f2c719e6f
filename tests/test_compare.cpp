// compare.hpp: bit-exact by default, NaN and ULP options, where and what differs, the skipped
// dispatch flags, and the report text.
#define DMLREF_TEST_NO_OPERATORS  // no operator header: see test_support.hpp
#include "test_support.hpp"

#include <dmlref/compare.hpp>

#include <bit>
#include <limits>
#include <sstream>

namespace test_compare {  // this file's own names (tests/CMakeLists.txt: unity groups)

using dmlref::CompareOptions;
using dmlref::CompareResult;
using dmlref::ErrorCode;
using dmlref::float16;
using dmlref::Layout;
using dmlref::TensorView;

namespace {

template <class T>
CompareResult compare_vectors(const std::vector<T>& expected, const std::vector<T>& actual,
                              const CompareOptions& options = {}) {
  const auto n = static_cast<std::uint32_t>(expected.size());
  return dmlref::compare(TensorView<const T>(expected.data(), Layout::packed({n})),
                         TensorView<const T>(actual.data(), Layout::packed({n})), options);
}

template <class T>
T from_bits(std::uint64_t bits) {
  if constexpr (std::is_same_v<T, float16>) {
    return float16::from_bits(static_cast<std::uint16_t>(bits));
  } else if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
  } else {
    return std::bit_cast<double>(bits);
  }
}

// Per float type: +0, the smallest positive subnormal, 1.0 and a quiet NaN, as bits.
template <class T>
struct FloatCase;
template <> struct FloatCase<float16> {
  static constexpr std::uint64_t kOne = 0x3C00, kSign = 0x8000, kNan = 0x7E00, kInf = 0x7C00,
                                 kMax = 0x7BFF;
};
template <> struct FloatCase<float> {
  static constexpr std::uint64_t kOne = 0x3F800000, kSign = 0x80000000, kNan = 0x7FC00000,
                                 kInf = 0x7F800000, kMax = 0x7F7FFFFF;
};
template <> struct FloatCase<double> {
  static constexpr std::uint64_t kOne = 0x3FF0000000000000, kSign = 0x8000000000000000,
                                 kNan = 0x7FF8000000000000, kInf = 0x7FF0000000000000,
                                 kMax = 0x7FEFFFFFFFFFFFFF;
};

}  // namespace

TEST_CASE_TEMPLATE("compare: equal tensors pass, for every type", T, DMLREF_ALL_TYPES) {
  const auto v = dmlref::test::distinct_buffer<T>(24);
  const auto r = compare_vectors(v, v);
  CHECK(r.passed());
  CHECK(static_cast<bool>(r));
  CHECK(r.mismatch_count == 0);
  CHECK(r.element_count == 24);
  CHECK(r.mismatches.empty());
  CHECK(r.data_type == dmlref::data_type_of<T>);
  CHECK(r.to_string().find("all 24 elements match") != std::string::npos);
}

TEST_CASE_TEMPLATE("compare: one element off is reported at its coordinate", T, DMLREF_ALL_TYPES) {
  auto expected = dmlref::test::distinct_buffer<T>(2 * 3 * 4);
  auto actual = expected;
  // Coordinate [1,2,3] of a packed {2,3,4} tensor.
  actual[1 * 12 + 2 * 4 + 3] = dmlref::test::distinct_value<T>(200);
  const TensorView<const T> e(expected.data(), Layout::packed({2, 3, 4}));
  const TensorView<const T> a(actual.data(), Layout::packed({2, 3, 4}));
  const auto r = dmlref::compare(e, a);
  CHECK_FALSE(r.passed());
  CHECK(r.mismatch_count == 1);
  REQUIRE(r.mismatches.size() == 1);
  const auto& m = r.mismatches[0];
  CHECK(m.rank == 3);
  CHECK(m.coordinate[0] == 1);
  CHECK(m.coordinate[1] == 2);
  CHECK(m.coordinate[2] == 3);
  CHECK(m.coordinate_string() == "[1,2,3]");
  CHECK(m.expected == dmlref::format_element(expected[23]));
  CHECK(m.actual == dmlref::format_element(actual[23]));
  CHECK(r.to_string().find("at [1,2,3]: expected " + m.expected + ", actual " + m.actual) !=
        std::string::npos);
}

TEST_CASE("compare: the largest absolute and ULP differences cover every mismatch") {
  CompareOptions few;
  few.max_report = 1;  // the largest difference is past the reported mismatch
  const auto f = compare_vectors<float>({1.0f, 2.0f, 3.0f, -0.0f}, {1.5f, 2.0f, -3.0f, 0.0f}, few);
  CHECK(f.mismatch_count == 3);
  REQUIRE(f.max_abs_diff.has_value());
  CHECK(*f.max_abs_diff == 6.0);
  // 3 and -3: each 0x40400000 steps from zero on the ordered line.
  CHECK(f.max_ulp_diff == std::optional<std::uint64_t>(2 * 0x40400000ull));
  const auto i = compare_vectors<std::int64_t>({std::numeric_limits<std::int64_t>::min(), 5},
                                               {std::numeric_limits<std::int64_t>::max(), 5});
  CHECK(i.max_ulp_diff == std::optional<std::uint64_t>(~0ull));  // exact: 2^64 - 1
  const auto u = compare_vectors<std::uint8_t>({3, 250}, {0, 5});
  CHECK(u.max_ulp_diff == std::optional<std::uint64_t>(245));
  CHECK(u.max_abs_diff == std::optional<double>(245.0));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto n = compare_vectors<float>({nan, 1.0f}, {1.0f, 1.0f});
  CHECK(n.mismatch_count == 1);
  CHECK_FALSE(n.max_abs_diff.has_value());  // a NaN against a number has no difference
  CHECK_FALSE(n.max_ulp_diff.has_value());
  const auto same = compare_vectors<float>({1.0f}, {1.0f});
  CHECK_FALSE(same.max_abs_diff.has_value());
}

TEST_CASE("compare: strides may differ; coordinates are logical") {
  // expected packed {2,3}; actual the same values stored transposed (column-major).
  const std::vector<std::int32_t> expected = {1, 2, 3, 4, 5, 6};
  std::vector<std::int32_t> actual_storage = {1, 4, 2, 5, 3, 6};
  const TensorView<const std::int32_t> e(expected.data(), Layout::packed({2, 3}));
  const TensorView<std::int32_t> a(actual_storage.data(), Layout::strided({2, 3}, {1, 2}));
  CHECK(dmlref::compare(e, a).passed());
  actual_storage[3] = 50;  // logical [1,1]
  const auto r = dmlref::compare(e, a);
  REQUIRE(r.mismatches.size() == 1);
  CHECK(r.mismatches[0].coordinate_string() == "[1,1]");
  CHECK(r.mismatches[0].expected == "5");
  CHECK(r.mismatches[0].actual == "50");
}

TEST_CASE("compare: shape mismatch is ErrorCode::ShapeMismatch") {
  const std::vector<float> a(6), b(6);
  const TensorView<const float> e(a.data(), Layout::packed({2, 3}));
  const TensorView<const float> x(b.data(), Layout::packed({3, 2}));
  const TensorView<const float> y(b.data(), Layout::packed({1, 2, 3}));
  DMLREF_CHECK_ERROR(dmlref::compare(e, x), ErrorCode::ShapeMismatch, "{2,3} but the actual tensor has Sizes {3,2}");
  DMLREF_CHECK_ERROR(dmlref::compare(e, y), ErrorCode::ShapeMismatch, "{1,2,3}");
  DMLREF_CHECK_ERROR(dmlref::compare(e, e, x), ErrorCode::ShapeMismatch, "untouched");
}

TEST_CASE_TEMPLATE("compare: NaN payloads differ unless nan_equal", T, float16, float, double) {
  using C = FloatCase<T>;
  const T nan_a = from_bits<T>(C::kNan);
  const T nan_b = from_bits<T>(C::kNan | 1);            // another payload
  const T nan_c = from_bits<T>(C::kNan | C::kSign);     // negative NaN
  const T one = from_bits<T>(C::kOne);
  CHECK(compare_vectors<T>({nan_a}, {nan_a}).passed());  // same bits always match
  CHECK_FALSE(compare_vectors<T>({nan_a}, {nan_b}).passed());
  CHECK_FALSE(compare_vectors<T>({nan_a}, {nan_c}).passed());
  CompareOptions nan_equal;
  nan_equal.nan_equal = true;
  CHECK(compare_vectors<T>({nan_a, nan_b}, {nan_b, nan_c}, nan_equal).passed());
  // A NaN never equals a number, with or without the options.
  CHECK_FALSE(compare_vectors<T>({nan_a}, {one}, nan_equal).passed());
  CHECK_FALSE(compare_vectors<T>({one}, {nan_a}, nan_equal).passed());
  nan_equal.ulp_tolerance = std::numeric_limits<std::uint64_t>::max();
  CHECK_FALSE(compare_vectors<T>({nan_a}, {one}, nan_equal).passed());
  const auto r = compare_vectors<T>({nan_a}, {nan_b});
  REQUIRE(r.mismatches.size() == 1);
  CHECK(r.mismatches[0].expected_bits == C::kNan);
  CHECK(r.mismatches[0].actual_bits == (C::kNan | 1));
  CHECK(compare_vectors<T>({nan_a}, {nan_b}, nan_equal).to_string().find("every NaN equal") !=
        std::string::npos);
}

TEST_CASE_TEMPLATE("compare: ULP tolerance edges", T, float16, float, double) {
  using C = FloatCase<T>;
  CompareOptions ulp3;
  ulp3.ulp_tolerance = 3;
  const T one = from_bits<T>(C::kOne);
  // Distance exactly 3 passes, 4 fails, on either side of the value.
  CHECK(compare_vectors<T>({one}, {from_bits<T>(C::kOne + 3)}, ulp3).passed());
  CHECK(compare_vectors<T>({one}, {from_bits<T>(C::kOne - 3)}, ulp3).passed());
  CHECK_FALSE(compare_vectors<T>({one}, {from_bits<T>(C::kOne + 4)}, ulp3).passed());
  CHECK_FALSE(compare_vectors<T>({one}, {from_bits<T>(C::kOne - 4)}, ulp3).passed());
  // Across zero: +2 subnormal steps and -1 subnormal step are 3 apart; +2 and -2 are 4 apart.
  const T pos2 = from_bits<T>(2);
  const T neg1 = from_bits<T>(C::kSign | 1);
  const T neg2 = from_bits<T>(C::kSign | 2);
  CHECK(compare_vectors<T>({pos2}, {neg1}, ulp3).passed());
  CHECK_FALSE(compare_vectors<T>({pos2}, {neg2}, ulp3).passed());
  // The largest finite value and infinity are one step apart.
  CompareOptions ulp1;
  ulp1.ulp_tolerance = 1;
  CHECK(compare_vectors<T>({from_bits<T>(C::kMax)}, {from_bits<T>(C::kInf)}, ulp1).passed());
  // The reported distance is the ordered-integer distance.
  const auto r = compare_vectors<T>({one}, {from_bits<T>(C::kOne + 4)}, ulp3);
  REQUIRE(r.mismatches.size() == 1);
  REQUIRE(r.mismatches[0].ulp_distance.has_value());
  CHECK(*r.mismatches[0].ulp_distance == 4);
  CHECK(r.to_string().find("4 ULP apart") != std::string::npos);
  CHECK(r.to_string().find("within 3 ULP") != std::string::npos);
  // Without a tolerance one step is a mismatch.
  CHECK_FALSE(compare_vectors<T>({one}, {from_bits<T>(C::kOne + 1)}).passed());
}

TEST_CASE("compare: ULP distance spans the whole double range without overflow") {
  CompareOptions all;
  all.ulp_tolerance = std::numeric_limits<std::uint64_t>::max();
  const double lo = -std::numeric_limits<double>::infinity();
  const double hi = std::numeric_limits<double>::infinity();
  const auto r = compare_vectors<double>({lo}, {hi}, all);
  CHECK(r.passed());
  CompareOptions tight;
  tight.ulp_tolerance = 0xFFDFFFFFFFFFFFFFull;  // 2 * 0x7FF0000000000000 - 1
  const auto r2 = compare_vectors<double>({lo}, {hi}, tight);
  REQUIRE(r2.mismatches.size() == 1);
  CHECK(*r2.mismatches[0].ulp_distance == 0xFFE0000000000000ull);
}

TEST_CASE_TEMPLATE("compare: negative zero differs from zero when bit-exact", T, float16, float, double) {
  using C = FloatCase<T>;
  const T pz = from_bits<T>(0);
  const T nz = from_bits<T>(C::kSign);
  const auto r = compare_vectors<T>({pz}, {nz});
  CHECK_FALSE(r.passed());
  REQUIRE(r.mismatches.size() == 1);
  CHECK(r.mismatches[0].actual.rfind("-0 (0x8", 0) == 0);
  CompareOptions ulp0;
  ulp0.ulp_tolerance = 0;  // numeric equality: -0 == +0
  CHECK(compare_vectors<T>({pz}, {nz}, ulp0).passed());
  CHECK(compare_vectors<T>({nz}, {pz}, ulp0).passed());
  CHECK_FALSE(compare_vectors<T>({pz}, {from_bits<T>(1)}, ulp0).passed());
}

TEST_CASE("compare: integers ignore a ULP tolerance and say so") {
  CompareOptions ulp;
  ulp.ulp_tolerance = 5;
  const auto r = compare_vectors<std::int32_t>({10}, {11}, ulp);
  CHECK_FALSE(r.passed());
  CHECK(r.tolerance_ignored);
  CHECK(r.to_string().find("float types only") != std::string::npos);
}

TEST_CASE("compare: an all-zero actual output is flagged") {
  const std::vector<float> expected = {1, 2, 3, 0};
  const std::vector<float> zeros(4, 0.0f);
  auto r = compare_vectors(expected, zeros);
  CHECK(r.actual_all_zero);
  CHECK(r.mismatch_count == 3);
  CHECK(r.to_string().find("all zeros") != std::string::npos);
  // Not flagged when the expected output is all zero too, nor when some element is non-zero.
  CHECK_FALSE(compare_vectors(zeros, zeros).actual_all_zero);
  CHECK_FALSE(compare_vectors(expected, std::vector<float>{0, 0, 0, 5}).actual_all_zero);
  // -0 has a bit set: it is not "all zeros".
  CHECK_FALSE(compare_vectors(expected, std::vector<float>{-0.0f, 0, 0, 0}).actual_all_zero);
}

TEST_CASE("compare: an actual output equal to the untouched buffer is flagged") {
  const std::vector<std::uint16_t> expected = {1, 2, 3, 4};
  const std::vector<std::uint16_t> sentinel = {0xAAAA, 0xAAAA, 0xAAAA, 0xAAAA};
  const TensorView<const std::uint16_t> e(expected.data(), Layout::packed({2, 2}));
  const TensorView<const std::uint16_t> u(sentinel.data(), Layout::packed({2, 2}));
  auto r = dmlref::compare(e, u, u);  // actual still holds the sentinel
  CHECK(r.actual_untouched);
  CHECK_FALSE(r.actual_all_zero);
  CHECK(r.mismatch_count == 4);
  CHECK(r.to_string().find("was the dispatch skipped?") != std::string::npos);
  // A real result is not flagged.
  r = dmlref::compare(e, e, u);
  CHECK(r.passed());
  CHECK_FALSE(r.actual_untouched);
  CHECK_FALSE(r.untouched_equals_expected);
  // When the untouched buffer already equals the expected output, the test cannot tell.
  r = dmlref::compare(e, e, e);
  CHECK(r.passed());
  CHECK(r.untouched_equals_expected);
  CHECK_FALSE(r.actual_untouched);
  CHECK(r.to_string().find("warning: the expected output equals") != std::string::npos);
}

TEST_CASE("compare: the report shows float16 values and bits, and caps the list") {
  const std::vector<float16> expected = {float16(1.5f), float16(2.0f), float16(-0.25f)};
  const std::vector<float16> actual = {float16(2.0f), float16(1.5f), float16(-0.25f)};
  CompareOptions options;
  options.max_report = 1;
  options.name = "OutputTensor";
  const auto r = compare_vectors(expected, actual, options);
  CHECK(r.mismatch_count == 2);
  CHECK(r.mismatches.size() == 1);
  const std::string text = r.to_string();
  CHECK(text.find("OutputTensor FLOAT16 {3}: 2 of 3 elements differ (bit-exact)") == 0);
  CHECK(text.find("at [0]: expected 1.5 (0x3e00), actual 2 (0x4000)") != std::string::npos);
  CHECK(text.find("1 more not shown (max_report 1)") != std::string::npos);
  std::ostringstream os;
  os << r;
  CHECK(os.str() == text);
}

TEST_CASE("compare: element formatting per type") {
  CHECK(dmlref::format_element(float16::from_bits(0x3e00)) == "1.5 (0x3e00)");
  CHECK(dmlref::format_element(float16::from_bits(0x8000)) == "-0 (0x8000)");
  CHECK(dmlref::format_element(float16::from_bits(0x0001)) == "5.9604645e-08 (0x0001)");
  CHECK(dmlref::format_element(0.1f) == "0.1 (0x3dcccccd)");
  CHECK(dmlref::format_element(1.0) == "1 (0x3ff0000000000000)");
  CHECK(dmlref::format_element(std::bit_cast<float>(0x7fc00001u)) == "nan (0x7fc00001)");
  CHECK(dmlref::format_element(std::int8_t{-7}) == "-7");
  CHECK(dmlref::format_element(std::uint8_t{200}) == "200");
  CHECK(dmlref::format_element(std::numeric_limits<std::int64_t>::min()) == "-9223372036854775808");
  CHECK(dmlref::format_element(std::numeric_limits<std::uint64_t>::max()) == "18446744073709551615");
}

TEST_CASE("compare: the runtime layer takes a description and buffers") {
  const dmlref::TensorDesc desc(dmlref::DataType::Float16, {1, 2, 3});
  const dmlref::BufferTensorDesc d = desc.desc();
  std::vector<float16> expected(6), untouched(6, float16::from_bits(0x7777));
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = float16(static_cast<float>(i));
  std::vector<float16> actual = expected;
  const auto bytes = expected.size() * sizeof(float16);  // 12, DMLCalcBufferTensorSize
  auto r = dmlref::compare(d, {expected.data(), bytes}, {actual.data(), bytes});
  CHECK(r.passed());
  actual[4] = float16::from_bits(0x3c01);
  CompareOptions options;
  options.name = "OutputTensor";
  r = dmlref::compare(d, {expected.data(), bytes}, {actual.data(), bytes}, options,
                      dmlref::ConstBuffer{untouched.data(), bytes});
  REQUIRE(r.mismatches.size() == 1);
  CHECK(r.mismatches[0].coordinate_string() == "[0,1,1]");
  CHECK(r.mismatches[0].expected == "4 (0x4400)");
  CHECK(r.mismatches[0].actual == "1.0009766 (0x3c01)");
  CHECK_FALSE(r.actual_untouched);
  // A buffer smaller than TotalTensorSizeInBytes is T10.
  DMLREF_CHECK_ERROR(dmlref::compare(d, {expected.data(), 4}, {actual.data(), bytes}),
                     ErrorCode::T10, "output (expected)");
  DMLREF_CHECK_ERROR(dmlref::compare(d, {expected.data(), bytes}, {actual.data(), 4}, options),
                     ErrorCode::T10, "OutputTensor (actual)");
}

}  // namespace test_compare
