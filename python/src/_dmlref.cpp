// The extension `dmlref._dmlref` (re-exported by the package `dmlref`): numpy (or any DLPack)
// arrays in, numpy arrays out, over the runtime layer of the C++ headers, so every rule is checked
// by the same code.
//
// What the binding adds, and nothing more:
// - numpy's view of a tensor (shape, signed element strides, any rank) becomes a DirectML
//   description. DirectML strides are unsigned: a tensor with a negative stride is described by
//   its stand-in (the same bytes in forward order) and run through its own signed layout, so
//   nothing is copied (Described).
// - numpy-natural arguments: negative axes, ONNX's GatherND shapes (the descriptions' leading 1s
//   are added here and stripped from the result), lengths with or without the axis dimension,
//   indices and lengths of any integer dtype whose values fit, actual results with leading 1s.
// - dmlref::Error becomes dmlref.Error (a ValueError) with .code, the rule id, and a message in
//   the caller's words (Speaker).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
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

bool is_float_type(DataType t) {
  return t == DataType::Float16 || t == DataType::Float32 || t == DataType::Float64;
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

// ---- messages in the caller's words -------------------------------------------------------------
//
// The C++ library speaks DirectML (`InputTensors[1].Sizes[1]`, `{5,4,8}`, `FLOAT16`). A Python
// call's error names what the caller wrote instead: the argument (`arrays[1]`, `out`), numpy's
// fields (`.shape[1]`, `.ndim`, `.dtype`), shapes as numpy prints them (`(5, 4, 8)`), numpy's
// dtype names, and the function (`dmlref.join`). The rule id stays, with its page:
//   dmlref.join: arrays[1].shape[1] is 4 but arrays[0].shape[1] is 3; every dimension except
//   axis (0) must match [J5] docs/join.md#J5
// The translation maps each description's fields back to the argument it was built from; the
// C++ messages themselves are unchanged.

// The error a Python call raises: dmlref.Error with `code` and the translated message.
struct PythonError {
  dmlref::ErrorCode code;
  std::string message;
};

// "docs/join.md#J5": where a rule id is defined.
std::string rule_link(dmlref::ErrorCode code) {
  const std::string id(dmlref::error_code_name(code));
  const char* page = "errors.md";
  if (id.size() >= 2 && std::isdigit(static_cast<unsigned char>(id.back()))) {
    if (id.rfind("SC", 0) == 0)
      page = "scatter.md";
    else if (id[0] == 'T')
      page = "tensors.md";
    else if (id[0] == 'J')
      page = "join.md";
    else if (id[0] == 'S')
      page = "split.md";
    else if (id[0] == 'G')
      page = "gather_nd1.md";
    else if (id[0] == 'R')
      page = "reverse_subsequences.md";
  }
  return std::string("docs/") + page + "#" + id;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// numpy's tuple for a list of numbers: "(5,)", "(2, 4)", "()".
std::string numpy_tuple(const std::vector<std::string>& items) {
  std::string s = "(";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) s += ", ";
    s += items[i];
  }
  if (items.size() == 1) s += ',';
  return s + ')';
}

// numpy's shape of an operand as it was given: "(2, 3)".
std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::vector<std::string> items;
  for (std::int64_t v : shape) items.push_back(std::to_string(v));
  return numpy_tuple(items);
}

class Speaker {
 public:
  explicit Speaker(std::string func) : func_(std::move(func)) {}

  const std::string& func() const { return func_; }

  // A description's tensor `dml` was built from the argument `py`, with `pad` leading 1s added.
  void name(std::string dml, std::string py, std::size_t pad = 0) {
    for (Name& n : names_) {
      if (n.dml == dml) {
        n.py = std::move(py);
        n.pad = pad;
        return;
      }
    }
    // Kept longest first, so "InputTensors[1]" is not read as "InputTensor" + "s[1]".
    const auto at = std::find_if(names_.begin(), names_.end(),
                                 [&](const Name& n) { return n.dml.size() < dml.size(); });
    names_.insert(at, {std::move(dml), std::move(py), pad});
  }
  void set_pad(const std::string& dml, std::size_t pad) {
    for (Name& n : names_) {
      if (n.dml == dml) n.pad = pad;
    }
  }
  // A phrase replaced whole before anything else ("the OutputTensors' Sizes[0]" -> "sizes").
  void phrase(std::string from, std::string to) {
    phrases_.emplace_back(std::move(from), std::move(to));
  }
  // The name OutputTensor takes for these rules (JOIN without out=: the inputs' first array).
  void output_for(std::vector<dmlref::ErrorCode> codes, std::string py) {
    output_codes_ = std::move(codes);
    output_py_ = std::move(py);
  }

  // Any text of the library's (a report), in the caller's words.
  std::string words(const std::string& text) const { return rewrite(text, names_); }

  // An error the binding words itself, in the caller's words already.
  PythonError error(dmlref::ErrorCode code, const std::string& text) const {
    const std::string id(dmlref::error_code_name(code));
    return {code, func_ + ": " + text + " [" + id + "] " + rule_link(code)};
  }

  PythonError translate(const dmlref::Error& e) const {
    std::string body = e.what();
    const std::string id(dmlref::error_code_name(e.code()));
    const std::string suffix = " [" + id + "]";
    if (body.size() >= suffix.size() &&
        body.compare(body.size() - suffix.size(), suffix.size(), suffix) == 0) {
      body.resize(body.size() - suffix.size());
    }
    // The C++ message's own subject ("JOIN", "compare", "Layout") gives way to the function.
    const std::size_t colon = body.find(": ");
    if (colon != std::string::npos && body.substr(0, colon).find(' ') == std::string::npos) {
      body.erase(0, colon + 2);
    }
    std::vector<Name> names = names_;
    if (std::find(output_codes_.begin(), output_codes_.end(), e.code()) != output_codes_.end()) {
      for (Name& n : names) {
        if (n.dml == "OutputTensor") n.py = output_py_;
      }
    }
    // Options as Python spells them; the type rules as the binding applies them (other integer
    // dtypes are converted first, so only a non-integer dtype reaches these rules).
    static const std::pair<std::string, std::string> kOptions[] = {
        {"DuplicatePolicy::Reject", "duplicates='reject'"},
        {"IndexPolicy::Clamp", "clamp_indices=True"},
        {"; it must be one of INT64, INT32, UINT64, UINT32",
         "; indices must have an integer dtype (handed on as int64, int32, uint64 or uint32)"},
        {"; it must be UINT32 or UINT64",
         "; lengths must have an integer dtype (handed on as uint32 or uint64)"},
    };
    replace_all(body, kOptions);
    replace_all(body, phrases_);
    return {e.code(), func_ + ": " + rewrite(body, names) + " [" + id + "] " + rule_link(e.code())};
  }

 private:
  struct Name {
    std::string dml;
    std::string py;
    std::size_t pad = 0;
  };

  static void replace_all(std::string& s,
                          std::span<const std::pair<std::string, std::string>> pairs) {
    for (const auto& [from, to] : pairs) {
      for (std::size_t at = s.find(from); at != std::string::npos;
           at = s.find(from, at + to.size())) {
        s.replace(at, from.size(), to);
      }
    }
  }

