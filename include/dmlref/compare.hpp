// dmlref: compare an expected (golden) tensor with an actual (device) one, and say where and what
// differs.
//
// Decisions (see also CompareOptions):
// - Bit-exact by default. These operators move data and never compute, so a correct device
//   result is bit-for-bit the golden one: NaN payloads, -0 versus +0 and float16 subnormals
//   included (WPT's WebNN conformance uses 0 ULP for the same operators). -0 != +0 here.
// - `nan_equal` makes every NaN equal to every NaN (any sign, any payload) for the float types;
//   a NaN never equals a number.
// - `ulp_tolerance` (float types only) switches to a numeric comparison: the ULP distance is the
//   difference of the values' positions on the ordered integer line (sign-magnitude bits mapped
//   to two's complement, as googletest's AlmostEquals does). On that line -0 and +0 are the same
//   point, so with any tolerance, 0 included, -0 equals +0; adjacent values are 1 apart, the
//   largest finite value and infinity are 1 apart, and the smallest subnormals of either sign are
//   2 apart (across zero). NaN is never within any tolerance. Integer types always compare exactly
//   and the report says so when a tolerance was asked for.
// - Identical bits always match, NaN included, whatever the options.
// - Diagnostics for a skipped or never-read-back dispatch: `actual_all_zero` (every bit of the
//   actual output is zero while the expected output is not) and, given the output buffer's
//   contents from before the dispatch, `actual_untouched` (the actual output still equals them
//   while the expected output does not). If the expected output itself equals the pre-dispatch
//   contents, a skipped dispatch cannot be noticed; `untouched_equals_expected` warns about that.
//   These flags never change `passed()`, which is exactly "no element differs".
#pragma once

#include <array>
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "dmlref/data_type.hpp"
#include "dmlref/error.hpp"
#include "dmlref/float16.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/runtime_instances.hpp"
#include "dmlref/tensor_desc.hpp"
#include "dmlref/tensor_view.hpp"
#include "dmlref/validation.hpp"

namespace dmlref {

struct CompareOptions {
  // Every NaN equals every NaN (float types). Off: NaNs match only when their bits do.
  bool nan_equal = false;
  // nullopt: bit-exact. A value N: float elements match when at most N ULP apart (-0 == +0).
  std::optional<std::uint64_t> ulp_tolerance;
  // How many mismatches the result keeps (the first ones in row-major order); all are counted.
  std::size_t max_report = 10;
  // What the report calls the tensor ("OutputTensor", "OutputTensors[1]").
  std::string name = "output";
};

// One differing element.
struct Mismatch {
  std::uint32_t rank = 0;
  Coord coordinate{};
  std::string expected;  // formatted: "1.5 (0x3e00)" for float16, "-7" for int8
  std::string actual;
  std::uint64_t expected_bits = 0;  // the element's bits, zero-extended
  std::uint64_t actual_bits = 0;
  std::optional<std::uint64_t> ulp_distance;  // set when a tolerance was in effect and both are numbers

  // "[0,1,2]"
  std::string coordinate_string() const { return detail::coordinate_string(coordinate, rank); }
};

struct CompareResult {
  std::string name;
  DataType data_type = DataType::Unknown;
  Layout shape;  // sizes of the compared tensors (strides are those of `expected`)
  std::uint64_t element_count = 0;
  std::uint64_t mismatch_count = 0;
  std::vector<Mismatch> mismatches;  // the first options.max_report, row-major order
  bool actual_all_zero = false;            // actual is all zero bits, expected is not
  bool actual_untouched = false;           // actual equals the pre-dispatch contents, expected does not
  bool untouched_equals_expected = false;  // a skipped dispatch could not be noticed
  bool tolerance_ignored = false;          // a ULP tolerance was given for an integer type
  // Over every mismatch whose two values are numbers (a NaN on either side is left out):
  // the largest |actual - expected| (computed in double) and the largest ULP distance (float
  // types: positions on the ordered integer line, as for ulp_tolerance; integer types: the exact
  // difference). nullopt when no mismatch has two numbers (none at all, or only NaNs).
  std::optional<double> max_abs_diff;
  std::optional<std::uint64_t> max_ulp_diff;
  CompareOptions options;

  bool passed() const noexcept { return mismatch_count == 0; }
  explicit operator bool() const noexcept { return passed(); }

