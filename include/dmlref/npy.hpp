// dmlref: read and write NumPy .npy files (format versions 1.0, 2.0, 3.0), so golden inputs and
// outputs can travel between dmlref, numpy and a GPU test harness.
//
// Decisions:
// - Types: the eleven DirectML types, by the descr strings numpy writes: <f8 <f4 <f2 <i8 <i4 <i2
//   |i1 <u8 <u4 <u2 |u1. For the one-byte types the byte-order character is meaningless, so
//   <i1 >i1 <u1 >u1 are accepted too. Everything else is ErrorCode::NpyFormat with a reason:
//   big-endian (>f4: convert with arr.astype('<f4')), object (|O), structured (a list descr),
//   bool, complex, strings, dates, and native-order spellings (=f4) that numpy never writes.
// - Order: C order is a packed view; Fortran order is read as is and exposed as a strided view
//   (column-major strides), never transposed or copied. Writing keeps the array's own order.
// - Shapes: 1 to 8 dimensions, every size at least 1, at most 2^32 - 1 elements (T2-T4). A 0-d
//   array (shape ()) is rejected rather than read as {1}: DirectML has no 0-d tensors and a
//   silent reshape would not survive a round trip; reshape it to (1,) in numpy.
// - Strictness: the header dict must hold exactly the keys descr, fortran_order and shape (as
//   numpy requires); only whitespace may follow it. The data must be exactly as long as the
//   header says: a shorter file is truncated, a longer one has a header that lies about its size;
//   both are errors. The header may be at most kNpyMaxHeaderSize bytes (numpy's own read limit).
// - Reading a file checks the magic, the version and the header length before anything else,
//   then the header against the file's size, and reads exactly the data the header describes
//   into the array (no copy of the whole file): /dev/zero or a huge wrong file fails at once.
// - Bytes of the file that a message quotes are escaped (\x1b), so no header can drive a terminal.
// - Every error names the file (or "<memory>" for a buffer without a name) and what is wrong,
//   e.g. "npy: 'x.npy': big-endian data ('>f4') is not supported; ... [NpyFormat]". Failing to
//   open, read or write a file is ErrorCode::Io. No input makes the reader read out of bounds.
// - Written files follow numpy: the header dict as numpy prints it, padded with spaces so the data
//   starts at a multiple of 64 bytes, then '\n'. Version 1.0 by default (what np.save writes).
// - write_npy(path) never leaves the file half-written: it writes a new file next to it (hidden,
//   ".NAME.dmlref-partial-N", created exclusively) and renames that over the target only when
//   every byte was written; on an error the partial file is removed and the target is as it was.
//   A symlink's file is replaced (as writing through the link would; a dangling link, whose file
//   only readlink() could name, is itself replaced), an existing file keeps its permissions, and a
//   target that is not a regular file (/dev/stdout, a FIFO) is written directly.
// - Storage is little-endian on disk; on a big-endian host elements are swapped on the way in and
//   out, so views always hold native values.
// - An NpyArray's buffer is padded to a multiple of 4 bytes, so desc() and buffer() satisfy
//   DMLCalcBufferTensorSize (T8, T10) and can go straight to the runtime layer.
#pragma once

#include <algorithm>
#include <bit>
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <istream>
#include <ostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "dmlref/data_type.hpp"
#include "dmlref/error.hpp"
#include "dmlref/layout.hpp"
#include "dmlref/tensor_desc.hpp"
#include "dmlref/tensor_view.hpp"
#include "dmlref/validation.hpp"

// POSIX only for what the C library cannot say: whether a target is a symlink, a directory or a
// device, and its permissions. Without it a replaced file gets a new file's permissions.
#if defined(__unix__) || defined(__APPLE__)
#include <sys/stat.h>
#define DMLREF_NPY_POSIX 1
#else
#define DMLREF_NPY_POSIX 0
#endif

namespace dmlref {

enum class NpyVersion : std::uint8_t { k1_0 = 1, k2_0 = 2, k3_0 = 3 };

// numpy refuses headers over 10000 bytes unless told otherwise (numpy.lib.format's
// _MAX_HEADER_SIZE); a header of up to 8 dimensions needs about 150.
inline constexpr std::size_t kNpyMaxHeaderSize = 10000;

// The descr numpy writes for a type ("<f4", "|u1").
constexpr std::string_view npy_descr(DataType type) noexcept {
  switch (type) {
    case DataType::Float64: return "<f8";
    case DataType::Float32: return "<f4";
    case DataType::Float16: return "<f2";
    case DataType::Int64: return "<i8";
    case DataType::Int32: return "<i4";
    case DataType::Int16: return "<i2";
    case DataType::Int8: return "|i1";
    case DataType::UInt64: return "<u8";
    case DataType::UInt32: return "<u4";
    case DataType::UInt16: return "<u2";
    case DataType::UInt8: return "|u1";
    case DataType::Unknown: break;
  }
  return "";
}

// What the header of a .npy file says.
struct NpyHeader {
  NpyVersion version = NpyVersion::k1_0;
  DataType data_type = DataType::Unknown;
  std::vector<std::uint32_t> sizes;
  bool fortran_order = false;
  std::size_t data_offset = 0;  // bytes before the data: preamble plus header
  std::uint64_t data_bytes = 0;  // element count times element size
};

namespace detail {

inline constexpr unsigned char kNpyMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

// Layout of a .npy array: packed row-major, or column-major for Fortran order.
inline Layout npy_layout(std::span<const std::uint32_t> sizes, bool fortran_order) {
  Layout l = Layout::packed(sizes);
  if (fortran_order) {
    std::int64_t stride = 1;
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      l.strides[d] = stride;
      stride *= sizes[d];  // bounded by the element count, checked before
    }
  }
  return l;
}

// Element bytes are little-endian in the file; swap in place on a big-endian host.
inline void npy_swap_to_native(std::span<std::byte> bytes, std::size_t element_bytes) noexcept {
  if constexpr (std::endian::native == std::endian::big) {
    for (std::size_t i = 0; i + element_bytes <= bytes.size(); i += element_bytes) {
      const std::span<std::byte> element = bytes.subspan(i, element_bytes);
      std::reverse(element.begin(), element.end());
    }
  } else {
    (void)bytes;
    (void)element_bytes;
  }
}

// Bytes from a file as a message may show them: printable ASCII as is, everything else (ESC, BEL,
// any byte a terminal might act on) as \xNN, so a crafted header cannot drive the user's
// terminal; a backslash is doubled so the escapes stay unambiguous.
inline std::string escape_bytes(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\') {
      s += "\\\\";
    } else if (c == '\n') {
      s += "\\n";
    } else if (u >= 0x20 && u < 0x7F) {
      s += c;
    } else {
      s += "\\x";
      s += kHex[u >> 4];
      s += kHex[u & 0xF];
    }
  }
  return s;
}

