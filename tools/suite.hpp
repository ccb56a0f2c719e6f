// The conformance suite's shared pieces (dmlref-check generate / verify, and the tests):
//   - a small JSON value with a reader and a writer (no dependency), numbers kept as their text
//     so 64-bit integers survive exactly;
//   - DxDispatch's model format as the suite writes it: resources from .npy files or a constant
//     fill, one DirectML operator, a dispatch and writeFile commands;
//   - run_model: executes such a model with dmlref's runtime layer (the fast path, or the plain
//     reference loops) and writes each writeFile the way DxDispatch does. The generator uses it
//     to compute the expected files; the tests use it as a simulated device.
#pragma once

#include <dmlref/dmlref.hpp>
#include <dmlref/npy.hpp>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <list>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dmlref_suite {

namespace fs = std::filesystem;
using dmlref::DataType;

// A model, case or results file that cannot be read as the suite's format.
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ------------------------------------------------------------------------------------------------
// JSON

class Json {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Json() = default;
  Json(bool b) : kind_(Kind::Bool), flag_(b) {}  // NOLINT: literal-like
  Json(const char* s) : kind_(Kind::String), text_(s) {}  // NOLINT
  Json(std::string s) : kind_(Kind::String), text_(std::move(s)) {}  // NOLINT
  Json(std::string_view s) : kind_(Kind::String), text_(s) {}  // NOLINT
  Json(int v) : Json(static_cast<std::int64_t>(v)) {}  // NOLINT
  Json(unsigned v) : Json(static_cast<std::uint64_t>(v)) {}  // NOLINT
  Json(std::int64_t v) : kind_(Kind::Number), text_(std::to_string(v)) {}  // NOLINT
  Json(std::uint64_t v) : kind_(Kind::Number), text_(std::to_string(v)) {}  // NOLINT
  // A number given as its JSON text ("-999.0"), written unchanged.
  static Json number_text(std::string text) {
    Json j;
    j.kind_ = Kind::Number;
    j.text_ = std::move(text);
    return j;
  }
  static Json array() {
    Json j;
    j.kind_ = Kind::Array;
    return j;
  }
  static Json object() {
    Json j;
    j.kind_ = Kind::Object;
    return j;
  }
  template <class T>
  static Json array_of(const std::vector<T>& values) {
    Json j = array();
    for (const T& v : values) j.push(Json(v));
    return j;
  }

  Kind kind() const noexcept { return kind_; }
  bool is_array() const noexcept { return kind_ == Kind::Array; }
  bool is_object() const noexcept { return kind_ == Kind::Object; }
  bool is_string() const noexcept { return kind_ == Kind::String; }
  bool is_number() const noexcept { return kind_ == Kind::Number; }

  Json& push(Json v) {
    items_.push_back(std::move(v));
    return items_.back();
  }
  // Sets a member, keeping the order members were first set in.
  Json& set(const std::string& key, Json v) {
    for (auto& m : members_) {
      if (m.first == key) return m.second = std::move(v);
    }
    members_.emplace_back(key, std::move(v));
    return members_.back().second;
  }
  const Json* find(std::string_view key) const {
    for (const auto& m : members_) {
      if (m.first == key) return &m.second;
    }
    return nullptr;
  }
  const Json& at(std::string_view key) const {
    const Json* j = find(key);
    if (j == nullptr || !is_object()) {
      throw FormatError("missing key \"" + std::string(key) + "\"");
    }
    return *j;
  }
  const std::vector<Json>& items() const {
    if (!is_array()) throw FormatError("expected an array");
    return items_;
  }
  const std::vector<std::pair<std::string, Json>>& members() const {
    if (!is_object()) throw FormatError("expected an object");
    return members_;
  }
  const std::string& str() const {
    if (!is_string()) throw FormatError("expected a string");
    return text_;
  }
  bool boolean() const {
    if (kind_ != Kind::Bool) throw FormatError("expected true or false");
    return flag_;
  }
  std::uint64_t u64(std::uint64_t max = ~std::uint64_t{0}) const {
    std::uint64_t v = 0;
    if (!is_number() || !parse_whole(v) || v > max) {
      throw FormatError("expected an integer in [0, " + std::to_string(max) + "], got " + text_);
    }
    return v;
  }
  std::uint32_t u32() const { return static_cast<std::uint32_t>(u64(0xFFFFFFFFu)); }
  std::int64_t i64() const {
    std::int64_t v = 0;
    if (!is_number() || !parse_whole(v)) throw FormatError("expected an integer, got " + text_);
    return v;
  }
  double real() const {
    double v = 0;
    const auto r = std::from_chars(text_.data(), text_.data() + text_.size(), v);
    if (!is_number() || r.ec != std::errc() || r.ptr != text_.data() + text_.size()) {
      throw FormatError("expected a number, got " + text_);
    }
    return v;
  }
  std::vector<std::uint32_t> u32_list() const {
    std::vector<std::uint32_t> out;
    for (const Json& j : items()) out.push_back(j.u32());
    return out;
  }

