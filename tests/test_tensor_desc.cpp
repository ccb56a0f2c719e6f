// The runtime tensor description: the minimum size (T8's worked values), and one negative test per
// rule T1-T13 asserting the code and the message, on BufferTensorDesc (bind_tensor,
// validate_tensor_desc) and, where the rule applies to the typed layer too, on views.
#define DMLREF_TEST_NO_OPERATORS  // no operator header: see test_support.hpp
#include "test_support.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace test_tensor_desc {  // this file's own names (tests/CMakeLists.txt: unity groups)

using dmlref::BoundTensor;
using dmlref::BufferTensorDesc;
using dmlref::DataType;
using dmlref::ErrorCode;
using dmlref::Layout;
using dmlref::TensorDesc;
using dmlref::TensorExtent;
using dmlref::TensorFlags;
using dmlref::TensorView;

namespace {

constexpr std::uint32_t kU32Max = 0xFFFFFFFFu;
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

dmlref::ValidatedTensor validate_input(const BufferTensorDesc& d) {
  return dmlref::detail::validate_tensor_desc("JOIN", "InputTensors[0]", &d, false);
}
dmlref::ValidatedTensor validate_output(const BufferTensorDesc& d) {
  return dmlref::detail::validate_tensor_desc("JOIN", "OutputTensor", &d, true);
}

// Storage aligned well past any element size, so tests choose misalignment deliberately.
struct alignas(64) Storage {
  std::array<std::byte, 512> bytes{};
  std::byte* at(std::size_t offset) { return bytes.data() + offset; }
};

std::uint64_t calc(DataType type, std::vector<std::uint32_t> sizes,
                   std::vector<std::uint32_t> strides = {}) {
  return dmlref::calc_buffer_tensor_size(type, sizes, strides);
}

void check_overlap(std::initializer_list<TensorExtent> extents) {
  const std::vector<TensorExtent> v(extents);
  dmlref::detail::check_no_overlap("JOIN", std::span<const TensorExtent>(v));
}

void check_overlap(std::initializer_list<BoundTensor> bound) {
  const std::vector<BoundTensor> v(bound);
  dmlref::detail::check_no_overlap("JOIN", std::span<const BoundTensor>(v));
}

}  // namespace

// ---- T8: DMLCalcBufferTensorSize ----------------------------------------------------------------

TEST_CASE("calc_buffer_tensor_size: every worked value of T8") {
  struct Worked {
    DataType type;
    std::vector<std::uint32_t> sizes;
    std::vector<std::uint32_t> strides;
    std::uint64_t bytes;
  };
  const Worked worked[] = {
      {DataType::Float32, {1, 1, 2, 3}, {}, 24},
      {DataType::Float16, {3}, {}, 8},
      {DataType::UInt8, {5}, {}, 8},
      {DataType::Float32, {2, 3}, {0, 1}, 12},
      {DataType::Float32, {2, 3}, {0, 0}, 4},
      {DataType::Float32, {2, 3}, {5, 1}, 32},
      {DataType::UInt8, {1, 1, 3, 5}, {15, 15, 5, 1}, 16},
      {DataType::Int64, {3}, {}, 24},
  };
  for (const Worked& w : worked) {
    CAPTURE(dmlref::data_type_name(w.type));
    CAPTURE(w.sizes.size());
    CHECK(calc(w.type, w.sizes, w.strides) == w.bytes);
    CHECK(dmlref::calc_buffer_tensor_size(w.type, static_cast<std::uint32_t>(w.sizes.size()),
                                          w.sizes.data(),
                                          w.strides.empty() ? nullptr : w.strides.data()) == w.bytes);
    const TensorDesc td(w.type, w.sizes, w.strides);
    CHECK(td.total_tensor_size_in_bytes == w.bytes);
    CHECK(td.desc().TotalTensorSizeInBytes == w.bytes);
  }
}

TEST_CASE("calc_buffer_tensor_size: more cases, and null Strides means packed (T5)") {
  CHECK(calc(DataType::Int8, {1}) == 4);
  CHECK(calc(DataType::Int8, {4}) == 4);
  CHECK(calc(DataType::Int8, {5}) == 8);
  CHECK(calc(DataType::Float64, {1}) == 8);
  CHECK(calc(DataType::UInt16, {2, 3, 4}) == 48);
  CHECK(calc(DataType::UInt16, {2, 3, 4}, {12, 4, 1}) == 48);
  CHECK(calc(DataType::Float32, {3, 2}, {1, 3}) == 24);  // transposed: last element at offset 5
  CHECK(calc(DataType::Float16, {2, 3}, {8, 1}) == 24);   // last at 10: 22 bytes, rounded to 24
  // Every shape of rank 1-8: null Strides and explicit packed strides agree.
  for (std::uint32_t rank = 1; rank <= 8; ++rank) {
    std::vector<std::uint32_t> sizes(rank);
    for (std::uint32_t d = 0; d < rank; ++d) sizes[d] = 1 + (d * 5 + rank) % 4;
    const Layout packed = Layout::packed(std::span<const std::uint32_t>(sizes));
    std::vector<std::uint32_t> strides(rank);
    for (std::uint32_t d = 0; d < rank; ++d) strides[d] = static_cast<std::uint32_t>(packed.strides[d]);
    CAPTURE(rank);
    CHECK(calc(DataType::Int16, sizes) == calc(DataType::Int16, sizes, strides));
    CHECK(calc(DataType::Int16, sizes) == (packed.element_count() * 2 + 3) / 4 * 4);
    const TensorDesc td(DataType::Int16, sizes);
    CHECK(validate_input(td.desc()).layout == packed);
  }
}

TEST_CASE("calc_buffer_tensor_size: a strides span of the wrong length is an error (T5)") {
  DMLREF_CHECK_ERROR(calc(DataType::Float32, {2, 3}, {1}), ErrorCode::T5,
                     "DMLCalcBufferTensorSize: 2 sizes but 1 strides; give one stride per "
                     "dimension or none");
  DMLREF_CHECK_ERROR(calc(DataType::Float32, {2, 3}, {3, 1, 1}), ErrorCode::T5,
                     "2 sizes but 3 strides");
}