// A small reader of the Python literal numpy writes as the header, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Every read is bounds-checked against the header text. A class template (NpyHeaderParser is
// its one instance) so that a unit that parses no header does not compile it.
template <class Deferred = void>
class BasicNpyHeaderParser {
 public:
  BasicNpyHeaderParser(std::string_view text, std::string_view name) : text_(text), name_(name) {}

  template <class... Parts>
  [[noreturn]] void error(const Parts&... parts) const {
    fail(ErrorCode::NpyFormat, "npy: '", name_, "': malformed header: ", parts...,
         " (at byte ", pos_, " of the header ", quoted_excerpt(), ")");
  }

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  void expect(char c) {
    skip_space();
    if (peek() != c) error("expected '", c, "'");
    ++pos_;
  }
  bool consume(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') error("expected a quoted string");
    const std::size_t start = ++pos_;
    while (!at_end() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') error("escapes in strings are not supported");
      ++pos_;
    }
    if (at_end()) error("unterminated string");
    return std::string(text_.substr(start, pos_++ - start));
  }

  bool parse_bool() {
    skip_space();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    error("fortran_order must be True or False");
  }

  // A tuple of non-negative integers: (), (3,), (2, 3), (2, 3,). Python 2's 3L is accepted.
  std::vector<std::uint64_t> parse_shape() {
    expect('(');
    std::vector<std::uint64_t> dims;
    bool trailing_comma = false;
    for (;;) {
      skip_space();
      if (consume(')')) break;
      if (!dims.empty() && !trailing_comma) error("expected ',' or ')' in shape");
      const char c = peek();
      if (c < '0' || c > '9') error("shape entries must be non-negative integers");
      std::uint64_t v = 0;
      while (!at_end() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        const auto times_ten = checked_mul(v, std::uint64_t{10});
        const auto next = times_ten ? checked_add(*times_ten, static_cast<std::uint64_t>(text_[pos_] - '0'))
                                    : std::nullopt;
        if (!next) error("a shape entry does not fit 64 bits");
        v = *next;
        ++pos_;
      }
      if (peek() == 'L') ++pos_;
      dims.push_back(v);
      if (dims.size() > 64) error("shape has more than 64 entries");
      trailing_comma = consume(',');
    }
    // (3) is the integer 3 in Python, not a tuple.
    if (dims.size() == 1 && !trailing_comma) error("a one-element shape must be written (n,)");
    return dims;
  }

 private:
  std::string quoted_excerpt() const {
    return "\"" + escape_bytes(text_.substr(0, 120)) + (text_.size() > 120 ? "...\"" : "\"");
  }

  std::string_view text_;
  std::string_view name_;
  std::size_t pos_ = 0;
};
using NpyHeaderParser = BasicNpyHeaderParser<>;

template <class Deferred = void>
inline DataType npy_type_from_descr(std::string_view descr, std::string_view name) {
  for (DataType t : kAllDataTypes) {
    if (npy_descr(t) == descr) return t;
  }
  if (descr == "<i1" || descr == ">i1") return DataType::Int8;  // one byte: order is moot
  if (descr == "<u1" || descr == ">u1") return DataType::UInt8;
  const std::string d = escape_bytes(descr);
  if (!descr.empty() && descr[0] == '>' && descr.size() > 1) {
    std::string little = "<";  // appended: GCC 12's -Wrestrict misfires on "<" + string&&
    little += descr.substr(1);
    for (DataType t : kAllDataTypes) {
      if (npy_descr(t) == little) {
        fail(ErrorCode::NpyFormat, "npy: '", name, "': big-endian data ('", d,
             "') is not supported; write it little-endian, e.g. arr.astype('", little, "')");
      }
    }
  }
  if (descr.find('O') != std::string_view::npos && descr.size() <= 2) {
    fail(ErrorCode::NpyFormat, "npy: '", name, "': object arrays ('", d,
         "') are not supported: they hold pickled Python objects, not tensor data");
  }
  fail(ErrorCode::NpyFormat, "npy: '", name, "': dtype '", d,
       "' is not one of the eleven DirectML types (<f8 <f4 <f2 <i8 <i4 <i2 |i1 <u8 <u4 <u2 |u1)");
}

