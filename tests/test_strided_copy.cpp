// strided_copy.hpp: the plan reduces shapes as intended and visits offsets in row-major order, and
// strided_copy equals the plain coordinate loop (reference_copy) byte for byte, on seeded random
// layouts over all eleven types, ranks 1-8, including every byte the copy must leave alone.
#define DMLREF_TEST_NO_OPERATORS  // no operator header: see test_support.hpp
#include "test_support.hpp"

#include <dmlref/strided_copy.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace test_strided_copy {  // this file's own names (tests/CMakeLists.txt: unity groups)

using dmlref::Coord;
using dmlref::ErrorCode;
using dmlref::kMaxRank;
using dmlref::Layout;
using dmlref::TensorView;
using dmlref::detail::CopyPlan;
using dmlref::detail::make_copy_plan;
using dmlref::test::distinct_value;
using dmlref::test::same_bits;

namespace {

using Strides = std::array<std::int64_t, kMaxRank>;

CopyPlan plan_of(std::initializer_list<std::uint32_t> sizes,
                 std::initializer_list<std::initializer_list<std::int64_t>> strides) {
  std::vector<Strides> s;
  for (const auto& operand : strides) {
    Strides a{};
    std::copy(operand.begin(), operand.end(), a.begin());
    s.push_back(a);
  }
  return make_copy_plan(std::span<const std::uint32_t>(sizes.begin(), sizes.size()), s);
}

std::vector<std::uint64_t> plan_sizes(const CopyPlan& p) {
  return {p.sizes.begin(), p.sizes.begin() + p.rank};
}
std::vector<std::int64_t> plan_strides(const CopyPlan& p, std::size_t operand) {
  return {p.strides[operand].begin(), p.strides[operand].begin() + p.rank};
}

// Every element offset the plan visits for one operand, in visiting order.
template <std::size_t N>
std::vector<std::int64_t> planned_offsets(const CopyPlan& plan, std::size_t operand) {
  std::vector<std::int64_t> out;
  dmlref::detail::for_each_run<N>(plan, [&](const std::array<std::int64_t, N>& o) {
    for (std::uint64_t i = 0; i < plan.inner_size(); ++i) {
      out.push_back(o[operand] + static_cast<std::int64_t>(i) * plan.inner_stride(operand));
    }
  });
  return out;
}

std::vector<std::int64_t> coordinate_offsets(const Layout& layout) {
  std::vector<std::int64_t> out;
  dmlref::for_each_coordinate(layout, [&](const Coord& c) { out.push_back(layout.offset(c)); });
  return out;
}

// --- random layouts ------------------------------------------------------------------------------

struct Shape {
  std::vector<std::uint32_t> sizes;
};

// Sizes for a rank: mostly 1-3 with some size-1 dimensions, sometimes one long dimension so
// contiguous runs exceed the memcpy threshold even for one-byte types; at most ~6000 elements.
Shape random_shape(std::mt19937& rng, std::uint32_t rank) {
  std::uniform_int_distribution<std::uint32_t> small(1, 3);
  std::uniform_int_distribution<std::uint32_t> pick(0, 9);
  Shape s;
  for (std::uint32_t d = 0; d < rank; ++d) s.sizes.push_back(small(rng));
  if (pick(rng) < 4) {
    std::uniform_int_distribution<std::uint32_t> dim(0, rank - 1);
    std::uniform_int_distribution<std::uint32_t> big(8, 300);
    s.sizes[dim(rng)] = big(rng);
  }
  for (;;) {
    std::uint64_t n = 1;
    for (auto v : s.sizes) n *= v;
    if (n <= 6000) break;
    auto it = std::max_element(s.sizes.begin(), s.sizes.end());
    *it = std::max<std::uint32_t>(1, *it / 2);
  }
  return s;
}

struct LayoutKind {
  bool transpose = false;  // strides of a packed layout of permuted dimensions
  bool pad = false;        // strides larger than packed (padding between rows, between elements)
  bool broadcast = false;  // some strides 0 (sources only)
  bool negate = false;     // some strides negative (typed layer)
};

LayoutKind random_kind(std::mt19937& rng, bool is_source) {
  std::uniform_int_distribution<int> coin(0, 2);  // each feature one time in three
  LayoutKind k;
  k.transpose = coin(rng) == 0;
  k.pad = coin(rng) == 0;
  k.broadcast = is_source && coin(rng) == 0;
  k.negate = coin(rng) == 0;
  return k;
}

Layout random_layout(std::mt19937& rng, const Shape& shape, const LayoutKind& kind) {
  const auto rank = static_cast<std::uint32_t>(shape.sizes.size());
  std::vector<std::uint32_t> order(rank);  // order[0] is the outermost in memory
  std::iota(order.begin(), order.end(), 0u);
  if (kind.transpose) std::shuffle(order.begin(), order.end(), rng);
  std::uniform_int_distribution<int> pad(0, 3);
  std::uniform_int_distribution<int> coin(0, 2);
  std::vector<std::int64_t> strides(rank);
  // Innermost first: each stride steps past everything inside it, so the layout stays injective
  // (T12) before broadcast is applied.
  std::int64_t next = kind.pad && coin(rng) == 0 ? 2 : 1;
  for (std::uint32_t i = rank; i-- > 0;) {
    const std::uint32_t d = order[i];
    strides[d] = next;
    next = next * shape.sizes[d] + (kind.pad ? pad(rng) : 0);
  }
  for (std::uint32_t d = 0; d < rank; ++d) {
    if (kind.broadcast && coin(rng) == 0) strides[d] = 0;
    if (kind.negate && coin(rng) == 0) strides[d] = -strides[d];
  }
  return Layout::strided(shape.sizes, strides);
}

// A buffer that holds every element a layout addresses plus a guard on both sides; `base` is the
// pointer a view of that layout starts at (past the elements negative strides reach).
template <class T>
struct Backing {
  static constexpr std::size_t kGuard = 16;
  std::vector<T> buffer;
  std::int64_t base = 0;

