// Layout, TensorView and for_each_coordinate: element offsets (T5, T6), broadcast (T7), padding,
// permuted and negative strides, and the row-major iteration every reference loop is built on.
#define DMLREF_TEST_NO_OPERATORS  // no operator header: see test_support.hpp
#include "test_support.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace test_layout {  // this file's own names (tests/CMakeLists.txt: unity groups)

using dmlref::Coord;
using dmlref::ErrorCode;
using dmlref::Layout;
using dmlref::TensorView;

namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

// Sizes for rank r are the first r of these: size-1 dimensions appear from rank 3 on, and no two
// neighbours are equal, so a swapped pair of dimensions shows.
constexpr std::array<std::uint32_t, 8> kShape = {3, 2, 1, 4, 2, 1, 3, 2};

std::vector<std::uint32_t> shape_of_rank(std::uint32_t rank) {
  return {kShape.begin(), kShape.begin() + rank};
}

// Every coordinate of `sizes` in row-major order, by a plain odometer written here so that the
// view is not checked against the iteration core it is used with.
std::vector<std::vector<std::uint32_t>> all_coordinates(const std::vector<std::uint32_t>& sizes) {
  std::vector<std::vector<std::uint32_t>> out;
  std::vector<std::uint32_t> c(sizes.size(), 0);
  for (;;) {
    out.push_back(c);
    std::size_t d = sizes.size();
    for (;;) {
      if (d == 0) return out;
      --d;
      if (++c[d] < sizes[d]) break;
      c[d] = 0;
    }
  }
}

std::int64_t dot(const std::vector<std::uint32_t>& c, const std::vector<std::int64_t>& strides) {
  std::int64_t off = 0;
  for (std::size_t d = 0; d < c.size(); ++d) off += static_cast<std::int64_t>(c[d]) * strides[d];
  return off;
}

Coord to_coord(const std::vector<std::uint32_t>& c) {
  Coord out{};
  for (std::size_t d = 0; d < c.size(); ++d) out[d] = c[d];
  return out;
}

// TensorView::at takes a braced list, so spell one out per rank.
template <class T>
T& at_runtime_rank(const TensorView<T>& v, const std::vector<std::uint32_t>& c) {
  switch (c.size()) {
    case 1: return v.at({c[0]});
    case 2: return v.at({c[0], c[1]});
    case 3: return v.at({c[0], c[1], c[2]});
    case 4: return v.at({c[0], c[1], c[2], c[3]});
    case 5: return v.at({c[0], c[1], c[2], c[3], c[4]});
    case 6: return v.at({c[0], c[1], c[2], c[3], c[4], c[5]});
    case 7: return v.at({c[0], c[1], c[2], c[3], c[4], c[5], c[6]});
    case 8: return v.at({c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]});
    default: FAIL("rank out of range"); return *v.data();
  }
}

struct StrideKind {
  const char* name;
  std::vector<std::int64_t> (*make)(const std::vector<std::uint32_t>& sizes);
};

std::vector<std::int64_t> packed_strides(const std::vector<std::uint32_t>& sizes) {
  std::vector<std::int64_t> s(sizes.size());
  std::int64_t next = 1;
  for (std::size_t d = sizes.size(); d-- > 0;) {
    s[d] = next;
    next *= sizes[d];
  }
  return s;
}

// Dimension 0 fastest: the packed layout of the reversed shape, read in the original order.
std::vector<std::int64_t> transposed_strides(const std::vector<std::uint32_t>& sizes) {
  std::vector<std::int64_t> s(sizes.size());
  std::int64_t next = 1;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    s[d] = next;
    next *= sizes[d];
  }
  return s;
}

// Gaps between elements and between rows, as a padded allocation leaves.
std::vector<std::int64_t> padded_strides(const std::vector<std::uint32_t>& sizes) {
  std::vector<std::int64_t> s(sizes.size());
  std::int64_t next = 2;
  for (std::size_t d = sizes.size(); d-- > 0;) {
    s[d] = next;
    next = next * sizes[d] + 3;
  }
  return s;
}

// Every other dimension broadcast (T7).
std::vector<std::int64_t> broadcast_strides(const std::vector<std::uint32_t>& sizes) {
  std::vector<std::int64_t> s = packed_strides(sizes);
  for (std::size_t d = 0; d < s.size(); d += 2) s[d] = 0;
  return s;
}

// Typed layer only: every odd dimension runs backwards.
std::vector<std::int64_t> reversed_strides(const std::vector<std::uint32_t>& sizes) {
  std::vector<std::int64_t> s = padded_strides(sizes);
  for (std::size_t d = 1; d < s.size(); d += 2) s[d] = -s[d];
  return s;
}

const StrideKind kStrideKinds[] = {
    {"packed", packed_strides},   {"transposed", transposed_strides},
    {"padded", padded_strides},   {"broadcast", broadcast_strides},
    {"reversed", reversed_strides},
};

}  // namespace

