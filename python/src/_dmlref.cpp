// The extension `dmlref._dmlref` (re-exported by the package `dmlref`): numpy (or any DLPack) arrays in, numpy arrays out, over the runtime
// layer of the C++ headers, so every rule is checked by the same code with the same messages.
//
// What the binding adds, and nothing more:
// - numpy's view of a tensor (shape, signed element strides, any rank) becomes a DirectML
//   description. DirectML strides are unsigned: an input with a negative stride is copied once,
//   in C++, into a packed buffer that keeps its zero (broadcast) strides; an `out=` with a negative
//   stride receives the result through a packed temporary, copied in only after success.
// - numpy-natural arguments: negative axes, ONNX's GatherND shapes (the descriptions' leading 1s
//   are added here and stripped from the result), lengths with or without the axis dimension.
// - dmlref::Error becomes dmlref.Error (a ValueError) with .code, the rule id.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "dmlref/dmlref.hpp"
#include "dmlref/version.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using dmlref::BufferTensorDesc;
using dmlref::DataType;
using dmlref::ErrorCode;
using dmlref::FeatureLevel;
using dmlref::Layout;
using dmlref::detail::fail;

using InArray = nb::ndarray<nb::ro, nb::device::cpu>;
using OutArray = nb::ndarray<nb::device::cpu>;

// ---- data types -------------------------------------------------------------------------------

// numpy's name for a type: DirectML's, in lower case ("float16", "uint8").
std::string numpy_name(DataType type) {
  std::string name(dmlref::data_type_name(type));
  std::transform(name.begin(), name.end(), name.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return name;
}

nb::dlpack::dtype dlpack_dtype(DataType type) {
  return dmlref::visit(type, [](auto tag) {
    using T = typename decltype(tag)::type;
    const auto code = std::is_same_v<T, dmlref::float16> || std::is_floating_point_v<T>
                          ? nb::dlpack::dtype_code::Float
                      : std::is_signed_v<T> ? nb::dlpack::dtype_code::Int
                                            : nb::dlpack::dtype_code::UInt;
    return nb::dlpack::dtype{static_cast<std::uint8_t>(code),
                             static_cast<std::uint8_t>(sizeof(T) * 8), 1};
  });
}

std::optional<DataType> data_type_of(nb::dlpack::dtype dt) {
  for (DataType type : dmlref::kAllDataTypes) {
    if (dlpack_dtype(type) == dt) return type;
  }
  return std::nullopt;
}

// "float64, float32, ..., uint8"
std::string supported_dtypes() {
  std::string names;
  for (DataType type : dmlref::kAllDataTypes) {
    if (!names.empty()) names += ", ";
    names += numpy_name(type);
  }
  return names;
}

// A DLPack dtype that is not one of the eleven, as numpy would name it.
std::string dlpack_dtype_name(nb::dlpack::dtype dt) {
  using Code = nb::dlpack::dtype_code;
  if (static_cast<Code>(dt.code) == Code::Bool) return "bool";
  constexpr std::pair<Code, const char*> kPrefixes[] = {{Code::Int, "int"},
                                                        {Code::UInt, "uint"},
                                                        {Code::Float, "float"},
                                                        {Code::Bfloat, "bfloat"},
                                                        {Code::Complex, "complex"}};
  std::string name = "DLPack type code " + std::to_string(dt.code) + " of ";
  for (const auto& [code, prefix] : kPrefixes) {
    if (static_cast<Code>(dt.code) == code) name = prefix;
  }
  name += std::to_string(dt.bits);
  if (dt.lanes != 1) name += " x" + std::to_string(dt.lanes);
  return name;
}

// str(obj), as Python spells it.
std::string py_str(nb::handle obj) {
  nb::object text = nb::steal(PyObject_Str(obj.ptr()));
  if (!text.is_valid()) throw nb::python_error();
  return nb::cast<std::string>(text);
}

[[noreturn]] void unsupported_dtype(std::string_view func, std::string_view arg,
                                    const std::string& dtype) {
  throw nb::type_error((std::string(func) + ": " + std::string(arg) + " has dtype " + dtype +
                        ", which dmlref does not support; the data types are " +
                        supported_dtypes() + " (native byte order)")
                           .c_str());
}

// ---- operands ----------------------------------------------------------------------------------

// One array argument as the binding sees it: numpy's shape and signed element strides (any rank;
// the descriptions check the rank), its first element, and what keeps the memory alive.
struct Operand {
  std::string name;   // DirectML's name for it: "InputTensors[1]", "OutputTensor"
  nb::object source;  // the Python object given
  InArray array;      // keeps the memory alive
  DataType type = DataType::Unknown;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // in elements
  const void* data = nullptr;

  std::size_t ndim() const { return shape.size(); }
  // Leading dimensions of size 1, so ranks agree (GATHER_ND1's right-aligned tensors).
  void pad_to(std::size_t rank) {
    if (shape.size() >= rank) return;
    const std::size_t n = rank - shape.size();
    shape.insert(shape.begin(), n, 1);
    strides.insert(strides.begin(), n, 0);
  }
  void insert_unit_dim(std::size_t at) {
    shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(at), 1);
    strides.insert(strides.begin() + static_cast<std::ptrdiff_t>(at), 0);
  }
};

template <class Array>
void fill_operand(Operand& op, const Array& a, DataType type) {
  op.type = type;
  op.data = a.data();
  op.shape.resize(a.ndim());
  op.strides.resize(a.ndim());
  for (std::size_t d = 0; d < a.ndim(); ++d) {
    op.shape[d] = static_cast<std::int64_t>(a.shape(d));
    op.strides[d] = a.stride(d);
  }
}

// How the caller would name an array's dtype: str(obj.dtype) where there is one (numpy, torch).
std::string dtype_name_of(nb::handle obj, nb::dlpack::dtype dt) {
  return nb::hasattr(obj, "dtype") ? py_str(obj.attr("dtype")) : dlpack_dtype_name(dt);
}

template <class Array>
DataType checked_type(std::string_view func, std::string_view arg, nb::handle obj, const Array& a) {
  const std::optional<DataType> type = data_type_of(a.dtype());
  if (!type) unsupported_dtype(func, arg, dtype_name_of(obj, a.dtype()));
  return *type;
}