  explicit Backing(const Layout& layout) {
    const auto r = layout.offset_range().value();
    buffer.resize(static_cast<std::size_t>(r.max - r.min + 1) + 2 * kGuard);
    base = static_cast<std::int64_t>(kGuard) - r.min;
  }
  T* origin() { return buffer.data() + base; }
};

// A byte pattern no distinct_value produces in every byte, so untouched elements stand out.
template <class T>
void fill_sentinel(std::vector<T>& v) {
  std::memset(static_cast<void*>(v.data()), 0xA5, v.size() * sizeof(T));
}

template <class T>
void fill_distinct(std::vector<T>& v, std::uint64_t offset) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = distinct_value<T>(i + offset);
}

std::string describe_case(const Layout& src, const Layout& dst, const CopyPlan& plan) {
  std::string s = "Sizes " + src.sizes_string() + " src Strides " + src.strides_string() +
                  " dst Strides " + dst.strides_string() + " -> plan sizes {";
  for (std::uint32_t d = 0; d < plan.rank; ++d) {
    if (d != 0) s += ',';
    s += std::to_string(plan.sizes[d]);
  }
  return s + "} inner strides " + std::to_string(plan.inner_stride(0)) + "/" +
         std::to_string(plan.inner_stride(1));
}

// Which branch of copy_with_plan a plan takes, to prove the random cases reach all of them.
enum class RunKind { Memcpy, ShortContiguous, Broadcast, Reversed, Strided, Count };

template <class T>
RunKind run_kind(const CopyPlan& p) {
  const auto ss = p.inner_stride(0), ds = p.inner_stride(1);
  if (ss == 1 && ds == 1) {
    return p.inner_size() * sizeof(T) >= dmlref::detail::kMemcpyMinRunBytes
               ? RunKind::Memcpy
               : RunKind::ShortContiguous;
  }
  if (ss == 0) return RunKind::Broadcast;
  if (ss == -1 && ds == 1) return RunKind::Reversed;
  return RunKind::Strided;
}

