// dmlref: the runtime layer's tensor description (DML_BUFFER_TENSOR_DESC), buffers, the minimum
// size (DMLCalcBufferTensorSize), and the checks T1-T13 on a description bound to a buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmlref/data_type.hpp"
#include "dmlref/error.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/tensor_view.hpp"
#include "dmlref/validation.hpp"

namespace dmlref {

// DML_TENSOR_FLAGS.
enum class TensorFlags : std::uint32_t {
  None = 0,
  OwnedByDml = 1,
};

// Mirrors DML_BUFFER_TENSOR_DESC field for field, so a harness copies its DirectML description
// over member by member (the enums share DirectML's values).
struct BufferTensorDesc {
  dmlref::DataType DataType = dmlref::DataType::Unknown;
  TensorFlags Flags = TensorFlags::None;
  std::uint32_t DimensionCount = 0;
  const std::uint32_t* Sizes = nullptr;
  const std::uint32_t* Strides = nullptr;  // optional: null means packed (T5)
  std::uint64_t TotalTensorSizeInBytes = 0;
  std::uint32_t GuaranteedBaseOffsetAlignment = 0;
};

// Memory bound to a tensor: what DirectML calls a buffer binding, seen from the CPU.
struct Buffer {
  void* data = nullptr;
  std::uint64_t size_in_bytes = 0;
};
struct ConstBuffer {
  const void* data = nullptr;
  std::uint64_t size_in_bytes = 0;
  constexpr ConstBuffer() = default;
  constexpr ConstBuffer(const void* d, std::uint64_t n) : data(d), size_in_bytes(n) {}
  constexpr ConstBuffer(Buffer b) : data(b.data), size_in_bytes(b.size_in_bytes) {}  // NOLINT
};

namespace detail {

// T1 and T2 plus null Sizes: what must hold before any size can be read.
template <class Deferred = void>
inline void check_desc_header(std::string_view op, std::string_view tensor,
                              const BufferTensorDesc* desc) {
  if (desc == nullptr) fail(ErrorCode::NullPointer, op, ": ", tensor, " is null");
  if (!is_valid(desc->DataType)) {
    fail(ErrorCode::T1, op, ": ", tensor, ".DataType is ", describe(desc->DataType),
         "; it must be one of ", kAllTypes.to_string());
  }
  if (desc->DimensionCount < 1 || desc->DimensionCount > kMaxRank) {
    fail(ErrorCode::T2, op, ": ", tensor, ".DimensionCount is ", desc->DimensionCount,
         "; it must be between 1 and ", kMaxRank);
  }
  if (desc->Sizes == nullptr) fail(ErrorCode::NullPointer, op, ": ", tensor, ".Sizes is null");
}

// The layout a description addresses (T5: packed strides when Strides is null).
template <class Deferred = void>
inline Layout layout_of_desc(const BufferTensorDesc& desc) {
  const std::span<const std::uint32_t> sizes(desc.Sizes, desc.DimensionCount);
  if (desc.Strides == nullptr) return Layout::packed(sizes);
  Layout l = Layout::packed(sizes);
  for (std::uint32_t d = 0; d < desc.DimensionCount; ++d) l.strides[d] = desc.Strides[d];
  return l;
}

// T8 on a validated layout; nullopt when the byte count overflows 64 bits.
template <class Deferred = void>
inline std::optional<std::uint64_t> min_size_in_bytes(const Layout& layout,
                                                      std::size_t element_bytes) {
  const auto range = layout.offset_range();
  if (!range) return std::nullopt;
  // DirectML strides are unsigned: min is 0 and max is the last element's offset.
  const auto bytes = checked_mul(static_cast<std::uint64_t>(range->max) + 1, element_bytes);
  if (!bytes) return std::nullopt;
  const auto rounded = checked_add(*bytes, std::uint64_t{3});
  if (!rounded) return std::nullopt;
  return *rounded & ~std::uint64_t{3};
}

}  // namespace detail

// DMLCalcBufferTensorSize (T8): ((last element offset) + 1) * element size, rounded up to 4.
// Throws on an invalid type or dimension count and when the result overflows 64 bits.
inline std::uint64_t calc_buffer_tensor_size(DataType data_type, std::uint32_t dimension_count,
                                             const std::uint32_t* sizes,
                                             const std::uint32_t* strides = nullptr) {
  BufferTensorDesc desc;
  desc.DataType = data_type;
  desc.DimensionCount = dimension_count;
  desc.Sizes = sizes;
  desc.Strides = strides;
  detail::check_desc_header("DMLCalcBufferTensorSize", "tensor", &desc);
  const Layout layout = detail::layout_of_desc(desc);
  detail::check_layout("DMLCalcBufferTensorSize", "tensor", layout);
  const auto bytes = detail::min_size_in_bytes(layout, element_size(data_type));
  if (!bytes) {
    detail::fail(ErrorCode::T8, "DMLCalcBufferTensorSize: tensor with Sizes ",
                 layout.sizes_string(), " and Strides ", layout.strides_string(),
                 " needs more than 2^64 bytes");
  }
  return *bytes;
}

inline std::uint64_t calc_buffer_tensor_size(DataType data_type,
                                             std::span<const std::uint32_t> sizes,
                                             std::span<const std::uint32_t> strides = {}) {
  if (!strides.empty() && strides.size() != sizes.size()) {
    detail::fail(ErrorCode::T5, "DMLCalcBufferTensorSize: ", sizes.size(), " sizes but ",
                 strides.size(), " strides; give one stride per dimension or none");
  }
  return calc_buffer_tensor_size(data_type, static_cast<std::uint32_t>(sizes.size()), sizes.data(),
                                 strides.empty() ? nullptr : strides.data());
}

// DirectML's own DMLCalcBufferTensorSize, result for result, for a harness that fills in
// TotalTensorSizeInBytes as DirectML's samples do; never throws. Its arithmetic is DirectML's too:
// packed, the product of Sizes times the element size, modulo 2^64; strided, the last element's
// index summed in 32 bits (DirectML's UINT), so it wraps where DirectML's does; then rounded up to
// a multiple of 4 (modulo 2^64). For an unknown data type it returns 0, as DirectML's does, and
// also for null `sizes` or a DimensionCount of 0 (inputs DirectML's helper does not define). A
// result that wrapped is smaller than the tensor, so validation rejects it (T8) with a message;
// calc_buffer_tensor_size is the exact, throwing form.
inline std::uint64_t dml_calc_buffer_tensor_size(DataType data_type, std::uint32_t dimension_count,
                                                 const std::uint32_t* sizes,
                                                 const std::uint32_t* strides = nullptr) noexcept {
  if (!is_valid(data_type) || sizes == nullptr || dimension_count == 0) return 0;
  const std::uint64_t element_bytes = element_size(data_type);
  std::uint64_t bytes = 0;
  if (strides == nullptr) {
    bytes = sizes[0];
    for (std::uint32_t i = 1; i < dimension_count; ++i) bytes *= sizes[i];
    bytes *= element_bytes;
  } else {
    std::uint32_t index_of_last_element = 0;
    for (std::uint32_t i = 0; i < dimension_count; ++i) {
      index_of_last_element += (sizes[i] - 1) * strides[i];
    }
    bytes = (static_cast<std::uint64_t>(index_of_last_element) + 1) * element_bytes;
  }
  return (bytes + 3) & ~std::uint64_t{3};
}

// A BufferTensorDesc over the caller's arrays, copying none: Sizes and Strides point into `sizes`
// and `strides`, which must outlive every use of the result (a temporary vector passed here
// dangles at the end of the statement). Empty `strides` means packed (null Strides).
// TotalTensorSizeInBytes is `total_size_in_bytes` when given, else dml_calc_buffer_tensor_size's.
// Nothing is validated here (the operators do that, naming the tensor), except that a stride
// count other than the size count throws T5, since one DimensionCount cannot describe both.
inline BufferTensorDesc buffer_tensor_desc(DataType data_type, std::span<const std::uint32_t> sizes,
                                           std::span<const std::uint32_t> strides = {},
                                           std::optional<std::uint64_t> total_size_in_bytes = {}) {
  if (!strides.empty() && strides.size() != sizes.size()) {
    detail::fail(ErrorCode::T5, "buffer_tensor_desc: ", sizes.size(), " sizes but ",
                 strides.size(), " strides; give one stride per dimension or none");
  }
  BufferTensorDesc desc;
  desc.DataType = data_type;
  desc.DimensionCount = static_cast<std::uint32_t>(sizes.size());
  desc.Sizes = sizes.data();
  desc.Strides = strides.empty() ? nullptr : strides.data();
  desc.TotalTensorSizeInBytes = total_size_in_bytes.value_or(
      dml_calc_buffer_tensor_size(data_type, desc.DimensionCount, desc.Sizes, desc.Strides));
  return desc;
}

// A description that owns its Sizes and Strides, for building descriptions in tests, tools and
// examples. desc() points into this object: keep it alive (and unmoved) while the desc is used.
struct TensorDesc {
  DataType data_type = DataType::Unknown;
  std::vector<std::uint32_t> sizes;
  std::vector<std::uint32_t> strides;  // empty: packed
  std::uint64_t total_tensor_size_in_bytes = 0;
  TensorFlags flags = TensorFlags::None;
  std::uint32_t guaranteed_base_offset_alignment = 0;