TEST_CASE("Layout::packed: row-major strides, unused entries zero") {
  const Layout l = Layout::packed({2, 3, 4});
  CHECK(l.rank == 3);
  CHECK(l.sizes == std::array<std::uint32_t, 8>{2, 3, 4, 0, 0, 0, 0, 0});
  CHECK(l.strides == std::array<std::int64_t, 8>{12, 4, 1, 0, 0, 0, 0, 0});
  CHECK(l.is_packed());
  CHECK(l.sizes_string() == "{2,3,4}");
  CHECK(l.strides_string() == "{12,4,1}");

  CHECK(Layout::packed({5}).strides[0] == 1);
  CHECK(Layout::packed({1, 1, 2, 3}).stride_span().size() == 4);
  CHECK(Layout::packed({1, 1, 2, 3}).strides_string() == "{6,6,3,1}");
  const Layout rank8 = Layout::packed({2, 2, 2, 2, 2, 2, 2, 3});
  CHECK(rank8.strides == std::array<std::int64_t, 8>{192, 96, 48, 24, 12, 6, 3, 1});

  for (std::uint32_t rank = 1; rank <= 8; ++rank) {
    CAPTURE(rank);
    const auto sizes = shape_of_rank(rank);
    const Layout p = Layout::packed(std::span<const std::uint32_t>(sizes));
    const auto expected = packed_strides(sizes);
    CHECK(std::vector<std::int64_t>(p.stride_span().begin(), p.stride_span().end()) == expected);
    CHECK(p == Layout::strided(sizes, expected));
    CHECK(p.is_packed());
  }
  CHECK_FALSE(Layout::strided({2, 3}, {1, 2}).is_packed());
  CHECK_FALSE(Layout::strided({2, 3}, {4, 1}).is_packed());
  // A size-1 dimension's stride is never used, but is_packed compares it all the same.
  CHECK_FALSE(Layout::strided({1, 3}, {7, 1}).is_packed());
}

TEST_CASE("Layout::packed saturates strides of an oversized tensor instead of wrapping") {
  // (2^32-1)^2 does not fit in int64; validation rejects the tensor (T4) before strides are used,
  // but a wrapped stride would look legal in the meantime.
  const Layout l = Layout::packed({0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu});
  CHECK(l.strides[2] == 1);
  CHECK(l.strides[1] == 0xFFFFFFFFll);
  CHECK(l.strides[0] == kInt64Max);
  CHECK_FALSE(l.checked_element_count().has_value());
  CHECK(l.element_count() == 0);
}

TEST_CASE("Layout: a ninth dimension or mismatched stride count is an error (T2)") {
  DMLREF_CHECK_ERROR(Layout::packed({1, 1, 1, 1, 1, 1, 1, 1, 1}), ErrorCode::T2,
                     "DimensionCount is 9 but at most 8 dimensions are supported");
  DMLREF_CHECK_ERROR(Layout::strided({1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1}),
                     ErrorCode::T2, "DimensionCount is 9");
  DMLREF_CHECK_ERROR(Layout::strided({2, 3}, {3}), ErrorCode::T2, "2 sizes but 1 strides");
}

TEST_CASE("Layout: element count with overflow detection (T4)") {
  CHECK(Layout::packed({1, 1, 2, 3}).checked_element_count() == 6u);
  CHECK(Layout::packed({65535, 65537}).checked_element_count() == 0xFFFFFFFFull);
  CHECK(Layout::packed({65536, 65536}).checked_element_count() == 0x100000000ull);
  // 2^64 exactly: a wrapping product would report 0 elements.
  CHECK_FALSE(Layout::packed({65536, 65536, 65536, 65536}).checked_element_count().has_value());
  CHECK_FALSE(Layout::packed({0xFFFFFFFFu, 0xFFFFFFFFu, 3}).checked_element_count().has_value());
}