// Runs strided_copy and reference_copy on identical sentinel-filled destinations and requires the
// whole buffers, guards and padding included, to be identical. Returns the plan's run kind.
template <class T>
RunKind check_against_reference(const Layout& src_layout, const Layout& dst_layout,
                                std::uint64_t fill_offset) {
  Backing<T> src(src_layout);
  fill_distinct(src.buffer, fill_offset);
  Backing<T> fast(dst_layout);
  Backing<T> golden(dst_layout);
  fill_sentinel(fast.buffer);
  fill_sentinel(golden.buffer);

  const TensorView<const T> src_view(src.origin(), src_layout);
  dmlref::strided_copy(src_view, TensorView<T>(fast.origin(), dst_layout));
  dmlref::reference_copy(src_view, TensorView<T>(golden.origin(), dst_layout));

  const std::array<std::array<std::int64_t, kMaxRank>, 2> strides{src_layout.strides,
                                                                 dst_layout.strides};
  const CopyPlan plan = make_copy_plan(dst_layout.size_span(), strides);
  const auto* a = reinterpret_cast<const unsigned char*>(fast.buffer.data());
  const auto* b = reinterpret_cast<const unsigned char*>(golden.buffer.data());
  const std::size_t bytes = fast.buffer.size() * sizeof(T);
  const auto mismatch = std::mismatch(a, a + bytes, b);
  INFO(describe_case(src_layout, dst_layout, plan));
  CHECK_MESSAGE(mismatch.first == a + bytes, "first differing byte ",
                mismatch.first - a, " of ", bytes);
  return run_kind<T>(plan);
}

}  // namespace

// --- the plan ------------------------------------------------------------------------------------

TEST_CASE("make_copy_plan: packed operands merge into one run") {
  const CopyPlan p = plan_of({2, 3, 4}, {{12, 4, 1}, {12, 4, 1}});
  CHECK(p.rank == 1);
  CHECK(plan_sizes(p) == std::vector<std::uint64_t>{24});
  CHECK(plan_strides(p, 0) == std::vector<std::int64_t>{1});
  CHECK(plan_strides(p, 1) == std::vector<std::int64_t>{1});
  CHECK(p.run_count() == 1);
}

TEST_CASE("make_copy_plan: size-1 dimensions are dropped whatever their stride") {
  // The size-1 dimension's stride (99) would block the merge if it were kept.
  const CopyPlan p = plan_of({2, 1, 3}, {{3, 99, 1}, {3, 7, 1}});
  CHECK(plan_sizes(p) == std::vector<std::uint64_t>{6});
  CHECK(plan_strides(p, 0) == std::vector<std::int64_t>{1});

  const CopyPlan one = plan_of({1, 1, 1}, {{5, 6, 7}, {1, 1, 1}});
  CHECK(one.rank == 1);
  CHECK(plan_sizes(one) == std::vector<std::uint64_t>{1});
  CHECK(plan_strides(one, 0) == std::vector<std::int64_t>{1});

  const CopyPlan scalar = make_copy_plan({}, std::vector<Strides>(2));
  CHECK(scalar.rank == 1);
  CHECK(scalar.inner_size() == 1);
}

TEST_CASE("make_copy_plan: a transpose does not merge") {
  // Source column-major, destination row-major: no adjacent pair is contiguous in both.
  const CopyPlan p = plan_of({3, 4}, {{1, 3}, {4, 1}});
  CHECK(plan_sizes(p) == std::vector<std::uint64_t>{3, 4});
  CHECK(plan_strides(p, 0) == std::vector<std::int64_t>{1, 3});
  CHECK(plan_strides(p, 1) == std::vector<std::int64_t>{4, 1});
  CHECK(p.run_count() == 3);
}