  // Two-space indentation; arrays of plain values stay on one line.
  std::string dump() const {
    std::string out;
    write(out, 0);
    out += '\n';
    return out;
  }

  static Json parse(std::string_view text) {
    Parser p{text};
    Json j = p.value(0);
    p.space();
    if (p.pos != text.size()) p.error("text after the JSON value");
    return j;
  }

 private:
  template <class T>
  bool parse_whole(T& v) const {
    const auto r = std::from_chars(text_.data(), text_.data() + text_.size(), v);
    return r.ec == std::errc() && r.ptr == text_.data() + text_.size();
  }

  static void quote(std::string& out, const std::string& s) {
    out += '"';
    for (char c : s) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            constexpr char kHex[] = "0123456789abcdef";
            out += "\\u00";
            out += kHex[(c >> 4) & 0xF];
            out += kHex[c & 0xF];
          } else {
            out += c;
          }
      }
    }
    out += '"';
  }

  bool flat() const {
    for (const Json& j : items_) {
      if (j.is_array() || j.is_object()) return false;
    }
    return true;
  }

  void write(std::string& out, int indent) const {
    const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
    switch (kind_) {
      case Kind::Null: out += "null"; return;
      case Kind::Bool: out += flag_ ? "true" : "false"; return;
      case Kind::Number: out += text_; return;
      case Kind::String: quote(out, text_); return;
      case Kind::Array:
        if (flat()) {
          out += '[';
          for (std::size_t i = 0; i < items_.size(); ++i) {
            if (i != 0) out += ", ";
            items_[i].write(out, indent);
          }
          out += ']';
          return;
        }
        out += "[\n";
        for (std::size_t i = 0; i < items_.size(); ++i) {
          out += pad;
          items_[i].write(out, indent + 2);
          out += i + 1 < items_.size() ? ",\n" : "\n";
        }
        out.append(static_cast<std::size_t>(indent), ' ');
        out += ']';
        return;
      case Kind::Object:
        if (members_.empty()) {
          out += "{}";
          return;
        }
        out += "{\n";
        for (std::size_t i = 0; i < members_.size(); ++i) {
          out += pad;
          quote(out, members_[i].first);
          out += ": ";
          members_[i].second.write(out, indent + 2);
          out += i + 1 < members_.size() ? ",\n" : "\n";
        }
        out.append(static_cast<std::size_t>(indent), ' ');
        out += '}';
        return;
    }
  }

  // Strict JSON plus what DxDispatch's reader also takes: // and /* */ comments, trailing commas.
  struct Parser {
    std::string_view text;
    std::size_t pos = 0;

    [[noreturn]] void error(const std::string& what) const {
      throw FormatError("JSON: " + what + " at byte " + std::to_string(pos));
    }
    void space() {
      while (pos < text.size()) {
        const char c = text[pos];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
          ++pos;
        } else if (text.substr(pos, 2) == "//") {
          while (pos < text.size() && text[pos] != '\n') ++pos;
        } else if (text.substr(pos, 2) == "/*") {
          const std::size_t end = text.find("*/", pos + 2);
          if (end == std::string_view::npos) error("unterminated comment");
          pos = end + 2;
        } else {
          return;
        }
      }
    }
    bool eat(char c) {
      space();
      if (pos < text.size() && text[pos] == c) {
        ++pos;
        return true;
      }
      return false;
    }
    std::string string_literal() {
      if (!eat('"')) error("expected a string");
      std::string s;
      while (pos < text.size() && text[pos] != '"') {
        char c = text[pos++];
        if (static_cast<unsigned char>(c) < 0x20) error("control character in a string");
        if (c == '\\') {
          if (pos >= text.size()) break;
          c = text[pos++];
          switch (c) {
            case 'n': s += '\n'; break;
            case 't': s += '\t'; break;
            case 'r': s += '\r'; break;
            case 'b': s += '\b'; break;
            case 'f': s += '\f'; break;
            case 'u': {
              if (pos + 4 > text.size()) error("short \\u escape");
              unsigned v = 0;
              const auto r = std::from_chars(text.data() + pos, text.data() + pos + 4, v, 16);
              if (r.ptr != text.data() + pos + 4) error("bad \\u escape");
              pos += 4;
              if (v >= 0x80) error("only ASCII \\u escapes are supported");
              s += static_cast<char>(v);
              break;
            }
            case '"': case '\\': case '/': s += c; break;
            default: error("bad escape");
          }
        } else {
          s += c;
        }
      }
      if (pos >= text.size()) error("unterminated string");
      ++pos;
      return s;
    }
    Json value(int depth) {
      if (depth > 64) error("nesting deeper than 64");
      space();
      if (pos >= text.size()) error("expected a value");
      const char c = text[pos];
      if (c == '{') {
        ++pos;
        Json j = object();
        while (!eat('}')) {
          std::string key = string_literal();
          if (!eat(':')) error("expected ':'");
          if (j.find(key) != nullptr) error("duplicate key \"" + key + "\"");
          j.members_.emplace_back(std::move(key), value(depth + 1));
          if (!eat(',')) {
            if (!eat('}')) error("expected ',' or '}'");
            break;
          }
        }
        return j;
      }
      if (c == '[') {
        ++pos;
        Json j = array();
        while (!eat(']')) {
          j.items_.push_back(value(depth + 1));
          if (!eat(',')) {
            if (!eat(']')) error("expected ',' or ']'");
            break;
          }
        }
        return j;
      }
      if (c == '"') return Json(string_literal());
      for (const auto& [word, v] : {std::pair<std::string_view, int>{"true", 1}, {"false", 0},
                                    {"null", -1}}) {
        if (text.substr(pos, word.size()) == word) {
          pos += word.size();
          return v < 0 ? Json() : Json(v == 1);
        }
      }
      const std::size_t start = pos;
      if (text[pos] == '-') ++pos;
      while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) != 0 ||
                                   text[pos] == '.' || text[pos] == 'e' || text[pos] == 'E' ||
                                   text[pos] == '+' || text[pos] == '-')) {
        ++pos;
      }
      if (pos == start || (pos == start + 1 && text[start] == '-')) error("unexpected character");
      return number_text(std::string(text.substr(start, pos - start)));
    }
  };

  Kind kind_ = Kind::Null;
  bool flag_ = false;
  std::string text_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError("cannot open '" + path.string() + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline Json read_json(const fs::path& path) {
  try {
    return Json::parse(read_text(path));
  } catch (const FormatError& e) {
    throw FormatError(path.string() + ": " + e.what());
  }
}

// ------------------------------------------------------------------------------------------------
// The sentinel an output buffer is filled with before the dispatch: a correct device leaves it in
// every slot the output tensor does not address. Input data never holds it (see the generator),
// so an element the device skipped cannot pass by accident. Exactly representable in the type.

inline std::string sentinel_text(DataType type) {
  switch (type) {
    case DataType::Float64: case DataType::Float32: case DataType::Float16: return "-999.0";
    case DataType::Int64: case DataType::Int32: return "-889275714";
    case DataType::Int16: return "-13570";
    case DataType::Int8: return "-91";
    case DataType::UInt64: case DataType::UInt32: return "3405705229";
    case DataType::UInt16: return "51966";
    case DataType::UInt8: return "165";
    case DataType::Unknown: break;
  }
  throw FormatError("no sentinel for " + std::string(dmlref::data_type_name(type)));
}

// The sentinel's bit pattern, widened to 64 bits.
inline std::uint64_t sentinel_bits(DataType type) {
  return dmlref::visit(type, [](auto tag) -> std::uint64_t {
    using T = typename decltype(tag)::type;
    const Json j = Json::number_text(sentinel_text(dmlref::data_type_of<T>));
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, dmlref::float16>) {
      return dmlref::detail::element_bits(static_cast<T>(j.real()));
    } else if constexpr (std::is_signed_v<T>) {
      return dmlref::detail::element_bits(static_cast<T>(j.i64()));
    } else {
      return dmlref::detail::element_bits(static_cast<T>(j.u64()));
    }
  });
}