// An array that nanobind could not take: not in CPU memory, or not an array at all.
[[noreturn]] void not_an_array(std::string_view func, std::string_view arg, nb::handle obj) {
  if (nb::hasattr(obj, "__dlpack_device__")) {
    const nb::object device = obj.attr("__dlpack_device__")();
    const auto type = nb::cast<int>(device[0]);
    if (type != 1) {  // kDLCPU
      throw nb::type_error((std::string(func) + ": " + std::string(arg) +
                            " is on DLPack device type " + std::to_string(type) +
                            "; dmlref reads CPU memory only (copy it to the CPU first)")
                               .c_str());
    }
  }
  throw nb::type_error((std::string(func) + ": " + std::string(arg) + " is a " +
                        py_str(nb::handle(obj.type()).attr("__name__")) +
                        ", not an array dmlref can read (a numpy array, or a CPU object with "
                        "__dlpack__)")
                           .c_str());
}

bool is_numpy_array(nb::handle obj) {
  return nb::isinstance(obj, nb::module_::import_("numpy").attr("ndarray"));
}

// An array argument: numpy arrays and DLPack exporters as they are (no copy), anything else
// (lists, scalars) through numpy.asarray.
Operand import_input(std::string_view func, std::string arg, std::string name, nb::handle obj) {
  Operand op;
  op.name = std::move(name);
  op.source = nb::borrow(obj);
  nb::object candidate = op.source;
  const bool has_dlpack = nb::hasattr(obj, "__dlpack__");
  if (!has_dlpack && !is_numpy_array(obj)) {
    candidate = nb::module_::import_("numpy").attr("asarray")(obj);
  }
  InArray a;
  if (!nb::try_cast(candidate, a, false)) {
    // A supported numpy dtype that still fails (strides that are not whole elements) takes
    // numpy's packed copy; another dtype is a type error naming it.
    if (!is_numpy_array(candidate)) not_an_array(func, arg, candidate);
    const std::string dtype = py_str(candidate.attr("dtype"));
    const bool known =
        nb::cast<bool>(candidate.attr("dtype").attr("isnative")) &&
        std::any_of(std::begin(dmlref::kAllDataTypes), std::end(dmlref::kAllDataTypes),
                    [&](DataType t) { return numpy_name(t) == dtype; });
    nb::object packed = nb::module_::import_("numpy").attr("ascontiguousarray");
    if (!known || !nb::try_cast(packed(candidate), a, false)) unsupported_dtype(func, arg, dtype);
  }
  const DataType type = checked_type(func, arg, candidate, a);
  fill_operand(op, a, type);
  op.array = std::move(a);
  return op;
}

// `out=`: a writable CPU array of one of the eleven types.
struct OutOperand {
  Operand operand;
  OutArray array;
};

OutOperand import_out(std::string_view func, std::string name, nb::handle obj) {
  OutOperand out;
  out.operand.name = std::move(name);
  out.operand.source = nb::borrow(obj);
  if (!nb::try_cast(obj, out.array, false)) {
    InArray readable;
    if (!nb::try_cast(obj, readable, false)) not_an_array(func, "out", obj);
    checked_type(func, "out", obj, readable);
    throw nb::value_error((std::string(func) + ": out is read-only").c_str());
  }
  const DataType type = checked_type(func, "out", obj, out.array);
  fill_operand(out.operand, out.array, type);
  return out;
}

// ---- descriptions over operands ----------------------------------------------------------------

// DirectML's sizes for a shape; a dimension beyond 32 bits is T4 here (Sizes are 32-bit).
std::vector<std::uint32_t> sizes_of(std::string_view op, const Operand& a) {
  std::vector<std::uint32_t> sizes(a.ndim());
  for (std::size_t d = 0; d < a.ndim(); ++d) {
    if (a.shape[d] > static_cast<std::int64_t>(dmlref::kMaxElementCount)) {
      fail(ErrorCode::T4, op, ": ", a.name, ".Sizes[", d, "] is ", a.shape[d],
           "; a tensor holds at most 4294967295 (2^32 - 1) elements");
    }
    sizes[d] = static_cast<std::uint32_t>(a.shape[d]);
  }
  return sizes;
}

// The layout (signed strides) of an operand whose rank is 1-8; nullopt otherwise.
std::optional<Layout> signed_layout(const Operand& a, const std::vector<std::uint32_t>& sizes) {
  if (a.ndim() < 1 || a.ndim() > dmlref::kMaxRank) return std::nullopt;
  return Layout::strided(sizes, a.strides);
}

// A BufferTensorDesc over an operand's memory, over a packed copy of it, or over a new array.
// Owns what the desc points to: keep it alive and unmoved while the desc is used.
class Described {
 public:
  Described() = default;
  Described(const Described&) = delete;
  Described& operator=(const Described&) = delete;