TEST_CASE("calc_buffer_tensor_size rejects what a description would (T1-T4)") {
  DMLREF_CHECK_ERROR(calc(DataType::Unknown, {2}), ErrorCode::T1,
                     "DMLCalcBufferTensorSize: tensor.DataType is UNKNOWN");
  DMLREF_CHECK_ERROR(calc(DataType::Float32, {}), ErrorCode::T2, "DimensionCount is 0");
  DMLREF_CHECK_ERROR(calc(DataType::Float32, {1, 1, 1, 1, 1, 1, 1, 1, 1}), ErrorCode::T2,
                     "DimensionCount is 9");
  DMLREF_CHECK_ERROR(calc(DataType::Float32, {2, 0}), ErrorCode::T3, "tensor.Sizes[1] is 0");
  DMLREF_CHECK_ERROR(calc(DataType::UInt8, {65536, 65536}), ErrorCode::T4,
                     "hold 4294967296 elements");
  DMLREF_CHECK_ERROR(dmlref::calc_buffer_tensor_size(DataType::Float32, 2, nullptr),
                     ErrorCode::NullPointer, "tensor.Sizes is null");
}

// ---- T1-T4: the description's header and sizes -------------------------------------------------

TEST_CASE("T1: DataType UNKNOWN or outside DML_TENSOR_DATA_TYPE is an error") {
  TensorDesc td(DataType::Float32, {2, 3});
  td.data_type = DataType::Unknown;
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T1,
                     "JOIN: InputTensors[0].DataType is UNKNOWN; it must be one of FLOAT64, "
                     "FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8 [T1]");
  td.data_type = static_cast<DataType>(99);
  DMLREF_CHECK_ERROR(validate_output(td.desc()), ErrorCode::T1,
                     "JOIN: OutputTensor.DataType is 99 (not a DML_TENSOR_DATA_TYPE)");
  Storage s;
  const auto d = td.desc();
  DMLREF_CHECK_ERROR(dmlref::bind_tensor("JOIN", "InputTensors[2]", &d, s.at(0), 512, false),
                     ErrorCode::T1, "InputTensors[2].DataType is 99");
}

TEST_CASE("T2: DimensionCount 0 or 9 is an error") {
  TensorDesc td(DataType::Float32, {2, 3});
  td.sizes = {};
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T2,
                     "JOIN: InputTensors[0].DimensionCount is 0; it must be between 1 and 8 [T2]");
  td.sizes = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T2,
                     "InputTensors[0].DimensionCount is 9; it must be between 1 and 8");
  td.sizes = {1, 1, 1, 1, 1, 1, 1, 1};  // eight is the most
  CHECK(validate_input(td.desc()).layout.rank == 8);
}

TEST_CASE("T3: a size of 0 is an error") {
  TensorDesc td(DataType::Float32, {2, 3, 4});
  td.sizes = {2, 0, 4};
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T3,
                     "JOIN: InputTensors[0].Sizes[1] is 0; every size must be at least 1");
  td.sizes = {2, 3, 0};
  DMLREF_CHECK_ERROR(validate_output(td.desc()), ErrorCode::T3, "OutputTensor.Sizes[2] is 0");
}

TEST_CASE("T4: at most 2^32 - 1 elements; overflow is the same error, never a wrap") {
  // 65535 * 65537 = 2^32 - 1: the largest legal count. Packed UINT8 needs 2^32 bytes.
  TensorDesc largest(DataType::UInt8, {65535, 65537});
  CHECK(largest.total_tensor_size_in_bytes == 0x100000000ull);
  auto v = validate_input(largest.desc());
  CHECK(v.layout.element_count() == 0xFFFFFFFFull);
  CHECK(validate_output(largest.desc()).layout.element_count() == 0xFFFFFFFFull);
  // Broadcast strides keep the bytes tiny; the count still counts.
  TensorDesc broadcast(DataType::Float64, {65535, 65537}, {0, 0});
  CHECK(broadcast.total_tensor_size_in_bytes == 8);
  CHECK(validate_input(broadcast.desc()).layout.element_count() == 0xFFFFFFFFull);

  TensorDesc td = broadcast;
  td.sizes = {65536, 65536};
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T4,
                     "JOIN: InputTensors[0].Sizes {65536,65536} hold 4294967296 elements; at most "
                     "4294967295 (2^32 - 1) are allowed");
  // 2^64 exactly: a wrapping product is 0 and would pass a "<= 2^32 - 1" check.
  td.sizes = {65536, 65536, 65536, 65536};
  td.strides = {0, 0, 0, 0};
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T4,
                     "Sizes {65536,65536,65536,65536} hold more than 2^64 elements");
  td.sizes = {65536, 65536, 65536, 65536, 2};
  td.strides = {0, 0, 0, 0, 0};
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T4, "hold more than 2^64 elements");
  td.sizes = {kU32Max, kU32Max, kU32Max, kU32Max, kU32Max, kU32Max, kU32Max, kU32Max};
  td.strides = std::vector<std::uint32_t>(8, 0);
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T4, "hold more than 2^64 elements");
  DMLREF_CHECK_ERROR(calc(DataType::UInt8, {65536, 65536, 65536, 65536}), ErrorCode::T4,
                     "more than 2^64");
}

// ---- T5-T7: addressing ---------------------------------------------------------------------------

TEST_CASE("T5/T6: a bound description's view reads element sum c[i] * Strides[i]") {
  std::vector<float> data = dmlref::test::distinct_buffer<float>(8);
  const TensorDesc padded(DataType::Float32, {2, 3}, {5, 1});
  const auto d = padded.desc();
  const BoundTensor b = dmlref::bind_tensor("JOIN", "InputTensors[0]", &d, data.data(),
                                            data.size() * sizeof(float), false);
  CHECK(b.tensor.name == "InputTensors[0]");
  CHECK(b.tensor.data_type == DataType::Float32);
  CHECK_FALSE(b.tensor.is_output);
  CHECK(b.tensor.layout == Layout::strided({2, 3}, {5, 1}));
  const TensorView<const float> view = dmlref::view_of<const float>(b);
  for (std::uint32_t i = 0; i < 2; ++i) {
    for (std::uint32_t j = 0; j < 3; ++j) CHECK(&view.at({i, j}) == &data[5 * i + j]);
  }
  // Null Strides: packed row-major.
  const TensorDesc packed(DataType::Float32, {2, 3});
  const auto dp = packed.desc();
  CHECK(dp.Strides == nullptr);
  const auto vp = dmlref::view_of<const float>(
      dmlref::bind_tensor("JOIN", "InputTensors[1]", &dp, data.data(), 24, false));
  CHECK(&vp.at({1, 0}) == &data[3]);
  CHECK(&vp.at({1, 2}) == &data[5]);
  // The ValidatedTensor overload of view_of.
  float* base = data.data();
  CHECK(&dmlref::view_of(b.tensor, base).at({1, 1}) == &data[6]);
}