inline std::uint64_t read_le(std::span<const std::byte> bytes, std::size_t offset, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    v |= static_cast<std::uint64_t>(bytes[offset + i]) << (8 * i);
  }
  return v;
}

}  // namespace detail

namespace detail {

// What the fixed-size preamble says: the version and how long the header text is.
struct NpyPreamble {
  NpyVersion version = NpyVersion::k1_0;
  std::size_t size = 0;           // magic, version and header length: 10 or 12 bytes
  std::size_t header_length = 0;  // at most kNpyMaxHeaderSize
};

inline constexpr std::size_t kNpyMaxPreamble = 12;

// Checks the magic, the version and the header length from the first bytes of a file (at most
// kNpyMaxPreamble of them; fewer when the file is shorter), before anything else is read.
template <class Deferred = void>
inline NpyPreamble parse_npy_preamble(std::span<const std::byte> bytes, std::string_view name) {
  if (bytes.size() < 8) {
    fail(ErrorCode::NpyFormat, "npy: '", name, "': truncated: ", bytes.size(),
         " bytes, too short for the .npy magic and version");
  }
  for (std::size_t i = 0; i < sizeof kNpyMagic; ++i) {
    if (static_cast<unsigned char>(bytes[i]) != kNpyMagic[i]) {
      fail(ErrorCode::NpyFormat, "npy: '", name,
           "': bad magic: not a .npy file (it must start with \\x93NUMPY)");
    }
  }
  const auto major = static_cast<unsigned>(bytes[6]);
  const auto minor = static_cast<unsigned>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    fail(ErrorCode::NpyFormat, "npy: '", name, "': format version ", major, ".", minor,
         " is not supported; 1.0, 2.0 and 3.0 are");
  }
  NpyPreamble p;
  p.version = static_cast<NpyVersion>(major);
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  p.size = 8 + length_bytes;
  if (bytes.size() < p.size) {
    fail(ErrorCode::NpyFormat, "npy: '", name, "': truncated: ", bytes.size(),
         " bytes, too short for the version ", major, ".0 preamble of ", p.size);
  }
  const std::uint64_t header_len = read_le(bytes, 8, length_bytes);
  if (header_len > kNpyMaxHeaderSize) {
    fail(ErrorCode::NpyFormat, "npy: '", name, "': the header is ", header_len,
         " bytes, over the limit of ", kNpyMaxHeaderSize);
  }
  p.header_length = static_cast<std::size_t>(header_len);
  return p;
}

template <class Deferred = void>
inline void fail_npy_header_truncated(std::string_view name, const NpyPreamble& p,
                                      std::uint64_t available) {
  fail(ErrorCode::NpyFormat, "npy: '", name, "': truncated: the header is ", p.header_length,
       " bytes but only ", available, " follow the preamble");
}

template <class Int>
std::string npy_shape_text(std::span<const Int> sizes) {
  std::string text = "(";
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (d != 0) text += ", ";
    text += std::to_string(sizes[d]);
  }
  return text + (sizes.size() == 1 ? ",)" : ")");
}

// The data must be exactly as long as the header says: shorter is truncated, longer means the
// header does not describe the file.
template <class Deferred = void>
inline void check_npy_data_size(std::string_view name, const NpyHeader& h,
                                std::uint64_t available) {
  if (available == h.data_bytes) return;
  const std::string shape = npy_shape_text(std::span<const std::uint32_t>(h.sizes));
  if (available < h.data_bytes) {
    fail(ErrorCode::NpyFormat, "npy: '", name, "': truncated: shape ", shape, " of ",
         data_type_name(h.data_type), " needs ", h.data_bytes, " data bytes but only ", available,
         " follow the header");
  }
  fail(ErrorCode::NpyFormat, "npy: '", name, "': the header says shape ", shape, " of ",
       data_type_name(h.data_type), ", ", h.data_bytes, " data bytes, but ", available,
       " follow it; the header does not describe this data");
}