  // Describes `a`. Strides DirectML cannot express (negative, or past 32 bits) are replaced: an
  // input is copied into a packed buffer whose zero (broadcast) strides stay zero; an output gets
  // a packed temporary (`substituted()`), copied to the caller by copy_back() after success.
  void describe(std::string_view op, const Operand& a, bool is_output) {
    sizes_ = sizes_of(op, a);
    type_ = a.type;
    data_ = const_cast<void*>(a.data);
    strides_.assign(a.ndim(), 0);
    const std::optional<Layout> layout = signed_layout(a, sizes_);
    bool expressible = true;
    for (std::size_t d = 0; d < a.ndim(); ++d) {
      if (sizes_[d] <= 1) continue;  // the stride of a size-1 dimension is never used
      const std::int64_t s = a.strides[d];
      if (s < 0 || s > static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max())) {
        expressible = false;
      } else {
        strides_[d] = static_cast<std::uint32_t>(s);
      }
    }
    // A layout the description's own checks reject (T2-T4) is described as it is: no copy.
    const auto count = layout ? layout->checked_element_count() : std::nullopt;
    if (!expressible && count && *count <= dmlref::kMaxElementCount && *count > 0) {
      substitute(*layout, a, is_output);
    }
    finish_desc(layout.has_value());
  }

  // Describes a new packed array of these sizes; its memory comes later (bind).
  void describe_new(std::vector<std::uint32_t> sizes, DataType type) {
    sizes_ = std::move(sizes);
    type_ = type;
    const Layout packed = Layout::packed(sizes_);
    strides_.assign(sizes_.size(), 0);
    for (std::size_t d = 0; d < sizes_.size() && d < dmlref::kMaxRank; ++d) {
      strides_[d] = static_cast<std::uint32_t>(packed.strides[d]);
    }
    finish_desc(sizes_.size() >= 1 && sizes_.size() <= dmlref::kMaxRank);
  }
  void bind(void* data) { data_ = data; }

  const BufferTensorDesc& desc() const { return desc_; }
  dmlref::ConstBuffer cbuffer() const { return {data_, desc_.TotalTensorSizeInBytes}; }
  dmlref::Buffer buffer() const { return {data_, desc_.TotalTensorSizeInBytes}; }
  bool substituted() const { return storage_ != nullptr; }

  // After a successful run into the temporary: the result into the caller's strided output.
  void copy_back(const Operand& out) const { copy(storage_.get(), packed_, out.data, original_); }

 private:
  void substitute(const Layout& original, const Operand& a, bool is_output) {
    original_ = original;
    packed_ = original;
    std::int64_t stride = 1;
    for (std::size_t d = a.ndim(); d-- > 0;) {
      const bool broadcast = !is_output && a.strides[d] == 0;
      packed_.strides[d] = (broadcast || sizes_[d] <= 1) ? 0 : stride;
      if (!broadcast) stride *= sizes_[d];
      strides_[d] = static_cast<std::uint32_t>(packed_.strides[d]);
    }
    const std::size_t bytes = static_cast<std::size_t>(stride) * dmlref::element_size(type_);
    storage_.reset(new std::uint64_t[(bytes + 7) / 8]);  // uninitialised: copied or written whole
    if (!is_output) copy(a.data, original_, storage_.get(), packed_);
    data_ = storage_.get();
  }

  void finish_desc(bool valid_rank) {
    desc_.DataType = type_;
    desc_.DimensionCount = static_cast<std::uint32_t>(sizes_.size());
    desc_.Sizes = sizes_.data();
    desc_.Strides = valid_rank ? strides_.data() : nullptr;
    std::optional<std::uint64_t> bytes;
    if (valid_rank) {
      Layout unsigned_layout = Layout::packed(sizes_);
      for (std::size_t d = 0; d < sizes_.size(); ++d) unsigned_layout.strides[d] = strides_[d];
      if (unsigned_layout.offset_range()) {
        bytes = dmlref::detail::min_size_in_bytes(unsigned_layout, dmlref::element_size(type_));
      }
    }
    // Past 64 bits (or an invalid rank) the description's own checks report it first.
    desc_.TotalTensorSizeInBytes = bytes.value_or(std::numeric_limits<std::uint64_t>::max());
  }

  void copy(const void* from, const Layout& from_layout, const void* to,
            const Layout& to_layout) const {
    dmlref::visit(type_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      dmlref::strided_copy<T>(
          dmlref::TensorView<const T>(static_cast<const T*>(from), from_layout),
          dmlref::TensorView<T>(static_cast<T*>(const_cast<void*>(to)), to_layout));
    });
  }

  DataType type_ = DataType::Unknown;
  std::vector<std::uint32_t> sizes_;
  std::vector<std::uint32_t> strides_;
  BufferTensorDesc desc_;
  void* data_ = nullptr;
  Layout original_;  // the caller's layout, when substituted
  Layout packed_;    // the copy's layout, when substituted
  std::unique_ptr<std::uint64_t[]> storage_;
};

// T12 and T13 on the caller's own arrays, for calls where a copy stood in for one of them (the
// runtime layer saw the copy). Tensors keep their DirectML names.
void check_caller_aliasing(std::string_view op, const std::vector<const Operand*>& inputs,
                           const Operand& output) {
  std::vector<dmlref::TensorExtent> extents;
  auto add = [&](const Operand& a, bool is_output) {
    const std::optional<Layout> layout = signed_layout(a, sizes_of(op, a));
    if (!layout) return;
    if (is_output) dmlref::detail::check_output_addresses_once(op, a.name, *layout);
    extents.push_back(
        dmlref::tensor_extent(a.name, a.data, *layout, dmlref::element_size(a.type), is_output));
  };
  for (const Operand* in : inputs) add(*in, false);
  add(output, true);
  dmlref::detail::check_no_overlap(op, std::span<const dmlref::TensorExtent>(extents));
}

// ---- arguments ----------------------------------------------------------------------------------

// "4_1", "4.1" or "DML_FEATURE_LEVEL_4_1"; None is the newest level.
FeatureLevel parse_feature_level(std::string_view op, const std::optional<std::string>& text) {
  if (!text) return dmlref::kLatestFeatureLevel;
  constexpr std::string_view kPrefix = "DML_FEATURE_LEVEL_";
  std::string_view t = *text;
  if (t.substr(0, kPrefix.size()) == kPrefix) t.remove_prefix(kPrefix.size());
  const std::size_t sep = t.find_first_of("_.");
  unsigned major = 16;
  unsigned minor = 16;
  if (sep != std::string_view::npos) {
    const char* end = t.data() + t.size();
    if (std::from_chars(t.data(), t.data() + sep, major).ptr != t.data() + sep) major = 16;
    if (std::from_chars(t.data() + sep + 1, end, minor).ptr != end) minor = 16;
  }
  const auto level = static_cast<FeatureLevel>((major << 12) | (minor << 8));
  if (major < 16 && minor < 16 && dmlref::is_known(level)) return level;
  std::string known;
  for (auto v = static_cast<std::uint32_t>(FeatureLevel::k1_0);
       v <= static_cast<std::uint32_t>(dmlref::kLatestFeatureLevel); v += 0x100) {
    if (!dmlref::is_known(static_cast<FeatureLevel>(v))) continue;
    if (!known.empty()) known += ", ";
    known += std::to_string(v >> 12);
    known += '_';
    known += std::to_string((v >> 8) & 0xF);
  }
  fail(ErrorCode::InvalidOption, op, ": feature_level '", *text,
       "' is not a DirectML feature level (", known, ")");
}