TEST_CASE("Layout::offset_range: smallest and largest offsets, negative strides included") {
  const auto check = [](const Layout& l, std::int64_t lo, std::int64_t hi) {
    CAPTURE(l.sizes_string());
    CAPTURE(l.strides_string());
    const auto r = l.offset_range();
    REQUIRE(r.has_value());
    CHECK(r->min == lo);
    CHECK(r->max == hi);
  };
  check(Layout::packed({1, 1, 2, 3}), 0, 5);
  check(Layout::strided({2, 3}, {0, 1}), 0, 2);
  check(Layout::strided({2, 3}, {0, 0}), 0, 0);
  check(Layout::strided({2, 3}, {5, 1}), 0, 7);
  check(Layout::strided({6}, {-1}), -5, 0);
  check(Layout::strided({3, 4}, {-4, 1}), -8, 3);
  check(Layout::strided({3, 4}, {4, -1}), -3, 8);
  check(Layout::strided({3, 4, 2}, {-8, -2, -1}), -23, 0);
  check(Layout::strided({1, 5}, {-1000, 2}), 0, 8);  // a size-1 dimension reaches nothing
  check(Layout::strided({2}, {kInt64Max}), 0, kInt64Max);
  check(Layout::strided({2}, {kInt64Min}), kInt64Min, 0);

  // Out of 64 bits, either way: nullopt, never a wrapped range.
  CHECK_FALSE(Layout::strided({3}, {kInt64Max}).offset_range().has_value());
  CHECK_FALSE(Layout::strided({3}, {kInt64Min}).offset_range().has_value());
  CHECK_FALSE(Layout::strided({2, 2}, {kInt64Max, 1}).offset_range().has_value());
  CHECK_FALSE(Layout::strided({2, 2}, {kInt64Min, -1}).offset_range().has_value());
  CHECK(Layout::strided({2, 2}, {kInt64Max, -1}).offset_range().has_value());
  CHECK_FALSE(Layout::strided({0xFFFFFFFFu}, {std::int64_t{1} << 32}).offset_range().has_value());
  CHECK_FALSE(Layout::strided({2, 0}, {1, 1}).offset_range().has_value());  // T3 territory
}

TEST_CASE("Layout::offset is sum c[i] * Strides[i] (T6)") {
  const Layout l = Layout::strided({2, 3, 4}, {100, -10, 1});
  CHECK(l.offset(Coord{}) == 0);
  CHECK(l.offset(Coord{1, 2, 3}) == 100 - 20 + 3);
  CHECK(l.offset(Coord{0, 1, 0}) == -10);
  // Entries past the rank are ignored.
  CHECK(l.offset(Coord{1, 0, 0, 7, 7, 7, 7, 7}) == 100);
}

TEST_CASE("for_each_coordinate: row-major order, last dimension fastest") {
  std::vector<Coord> seen;
  dmlref::for_each_coordinate(Layout::packed({2, 3}), [&](const Coord& c) { seen.push_back(c); });
  const std::vector<Coord> expected = {
      {0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2},
  };
  CHECK(seen == expected);

  // The rank/sizes overload, with size-1 dimensions in between.
  seen.clear();
  const std::array<std::uint32_t, 8> sizes = {2, 1, 2, 1};
  dmlref::for_each_coordinate(4, sizes, [&](const Coord& c) { seen.push_back(c); });
  const std::vector<Coord> expected4 = {{0, 0, 0, 0}, {0, 0, 1, 0}, {1, 0, 0, 0}, {1, 0, 1, 0}};
  CHECK(seen == expected4);

  // Strides play no part: only the sizes are iterated.
  seen.clear();
  dmlref::for_each_coordinate(Layout::strided({2, 3}, {0, -7}),
                              [&](const Coord& c) { seen.push_back(c); });
  CHECK(seen == expected);
}

TEST_CASE("for_each_coordinate visits every coordinate exactly once, ranks 1-8") {
  for (std::uint32_t rank = 1; rank <= 8; ++rank) {
    CAPTURE(rank);
    // Sizes cycle through 1-3, so the odometer carries across several digits and size-1 ones.
    std::vector<std::uint32_t> sizes(rank);
    for (std::uint32_t d = 0; d < rank; ++d) sizes[d] = 1 + (d + rank) % 3;
    const Layout l = Layout::packed(std::span<const std::uint32_t>(sizes));
    const auto expected = all_coordinates(sizes);
    std::uint64_t count = 0;
    bool in_order = true;
    dmlref::for_each_coordinate(l, [&](const Coord& c) {
      if (count < expected.size() && c != to_coord(expected[count])) in_order = false;
      ++count;
    });
    CHECK(count == l.element_count());
    CHECK(count == expected.size());
    CHECK(in_order);
  }
}

