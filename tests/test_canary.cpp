// Canaries: for every operator and every rule it checks, a runtime call broken by that rule alone
// raises the rule's code and leaves every byte of every buffer as it was (tensors.md: "an operator
// that fails validation leaves every output byte untouched"). Table-driven: each operator has a
// valid base call and a list of {rule, mutation}; the per-tensor rules (T1-T4, T8-T11, null
// pointers) are generated for every tensor, T11/T12 for every output, and T13 for every output
// against every other tensor. Every buffer sits in a larger storage filled with a pattern, and
// the whole storage (the bytes around the buffer too) is compared after the call.
//
// Not reachable through an operator, so not here: T5 (a Strides array of another length is only
// expressible through calc_buffer_tensor_size's span overload: test_hostile.cpp), T6 (only
// TensorView::at checks coordinates), T7 (a permission: broadcast inputs are accepted).
#include "test_support.hpp"

#include <dmlref/ops/gather_nd1.hpp>
#include <dmlref/ops/join.hpp>
#include <dmlref/ops/reverse_subsequences.hpp>
#include <dmlref/ops/scatter.hpp>
#include <dmlref/ops/split.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace test_canary {  // this file's own names (tests/CMakeLists.txt: unity groups)

using namespace dmlref;

namespace {

enum class Op { Join, Split, Scatter, GatherNd1, ReverseSubsequences };

// Room after every buffer, covered by the canary too, and enough for any other tensor of these
// small calls to be bound over it (T13 cases) without the binding reaching past the storage.
constexpr std::size_t kSlack = 256;
// Descriptions that claim more (T4, T8 cases) get at most this much real storage: they fail on
// the description before any buffer is looked at.
constexpr std::uint64_t kMaxStorage = 1 << 16;

struct Tensor {
  std::string name;
  bool is_output = false;
  DataType type = DataType::Float32;
  std::vector<std::uint32_t> sizes;
  std::vector<std::uint32_t> strides;            // empty: packed
  std::optional<std::uint32_t> dimension_count;  // a DimensionCount other than sizes.size()
  bool null_sizes = false;
  std::optional<std::uint64_t> total;  // TotalTensorSizeInBytes; default the minimum (T8)
  std::uint32_t alignment = 0;
  std::uint32_t flags = 0;
  // The binding: `buffer_bytes` (default TotalTensorSizeInBytes) at `shift` bytes into this
  // tensor's storage, or into tensor `bind_into`'s storage.
  std::optional<std::uint64_t> buffer_bytes;
  std::uint64_t shift = 0;
  int bind_into = -1;
  bool null_buffer = false;

  BufferTensorDesc desc{};
  std::vector<std::uint64_t> storage;  // 8-byte aligned
  const void* data = nullptr;
  std::uint64_t bytes = 0;
};

struct Call {
  Op op = Op::Join;
  std::vector<Tensor> tensors;  // JOIN: inputs, output; SPLIT: input, outputs; others: DML order
  std::uint32_t axis = 0;
  std::uint32_t r = 0, q = 0, b = 0;   // GATHER_ND1's dimension counts
  std::optional<std::uint32_t> count;  // JOIN InputCount / SPLIT OutputCount, when not the real one
  bool null_array = false;             // JOIN InputTensors / SPLIT OutputTensors null
  int null_desc = -1;                  // this tensor's description pointer is null
  bool extra_buffer = false;           // JOIN/SPLIT: one buffer more than tensors
  FeatureLevel level = kLatestFeatureLevel;
  IndexPolicy index_policy = IndexPolicy::Error;
  DuplicatePolicy duplicates = DuplicatePolicy::LastWins;
  int index_tensor = -1;                   // indices or sequence lengths
  std::vector<std::int64_t> index_values;  // row-major, repeated as needed