// numpy's axis convention on `rank` dimensions: negative counts from the end. An axis still out
// of range is passed on when DirectML's unsigned Axis can carry it, so the operator's own rule
// reports it; otherwise it is reported here under that rule's id.
std::uint32_t normalize_axis(std::string_view op, ErrorCode rule, std::string_view tensor,
                             std::int64_t axis, std::size_t rank) {
  const auto n = static_cast<std::int64_t>(rank);
  const std::int64_t a = axis < 0 ? axis + n : axis;
  if (a < 0 || a > static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max())) {
    fail(rule, op, ": Axis is ", axis, " but ", tensor, ".DimensionCount is ", rank,
         "; Axis must be in [", -n, ", ", n - 1, "]");
  }
  return static_cast<std::uint32_t>(a);
}

// A Python integer (or anything with __index__), saturated to 64 bits so the caller's range check
// reports it.
std::int64_t integer_argument(std::string_view func, const std::string& what, nb::handle value) {
  nb::object index = nb::steal(PyNumber_Index(value.ptr()));
  if (!index.is_valid()) {
    PyErr_Clear();
    throw nb::type_error((std::string(func) + ": " + what + " must be an integer, not " +
                          py_str(nb::handle(value.type()).attr("__name__")))
                             .c_str());
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    return overflow > 0 ? std::numeric_limits<std::int64_t>::max()
                        : std::numeric_limits<std::int64_t>::min();
  }
  return v;
}

dmlref::IndexPolicy index_policy(bool clamp_indices) {
  return clamp_indices ? dmlref::IndexPolicy::Clamp : dmlref::IndexPolicy::Error;
}

std::vector<std::int64_t> shape_of(const std::vector<std::uint32_t>& sizes, std::size_t skip) {
  return {sizes.begin() + static_cast<std::ptrdiff_t>(skip), sizes.end()};
}

// ---- running an operator ----------------------------------------------------------------------

// A single-output operator call: inputs described (copied where DirectML cannot express them),
// the destination (the caller's `out=`, or a new array allocated only once the descriptions are
// valid), then the run, all with the GIL released.
class SingleOutputCall {
 public:
  SingleOutputCall(std::string_view op, std::vector<Operand>& inputs, std::optional<OutOperand> out)
      : op_(op), inputs_(inputs), described_(inputs.size()), out_(std::move(out)) {
    nb::gil_scoped_release unlocked;
    for (std::size_t i = 0; i < inputs.size(); ++i) described_[i].describe(op, inputs[i], false);
  }

  const BufferTensorDesc* input_desc(std::size_t i) const { return &described_[i].desc(); }
  dmlref::ConstBuffer input_buffer(std::size_t i) const { return described_[i].cbuffer(); }
  dmlref::Buffer output_buffer() const { return output_.buffer(); }

  // `sizes`: the output's DirectML sizes (used without `out=`); the new array's numpy shape is
  // them without the first `padding` ones. `validate` checks the descriptions, `run` computes.
  // `output_slot`: the operator description's OutputTensor, pointed at the output's description.
  template <class Validate, class Run>
  nb::object run(std::vector<std::uint32_t> sizes, std::size_t padding, DataType type,
                 const BufferTensorDesc*& output_slot, Validate&& validate, Run&& run_op) {
    std::vector<std::int64_t> shape = shape_of(sizes, std::min(padding, sizes.size()));
    {
      nb::gil_scoped_release unlocked;
      if (out_) {
        output_.describe(op_, out_->operand, true);
      } else {
        output_.describe_new(std::move(sizes), type);
      }
      output_slot = &output_.desc();
      validate();
      if (out_ && (output_.substituted() || any_input_substituted())) {
        std::vector<const Operand*> inputs;
        for (const Operand& in : inputs_) inputs.push_back(&in);
        check_caller_aliasing(op_, inputs, out_->operand);
      }
    }
    nb::object result;
    OutArray fresh;
    if (out_) {
      result = out_->operand.source;
    } else {
      nb::list dims;
      for (std::int64_t s : shape) dims.append(s);
      result = nb::module_::import_("numpy").attr("empty")(nb::tuple(dims), numpy_name(type));
      fresh = nb::cast<OutArray>(result);
      output_.bind(fresh.data());
    }
    {
      nb::gil_scoped_release unlocked;
      run_op();
      if (out_ && output_.substituted()) output_.copy_back(out_->operand);
    }
    return result;
  }

 private:
  bool any_input_substituted() const {
    return std::any_of(described_.begin(), described_.end(),
                       [](const Described& d) { return d.substituted(); });
  }

  std::string_view op_;
  std::vector<Operand>& inputs_;
  std::vector<Described> described_;
  std::optional<OutOperand> out_;
  Described output_;
};

std::optional<OutOperand> import_optional_out(std::string_view func, const nb::object& out) {
  if (out.is_none()) return std::nullopt;
  return import_out(func, "OutputTensor", out);
}

std::vector<dmlref::ConstBuffer> input_buffers(const SingleOutputCall& call, std::size_t count) {
  std::vector<dmlref::ConstBuffer> buffers;
  for (std::size_t i = 0; i < count; ++i) buffers.push_back(call.input_buffer(i));
  return buffers;
}

// ---- operators
// ------------------------------------------------------------------------------------