  // A multi-line report, e.g.
  //   OutputTensor FLOAT16 {2,3}: 1 of 6 elements differ (bit-exact)
  //     at [1,2]: expected 1.5 (0x3e00), actual 2 (0x4000)
  // Streamed rather than built with "literal" + std::string, on which GCC 12's -Wrestrict
  // misfires at -O2 (and users may build with -Werror).
  std::string to_string() const {
    std::ostringstream os;
    os << name << ' ' << data_type_name(data_type) << ' ' << shape.sizes_string() << ": ";
    if (passed()) {
      os << "all " << element_count << " elements match";
    } else {
      os << mismatch_count << " of " << element_count
         << (element_count == 1 ? " element differs" : " elements differ");
    }
    os << " (" << mode_string() << ")\n";
    for (const Mismatch& m : mismatches) {
      os << "  at " << m.coordinate_string() << ": expected " << m.expected << ", actual "
         << m.actual;
      if (m.ulp_distance) os << ", " << *m.ulp_distance << " ULP apart";
      os << '\n';
    }
    if (mismatch_count > mismatches.size()) {
      os << "  ... and " << mismatch_count - mismatches.size() << " more not shown (max_report "
         << options.max_report << ")\n";
    }
    os << notes();
    return os.str();
  }

  // The lines about a skipped dispatch (empty when there is nothing to say), for reports that
  // print their own mismatch list, like SCATTER's duplicate-aware check.
  std::string notes() const {
    std::string s;
    if (actual_all_zero) {
      s += "  note: the actual output is all zeros but the expected output is not; was the "
           "dispatch skipped or the result never read back?\n";
    }
    if (actual_untouched) {
      s += "  note: the actual output is identical to the output buffer's contents before the "
           "dispatch; was the dispatch skipped?\n";
    }
    if (untouched_equals_expected) {
      s += "  warning: the expected output equals the output buffer's contents before the "
           "dispatch, so a skipped dispatch would pass; fill the output with other values first\n";
    }
    return s;
  }

 private:
  std::string mode_string() const {
    std::string m;
    const bool is_float = data_type == DataType::Float16 || data_type == DataType::Float32 ||
                          data_type == DataType::Float64;
    if (is_float && options.ulp_tolerance) {
      m = "within ";
      m += std::to_string(*options.ulp_tolerance);
      m += " ULP, -0 == +0";
    } else {
      m = "bit-exact";
    }
    if (is_float && options.nan_equal) m += ", every NaN equal";
    if (tolerance_ignored) m += "; the ULP tolerance applies to float types only";
    return m;
  }
};

inline std::ostream& operator<<(std::ostream& os, const CompareResult& result) {
  return os << result.to_string();
}

namespace detail {

// The unsigned integer with T's bits.
template <class T>
using bits_of_t = std::conditional_t<
    sizeof(T) == 1, std::uint8_t,
    std::conditional_t<sizeof(T) == 2, std::uint16_t,
                       std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;

template <class T>
constexpr bool is_float_element =
    std::is_floating_point_v<T> || std::is_same_v<T, float16>;

template <class T>
std::uint64_t element_bits(const T& v) noexcept {
  if constexpr (std::is_same_v<T, float16>) {
    return v.bits();
  } else {
    return std::bit_cast<bits_of_t<T>>(v);
  }
}

template <class T>
bool element_is_nan(const T& v) noexcept {
  if constexpr (std::is_same_v<T, float16>) {
    return v.is_nan();
  } else if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

// Position on the ordered integer line: sign-magnitude bits to two's complement. -0 and +0 both
// map to 0. The magnitude of a double fits in 63 bits, so no case overflows.
template <class T>
std::int64_t ordered_position(const T& v) noexcept {
  constexpr unsigned kBits = sizeof(T) * 8;
  const std::uint64_t bits = element_bits(v);
  const std::uint64_t sign = std::uint64_t{1} << (kBits - 1);
  const auto magnitude = static_cast<std::int64_t>(bits & (sign - 1));
  return (bits & sign) != 0 ? -magnitude : magnitude;
}

// ULP distance of two non-NaN values of a float type. The true difference is below 2^64, so the
// unsigned subtraction is exact.
template <class T>
std::uint64_t ulp_distance(const T& a, const T& b) noexcept {
  const std::int64_t pa = ordered_position(a);
  const std::int64_t pb = ordered_position(b);
  return pa >= pb ? static_cast<std::uint64_t>(pa) - static_cast<std::uint64_t>(pb)
                  : static_cast<std::uint64_t>(pb) - static_cast<std::uint64_t>(pa);
}

template <class F>
std::string shortest_float(F v) {
  std::array<char, 64> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), r.ptr);
}

template <class U>
std::string hex_bits(U bits) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = static_cast<int>(sizeof(U) * 8) - 4; shift >= 0; shift -= 4) {
    s += kHex[(bits >> shift) & 0xF];
  }
  return s;
}

}  // namespace detail