  // TotalTensorSizeInBytes set to the minimum (T8).
  TensorDesc(DataType type, std::vector<std::uint32_t> sizes_in,
             std::vector<std::uint32_t> strides_in = {})
      : data_type(type), sizes(std::move(sizes_in)), strides(std::move(strides_in)) {
    total_tensor_size_in_bytes = calc_buffer_tensor_size(data_type, sizes, strides);
  }

  BufferTensorDesc desc() const noexcept {
    BufferTensorDesc d;
    d.DataType = data_type;
    d.Flags = flags;
    d.DimensionCount = static_cast<std::uint32_t>(sizes.size());
    d.Sizes = sizes.data();
    d.Strides = strides.empty() ? nullptr : strides.data();
    d.TotalTensorSizeInBytes = total_tensor_size_in_bytes;
    d.GuaranteedBaseOffsetAlignment = guaranteed_base_offset_alignment;
    return d;
  }
};

// A description checked against T1-T11 (and T12 for outputs), with the layout it addresses.
struct ValidatedTensor {
  std::string name;
  DataType data_type = DataType::Unknown;
  Layout layout;
  bool is_output = false;
};

namespace detail {

// T1-T9, T11 and (outputs) T12 on one description, without a buffer.
template <class Deferred = void>
inline ValidatedTensor validate_tensor_desc(std::string_view op, std::string name,
                                            const BufferTensorDesc* desc, bool is_output) {
  check_desc_header(op, name, desc);
  const Layout layout = layout_of_desc(*desc);
  check_layout(op, name, layout);
  const std::size_t eb = element_size(desc->DataType);
  const auto min_bytes = min_size_in_bytes(layout, eb);
  if (!min_bytes) {
    fail(ErrorCode::T8, op, ": ", name, ".Strides ", layout.strides_string(), " with Sizes ",
         layout.sizes_string(), " need more than 2^64 bytes");
  }
  if (desc->TotalTensorSizeInBytes < *min_bytes) {
    fail(ErrorCode::T8, op, ": ", name, ".TotalTensorSizeInBytes is ",
         desc->TotalTensorSizeInBytes, " but the tensor needs at least ", *min_bytes,
         " bytes (DMLCalcBufferTensorSize)");
  }
  const std::uint32_t align = desc->GuaranteedBaseOffsetAlignment;
  if (align != 0 && ((align & (align - 1)) != 0 || align < eb)) {
    fail(ErrorCode::T9, op, ": ", name, ".GuaranteedBaseOffsetAlignment is ", align,
         "; it must be 0 or a power of two no smaller than the element size (", eb, ")");
  }
  const auto flags = static_cast<std::uint32_t>(desc->Flags);
  if (flags > 1) {
    fail(ErrorCode::T11, op, ": ", name, ".Flags is ", flags,
         "; it must be DML_TENSOR_FLAG_NONE (0) or DML_TENSOR_FLAG_OWNED_BY_DML (1)");
  }
  if (is_output && flags != 0) {
    fail(ErrorCode::T11, op, ": ", name,
         ".Flags is DML_TENSOR_FLAG_OWNED_BY_DML (1); that flag is for inputs only");
  }
  if (is_output) check_output_addresses_once(op, name, layout);
  return {std::move(name), desc->DataType, layout, is_output};
}

// T9 (the promised alignment, and the element alignment the CPU needs) and T10 for one binding.
template <class Deferred = void>
inline void check_binding(std::string_view op, const ValidatedTensor& tensor,
                          const BufferTensorDesc& desc, const void* data,
                          std::uint64_t size_in_bytes) {
  if (data == nullptr) fail(ErrorCode::NullPointer, op, ": the buffer of ", tensor.name, " is null");
  const auto address = reinterpret_cast<std::uintptr_t>(data);
  const std::uint32_t align = desc.GuaranteedBaseOffsetAlignment;
  if (align != 0 && address % align != 0) {
    fail(ErrorCode::T9, op, ": the buffer of ", tensor.name, " starts at an address that is ",
         address % align, " bytes past a multiple of ", tensor.name,
         ".GuaranteedBaseOffsetAlignment (", align, "); it must be aligned to it");
  }
  const std::size_t eb = element_size(tensor.data_type);
  if (address % eb != 0) {
    fail(ErrorCode::T9, op, ": the buffer of ", tensor.name, " starts at an address that is ",
         address % eb, " bytes past a multiple of its element size (", eb,
         "); it must be element-aligned");
  }
  if (size_in_bytes < desc.TotalTensorSizeInBytes) {
    fail(ErrorCode::T10, op, ": the buffer of ", tensor.name, " holds ", size_in_bytes,
         " bytes but ", tensor.name, ".TotalTensorSizeInBytes is ", desc.TotalTensorSizeInBytes,
         "; the buffer must hold at least that many");
  }
}

}  // namespace detail

// A description validated and bound to its buffer: what every runtime entry point builds first.
struct BoundTensor {
  ValidatedTensor tensor;
  const void* data = nullptr;
};

// Validates `desc` (T1-T9, T11, T12 for outputs) and its binding (T9, T10). The feature-level
// table and the operator's own rules are the caller's.
template <class Deferred = void>
inline BoundTensor bind_tensor(std::string_view op, std::string name, const BufferTensorDesc* desc,
                               const void* data, std::uint64_t size_in_bytes, bool is_output) {
  ValidatedTensor t = detail::validate_tensor_desc(op, std::move(name), desc, is_output);
  detail::check_binding(op, t, *desc, data, size_in_bytes);
  return {std::move(t), data};
}

namespace detail {

// A validated description and its buffer: the binding checks (T9, T10), then the pair.
template <class Deferred = void>
inline BoundTensor bind_validated(std::string_view op, ValidatedTensor tensor,
                                  const BufferTensorDesc& desc, ConstBuffer buffer) {
  check_binding(op, tensor, desc, buffer.data, buffer.size_in_bytes);
  return {std::move(tensor), buffer.data};
}

// T13 over bound tensors.
template <class Deferred = void>
inline void check_no_overlap(std::string_view op, std::span<const BoundTensor> tensors) {
  std::vector<TensorExtent> extents;
  extents.reserve(tensors.size());
  for (const BoundTensor& b : tensors) {
    extents.push_back(tensor_extent(b.tensor.name, b.data, b.tensor.layout,
                                    element_size(b.tensor.data_type), b.tensor.is_output));
  }
  check_no_overlap(op, std::span<const TensorExtent>(extents));
}

// The runtime entry points' `reversed`: DirectML's strides are unsigned, so a tensor that runs
// backwards along some dimensions (numpy's x[::-1]) is described by the same elements in
// increasing order, and reversed[k] has bit d set where the k-th tensor (the description's order)
// runs backwards along dimension d. Every rule was checked on the descriptions, which cover the
// very same bytes; each bound tensor is then turned around, so the run reads and writes in the
// caller's order, copying nothing. Empty: every tensor as described.
template <class Deferred = void>
inline void check_reversed_count(std::string_view op, std::span<const std::uint8_t> reversed,
                                 std::size_t tensors) {
  if (!reversed.empty() && reversed.size() != tensors) {
    fail(ErrorCode::InvalidOption, op, ": ", reversed.size(),
         reversed.size() == 1 ? " reversed mask was given for " : " reversed masks were given for ",
         tensors, tensors == 1 ? " tensor" : " tensors", "; give one per tensor or none");
  }
}
// `layout` turned around along the dimensions set in `dims`; returns where its element 0 now is,
// in elements past the old one.
inline std::int64_t reverse_layout(Layout& layout, std::uint8_t dims) noexcept {
  std::int64_t first = 0;
  for (std::uint32_t d = 0; d < layout.rank; ++d) {
    if (((static_cast<unsigned>(dims) >> d) & 1u) == 0) continue;
    first += (static_cast<std::int64_t>(layout.sizes[d]) - 1) * layout.strides[d];
    layout.strides[d] = -layout.strides[d];
  }
  return first;
}
template <class Deferred = void>
inline void reverse_dimensions(BoundTensor& bound, std::uint8_t dims) {
  const std::int64_t first = reverse_layout(bound.tensor.layout, dims);
  bound.data = static_cast<const char*>(bound.data) +
               first * static_cast<std::int64_t>(element_size(bound.tensor.data_type));
}
template <class Deferred = void>
inline void reverse_dimensions(std::string_view op, std::span<BoundTensor> tensors,
                               std::span<const std::uint8_t> reversed) {
  check_reversed_count(op, reversed, tensors.size());
  for (std::size_t k = 0; k < reversed.size(); ++k) reverse_dimensions(tensors[k], reversed[k]);
}

}  // namespace detail

// A typed view of a validated tensor over its buffer. T must match tensor.data_type.
template <class T>
TensorView<T> view_of(const ValidatedTensor& tensor, T* data) noexcept {
  return TensorView<T>(data, tensor.layout);
}

// The typed view of a bound tensor; T (possibly const) must match its data type.
template <class T>
TensorView<T> view_of(const BoundTensor& bound) noexcept {
  return TensorView<T>(static_cast<T*>(const_cast<void*>(bound.data)), bound.tensor.layout);
}

}  // namespace dmlref