TEST_CASE("make_copy_plan: only the dimensions contiguous in every operand merge") {
  // Padded source rows (stride 6 for rows of 4) keep rows and columns apart.
  const CopyPlan padded = plan_of({3, 4}, {{6, 1}, {4, 1}});
  CHECK(plan_sizes(padded) == std::vector<std::uint64_t>{3, 4});

  // {2,3,4,5}: dims 0-1 contiguous in both, 1-2 not (source pads), 2-3 contiguous in both.
  const CopyPlan p = plan_of({2, 3, 4, 5}, {{3 * 25, 25, 5, 1}, {60, 20, 5, 1}});
  CHECK(plan_sizes(p) == std::vector<std::uint64_t>{6, 20});
  CHECK(plan_strides(p, 0) == std::vector<std::int64_t>{25, 1});
  CHECK(plan_strides(p, 1) == std::vector<std::int64_t>{20, 1});

  // A third operand that is transposed keeps everything apart.
  const CopyPlan three = plan_of({2, 3}, {{3, 1}, {3, 1}, {1, 2}});
  CHECK(three.operand_count == 3);
  CHECK(plan_sizes(three) == std::vector<std::uint64_t>{2, 3});
}

TEST_CASE("make_copy_plan: broadcast and negative strides merge by the same rule") {
  const CopyPlan all_broadcast = plan_of({2, 3, 4}, {{0, 0, 0}, {12, 4, 1}});
  CHECK(plan_sizes(all_broadcast) == std::vector<std::uint64_t>{24});
  CHECK(plan_strides(all_broadcast, 0) == std::vector<std::int64_t>{0});

  // A row broadcast down the columns: rows repeat, so the two dimensions stay apart.
  const CopyPlan rows = plan_of({5, 4}, {{0, 1}, {4, 1}});
  CHECK(plan_sizes(rows) == std::vector<std::uint64_t>{5, 4});

  // Both operands fully reversed: one reversed run.
  const CopyPlan reversed = plan_of({2, 3}, {{-3, -1}, {-3, -1}});
  CHECK(plan_sizes(reversed) == std::vector<std::uint64_t>{6});
  CHECK(plan_strides(reversed, 0) == std::vector<std::int64_t>{-1});

  // Rows reversed but not their elements: not one run.
  const CopyPlan flip_rows = plan_of({2, 3}, {{-3, 1}, {3, 1}});
  CHECK(plan_sizes(flip_rows) == std::vector<std::uint64_t>{2, 3});
}