// Parses the header text (the dict) that follows a checked preamble.
template <class Deferred = void>
inline NpyHeader parse_npy_dict(std::string_view text, const NpyPreamble& preamble,
                                std::string_view name) {
  NpyHeader h;
  h.version = preamble.version;
  h.data_offset = preamble.size + preamble.header_length;
  NpyHeaderParser p(text, name);
  p.expect('{');
  bool have_descr = false, have_order = false, have_shape = false;
  std::string descr;
  std::vector<std::uint64_t> shape;
  for (;;) {
    if (p.consume('}')) break;
    const std::string key = p.parse_string();
    p.expect(':');
    bool* seen = nullptr;
    if (key == "descr") {
      p.skip_space();
      if (p.peek() == '[') {
        fail(ErrorCode::NpyFormat, "npy: '", name,
             "': structured dtypes (a list descr) are not supported; save one plain array per file");
      }
      descr = p.parse_string();
      seen = &have_descr;
    } else if (key == "fortran_order") {
      h.fortran_order = p.parse_bool();
      seen = &have_order;
    } else if (key == "shape") {
      shape = p.parse_shape();
      seen = &have_shape;
    } else {
      p.error("unexpected key '", escape_bytes(key),
              "'; the keys are descr, fortran_order and shape");
    }
    if (*seen) p.error("key '", escape_bytes(key), "' appears twice");
    *seen = true;
    if (p.consume('}')) break;
    p.expect(',');
  }
  p.skip_space();
  if (!p.at_end()) p.error("only whitespace may follow the dict");
  if (!have_descr) p.error("missing key 'descr'");
  if (!have_order) p.error("missing key 'fortran_order'");
  if (!have_shape) p.error("missing key 'shape'");

  h.data_type = npy_type_from_descr(descr, name);
  const std::string shape_text = npy_shape_text(std::span<const std::uint64_t>(shape));
  if (shape.empty()) {
    fail(ErrorCode::NpyFormat, "npy: '", name,
         "': shape () is a 0-d array; DirectML tensors have 1 to 8 dimensions (save it with "
         "shape (1,))");
  }
  if (shape.size() > kMaxRank) {
    fail(ErrorCode::NpyFormat, "npy: '", name, "': shape ", shape_text, " has ", shape.size(),
         " dimensions; DirectML tensors have 1 to ", kMaxRank);
  }
  std::uint64_t count = 1;
  for (std::uint64_t s : shape) {
    if (s == 0) {
      fail(ErrorCode::NpyFormat, "npy: '", name, "': shape ", shape_text,
           " is empty; DirectML has no empty tensors (every size must be at least 1)");
    }
    const auto next = checked_mul(count, s);
    if (!next || *next > kMaxElementCount) {
      fail(ErrorCode::NpyFormat, "npy: '", name, "': shape ", shape_text,
           " holds more than 4294967295 (2^32 - 1) elements, DirectML's limit");
    }
    count = *next;
    h.sizes.push_back(static_cast<std::uint32_t>(s));
  }
  h.data_bytes = count * element_size(h.data_type);
  return h;
}

}  // namespace detail

// Parses and checks the preamble and header of a .npy image, including that `bytes` holds exactly
// the data the header promises. `name` (a file name) goes into every message.
template <class Deferred = void>
inline NpyHeader parse_npy_header(std::span<const std::byte> bytes, std::string_view name) {
  const detail::NpyPreamble preamble =
      detail::parse_npy_preamble(bytes.first(std::min(bytes.size(), detail::kNpyMaxPreamble)),
                                 name);
  if (bytes.size() - preamble.size < preamble.header_length) {
    detail::fail_npy_header_truncated(name, preamble, bytes.size() - preamble.size);
  }
  // Version 3.0 differs from 2.0 only in allowing UTF-8 in the header: every byte we accept is
  // ASCII anyway, so non-ASCII bytes simply fail to parse.
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + preamble.size,
                              preamble.header_length);
  const NpyHeader h = detail::parse_npy_dict(text, preamble, name);
  detail::check_npy_data_size(name, h, bytes.size() - h.data_offset);
  return h;
}

// An array read from (or to be written to) a .npy file: it owns its bytes and knows its type,
// sizes and order, and hands out typed views and DirectML-shaped descriptions of itself.
class NpyArray {
 public:
  NpyArray() = default;

  // A zero-filled array (e.g. an output to compute into). Sizes must satisfy T2-T4.
  template <class Deferred = void>
  NpyArray(DataType type, std::vector<std::uint32_t> sizes, bool fortran_order = false,
           std::string name = "<memory>")
      : name_(std::move(name)), data_type_(type), sizes_(std::move(sizes)),
        fortran_order_(fortran_order) {
    if (!is_valid(type)) {
      detail::fail(ErrorCode::T1, "npy: '", name_, "': DataType is ", describe(type),
                   "; it must be one of ", kAllTypes.to_string());
    }
    if (sizes_.empty() || sizes_.size() > kMaxRank) {
      detail::fail(ErrorCode::T2, "npy: '", name_, "': ", sizes_.size(),
                   " dimensions; DirectML tensors have 1 to ", kMaxRank);
    }
    detail::check_layout("npy", name_, Layout::packed(sizes_));
    finish_layout();
    storage_.assign(storage_size(), std::byte{0});
  }

 private:
  struct Unfilled {};
  // Checked like the public constructor, with no storage yet: from_stream fills it.
  template <class Deferred = void>
  NpyArray(DataType type, std::vector<std::uint32_t> sizes, bool fortran_order, std::string name,
           Unfilled)
      : NpyArray(type, {1}, fortran_order, std::move(name)) {
    sizes_ = std::move(sizes);
    detail::check_layout("npy", name_, Layout::packed(sizes_));
    finish_layout();
    storage_.clear();
  }

 public:

  // A C-order copy of any view (strided, transposed, broadcast).
  template <class T>
  static NpyArray from_view(const TensorView<T>& view, std::string name = "<memory>") {
    using V = std::remove_const_t<T>;
    detail::check_view("npy", name, view, false);
    const auto sizes = view.layout().size_span();
    NpyArray a(data_type_of<V>, std::vector<std::uint32_t>(sizes.begin(), sizes.end()), false,
               std::move(name));
    const TensorView<V> out = a.view<V>();
    for_each_coordinate(view.layout(), [&](const Coord& c) { out[c] = view[c]; });
    return a;
  }