TEST_CASE("T6: TensorView::at rejects a coordinate out of range or of the wrong length") {
  std::int16_t data[24] = {};
  const TensorView<std::int16_t> v(data, {2, 3, 4});
  DMLREF_CHECK_ERROR(v.at({0, 3, 0}), ErrorCode::T6,
                     "TensorView::at: coordinate[1] is 3 but Sizes[1] is 3; it must be smaller");
  DMLREF_CHECK_ERROR(v.at({2, 0, 0}), ErrorCode::T6, "coordinate[0] is 2 but Sizes[0] is 2");
  DMLREF_CHECK_ERROR(v.at({0, 0, kU32Max}), ErrorCode::T6, "coordinate[2] is 4294967295");
  DMLREF_CHECK_ERROR(v.at({0, 0}), ErrorCode::T6,
                     "TensorView::at: 2 coordinates given but the view has 3 dimensions");
  DMLREF_CHECK_ERROR(v.at({0, 0, 0, 0}), ErrorCode::T6, "4 coordinates given");
  DMLREF_CHECK_ERROR(v.at({}), ErrorCode::T6, "0 coordinates given");
  CHECK(&v.at({1, 2, 3}) == &data[23]);
}

TEST_CASE("T7: zero strides are accepted on inputs and read the same element") {
  float floats[3] = {0.5f, 1.5f, 2.5f};

  const TensorDesc rows(DataType::Float32, {2, 3}, {0, 1});
  const auto dr = rows.desc();
  const auto vr = dmlref::view_of<const float>(
      dmlref::bind_tensor("JOIN", "InputTensors[0]", &dr, floats, 12, false));
  for (std::uint32_t j = 0; j < 3; ++j) {
    CHECK(&vr.at({0, j}) == &floats[j]);
    CHECK(&vr.at({1, j}) == &floats[j]);
  }
  const TensorDesc scalar(DataType::Float32, {2, 3}, {0, 0});
  const auto ds = scalar.desc();
  const auto vs = dmlref::view_of<const float>(
      dmlref::bind_tensor("JOIN", "InputTensors[1]", &ds, floats, 4, false));
  int same = 0;
  dmlref::for_each_coordinate(vs.layout(), [&](const dmlref::Coord& c) {
    same += &vs[c] == floats ? 1 : 0;
  });
  CHECK(same == 6);
  // Overlapping non-zero strides are fine on an input too: only outputs must be injective.
  const TensorDesc overlapping(DataType::Float32, {2, 2}, {1, 1});
  CHECK_NOTHROW(validate_input(overlapping.desc()));
}

// ---- T8: TotalTensorSizeInBytes and 64-bit overflow ----------------------------------------------

TEST_CASE("T8: TotalTensorSizeInBytes below the minimum is an error") {
  TensorDesc td(DataType::Float32, {2, 3}, {5, 1});
  REQUIRE(td.total_tensor_size_in_bytes == 32);
  CHECK_NOTHROW(validate_input(td.desc()));
  td.total_tensor_size_in_bytes = 31;
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T8,
                     "JOIN: InputTensors[0].TotalTensorSizeInBytes is 31 but the tensor needs at "
                     "least 32 bytes (DMLCalcBufferTensorSize) [T8]");
  // The rounding to 4 is part of the minimum: 6 bytes of FLOAT16 data need 8.
  TensorDesc half(DataType::Float16, {3});
  half.total_tensor_size_in_bytes = 7;
  DMLREF_CHECK_ERROR(validate_output(half.desc()), ErrorCode::T8,
                     "OutputTensor.TotalTensorSizeInBytes is 7 but the tensor needs at least 8");
  half.total_tensor_size_in_bytes = 0;
  DMLREF_CHECK_ERROR(validate_output(half.desc()), ErrorCode::T8, "TotalTensorSizeInBytes is 0");
  // More than the minimum is fine.
  half.total_tensor_size_in_bytes = 1024;
  CHECK_NOTHROW(validate_output(half.desc()));
}

TEST_CASE("T8: a minimum size that overflows 64 bits is an error, never a wrap") {
  // Last element at (2^31 - 1)(2^32 - 1) < 2^63: the element offset fits, 8x it does not.
  TensorDesc td(DataType::UInt8, {1});
  td.data_type = DataType::Int64;
  td.sizes = {0x80000000u};
  td.strides = {kU32Max};
  td.total_tensor_size_in_bytes = std::numeric_limits<std::uint64_t>::max();
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T8,
                     "JOIN: InputTensors[0].Strides {4294967295} with Sizes {2147483648} need "
                     "more than 2^64 bytes");
  DMLREF_CHECK_ERROR(calc(DataType::Int64, {0x80000000u}, {kU32Max}), ErrorCode::T8,
                     "DMLCalcBufferTensorSize: tensor with Sizes {2147483648} and Strides "
                     "{4294967295} needs more than 2^64 bytes");
  // Last element at 2^63 - 2: (2^63 - 1) * 2 = 2^64 - 2 bytes fit, but rounding up to 4 does not.
  DMLREF_CHECK_ERROR(calc(DataType::Float16, {2147483650u}, {4294967294u}), ErrorCode::T8,
                     "needs more than 2^64 bytes");
  // Last element at (2^32 - 2)(2^32 - 1), past a 64-bit signed offset; INT64 makes the byte count
  // overflow as well.
  td.sizes = {kU32Max};
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T8,
                     "InputTensors[0].Strides {4294967295} with Sizes {4294967295} reach past a "
                     "64-bit element offset");
  DMLREF_CHECK_ERROR(calc(DataType::Int64, {kU32Max}, {kU32Max}), ErrorCode::T8, "64-bit");
  // Spread over two dimensions: last element at 2^30 (2^32 - 1), about 2^62.
  DMLREF_CHECK_ERROR(calc(DataType::Int64, {1u << 30, 2}, {kU32Max, kU32Max}), ErrorCode::T8,
                     "more than 2^64 bytes");
  CHECK(calc(DataType::UInt8, {65536, 2}, {kU32Max, 1}) == (65535ull * kU32Max + 2 + 3) / 4 * 4);
}