TEST_CASE("make_copy_plan: a zero size is an empty plan that visits nothing") {
  const CopyPlan p = plan_of({2, 0, 3}, {{3, 3, 1}, {3, 3, 1}});
  CHECK(p.empty());
  CHECK(p.run_count() == 0);
  int calls = 0;
  dmlref::detail::for_each_run<2>(p, [&](const std::array<std::int64_t, 2>&) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("make_copy_plan and for_each_run reject what they cannot plan") {
  const std::array<std::uint32_t, 9> nine{1, 1, 1, 1, 1, 1, 1, 1, 1};
  DMLREF_CHECK_ERROR(make_copy_plan(nine, std::vector<Strides>(2)), ErrorCode::T2,
                     "9 dimensions but at most 8");
  const std::array<std::uint32_t, 2> two{2, 3};
  DMLREF_CHECK_ERROR(make_copy_plan(two, std::vector<Strides>{}), ErrorCode::InvalidOption,
                     "0 operands but a plan takes 1 to 4");
  DMLREF_CHECK_ERROR(make_copy_plan(two, std::vector<Strides>(5)), ErrorCode::InvalidOption,
                     "5 operands");
  const CopyPlan p = plan_of({2, 3}, {{3, 1}, {3, 1}});
  DMLREF_CHECK_ERROR(
      dmlref::detail::for_each_run<3>(p, [](const std::array<std::int64_t, 3>&) {}),
      ErrorCode::InvalidOption, "the plan has 2 operands but 3 offsets were asked for");
}

TEST_CASE("for_each_run visits every operand's offsets in row-major coordinate order") {
  // Whatever merges, the concatenated runs must list exactly the offsets of the coordinate loop,
  // in its order: that is what lets order-sensitive operators (scatter) reuse the plan.
  std::mt19937 rng(20261121);
  std::uniform_int_distribution<std::uint32_t> rank_dist(1, kMaxRank);
  for (int iteration = 0; iteration < 400; ++iteration) {
    const Shape shape = random_shape(rng, rank_dist(rng));
    const Layout a = random_layout(rng, shape, random_kind(rng, true));
    const Layout b = random_layout(rng, shape, random_kind(rng, false));
    const Layout c = random_layout(rng, shape, random_kind(rng, true));
    const std::array<Strides, 3> strides{a.strides, b.strides, c.strides};
    const CopyPlan plan = make_copy_plan(a.size_span(), strides);
    INFO("Sizes ", a.sizes_string(), " strides ", a.strides_string(), " ", b.strides_string(),
         " ", c.strides_string());
    CHECK(plan.run_count() * plan.inner_size() == a.element_count());
    CHECK(planned_offsets<3>(plan, 0) == coordinate_offsets(a));
    CHECK(planned_offsets<3>(plan, 1) == coordinate_offsets(b));
    CHECK(planned_offsets<3>(plan, 2) == coordinate_offsets(c));
  }
}

// --- strided_copy against the plain loop ---------------------------------------------------------

TEST_CASE_TEMPLATE("strided_copy equals reference_copy on seeded random layouts, ranks 1-8", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(0x5eed + static_cast<unsigned>(sizeof(T)));
  std::array<int, static_cast<std::size_t>(RunKind::Count)> kinds{};
  for (std::uint32_t rank = 1; rank <= kMaxRank; ++rank) {
    for (int iteration = 0; iteration < 60; ++iteration) {
      const Shape shape = random_shape(rng, rank);
      const Layout src = random_layout(rng, shape, random_kind(rng, true));
      const Layout dst = random_layout(rng, shape, random_kind(rng, false));
      ++kinds[static_cast<std::size_t>(check_against_reference<T>(src, dst, rank * 7919))];
    }
  }
  // The random cases must reach every branch of copy_with_plan, or the test proves little.
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    INFO("run kind ", k);
    CHECK(kinds[k] >= 10);
  }
}

TEST_CASE_TEMPLATE("strided_copy: named layouts", T, DMLREF_ALL_TYPES) {
  SUBCASE("packed, every rank: one memcpy") {
    for (std::uint32_t rank = 1; rank <= kMaxRank; ++rank) {
      std::vector<std::uint32_t> sizes(rank, 2);
      sizes.back() = 130;  // past the memcpy threshold (128 bytes) for every element size
      const Layout l = Layout::packed(sizes);
      CHECK(check_against_reference<T>(l, l, rank) == RunKind::Memcpy);
    }
  }
  SUBCASE("2-D transpose") {
    const Layout src = Layout::strided({5, 7}, {1, 5});
    const Layout dst = Layout::packed({5, 7});
    CHECK(check_against_reference<T>(src, dst, 1) == RunKind::Strided);
  }
  SUBCASE("padded source rows and padded destination rows") {
    check_against_reference<T>(Layout::strided({4, 3}, {5, 1}), Layout::packed({4, 3}), 2);
    check_against_reference<T>(Layout::packed({4, 3}), Layout::strided({4, 3}, {8, 1}), 3);
    check_against_reference<T>(Layout::strided({3, 100}, {130, 1}),
                               Layout::strided({3, 100}, {101, 1}), 4);
  }
  SUBCASE("broadcast source") {
    CHECK(check_against_reference<T>(Layout::strided({3, 4}, {0, 0}), Layout::packed({3, 4}), 5) ==
          RunKind::Broadcast);
    CHECK(check_against_reference<T>(Layout::strided({3, 4}, {1, 0}), Layout::packed({3, 4}), 6) ==
          RunKind::Broadcast);
    CHECK(check_against_reference<T>(Layout::strided({3, 4}, {0, 1}), Layout::packed({3, 4}), 7) ==
          RunKind::ShortContiguous);
  }
  SUBCASE("reversed source, reversed destination, both reversed") {
    const Layout packed = Layout::packed({2, 9});
    const Layout reversed_rows = Layout::strided({2, 9}, {9, -1});
    const Layout reversed_all = Layout::strided({2, 9}, {-9, -1});
    CHECK(check_against_reference<T>(reversed_rows, packed, 8) == RunKind::Reversed);
    CHECK(check_against_reference<T>(packed, reversed_all, 9) == RunKind::Strided);
    check_against_reference<T>(reversed_all, reversed_all, 10);
  }
  SUBCASE("size-1 dimensions everywhere, a single element") {
    check_against_reference<T>(Layout::strided({1, 1, 1, 1, 1, 1, 1, 1}, {3, 0, -5, 7, 1, 1, 2, 9}),
                               Layout::packed({1, 1, 1, 1, 1, 1, 1, 1}), 11);
    check_against_reference<T>(Layout::strided({1, 4, 1, 3, 1}, {0, 3, 0, 1, 0}),
                               Layout::strided({1, 4, 1, 3, 1}, {99, 3, 5, 1, 2}), 12);
  }
}

TEST_CASE_TEMPLATE("strided_copy moves bits: NaN payloads, negative zero, subnormals", T,
                   DMLREF_ALL_TYPES) {
  // Bit patterns that a trip through a float register could alter (signalling NaNs) or that a
  // numeric comparison would miss (-0), written as the element's own bits.
  std::vector<std::uint64_t> patterns;
  if constexpr (sizeof(T) == 8) {
    patterns = {0x7FF0000000000001ull, 0xFFF4000000000123ull, 0x8000000000000000ull,
                0x0000000000000001ull, 0x7FF8000000000000ull};
  } else if constexpr (sizeof(T) == 4) {
    patterns = {0x7F800001u, 0xFFA00123u, 0x80000000u, 0x00000001u, 0x7FC00000u};
  } else if constexpr (sizeof(T) == 2) {
    patterns = {0x7C01u, 0xFD23u, 0x8000u, 0x0001u, 0x7E00u};
  } else {
    patterns = {0x80u, 0x7Fu, 0xFFu, 0x01u, 0x00u};
  }
  constexpr std::uint32_t kLength = 130;  // long enough for the memcpy path at every size
  std::vector<T> src(kLength);
  for (std::uint32_t i = 0; i < kLength; ++i) {
    const std::uint64_t bits = patterns[i % patterns.size()];
    // The low bytes of `bits` are the element's pattern on a little-endian target.
    std::memcpy(static_cast<void*>(&src[i]), &bits, sizeof(T));
  }
  struct Case {
    std::int64_t src_stride;
    std::uint32_t length;
  };
  // Contiguous long and short, reversed, strided, broadcast.
  for (const Case c : {Case{1, kLength}, Case{1, 3}, Case{-1, kLength}, Case{2, kLength / 2},
                       Case{0, kLength}}) {
    const T* origin = c.src_stride < 0 ? src.data() + (c.length - 1) : src.data();
    const TensorView<const T> in(origin, Layout::strided({c.length}, {c.src_stride}));
    std::vector<T> out(c.length);
    dmlref::strided_copy(in, TensorView<T>(out.data(), {c.length}));
    for (std::uint32_t i = 0; i < c.length; ++i) {
      INFO("stride ", c.src_stride, " element ", i);
      CHECK(same_bits(out[i], in.at({i})));
    }
  }
}

TEST_CASE_TEMPLATE("copy_run_reversed and copy_run on plain pointers", T, DMLREF_ALL_TYPES) {
  for (std::uint64_t n : {0u, 1u, 2u, 7u, 33u, 300u}) {
    std::vector<T> src(n), dst(n + 2), expected(n + 2);
    fill_distinct(src, 100);
    fill_sentinel(dst);
    fill_sentinel(expected);
    for (std::uint64_t i = 0; i < n; ++i) expected[i + 1] = src[n - 1 - i];
    dmlref::detail::copy_run_reversed(src.data(), dst.data() + 1, n);
    CHECK(std::memcmp(dst.data(), expected.data(), dst.size() * sizeof(T)) == 0);

    // copy_run with source stride -1 starting at the last element is the same copy.
    fill_sentinel(dst);
    if (n > 0) dmlref::detail::copy_run(src.data() + (n - 1), -1, dst.data() + 1, 1, n);
    CHECK(std::memcmp(dst.data(), expected.data(), dst.size() * sizeof(T)) == 0);

    // Every other element into every third slot, and a broadcast.
    std::vector<T> spaced(3 * n + 1), spaced_expected(3 * n + 1);
    fill_sentinel(spaced);
    fill_sentinel(spaced_expected);
    for (std::uint64_t i = 0; i < n / 2; ++i) spaced_expected[3 * i] = src[2 * i];
    dmlref::detail::copy_run(src.data(), 2, spaced.data(), 3, n / 2);
    CHECK(std::memcmp(spaced.data(), spaced_expected.data(), spaced.size() * sizeof(T)) == 0);
    if (n > 0) {
      fill_sentinel(dst);
      fill_sentinel(expected);
      for (std::uint64_t i = 0; i < n; ++i) expected[i + 1] = src[n / 2];
      dmlref::detail::copy_run(src.data() + n / 2, 0, dst.data() + 1, 1, n);
      CHECK(std::memcmp(dst.data(), expected.data(), dst.size() * sizeof(T)) == 0);
    }

    // Contiguous, both sides of the memcpy threshold.
    fill_sentinel(dst);
    fill_sentinel(expected);
    std::copy(src.begin(), src.end(), expected.begin() + 1);
    dmlref::detail::copy_run(src.data(), 1, dst.data() + 1, 1, n);
    CHECK(std::memcmp(dst.data(), expected.data(), dst.size() * sizeof(T)) == 0);
  }
}

TEST_CASE("copy_bytes_short copies exactly the bytes asked for, at every length and alignment") {
  // Its overlapping tail copies are the easiest place to write one byte too many.
  std::vector<unsigned char> src(300);
  std::iota(src.begin(), src.end(), static_cast<unsigned char>(1));
  for (std::size_t bytes = 0; bytes <= 200; ++bytes) {
    for (std::size_t shift = 0; shift < 8; ++shift) {
      std::vector<unsigned char> dst(220, 0xA5);
      std::vector<unsigned char> expected(220, 0xA5);
      std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(shift), bytes,
                  expected.begin() + 3);
      dmlref::detail::copy_bytes_short(dst.data() + 3, src.data() + shift, bytes);
      INFO("bytes ", bytes, " shift ", shift);
      CHECK(dst == expected);
    }
  }
}