  std::vector<BufferTensorDesc> descs;  // built by prepare()
};

Tensor tensor(std::string name, DataType type, std::vector<std::uint32_t> sizes,
              bool is_output = false) {
  Tensor t;
  t.name = std::move(name);
  t.type = type;
  t.sizes = std::move(sizes);
  t.is_output = is_output;
  return t;
}

// ---- the valid base calls ---------------------------------------------------------------------

Call base_call(Op op) {
  Call c;
  c.op = op;
  switch (op) {
    case Op::Join:
      c.tensors = {tensor("InputTensors[0]", DataType::Float32, {2, 3}),
                   tensor("InputTensors[1]", DataType::Float32, {2, 2}),
                   tensor("OutputTensor", DataType::Float32, {2, 5}, true)};
      c.axis = 1;
      break;
    case Op::Split:
      c.tensors = {tensor("InputTensor", DataType::Float32, {2, 5}),
                   tensor("OutputTensors[0]", DataType::Float32, {2, 3}, true),
                   tensor("OutputTensors[1]", DataType::Float32, {2, 2}, true)};
      c.axis = 1;
      break;
    case Op::Scatter:
      c.tensors = {tensor("InputTensor", DataType::Float32, {3, 4}),
                   tensor("IndicesTensor", DataType::UInt32, {2, 4}),
                   tensor("UpdatesTensor", DataType::Float32, {2, 4}),
                   tensor("OutputTensor", DataType::Float32, {3, 4}, true)};
      c.index_tensor = 1;
      c.index_values = {0, 1, 2, 0, 2, 0, 1, 1};  // distinct along Axis 0 in every column
      break;
    case Op::GatherNd1:  // the spec's example 1
      c.tensors = {tensor("InputTensor", DataType::Float32, {2, 2}),
                   tensor("IndicesTensor", DataType::UInt32, {2, 1}),
                   tensor("OutputTensor", DataType::Float32, {2, 2}, true)};
      c.r = 2;
      c.q = 2;
      c.index_tensor = 1;
      c.index_values = {1, 0};
      break;
    case Op::ReverseSubsequences:
      c.tensors = {tensor("InputTensor", DataType::Float32, {2, 3}),
                   tensor("SequenceLengthsTensor", DataType::UInt32, {2, 1}),
                   tensor("OutputTensor", DataType::Float32, {2, 3}, true)};
      c.axis = 1;
      c.index_tensor = 1;
      c.index_values = {2, 3};
      break;
  }
  return c;
}

const char* op_name(Op op) {
  switch (op) {
    case Op::Join:
      return "JOIN";
    case Op::Split:
      return "SPLIT";
    case Op::Scatter:
      return "SCATTER";
    case Op::GatherNd1:
      return "GATHER_ND1";
    case Op::ReverseSubsequences:
      return "REVERSE_SUBSEQUENCES";
  }
  return "?";
}

// ---- building and running a call -------------------------------------------------------------

std::uint8_t pattern(std::size_t tensor, std::size_t i, bool is_output) {
  return static_cast<std::uint8_t>(is_output ? 0xA5 ^ (i * 29 + tensor) : i * 7 + tensor * 31 + 1);
}

// Descriptions, storage (inputs distinct bytes, outputs a pattern), index values, bindings.
void prepare(Call& c) {
  for (std::size_t i = 0; i < c.tensors.size(); ++i) {
    Tensor& t = c.tensors[i];
    std::uint64_t minimum = 0;
    try {
      minimum = calc_buffer_tensor_size(t.type, t.sizes, t.strides);
    } catch (const Error&) {
      // A description broken on purpose (T1-T4, T8): the case says what TotalTensorSizeInBytes is.
    }
    t.desc = BufferTensorDesc{};
    t.desc.DataType = t.type;
    t.desc.DimensionCount = t.dimension_count.value_or(static_cast<std::uint32_t>(t.sizes.size()));
    t.desc.Sizes = t.null_sizes || t.sizes.empty() ? nullptr : t.sizes.data();
    t.desc.Strides = t.strides.empty() ? nullptr : t.strides.data();
    t.desc.TotalTensorSizeInBytes = t.total.value_or(minimum);
    t.desc.GuaranteedBaseOffsetAlignment = t.alignment;
    t.desc.Flags = static_cast<TensorFlags>(t.flags);
    t.bytes = t.buffer_bytes.value_or(t.desc.TotalTensorSizeInBytes);
    const std::uint64_t storage_bytes = std::min(t.bytes, kMaxStorage) + t.shift + kSlack;
    t.storage.assign(storage_bytes / 8 + 1, 0);
    auto* p = reinterpret_cast<std::uint8_t*>(t.storage.data());
    for (std::size_t k = 0; k < t.storage.size() * 8; ++k) p[k] = pattern(i, k, t.is_output);
  }
  if (c.index_tensor >= 0) {
    Tensor& t = c.tensors[static_cast<std::size_t>(c.index_tensor)];
    const std::size_t eb = element_size(t.type);
    auto* p = reinterpret_cast<std::uint8_t*>(t.storage.data()) + t.shift;
    std::uint64_t count = 1;
    for (std::uint32_t s : t.sizes) count *= s;
    for (std::uint64_t k = 0; eb != 0 && k < count && (k + 1) * eb <= t.bytes; ++k) {
      const std::int64_t v = c.index_values[k % c.index_values.size()];
      std::memcpy(p + k * eb, &v, eb);  // little-endian: the low bytes for 32-bit types
    }
  }
  for (Tensor& t : c.tensors) {
    const Tensor& owner = t.bind_into >= 0 ? c.tensors[static_cast<std::size_t>(t.bind_into)] : t;
    t.data = t.null_buffer ? nullptr
                           : reinterpret_cast<const std::uint8_t*>(owner.storage.data()) + t.shift;
  }
  c.descs.clear();
  for (const Tensor& t : c.tensors) c.descs.push_back(t.desc);
}

void run(Call& c) {
  auto d = [&](std::size_t i) -> const BufferTensorDesc* {
    return static_cast<int>(i) == c.null_desc ? nullptr : &c.descs[i];
  };
  auto in = [&](std::size_t i) { return ConstBuffer(c.tensors[i].data, c.tensors[i].bytes); };
  auto out = [&](std::size_t i) {
    return Buffer{const_cast<void*>(c.tensors[i].data), c.tensors[i].bytes};
  };
  const std::size_t n = c.tensors.size();
  switch (c.op) {
    case Op::Join: {
      std::vector<ConstBuffer> inputs;
      for (std::size_t i = 0; i + 1 < n; ++i) inputs.push_back(in(i));
      if (c.extra_buffer) inputs.push_back(in(0));
      const JoinOperatorDesc desc{c.count.value_or(static_cast<std::uint32_t>(n - 1)),
                                  c.null_array ? nullptr : c.descs.data(), d(n - 1), c.axis};
      join(desc, std::span<const ConstBuffer>(inputs), out(n - 1), JoinOptions{c.level});
      break;
    }
    case Op::Split: {
      std::vector<Buffer> outputs;
      for (std::size_t i = 1; i < n; ++i) outputs.push_back(out(i));
      if (c.extra_buffer) outputs.push_back(out(1));
      const SplitOperatorDesc desc{d(0), c.count.value_or(static_cast<std::uint32_t>(n - 1)),
                                   c.null_array ? nullptr : c.descs.data() + 1, c.axis};
      split(desc, in(0), std::span<const Buffer>(outputs), SplitOptions{c.level});
      break;
    }
    case Op::Scatter:
      scatter(ScatterOperatorDesc{d(0), d(1), d(2), d(3), c.axis}, in(0), in(1), in(2), out(3),
              ScatterOptions{c.level, c.index_policy, c.duplicates});
      break;
    case Op::GatherNd1:
      gather_nd1(GatherNd1OperatorDesc{d(0), d(1), d(2), c.r, c.q, c.b}, in(0), in(1), out(2),
                 GatherNd1Options{c.level, c.index_policy});
      break;
    case Op::ReverseSubsequences:
      reverse_subsequences(ReverseSubsequencesOperatorDesc{d(0), d(1), d(2), c.axis}, in(0), in(1),
                           out(2), ReverseSubsequencesOptions{c.level});
      break;
  }
}

std::vector<std::vector<std::uint64_t>> snapshot(const Call& c) {
  std::vector<std::vector<std::uint64_t>> s;
  for (const Tensor& t : c.tensors) s.push_back(t.storage);
  return s;
}

// ---- the table ---------------------------------------------------------------------------------

struct Case {
  std::string name;
  ErrorCode code;
  std::string message;  // a substring of what()
  std::function<void(Call&)> mutate;
};

void set_type_everywhere(Call& c, DataType type) {
  for (Tensor& t : c.tensors) {
    if (static_cast<int>(&t - c.tensors.data()) != c.index_tensor) t.type = type;
  }
}

std::vector<Case> operator_cases(Op op) {
  using E = ErrorCode;
  auto sizes_of = [](std::size_t i, std::vector<std::uint32_t> s) {
    return [i, s](Call& c) { c.tensors[i].sizes = s; };
  };
  auto type_of = [](std::size_t i, DataType type) {
    return [i, type](Call& c) { c.tensors[i].type = type; };
  };
  auto axis = [](std::uint32_t a) { return [a](Call& c) { c.axis = a; }; };
  auto level = [](FeatureLevel l) { return [l](Call& c) { c.level = l; }; };
  auto bad_level = [](Call& c) { c.level = static_cast<FeatureLevel>(0x1234); };
  auto values = [](std::vector<std::int64_t> v) { return [v](Call& c) { c.index_values = v; }; };
  switch (op) {
    case Op::Join:
      return {
          {"J1 InputCount 0", E::J1, "InputCount is 0", [](Call& c) { c.count = 0; }},
          {"J2 DimensionCount", E::J2, "InputTensors[1].DimensionCount is 3",
           sizes_of(1, {2, 2, 1})},
          {"J3 DataType", E::J3, "InputTensors[1].DataType is INT32", type_of(1, DataType::Int32)},
          {"J4 Axis", E::J4, "Axis is 2", axis(2)},
          {"J5 a size off Axis", E::J5, "InputTensors[1].Sizes[0] is 3", sizes_of(1, {3, 2})},
          {"J6 Axis sizes do not sum", E::J6, "add up to 6", sizes_of(1, {2, 3})},
          {"FeatureLevel DimensionCount 2 at 3_0", E::FeatureLevel, "DML_FEATURE_LEVEL_3_0",
           level(FeatureLevel::k3_0)},
          {"FeatureLevel FLOAT64 at 3_0", E::FeatureLevel, "DataType FLOAT64 needs",
           [](Call& c) {
             set_type_everywhere(c, DataType::Float64);
             for (Tensor& t : c.tensors) t.sizes.insert(t.sizes.begin(), 2, 1u);
             c.axis = 3;
             c.level = FeatureLevel::k3_0;
           }},
          {"FeatureLevel INT8 at 1_0", E::FeatureLevel, "DataType INT8 needs DML_FEATURE_LEVEL_2_1",
           [](Call& c) {
             set_type_everywhere(c, DataType::Int8);
             for (Tensor& t : c.tensors) t.sizes.insert(t.sizes.begin(), 2, 1u);
             c.axis = 3;
             c.level = FeatureLevel::k1_0;
           }},
          {"InvalidOption feature level", E::InvalidOption, "not a DirectML feature level",
           bad_level},
          {"InvalidOption a buffer too many", E::InvalidOption, "3 input buffer(s) were given",
           [](Call& c) { c.extra_buffer = true; }},
          {"NullPointer InputTensors", E::NullPointer, "InputTensors is null",
           [](Call& c) { c.null_array = true; }},
          {"NullPointer OutputTensor", E::NullPointer, "OutputTensor is null",
           [](Call& c) { c.null_desc = 2; }},
      };
    case Op::Split:
      return {
          {"S1 OutputCount 0", E::S1, "OutputCount is 0", [](Call& c) { c.count = 0; }},
          {"S2 DimensionCount", E::S2, "OutputTensors[1].DimensionCount is 3",
           sizes_of(2, {2, 2, 1})},
          {"S3 DataType", E::S3, "OutputTensors[1].DataType is INT32", type_of(2, DataType::Int32)},
          {"S4 Axis", E::S4, "Axis is 2", axis(2)},
          {"S5 a size off Axis", E::S5, "OutputTensors[1].Sizes[0] is 3", sizes_of(2, {3, 2})},
          {"S6 Axis sizes do not sum", E::S6, "add up to 6", sizes_of(2, {2, 3})},
          {"FeatureLevel DimensionCount 2 at 2_1", E::FeatureLevel, "DML_FEATURE_LEVEL_2_1",
           level(FeatureLevel::k2_1)},
          {"FeatureLevel FLOAT64 at 3_0", E::FeatureLevel, "DataType FLOAT64 needs",
           [](Call& c) {
             set_type_everywhere(c, DataType::Float64);
             c.level = FeatureLevel::k3_0;
           }},
          {"InvalidOption feature level", E::InvalidOption, "not a DirectML feature level",
           bad_level},
          {"InvalidOption a buffer too many", E::InvalidOption, "3 output buffer(s) were given",
           [](Call& c) { c.extra_buffer = true; }},
          {"NullPointer OutputTensors", E::NullPointer, "OutputTensors is null",
           [](Call& c) { c.null_array = true; }},
          {"NullPointer InputTensor", E::NullPointer, "InputTensor is null",
           [](Call& c) { c.null_desc = 0; }},
      };
    case Op::Scatter:
      return {
          {"SC1 DimensionCount", E::SC1, "IndicesTensor.DimensionCount is 3",
           [](Call& c) {
             c.tensors[1].sizes = c.tensors[2].sizes = {2, 4, 1};
           }},
          {"SC2 DataType", E::SC2, "UpdatesTensor.DataType is INT32", type_of(2, DataType::Int32)},
          {"SC3 index DataType", E::SC3, "IndicesTensor.DataType is FLOAT32",
           type_of(1, DataType::Float32)},
          {"SC4 Axis", E::SC4, "Axis is 2", axis(2)},
          {"SC5 output sizes", E::SC5, "OutputTensor.Sizes[1] is 5", sizes_of(3, {3, 5})},
          {"SC6 updates sizes", E::SC6, "UpdatesTensor.Sizes[1] is 3", sizes_of(2, {2, 3})},
          {"SC7 indices sizes off Axis", E::SC7, "IndicesTensor.Sizes[1] is 3",
           [](Call& c) {
             c.tensors[1].sizes = c.tensors[2].sizes = {2, 3};
           }},
          {"SC8 index n", E::SC8, "IndicesTensor[1,3] is 3", values({0, 1, 2, 0, 2, 0, 1, 3})},
          {"SC8 index -n-1 (INT32)", E::SC8, "is -4 but InputTensor.Sizes[0] is 3",
           [](Call& c) {
             c.tensors[1].type = DataType::Int32;
             c.index_values = {0, 1, 2, 0, 2, 0, 1, -4};
           }},
          {"SC8 index 2^32 + 1 (UINT64)", E::SC8, "is 4294967297",
           [](Call& c) {
             c.tensors[1].type = DataType::UInt64;
             c.index_values = {0, 1, 2, 0, 2, 0, 1, (std::int64_t{1} << 32) + 1};
           }},
          {"ScatterDuplicate under Reject", E::ScatterDuplicate, "both target OutputTensor[0,0]",
           [](Call& c) {
             c.duplicates = DuplicatePolicy::Reject;
             c.index_values = {0, 1, 2, 0, 0, 0, 1, 1};
           }},
          {"FeatureLevel DimensionCount 2 at 2_1", E::FeatureLevel, "DML_FEATURE_LEVEL_2_1",
           level(FeatureLevel::k2_1)},
          {"FeatureLevel FLOAT64 at 3_0", E::FeatureLevel, "DataType FLOAT64 needs",
           [](Call& c) {
             set_type_everywhere(c, DataType::Float64);
             c.level = FeatureLevel::k3_0;
           }},
          {"FeatureLevel INT64 indices at 2_1", E::FeatureLevel,
           "IndicesTensor.DataType INT64 needs DML_FEATURE_LEVEL_3_0",
           [](Call& c) {
             for (Tensor& t : c.tensors) t.sizes.insert(t.sizes.begin(), 2, 1u);
             c.axis = 2;
             c.tensors[1].type = DataType::Int64;
             c.level = FeatureLevel::k2_1;
           }},
          {"InvalidOption feature level", E::InvalidOption, "not a DirectML feature level",
           bad_level},
          {"InvalidOption index_policy", E::InvalidOption, "index_policy is 7",
           [](Call& c) { c.index_policy = static_cast<IndexPolicy>(7); }},
          {"InvalidOption duplicates", E::InvalidOption, "duplicates is 7",
           [](Call& c) { c.duplicates = static_cast<DuplicatePolicy>(7); }},
          {"NullPointer UpdatesTensor", E::NullPointer, "UpdatesTensor is null",
           [](Call& c) { c.null_desc = 2; }},
      };
    case Op::GatherNd1:
      return {
          {"G1 DimensionCount", E::G1, "IndicesTensor.DimensionCount is 3", sizes_of(1, {1, 2, 1})},
          {"G2 DataType", E::G2, "OutputTensor.DataType is INT32", type_of(2, DataType::Int32)},
          {"G3 index DataType", E::G3, "IndicesTensor.DataType is FLOAT32",
           type_of(1, DataType::Float32)},
          {"G4 InputDimensionCount", E::G4, "InputDimensionCount is 3", [](Call& c) { c.r = 3; }},
          {"G4 IndicesDimensionCount", E::G4, "IndicesDimensionCount is 0",
           [](Call& c) { c.q = 0; }},
          {"G5 BatchDimensionCount", E::G5, "BatchDimensionCount is 2", [](Call& c) { c.b = 2; }},
          {"G6 tuple too long", E::G6, "is 3 but InputDimensionCount", sizes_of(1, {2, 3})},
          {"G7 leading input size", E::G7, "InputTensor.Sizes[0] is 2", [](Call& c) { c.r = 1; }},
          {"G8 batch sizes", E::G8, "batch dimension 0",
           [](Call& c) {
             c.b = 1;
             c.tensors[1].sizes = {1, 1};
           }},
          {"G9 output sizes", E::G9, "OutputTensor.Sizes is {2,3}", sizes_of(2, {2, 3})},
          {"G10 index n", E::G10, "IndicesTensor[1,0] is 2", values({1, 2})},
          {"G10 index 2^32 (UINT64)", E::G10, "is 4294967296",
           [](Call& c) {
             c.tensors[1].type = DataType::UInt64;
             c.index_values = {1, std::int64_t{1} << 32};
           }},
          {"G10 index -3 (INT64)", E::G10, "is -3",
           [](Call& c) {
             c.tensors[1].type = DataType::Int64;
             c.index_values = {-2, -3};
           }},
          {"FeatureLevel the operator at 2_1", E::FeatureLevel,
           "the operator needs DML_FEATURE_LEVEL_3_0", level(FeatureLevel::k2_1)},
          {"FeatureLevel FLOAT64 at 3_0", E::FeatureLevel, "DataType FLOAT64 needs",
           [](Call& c) {
             set_type_everywhere(c, DataType::Float64);
             c.level = FeatureLevel::k3_0;
           }},
          {"InvalidOption feature level", E::InvalidOption, "not a DirectML feature level",
           bad_level},
          {"InvalidOption index_policy", E::InvalidOption, "index_policy is 9",
           [](Call& c) { c.index_policy = static_cast<IndexPolicy>(9); }},
          {"NullPointer IndicesTensor", E::NullPointer, "IndicesTensor is null",
           [](Call& c) { c.null_desc = 1; }},
      };
    case Op::ReverseSubsequences:
      return {
          {"R1 DimensionCount", E::R1, "SequenceLengthsTensor.DimensionCount is 3",
           sizes_of(1, {2, 1, 1})},
          {"R2 output sizes", E::R2, "OutputTensor.Sizes[1] is 4", sizes_of(2, {2, 4})},
          {"R2 output DataType", E::R2, "OutputTensor.DataType is INT32",
           type_of(2, DataType::Int32)},
          {"R3 lengths not 1 on Axis", E::R3, "must be 1 on Axis", sizes_of(1, {2, 3})},
          {"R3 lengths off Axis", E::R3, "SequenceLengthsTensor.Sizes[0] is 1",
           sizes_of(1, {1, 1})},
          {"R4 lengths DataType", E::R4, "SequenceLengthsTensor.DataType is INT32",
           type_of(1, DataType::Int32)},
          {"R5 Axis", E::R5, "Axis is 2", axis(2)},
          {"FeatureLevel the operator at 2_0", E::FeatureLevel,
           "the operator needs DML_FEATURE_LEVEL_2_1", level(FeatureLevel::k2_0)},
          {"FeatureLevel UINT64 lengths at 4_0", E::FeatureLevel,
           "SequenceLengthsTensor.DataType UINT64 needs DML_FEATURE_LEVEL_5_0",
           [](Call& c) {
             c.tensors[1].type = DataType::UInt64;
             c.level = FeatureLevel::k4_0;
           }},
          {"FeatureLevel DimensionCount 2 at 3_0", E::FeatureLevel, "DML_FEATURE_LEVEL_3_0",
           level(FeatureLevel::k3_0)},
          {"InvalidOption feature level", E::InvalidOption, "not a DirectML feature level",
           bad_level},
          {"NullPointer InputTensor", E::NullPointer, "InputTensor is null",
           [](Call& c) { c.null_desc = 0; }},
      };
  }
  return {};
}

// T1-T4, T8-T11 and null pointers on every tensor; T11 (OWNED_BY_DML) and T12 on every output;
// T13 for every output over every other tensor.
std::vector<Case> tensor_cases(const Call& base) {
  using E = ErrorCode;
  std::vector<Case> cases;
  for (std::size_t i = 0; i < base.tensors.size(); ++i) {
    const Tensor& t = base.tensors[i];
    const std::string& n = t.name;
    auto add = [&](std::string what, E code, std::string message, std::function<void(Tensor&)> f) {
      cases.push_back(
          {what + " on " + n, code, std::move(message), [i, f](Call& c) { f(c.tensors[i]); }});
    };
    add("T1 DataType UNKNOWN", E::T1, n + ".DataType is UNKNOWN",
        [](Tensor& x) { x.type = DataType::Unknown; });
    add("T1 DataType 12", E::T1, "12 (not a DML_TENSOR_DATA_TYPE)",
        [](Tensor& x) { x.type = static_cast<DataType>(12); });
    add("T2 DimensionCount 0", E::T2, n + ".DimensionCount is 0",
        [](Tensor& x) { x.sizes.clear(); });
    add("T2 DimensionCount 9", E::T2, n + ".DimensionCount is 9",
        [](Tensor& x) { x.sizes.assign(9, 1); });
    add("T3 a size of 0", E::T3, n + ".Sizes[1] is 0", [](Tensor& x) { x.sizes[1] = 0; });
    add("T4 2^32 elements", E::T4, "hold 4294967296 elements", [](Tensor& x) {
      x.sizes = {65536, 65536};
      x.strides = {0, 0};
      x.total = 4;
    });
    add("T4 more than 2^64 elements", E::T4, "more than 2^64", [](Tensor& x) {
      x.sizes = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
      x.strides = {0, 0, 0};
      x.total = 4;
    });
    add("T8 TotalTensorSizeInBytes below the minimum", E::T8, n + ".TotalTensorSizeInBytes is",
        [](Tensor& x) { x.total = calc_buffer_tensor_size(x.type, x.sizes, x.strides) - 1; });
    add("T8 strides reaching past 64 bits", E::T8, "reach past a 64-bit element offset",
        [](Tensor& x) {
          x.sizes = {0x80000002u, 1};
          x.strides = {0xFFFFFFFFu, 1};
          x.total = 16;
        });
    add("T9 alignment 3", E::T9, n + ".GuaranteedBaseOffsetAlignment is 3",
        [](Tensor& x) { x.alignment = 3; });
    add("T9 alignment below the element size", E::T9, n + ".GuaranteedBaseOffsetAlignment is 2",
        [](Tensor& x) { x.alignment = 2; });
    add("T9 buffer off the promised alignment", E::T9,
        "bytes past a multiple of " + n + ".GuaranteedBaseOffsetAlignment (16)", [](Tensor& x) {
          x.alignment = 16;
          x.shift = 4;
        });
    add("T9 buffer not element-aligned", E::T9, "past a multiple of its element size",
        [](Tensor& x) { x.shift = 1; });
    add("T10 buffer one byte short", E::T10, "the buffer of " + n + " holds", [](Tensor& x) {
      x.buffer_bytes = calc_buffer_tensor_size(x.type, x.sizes, x.strides) - 1;
    });
    add("T11 Flags 2", E::T11, n + ".Flags is 2", [](Tensor& x) { x.flags = 2; });
    add("NullPointer Sizes", E::NullPointer, n + ".Sizes is null",
        [](Tensor& x) { x.null_sizes = true; });
    add("NullPointer buffer", E::NullPointer, "the buffer of " + n + " is null",
        [](Tensor& x) { x.null_buffer = true; });
    if (!t.is_output) continue;
    add("T11 OWNED_BY_DML on an output", E::T11, "that flag is for inputs only",
        [](Tensor& x) { x.flags = 1; });
    add("T12 zero stride", E::T12, n + ".Strides[0] is 0", [](Tensor& x) {
      x.strides.assign(x.sizes.size(), 1);
      x.strides[0] = 0;
      x.total = calc_buffer_tensor_size(x.type, x.sizes, x.strides);
    });
    add("T12 interleaving strides", E::T12, "address some element twice", [](Tensor& x) {
      x.strides.assign(x.sizes.size(), 1);
      x.total = calc_buffer_tensor_size(x.type, x.sizes, x.strides);
    });
    for (std::size_t j = 0; j < base.tensors.size(); ++j) {
      if (j == i) continue;
      cases.push_back(
          {"T13 " + n + " over " + base.tensors[j].name, E::T13, "overlaps", [i, j](Call& c) {
             c.tensors[i].bind_into = static_cast<int>(j);
             c.tensors[i].shift = 4;
           }});
    }
  }
  return cases;
}

std::vector<Case> all_cases(Op op) {
  std::vector<Case> cases = operator_cases(op);
  for (Case& c : tensor_cases(base_call(op))) cases.push_back(std::move(c));
  return cases;
}

// Runs every case of `op`: the code, the message, and every byte of every storage unchanged.
void check_canaries(Op op) {
  {
    // The base call is valid and writes its outputs, so an unchanged output means something.
    Call c = base_call(op);
    prepare(c);
    const auto before = snapshot(c);
    REQUIRE_NOTHROW(run(c));
    for (std::size_t i = 0; i < c.tensors.size(); ++i) {
      CAPTURE(c.tensors[i].name);
      CHECK((c.tensors[i].storage != before[i]) == c.tensors[i].is_output);
    }
  }
  for (const Case& k : all_cases(op)) {
    CAPTURE(k.name);
    Call c = base_call(op);
    k.mutate(c);
    prepare(c);
    const auto before = snapshot(c);
    DMLREF_CHECK_ERROR(run(c), k.code, k.message);
    for (std::size_t i = 0; i < c.tensors.size(); ++i) {
      CAPTURE(c.tensors[i].name);
      CHECK(c.tensors[i].storage == before[i]);
    }
  }
}

// The rules each operator must have a canary for.
std::set<ErrorCode> required_codes(Op op) {
  using E = ErrorCode;
  std::set<E> codes = {E::T1,           E::T2,          E::T3,           E::T4,  E::T8,
                       E::T9,           E::T10,         E::T11,          E::T12, E::T13,
                       E::FeatureLevel, E::NullPointer, E::InvalidOption};
  switch (op) {
    case Op::Join:
      codes.insert({E::J1, E::J2, E::J3, E::J4, E::J5, E::J6});
      break;
    case Op::Split:
      codes.insert({E::S1, E::S2, E::S3, E::S4, E::S5, E::S6});
      break;
    case Op::Scatter:
      codes.insert(
          {E::SC1, E::SC2, E::SC3, E::SC4, E::SC5, E::SC6, E::SC7, E::SC8, E::ScatterDuplicate});
      break;
    case Op::GatherNd1:
      codes.insert({E::G1, E::G2, E::G3, E::G4, E::G5, E::G6, E::G7, E::G8, E::G9, E::G10});
      break;
    case Op::ReverseSubsequences:
      codes.insert({E::R1, E::R2, E::R3, E::R4, E::R5});
      break;
  }
  return codes;
}

}  // namespace

