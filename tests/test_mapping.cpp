// The device-usable mapping (dmlref/mapping.hpp): its functions checked at compile time on the
// spec's rules (they are constexpr), and the naive GPU kernels' per-element bodies
// (cuda/element_ops.hpp, built from the mapping and a plan alone) run on the CPU over seeded random
// cases of every operator and compared bit for bit with the CPU operators: every data type, the
// index and length types, ranks 1-8, packed / padded / transposed / broadcast / reversed operands,
// negative and clamped indices, duplicate scatter targets, over-long subsequence lengths.
#include "mapping_cases.hpp"

#include <cuda/element_ops.hpp>
#include <dmlref/mapping.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace test_mapping {  // this file's own names (tests/CMakeLists.txt: unity groups)

namespace {

namespace mapping = dmlref::mapping;
namespace cases = dmlref::test::mapping_cases;
using dmlref::IndexPolicy;
using mapping::Status;
using mapping::TensorLayout;

// --- compile-time checks ------------------------------------------------------------------------

static_assert(std::is_trivially_copyable_v<mapping::JoinPlan>);
static_assert(std::is_trivially_copyable_v<mapping::SplitPlan>);
static_assert(std::is_trivially_copyable_v<mapping::ScatterPlan>);
static_assert(std::is_trivially_copyable_v<mapping::GatherNd1Plan>);
static_assert(std::is_trivially_copyable_v<mapping::ReverseSubsequencesPlan>);

// {2,3,4} packed, and the same sizes transposed (dimension 0 fastest) with a padded row.
constexpr TensorLayout kPacked{3, {2, 3, 4}, {12, 4, 1}};
constexpr TensorLayout kTransposed{3, {2, 3, 4}, {1, 2, 7}};

static_assert(mapping::element_count(kPacked) == 24);
static_assert(mapping::element_count(TensorLayout{1, {7}, {1}}) == 7);
static_assert([] {
  std::uint32_t c[mapping::kMaxRank] = {};
  mapping::coordinate_of(kPacked, 23, c);
  return c[0] == 1 && c[1] == 2 && c[2] == 3;
}());
static_assert([] {
  // coordinate_of and linear_index_of are inverses; packed offsets are the linear index.
  for (std::uint64_t i = 0; i < 24; ++i) {
    std::uint32_t c[mapping::kMaxRank] = {};
    mapping::coordinate_of(kPacked, i, c);
    if (mapping::linear_index_of(kPacked, c) != i) return false;
    if (mapping::offset_of(kPacked, c) != static_cast<std::int64_t>(i)) return false;
  }
  return true;
}());
static_assert([] {
  const std::uint32_t c[] = {1, 2, 3};
  return mapping::offset_of(kTransposed, c) == 1 + 4 + 21 &&
         mapping::offset_replacing(kTransposed, c, 1, 0) == 1 + 21 &&
         mapping::offset_replacing(kPacked, c, 2, 0) == 12 + 8;
}());

// The negative-index rule and the two policies (SC8, G10).
static_assert(mapping::wrap_index(-1, 4) == 3);
static_assert(mapping::wrap_index(-4, 4) == 0);
static_assert(mapping::wrap_index(-5, 4) >= 4);
static_assert(mapping::wrap_index(std::numeric_limits<std::int64_t>::min(), 4) >= 4);
static_assert(mapping::wrap_index(3u, 4) == 3);
static_assert(mapping::clamp_index(-9, 4) == 0);
static_assert(mapping::clamp_index(9, 4) == 3);
static_assert(mapping::clamp_index(std::uint64_t{1} << 63, 4) == 3);
static_assert(mapping::resolve_index(-2, 5, IndexPolicy::Error).position == 3);
static_assert(mapping::resolve_index(5, 5, IndexPolicy::Error).status == Status::IndexOutOfRange);
static_assert(mapping::resolve_index(-6, 5, IndexPolicy::Error).status == Status::IndexOutOfRange);
static_assert(mapping::resolve_index(-6, 5, IndexPolicy::Clamp).position == 0);
static_assert(mapping::resolve_index(7u, 5, IndexPolicy::Clamp).position == 4);
static_assert(mapping::resolve_index(9, 5, static_cast<IndexPolicy>(7)).status ==
              Status::InvalidPolicy);
// A legal index is legal under any policy value.
static_assert(mapping::resolve_index(1, 5, static_cast<IndexPolicy>(7)).position == 1);

// Pieces of 2, 3 and 1 along an axis: ends 2, 5, 6.
constexpr std::uint32_t kEnds[] = {2, 5, 6};
constexpr mapping::AxisPieces kPieces{1, 3, kEnds};
static_assert(mapping::piece_base(kPieces, 0) == 0 && mapping::piece_base(kPieces, 2) == 5);
static_assert(mapping::locate_piece(kPieces, 0).piece == 0);
static_assert(mapping::locate_piece(kPieces, 1).position == 1);
static_assert(mapping::locate_piece(kPieces, 2).piece == 1 &&
              mapping::locate_piece(kPieces, 2).position == 0);
static_assert(mapping::locate_piece(kPieces, 4).piece == 1 &&
              mapping::locate_piece(kPieces, 4).position == 2);
static_assert(mapping::locate_piece(kPieces, 5).piece == 2 &&
              mapping::locate_piece(kPieces, 5).position == 0);
static_assert(mapping::locate_piece(kPieces, 6).status == Status::PositionOutOfRange);

// JOIN of {1,1,2,3} and {1,1,2,4} along Axis 3 (join.md's example): output [0,0,1,5] is element
// [0,0,1,2] of input 1, packed offset 1*4 + 2.
constexpr std::uint32_t kJoinEnds[] = {3, 7};
constexpr TensorLayout kJoinInputs[] = {{4, {1, 1, 2, 3}, {6, 6, 3, 1}},
                                        {4, {1, 1, 2, 4}, {8, 8, 4, 1}}};
constexpr mapping::JoinPlan kJoin{{4, {1, 1, 2, 7}, {14, 14, 7, 1}}, {3, 2, kJoinEnds},
                                  kJoinInputs};
static_assert([] {
  const std::uint32_t o[] = {0, 0, 1, 5};
  const mapping::PieceOffset from = mapping::join_source(kJoin, o);
  return from.ok() && from.piece == 1 && from.offset == 6;
}());
static_assert([] {
  const std::uint32_t o[] = {0, 0, 1, 2};
  const mapping::PieceOffset from = mapping::join_source(kJoin, o);
  return from.ok() && from.piece == 0 && from.offset == 5;
}());

// SPLIT, the inverse: element [0,0,1,2] of output 1 is the input's [0,0,1,5].
constexpr mapping::SplitPlan kSplit{kJoin.output, kJoin.pieces, kJoinInputs};
static_assert([] {
  const std::uint32_t o[] = {0, 0, 1, 2};
  return mapping::split_source(kSplit, 1, o) == 7 + 5;
}());

// SCATTER along Axis 1 of a {2,3} output with padded rows (stride 4): the update at indices
// [1,0] holding -1 targets output [1,2].
constexpr TensorLayout kScatterLayout{2, {2, 3}, {4, 1}};
constexpr mapping::ScatterPlan kScatter{kScatterLayout, {2, {2, 1}, {1, 1}}, {2, {2, 1}, {1, 1}},
                                        kScatterLayout, 1, IndexPolicy::Error};
static_assert([] {
  const std::uint32_t u[] = {1, 0};
  const mapping::MappedOffset to = mapping::scatter_target(kScatter, u, -1);
  return to.ok() && to.offset == 4 + 2;
}());
static_assert([] {
  const std::uint32_t u[] = {1, 0};
  return mapping::scatter_target(kScatter, u, 3).status == Status::IndexOutOfRange;
}());
static_assert([] {
  mapping::ScatterPlan clamped = kScatter;
  clamped.policy = IndexPolicy::Clamp;
  const std::uint32_t u[] = {1, 0};
  return mapping::scatter_target(clamped, u, std::int64_t{-7}).offset == 4 + 0;
}());

// GATHER_ND1, R = r = q = 2, b = 0: input {{0,1},{2,3}}, indices {{0,0},{1,-1}} (one tuple per
// row), output {1,2}: output [0,1] reads tuple (1,-1), input [1,1], offset 3.
constexpr TensorLayout kGatherInput{2, {2, 2}, {2, 1}};
constexpr TensorLayout kGatherIndices{2, {2, 2}, {2, 1}};
constexpr TensorLayout kGatherOutput{2, {1, 2}, {2, 1}};
constexpr std::int32_t kGatherIndexValues[] = {0, 0, 1, -1};
constexpr mapping::GatherNd1Plan kGather = mapping::make_gather_nd1_plan(
    kGatherInput, kGatherIndices, kGatherOutput, 2, 2, 0, IndexPolicy::Error);
static_assert(kGather.m == 2 && kGather.k == 0 && kGather.lead == 1);
static_assert([] {
  const std::uint32_t o[] = {0, 1};
  return mapping::gather_nd1_tuple_offset(kGather, o) == 2 &&
         mapping::gather_nd1_source(kGather, o, kGatherIndexValues).offset == 3;
}());
static_assert([] {
  const std::uint32_t o[] = {0, 0};
  return mapping::gather_nd1_source(kGather, o, kGatherIndexValues).offset == 0;
}());
static_assert([] {
  constexpr std::uint32_t kBad[] = {0, 2, 1, 1};
  const std::uint32_t o[] = {0, 0};
  return mapping::gather_nd1_source(kGather, o, kBad).status == Status::IndexOutOfRange;
}());
// Batch and slice dimensions: R = 3, r = 3, q = 2, b = 1, m = 1, k = 1. Input {2,3,2} packed,
// indices {1,2,1} (one index per batch), output {1,2,2}: output [0,1,1] is batch 1, index 2 of
// dimension 1, slice element 1: input [1,2,1], offset 6 + 4 + 1.
constexpr mapping::GatherNd1Plan kBatched = mapping::make_gather_nd1_plan(
    {3, {2, 3, 2}, {6, 2, 1}}, {3, {1, 2, 1}, {2, 1, 1}}, {3, {1, 2, 2}, {4, 2, 1}}, 3, 2, 1,
    IndexPolicy::Error);
static_assert(kBatched.m == 1 && kBatched.k == 1 && kBatched.lead == 1);
static_assert([] {
  constexpr std::uint64_t kIndex[] = {0, 2};
  const std::uint32_t o[] = {0, 1, 1};
  return mapping::gather_nd1_source(kBatched, o, kIndex).offset == 6 + 4 + 1;
}());

// REVERSE_SUBSEQUENCES: the first L positions reversed, the rest unchanged, L clamped.
static_assert(mapping::reversed_position(0, 3, 5) == 2);
static_assert(mapping::reversed_position(2, 3, 5) == 0);
static_assert(mapping::reversed_position(3, 3, 5) == 3);
static_assert(mapping::reversed_position(4, 0, 5) == 4);
static_assert(mapping::reversed_position(0, std::uint64_t{1} << 40, 4) == 3);
constexpr mapping::ReverseSubsequencesPlan kReverse{
    {2, {2, 4}, {4, 1}}, {2, {2, 1}, {1, 1}}, {2, {2, 4}, {4, 1}}, 1};
static_assert([] {
  const std::uint32_t o[] = {1, 0};
  return mapping::reverse_subsequences_length_offset(kReverse, o) == 1 &&
         mapping::reverse_subsequences_source(kReverse, o, 3) == 4 + 2 &&
         mapping::reverse_subsequences_source(kReverse, o, 9) == 4 + 3;
}());

// --- the kernel bodies on the CPU against the CPU operators -------------------------------------

constexpr int kCasesPerType = 24;

// Runs `element(linear)` for every element of `layout`, each of which must map.
template <class F>
void for_each_element(const TensorLayout& layout, F&& element) {
  const std::uint64_t count = mapping::element_count(layout);
  for (std::uint64_t i = 0; i < count; ++i) REQUIRE(element(i) == Status::Ok);
}

TEST_CASE_TEMPLATE("mapping: JOIN's kernel body agrees with the CPU operator", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(1601);
  for (int n = 0; n < kCasesPerType; ++n) {
    auto c = cases::join_case<T>(rng);
    const mapping::PieceTable pieces = c.pieces();
    const mapping::JoinPlan plan =
        mapping::join_plan(pieces, mapping::layout_of(c.actual[0].view()));
    std::vector<const T*> bases;
    for (const auto& input : c.inputs) bases.push_back(input.at0());
    for_each_element(plan.output, [&](std::uint64_t i) {
      return dmlref_cuda::join_element(plan, bases.data(), c.actual[0].at0(), i);
    });
    cases::check_outputs(c.expected, c.actual);
  }
}

TEST_CASE_TEMPLATE("mapping: SPLIT's kernel body agrees with the CPU operator", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(1602);
  for (int n = 0; n < kCasesPerType; ++n) {
    auto c = cases::split_case<T>(rng);
    const mapping::PieceTable pieces = c.pieces();
    const mapping::SplitPlan plan = mapping::split_plan(mapping::layout_of(c.input.view()), pieces);
    for (std::uint32_t p = 0; p < plan.pieces.count; ++p) {
      for_each_element(plan.outputs[p], [&](std::uint64_t i) {
        return dmlref_cuda::split_element(plan, p, c.input.at0(), c.actual[p].at0(), i);
      });
    }
    cases::check_outputs(c.expected, c.actual);
  }
}

TEST_CASE_TEMPLATE("mapping: SCATTER's kernel body agrees with the CPU operator", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(1603);
  dmlref::test::for_each_index_type([&]<class I>(std::type_identity<I>) {
    for (int n = 0; n < kCasesPerType; ++n) {
      auto c = cases::scatter_case<T, I>(rng);
      const mapping::ScatterPlan plan = c.plan();
      for_each_element(plan.output, [&](std::uint64_t i) {
        return dmlref_cuda::scatter_element(plan, c.input.at0(), c.indices.at0(),
                                            c.updates.at0(), c.actual[0].at0(), i);
      });
      cases::check_outputs(c.expected, c.actual);
    }
  });
}

TEST_CASE_TEMPLATE("mapping: GATHER_ND1's kernel body agrees with the CPU operator", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(1604);
  dmlref::test::for_each_index_type([&]<class I>(std::type_identity<I>) {
    for (int n = 0; n < kCasesPerType; ++n) {
      auto c = cases::gather_nd1_case<T, I>(rng);
      const mapping::GatherNd1Plan plan = c.plan();
      for_each_element(plan.output, [&](std::uint64_t i) {
        return dmlref_cuda::gather_nd1_element(plan, c.input.at0(), c.indices.at0(),
                                               c.actual[0].at0(), i);
      });
      cases::check_outputs(c.expected, c.actual);
    }
  });
}

TEST_CASE_TEMPLATE("mapping: REVERSE_SUBSEQUENCES's kernel body agrees with the CPU operator", T,
                   DMLREF_ALL_TYPES) {
  std::mt19937 rng(1605);
  auto run = [&]<class L>(std::type_identity<L>) {
    for (int n = 0; n < kCasesPerType; ++n) {
      auto c = cases::reverse_subsequences_case<T, L>(rng);
      const mapping::ReverseSubsequencesPlan plan = c.plan();
      for_each_element(plan.output, [&](std::uint64_t i) {
        return dmlref_cuda::reverse_subsequences_element(plan, c.input.at0(), c.lengths.at0(),
                                                         c.actual[0].at0(), i);
      });
      cases::check_outputs(c.expected, c.actual);
    }
  };
  run(std::type_identity<std::uint32_t>{});
  run(std::type_identity<std::uint64_t>{});
}

// Under IndexPolicy::Error the mapping reports an out-of-range index instead of reading anywhere;
// the CPU operator rejects the same call (G10).
TEST_CASE("mapping: an out-of-range gather index is a returned error, as the operator's G10") {
  const float input[] = {0.5f, 1.5f, 2.5f};
  const std::int32_t indices[] = {1, 3};
  float output[2] = {};
  const dmlref::TensorView<const float> in(input, {1, 3});
  const dmlref::TensorView<const std::int32_t> ix(indices, {2, 1});
  const dmlref::TensorView<float> out(output, {1, 2});
  DMLREF_CHECK_ERROR(dmlref::gather_nd1<float>(in, ix, out, 1, 2, 0), dmlref::ErrorCode::G10,
                     "IndicesTensor[1,0] is 3");
  const mapping::GatherNd1Plan plan =
      mapping::gather_nd1_plan(in, ix, out, 1, 2, 0, IndexPolicy::Error);
  CHECK(dmlref_cuda::gather_nd1_element(plan, input, indices, output, 0) == Status::Ok);
  CHECK(output[0] == 1.5f);
  CHECK(dmlref_cuda::gather_nd1_element(plan, input, indices, output, 1) ==
        Status::IndexOutOfRange);
  CHECK(output[1] == 0.0f);
}

}  // namespace

}  // namespace test_mapping