TEST_CASE("T8 on the typed layer: a view whose byte range leaves 64 bits is an error") {
  std::int8_t bytes[2] = {};
  float floats[2] = {};
  // The largest element offset is INT64_MAX itself: one past it must not wrap.
  const TensorView<std::int8_t> edge(bytes, Layout::strided({2}, {kInt64Max}));
  DMLREF_CHECK_ERROR(dmlref::detail::check_view("JOIN", "InputTensors[0]", edge, false),
                     ErrorCode::T8,
                     "JOIN: InputTensors[0].Strides {9223372036854775807} with Sizes {2} reach "
                     "past a 64-bit byte offset");
  const TensorView<float> wide(floats, Layout::strided({2}, {std::int64_t{1} << 61}));
  DMLREF_CHECK_ERROR(dmlref::detail::check_view("JOIN", "OutputTensor", wide, true), ErrorCode::T8,
                     "reach past a 64-bit byte offset");
  const TensorView<float> negative(floats, Layout::strided({3}, {-(std::int64_t{1} << 61)}));
  DMLREF_CHECK_ERROR(dmlref::detail::check_view("JOIN", "InputTensors[0]", negative, false),
                     ErrorCode::T8, "reach past a 64-bit byte offset");
  const TensorView<float> elements(floats, Layout::strided({3}, {kInt64Max}));
  DMLREF_CHECK_ERROR(dmlref::detail::check_view("JOIN", "InputTensors[0]", elements, false),
                     ErrorCode::T8, "reach past a 64-bit element offset");
  const TensorView<float> fits(floats, Layout::strided({2}, {std::int64_t{1} << 60}));
  CHECK_NOTHROW(dmlref::detail::check_view("JOIN", "InputTensors[0]", fits, false));
}

// ---- T9, T10: alignment and the buffer -----------------------------------------------------------

TEST_CASE("T9: GuaranteedBaseOffsetAlignment must be 0 or a power of two >= the element size") {
  TensorDesc td(DataType::Float32, {2, 3});
  td.guaranteed_base_offset_alignment = 3;
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T9,
                     "JOIN: InputTensors[0].GuaranteedBaseOffsetAlignment is 3; it must be 0 or a "
                     "power of two no smaller than the element size (4)");
  td.guaranteed_base_offset_alignment = 2;
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T9,
                     "GuaranteedBaseOffsetAlignment is 2; it must be 0 or a power of two no "
                     "smaller than the element size (4)");
  td.guaranteed_base_offset_alignment = 12;
  DMLREF_CHECK_ERROR(validate_output(td.desc()), ErrorCode::T9,
                     "OutputTensor.GuaranteedBaseOffsetAlignment is 12");
  for (std::uint32_t ok : {0u, 4u, 8u, 16u, 256u, 0x80000000u}) {
    CAPTURE(ok);
    td.guaranteed_base_offset_alignment = ok;
    CHECK_NOTHROW(validate_input(td.desc()));
  }
  TensorDesc bytes(DataType::UInt8, {5});
  bytes.guaranteed_base_offset_alignment = 1;
  CHECK_NOTHROW(validate_input(bytes.desc()));
  TensorDesc doubles(DataType::Float64, {5});
  doubles.guaranteed_base_offset_alignment = 4;
  DMLREF_CHECK_ERROR(validate_input(doubles.desc()), ErrorCode::T9, "element size (8)");
}

TEST_CASE("T9: the buffer must honour GuaranteedBaseOffsetAlignment and the element alignment") {
  Storage s;
  TensorDesc td(DataType::Float32, {2, 3});
  td.guaranteed_base_offset_alignment = 16;
  const auto d = td.desc();
  CHECK_NOTHROW(dmlref::bind_tensor("JOIN", "InputTensors[0]", &d, s.at(32), 24, false));
  DMLREF_CHECK_ERROR(dmlref::bind_tensor("JOIN", "InputTensors[0]", &d, s.at(36), 24, false),
                     ErrorCode::T9,
                     "JOIN: the buffer of InputTensors[0] starts at an address that is 4 bytes "
                     "past a multiple of InputTensors[0].GuaranteedBaseOffsetAlignment (16); it "
                     "must be aligned to it");

  // No promised alignment: the CPU still needs element alignment to read the buffer.
  td.guaranteed_base_offset_alignment = 0;
  const auto d0 = td.desc();
  CHECK_NOTHROW(dmlref::bind_tensor("JOIN", "InputTensors[0]", &d0, s.at(4), 24, false));
  DMLREF_CHECK_ERROR(dmlref::bind_tensor("JOIN", "OutputTensor", &d0, s.at(2), 24, true),
                     ErrorCode::T9,
                     "JOIN: the buffer of OutputTensor starts at an address that is 2 bytes past "
                     "a multiple of its element size (4); it must be element-aligned");
  const TensorDesc half(DataType::Float16, {3});
  const auto dh = half.desc();
  DMLREF_CHECK_ERROR(dmlref::bind_tensor("JOIN", "InputTensors[0]", &dh, s.at(1), 8, false),
                     ErrorCode::T9, "1 bytes past a multiple of its element size (2)");
  const TensorDesc bytes(DataType::Int8, {3});
  const auto db = bytes.desc();
  CHECK_NOTHROW(dmlref::bind_tensor("JOIN", "InputTensors[0]", &db, s.at(1), 4, false));
}

TEST_CASE("T10: the buffer must hold TotalTensorSizeInBytes") {
  Storage s;
  TensorDesc td(DataType::Int64, {3});
  const auto d = td.desc();
  CHECK_NOTHROW(dmlref::bind_tensor("JOIN", "InputTensors[0]", &d, s.at(0), 24, false));
  DMLREF_CHECK_ERROR(dmlref::bind_tensor("JOIN", "InputTensors[0]", &d, s.at(0), 23, false),
                     ErrorCode::T10,
                     "JOIN: the buffer of InputTensors[0] holds 23 bytes but "
                     "InputTensors[0].TotalTensorSizeInBytes is 24; the buffer must hold at least "
                     "that many [T10]");
  // The promise is TotalTensorSizeInBytes, not the minimum the elements need.
  td.total_tensor_size_in_bytes = 40;
  const auto big = td.desc();
  DMLREF_CHECK_ERROR(dmlref::bind_tensor("JOIN", "OutputTensor", &big, s.at(0), 39, true),
                     ErrorCode::T10, "holds 39 bytes but OutputTensor.TotalTensorSizeInBytes is 40");
  CHECK_NOTHROW(dmlref::bind_tensor("JOIN", "OutputTensor", &big, s.at(0), 40, true));
}

// ---- T11: flags ------------------------------------------------------------------------------------

TEST_CASE("T11: Flags is NONE or OWNED_BY_DML, and OWNED_BY_DML only on inputs") {
  TensorDesc td(DataType::UInt16, {4});
  td.flags = TensorFlags::OwnedByDml;
  CHECK_NOTHROW(validate_input(td.desc()));
  DMLREF_CHECK_ERROR(validate_output(td.desc()), ErrorCode::T11,
                     "JOIN: OutputTensor.Flags is DML_TENSOR_FLAG_OWNED_BY_DML (1); that flag is "
                     "for inputs only [T11]");
  td.flags = static_cast<TensorFlags>(2);
  DMLREF_CHECK_ERROR(validate_input(td.desc()), ErrorCode::T11,
                     "JOIN: InputTensors[0].Flags is 2; it must be DML_TENSOR_FLAG_NONE (0) or "
                     "DML_TENSOR_FLAG_OWNED_BY_DML (1)");
  td.flags = static_cast<TensorFlags>(3);
  DMLREF_CHECK_ERROR(validate_output(td.desc()), ErrorCode::T11, "OutputTensor.Flags is 3");
}