nb::object join(const nb::object& arrays, std::int64_t axis,
                const std::optional<std::string>& feature_level, const nb::object& out) {
  constexpr std::string_view op = "JOIN";
  constexpr std::string_view func = "dmlref.join";
  dmlref::JoinOptions options;
  options.feature_level = parse_feature_level(op, feature_level);
  std::vector<Operand> inputs;
  for (nb::handle item : nb::iter(arrays)) {
    const std::string i = std::to_string(inputs.size());
    inputs.push_back(import_input(func, "arrays[" + i + "]", "InputTensors[" + i + "]", item));
  }
  // The output numpy.concatenate gives: the first input's shape, the axis summed. A mismatch
  // between inputs is the runtime layer's to report (J2, J5).
  std::uint32_t dml_axis = 0;
  std::vector<std::uint32_t> sizes;
  DataType type = DataType::Unknown;
  if (!inputs.empty()) {
    dml_axis = normalize_axis(op, ErrorCode::J4, "InputTensors[0]", axis, inputs[0].ndim());
    sizes = sizes_of(op, inputs[0]);
    type = inputs[0].type;
    if (dml_axis < sizes.size()) {
      std::uint64_t sum = 0;
      for (const Operand& in : inputs) {
        if (dml_axis < in.ndim()) sum += static_cast<std::uint64_t>(in.shape[dml_axis]);
      }
      sizes[dml_axis] =
          static_cast<std::uint32_t>(std::min<std::uint64_t>(sum, dmlref::kMaxElementCount));
    }
  }
  SingleOutputCall call(op, inputs, import_optional_out(func, out));
  std::vector<BufferTensorDesc> descs;
  for (std::size_t i = 0; i < inputs.size(); ++i) descs.push_back(*call.input_desc(i));
  const std::vector<dmlref::ConstBuffer> buffers = input_buffers(call, inputs.size());
  dmlref::JoinOperatorDesc desc{static_cast<std::uint32_t>(inputs.size()), descs.data(), nullptr,
                                dml_axis};
  return call.run(
      std::move(sizes), 0, type, desc.OutputTensor, [&] { dmlref::validate_join(desc, options); },
      [&] { dmlref::join(desc, buffers, call.output_buffer(), options); });
}

nb::list split(const nb::object& x, const nb::object& sizes, std::int64_t axis,
               const std::optional<std::string>& feature_level) {
  constexpr std::string_view op = "SPLIT";
  constexpr std::string_view func = "dmlref.split";
  dmlref::SplitOptions options;
  options.feature_level = parse_feature_level(op, feature_level);
  Operand input = import_input(func, "x", "InputTensor", x);
  const std::uint32_t dml_axis =
      normalize_axis(op, ErrorCode::S4, "InputTensor", axis, input.ndim());
  const std::vector<std::uint32_t> input_sizes = sizes_of(op, input);
  std::vector<std::vector<std::uint32_t>> output_sizes;
  // An integer (numpy's included, which arrays are not: they have a length) is a count.
  if (PyIndex_Check(sizes.ptr()) && !nb::hasattr(sizes, "__len__")) {
    // A count of equal pieces, as numpy.split takes it.
    const std::int64_t count = integer_argument(func, "sizes", sizes);
    if (count < 1 || count > std::numeric_limits<std::uint32_t>::max()) {
      fail(ErrorCode::S1, op, ": sizes is the output count ", count,
           "; OutputCount must be between 1 and 4294967295");
    }
    output_sizes =
        dmlref::infer_split_output_sizes(input_sizes, dml_axis, static_cast<std::uint32_t>(count));
  } else {
    for (nb::handle item : nb::iter(sizes)) {
      const std::size_t i = output_sizes.size();
      const std::int64_t piece = integer_argument(func, "sizes[" + std::to_string(i) + "]", item);
      if (piece < 1) {
        fail(ErrorCode::T3, op, ": sizes[", i, "] is ", piece, ", which would make OutputTensors[",
             i, "].Sizes[", dml_axis,
             "] less than 1; every size must be at least 1 (DirectML has no empty tensors)");
      }
      if (piece > static_cast<std::int64_t>(dmlref::kMaxElementCount)) {
        fail(ErrorCode::T4, op, ": sizes[", i, "] is ", piece,
             "; a tensor holds at most 4294967295 (2^32 - 1) elements");
      }
      output_sizes.push_back(input_sizes);
      if (dml_axis < input_sizes.size()) {
        output_sizes.back()[dml_axis] = static_cast<std::uint32_t>(piece);
      }
    }
  }
  Described input_described;
  std::vector<Described> outputs(output_sizes.size());
  std::vector<BufferTensorDesc> descs(output_sizes.size());
  dmlref::SplitOperatorDesc desc;
  {
    nb::gil_scoped_release unlocked;
    input_described.describe(op, input, false);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      outputs[i].describe_new(output_sizes[i], input.type);
      descs[i] = outputs[i].desc();
    }
    desc = {&input_described.desc(), static_cast<std::uint32_t>(descs.size()), descs.data(),
            dml_axis};
    dmlref::validate_split(desc, options);
  }
  nb::list result;
  std::vector<OutArray> arrays;
  std::vector<dmlref::Buffer> buffers;
  nb::object empty = nb::module_::import_("numpy").attr("empty");
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    nb::list dims;
    for (std::uint32_t s : output_sizes[i]) dims.append(s);
    nb::object array = empty(nb::tuple(dims), numpy_name(input.type));
    arrays.push_back(nb::cast<OutArray>(array));
    outputs[i].bind(arrays.back().data());
    buffers.push_back(outputs[i].buffer());
    result.append(array);
  }
  {
    nb::gil_scoped_release unlocked;
    dmlref::split(desc, input_described.cbuffer(), buffers, options);
  }
  return result;
}

dmlref::DuplicatePolicy duplicate_policy(std::string_view op, const std::string& text) {
  if (text == "last") return dmlref::DuplicatePolicy::LastWins;
  if (text == "reject" || text == "error") return dmlref::DuplicatePolicy::Reject;
  fail(ErrorCode::InvalidOption, op, ": duplicates is '", text, "'; it must be 'last' or 'reject'");
}

nb::object scatter(const nb::object& data, const nb::object& indices, const nb::object& updates,
                   std::int64_t axis, const std::string& duplicates, bool clamp_indices,
                   const std::optional<std::string>& feature_level, const nb::object& out) {
  constexpr std::string_view op = "SCATTER";
  constexpr std::string_view func = "dmlref.scatter";
  dmlref::ScatterOptions options;
  options.feature_level = parse_feature_level(op, feature_level);
  options.index_policy = index_policy(clamp_indices);
  options.duplicates = duplicate_policy(op, duplicates);
  std::vector<Operand> inputs;
  inputs.push_back(import_input(func, "data", "InputTensor", data));
  inputs.push_back(import_input(func, "indices", "IndicesTensor", indices));
  inputs.push_back(import_input(func, "updates", "UpdatesTensor", updates));
  const std::uint32_t dml_axis =
      normalize_axis(op, ErrorCode::SC4, "InputTensor", axis, inputs[0].ndim());
  SingleOutputCall call(op, inputs, import_optional_out(func, out));
  dmlref::ScatterOperatorDesc desc{call.input_desc(0), call.input_desc(1), call.input_desc(2),
                                   nullptr, dml_axis};
  return call.run(
      sizes_of(op, inputs[0]), 0, inputs[0].type, desc.OutputTensor,
      [&] { dmlref::validate_scatter(desc, options); },
      [&] {
        dmlref::scatter(desc, call.input_buffer(0), call.input_buffer(1), call.input_buffer(2),
                        call.output_buffer(), options);
      });
}