// An element as the report prints it: floats as the shortest decimal that reads back to the same
// value plus their bits ("1.5 (0x3e00)", "-0 (0x8000)", "nan (0x7e01)"), integers in decimal
// (8-bit ones as numbers, not characters).
template <Element T>
std::string format_element(const T& v) {
  if constexpr (std::is_same_v<T, float16>) {
    return detail::shortest_float(static_cast<float>(v)) + " (" + detail::hex_bits(v.bits()) + ")";
  } else if constexpr (std::is_floating_point_v<T>) {
    return detail::shortest_float(v) + " (" +
           detail::hex_bits(std::bit_cast<detail::bits_of_t<T>>(v)) + ")";
  } else {
    return std::to_string(static_cast<std::conditional_t<std::is_signed_v<T>, long long,
                                                         unsigned long long>>(v));
  }
}

// Whether two elements match under `options` (see the header comment for the rules).
template <Element T>
bool elements_match(const T& expected, const T& actual, const CompareOptions& options) {
  if (detail::element_bits(expected) == detail::element_bits(actual)) return true;
  if constexpr (detail::is_float_element<T>) {
    const bool en = detail::element_is_nan(expected);
    const bool an = detail::element_is_nan(actual);
    if (en || an) return en && an && options.nan_equal;
    if (options.ulp_tolerance) return detail::ulp_distance(expected, actual) <= *options.ulp_tolerance;
  }
  return false;
}

namespace detail {

inline void check_same_shape(std::string_view what, const Layout& expected, const Layout& other,
                             std::string_view name) {
  if (expected.rank != other.rank || expected.sizes != other.sizes) {
    fail(ErrorCode::ShapeMismatch, "compare: ", name, ": the expected tensor has Sizes ",
         expected.sizes_string(), " but the ", what, " tensor has Sizes ", other.sizes_string(),
         "; they must be equal");
  }
}

}  // namespace detail

namespace detail {

// Folds one mismatch into result.max_abs_diff and result.max_ulp_diff.
template <class T>
void note_difference(const T& expected, const T& actual, CompareResult& result) {
  double abs_diff = 0;
  std::uint64_t ulps = 0;
  if constexpr (is_float_element<T>) {
    if (element_is_nan(expected) || element_is_nan(actual)) return;
    const auto e = static_cast<double>(expected);
    const auto a = static_cast<double>(actual);
    abs_diff = a > e ? a - e : e - a;
    ulps = ulp_distance(expected, actual);
  } else {
    // Two's complement: the difference of the values widened to 64 bits, taken in the right order,
    // is exact as an unsigned number.
    using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    const auto e = static_cast<Wide>(expected);
    const auto a = static_cast<Wide>(actual);
    ulps = a > e ? static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(e)
                 : static_cast<std::uint64_t>(e) - static_cast<std::uint64_t>(a);
    abs_diff = static_cast<double>(ulps);
  }
  if (!result.max_abs_diff || abs_diff > *result.max_abs_diff) result.max_abs_diff = abs_diff;
  if (!result.max_ulp_diff || ulps > *result.max_ulp_diff) result.max_ulp_diff = ulps;
}

template <class T>
CompareResult compare_views(const TensorView<const T>& expected, const TensorView<const T>& actual,
                            const TensorView<const T>* untouched, const CompareOptions& options) {
  const std::string& name = options.name;
  check_view("compare", name + " (expected)", expected, false);
  check_view("compare", name + " (actual)", actual, false);
  check_same_shape("actual", expected.layout(), actual.layout(), name);
  if (untouched != nullptr) {
    check_view("compare", name + " (untouched)", *untouched, false);
    check_same_shape("untouched", expected.layout(), untouched->layout(), name);
  }

  CompareResult result;
  result.name = name;
  result.data_type = data_type_of<T>;
  result.shape = expected.layout();
  result.element_count = expected.element_count();
  result.options = options;
  result.tolerance_ignored = options.ulp_tolerance.has_value() && !is_float_element<T>;

  bool expected_all_zero = true;
  bool actual_all_zero = true;
  bool actual_equals_untouched = untouched != nullptr;
  bool expected_equals_untouched = untouched != nullptr;
  for_each_coordinate(expected.layout(), [&](const Coord& c) {
    const T& e = expected[c];
    const T& a = actual[c];
    const std::uint64_t eb = element_bits(e);
    const std::uint64_t ab = element_bits(a);
    expected_all_zero = expected_all_zero && eb == 0;
    actual_all_zero = actual_all_zero && ab == 0;
    if (untouched != nullptr) {
      const std::uint64_t ub = element_bits((*untouched)[c]);
      actual_equals_untouched = actual_equals_untouched && ab == ub;
      expected_equals_untouched = expected_equals_untouched && eb == ub;
    }
    if (elements_match(e, a, options)) return;
    ++result.mismatch_count;
    note_difference(e, a, result);
    if (result.mismatches.size() >= options.max_report) return;
    Mismatch m;
    m.rank = expected.rank();
    m.coordinate = c;
    m.expected = format_element(e);
    m.actual = format_element(a);
    m.expected_bits = eb;
    m.actual_bits = ab;
    if constexpr (is_float_element<T>) {
      if (options.ulp_tolerance && !element_is_nan(e) && !element_is_nan(a)) {
        m.ulp_distance = ulp_distance(e, a);
      }
    }
    result.mismatches.push_back(std::move(m));
  });
  result.actual_all_zero = actual_all_zero && !expected_all_zero;
  result.actual_untouched = actual_equals_untouched && !expected_equals_untouched;
  result.untouched_equals_expected = expected_equals_untouched;
  return result;
}

}  // namespace detail