// ---- T12: outputs address each element once ------------------------------------------------------

TEST_CASE("T12: an output with a zero stride is an error") {
  const TensorDesc td(DataType::Float32, {2, 3}, {0, 1});
  DMLREF_CHECK_ERROR(validate_output(td.desc()), ErrorCode::T12,
                     "JOIN: OutputTensor.Strides[0] is 0 with Sizes[0] 2; an output must not "
                     "address an element twice");
  const TensorDesc all_zero(DataType::Int8, {1, 1, 3}, {0, 0, 0});
  DMLREF_CHECK_ERROR(validate_output(all_zero.desc()), ErrorCode::T12, "Strides[2] is 0");
  // A zero stride on a size-1 dimension addresses nothing twice.
  const TensorDesc size_one(DataType::Float32, {1, 3}, {0, 1});
  CHECK_NOTHROW(validate_output(size_one.desc()));
  // The same rule on the typed layer.
  float data[3] = {};
  const TensorView<float> v(data, Layout::strided({2, 3}, {0, 1}));
  DMLREF_CHECK_ERROR(dmlref::detail::check_view("JOIN", "OutputTensor", v, true), ErrorCode::T12,
                     "OutputTensor.Strides[0] is 0 with Sizes[0] 2");
  CHECK_NOTHROW(dmlref::detail::check_view("JOIN", "InputTensors[0]", v, false));
}

TEST_CASE("T12: an output whose strides address an element twice is an error") {
  const TensorDesc td(DataType::Float32, {2, 2}, {1, 1});
  DMLREF_CHECK_ERROR(validate_output(td.desc()), ErrorCode::T12,
                     "JOIN: OutputTensor.Strides {1,1} with Sizes {2,2} address some element "
                     "twice; an output must address each element once");
  const TensorDesc td3(DataType::UInt32, {3, 2, 4}, {2, 3, 1});  // (0,1,0) and (1,0,1) meet at 3
  DMLREF_CHECK_ERROR(validate_output(td3.desc()), ErrorCode::T12, "address some element twice");
  float data[8] = {};
  const TensorView<float> v(data + 7, Layout::strided({2, 4}, {-2, -1}));
  DMLREF_CHECK_ERROR(dmlref::detail::check_view("JOIN", "OutputTensor", v, true), ErrorCode::T12,
                     "Strides {-2,-1} with Sizes {2,4} address some element twice");
}

TEST_CASE("T12: interleaved but injective outputs are accepted; large ones rejected saying so") {
  // Offsets 0,3,2,5,4,7: the strides interleave, yet no element is addressed twice.
  const TensorDesc interleaved(DataType::Float32, {3, 2}, {2, 3});
  CHECK_NOTHROW(validate_output(interleaved.desc()));
  const TensorDesc deeper(DataType::Float32, {3, 2, 1000}, {2, 3, 8});
  CHECK_NOTHROW(validate_output(deeper.desc()));
  const TensorDesc transposed(DataType::Float32, {3, 4}, {1, 3});
  CHECK_NOTHROW(validate_output(transposed.desc()));
  const TensorDesc padded(DataType::Float32, {3, 4}, {9, 2});
  CHECK_NOTHROW(validate_output(padded.desc()));
  // Same interleaving, too many elements to enumerate: the check says it is conservative.
  const TensorDesc large(DataType::UInt8, {3, 2, 1u << 21}, {2, 3, 8});
  DMLREF_CHECK_ERROR(validate_output(large.desc()), ErrorCode::T12,
                     "interleave and the output is too large to prove they never address an "
                     "element twice (conservative check)");
  CHECK_NOTHROW(validate_input(large.desc()));
  // Reversed typed views are injective too.
  float data[6] = {};
  const TensorView<float> reversed(data + 5, Layout::strided({2, 3}, {-3, -1}));
  CHECK_NOTHROW(dmlref::detail::check_view("JOIN", "OutputTensor", reversed, true));
}

TEST_CASE("T12: the exact check's three ways (reach, bit set, sort) agree with the offsets") {
  // Every way below decides exactly; which one runs depends on the reach of the offsets (largest
  // minus smallest, over the strides' gcd) against the element count. The verdicts are checked by
  // hand: "(a, b, c) and (a', b', c') meet at k" names the repeat.
  const auto accepted = [](std::vector<std::uint32_t> sizes, std::vector<std::uint32_t> strides) {
    const TensorDesc td(DataType::UInt8, sizes, strides);
    CHECK_NOTHROW(validate_output(td.desc()));
  };
  const auto rejected = [](std::vector<std::uint32_t> sizes, std::vector<std::uint32_t> strides) {
    const TensorDesc td(DataType::UInt8, sizes, strides);
    DMLREF_CHECK_ERROR(validate_output(td.desc()), ErrorCode::T12,
                       "address some element twice; an output must address each element once");
  };
  SUBCASE("reach below the count: a repeat by pigeonhole, after dividing out the gcd") {
    // Offsets 2^20 a + 2^16 b: (1, 0) and (0, 16) meet at 2^20. Over the gcd 2^16 the reach is
    // 16 + 2^20 - 1 for 2^21 elements. (This layout once took 9 s in the sanitized fuzzer.)
    rejected({2, 1u << 20, 1}, {1u << 20, 1u << 16, 1});
    // The same past the enumeration limit (2^23 elements) is an exact answer, not the
    // conservative one.
    rejected({2, 1u << 22}, {1u << 20, 1u << 16});
  }
  SUBCASE("reach up to 8 per element: one bit per offset") {
    accepted({3, 2, 2}, {2, 3, 10});   // 2a + 3b covers 0, 3, 2, 5, 4, 7; reach 17 for 12
    rejected({3, 2, 2}, {1, 2, 10});   // (2, 0, 0) and (0, 1, 0) meet at 2; reach 14 for 12
    accepted({3, 2, 1000}, {4, 6, 16});  // the {2, 3, 8} interleaving times the gcd 2
  }
  SUBCASE("a wider reach: the offsets sorted") {
    accepted({3, 2, 2}, {2, 3, 1000});  // reach 1007 for 12
    rejected({3, 2, 2}, {1, 2, 1000});  // (2, 0, 0) and (0, 1, 0) meet at 2
  }
  SUBCASE("negative strides of typed views, one bit per offset") {
    std::uint8_t data[32] = {};
    // Offsets -2a + 3b + 10c, from -4 to 13: 0, 3, -2, 1, -4, -1, each + 10c.
    const TensorView<std::uint8_t> apart(data + 4, Layout::strided({3, 2, 2}, {-2, 3, 10}));
    CHECK_NOTHROW(dmlref::detail::check_view("JOIN", "OutputTensor", apart, true));
    // Offsets -a - 2b + 10c: (2, 0, 0) and (0, 1, 0) meet at -2.
    const TensorView<std::uint8_t> meet(data + 4, Layout::strided({3, 2, 2}, {-1, -2, 10}));
    DMLREF_CHECK_ERROR(dmlref::detail::check_view("JOIN", "OutputTensor", meet, true),
                       ErrorCode::T12, "address some element twice");
  }
}