nb::object gather_nd1(const nb::object& x, const nb::object& indices, std::int64_t batch_dims,
                      bool clamp_indices, const std::optional<std::string>& feature_level,
                      const nb::object& out) {
  constexpr std::string_view op = "GATHER_ND1";
  constexpr std::string_view func = "dmlref.gather_nd1";
  dmlref::GatherNd1Options options;
  options.feature_level = parse_feature_level(op, feature_level);
  options.index_policy = index_policy(clamp_indices);
  std::vector<Operand> inputs;
  inputs.push_back(import_input(func, "x", "InputTensor", x));
  inputs.push_back(import_input(func, "indices", "IndicesTensor", indices));
  std::optional<OutOperand> out_operand = import_optional_out(func, out);
  const auto r = static_cast<std::int64_t>(inputs[0].ndim());
  const auto q = static_cast<std::int64_t>(inputs[1].ndim());
  if (batch_dims < 0 || batch_dims >= std::max(r, q)) {
    fail(ErrorCode::G5, op, ": BatchDimensionCount (batch_dims) is ", batch_dims,
         " but InputDimensionCount is ", r, " and IndicesDimensionCount is ", q,
         "; it must be at least 0 and smaller than both");
  }
  // ONNX GatherND's output rank; DirectML's tensors share one rank R with leading 1s, added here
  // and stripped from the result.
  const std::int64_t m = q >= 1 ? inputs[1].shape.back() : 0;
  const std::int64_t meaningful = (q - 1) + (r - batch_dims - m);
  const auto max_rank = static_cast<std::int64_t>(dmlref::kMaxRank);
  std::int64_t rank = std::max(r, q);
  if (meaningful >= 0) rank = std::max(rank, std::min(meaningful, max_rank));
  if (out_operand) {
    rank =
        std::max(rank, std::min(static_cast<std::int64_t>(out_operand->operand.ndim()), max_rank));
    out_operand->operand.pad_to(static_cast<std::size_t>(rank));
  }
  for (Operand& in : inputs) in.pad_to(static_cast<std::size_t>(rank));
  std::vector<std::uint32_t> sizes;
  try {
    sizes = dmlref::infer_gather_nd1_output_sizes(
        sizes_of(op, inputs[0]), sizes_of(op, inputs[1]), static_cast<std::uint32_t>(r),
        static_cast<std::uint32_t>(q), static_cast<std::uint32_t>(batch_dims));
  } catch (const dmlref::Error&) {
    // Invalid sizes: the runtime layer's validation reports the first rule broken, in its order.
    sizes = sizes_of(op, inputs[0]);
  }
  const std::size_t padding =
      meaningful >= 0 && meaningful <= rank ? static_cast<std::size_t>(rank - meaningful) : 0;
  SingleOutputCall call(op, inputs, std::move(out_operand));
  dmlref::GatherNd1OperatorDesc desc{call.input_desc(0),
                                     call.input_desc(1),
                                     nullptr,
                                     static_cast<std::uint32_t>(r),
                                     static_cast<std::uint32_t>(q),
                                     static_cast<std::uint32_t>(batch_dims)};
  return call.run(
      std::move(sizes), padding, inputs[0].type, desc.OutputTensor,
      [&] { dmlref::validate_gather_nd1(desc, options); },
      [&] {
        dmlref::gather_nd1(desc, call.input_buffer(0), call.input_buffer(1), call.output_buffer(),
                           options);
      });
}

nb::object reverse_subsequences(const nb::object& x, const nb::object& lengths, std::int64_t axis,
                                const std::optional<std::string>& feature_level,
                                const nb::object& out) {
  constexpr std::string_view op = "REVERSE_SUBSEQUENCES";
  constexpr std::string_view func = "dmlref.reverse_subsequences";
  dmlref::ReverseSubsequencesOptions options;
  options.feature_level = parse_feature_level(op, feature_level);
  std::vector<Operand> inputs;
  inputs.push_back(import_input(func, "x", "InputTensor", x));
  inputs.push_back(import_input(func, "lengths", "SequenceLengthsTensor", lengths));
  const std::uint32_t dml_axis =
      normalize_axis(op, ErrorCode::R5, "InputTensor", axis, inputs[0].ndim());
  // Lengths given without the axis dimension get it back, as size 1 (R3).
  if (inputs[1].ndim() + 1 == inputs[0].ndim() && dml_axis < inputs[0].ndim()) {
    inputs[1].insert_unit_dim(dml_axis);
  }
  SingleOutputCall call(op, inputs, import_optional_out(func, out));
  dmlref::ReverseSubsequencesOperatorDesc desc{call.input_desc(0), call.input_desc(1), nullptr,
                                               dml_axis};
  return call.run(
      sizes_of(op, inputs[0]), 0, inputs[0].type, desc.OutputTensor,
      [&] { dmlref::validate_reverse_subsequences(desc, options); },
      [&] {
        dmlref::reverse_subsequences(desc, call.input_buffer(0), call.input_buffer(1),
                                     call.output_buffer(), options);
      });
}

// ---- checking results
// -----------------------------------------------------------------------------

Layout view_layout(std::string_view op, const Operand& a) {
  if (a.ndim() < 1 || a.ndim() > dmlref::kMaxRank) {
    fail(ErrorCode::T2, op, ": ", a.name, ".DimensionCount is ", a.ndim(),
         "; it must be between 1 and ", dmlref::kMaxRank);
  }
  return Layout::strided(sizes_of(op, a), a.strides);
}