  static bool starts_with_at(const std::string& s, std::size_t i, std::string_view word) {
    return s.compare(i, word.size(), word) == 0;
  }
  // `word` at i, not followed by another word character.
  static bool word_at(const std::string& s, std::size_t i, std::string_view word) {
    return starts_with_at(s, i, word) &&
           (i + word.size() >= s.size() || !is_word_char(s[i + word.size()]));
  }
  // Digits at i: the number and the position after them.
  static std::optional<std::pair<std::uint64_t, std::size_t>> number_at(const std::string& s,
                                                                        std::size_t i) {
    std::uint64_t v = 0;
    const auto r = std::from_chars(s.data() + i, s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr == s.data() + i) return std::nullopt;
    return std::pair{v, static_cast<std::size_t>(r.ptr - s.data())};
  }
  // "{1,2,3}" or "[1,2,3]" at i (`open`): the items, and the position after the closing bracket.
  static std::optional<std::pair<std::vector<std::string>, std::size_t>> list_at(
      const std::string& s, std::size_t i, char open, char close) {
    if (i >= s.size() || s[i] != open) return std::nullopt;
    const std::size_t end = s.find(close, i);
    if (end == std::string::npos) return std::nullopt;
    std::vector<std::string> items;
    std::string item;
    for (std::size_t k = i + 1; k < end; ++k) {
      const char c = s[k];
      if (c == ',') {
        items.push_back(item);
        item.clear();
      } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') {
        item += c;
      } else {
        return std::nullopt;
      }
    }
    if (!item.empty()) items.push_back(item);
    if (items.empty() && end != i + 1) return std::nullopt;
    return std::pair{items, end + 1};
  }
  static std::vector<std::string> drop(std::vector<std::string> items, std::size_t pad) {
    items.erase(items.begin(),
                items.begin() + static_cast<std::ptrdiff_t>(std::min(pad, items.size())));
    return items;
  }

  // One tensor's field after its name: ".Sizes[2]", ".Sizes {1,2}", ".DataType", a coordinate.
  static std::size_t rewrite_field(const std::string& s, std::size_t i, const Name& n,
                                   std::string& out) {
    const bool phrase = n.py.find(' ') != std::string::npos;  // "the result"
    const std::string dot = phrase ? "'s " : ".";
    if (auto coord = list_at(s, i, '[', ']')) {  // an element: "IndicesTensor[0,1,2]"
      const std::vector<std::string> items = drop(coord->first, n.pad);
      std::string index = "[";
      for (std::size_t k = 0; k < items.size(); ++k) index += (k != 0 ? ", " : "") + items[k];
      index += "]";
      out += phrase ? "element " + index + " of " + n.py : n.py + index;
      return coord->second;
    }
    out += n.py;
    if (i >= s.size() || s[i] != '.') return i;
    const std::size_t f = i + 1;
    auto indexed = [&](std::string_view field, std::string_view py) -> std::optional<std::size_t> {
      if (!starts_with_at(s, f, field) || f + field.size() >= s.size() ||
          s[f + field.size()] != '[') {
        return std::nullopt;
      }
      const auto d = number_at(s, f + field.size() + 1);
      if (!d || d->second >= s.size() || s[d->second] != ']') return std::nullopt;
      const std::uint64_t dim = d->first >= n.pad ? d->first - n.pad : d->first;
      out += dot + std::string(py) + "[" + std::to_string(dim) + "]";
      return d->second + 1;
    };
    if (auto e = indexed("Sizes", "shape")) return *e;
    if (auto e = indexed("Strides", "strides")) return *e;
    auto listed = [&](std::string_view field, std::string_view py) -> std::optional<std::size_t> {
      if (!word_at(s, f, field)) return std::nullopt;
      std::size_t k = f + field.size();
      std::string joiner = " ";
      if (starts_with_at(s, k, " is ")) {
        joiner = " is ";
      } else if (!starts_with_at(s, k, " ")) {
        out += dot + std::string(py);
        return k;
      }
      const auto list = list_at(s, k + joiner.size(), '{', '}');
      if (!list) {
        out += dot + std::string(py);
        return k;
      }
      out += dot + std::string(py) + joiner + numpy_tuple(drop(list->first, n.pad));
      return list->second;
    };
    if (auto e = listed("Sizes", "shape")) return *e;
    if (auto e = listed("Strides", "strides (in elements)")) return *e;
    if (word_at(s, f, "DataType")) {
      out += dot + "dtype";
      return f + 8;
    }
    if (word_at(s, f, "DimensionCount")) {
      out += dot + "ndim";
      std::size_t k = f + 14;
      if (starts_with_at(s, k, " is ")) {
        if (const auto v = number_at(s, k + 4)) {
          out += " is " + std::to_string(v->first >= n.pad ? v->first - n.pad : v->first);
          return v->second;
        }
      }
      return k;
    }
    return i;  // another field keeps DirectML's name
  }

  static std::string rewrite(const std::string& s, const std::vector<Name>& names) {
    // Words that are not a tensor's: the description's scalars and DirectML's type names.
    static constexpr std::pair<std::string_view, std::string_view> kWords[] = {
        {"InputDimensionCount", "x.ndim"},
        {"IndicesDimensionCount", "indices.ndim"},
        {"BatchDimensionCount", "batch_dims"},
        {"InputCount", "len(arrays)"},
        {"OutputCount", "len(sizes)"},
        {"DimensionCount", "ndim"},
        {"Axis", "axis"},
        {"DataType", "dtype"},
        {"Strides", "strides"},
        {"Sizes", "shape"},
    };
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
      const bool word_start = i == 0 || !is_word_char(s[i - 1]);
      if (word_start) {
        bool matched = false;
        for (const Name& n : names) {
          if (!starts_with_at(s, i, n.dml)) continue;
          const std::size_t after = i + n.dml.size();
          if (after < s.size() && is_word_char(s[after])) continue;
          i = rewrite_field(s, after, n, out);
          matched = true;
          break;
        }
        if (matched) continue;
        for (DataType t : dmlref::kAllDataTypes) {
          if (word_at(s, i, dmlref::data_type_name(t))) {
            out += numpy_name(t);
            i += dmlref::data_type_name(t).size();
            matched = true;
            break;
          }
        }
        if (matched) continue;
        constexpr std::string_view kLevel = "DML_FEATURE_LEVEL_";
        if (starts_with_at(s, i, kLevel)) {
          std::size_t k = i + kLevel.size();
          while (k < s.size() && (std::isdigit(static_cast<unsigned char>(s[k])) || s[k] == '_'))
            ++k;
          out += "feature_level '" + s.substr(i + kLevel.size(), k - i - kLevel.size()) + "'";
          i = k;
          continue;
        }
        for (const auto& [word, py] : kWords) {
          if (word_at(s, i, word) || (starts_with_at(s, i, word) && i + word.size() < s.size() &&
                                      s[i + word.size()] == '[')) {
            out += py;
            i += word.size();
            if (word == "Sizes" && starts_with_at(s, i, " ")) {
              if (const auto list = list_at(s, i + 1, '{', '}')) {
                out += " " + numpy_tuple(list->first);
                i = list->second;
              }
            }
            matched = true;
            break;
          }
        }
        if (matched) continue;
      }
      if (s[i] == '{') {
        if (const auto list = list_at(s, i, '{', '}')) {
          out += numpy_tuple(list->first);
          i = list->second;
          continue;
        }
      }
      out += s[i++];
    }
    return out;
  }

  std::string func_;
  std::vector<Name> names_;
  std::vector<std::pair<std::string, std::string>> phrases_;
  std::vector<dmlref::ErrorCode> output_codes_;
  std::string output_py_;
};

// Runs f; a dmlref::Error it throws leaves in the caller's words.
template <class F>
auto speaking(const Speaker& speaker, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const dmlref::Error& e) {
    throw speaker.translate(e);
  }
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
  std::shared_ptr<std::uint64_t[]> converted;  // owns `data` after convert_integers

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

// The text of the Python exception being handled, as "KeyError: 'k'"; clears it.
std::string describe_python_error(const nb::python_error& e) {
  std::string text = py_str(nb::handle(e.type()).attr("__name__"));
  const std::string value = py_str(e.value());
  if (!value.empty()) text += ": " + value;
  return text;
}

[[noreturn]] void type_error(std::string_view func, std::string_view arg, const std::string& what) {
  throw nb::type_error((std::string(func) + ": " + std::string(arg) + " " + what).c_str());
}

// An array that nanobind could not take: not in CPU memory, a DLPack exporter that misbehaves,
// or not an array at all. Always a TypeError naming the argument and what was wrong.
[[noreturn]] void not_an_array(std::string_view func, std::string_view arg, nb::handle obj) {
  const std::string type_name = py_str(nb::handle(obj.type()).attr("__name__"));
  const std::string subject = "(a " + type_name + ")";
  if (nb::hasattr(obj, "__dlpack_device__")) {
    nb::object device;
    try {
      device = obj.attr("__dlpack_device__")();
    } catch (const nb::python_error& e) {
      type_error(func, arg,
                 subject + " has __dlpack__, but its __dlpack_device__() raised " +
                     describe_python_error(e));
    }
    std::optional<int> device_type;
    if (nb::isinstance<nb::tuple>(device) && nb::len(device) == 2) {
      int value = 0;
      if (nb::try_cast(device[0], value, false)) device_type = value;
    }
    if (!device_type) {
      type_error(func, arg,
                 subject + " has __dlpack__, but its __dlpack_device__() returned " +
                     py_str(nb::repr(device)) +
                     "; it must return a tuple (device_type, device_id) of integers");
    }
    if (*device_type != 1) {  // kDLCPU
      type_error(func, arg,
                 subject + " is on DLPack device type " + std::to_string(*device_type) +
                     "; dmlref reads CPU memory only (copy it to the CPU first)");
    }
  }
  if (nb::hasattr(obj, "__dlpack__")) {
    std::string reason = "did not give a tensor dmlref can read (a strided CPU tensor)";
    try {
      obj.attr("__dlpack__")();
    } catch (const nb::python_error& e) {
      reason = "raised " + describe_python_error(e);
    }
    type_error(func, arg, subject + " has __dlpack__, but __dlpack__() " + reason);
  }
  type_error(func, arg,
             "is a " + type_name +
                 ", not an array dmlref can read (a numpy array, or a CPU object with __dlpack__)");
}

bool is_numpy_array(nb::handle obj) {
  return nb::isinstance(obj, nb::module_::import_("numpy").attr("ndarray"));
}