// ---- T13: aliasing -------------------------------------------------------------------------------

TEST_CASE("T13: an output overlapping an input is an error (views)") {
  float buffer[24] = {};
  const TensorView<float> in(buffer, {6});
  const auto in_extent = dmlref::tensor_extent("InputTensors[0]", in, false);
  CHECK(in_extent.begin == reinterpret_cast<std::uintptr_t>(buffer));
  CHECK(in_extent.end == reinterpret_cast<std::uintptr_t>(buffer + 6));
  CHECK(in_extent.name == "InputTensors[0]");
  CHECK_FALSE(in_extent.is_output);

  const TensorView<float> overlapping(buffer + 4, {6});
  DMLREF_CHECK_ERROR(
      check_overlap({in_extent, dmlref::tensor_extent("OutputTensor", overlapping, true)}),
      ErrorCode::T13,
      "JOIN: OutputTensor (bytes [16, 40)) overlaps InputTensors[0] (bytes [0, 24)), relative to "
      "the lower start; no output may overlap an input or another output");
  // In place: the output is the input.
  DMLREF_CHECK_ERROR(check_overlap({dmlref::tensor_extent("OutputTensor", in, true), in_extent}),
                     ErrorCode::T13, "OutputTensor (bytes [0, 24)) overlaps InputTensors[0]");
  // One byte of overlap is enough.
  const TensorView<std::uint8_t> last_byte(reinterpret_cast<std::uint8_t*>(buffer) + 23, {4});
  DMLREF_CHECK_ERROR(
      check_overlap({in_extent, dmlref::tensor_extent("OutputTensor", last_byte, true)}),
      ErrorCode::T13, "OutputTensor (bytes [23, 27)) overlaps InputTensors[0] (bytes [0, 24))");
  // Adjacent ranges do not overlap.
  const TensorView<float> adjacent(buffer + 6, {6});
  CHECK_NOTHROW(check_overlap({in_extent, dmlref::tensor_extent("OutputTensor", adjacent, true)}));
  CHECK_NOTHROW(check_overlap({dmlref::tensor_extent("OutputTensor", adjacent, true), in_extent}));
}

TEST_CASE("T13: two outputs overlapping is an error; inputs may overlap each other") {
  float buffer[24] = {};
  const TensorView<float> in0(buffer, {6});
  const TensorView<float> in1(buffer + 2, {6});
  const TensorView<float> out0(buffer + 8, {4});
  const TensorView<float> out1(buffer + 11, {4});
  const TensorView<float> out2(buffer + 12, {4});
  DMLREF_CHECK_ERROR(check_overlap({dmlref::tensor_extent("InputTensors[0]", in0, false),
                                    dmlref::tensor_extent("OutputTensors[0]", out0, true),
                                    dmlref::tensor_extent("OutputTensors[1]", out1, true)}),
                     ErrorCode::T13,
                     "JOIN: OutputTensors[0] (bytes [0, 16)) overlaps OutputTensors[1] (bytes [12, "
                     "28))");
  // Inputs overlapping each other, and one input bound twice, are fine (DirectML's samples do it).
  CHECK_NOTHROW(check_overlap({dmlref::tensor_extent("InputTensors[0]", in0, false),
                               dmlref::tensor_extent("InputTensors[1]", in1, false),
                               dmlref::tensor_extent("InputTensors[2]", in0, false),
                               dmlref::tensor_extent("OutputTensors[0]", out0, true),
                               dmlref::tensor_extent("OutputTensors[1]", out2, true)}));
}

TEST_CASE("T13: extents of negative-stride views, and the byte-range check's conservatism") {
  float buffer[24] = {};
  // Coordinate 0 at buffer[5], running back to buffer[0].
  const TensorView<float> reversed(buffer + 5, Layout::strided({6}, {-1}));
  const auto e = dmlref::tensor_extent("InputTensors[0]", reversed, false);
  CHECK(e.begin == reinterpret_cast<std::uintptr_t>(buffer));
  CHECK(e.end == reinterpret_cast<std::uintptr_t>(buffer + 6));
  const TensorView<float> next(buffer + 11, Layout::strided({6}, {-1}));  // buffer[6..11]
  CHECK_NOTHROW(check_overlap({e, dmlref::tensor_extent("OutputTensor", next, true)}));
  const TensorView<float> touching(buffer + 10, Layout::strided({6}, {-1}));  // buffer[5..10]
  DMLREF_CHECK_ERROR(check_overlap({e, dmlref::tensor_extent("OutputTensor", touching, true)}),
                     ErrorCode::T13, "OutputTensor (bytes [20, 44)) overlaps InputTensors[0]");

  // Even and odd elements never share a byte, but their ranges overlap: reported, and the message
  // says the check compares ranges.
  const TensorView<float> evens(buffer, Layout::strided({3}, {2}));
  const TensorView<float> odds(buffer + 1, Layout::strided({3}, {2}));
  DMLREF_CHECK_ERROR(check_overlap({dmlref::tensor_extent("InputTensors[0]", evens, false),
                                    dmlref::tensor_extent("OutputTensor", odds, true)}),
                     ErrorCode::T13,
                     "byte-range check: tensors that interleave within one range count as "
                     "overlapping");
}