dmlref::CompareResult compare(const nb::object& expected, const nb::object& actual,
                              std::int64_t ulp, bool nan_equal, std::int64_t max_report,
                              const std::string& name) {
  constexpr std::string_view op = "compare";
  constexpr std::string_view func = "dmlref.compare";
  const Operand e = import_input(func, "expected", name + " (expected)", expected);
  const Operand a = import_input(func, "actual", name + " (actual)", actual);
  if (e.type != a.type) {
    throw nb::type_error((std::string(func) + ": expected has dtype " + numpy_name(e.type) +
                          " but actual has dtype " + numpy_name(a.type) + "; they must be the same")
                             .c_str());
  }
  if (ulp < 0) {
    fail(ErrorCode::InvalidOption, op, ": ulp is ", ulp,
         "; it must be 0 (bit-exact) or a number of ULPs");
  }
  if (max_report < 0) {
    fail(ErrorCode::InvalidOption, op, ": max_report is ", max_report, "; it must be 0 or more");
  }
  dmlref::CompareOptions options;
  options.nan_equal = nan_equal;
  if (ulp > 0) options.ulp_tolerance = static_cast<std::uint64_t>(ulp);
  options.max_report = static_cast<std::size_t>(max_report);
  options.name = name;
  const Layout el = view_layout(op, e);
  const Layout al = view_layout(op, a);
  nb::gil_scoped_release unlocked;
  return dmlref::visit(e.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return dmlref::compare(dmlref::TensorView<const T>(static_cast<const T*>(e.data), el),
                           dmlref::TensorView<const T>(static_cast<const T*>(a.data), al), options);
  });
}

using ScatterCheck = dmlref::ScatterCheckResult<dmlref::ScatterElementBits>;

ScatterCheck check_scatter(const nb::object& data, const nb::object& indices,
                           const nb::object& updates, const nb::object& actual, std::int64_t axis,
                           bool clamp_indices, const std::optional<std::string>& feature_level,
                           std::int64_t max_report) {
  constexpr std::string_view op = "SCATTER";
  constexpr std::string_view func = "dmlref.check_scatter";
  dmlref::ScatterOptions options;
  options.feature_level = parse_feature_level(op, feature_level);
  options.index_policy = index_policy(clamp_indices);
  if (max_report < 0) {
    fail(ErrorCode::InvalidOption, op, ": max_report is ", max_report, "; it must be 0 or more");
  }
  std::vector<Operand> operands;
  operands.push_back(import_input(func, "data", "InputTensor", data));
  operands.push_back(import_input(func, "indices", "IndicesTensor", indices));
  operands.push_back(import_input(func, "updates", "UpdatesTensor", updates));
  operands.push_back(import_input(func, "actual", "OutputTensor", actual));
  const std::uint32_t dml_axis =
      normalize_axis(op, ErrorCode::SC4, "InputTensor", axis, operands[0].ndim());
  nb::gil_scoped_release unlocked;
  // The actual result is only read: described like an input, it is still checked as the output.
  std::vector<Described> described(operands.size());
  for (std::size_t i = 0; i < operands.size(); ++i) described[i].describe(op, operands[i], false);
  const dmlref::ScatterOperatorDesc desc{&described[0].desc(), &described[1].desc(),
                                         &described[2].desc(), &described[3].desc(), dml_axis};
  return dmlref::check_scatter_result(desc, described[0].cbuffer(), described[1].cbuffer(),
                                      described[2].cbuffer(), described[3].cbuffer(), options,
                                      static_cast<std::size_t>(max_report));
}

// ---- errors -------------------------------------------------------------------------------------

PyObject* g_error_type = nullptr;  // dmlref.Error

void translate_error(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const dmlref::Error& e) {
    nb::object error = nb::borrow(g_error_type)(e.what());
    error.attr("code") = std::string(dmlref::error_code_name(e.code()));
    PyErr_SetObject(g_error_type, error.ptr());
  }
}

nb::tuple coordinate(const dmlref::Coord& c, std::uint32_t rank) {
  nb::list values;
  for (std::uint32_t d = 0; d < rank; ++d) values.append(c[d]);
  return nb::tuple(values);
}

}  // namespace