TEST_CASE("for_each_coordinate does nothing when a size is 0") {
  int calls = 0;
  dmlref::for_each_coordinate(Layout::packed({3, 0, 2}), [&](const Coord&) { ++calls; });
  dmlref::for_each_coordinate(Layout::packed({0}), [&](const Coord&) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE_TEMPLATE("TensorView: view[c] and view.at read buffer[sum c[i] * Strides[i]], ranks 1-8",
                   T, DMLREF_ALL_TYPES) {
  for (const StrideKind& kind : kStrideKinds) {
    for (std::uint32_t rank = 1; rank <= 8; ++rank) {
      CAPTURE(kind.name);
      CAPTURE(rank);
      const auto sizes = shape_of_rank(rank);
      const auto strides = kind.make(sizes);
      const auto coords = all_coordinates(sizes);
      std::int64_t lo = 0;
      std::int64_t hi = 0;
      for (const auto& c : coords) {
        lo = std::min(lo, dot(c, strides));
        hi = std::max(hi, dot(c, strides));
      }
      auto buffer = dmlref::test::distinct_buffer<T>(static_cast<std::size_t>(hi - lo + 1));
      const Layout layout = Layout::strided(sizes, strides);
      const auto range = layout.offset_range();
      REQUIRE(range.has_value());
      CHECK(range->min == lo);
      CHECK(range->max == hi);

      // The base pointer addresses coordinate 0, which is not the buffer's first element when a
      // stride is negative.
      T* base = buffer.data() - lo;
      const TensorView<T> view(base, layout);
      const TensorView<const T> cview = view;
      REQUIRE(view.rank() == rank);
      for (std::uint32_t d = 0; d < rank; ++d) {
        CHECK(view.size(d) == sizes[d]);
        CHECK(view.stride(d) == strides[d]);
      }
      CHECK(view.element_count() == coords.size());
      bool all_match = true;
      for (const auto& c : coords) {
        const T& expected = buffer[static_cast<std::size_t>(dot(c, strides) - lo)];
        all_match = all_match && layout.offset(to_coord(c)) == dot(c, strides) &&
                    dmlref::test::same_bits(view[to_coord(c)], expected) &&
                    &view[to_coord(c)] == &expected && &cview[to_coord(c)] == &expected &&
                    &at_runtime_rank(view, c) == &expected &&
                    &at_runtime_rank(cview, c) == &expected;
      }
      CHECK(all_match);
    }
  }
}

TEST_CASE("TensorView: writes land at the element the layout names") {
  std::vector<std::int32_t> buffer(12, -1);
  // A 2x3 transposed view over a 3x4 padded allocation.
  const TensorView<std::int32_t> v(buffer.data(), Layout::strided({2, 3}, {1, 4}));
  std::int32_t next = 0;
  dmlref::for_each_coordinate(v.layout(), [&](const Coord& c) { v[c] = next++; });
  CHECK(buffer == std::vector<std::int32_t>{0, 3, -1, -1, 1, 4, -1, -1, 2, 5, -1, -1});
  v.at({1, 2}) = 99;
  CHECK(buffer[9] == 99);
}

TEST_CASE("TensorView: negative strides read a reversed view (typed layer only)") {
  const std::vector<float> data = {0, 1, 2, 3, 4, 5};
  const TensorView<const float> reversed(data.data() + 5, Layout::strided({6}, {-1}));
  for (std::uint32_t i = 0; i < 6; ++i) CHECK(reversed.at({i}) == static_cast<float>(5 - i));

  // Rows reversed, columns kept: [[3,4,5],[0,1,2]].
  const TensorView<const float> flipped(data.data() + 3, Layout::strided({2, 3}, {-3, 1}));
  std::vector<float> seen;
  dmlref::for_each_coordinate(flipped.layout(), [&](const Coord& c) { seen.push_back(flipped[c]); });
  CHECK(seen == std::vector<float>{3, 4, 5, 0, 1, 2});

  // Both reversed, rotating the matrix by 180 degrees.
  const TensorView<const float> rotated(data.data() + 5, Layout::strided({2, 3}, {-3, -1}));
  seen.clear();
  dmlref::for_each_coordinate(rotated.layout(), [&](const Coord& c) { seen.push_back(rotated[c]); });
  CHECK(seen == std::vector<float>{5, 4, 3, 2, 1, 0});
  const auto r = rotated.layout().offset_range();
  REQUIRE(r.has_value());
  CHECK(r->min == -5);
  CHECK(r->max == 0);
}

TEST_CASE("TensorView: construction, packed sizes, const conversion") {
  std::uint16_t data[24] = {};
  const TensorView<std::uint16_t> v(data, {2, 3, 4});
  CHECK(v.data() == data);
  CHECK(v.layout() == Layout::packed({2, 3, 4}));
  CHECK(v.element_count() == 24);
  static_assert(TensorView<std::uint16_t>::data_type() == dmlref::DataType::UInt16);
  static_assert(std::is_same_v<TensorView<const std::uint16_t>::value_type, std::uint16_t>);

  const TensorView<const std::uint16_t> c = v;
  CHECK(c.data() == data);
  CHECK(c.layout() == v.layout());
  static_assert(std::is_convertible_v<TensorView<float>, TensorView<const float>>);
  static_assert(!std::is_convertible_v<TensorView<const float>, TensorView<float>>);
  static_assert(!std::is_convertible_v<TensorView<float>, TensorView<const double>>);

  const TensorView deduced(data, Layout::packed({24}));  // CTAD from pointer and layout
  static_assert(std::is_same_v<decltype(deduced), const TensorView<std::uint16_t>>);

  const TensorView<float> empty;
  CHECK(empty.data() == nullptr);
  CHECK(empty.rank() == 0);
}

}  // namespace test_layout