// A numpy array whose dtype is not one of the eleven in native byte order: a TypeError naming the
// dtype as numpy prints it ("dmlref.join: out has dtype >f4, ...").
void check_numpy_dtype(std::string_view func, std::string_view arg, nb::handle array) {
  const std::string dtype = py_str(array.attr("dtype"));
  const bool known = nb::cast<bool>(array.attr("dtype").attr("isnative")) &&
                     std::any_of(std::begin(dmlref::kAllDataTypes), std::end(dmlref::kAllDataTypes),
                                 [&](DataType t) { return numpy_name(t) == dtype; });
  if (!known) unsupported_dtype(func, arg, dtype);
}

// More dimensions than a description holds: T2, named before any description is built.
void check_rank(const Operand& op) {
  if (op.ndim() > dmlref::kMaxRank) {
    fail(ErrorCode::T2, "", ": ", op.name, ".DimensionCount is ", op.ndim(),
         "; it must be between 1 and ", dmlref::kMaxRank);
  }
}

// An array argument: numpy arrays and DLPack exporters as they are (no copy), anything else
// (lists, scalars) through numpy.asarray. `arg` is the caller's name for it, `name` the
// description's; the speaker learns the pair.
Operand import_input(Speaker& speaker, std::string arg, std::string name, nb::handle obj,
                     bool learn = true) {
  const std::string& func = speaker.func();
  if (learn) speaker.name(name, arg);
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
    check_numpy_dtype(func, arg, candidate);
    nb::object packed = nb::module_::import_("numpy").attr("ascontiguousarray");
    if (!nb::try_cast(packed(candidate), a, false)) {
      unsupported_dtype(func, arg, py_str(candidate.attr("dtype")));
    }
  }
  const DataType type = checked_type(func, arg, candidate, a);
  fill_operand(op, a, type);
  op.array = std::move(a);
  check_rank(op);
  return op;
}

// `out=`: a writable CPU array of one of the eleven types.
struct OutOperand {
  Operand operand;
  OutArray array;
};

// `arg`: the argument's name in messages ("out", or "out[1]" of SPLIT's list); `dml_name`: the
// tensor it stands for in the operator's description.
OutOperand import_out(Speaker& speaker, nb::handle obj, const std::string& arg = "out",
                      const std::string& dml_name = "OutputTensor") {
  const std::string& func = speaker.func();
  if (dml_name == "OutputTensor") speaker.name("OutputTensor", "out");
  OutOperand out;
  out.operand.name = dml_name;
  out.operand.source = nb::borrow(obj);
  if (is_numpy_array(obj)) {
    check_numpy_dtype(func, arg, obj);
    if (!nb::cast<bool>(obj.attr("flags").attr("writeable"))) {
      throw nb::value_error((func + ": " + arg + " is read-only").c_str());
    }
  }
  if (!nb::try_cast(obj, out.array, false)) {
    InArray readable;
    if (!nb::try_cast(obj, readable, false)) not_an_array(func, arg, obj);
    checked_type(func, arg, obj, readable);
    throw nb::value_error((func + ": " + arg + " is read-only").c_str());
  }
  const DataType type = checked_type(func, arg, obj, out.array);
  fill_operand(out.operand, out.array, type);
  check_rank(out.operand);
  return out;
}

// ---- integer arguments of numpy's types ------------------------------------------------------

// Index and lengths arrays of any integer dtype, as numpy users hold them (int64 by default): the
// values are converted to a type the operator takes when every one of them fits, so the DirectML
// type rule (SC3, G3, R4) applies to what is handed on. Broadcast (zero-stride) dimensions stay
// broadcast: the work is the data held, not the logical size.
enum class IntegerRole { Indices, Lengths };

void convert_integers(Speaker& speaker, Operand& op, const std::string& arg, IntegerRole role) {
  const DataType from = op.type;
  if (is_float_type(from) || op.ndim() == 0 || op.ndim() > dmlref::kMaxRank) return;
  if (role == IntegerRole::Indices && (from == DataType::Int32 || from == DataType::Int64 ||
                                       from == DataType::UInt32 || from == DataType::UInt64)) {
    return;
  }
  if (role == IntegerRole::Lengths && (from == DataType::UInt32 || from == DataType::UInt64))
    return;
  // The held elements: dimensions of size 1 or stride 0 are read once.
  std::vector<std::uint32_t> held_sizes(op.ndim(), 1);
  for (std::size_t d = 0; d < op.ndim(); ++d) {
    if (op.strides[d] != 0 && op.shape[d] > 1) {
      if (op.shape[d] > static_cast<std::int64_t>(dmlref::kMaxElementCount))
        return;  // T4 reports it
      held_sizes[d] = static_cast<std::uint32_t>(op.shape[d]);
    }
  }
  const Layout source = Layout::strided(held_sizes, op.strides);
  const auto count = source.checked_element_count();
  if (!count || *count > dmlref::kMaxElementCount) return;  // T4 reports it
  // Lengths: every value must be at least 0; uint32 when all fit, else uint64.
  // The held values in row-major order (every type converted here fits in int64: uint64 is
  // taken as it is), with the first negative one's coordinate. One loop per source type.
  std::vector<std::int64_t> values;
  values.reserve(static_cast<std::size_t>(*count));
  std::optional<std::pair<dmlref::Coord, std::int64_t>> negative;
  dmlref::visit(from, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      const dmlref::TensorView<const T> view(static_cast<const T*>(op.data), source);
      dmlref::for_each_coordinate(source, [&](const dmlref::Coord& c) {
        const auto v = static_cast<std::int64_t>(view[c]);
        if (v < 0 && !negative) negative = std::pair{c, v};
        values.push_back(v);
      });
    }
  });
  const std::int64_t max_value =
      values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  DataType to = DataType::Int32;
  if (role == IntegerRole::Lengths) {
    if (negative) {
      std::string index;
      for (std::size_t d = 0; d < op.ndim(); ++d) {
        index += (d != 0 ? ", " : "") + std::to_string(negative->first[d]);
      }
      throw speaker.error(ErrorCode::R4, arg + "[" + index + "] is " +
                                             std::to_string(negative->second) +
                                             "; a sequence length must be at least 0 (lengths are "
                                             "handed on as uint32 or uint64)");
    }
    to = max_value <= static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max())
             ? DataType::UInt32
             : DataType::UInt64;
  }
  const std::size_t width = dmlref::element_size(to);
  std::shared_ptr<std::uint64_t[]> storage(new std::uint64_t[(*count * width + 7) / 8]);
  const Layout packed = Layout::packed(held_sizes);  // the values' order
  auto write = [&](auto* out) {
    using U = std::remove_pointer_t<decltype(out)>;
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<U>(values[i]);
  };
  if (to == DataType::Int32) write(reinterpret_cast<std::int32_t*>(storage.get()));
  if (to == DataType::UInt32) write(reinterpret_cast<std::uint32_t*>(storage.get()));
  if (to == DataType::UInt64) write(reinterpret_cast<std::uint64_t*>(storage.get()));
  for (std::size_t d = 0; d < op.ndim(); ++d) {
    op.strides[d] = held_sizes[d] > 1 ? packed.strides[d] : 0;
  }
  op.type = to;
  op.data = storage.get();
  op.converted = std::move(storage);
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

  // Describes `a`. DirectML's strides are unsigned, so a negative stride cannot be described:
  // such a tensor is described by its stand-in, the same elements with every reversed dimension
  // flipped (strides |s|, starting at its lowest address). The stand-in covers the very bytes of
  // the tensor, so every rule (T2-T13, the operator's own) judges it as it would the tensor; the
  // run then reads and writes the caller's memory in its own order (`reversed()`, the runtime
  // entry points' `reversed` argument), copying nothing: a reversed broadcast or sliding-window
  // view costs what it holds. Strides past 32 bits are replaced: an input by a packed copy whose
  // zero (broadcast) strides stay zero, an output by a packed temporary (`substituted()`), copied
  // to the caller by copy_back() after success.
  // `stand_in`: false where the runtime layer itself reads the data (check_scatter), so a reversed
  // tensor is copied instead.
  void describe(std::string_view op, const Operand& a, bool is_output, bool stand_in = true) {
    sizes_ = sizes_of(op, a);
    type_ = a.type;
    data_ = const_cast<void*>(a.data);
    strides_.assign(a.ndim(), 0);
    const std::optional<Layout> layout = signed_layout(a, sizes_);
    constexpr auto kMaxStride =
        static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max());
    bool expressible = true;
    std::uint8_t reversed = 0;
    bool too_far = false;
    for (std::size_t d = 0; d < a.ndim(); ++d) {
      if (sizes_[d] <= 1) continue;  // the stride of a size-1 dimension is never used
      const std::int64_t s = a.strides[d];
      if (s < -kMaxStride || s > kMaxStride) {
        expressible = false;
        too_far = true;
      } else if (s < 0) {
        expressible = false;
        // Only a rank of 1-8 is described (T2 otherwise), so bit d is enough.
        if (d < dmlref::kMaxRank) reversed = static_cast<std::uint8_t>(reversed | (1u << d));
        strides_[d] = static_cast<std::uint32_t>(-s);
      } else {
        strides_[d] = static_cast<std::uint32_t>(s);
      }
    }
    // A layout the description's own checks reject (T2-T4) is described as it is: no copy.
    const auto count = layout ? layout->checked_element_count() : std::nullopt;
    const auto range = layout ? layout->offset_range() : std::nullopt;
    if (!expressible && count && *count <= dmlref::kMaxElementCount && *count > 0) {
      if (stand_in && reversed != 0 && !too_far && range) {
        reversed_ = reversed;
        data_ = static_cast<char*>(data_) +
                range->min * static_cast<std::int64_t>(dmlref::element_size(type_));
      } else {
        substitute(*layout, a, is_output);
      }
    }
    finish_desc(layout.has_value());
  }

  // The dimensions along which a stand-in's tensor runs backwards (bit d for dimension d).
  std::uint8_t reversed() const { return reversed_; }

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
    if (!is_output) {
      // Broadcast dimensions are read once: the copy costs the data held, not the logical size.
      Layout from = original_;
      Layout to = packed_;
      for (std::size_t d = 0; d < a.ndim(); ++d) {
        if (a.strides[d] == 0) from.sizes[d] = to.sizes[d] = 1;
      }
      copy(a.data, from, storage_.get(), to);
    }
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
  std::uint8_t reversed_ = 0;  // for a stand-in
};