NB_MODULE(_dmlref, m) {
  m.doc() =
      "Golden model of DirectML's data-movement operators (JOIN, SPLIT, SCATTER, GATHER_ND1,\n"
      "REVERSE_SUBSEQUENCES) over numpy arrays, computed and validated by the C++ library.\n"
      "Inputs: numpy arrays of the eleven DirectML types (float64/32/16, int64/32/16/8,\n"
      "uint64/32/16/8) with any strides, or CPU objects exporting __dlpack__. A rule violation\n"
      "raises dmlref.Error (a ValueError) whose .code is the rule id, e.g. 'J5'.";
  m.attr("__version__") = DMLREF_VERSION_STRING;

  g_error_type = PyErr_NewExceptionWithDoc(
      "dmlref.Error",
      "A DirectML rule the call breaks. str(e) is the C++ message (operator, tensor, field, both\n"
      "values, rule id); e.code is the rule id ('J5', 'T13', 'SC8', 'ScatterDuplicate', ...).",
      PyExc_ValueError, nullptr);
  m.attr("Error") = nb::borrow(g_error_type);
  nb::register_exception_translator(translate_error);

  nb::class_<dmlref::CompareResult>(
      m, "CompareResult",
      "What dmlref.compare found: truthy when every element matches; str() lists the count, then\n"
      "each reported mismatch's coordinate with the expected and actual values.")
      .def("__bool__", &dmlref::CompareResult::passed)
      .def("__str__", &dmlref::CompareResult::to_string)
      .def("__repr__",
           [](const dmlref::CompareResult& r) {
             return "<dmlref.CompareResult " + std::to_string(r.mismatch_count) + " of " +
                    std::to_string(r.element_count) + " elements differ>";
           })
      .def_prop_ro("passed", &dmlref::CompareResult::passed, "True when no element differs.")
      .def_ro("element_count", &dmlref::CompareResult::element_count, "Elements compared.")
      .def_ro("mismatch_count", &dmlref::CompareResult::mismatch_count,
              "Elements that differ (all of them, not only the reported ones).")
      .def_prop_ro(
          "mismatches",
          [](const dmlref::CompareResult& r) {
            nb::list out;
            for (const dmlref::Mismatch& mm : r.mismatches) {
              out.append(
                  nb::make_tuple(coordinate(mm.coordinate, mm.rank), mm.expected, mm.actual));
            }
            return out;
          },
          "The first max_report mismatches in row-major order, as (coordinate, expected, actual)\n"
          "with the values formatted as in str().");

  nb::class_<ScatterCheck>(
      m, "ScatterCheckResult",
      "What dmlref.check_scatter found: truthy when the actual output is a correct SCATTER result\n"
      "(any one of the colliding updates accepted where indices collide); str() lists mismatches.")
      .def("__bool__", &ScatterCheck::ok)
      .def("__str__", &ScatterCheck::to_string)
      .def("__repr__",
           [](const ScatterCheck& r) {
             return "<dmlref.ScatterCheckResult " + std::to_string(r.mismatch_count) + " of " +
                    std::to_string(r.element_count) + " elements mismatch>";
           })
      .def_prop_ro("passed", &ScatterCheck::ok, "True when the actual output is acceptable.")
      .def_ro("element_count", &ScatterCheck::element_count, "Output elements checked.")
      .def_ro("mismatch_count", &ScatterCheck::mismatch_count, "Elements not acceptable.")
      .def_ro("colliding_element_count", &ScatterCheck::colliding_element_count,
              "Output elements that several updates target.")
      .def_prop_ro(
          "mismatches",
          [](const ScatterCheck& r) {
            nb::list out;
            for (const auto& mm : r.mismatches)
              out.append(coordinate(mm.output_coordinate, r.rank));
            return out;
          },
          "Output coordinates of the first max_report mismatches, in row-major order.");

  m.def("join", &join, "arrays"_a, "axis"_a = 0, "feature_level"_a = nb::none(),
        "out"_a = nb::none(),
        "DirectML JOIN: numpy.concatenate(arrays, axis). All arrays have one rank and dtype and\n"
        "agree on every dimension but `axis` (negative counts from the end). feature_level: the\n"
        "target DirectML feature level, e.g. '4_1' (default: the newest). out: a preallocated\n"
        "array of the result's shape and dtype (any strides), written only when the call\n"
        "succeeds, and returned. Raises dmlref.Error (with .code) on a broken rule.");
  m.def("split", &split, "x"_a, "sizes"_a, "axis"_a = 0, "feature_level"_a = nb::none(),
        "DirectML SPLIT: cuts x along `axis` into pieces of the given sizes (a list that sums to\n"
        "x.shape[axis]), or into `sizes` equal pieces when it is an int. Returns new C-contiguous\n"
        "arrays. Raises dmlref.Error (with .code) on a broken rule.");
  m.def(
      "scatter", &scatter, "data"_a, "indices"_a, "updates"_a, "axis"_a = 0,
      "duplicates"_a = "last", "clamp_indices"_a = false, "feature_level"_a = nb::none(),
      "out"_a = nb::none(),
      "DirectML SCATTER (ONNX ScatterElements without reduction): a copy of data with\n"
      "out[i][j][indices[i][j]] = updates[i][j] along `axis`. indices (int32/int64/uint32/uint64)\n"
      "and updates have one shape, equal to data's in every dimension but `axis` (DirectML's\n"
      "rule SC7). Negative indices count from the end. An index out of range is an error unless\n"
      "clamp_indices=True. duplicates='last': the last update in row-major order wins where\n"
      "indices collide; 'reject' (or 'error'): a collision is dmlref.Error 'ScatterDuplicate'.\n"
      "out: a preallocated array (any strides), written only on success, and returned.");
  m.def(
      "gather_nd1", &gather_nd1, "x"_a, "indices"_a, "batch_dims"_a = 0, "clamp_indices"_a = false,
      "feature_level"_a = nb::none(), "out"_a = nb::none(),
      "DirectML GATHER_ND1 (ONNX GatherND): each index tuple indices[..., :] selects a slice of x\n"
      "after the first batch_dims dimensions; the result has ONNX's shape\n"
      "indices.shape[:-1] + x.shape[batch_dims + indices.shape[-1]:]. Negative indices count from\n"
      "the end; one out of range is an error unless clamp_indices=True. out: a preallocated array\n"
      "of that shape (any strides), written only on success, and returned.");
  m.def("reverse_subsequences", &reverse_subsequences, "x"_a, "lengths"_a, "axis"_a = 0,
        "feature_level"_a = nb::none(), "out"_a = nb::none(),
        "DirectML REVERSE_SUBSEQUENCES: along `axis`, the first L elements of every sequence are\n"
        "reversed, L its length (uint32 or uint64; longer than the axis means all of it). lengths\n"
        "has x's shape with the axis set to 1, or with the axis removed. out: a preallocated\n"
        "array of x's shape (any strides), written only on success, and returned.");
  m.def("compare", &compare, "expected"_a, "actual"_a, "ulp"_a = 0, "nan_equal"_a = false,
        "max_report"_a = 10, "name"_a = "output",
        "Compares two arrays of one shape and dtype element by element (strides may differ).\n"
        "ulp=0: bit-exact (-0 differs from +0; NaNs match only with the same bits); ulp=N > 0:\n"
        "float elements match within N ULP (-0 == +0). nan_equal: every NaN equals every NaN.\n"
        "The result is truthy when all match; str() lists the mismatches' coordinates and values.");
  m.def("check_scatter", &check_scatter, "data"_a, "indices"_a, "updates"_a, "actual"_a,
        "axis"_a = 0, "clamp_indices"_a = false, "feature_level"_a = nb::none(),
        "max_report"_a = 10,
        "Checks a device's SCATTER result: where indices collide any one of the colliding updates\n"
        "is accepted, everywhere else the exact value. Truthy when `actual` is correct; str()\n"
        "lists the mismatches. The arguments are validated as for dmlref.scatter.");
  m.def("set_num_threads", &dmlref::set_num_threads, "n"_a,
        "Threads the operators use for large calls (small ones run on the calling thread);\n"
        "0 restores the default: DMLREF_NUM_THREADS, else every CPU this process may use.\n"
        "Results are the same bit for bit on any count.");
  m.def("get_num_threads", &dmlref::get_num_threads, "The threads large calls use now.");
}