TEST_CASE("strided_copy: different sizes are ShapeMismatch and write nothing") {
  std::vector<float> src(12, 1.0f);
  std::vector<float> dst(12, 7.0f);
  const TensorView<const float> in(src.data(), {3, 4});
  DMLREF_CHECK_ERROR(dmlref::strided_copy(in, TensorView<float>(dst.data(), {4, 3})),
                     ErrorCode::ShapeMismatch,
                     "strided_copy: the source Sizes {3,4} and the destination Sizes {4,3} differ");
  DMLREF_CHECK_ERROR(dmlref::strided_copy(in, TensorView<float>(dst.data(), {3, 4, 1})),
                     ErrorCode::ShapeMismatch, "destination Sizes {3,4,1}");
  DMLREF_CHECK_ERROR(dmlref::reference_copy(in, TensorView<float>(dst.data(), {12})),
                     ErrorCode::ShapeMismatch, "reference_copy: the source Sizes {3,4}");
  CHECK(std::all_of(dst.begin(), dst.end(), [](float v) { return v == 7.0f; }));
}

TEST_CASE("strided_copy takes a mutable source view") {
  std::vector<std::int32_t> src{1, 2, 3, 4, 5, 6};
  std::vector<std::int32_t> dst(6);
  const TensorView<std::int32_t> in(src.data(), Layout::strided({2, 3}, {1, 2}));
  dmlref::strided_copy(in, TensorView<std::int32_t>(dst.data(), {2, 3}));
  CHECK(dst == std::vector<std::int32_t>{1, 3, 5, 2, 4, 6});
}

}  // namespace test_strided_copy