  // Reads an image that parse_npy_header accepts.
  template <class Deferred = void>
  static NpyArray from_bytes(std::span<const std::byte> bytes, std::string name) {
    const NpyHeader h = parse_npy_header(bytes, name);
    NpyArray a(h.data_type, h.sizes, h.fortran_order, std::move(name));
    a.version_ = h.version;
    std::memcpy(a.storage_.data(), bytes.data() + h.data_offset, static_cast<std::size_t>(h.data_bytes));
    detail::npy_swap_to_native(a.bytes(), element_size(a.data_type_));
    return a;
  }

  // Reads a .npy image from a stream in order: the preamble (magic, version and header length
  // checked first), the header, then exactly the data the header describes, straight into the
  // array's own storage. `stream_size`, when known (a regular file), must match the header
  // before anything is allocated; otherwise one byte past the data must be the end.
  template <class Deferred = void>
  static NpyArray from_stream(std::istream& in, std::string name,
                              std::optional<std::uint64_t> stream_size) {
    std::byte preamble_bytes[detail::kNpyMaxPreamble];
    std::size_t got = read_some(in, preamble_bytes, 8, name);
    if (got == 8) {
      // The version says how long the preamble is; a bad one fails in parse_npy_preamble.
      const std::size_t want = static_cast<unsigned>(preamble_bytes[6]) == 1 ? 10 : 12;
      got += read_some(in, preamble_bytes + 8, want - 8, name);
    }
    const detail::NpyPreamble preamble =
        detail::parse_npy_preamble(std::span<const std::byte>(preamble_bytes, got), name);
    std::string text(preamble.header_length, '\0');
    const std::size_t header_got =
        read_some(in, reinterpret_cast<std::byte*>(text.data()), text.size(), name);
    if (header_got < text.size()) detail::fail_npy_header_truncated(name, preamble, header_got);
    const NpyHeader h = detail::parse_npy_dict(text, preamble, name);
    if (stream_size) {
      const std::uint64_t after_header =
          *stream_size - std::min<std::uint64_t>(*stream_size, h.data_offset);
      detail::check_npy_data_size(name, h, after_header);
    }
    NpyArray a(h.data_type, h.sizes, h.fortran_order, std::move(name), Unfilled{});
    a.version_ = h.version;
    // In chunks: with the size checked the storage is allocated once; a stream of unknown size
    // grows it as data arrives, so a header's promise costs only what the stream delivers.
    const auto data_bytes = static_cast<std::size_t>(h.data_bytes);
    if (stream_size) a.storage_.reserve(a.storage_size());
    while (a.storage_.size() < data_bytes) {
      const std::size_t at = a.storage_.size();
      // Growing with what has arrived: never more than twice the data read so far (plus 64 KiB).
      const std::size_t step = std::min(std::max(at, std::size_t{1} << 16), std::size_t{1} << 26);
      const std::size_t chunk = std::min(data_bytes - at, step);
      a.storage_.resize(at + chunk);
      const std::size_t arrived = read_some(in, a.storage_.data() + at, chunk, a.name_);
      if (arrived < chunk) detail::check_npy_data_size(a.name_, h, at + arrived);
    }
    a.storage_.resize(a.storage_size(), std::byte{0});
    if (in.peek() != std::char_traits<char>::eof()) {
      detail::fail(ErrorCode::NpyFormat, "npy: '", a.name_, "': the header says shape ",
                   detail::npy_shape_text(std::span<const std::uint32_t>(h.sizes)), " of ",
                   data_type_name(h.data_type), ", ", h.data_bytes,
                   " data bytes, but more follow it; the header does not describe this data");
    }
    if (in.bad()) detail::fail(ErrorCode::Io, "npy: error reading '", a.name_, "'");
    detail::npy_swap_to_native(a.bytes(), element_size(a.data_type_));
    return a;
  }

  // The same elements under other sizes with the same element count, without a copy (numpy's
  // reshape of a C-order array). Fortran-order arrays are refused: their element order differs.
  template <class Deferred = void>
  void reshape(std::vector<std::uint32_t> sizes) {
    Layout wanted = Layout::packed(sizes);
    detail::check_layout("npy", name_, wanted);
    if (fortran_order_ || wanted.element_count() != element_count()) {
      detail::fail(ErrorCode::ShapeMismatch, "npy: '", name_, "': cannot reshape ",
                   layout_.sizes_string(), fortran_order_ ? " (Fortran order)" : "", " to ",
                   wanted.sizes_string(), " without a copy");
    }
    sizes_ = std::move(sizes);
    finish_layout();
  }

  const std::string& name() const noexcept { return name_; }
  DataType data_type() const noexcept { return data_type_; }
  const std::vector<std::uint32_t>& sizes() const noexcept { return sizes_; }
  // Strides in elements: packed row-major, or column-major for Fortran order.
  const std::vector<std::uint32_t>& strides() const noexcept { return strides_; }
  bool fortran_order() const noexcept { return fortran_order_; }
  // The format version of the file it was read from (1.0 for arrays made in memory).
  NpyVersion version() const noexcept { return version_; }
  std::uint32_t rank() const noexcept { return static_cast<std::uint32_t>(sizes_.size()); }
  std::uint64_t element_count() const noexcept { return layout_.element_count(); }
  const Layout& layout() const noexcept { return layout_; }

  // The data as stored (row-major or column-major), element_count() * element size bytes.
  std::span<const std::byte> bytes() const noexcept { return {storage_.data(), data_bytes()}; }
  std::span<std::byte> bytes() noexcept { return {storage_.data(), data_bytes()}; }