// Compares `actual` with `expected` element by element: same sizes and element type, strides may
// differ. Throws ErrorCode::ShapeMismatch when the sizes differ.
template <class E, class A>
  requires std::is_same_v<std::remove_const_t<E>, std::remove_const_t<A>>
CompareResult compare(const TensorView<E>& expected, const TensorView<A>& actual,
                      const CompareOptions& options = {}) {
  using T = std::remove_const_t<E>;
  return detail::compare_views<T>(expected, actual, nullptr, options);
}

// Same, given the output buffer's contents from before the dispatch (`untouched`, viewed with the
// output's layout), so a skipped dispatch is named in the report.
template <class E, class A, class U>
  requires std::is_same_v<std::remove_const_t<E>, std::remove_const_t<A>> &&
           std::is_same_v<std::remove_const_t<E>, std::remove_const_t<U>>
CompareResult compare(const TensorView<E>& expected, const TensorView<A>& actual,
                      const TensorView<U>& untouched, const CompareOptions& options = {}) {
  using T = std::remove_const_t<E>;
  const TensorView<const T> u = untouched;
  return detail::compare_views<T>(expected, actual, &u, options);
}

// The runtime layer: one description (the one given to DirectML for the output) and the golden
// and read-back buffers, plus optionally the buffer's contents from before the dispatch. The
// description is checked like an input (T1-T11), each buffer against it (T9, T10). A template
// only so that its eleven compare_views (one per data type: comparing reads values) compile in the
// translation unit that calls it, not in every one that includes dmlref.hpp.
template <class Deferred = void>
CompareResult compare(const BufferTensorDesc& desc, ConstBuffer expected, ConstBuffer actual,
                      const CompareOptions& options = {},
                      std::optional<ConstBuffer> untouched = std::nullopt) {
  const std::string& name = options.name;
  const BoundTensor e =
      bind_tensor("compare", name + " (expected)", &desc, expected.data, expected.size_in_bytes, false);
  const BoundTensor a =
      bind_tensor("compare", name + " (actual)", &desc, actual.data, actual.size_in_bytes, false);
  std::optional<BoundTensor> u;
  if (untouched) {
    u = bind_tensor("compare", name + " (untouched)", &desc, untouched->data,
                    untouched->size_in_bytes, false);
  }
  return visit(desc.DataType, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const TensorView<const T> uv = u ? view_of<const T>(*u) : TensorView<const T>();
    return detail::compare_views<T>(view_of<const T>(e), view_of<const T>(a), u ? &uv : nullptr,
                                    options);
  });
}

// Compiled once per program with DMLREF_EXTERN_RUNTIME (runtime_instances.hpp).
DMLREF_RUNTIME_INSTANCE(CompareResult compare<void>(const BufferTensorDesc&, ConstBuffer,
    ConstBuffer, const CompareOptions&, std::optional<ConstBuffer>));

}  // namespace dmlref