// T12 and T13 on the caller's own arrays, for calls where a copy stood in for one of them (the
// runtime layer saw the copy). Tensors keep their DirectML names.
void check_caller_aliasing(std::string_view op, const std::vector<const Operand*>& inputs,
                           const std::vector<const Operand*>& outputs) {
  std::vector<dmlref::TensorExtent> extents;
  auto add = [&](const Operand& a, bool is_output) {
    const std::optional<Layout> layout = signed_layout(a, sizes_of(op, a));
    if (!layout) return;
    if (is_output) dmlref::detail::check_output_addresses_once(op, a.name, *layout);
    extents.push_back(
        dmlref::tensor_extent(a.name, a.data, *layout, dmlref::element_size(a.type), is_output));
  };
  for (const Operand* in : inputs) add(*in, false);
  for (const Operand* out : outputs) add(*out, true);
  dmlref::detail::check_no_overlap(op, std::span<const dmlref::TensorExtent>(extents));
}

// ---- arguments ----------------------------------------------------------------------------------

// "4_1", "4.1" or "DML_FEATURE_LEVEL_4_1" (dmlref::find_feature_level); None is the newest.
FeatureLevel parse_feature_level(std::string_view op, const std::optional<std::string>& text) {
  if (!text) return dmlref::kLatestFeatureLevel;
  if (const auto level = dmlref::find_feature_level(*text)) return *level;
  std::string known;
  for (FeatureLevel level : dmlref::kFeatureLevels) {
    if (!known.empty()) known += ", ";
    known += dmlref::feature_level_short_name(level);
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

// A shape after its leading 1s: two shapes that agree up to leading 1s have equal ones.
std::span<const std::int64_t> without_leading_ones(const std::vector<std::int64_t>& shape) {
  std::span<const std::int64_t> rest(shape);
  while (!rest.empty() && rest.front() == 1) rest = rest.subspan(1);
  return rest;
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
  // The runtime entry point's `reversed`: the inputs', then the output's.
  std::vector<std::uint8_t> reversed() const {
    std::vector<std::uint8_t> masks;
    for (const Described& d : described_) masks.push_back(d.reversed());
    masks.push_back(output_.reversed());
    return masks;
  }

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
        check_caller_aliasing(op_, inputs, {&out_->operand});
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

std::optional<OutOperand> import_optional_out(Speaker& speaker, const nb::object& out) {
  if (out.is_none()) {
    speaker.name("OutputTensor", "the result");
    return std::nullopt;
  }
  return import_out(speaker, out);
}

std::vector<dmlref::ConstBuffer> input_buffers(const SingleOutputCall& call, std::size_t count) {
  std::vector<dmlref::ConstBuffer> buffers;
  for (std::size_t i = 0; i < count; ++i) buffers.push_back(call.input_buffer(i));
  return buffers;
}

// ---- operators
// ------------------------------------------------------------------------------------

nb::object join_impl(Speaker& speaker, const nb::object& arrays, std::int64_t axis,
                     const std::optional<std::string>& feature_level, const nb::object& out) {
  constexpr std::string_view op = "JOIN";
  dmlref::JoinOptions options;
  options.feature_level = parse_feature_level(op, feature_level);
  // "InputTensors[1].Sizes[2]" reads "arrays[1].shape[2]"; without out=, the output's rank,
  // dtype and every size but the axis are arrays[0]'s, so its rules (J2, J3, J5) name that.
  speaker.name("InputTensors", "arrays");
  std::vector<Operand> inputs;
  for (nb::handle item : nb::iter(arrays)) {
    const std::string i = std::to_string(inputs.size());
    inputs.push_back(
        import_input(speaker, "arrays[" + i + "]", "InputTensors[" + i + "]", item, false));
  }
  if (out.is_none()) {
    speaker.output_for({ErrorCode::J2, ErrorCode::J3, ErrorCode::J5}, "arrays[0]");
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
  SingleOutputCall call(op, inputs, import_optional_out(speaker, out));
  std::vector<BufferTensorDesc> descs;
  for (std::size_t i = 0; i < inputs.size(); ++i) descs.push_back(*call.input_desc(i));
  const std::vector<dmlref::ConstBuffer> buffers = input_buffers(call, inputs.size());
  dmlref::JoinOperatorDesc desc{static_cast<std::uint32_t>(inputs.size()), descs.data(), nullptr,
                                dml_axis};
  return call.run(
      std::move(sizes), 0, type, desc.OutputTensor, [&] { dmlref::validate_join(desc, options); },
      [&] { dmlref::join(desc, buffers, call.output_buffer(), options, call.reversed()); });
}

nb::list split_impl(Speaker& speaker, const nb::object& x, const nb::object& sizes,
                    std::int64_t axis, const std::optional<std::string>& feature_level,
                    const nb::object& out) {
  constexpr std::string_view op = "SPLIT";
  dmlref::SplitOptions options;
  options.feature_level = parse_feature_level(op, feature_level);
  Operand input = import_input(speaker, "x", "InputTensor", x);
  const std::uint32_t dml_axis =
      normalize_axis(op, ErrorCode::S4, "InputTensor", axis, input.ndim());
  // The pieces are the caller's `sizes`: "the OutputTensors' Sizes[1] add up to" reads
  // "sizes add up to"; one piece is "result[2]".
  speaker.name("OutputTensors", out.is_none() ? "result" : "out");
  speaker.phrase("the OutputTensors' Sizes[" + std::to_string(dml_axis) + "] add up to",
                 "sizes add up to");
  const std::vector<std::uint32_t> input_sizes = sizes_of(op, input);
  std::vector<std::vector<std::uint32_t>> output_sizes;
  // An integer (numpy's included, which arrays are not: they have a length) is a count.
  if (PyIndex_Check(sizes.ptr()) && !nb::hasattr(sizes, "__len__")) {
    // A count of equal pieces, as numpy.split takes it.
    const std::int64_t count = integer_argument(speaker.func(), "sizes", sizes);
    if (count < 1 || count > std::numeric_limits<std::uint32_t>::max()) {
      fail(ErrorCode::S1, op, ": sizes is the output count ", count,
           "; OutputCount must be between 1 and 4294967295");
    }
    output_sizes =
        dmlref::infer_split_output_sizes(input_sizes, dml_axis, static_cast<std::uint32_t>(count));
  } else {
    for (nb::handle item : nb::iter(sizes)) {
      const std::size_t i = output_sizes.size();
      const std::int64_t piece =
          integer_argument(speaker.func(), "sizes[" + std::to_string(i) + "]", item);
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
  // `out=`: one writable array per piece, each of the piece's shape (any strides).
  std::vector<OutOperand> outs;
  if (!out.is_none()) {
    if (!nb::isinstance<nb::list>(out) && !nb::isinstance<nb::tuple>(out)) {
      throw nb::type_error((speaker.func() + ": out must be a list or tuple of arrays, one per "
                            "piece, not " + py_str(nb::type_name(out.type()))).c_str());
    }
    const nb::sequence arrays = nb::borrow<nb::sequence>(out);
    const std::size_t given = nb::len(arrays);
    if (given != output_sizes.size()) {
      throw nb::value_error((speaker.func() + ": out has " + std::to_string(given) +
                             (given == 1 ? " array" : " arrays") + " but sizes makes " +
                             std::to_string(output_sizes.size()) +
                             (output_sizes.size() == 1 ? " piece" : " pieces")).c_str());
    }
    for (std::size_t i = 0; i < output_sizes.size(); ++i) {
      const std::string arg = "out[" + std::to_string(i) + "]";
      outs.push_back(import_out(speaker, arrays[i], arg,
                                "OutputTensors[" + std::to_string(i) + "]"));
      const std::vector<std::int64_t>& got = outs.back().operand.shape;
      const std::vector<std::int64_t> want = shape_of(output_sizes[i], 0);
      if (got != want) {
        throw nb::value_error((speaker.func() + ": " + arg + ".shape is " + shape_text(got) +
                               " but piece " + std::to_string(i) + " has shape " +
                               shape_text(want)).c_str());
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
      if (outs.empty()) {
        outputs[i].describe_new(output_sizes[i], input.type);
      } else {
        outputs[i].describe(op, outs[i].operand, true);
      }
      descs[i] = outputs[i].desc();
    }
    desc = {&input_described.desc(), static_cast<std::uint32_t>(descs.size()), descs.data(),
            dml_axis};
    dmlref::validate_split(desc, options);
    // A temporary stands in for a tensor whose strides DirectML cannot describe: the caller's own
    // memory is then checked for overlaps, as the operator checks the descriptions.
    const bool substituted =
        input_described.substituted() ||
        std::any_of(outputs.begin(), outputs.end(),
                    [](const Described& d) { return d.substituted(); });
    if (!outs.empty() && substituted) {
      std::vector<const Operand*> targets;
      for (const OutOperand& o : outs) targets.push_back(&o.operand);
      check_caller_aliasing(op, {&input}, targets);
    }
  }
  nb::list result;
  std::vector<OutArray> arrays;
  std::vector<dmlref::Buffer> buffers;
  nb::object empty = nb::module_::import_("numpy").attr("empty");
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (outs.empty()) {
      nb::list dims;
      for (std::uint32_t s : output_sizes[i]) dims.append(s);
      nb::object array = empty(nb::tuple(dims), numpy_name(input.type));
      arrays.push_back(nb::cast<OutArray>(array));
      outputs[i].bind(arrays.back().data());
      result.append(array);
    } else {
      result.append(outs[i].operand.source);
    }
    buffers.push_back(outputs[i].buffer());
  }
  {
    nb::gil_scoped_release unlocked;
    std::vector<std::uint8_t> reversed;
    reversed.push_back(input_described.reversed());
    for (const Described& o : outputs) reversed.push_back(o.reversed());
    dmlref::split(desc, input_described.cbuffer(), buffers, options, reversed);
    for (std::size_t i = 0; i < outs.size(); ++i) {
      if (outputs[i].substituted()) outputs[i].copy_back(outs[i].operand);
    }
  }
  return result;
}

dmlref::DuplicatePolicy duplicate_policy(std::string_view op, const std::string& text) {
  if (text == "last") return dmlref::DuplicatePolicy::LastWins;
  if (text == "reject" || text == "error") return dmlref::DuplicatePolicy::Reject;
  fail(ErrorCode::InvalidOption, op, ": duplicates is '", text, "'; it must be 'last' or 'reject'");
}

nb::object scatter_impl(Speaker& speaker, const nb::object& data, const nb::object& indices,
                        const nb::object& updates, std::int64_t axis, const std::string& duplicates,
                        bool clamp_indices, const std::optional<std::string>& feature_level,
                        const nb::object& out) {
  constexpr std::string_view op = "SCATTER";
  dmlref::ScatterOptions options;
  options.feature_level = parse_feature_level(op, feature_level);
  options.index_policy = index_policy(clamp_indices);
  options.duplicates = duplicate_policy(op, duplicates);
  std::vector<Operand> inputs;
  inputs.push_back(import_input(speaker, "data", "InputTensor", data));
  inputs.push_back(import_input(speaker, "indices", "IndicesTensor", indices));
  convert_integers(speaker, inputs.back(), "indices", IntegerRole::Indices);
  inputs.push_back(import_input(speaker, "updates", "UpdatesTensor", updates));
  const std::uint32_t dml_axis =
      normalize_axis(op, ErrorCode::SC4, "InputTensor", axis, inputs[0].ndim());
  SingleOutputCall call(op, inputs, import_optional_out(speaker, out));
  dmlref::ScatterOperatorDesc desc{call.input_desc(0), call.input_desc(1), call.input_desc(2),
                                   nullptr, dml_axis};
  return call.run(
      sizes_of(op, inputs[0]), 0, inputs[0].type, desc.OutputTensor,
      [&] { dmlref::validate_scatter(desc, options); },
      [&] {
        dmlref::scatter(desc, call.input_buffer(0), call.input_buffer(1), call.input_buffer(2),
                        call.output_buffer(), options, call.reversed());
      });
}

nb::object gather_nd1_impl(Speaker& speaker, const nb::object& x, const nb::object& indices,
                           std::int64_t batch_dims, bool clamp_indices,
                           const std::optional<std::string>& feature_level, const nb::object& out) {
  constexpr std::string_view op = "GATHER_ND1";
  dmlref::GatherNd1Options options;
  options.feature_level = parse_feature_level(op, feature_level);
  options.index_policy = index_policy(clamp_indices);
  std::vector<Operand> inputs;
  inputs.push_back(import_input(speaker, "x", "InputTensor", x));
  inputs.push_back(import_input(speaker, "indices", "IndicesTensor", indices));
  convert_integers(speaker, inputs.back(), "indices", IntegerRole::Indices);
  std::optional<OutOperand> out_operand = import_optional_out(speaker, out);
  const auto r = static_cast<std::int64_t>(inputs[0].ndim());
  const auto q = static_cast<std::int64_t>(inputs[1].ndim());
  if (batch_dims < 0 || batch_dims >= std::max(r, q)) {
    fail(ErrorCode::G5, op, ": BatchDimensionCount is ", batch_dims, " but InputDimensionCount is ",
         r, " and IndicesDimensionCount is ", q, "; it must be at least 0 and smaller than both");
  }
  // ONNX GatherND's output rank; DirectML's tensors share one rank R with leading 1s, added here
  // and stripped from the result.
  const std::int64_t m = q >= 1 ? inputs[1].shape.back() : 0;
  const std::int64_t meaningful = (q - 1) + (r - batch_dims - m);
  const auto max_rank = static_cast<std::int64_t>(dmlref::kMaxRank);
  std::int64_t rank = std::max(r, q);
  if (meaningful >= 0) rank = std::max(rank, std::min(meaningful, max_rank));
  const std::vector<std::int64_t> out_shape =
      out_operand ? out_operand->operand.shape : std::vector<std::int64_t>();
  if (out_operand) {
    rank =
        std::max(rank, std::min(static_cast<std::int64_t>(out_operand->operand.ndim()), max_rank));
    const std::size_t given = out_operand->operand.ndim();
    out_operand->operand.pad_to(static_cast<std::size_t>(rank));
    speaker.set_pad("OutputTensor", out_operand->operand.ndim() - given);
  }
  for (Operand& in : inputs) {
    const std::size_t given = in.ndim();
    in.pad_to(static_cast<std::size_t>(rank));
    speaker.set_pad(in.name, in.ndim() - given);
  }
  std::vector<std::uint32_t> sizes;
  bool inferred = false;
  try {
    sizes = dmlref::infer_gather_nd1_output_sizes(
        sizes_of(op, inputs[0]), sizes_of(op, inputs[1]), static_cast<std::uint32_t>(r),
        static_cast<std::uint32_t>(q), static_cast<std::uint32_t>(batch_dims));
    inferred = true;
  } catch (const dmlref::Error&) {
    // Invalid sizes: the runtime layer's validation reports the first rule broken, in its order.
    sizes = sizes_of(op, inputs[0]);
  }
  const std::size_t padding =
      meaningful >= 0 && meaningful <= rank ? static_cast<std::size_t>(rank - meaningful) : 0;
  // G9 in ONNX's shapes: out= must have the result's shape (leading 1s aside), which DirectML
  // states with its padded sizes.
  if (out_operand && inferred) {
    const std::vector<std::int64_t> result_shape =
        shape_of(sizes, std::min(padding, sizes.size()));
    if (!std::ranges::equal(without_leading_ones(out_shape),
                            without_leading_ones(result_shape))) {
      throw speaker.error(ErrorCode::G9,
                          "out.shape is " + shape_text(out_shape) + " but the result's shape is " +
                              shape_text(result_shape) +
                              " (indices.shape[:-1] + x.shape[batch_dims + indices.shape[-1]:]); "
                              "they must be equal");
    }
  }
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
                           options, call.reversed());
      });
}

nb::object reverse_subsequences_impl(Speaker& speaker, const nb::object& x,
                                     const nb::object& lengths, std::int64_t axis,
                                     const std::optional<std::string>& feature_level,
                                     const nb::object& out) {
  constexpr std::string_view op = "REVERSE_SUBSEQUENCES";
  dmlref::ReverseSubsequencesOptions options;
  options.feature_level = parse_feature_level(op, feature_level);
  std::vector<Operand> inputs;
  inputs.push_back(import_input(speaker, "x", "InputTensor", x));
  inputs.push_back(import_input(speaker, "lengths", "SequenceLengthsTensor", lengths));
  convert_integers(speaker, inputs.back(), "lengths", IntegerRole::Lengths);
  const std::uint32_t dml_axis =
      normalize_axis(op, ErrorCode::R5, "InputTensor", axis, inputs[0].ndim());
  // Lengths given without the axis dimension get it back, as size 1 (R3).
  if (inputs[1].ndim() + 1 == inputs[0].ndim() && dml_axis < inputs[0].ndim()) {
    inputs[1].insert_unit_dim(dml_axis);
  }
  SingleOutputCall call(op, inputs, import_optional_out(speaker, out));
  dmlref::ReverseSubsequencesOperatorDesc desc{call.input_desc(0), call.input_desc(1), nullptr,
                                               dml_axis};
  return call.run(
      sizes_of(op, inputs[0]), 0, inputs[0].type, desc.OutputTensor,
      [&] { dmlref::validate_reverse_subsequences(desc, options); },
      [&] {
        dmlref::reverse_subsequences(desc, call.input_buffer(0), call.input_buffer(1),
                                     call.output_buffer(), options, call.reversed());
      });
}

// ---- checking results
// -----------------------------------------------------------------------------

// `a` viewed with `target`'s shape when the two agree up to leading 1s (the CLI's rule too);
// nullopt otherwise. The leading dimensions `a` lacks get stride 0.
std::optional<Operand> conformed(const Operand& a, const std::vector<std::int64_t>& target) {
  const std::size_t kept = without_leading_ones(a.shape).size();
  if (!std::ranges::equal(without_leading_ones(a.shape), without_leading_ones(target))) {
    return std::nullopt;
  }
  Operand c = a;
  c.shape = target;
  c.strides.assign(target.size(), 0);
  std::copy(a.strides.end() - static_cast<std::ptrdiff_t>(kept), a.strides.end(),
            c.strides.end() - static_cast<std::ptrdiff_t>(kept));
  return c;
}

// What dmlref.compare returns: the C++ result plus numpy's view of it.
struct PyCompareResult {
  dmlref::CompareResult result;
  std::vector<std::int64_t> shape;  // expected's numpy shape
  std::size_t pad = 0;              // leading dimensions added to compare a 0-d array
  bool equal_nan = true;
};

std::string shortest_double(double v) {
  if (v != v) return "nan";
  if (v == std::numeric_limits<double>::infinity()) return "inf";
  std::string text = dmlref::detail::shortest_float(v);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";  // numpy's repr: 2.0, not 2
  return text;
}

std::string index_text(const dmlref::Mismatch& m, std::size_t pad) {
  std::string s = "[";
  for (std::uint32_t d = static_cast<std::uint32_t>(pad); d < m.rank; ++d) {
    if (d != pad) s += ", ";
    s += std::to_string(m.coordinate[d]);
  }
  return s + "]";
}

// The report, which dmlref.testing.assert_equal raises as its AssertionError:
//   Arrays are not equal (float32, shape (2, 3), bit-exact, NaN == NaN)
//   Mismatched elements: 1 / 6 (16.7%)
//   Largest absolute difference: 1.0
//   Largest ULP difference: 524288
//   Mismatch at index: actual, expected
//    [1, 2]: 7 (0x40e00000), 6 (0x40c00000)
std::string compare_report(const PyCompareResult& p) {
  const dmlref::CompareResult& r = p.result;
  const bool is_float = is_float_type(r.data_type);
  std::string mode = numpy_name(r.data_type) + ", shape " + shape_text(p.shape) + ", ";
  if (is_float && r.options.ulp_tolerance) {
    mode += "within " + std::to_string(*r.options.ulp_tolerance) + " ULP, -0 == +0";
  } else {
    mode += "bit-exact";
  }
  if (is_float) mode += p.equal_nan ? ", NaN == NaN" : ", NaNs equal only with the same bits";
  if (r.tolerance_ignored) mode += "; ulp applies to float dtypes only";
  std::ostringstream os;
  const std::string subject = r.name == "output" ? std::string("Arrays") : r.name + ": arrays";
  if (r.passed()) {
    os << subject << " are equal: all " << r.element_count << " elements match (" << mode << ")\n";
  } else {
    os << subject << " are not equal (" << mode << ")\n";
    std::array<char, 32> pct{};
    std::snprintf(pct.data(), pct.size(), "%.3g",
                  100.0 * static_cast<double>(r.mismatch_count) /
                      static_cast<double>(std::max<std::uint64_t>(r.element_count, 1)));
    os << "Mismatched elements: " << r.mismatch_count << " / " << r.element_count << " ("
       << pct.data() << "%)\n";
    if (r.max_abs_diff) {
      os << "Largest absolute difference: "
         << (is_float ? shortest_double(*r.max_abs_diff) : std::to_string(*r.max_ulp_diff)) << "\n";
      os << "Largest ULP difference: " << *r.max_ulp_diff << "\n";
    } else {
      os << "Largest absolute difference: nan (every mismatch involves a NaN)\n";
    }
    os << "Mismatch at index: actual, expected\n";
    for (const dmlref::Mismatch& m : r.mismatches) {
      os << " " << index_text(m, p.pad) << ": " << m.actual << ", " << m.expected;
      if (m.ulp_distance) os << " (" << *m.ulp_distance << " ULP apart)";
      os << "\n";
    }
    if (r.mismatch_count > r.mismatches.size()) {
      os << " ... and " << r.mismatch_count - r.mismatches.size()
         << " more not shown (max_report=" << r.options.max_report << ")\n";
    }
  }
  os << r.notes();
  std::string text = os.str();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// A numpy scalar of `type` with these bits (exactly: NaN payloads and -0 kept).
nb::object numpy_value(DataType type, std::uint64_t bits) {
  nb::module_ np = nb::module_::import_("numpy");
  const std::size_t size = dmlref::element_size(type);
  nb::object raw = np.attr("array")(nb::make_tuple(bits), "u" + std::to_string(size));
  return raw.attr("view")(numpy_name(type))[0];
}

PyCompareResult compare_impl(Speaker& speaker, const nb::object& actual, const nb::object& expected,
                             std::int64_t ulp, bool equal_nan, const nb::object& untouched,
                             std::int64_t max_report, const std::string& name) {
  constexpr std::string_view op = "compare";
  Operand e = import_input(speaker, "expected", name + " (expected)", expected);
  Operand a = import_input(speaker, "actual", name + " (actual)", actual);
  std::optional<Operand> u;
  if (!untouched.is_none())
    u = import_input(speaker, "untouched", name + " (untouched)", untouched);
  for (const Operand* other : {&a, u ? &*u : nullptr}) {
    if (other == nullptr || other->type == e.type) continue;
    throw nb::type_error((speaker.func() + ": " + (other == &a ? "actual" : "untouched") +
                          " has dtype " + numpy_name(other->type) + " but expected has dtype " +
                          numpy_name(e.type) + "; they must be the same")
                             .c_str());
  }
  if (ulp < 0) {
    fail(ErrorCode::InvalidOption, op, ": ulp is ", ulp,
         "; it must be 0 (bit-exact) or a number of ULPs");
  }
  if (max_report < 0) {
    fail(ErrorCode::InvalidOption, op, ": max_report is ", max_report, "; it must be 0 or more");
  }
  PyCompareResult out;
  out.shape = e.shape;
  out.equal_nan = equal_nan;
  // A 0-d array is compared as one element of shape (1,).
  if (e.ndim() == 0) {
    out.pad = 1;
    e.pad_to(1);
  }
  auto conform = [&](Operand& other, const char* what) {
    std::optional<Operand> c = conformed(other, e.shape);
    if (!c) {
      std::vector<std::int64_t> given = other.shape;
      throw speaker.error(ErrorCode::ShapeMismatch,
                          std::string(what) + " has shape " + shape_text(given) +
                              " but expected has shape " + shape_text(out.shape) +
                              "; they must be equal (leading 1s aside)");
    }
    other = std::move(*c);
  };
  conform(a, "actual");
  if (u) conform(*u, "untouched");
  dmlref::CompareOptions options;
  options.nan_equal = equal_nan;
  if (ulp > 0) options.ulp_tolerance = static_cast<std::uint64_t>(ulp);
  options.max_report = static_cast<std::size_t>(max_report);
  options.name = name;
  // Ranks 1-8: import_input refused more than 8, a 0-d expected was padded and the others
  // conformed to it.
  const Layout el = signed_layout(e, sizes_of(op, e)).value();
  const Layout al = signed_layout(a, sizes_of(op, a)).value();
  const std::optional<Layout> ul = u ? signed_layout(*u, sizes_of(op, *u)) : std::nullopt;
  nb::gil_scoped_release unlocked;
  out.result = dmlref::visit(e.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const dmlref::TensorView<const T> ev(static_cast<const T*>(e.data), el);
    const dmlref::TensorView<const T> av(static_cast<const T*>(a.data), al);
    if (u) {
      return dmlref::compare(
          ev, av, dmlref::TensorView<const T>(static_cast<const T*>(u->data), *ul), options);
    }
    return dmlref::compare(ev, av, options);
  });
  return out;
}

using ScatterCheck = dmlref::ScatterCheckResult<dmlref::ScatterElementBits>;

ScatterCheck check_scatter_impl(Speaker& speaker, const nb::object& data, const nb::object& indices,
                                const nb::object& updates, const nb::object& actual,
                                std::int64_t axis, bool clamp_indices,
                                const std::optional<std::string>& feature_level,
                                std::int64_t max_report) {
  constexpr std::string_view op = "SCATTER";
  dmlref::ScatterOptions options;
  options.feature_level = parse_feature_level(op, feature_level);
  options.index_policy = index_policy(clamp_indices);
  if (max_report < 0) {
    fail(ErrorCode::InvalidOption, op, ": max_report is ", max_report, "; it must be 0 or more");
  }
  std::vector<Operand> operands;
  operands.push_back(import_input(speaker, "data", "InputTensor", data));
  operands.push_back(import_input(speaker, "indices", "IndicesTensor", indices));
  convert_integers(speaker, operands.back(), "indices", IntegerRole::Indices);
  operands.push_back(import_input(speaker, "updates", "UpdatesTensor", updates));
  operands.push_back(import_input(speaker, "actual", "OutputTensor", actual));
  // An actual result with extra (or fewer) leading 1s is read with data's shape, as compare does.
  if (std::optional<Operand> c = conformed(operands[3], operands[0].shape))
    operands[3] = std::move(*c);
  const std::uint32_t dml_axis =
      normalize_axis(op, ErrorCode::SC4, "InputTensor", axis, operands[0].ndim());
  nb::gil_scoped_release unlocked;
  // The actual result is only read: described like an input, it is still checked as the output.
  std::vector<Described> described(operands.size());
  for (std::size_t i = 0; i < operands.size(); ++i) {
    described[i].describe(op, operands[i], false, false);
  }
  const dmlref::ScatterOperatorDesc desc{&described[0].desc(), &described[1].desc(),
                                         &described[2].desc(), &described[3].desc(), dml_axis};
  return dmlref::check_scatter_result(desc, described[0].cbuffer(), described[1].cbuffer(),
                                      described[2].cbuffer(), described[3].cbuffer(), options,
                                      static_cast<std::size_t>(max_report));
}

// ---- the module's functions: each call speaks the caller's words ------------------------------

nb::object join(const nb::object& arrays, std::int64_t axis,
                const std::optional<std::string>& feature_level, const nb::object& out) {
  Speaker speaker("dmlref.join");
  return speaking(speaker, [&] { return join_impl(speaker, arrays, axis, feature_level, out); });
}

nb::list split(const nb::object& x, const nb::object& sizes, std::int64_t axis,
               const std::optional<std::string>& feature_level, const nb::object& out) {
  Speaker speaker("dmlref.split");
  return speaking(speaker,
                  [&] { return split_impl(speaker, x, sizes, axis, feature_level, out); });
}

nb::object scatter(const nb::object& data, const nb::object& indices, const nb::object& updates,
                   std::int64_t axis, const std::string& duplicates, bool clamp_indices,
                   const std::optional<std::string>& feature_level, const nb::object& out) {
  Speaker speaker("dmlref.scatter");
  return speaking(speaker, [&] {
    return scatter_impl(speaker, data, indices, updates, axis, duplicates, clamp_indices,
                        feature_level, out);
  });
}

nb::object gather_nd1(const nb::object& x, const nb::object& indices, std::int64_t batch_dims,
                      bool clamp_indices, const std::optional<std::string>& feature_level,
                      const nb::object& out) {
  Speaker speaker("dmlref.gather_nd1");
  return speaking(speaker, [&] {
    return gather_nd1_impl(speaker, x, indices, batch_dims, clamp_indices, feature_level, out);
  });
}

nb::object reverse_subsequences(const nb::object& x, const nb::object& lengths, std::int64_t axis,
                                const std::optional<std::string>& feature_level,
                                const nb::object& out) {
  Speaker speaker("dmlref.reverse_subsequences");
  return speaking(speaker, [&] {
    return reverse_subsequences_impl(speaker, x, lengths, axis, feature_level, out);
  });
}

PyCompareResult compare(const nb::object& actual, const nb::object& expected, std::int64_t ulp,
                        std::optional<bool> equal_nan, const nb::object& untouched,
                        std::int64_t max_report, const std::string& name,
                        std::optional<bool> nan_equal) {
  Speaker speaker("dmlref.compare");
  const bool nans_equal = equal_nan.value_or(nan_equal.value_or(true));
  return speaking(speaker, [&] {
    return compare_impl(speaker, actual, expected, ulp, nans_equal, untouched, max_report, name);
  });
}

// What dmlref.check_scatter returns: the C++ result and its report in the caller's words.
struct PyScatterCheck {
  ScatterCheck result;
  std::string report;
};

PyScatterCheck check_scatter(const nb::object& data, const nb::object& indices,
                             const nb::object& updates, const nb::object& actual,
                             std::int64_t axis, bool clamp_indices,
                             const std::optional<std::string>& feature_level,
                             std::int64_t max_report) {
  Speaker speaker("dmlref.check_scatter");
  PyScatterCheck out;
  out.result = speaking(speaker, [&] {
    return check_scatter_impl(speaker, data, indices, updates, actual, axis, clamp_indices,
                              feature_level, max_report);
  });
  std::string report = out.result.to_string();
  constexpr std::string_view kSubject = "SCATTER result check: ";
  if (report.rfind(kSubject, 0) == 0) report.replace(0, kSubject.size(), "dmlref.check_scatter: ");
  out.report = speaker.words(report);
  return out;
}

// ---- errors -------------------------------------------------------------------------------------

PyObject* g_error_type = nullptr;  // dmlref.Error

void translate_error(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const PythonError& e) {
    nb::object error = nb::borrow(g_error_type)(e.message);
    error.attr("code") = std::string(dmlref::error_code_name(e.code));
    PyErr_SetObject(g_error_type, error.ptr());
  } catch (const dmlref::Error& e) {
    nb::object error = nb::borrow(g_error_type)(e.what());
    error.attr("code") = std::string(dmlref::error_code_name(e.code()));
    PyErr_SetObject(g_error_type, error.ptr());
  }
}

// A coordinate as a numpy index, without the `first` leading dimensions the binding added.
nb::tuple coordinate(const dmlref::Coord& c, std::uint32_t rank, std::size_t first = 0) {
  nb::list values;
  for (std::size_t d = first; d < rank; ++d) values.append(c[d]);
  return nb::tuple(values);
}

}  // namespace

NB_MODULE(_dmlref, m) {
  m.doc() =
      "Golden model of DirectML's data-movement operators (JOIN, SPLIT, SCATTER, GATHER_ND1,\n"
      "REVERSE_SUBSEQUENCES) over numpy arrays, computed and validated by the C++ library.\n"
      "Inputs: numpy arrays of the eleven DirectML types (float64/32/16, int64/32/16/8,\n"
      "uint64/32/16/8) with any strides, or CPU objects exporting __dlpack__. A rule violation\n"
      "raises dmlref.Error (a ValueError) whose .code is the rule id, e.g. 'J5'. See\n"
      "docs/python.md.";
  m.attr("__version__") = DMLREF_VERSION_STRING;

  g_error_type = PyErr_NewExceptionWithDoc(
      "dmlref.Error",
      "A DirectML rule the call breaks. str(e) names the function, the argument (arrays[1], x,\n"
      "indices, out, ...), numpy shapes and dtypes and both values, and ends with the rule id\n"
      "and its page, e.g. '[J5] docs/join.md#J5'; e.code is the rule id ('J5', 'T13', 'SC8',\n"
      "'ScatterDuplicate', ...).",
      PyExc_ValueError, nullptr);
  m.attr("Error") = nb::borrow(g_error_type);
  nb::register_exception_translator(translate_error);

  nb::class_<PyCompareResult>(
      m, "CompareResult",
      "What dmlref.compare found: truthy when every element matches. str() is the report that\n"
      "dmlref.testing.assert_equal raises: mismatches out of the total, the largest absolute and\n"
      "ULP difference, and the first mismatches as numpy indices with both values (bits shown).")
      .def("__bool__", [](const PyCompareResult& r) { return r.result.passed(); })
      .def("__str__", &compare_report)
      .def("__repr__",
           [](const PyCompareResult& r) {
             return "<dmlref.CompareResult " + std::to_string(r.result.mismatch_count) + " of " +
                    std::to_string(r.result.element_count) + " elements differ>";
           })
      .def_prop_ro(
          "passed", [](const PyCompareResult& r) { return r.result.passed(); },
          "True when no element differs.")
      .def_prop_ro(
          "element_count", [](const PyCompareResult& r) { return r.result.element_count; },
          "Elements compared.")
      .def_prop_ro(
          "mismatch_count", [](const PyCompareResult& r) { return r.result.mismatch_count; },
          "Elements that differ (all of them, not only the reported ones).")
      .def_prop_ro(
          "indices",
          [](const PyCompareResult& r) {
            const std::size_t ndim = r.shape.size();
            nb::list rows;
            for (const dmlref::Mismatch& mm : r.result.mismatches) {
              rows.append(coordinate(mm.coordinate, mm.rank, r.pad));
            }
            nb::module_ np = nb::module_::import_("numpy");
            return np.attr("array")(rows, "int64")
                .attr("reshape")(nb::make_tuple(nb::len(rows), ndim));
          },
          "The first mismatches' numpy indices, one row each, in row-major order: an int64 array\n"
          "of shape (k, ndim), k = min(mismatch_count, max_report); `truncated` says whether\n"
          "mismatches were left out (pass a larger max_report for more).")
      .def_prop_ro(
          "truncated",
          [](const PyCompareResult& r) {
            return r.result.mismatch_count > r.result.mismatches.size();
          },
          "True when more elements differ than `indices` holds.")
      .def_prop_ro(
          "mismatches",
          [](const PyCompareResult& r) {
            nb::list out;
            for (const dmlref::Mismatch& mm : r.result.mismatches) {
              out.append(nb::make_tuple(coordinate(mm.coordinate, mm.rank, r.pad),
                                        numpy_value(r.result.data_type, mm.actual_bits),
                                        numpy_value(r.result.data_type, mm.expected_bits)));
            }
            return out;
          },
          "The first mismatches as (index, actual, expected): a tuple index and numpy scalars\n"
          "with the elements' exact bits.")
      .def_prop_ro(
          "max_abs_diff",
          [](const PyCompareResult& r) -> nb::object {
            const bool is_float = is_float_type(r.result.data_type);
            if (r.result.passed()) return is_float ? nb::cast(0.0) : nb::cast(0);
            if (!r.result.max_abs_diff) return nb::cast(std::numeric_limits<double>::quiet_NaN());
            if (!is_float) return nb::cast(*r.result.max_ulp_diff);
            return nb::cast(*r.result.max_abs_diff);
          },
          "The largest |actual - expected| over the mismatches (an int for integer dtypes, exact;\n"
          "a float for float dtypes). 0 when all match; nan when every mismatch involves a NaN.")
      .def_prop_ro(
          "max_ulp_diff",
          [](const PyCompareResult& r) -> nb::object {
            if (r.result.passed()) return nb::cast(0);
            if (!r.result.max_ulp_diff) return nb::none();
            return nb::cast(*r.result.max_ulp_diff);
          },
          "The largest ULP distance over the mismatches (float dtypes: steps between the two\n"
          "values, -0 and +0 being the same point; integer dtypes: the difference). 0 when all\n"
          "match; None when every mismatch involves a NaN.")
      .def_prop_ro(
          "actual_all_zero", [](const PyCompareResult& r) { return r.result.actual_all_zero; },
          "actual is all zero bits but expected is not (a result never read back?).")
      .def_prop_ro(
          "actual_untouched", [](const PyCompareResult& r) { return r.result.actual_untouched; },
          "actual equals `untouched` but expected does not (a skipped dispatch?).")
      .def_prop_ro(
          "untouched_equals_expected",
          [](const PyCompareResult& r) { return r.result.untouched_equals_expected; },
          "expected equals `untouched`: a skipped dispatch would go unnoticed.");

  nb::class_<PyScatterCheck>(
      m, "ScatterCheckResult",
      "What dmlref.check_scatter found: truthy when the actual output is a correct SCATTER result\n"
      "(any one of the colliding updates accepted where indices collide); str() lists mismatches.")
      .def("__bool__", [](const PyScatterCheck& r) { return r.result.ok(); })
      .def("__str__", [](const PyScatterCheck& r) { return r.report; })
      .def("__repr__",
           [](const PyScatterCheck& r) {
             return "<dmlref.ScatterCheckResult " + std::to_string(r.result.mismatch_count) +
                    " of " + std::to_string(r.result.element_count) + " elements mismatch>";
           })
      .def_prop_ro("passed", [](const PyScatterCheck& r) { return r.result.ok(); },
                   "True when the actual output is acceptable.")
      .def_prop_ro("element_count", [](const PyScatterCheck& r) { return r.result.element_count; },
                   "Output elements checked.")
      .def_prop_ro("mismatch_count",
                   [](const PyScatterCheck& r) { return r.result.mismatch_count; },
                   "Elements not acceptable.")
      .def_prop_ro("colliding_element_count",
                   [](const PyScatterCheck& r) { return r.result.colliding_element_count; },
                   "Output elements that several updates target.")
      .def_prop_ro(
          "mismatches",
          [](const PyScatterCheck& r) {
            nb::list out;
            for (const auto& mm : r.result.mismatches) {
              out.append(coordinate(mm.output_coordinate, r.result.rank));
            }
            return out;
          },
          "Output indices of the first max_report mismatches, in row-major order.");

  m.def("join", &join, "arrays"_a, "axis"_a = 0, "feature_level"_a = nb::none(),
        "out"_a = nb::none(),
        "DirectML JOIN: numpy.concatenate(arrays, axis). All arrays have one rank and dtype and\n"
        "agree on every dimension but `axis` (negative counts from the end). feature_level: the\n"
        "target DirectML feature level, e.g. '4_1' (default: the newest). out: a preallocated\n"
        "array of the result's shape and dtype (any strides), written only when the call\n"
        "succeeds, and returned. Raises dmlref.Error (with .code) on a broken rule.");
  m.def("split", &split, "x"_a, "sizes"_a, "axis"_a = 0, "feature_level"_a = nb::none(),
        "out"_a = nb::none(),
        "DirectML SPLIT: cuts x along `axis` into pieces of the given sizes (a list that sums to\n"
        "x.shape[axis]), or into `sizes` equal pieces when it is an int. Returns a list of new\n"
        "C-contiguous arrays, or with out=, a list or tuple of preallocated arrays (one per piece,\n"
        "of its shape and x's dtype, any strides), the arrays themselves, written only when the\n"
        "call succeeds. Raises dmlref.Error (with .code) on a broken rule.");
  m.def("scatter", &scatter, "data"_a, "indices"_a, "updates"_a, "axis"_a = 0,
        "duplicates"_a = "last", "clamp_indices"_a = false, "feature_level"_a = nb::none(),
        "out"_a = nb::none(),
        "DirectML SCATTER (ONNX ScatterElements without reduction): a copy of data with\n"
        "out[i][j][indices[i][j]] = updates[i][j] along `axis`. indices (any integer dtype; int8,\n"
        "int16, uint8 and uint16 are handed on as int32) and updates have one shape, equal to "
        "data's in every dimension but `axis` (DirectML's\n"
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
      "the end; one out of range is an error unless clamp_indices=True. indices: any integer\n"
      "dtype (int8, int16, uint8 and uint16 are handed on as int32). out: a preallocated array\n"
      "of that shape (any strides), written only on success, and returned.");
  m.def("reverse_subsequences", &reverse_subsequences, "x"_a, "lengths"_a, "axis"_a = 0,
        "feature_level"_a = nb::none(), "out"_a = nb::none(),
        "DirectML REVERSE_SUBSEQUENCES: along `axis`, the first L elements of every sequence are\n"
        "reversed, L its length (longer than the axis means all of it). lengths: any integer\n"
        "dtype whose values are at least 0 (handed on as uint32, or uint64 past 2^32 - 1), with\n"
        "x's shape with the axis set to 1, or with the axis removed. out: a preallocated\n"
        "array of x's shape (any strides), written only on success, and returned.");
  m.def("compare", &compare, "actual"_a, "expected"_a, nb::kw_only(), "ulp"_a = 0,
        "equal_nan"_a = nb::none(), "untouched"_a = nb::none(), "max_report"_a = 10,
        "name"_a = "output", "nan_equal"_a = nb::none(),
        "compare(actual, expected, *, ulp=0, equal_nan=True, untouched=None, max_report=10)\n\n"
        "Compares two arrays of one dtype element by element (strides may differ; shapes must be\n"
        "equal, leading 1s aside). ulp=0: bit-exact (-0 differs from +0); ulp=N > 0: float\n"
        "elements match within N ULP (-0 == +0). equal_nan: every NaN equals every NaN (False:\n"
        "NaNs match only with the same bits). untouched: the output buffer's contents before the\n"
        "run, so a skipped dispatch is named. Returns a CompareResult: truthy when all match,\n"
        "with .mismatch_count, .indices, .max_abs_diff, .max_ulp_diff; str() is the report\n"
        "dmlref.testing.assert_equal raises. nan_equal is the old name of equal_nan.");
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
  m.def("release_scratch_memory", &dmlref::release_scratch_memory,
        "Frees the scratch memory the operators keep between calls (at most 256 MiB: the places\n"
        "of the largest SCATTER so far); the next call that needs it allocates it again.");
}