TEST_CASE("canary: every operator has a case for every rule it checks") {
  for (Op op : {Op::Join, Op::Split, Op::Scatter, Op::GatherNd1, Op::ReverseSubsequences}) {
    CAPTURE(op_name(op));
    std::set<ErrorCode> covered;
    for (const Case& k : all_cases(op)) covered.insert(k.code);
    for (ErrorCode code : required_codes(op)) {
      CAPTURE(error_code_name(code));
      CHECK(covered.count(code) == 1);
    }
  }
}

TEST_CASE("canary: JOIN leaves every byte untouched when any rule fails") {
  check_canaries(Op::Join);
}
TEST_CASE("canary: SPLIT leaves every byte untouched when any rule fails") {
  check_canaries(Op::Split);
}
TEST_CASE("canary: SCATTER leaves every byte untouched when any rule fails") {
  check_canaries(Op::Scatter);
}
TEST_CASE("canary: GATHER_ND1 leaves every byte untouched when any rule fails") {
  check_canaries(Op::GatherNd1);
}
TEST_CASE("canary: REVERSE_SUBSEQUENCES leaves every byte untouched when any rule fails") {
  check_canaries(Op::ReverseSubsequences);
}

TEST_CASE("threads: test_ops runs split as DMLREF_TEST_SPLIT asks") {
  // With DMLREF_TEST_SPLIT (test_main.cpp), a JOIN of 64 bytes reaches the engine's threads
  // wherever more than one is asked for: the canaries above then hold on split calls too.
  CHECK((detail::parallel_min_bytes == 1) == test::runs_split());
  const std::vector<std::uint8_t> a = test::distinct_buffer<std::uint8_t>(32);
  const std::vector<std::uint8_t> b = test::distinct_buffer<std::uint8_t>(32, 100);
  std::vector<std::uint8_t> out(64);
  const TensorView<const std::uint8_t> pieces[] = {{a.data(), {8, 4}}, {b.data(), {8, 4}}};
  CHECK(test::reaches_thread_pool([&] {
          join<std::uint8_t>(pieces, TensorView<std::uint8_t>(out.data(), {8, 8}), 1);
        }) == (test::runs_split() && get_num_threads() > 1));
  for (std::size_t r = 0; r < 8; ++r) {
    for (std::size_t c = 0; c < 8; ++c) {
      CHECK(out[r * 8 + c] == (c < 4 ? a[r * 4 + c] : b[r * 4 + c - 4]));
    }
  }
}

}  // namespace test_canary