  // Typed views; T must be the array's element type (ErrorCode::InvalidOption otherwise).
  template <Element T>
  TensorView<const T> view() const {
    check_type<T>();
    return TensorView<const T>(reinterpret_cast<const T*>(storage_.data()), layout_);
  }
  template <Element T>
  TensorView<T> view() {
    check_type<T>();
    return TensorView<T>(reinterpret_cast<T*>(storage_.data()), layout_);
  }

  // The runtime layer's description of this array; it points into this object, so keep the
  // array alive and unmoved while it is used. TotalTensorSizeInBytes is DMLCalcBufferTensorSize.
  BufferTensorDesc desc() const noexcept {
    BufferTensorDesc d;
    d.DataType = data_type_;
    d.DimensionCount = rank();
    d.Sizes = sizes_.data();
    d.Strides = fortran_order_ ? strides_.data() : nullptr;
    d.TotalTensorSizeInBytes = storage_.size();
    return d;
  }
  template <class Deferred = void>
  TensorDesc tensor_desc() const {
    return TensorDesc(data_type_, sizes_, fortran_order_ ? strides_ : std::vector<std::uint32_t>{});
  }
  // The whole buffer, padding included (what TotalTensorSizeInBytes promises).
  ConstBuffer buffer() const noexcept { return {storage_.data(), storage_.size()}; }
  Buffer buffer() noexcept { return {storage_.data(), storage_.size()}; }

 private:
  // Reads up to n bytes; fewer only at the end of the stream. A failing device is ErrorCode::Io.
  template <class Deferred = void>
  static std::size_t read_some(std::istream& in, std::byte* out, std::size_t n,
                               std::string_view name) {
    std::size_t total = 0;
    // In chunks, so a count past std::streamsize never reaches read().
    while (total < n && in) {
      const std::size_t chunk = std::min<std::size_t>(n - total, std::size_t{1} << 30);
      in.read(reinterpret_cast<char*>(out + total), static_cast<std::streamsize>(chunk));
      total += static_cast<std::size_t>(in.gcount());
    }
    if (in.bad()) detail::fail(ErrorCode::Io, "npy: error reading '", name, "'");
    return total;
  }

  template <class T>
  void check_type() const {
    if (data_type_of<T> != data_type_) {
      detail::fail(ErrorCode::InvalidOption, "npy: '", name_, "' holds ",
                   data_type_name(data_type_), " elements; it cannot be viewed as ",
                   data_type_name(data_type_of<T>));
    }
  }
  std::size_t data_bytes() const noexcept {
    return static_cast<std::size_t>(layout_.element_count() * element_size(data_type_));
  }
  // Rounded up to 4 like DMLCalcBufferTensorSize (T8), so the buffer satisfies T10.
  std::size_t storage_size() const noexcept { return (data_bytes() + 3) & ~std::size_t{3}; }
  template <class Deferred = void>
  void finish_layout() {
    layout_ = detail::npy_layout(sizes_, fortran_order_);
    strides_.assign(rank(), 0);
    for (std::uint32_t d = 0; d < rank(); ++d) strides_[d] = static_cast<std::uint32_t>(layout_.strides[d]);
  }

  std::string name_;
  DataType data_type_ = DataType::Unknown;
  std::vector<std::uint32_t> sizes_;
  std::vector<std::uint32_t> strides_;
  bool fortran_order_ = false;
  NpyVersion version_ = NpyVersion::k1_0;
  Layout layout_;
  // std::byte storage from operator new: aligned for every element type, and bytes may hold
  // objects of any type (implicit object creation).
  std::vector<std::byte> storage_;
};

// Reads a .npy image from memory (for tests and fuzzing). `name` is used in messages.
template <class Deferred = void>
inline NpyArray read_npy(std::span<const std::byte> bytes, std::string name = "<memory>") {
  return NpyArray::from_bytes(bytes, std::move(name));
}

namespace detail {

// What the file overloads take: text that converts to std::string_view (std::string,
// const char*), or a path std::ifstream and std::ofstream open themselves and messages name by its
// string() (std::filesystem::path). They are templates so that this header needs no
// <filesystem>, the costliest standard header dmlref.hpp would parse; a caller that passes a
// std::filesystem::path has included it already.
template <class Path>
concept NpyPath = std::is_convertible_v<const Path&, std::string_view> ||
                  (std::is_constructible_v<std::ifstream, const Path&, std::ios::openmode> &&
                   requires(const Path& path) {
                     { path.string() } -> std::convertible_to<std::string>;
                   });

// The path as messages name it.
template <NpyPath Path>
std::string npy_path_text(const Path& path) {
  if constexpr (std::is_convertible_v<const Path&, std::string_view>) {
    return std::string(std::string_view(path));
  } else {
    return path.string();
  }
}

template <class Stream, NpyPath Path>
void open_npy_file(Stream& stream, const Path& path, std::ios::openmode mode) {
  if constexpr (std::is_constructible_v<Stream, const Path&, std::ios::openmode>) {
    stream.open(path, mode);
  } else {
    stream.open(std::string(std::string_view(path)), mode);
  }
}

// Reads an opened file (the overloads below open it, so errno still says why an open failed).
template <class Deferred = void>
inline NpyArray read_npy_file(std::ifstream& in, const std::string& name) {
  if (!in) {
    fail(ErrorCode::Io, "npy: cannot open '", name, "' for reading: ", std::strerror(errno));
  }
  // A file that seeks (a regular file or a block device) tells its size up front, so a header that
  // disagrees with it is refused before any data is allocated or read; pipes and character
  // devices are read only as far as the header says.
  std::optional<std::uint64_t> size;
  std::streambuf& file = *in.rdbuf();
  const std::streampos end = file.pubseekoff(0, std::ios::end, std::ios::in);
  if (end != std::streampos(-1)) {
    if (file.pubseekpos(0, std::ios::in) != std::streampos(0)) {
      fail(ErrorCode::Io, "npy: cannot read '", name, "': ", std::strerror(errno));
    }
    size = static_cast<std::uint64_t>(std::streamoff(end));
  }
  // POSIX opens a directory for reading, and its first read fails (Windows refuses the open).
  in.peek();
  if (in.bad()) {
    const int error = errno;
    fail(ErrorCode::Io, "npy: cannot read '", name, "': ",
         error == EISDIR ? "it is a directory" : std::strerror(error));
  }
  in.clear();
  return NpyArray::from_stream(in, name, size);
}

}  // namespace detail