// Bytes of element `i` of a buffer, widened to 64 bits (little-endian host, as npy.hpp assumes).
inline std::uint64_t element_at(const std::byte* data, std::size_t element_bytes, std::uint64_t i) {
  std::uint64_t v = 0;
  std::memcpy(&v, data + i * element_bytes, element_bytes);
  return v;
}
inline void set_element(std::byte* data, std::size_t element_bytes, std::uint64_t i,
                        std::uint64_t bits) {
  std::memcpy(data + i * element_bytes, &bits, element_bytes);
}

// "7 (0x40e00000)" for a bit pattern of the type.
inline std::string format_bits(DataType type, std::uint64_t bits) {
  return dmlref::visit(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return dmlref::format_element(
        std::bit_cast<T>(static_cast<dmlref::detail::bits_of_t<T>>(bits)));
  });
}

// Text from a suite or a device (case names, reasons) as a terminal, JSON or XML may show it: valid
// UTF-8 stays as it is except control characters (C0, DEL, C1) and the code points XML 1.0 forbids
// (U+FFFE, U+FFFF); those and every byte of invalid UTF-8 (overlong, surrogate, truncated) become
// \xNN, and a backslash is doubled, so the escapes stay unambiguous. An ESC never reaches the
// terminal and the JUnit file stays well-formed whatever a name holds.
inline std::string display_text(std::string_view s) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  const auto escape = [&](unsigned char b) {
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  };
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      if (b == '\\') {
        out += "\\\\";
      } else if (b < 0x20 || b == 0x7F) {
        escape(b);
      } else {
        out += static_cast<char>(b);
      }
      ++i;
      continue;
    }
    // The length of a well-formed sequence and its code point.
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (b >= 0xC2 && b <= 0xDF) n = 2, cp = b & 0x1Fu;
    else if (b >= 0xE0 && b <= 0xEF) n = 3, cp = b & 0x0Fu;
    else if (b >= 0xF0 && b <= 0xF4) n = 4, cp = b & 0x07u;
    bool ok = n != 0 && i + n <= s.size();
    for (std::size_t k = 1; ok && k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      ok = (c & 0xC0) == 0x80;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    ok = ok && !(n == 3 && cp < 0x800) && !(n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) &&
         !(cp >= 0xD800 && cp <= 0xDFFF) && !(cp >= 0x80 && cp <= 0x9F) && cp != 0xFFFE && cp != 0xFFFF;
    if (!ok) {
      escape(b);
      ++i;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

inline std::string hex(std::uint64_t v) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), kHex[v & 0xF]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

// ------------------------------------------------------------------------------------------------
// .npy images as DxDispatch's writeFile produces them: a header with `dimensions`, then the whole
// buffer (which may hold more or fewer bytes than the header describes).

inline std::vector<std::byte> writefile_image(DataType type, const std::vector<std::uint32_t>& dims,
                                              std::span<const std::byte> buffer) {
  std::uint64_t count = 1;
  for (std::uint32_t d : dims) count *= d;
  if (dims.empty() || count * dmlref::element_size(type) > buffer.size() + 64) {
    throw FormatError("writeFile dimensions describe more than the buffer holds");
  }
  const dmlref::NpyArray shape_only(type, dims);
  std::vector<std::byte> image = dmlref::npy_bytes(shape_only);
  image.resize(image.size() - shape_only.bytes().size());
  image.insert(image.end(), buffer.begin(), buffer.end());
  return image;
}

inline void write_file(const fs::path& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw FormatError("cannot open '" + path.string() + "' for writing");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw FormatError("error writing '" + path.string() + "'");
}

inline void write_text(const fs::path& path, const std::string& text) {
  write_file(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

// ------------------------------------------------------------------------------------------------
// A model: what the suite writes and what run_model executes.

inline std::string operator_type(std::string_view op) {
  if (op == "join") return "DML_OPERATOR_JOIN";
  if (op == "split") return "DML_OPERATOR_SPLIT";
  if (op == "scatter") return "DML_OPERATOR_SCATTER";
  if (op == "gather_nd1") return "DML_OPERATOR_GATHER_ND1";
  if (op == "reverse_subsequences") return "DML_OPERATOR_REVERSE_SUBSEQUENCES";
  throw FormatError("unknown operator '" + std::string(op) + "'");
}

inline std::string type_string(DataType type) {
  return "DML_TENSOR_DATA_TYPE_" + std::string(dmlref::data_type_name(type));
}

inline DataType parse_type_string(const std::string& text) {
  if (text == "DML_TENSOR_DATA_TYPE_UNKNOWN" || text == "UNKNOWN") return DataType::Unknown;
  const auto t = dmlref::parse_data_type(text);
  if (!t) throw FormatError("'" + text + "' is not a DML_TENSOR_DATA_TYPE");
  return *t;
}

struct ModelBuffer {
  DataType type = DataType::Unknown;
  std::vector<std::byte> bytes;  // sizeInBytes of them
};

struct WriteFileCommand {
  std::string resource;
  std::string target;
  std::vector<std::uint32_t> dimensions;
};

struct Model {
  fs::path dir;  // where relative sourcePaths resolve
  std::map<std::string, ModelBuffer> resources;
  std::string op_type;  // "DML_OPERATOR_JOIN"
  Json desc;
  std::map<std::string, std::vector<std::string>> bindings;  // tensor field -> resources
  std::vector<WriteFileCommand> writes;
};

namespace detail {

inline ModelBuffer load_buffer(const fs::path& dir, const std::string& name, const Json& j) {
  ModelBuffer b;
  const Json& init = j.at("initialValues");
  const Json* declared = j.find("initialValuesDataType");
  if (declared != nullptr) b.type = parse_type_string(declared->str());
  std::vector<std::byte> values;
  if (const Json* source = init.find("sourcePath")) {
    const dmlref::NpyArray a = dmlref::read_npy(dir / source->str());
    if (declared != nullptr && a.data_type() != b.type) {
      throw FormatError("resource '" + name + "': the .npy's type does not match initialValuesDataType");
    }
    b.type = a.data_type();
    values.assign(a.bytes().begin(), a.bytes().end());
  } else if (const Json* value = init.find("value")) {
    if (declared == nullptr) throw FormatError("resource '" + name + "' needs initialValuesDataType");
    const std::uint64_t count = init.at("valueCount").u64(std::uint64_t{1} << 32);
    const std::size_t esize = dmlref::element_size(b.type);
    const std::uint64_t bits = dmlref::visit(b.type, [&](auto tag) -> std::uint64_t {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, dmlref::float16>) {
        return dmlref::detail::element_bits(static_cast<T>(value->real()));
      } else if constexpr (std::is_signed_v<T>) {
        return dmlref::detail::element_bits(static_cast<T>(value->i64()));
      } else {
        return dmlref::detail::element_bits(static_cast<T>(value->u64()));
      }
    });
    values.resize(static_cast<std::size_t>(count) * esize);
    for (std::uint64_t i = 0; i < count; ++i) set_element(values.data(), esize, i, bits);
  } else {
    throw FormatError("resource '" + name + "': initialValues is neither a sourcePath nor a value");
  }
  if (values.empty()) throw FormatError("resource '" + name + "': initialValues is empty");
  std::uint64_t size = (values.size() + 3) & ~std::size_t{3};
  if (const Json* s = j.find("sizeInBytes")) size = s->u64(std::uint64_t{1} << 34);
  if (size < values.size()) throw FormatError("resource '" + name + "': sizeInBytes is too small");
  b.bytes = std::move(values);
  b.bytes.resize(static_cast<std::size_t>(size), std::byte{0});
  return b;
}

}  // namespace detail

inline Model load_model(const fs::path& model_path) {
  const Json j = read_json(model_path);
  Model m;
  m.dir = model_path.parent_path();
  try {
    for (const auto& [name, r] : j.at("resources").members()) {
      m.resources.emplace(name, detail::load_buffer(m.dir, name, r));
    }
    const auto& dispatchables = j.at("dispatchables").members();
    if (dispatchables.size() != 1) throw FormatError("the suite's models hold one dispatchable");
    const std::string& op_name = dispatchables.front().first;
    m.op_type = dispatchables.front().second.at("type").str();
    m.desc = dispatchables.front().second.at("desc");
    for (const Json& c : j.at("commands").items()) {
      const std::string& type = c.at("type").str();
      if (type == "dispatch") {
        if (c.at("dispatchable").str() != op_name) throw FormatError("unknown dispatchable");
        for (const auto& [field, b] : c.at("bindings").members()) {
          std::vector<std::string> names;
          if (b.is_array()) {
            for (const Json& n : b.items()) names.push_back(n.str());
          } else {
            names.push_back(b.str());
          }
          for (const std::string& n : names) {
            if (m.resources.count(n) == 0) throw FormatError("binding to unknown resource '" + n + "'");
          }
          m.bindings[field] = std::move(names);
        }
      } else if (type == "writeFile") {
        WriteFileCommand w{c.at("resource").str(), c.at("targetPath").str(), {}};
        if (const Json* d = c.find("dimensions")) w.dimensions = d->u32_list();
        if (m.resources.count(w.resource) == 0) throw FormatError("writeFile of an unknown resource");
        m.writes.push_back(std::move(w));
      } else {
        throw FormatError("unknown command type '" + type + "'");
      }
    }
  } catch (const FormatError& e) {
    throw FormatError(model_path.string() + ": " + e.what());
  }
  return m;
}

enum class Engine { Fast, Reference };

namespace detail {

// Owns the arrays a BufferTensorDesc points to.
struct DescStore {
  std::vector<std::uint32_t> sizes, strides;
  dmlref::BufferTensorDesc desc;
};

inline const dmlref::BufferTensorDesc* parse_tensor(std::list<DescStore>& store, const Json& j) {
  DescStore& s = store.emplace_back();
  s.sizes = j.at("Sizes").u32_list();
  if (const Json* st = j.find("Strides")) s.strides = st->u32_list();
  s.desc.DataType = parse_type_string(j.at("DataType").str());
  s.desc.DimensionCount = static_cast<std::uint32_t>(s.sizes.size());
  if (const Json* d = j.find("DimensionCount")) s.desc.DimensionCount = d->u32();
  if (s.desc.DimensionCount != s.sizes.size() ||
      (!s.strides.empty() && s.strides.size() != s.sizes.size())) {
    throw FormatError("DimensionCount, Sizes and Strides disagree");
  }
  s.desc.Sizes = s.sizes.data();
  s.desc.Strides = s.strides.empty() ? nullptr : s.strides.data();
  if (const Json* f = j.find("Flags")) {
    const std::string& flag = f->str();
    if (flag == "DML_TENSOR_FLAG_NONE" || flag == "NONE") {
      s.desc.Flags = dmlref::TensorFlags::None;
    } else if (flag == "DML_TENSOR_FLAG_OWNED_BY_DML" || flag == "OWNED_BY_DML") {
      s.desc.Flags = dmlref::TensorFlags::OwnedByDml;
    } else {
      throw FormatError("unknown tensor flag '" + flag + "'");
    }
  }
  if (const Json* a = j.find("GuaranteedBaseOffsetAlignment")) {
    s.desc.GuaranteedBaseOffsetAlignment = a->u32();
  }
  const Json* total = j.find("TotalTensorSizeInBytes");
  s.desc.TotalTensorSizeInBytes = total != nullptr ? total->u64() : 0;
  if (s.desc.TotalTensorSizeInBytes == 0) {
    // DxDispatch computes it (DMLCalcBufferTensorSize); a description that has no size is left
    // at 0 for validation to name its real fault.
    try {
      s.desc.TotalTensorSizeInBytes = dmlref::calc_buffer_tensor_size(
          s.desc.DataType, s.desc.DimensionCount, s.desc.Sizes, s.desc.Strides);
    } catch (const dmlref::Error&) {
      s.desc.TotalTensorSizeInBytes = 0;
    }
  }
  return &s.desc;
}

inline std::vector<dmlref::BufferTensorDesc> parse_tensor_array(std::list<DescStore>& store,
                                                                const Json& j) {
  std::vector<dmlref::BufferTensorDesc> out;
  for (const Json& t : j.items()) out.push_back(*parse_tensor(store, t));
  return out;
}

inline const std::vector<std::string>& bound(const Model& m, const std::string& field,
                                             std::size_t count) {
  const auto it = m.bindings.find(field);
  if (it == m.bindings.end()) throw FormatError("no binding for " + field);
  if (it->second.size() != count) {
    throw FormatError(field + " binds " + std::to_string(it->second.size()) + " resource(s), the desc has " +
                      std::to_string(count));
  }
  return it->second;
}

// The buffers bound to an array field (InputTensors, OutputTensors), as B (Buffer or ConstBuffer).
template <class B>
std::vector<B> buffers_of(Model& m, const std::string& field, std::size_t count) {
  std::vector<B> out;
  for (const std::string& r : bound(m, field, count)) {
    out.push_back({m.resources.at(r).bytes.data(), m.resources.at(r).bytes.size()});
  }
  return out;
}

inline dmlref::Buffer buffer_of(Model& m, const std::string& field) {
  ModelBuffer& b = m.resources.at(bound(m, field, 1).front());
  return {b.bytes.data(), b.bytes.size()};
}

}  // namespace detail

// Runs the model's operator on its resources (validating first, like DirectML's
// CreateOperator); a rule the model breaks throws dmlref::Error and changes no resource.
// SCATTER's colliding updates resolve as the golden model's (the last in row-major order wins).
inline void run_model(Model& m, Engine engine, dmlref::FeatureLevel level = dmlref::kLatestFeatureLevel) {
  using namespace dmlref;
  std::list<detail::DescStore> store;
  const Json& d = m.desc;
  const bool fast = engine == Engine::Fast;
  if (m.op_type == "DML_OPERATOR_JOIN" || m.op_type == "JOIN") {
    const std::vector<BufferTensorDesc> inputs = detail::parse_tensor_array(store, d.at("InputTensors"));
    JoinOperatorDesc desc;
    desc.InputCount = d.at("InputCount").u32();
    if (desc.InputCount != inputs.size()) throw FormatError("InputCount differs from InputTensors");
    desc.InputTensors = inputs.data();
    desc.OutputTensor = detail::parse_tensor(store, d.at("OutputTensor"));
    desc.Axis = d.at("Axis").u32();
    const auto buffers = detail::buffers_of<ConstBuffer>(m, "InputTensors", inputs.size());
    const Buffer out = detail::buffer_of(m, "OutputTensor");
    JoinOptions options;
    options.feature_level = level;
    fast ? join(desc, buffers, out, options) : reference::join(desc, buffers, out, options);
  } else if (m.op_type == "DML_OPERATOR_SPLIT" || m.op_type == "SPLIT") {
    const std::vector<BufferTensorDesc> outputs = detail::parse_tensor_array(store, d.at("OutputTensors"));
    SplitOperatorDesc desc;
    desc.InputTensor = detail::parse_tensor(store, d.at("InputTensor"));
    desc.OutputCount = d.at("OutputCount").u32();
    if (desc.OutputCount != outputs.size()) throw FormatError("OutputCount differs from OutputTensors");
    desc.OutputTensors = outputs.data();
    desc.Axis = d.at("Axis").u32();
    const auto buffers = detail::buffers_of<Buffer>(m, "OutputTensors", outputs.size());
    const Buffer in = detail::buffer_of(m, "InputTensor");
    SplitOptions options;
    options.feature_level = level;
    fast ? split(desc, in, buffers, options) : reference::split(desc, in, buffers, options);
  } else if (m.op_type == "DML_OPERATOR_SCATTER" || m.op_type == "SCATTER") {
    ScatterOperatorDesc desc;
    desc.InputTensor = detail::parse_tensor(store, d.at("InputTensor"));
    desc.IndicesTensor = detail::parse_tensor(store, d.at("IndicesTensor"));
    desc.UpdatesTensor = detail::parse_tensor(store, d.at("UpdatesTensor"));
    desc.OutputTensor = detail::parse_tensor(store, d.at("OutputTensor"));
    desc.Axis = d.at("Axis").u32();
    const Buffer in = detail::buffer_of(m, "InputTensor"), idx = detail::buffer_of(m, "IndicesTensor"),
                 upd = detail::buffer_of(m, "UpdatesTensor"), out = detail::buffer_of(m, "OutputTensor");
    ScatterOptions options;
    options.feature_level = level;
    fast ? scatter(desc, in, idx, upd, out, options) : reference::scatter(desc, in, idx, upd, out, options);
  } else if (m.op_type == "DML_OPERATOR_GATHER_ND1" || m.op_type == "GATHER_ND1") {
    GatherNd1OperatorDesc desc;
    desc.InputTensor = detail::parse_tensor(store, d.at("InputTensor"));
    desc.IndicesTensor = detail::parse_tensor(store, d.at("IndicesTensor"));
    desc.OutputTensor = detail::parse_tensor(store, d.at("OutputTensor"));
    desc.InputDimensionCount = d.at("InputDimensionCount").u32();
    desc.IndicesDimensionCount = d.at("IndicesDimensionCount").u32();
    desc.BatchDimensionCount = d.at("BatchDimensionCount").u32();
    const Buffer in = detail::buffer_of(m, "InputTensor"), idx = detail::buffer_of(m, "IndicesTensor"),
                 out = detail::buffer_of(m, "OutputTensor");
    GatherNd1Options options;
    options.feature_level = level;
    if (fast) {
      gather_nd1(desc, in, idx, out, options);
    } else {
      reference::gather_nd1(desc, in, idx, out, options);
    }
  } else if (m.op_type == "DML_OPERATOR_REVERSE_SUBSEQUENCES" || m.op_type == "REVERSE_SUBSEQUENCES") {
    ReverseSubsequencesOperatorDesc desc;
    desc.InputTensor = detail::parse_tensor(store, d.at("InputTensor"));
    desc.SequenceLengthsTensor = detail::parse_tensor(store, d.at("SequenceLengthsTensor"));
    desc.OutputTensor = detail::parse_tensor(store, d.at("OutputTensor"));
    desc.Axis = d.at("Axis").u32();
    const Buffer in = detail::buffer_of(m, "InputTensor"),
                 len = detail::buffer_of(m, "SequenceLengthsTensor"), out = detail::buffer_of(m, "OutputTensor");
    ReverseSubsequencesOptions options;
    options.feature_level = level;
    fast ? reverse_subsequences(desc, in, len, out, options)
         : reference::reverse_subsequences(desc, in, len, out, options);
  } else {
    throw FormatError("unknown operator type '" + m.op_type + "'");
  }
}

// Where SCATTER's updates collide: per colliding output element, its element offset in the
// output buffer and every candidate's bit pattern. Empty for other operators.
struct Collision {
  std::uint64_t offset = 0;
  std::vector<std::uint64_t> candidates;
};

inline std::vector<Collision> scatter_collisions(Model& m) {
  using namespace dmlref;
  if (m.op_type != "DML_OPERATOR_SCATTER" && m.op_type != "SCATTER") return {};
  std::list<detail::DescStore> store;
  ScatterOperatorDesc desc;
  desc.InputTensor = detail::parse_tensor(store, m.desc.at("InputTensor"));
  desc.IndicesTensor = detail::parse_tensor(store, m.desc.at("IndicesTensor"));
  desc.UpdatesTensor = detail::parse_tensor(store, m.desc.at("UpdatesTensor"));
  desc.OutputTensor = detail::parse_tensor(store, m.desc.at("OutputTensor"));
  desc.Axis = m.desc.at("Axis").u32();
  const auto found = find_scatter_collisions(desc, detail::buffer_of(m, "InputTensor"),
                                             detail::buffer_of(m, "IndicesTensor"),
                                             detail::buffer_of(m, "UpdatesTensor"));
  const Layout out = dmlref::detail::layout_of_desc(*desc.OutputTensor);
  std::vector<Collision> result;
  for (const auto& c : found) {
    Collision k;
    k.offset = static_cast<std::uint64_t>(out.offset(c.output_coordinate));
    for (const auto& candidate : c.candidates) k.candidates.push_back(candidate.value.bits);
    result.push_back(std::move(k));
  }
  return result;
}

// Writes every writeFile of the model under `output_dir`, as DxDispatch does.
inline void write_results(const Model& m, const fs::path& output_dir) {
  for (const WriteFileCommand& w : m.writes) {
    const ModelBuffer& b = m.resources.at(w.resource);
    std::vector<std::uint32_t> dims = w.dimensions;
    if (dims.empty()) dims.push_back(static_cast<std::uint32_t>(b.bytes.size() / dmlref::element_size(b.type)));
    const fs::path target = output_dir / w.target;
    fs::create_directories(target.parent_path());
    write_file(target, writefile_image(b.type, dims, b.bytes));
  }
}

}  // namespace dmlref_suite