TEST_CASE("T13: bound tensors on one buffer") {
  Storage s;
  const TensorDesc packed(DataType::Float32, {2, 3});         // 24 bytes
  const TensorDesc broadcast(DataType::Float32, {2, 3}, {0, 1});  // 12 bytes
  const auto dp = packed.desc();
  const auto db = broadcast.desc();
  const auto bind = [&](const BufferTensorDesc& d, std::size_t offset, const char* name,
                        bool is_output) {
    return dmlref::bind_tensor("JOIN", name, &d, s.at(offset), 512 - offset, is_output);
  };
  DMLREF_CHECK_ERROR(check_overlap({bind(dp, 0, "InputTensors[0]", false),
                                    bind(dp, 16, "OutputTensor", true)}),
                     ErrorCode::T13, "JOIN: OutputTensor (bytes [16, 40)) overlaps InputTensors[0] "
                                     "(bytes [0, 24))");
  CHECK_NOTHROW(check_overlap({bind(dp, 0, "InputTensors[0]", false),
                               bind(dp, 24, "OutputTensor", true)}));
  // The extent is what the layout addresses, not TotalTensorSizeInBytes.
  CHECK_NOTHROW(check_overlap({bind(db, 0, "InputTensors[0]", false),
                               bind(dp, 12, "OutputTensor", true)}));
  DMLREF_CHECK_ERROR(check_overlap({bind(db, 0, "InputTensors[0]", false),
                                    bind(dp, 8, "OutputTensor", true)}),
                     ErrorCode::T13, "OutputTensor (bytes [8, 32)) overlaps InputTensors[0] "
                                     "(bytes [0, 12))");
  DMLREF_CHECK_ERROR(check_overlap({bind(dp, 0, "InputTensors[0]", false),
                                    bind(dp, 64, "OutputTensors[0]", true),
                                    bind(dp, 80, "OutputTensors[1]", true)}),
                     ErrorCode::T13, "OutputTensors[0] (bytes [0, 24)) overlaps OutputTensors[1] "
                                     "(bytes [16, 40))");
  CHECK_NOTHROW(check_overlap({bind(dp, 0, "InputTensors[0]", false),
                               bind(dp, 8, "InputTensors[1]", false),
                               bind(dp, 0, "InputTensors[2]", false),
                               bind(dp, 64, "OutputTensors[0]", true),
                               bind(dp, 88, "OutputTensors[1]", true)}));
}

// ---- null pointers ---------------------------------------------------------------------------------

TEST_CASE("a null description, Sizes or buffer is an error") {
  DMLREF_CHECK_ERROR(dmlref::detail::validate_tensor_desc("JOIN", "OutputTensor", nullptr, true),
                     ErrorCode::NullPointer, "JOIN: OutputTensor is null");
  TensorDesc td(DataType::Float32, {2, 3});
  auto d = td.desc();
  d.Sizes = nullptr;
  DMLREF_CHECK_ERROR(validate_input(d), ErrorCode::NullPointer, "InputTensors[0].Sizes is null");
  const auto good = td.desc();
  DMLREF_CHECK_ERROR(dmlref::bind_tensor("JOIN", "InputTensors[0]", &good, nullptr, 24, false),
                     ErrorCode::NullPointer, "JOIN: the buffer of InputTensors[0] is null");
  float data[6] = {};
  const TensorView<float> null_view(nullptr, Layout::packed({6}));
  DMLREF_CHECK_ERROR(dmlref::detail::check_view("JOIN", "OutputTensor", null_view, true),
                     ErrorCode::NullPointer, "OutputTensor has a null data pointer");
  CHECK_NOTHROW(dmlref::detail::check_view("JOIN", "OutputTensor",
                                           TensorView<float>(data, Layout::packed({6})), true));
}

// ---- dml_calc_buffer_tensor_size and buffer_tensor_desc ------------------------------------------

namespace {

std::uint64_t dml_calc(DataType type, const std::vector<std::uint32_t>& sizes,
                       const std::vector<std::uint32_t>& strides = {}) {
  return dmlref::dml_calc_buffer_tensor_size(type, static_cast<std::uint32_t>(sizes.size()),
                                             sizes.data(),
                                             strides.empty() ? nullptr : strides.data());
}

}  // namespace

TEST_CASE("dml_calc_buffer_tensor_size: T8's worked values, and calc_buffer_tensor_size's on valid input") {
  static_assert(noexcept(dmlref::dml_calc_buffer_tensor_size(DataType::Float32, 1, nullptr)));
  CHECK(dml_calc(DataType::Float32, {1, 1, 2, 3}) == 24);
  CHECK(dml_calc(DataType::Float16, {3}) == 8);
  CHECK(dml_calc(DataType::UInt8, {5}) == 8);
  CHECK(dml_calc(DataType::Float32, {2, 3}, {0, 1}) == 12);
  CHECK(dml_calc(DataType::Float32, {2, 3}, {0, 0}) == 4);
  CHECK(dml_calc(DataType::Float32, {2, 3}, {5, 1}) == 32);
  CHECK(dml_calc(DataType::UInt8, {1, 1, 3, 5}, {15, 15, 5, 1}) == 16);
  CHECK(dml_calc(DataType::Int64, {3}) == 24);
  for (const DataType type : {DataType::Int8, DataType::UInt16, DataType::Float32,
                              DataType::Float64, DataType::Int64}) {
    for (std::uint32_t rank = 1; rank <= 8; ++rank) {
      std::vector<std::uint32_t> sizes(rank), padded(rank);
      std::uint32_t stride = 1;
      for (std::uint32_t d = rank; d-- > 0;) {
        sizes[d] = 1 + (d * 3 + rank) % 5;
        padded[d] = stride;
        stride *= sizes[d] + 1;  // one element of padding per dimension
      }
      CAPTURE(rank);
      CHECK(dml_calc(type, sizes) == calc(type, sizes));
      CHECK(dml_calc(type, sizes, padded) == calc(type, sizes, padded));
    }
  }
}