// Reads a .npy file. Open and read failures are ErrorCode::Io, format problems NpyFormat.
template <detail::NpyPath Path>
NpyArray read_npy(const Path& path) {
  const std::string name = detail::npy_path_text(path);  // before the open: errno stays its own
  std::ifstream in;
  detail::open_npy_file(in, path, std::ios::binary);
  return detail::read_npy_file(in, name);
}

namespace detail {

// The preamble and the header of an array's .npy image: the header dict as numpy prints it,
// padded so the data starts at a multiple of 64 bytes.
template <class Deferred = void>
inline std::string npy_header_bytes(const NpyArray& array, NpyVersion version) {
  if (version != NpyVersion::k1_0 && version != NpyVersion::k2_0 && version != NpyVersion::k3_0) {
    fail(ErrorCode::InvalidOption, "npy: version ", static_cast<unsigned>(version),
         ".0 is not a .npy format version; use 1.0, 2.0 or 3.0");
  }
  if (!is_valid(array.data_type())) {
    fail(ErrorCode::NpyFormat, "npy: '", array.name(), "': the array holds no data");
  }
  // As numpy prints it, trailing ", " included, so files compare equal to numpy's byte for byte.
  std::string dict = "{'descr': '";
  dict += npy_descr(array.data_type());
  dict += "', 'fortran_order': ";
  dict += array.fortran_order() ? "True" : "False";
  dict += ", 'shape': ";
  dict += npy_shape_text(std::span<const std::uint32_t>(array.sizes()));
  dict += ", }";
  const std::size_t preamble = version == NpyVersion::k1_0 ? 10 : 12;
  // Pad with spaces so the data starts at a multiple of 64 (numpy's ARRAY_ALIGN); '\n' ends it.
  const std::size_t unpadded = preamble + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out(reinterpret_cast<const char*>(kNpyMagic), sizeof kNpyMagic);
  out += static_cast<char>(version);
  out += '\0';
  for (std::size_t i = 0; i < preamble - 8; ++i) {
    out += static_cast<char>((dict.size() >> (8 * i)) & 0xFF);
  }
  return out + dict;
}

}  // namespace detail

// The .npy image of an array in the given format version (its own order, C or Fortran).
template <class Deferred = void>
inline std::vector<std::byte> npy_bytes(const NpyArray& array,
                                        NpyVersion version = NpyVersion::k1_0) {
  const std::string header = detail::npy_header_bytes(array, version);
  std::vector<std::byte> out(header.size() + array.bytes().size());
  std::memcpy(out.data(), header.data(), header.size());
  std::memcpy(out.data() + header.size(), array.bytes().data(), array.bytes().size());
  detail::npy_swap_to_native(std::span<std::byte>(out).subspan(header.size()),
                             element_size(array.data_type()));
  return out;
}

// Writes the .npy image to a stream: the header, then the data straight from the array (no
// copy of the whole image). Check the stream afterwards.
template <class Deferred = void>
inline void write_npy(std::ostream& out, const NpyArray& array,
                      NpyVersion version = NpyVersion::k1_0) {
  const std::string header = detail::npy_header_bytes(array, version);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  const std::span<const std::byte> data = array.bytes();
  const std::size_t element_bytes = element_size(array.data_type());
  // Chunks of whole elements: each is swapped on a big-endian host through a small buffer.
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::vector<std::byte> swapped;
  for (std::size_t at = 0; at < data.size() && out; at += kChunk) {
    std::span<const std::byte> part = data.subspan(at, std::min(kChunk, data.size() - at));
    if constexpr (std::endian::native == std::endian::big) {
      swapped.assign(part.begin(), part.end());
      detail::npy_swap_to_native(swapped, element_bytes);
      part = swapped;
    } else {
      (void)element_bytes;
    }
    out.write(reinterpret_cast<const char*>(part.data()),
              static_cast<std::streamsize>(part.size()));
  }
}

// The .npy image of a view, written in C order.
template <class T>
std::vector<std::byte> npy_bytes(const TensorView<T>& view, NpyVersion version = NpyVersion::k1_0) {
  return npy_bytes(NpyArray::from_view(view), version);
}