TEST_CASE("dml_calc_buffer_tensor_size returns what DirectML's helper returns on invalid input") {
  const std::uint32_t sizes[] = {2, 3};
  // An unknown data type: 0, DirectML's "invalid" answer, where calc_buffer_tensor_size throws.
  CHECK(dmlref::dml_calc_buffer_tensor_size(DataType::Unknown, 2, sizes) == 0);
  CHECK(dmlref::dml_calc_buffer_tensor_size(static_cast<DataType>(12), 2, sizes) == 0);
  CHECK(dmlref::dml_calc_buffer_tensor_size(static_cast<DataType>(0xFFFFFFFFu), 2, sizes) == 0);
  // Inputs DirectML's helper reads out of bounds on: 0 here.
  CHECK(dmlref::dml_calc_buffer_tensor_size(DataType::Float32, 0, sizes) == 0);
  CHECK(dmlref::dml_calc_buffer_tensor_size(DataType::Float32, 2, nullptr) == 0);
  // A size of 0 (T3): packed, the product is 0; strided, (0 - 1) * stride wraps in 32 bits.
  CHECK(dml_calc(DataType::Float32, {0, 3}) == 0);
  CHECK(dml_calc(DataType::Float32, {0, 3}, {3, 1}) == (std::uint64_t{0xFFFFFFFDu} + 3) * 4);
  // More than 8 dimensions (T2) are summed like any others.
  CHECK(dml_calc(DataType::UInt8, std::vector<std::uint32_t>(9, 2)) == 512);
  // The strided last-element index is DirectML's 32-bit UINT: 2 * 2^31 wraps to 0, so one
  // element's worth; the exact form throws nothing here but gives the true size.
  CHECK(dml_calc(DataType::Float32, {3}, {0x80000000u}) == 4);
  CHECK(calc(DataType::Float32, {3}, {0x80000000u}) == (std::uint64_t{1} << 34) + 4);
  // Packed products wrap modulo 2^64 (2^31 * 2^31 * 4 is 2^64, so 0), and so does the rounding.
  CHECK(dml_calc(DataType::UInt8, {0x80000000u, 0x80000000u, 4}) == 0);
  CHECK(dml_calc(DataType::Float64, {0xFFFFFFFFu, 0xFFFFFFFFu}) ==
        0xFFFFFFFFull * 0xFFFFFFFFull * 8);
  CHECK(dml_calc(DataType::UInt8, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}) ==
        ((0xFFFFFFFFull * 0xFFFFFFFFull * 0xFFFFFFFFull + 3) & ~std::uint64_t{3}));
  // A wrapped size is too small, and validation says so (T8).
  const std::vector<std::uint32_t> big_sizes = {3}, big_strides = {0x80000000u};
  const BufferTensorDesc wrapped = dmlref::buffer_tensor_desc(DataType::Float32, big_sizes,
                                                              big_strides);
  CHECK(wrapped.TotalTensorSizeInBytes == 4);
  DMLREF_CHECK_ERROR(validate_input(wrapped), ErrorCode::T8, ".TotalTensorSizeInBytes is 4");
}

TEST_CASE("buffer_tensor_desc points into the caller's arrays and fills the minimum size") {
  const std::array<std::uint32_t, 3> sizes = {2, 3, 4};
  const std::array<std::uint32_t, 3> strides = {1, 2, 6};  // column-major
  const BufferTensorDesc packed = dmlref::buffer_tensor_desc(DataType::Float16, sizes);
  CHECK(packed.DataType == DataType::Float16);
  CHECK(packed.DimensionCount == 3);
  CHECK(packed.Sizes == sizes.data());  // no copy
  CHECK(packed.Strides == nullptr);
  CHECK(packed.TotalTensorSizeInBytes == 48);
  CHECK(packed.Flags == TensorFlags::None);
  CHECK(packed.GuaranteedBaseOffsetAlignment == 0);
  CHECK(validate_input(packed).layout == Layout::packed({2, 3, 4}));

  const BufferTensorDesc strided = dmlref::buffer_tensor_desc(DataType::Float32, sizes, strides);
  CHECK(strided.Strides == strides.data());
  CHECK(strided.TotalTensorSizeInBytes == 96);
  CHECK(validate_input(strided).layout == Layout::strided({2, 3, 4}, {1, 2, 6}));

  // An explicit TotalTensorSizeInBytes is kept as given, larger (padding) or too small (T8).
  const BufferTensorDesc roomy = dmlref::buffer_tensor_desc(DataType::Float32, sizes, {}, 1024);
  CHECK(roomy.Strides == nullptr);
  CHECK(roomy.TotalTensorSizeInBytes == 1024);
  CHECK_NOTHROW(validate_input(roomy));
  const BufferTensorDesc short_desc = dmlref::buffer_tensor_desc(DataType::Float32, sizes, {}, 92);
  DMLREF_CHECK_ERROR(validate_input(short_desc), ErrorCode::T8,
                     "InputTensors[0].TotalTensorSizeInBytes is 92 but the tensor needs at least 96");

  // The description sees later changes to the arrays: it holds pointers, not copies.
  std::vector<std::uint32_t> growing = {2, 3};
  const BufferTensorDesc live = dmlref::buffer_tensor_desc(DataType::Int8, growing);
  growing[1] = 5;
  CHECK(live.Sizes[1] == 5);

  // Invalid fields are not checked here; the operator's validation names them.
  const std::vector<std::uint32_t> zero = {2, 0};
  const BufferTensorDesc empty = dmlref::buffer_tensor_desc(DataType::Float32, zero);
  DMLREF_CHECK_ERROR(validate_input(empty), ErrorCode::T3, "InputTensors[0].Sizes[1] is 0");
  const BufferTensorDesc unknown = dmlref::buffer_tensor_desc(DataType::Unknown, sizes);
  CHECK(unknown.TotalTensorSizeInBytes == 0);
  DMLREF_CHECK_ERROR(validate_input(unknown), ErrorCode::T1, "InputTensors[0].DataType is");
}

TEST_CASE("buffer_tensor_desc: a stride count other than the size count is an error (T5)") {
  const std::vector<std::uint32_t> sizes = {2, 3}, one = {1};
  DMLREF_CHECK_ERROR(dmlref::buffer_tensor_desc(DataType::Float32, sizes, one), ErrorCode::T5,
                     "buffer_tensor_desc: 2 sizes but 1 strides; give one stride per dimension "
                     "or none");
}

// ---- the runtime entry points' `reversed` -------------------------------------------------------

TEST_CASE("reverse_dimensions: a bound tensor turned around reads those dimensions backwards") {
  std::vector<float> data = dmlref::test::distinct_buffer<float>(8);
  const TensorDesc padded(DataType::Float32, {2, 3}, {4, 1});
  const auto d = padded.desc();
  std::vector<BoundTensor> bound = {dmlref::bind_tensor("JOIN", "InputTensors[0]", &d, data.data(),
                                                        data.size() * sizeof(float), false)};
  dmlref::detail::reverse_dimensions("JOIN", bound, {});  // none given: as described
  CHECK(bound[0].data == data.data());
  CHECK(bound[0].tensor.layout == Layout::strided({2, 3}, {4, 1}));
  dmlref::detail::reverse_dimensions("JOIN", bound, std::vector<std::uint8_t>{0b11});
  CHECK(bound[0].tensor.layout == Layout::strided({2, 3}, {-4, -1}));
  const TensorView<const float> view = dmlref::view_of<const float>(bound[0]);
  for (std::uint32_t i = 0; i < 2; ++i) {
    for (std::uint32_t j = 0; j < 3; ++j) CHECK(&view.at({i, j}) == &data[4 * (1 - i) + 2 - j]);
  }
  DMLREF_CHECK_ERROR(dmlref::detail::reverse_dimensions("JOIN", bound,
                                                        std::vector<std::uint8_t>{0, 0}),
                     ErrorCode::InvalidOption, "JOIN: 2 reversed masks were given for 1 tensor");
}

}  // namespace test_tensor_desc