namespace detail {

// One output file in the making, so that none is ever left truncated or half-written: the bytes go
// to a hidden file next to the target (".NAME.dmlref-partial-N", created exclusively with fopen's
// "x" mode, so concurrent writers never share one; next to it, so the rename stays on one file
// system), and commit() renames it over the target only after every byte was written. Destroyed
// uncommitted (an error, or the caller's later failure), it removes the partial file and leaves
// the target as it was. A symlink's file is replaced, as writing through the link would; a file
// replaced keeps its permissions. A target that exists but is not a regular file (a FIFO, a
// device) holds nothing to keep whole and must not be replaced: it is written directly.
// write_npy(path) and the dmlref-check tools write every file through this. A template only so
// that a TU that writes no file does not compile its body (10 M instructions of an include).
template <class Deferred = void>
class BasicFileReplacement {
 public:
  // `prefix` starts every message (e.g. "npy: ").
  explicit BasicFileReplacement(const std::string& name, std::string_view prefix = {})
      : name_(name), target_(name), prefix_(prefix) {
#if DMLREF_NPY_POSIX
    struct stat st {};
    if (::lstat(target_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      if (char* resolved = ::realpath(target_.c_str(), nullptr)) {
        target_ = resolved;
        std::free(resolved);
      }
    }
    if (::stat(target_.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) fail_open(EISDIR);
      if (!S_ISREG(st.st_mode)) {
        open(target_);
        return;
      }
      keep_mode_ = true;
      mode_ = st.st_mode & 07777;
    }
#endif
    const std::size_t slash = target_.find_last_of(kSeparators);
    const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
    const std::string stem =
        target_.substr(0, base) + "." + target_.substr(base) + ".dmlref-partial-";
    for (unsigned attempt = 0; temp_.empty(); ++attempt) {
      const std::string candidate = stem + std::to_string(attempt);
      if (std::FILE* created = std::fopen(candidate.c_str(), "wbx")) {
        std::fclose(created);
        temp_ = candidate;
      } else if (errno != EEXIST || attempt == 1000) {
        fail_open(errno);
      }
    }
#if DMLREF_NPY_POSIX
    if (keep_mode_) (void)::chmod(temp_.c_str(), mode_);
#endif
    open(temp_);
  }
  BasicFileReplacement(const BasicFileReplacement&) = delete;
  BasicFileReplacement& operator=(const BasicFileReplacement&) = delete;
  ~BasicFileReplacement() {
    if (!temp_.empty()) {
      out_.close();
      (void)std::remove(temp_.c_str());
    }
  }

  std::ostream& stream() { return out_; }

  // Closes the file; an error writing it (a full disk) is ErrorCode::Io. The target is untouched.
  void finish() {
    if (finished_) return;
    finished_ = true;
    out_.close();
    if (!out_) fail(ErrorCode::Io, prefix_, "error writing '", name_, "'");
  }

  // Finishes the file and moves it over the target.
  void commit() {
    finish();
    if (temp_.empty()) return;
    bool moved = std::rename(temp_.c_str(), target_.c_str()) == 0;
#ifdef _WIN32
    // Windows' rename does not replace a file: remove it first (missing a moment, never partial).
    if (!moved) {
      moved = std::remove(target_.c_str()) == 0 && std::rename(temp_.c_str(), target_.c_str()) == 0;
    }
#endif
    if (!moved) {
      const int error = errno;
      fail(ErrorCode::Io, prefix_, "cannot replace '", name_, "' with the finished '", temp_,
           "': ", std::strerror(error));
    }
    temp_.clear();
  }

 private:
#ifdef _WIN32
  static constexpr const char* kSeparators = "/\\:";
#else
  static constexpr const char* kSeparators = "/";
#endif

  void open(const std::string& file) {
    out_.open(file, std::ios::binary | std::ios::trunc);
    if (!out_) {
      const int error = errno;
      // A throwing constructor runs no destructor: the partial file is removed here.
      if (!temp_.empty()) (void)std::remove(temp_.c_str());
      temp_.clear();
      fail_open(error);
    }
  }
  [[noreturn]] void fail_open(int error) const {
    fail(ErrorCode::Io, prefix_, "cannot open '", name_, "' for writing: ", std::strerror(error));
  }

  std::string name_;    // as the caller gave it, for messages
  std::string target_;  // the file replaced: a symlink resolved
  std::string temp_;    // the partial file while it exists
  std::string prefix_;
  std::ofstream out_;
  bool finished_ = false;
#if DMLREF_NPY_POSIX
  bool keep_mode_ = false;
  mode_t mode_ = 0;
#endif
};
using FileReplacement = BasicFileReplacement<>;

}  // namespace detail

// Writes the .npy image to a file, replacing it only once the whole image is written (see the
// decisions at the top: never a truncated or half-written file).
template <detail::NpyPath Path>
void write_npy(const Path& path, const NpyArray& array, NpyVersion version = NpyVersion::k1_0) {
  (void)detail::npy_header_bytes(array, version);  // refuse a bad version before any file opens
  detail::FileReplacement file(detail::npy_path_text(path), "npy: ");
  write_npy(file.stream(), array, version);
  file.commit();
}

template <detail::NpyPath Path, class T>
void write_npy(const Path& path, const TensorView<T>& view, NpyVersion version = NpyVersion::k1_0) {
  write_npy(path, NpyArray::from_view(view, detail::npy_path_text(path)), version);
}

}  // namespace dmlref
