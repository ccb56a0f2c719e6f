// npy.hpp: round trips of every type, rank and version; files written by numpy (made by
// tests/data/npy/make_npy.py); and every malformed input rejected with a message naming the file.
#define DMLREF_TEST_NO_OPERATORS  // no operator header: see test_support.hpp
#include "test_support.hpp"

#include <dmlref/fill.hpp>
#include <dmlref/npy.hpp>

#include <filesystem>
#include <fstream>
#include <istream>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <thread>

#include <csignal>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace test_npy {  // this file's own names (tests/CMakeLists.txt: unity groups)

using dmlref::DataType;
using dmlref::ErrorCode;
using dmlref::float16;
using dmlref::Layout;
using dmlref::NpyArray;
using dmlref::NpyVersion;
using dmlref::TensorView;
using dmlref::test::bits_of;

namespace {

const std::string kDataDir = std::string(DMLREF_TEST_DATA_DIR) + "/npy/";

std::vector<std::byte> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open ", path);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

// A .npy image from a header text (unpadded) and `data_bytes` zero bytes.
std::vector<std::byte> image(const std::string& header, std::size_t data_bytes, unsigned major = 1,
                             unsigned minor = 0) {
  std::vector<std::byte> out;
  for (unsigned char c : {0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59}) out.push_back(std::byte{c});
  out.push_back(std::byte(major));
  out.push_back(std::byte(minor));
  const std::size_t len = header.size();
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < len_bytes; ++i) out.push_back(std::byte((len >> (8 * i)) & 0xFF));
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  out.resize(out.size() + data_bytes, std::byte{0});
  return out;
}

std::string dict(const std::string& descr, const std::string& shape, const std::string& order = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }\n";
}

// The formulas of make_npy.py for the (2, 3, 4) files, at row-major position i.
template <class T>
T numpy_value(std::int64_t i) {
  if constexpr (std::is_same_v<T, float16>) {
    return float16(static_cast<float>((i - 12) * 0.375));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>((i - 12) * 0.375);
  } else if constexpr (std::is_signed_v<T>) {
    constexpr std::int64_t kScale = sizeof(T) == 1 ? 10 : sizeof(T) == 2 ? 2500
                                  : sizeof(T) == 4 ? 150000000 : 700000000000000000;
    return static_cast<T>((i - 12) * kScale);
  } else {
    constexpr std::uint64_t kScale = sizeof(T) == 1 ? 11 : sizeof(T) == 2 ? 2800
                                   : sizeof(T) == 4 ? 180000000 : 800000000000000000;
    return static_cast<T>(static_cast<std::uint64_t>(i) * kScale + 1);
  }
}

template <class T>
std::string numpy_code() {
  return std::string(dmlref::npy_descr(dmlref::data_type_of<T>).substr(1));
}

}  // namespace

TEST_CASE_TEMPLATE("npy: round trip of every type, ranks 1-8, versions 1.0-3.0", T, DMLREF_ALL_TYPES) {
  for (std::uint32_t rank = 1; rank <= 8; ++rank) {
    std::vector<std::uint32_t> sizes;
    for (std::uint32_t d = 0; d < rank; ++d) sizes.push_back(d % 3 + 1);  // at most 72 elements
    NpyArray a(dmlref::data_type_of<T>, sizes);
    dmlref::fill_distinct(a.view<T>(), rank);
    for (NpyVersion version : {NpyVersion::k1_0, NpyVersion::k2_0, NpyVersion::k3_0}) {
      const auto bytes = dmlref::npy_bytes(a, version);
      // numpy's layout: the data starts at a multiple of 64 and the header ends in '\n'.
      const auto header = dmlref::parse_npy_header(bytes, "round trip");
      CHECK(header.data_offset % 64 == 0);
      CHECK(bytes[header.data_offset - 1] == std::byte{'\n'});
      const NpyArray b = dmlref::read_npy(bytes);
      CHECK(b.version() == version);
      CHECK(b.data_type() == dmlref::data_type_of<T>);
      CHECK(b.sizes() == sizes);
      CHECK_FALSE(b.fortran_order());
      REQUIRE(b.bytes().size() == a.bytes().size());
      CHECK(std::memcmp(b.bytes().data(), a.bytes().data(), a.bytes().size()) == 0);
    }
  }
}

TEST_CASE("npy: write from a strided view stores C order; read back through a file") {
  std::vector<std::int32_t> storage = {1, 4, 2, 5, 3, 6};  // {2,3} stored column-major
  const TensorView<const std::int32_t> view(storage.data(), Layout::strided({2, 3}, {1, 2}));
  const auto dir = std::filesystem::temp_directory_path() / "dmlref_test_npy";
  std::filesystem::create_directories(dir);
  const auto path = dir / "strided.npy";
  dmlref::write_npy(path, view);
  const NpyArray a = dmlref::read_npy(path);
  CHECK(a.name() == path.string());
  CHECK(a.sizes() == std::vector<std::uint32_t>{2, 3});
  const auto v = a.view<std::int32_t>();
  CHECK(v.at({0, 0}) == 1);
  CHECK(v.at({0, 2}) == 3);
  CHECK(v.at({1, 0}) == 4);
  CHECK(v.at({1, 2}) == 6);
  std::filesystem::remove_all(dir);
}

TEST_CASE_TEMPLATE("npy: numpy's (2, 3, 4) file of every type, exact values", T, DMLREF_ALL_TYPES) {
  const std::string name = kDataDir + numpy_code<T>() + "_2x3x4.npy";
  const NpyArray a = dmlref::read_npy(name);
  CHECK(a.data_type() == dmlref::data_type_of<T>);
  CHECK(a.sizes() == std::vector<std::uint32_t>{2, 3, 4});
  CHECK(a.version() == NpyVersion::k1_0);
  const auto v = a.view<T>();
  std::int64_t i = 0;
  std::size_t wrong = 0;
  dmlref::for_each_coordinate(v.layout(), [&](const dmlref::Coord& c) {
    wrong += bits_of(v[c]) != bits_of(numpy_value<T>(i++));
  });
  CHECK(wrong == 0);
  CHECK(bits_of(v.at({1, 2, 3})) == bits_of(numpy_value<T>(23)));
  // Our writer reproduces numpy's file byte for byte.
  CHECK(dmlref::npy_bytes(a) == file_bytes(name));
}

TEST_CASE("npy: numpy's special float values keep every bit") {
  const NpyArray h = dmlref::read_npy(kDataDir + "f2_special.npy");
  const std::uint64_t h_bits[] = {0x0000, 0x8000, 0x7E01, 0xFE3F, 0x7C00, 0xFC00, 0x0001, 0x7BFF};
  const NpyArray f = dmlref::read_npy(kDataDir + "f4_special.npy");
  const std::uint64_t f_bits[] = {0x00000000, 0x80000000, 0x7FC00001, 0xFFA00000,
                                  0x7F800000, 0xFF800000, 0x00000001, 0x7F7FFFFF};
  const NpyArray d = dmlref::read_npy(kDataDir + "f8_special.npy");
  const std::uint64_t d_bits[] = {0x0000000000000000, 0x8000000000000000, 0x7FF8000000000001,
                                  0xFFF4000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
                                  0x0000000000000001, 0x7FEFFFFFFFFFFFFF};
  for (std::uint32_t i = 0; i < 8; ++i) {
    CHECK(bits_of(h.view<float16>().at({i})) == h_bits[i]);
    CHECK(bits_of(f.view<float>().at({i})) == f_bits[i]);
    CHECK(bits_of(d.view<double>().at({i})) == d_bits[i]);
  }
}

TEST_CASE("npy: numpy's 1-d and 8-d files") {
  const NpyArray a = dmlref::read_npy(kDataDir + "u2_1d.npy");
  CHECK(a.sizes() == std::vector<std::uint32_t>{7});
  for (std::uint32_t i = 0; i < 7; ++i) CHECK(a.view<std::uint16_t>().at({i}) == 3 * i);
  const NpyArray b = dmlref::read_npy(kDataDir + "u1_8d.npy");
  CHECK(b.sizes() == std::vector<std::uint32_t>{1, 2, 1, 2, 1, 2, 1, 2});
  CHECK(b.view<std::uint8_t>().at({0, 1, 0, 1, 0, 1, 0, 1}) == 15);
  CHECK(b.view<std::uint8_t>().at({0, 1, 0, 0, 0, 1, 0, 0}) == 10);
  CHECK(dmlref::npy_bytes(b) == file_bytes(kDataDir + "u1_8d.npy"));
}

TEST_CASE("npy: numpy's Fortran-order files read as strided views") {
  const NpyArray a = dmlref::read_npy(kDataDir + "f8_fortran_3x4.npy");
  CHECK(a.fortran_order());
  CHECK(a.sizes() == std::vector<std::uint32_t>{3, 4});
  CHECK(a.strides() == std::vector<std::uint32_t>{1, 3});
  const auto v = a.view<double>();
  for (std::uint32_t r = 0; r < 3; ++r) {
    for (std::uint32_t c = 0; c < 4; ++c) CHECK(v.at({r, c}) == r * 4 + c);
  }
  // Written back in its own order, byte for byte numpy's file.
  CHECK(dmlref::npy_bytes(a) == file_bytes(kDataDir + "f8_fortran_3x4.npy"));
  // A C-order copy of the view holds the same logical values.
  const NpyArray c = NpyArray::from_view(v);
  CHECK_FALSE(c.fortran_order());
  CHECK(c.view<double>().at({2, 1}) == 9.0);

  const NpyArray b = dmlref::read_npy(kDataDir + "i2_fortran_2x3x4.npy");
  CHECK(b.strides() == std::vector<std::uint32_t>{1, 2, 6});
  const auto w = b.view<std::int16_t>();
  std::int16_t i = -12;
  std::size_t wrong = 0;
  dmlref::for_each_coordinate(w.layout(), [&](const dmlref::Coord& k) { wrong += w[k] != i++; });
  CHECK(wrong == 0);
  // The runtime description carries the column-major strides.
  const dmlref::BufferTensorDesc d = b.desc();
  REQUIRE(d.Strides != nullptr);
  CHECK(d.Strides[2] == 6);
  const auto bound = dmlref::bind_tensor("test", "InputTensor", &d, b.buffer().data,
                                         b.buffer().size_in_bytes, false);
  CHECK(dmlref::view_of<const std::int16_t>(bound).at({1, 2, 3}) == 11);
}

TEST_CASE("npy: numpy's version 2.0 and 3.0 files") {
  const NpyArray a = dmlref::read_npy(kDataDir + "i4_v2.npy");
  CHECK(a.version() == NpyVersion::k2_0);
  CHECK(a.sizes() == std::vector<std::uint32_t>{2, 3});
  CHECK(a.view<std::int32_t>().at({0, 0}) == -3);
  CHECK(a.view<std::int32_t>().at({1, 2}) == 2);
  CHECK(dmlref::npy_bytes(a, NpyVersion::k2_0) == file_bytes(kDataDir + "i4_v2.npy"));
  const NpyArray b = dmlref::read_npy(kDataDir + "f2_v3.npy");
  CHECK(b.version() == NpyVersion::k3_0);
  CHECK(b.sizes() == std::vector<std::uint32_t>{3, 2});
  CHECK(static_cast<float>(b.view<float16>().at({2, 1})) == 2.5f);
  CHECK(dmlref::npy_bytes(b, NpyVersion::k3_0) == file_bytes(kDataDir + "f2_v3.npy"));
}

TEST_CASE("npy: numpy's unsupported files are rejected naming the file and the reason") {
  const auto check = [](const std::string& file, const std::string& reason) {
    const std::string path = kDataDir + file;
    DMLREF_CHECK_ERROR(dmlref::read_npy(path), ErrorCode::NpyFormat, "'" + path + "'");
    DMLREF_CHECK_ERROR(dmlref::read_npy(path), ErrorCode::NpyFormat, reason);
  };
  check("bad_big_endian.npy", "big-endian data ('>f4') is not supported");
  check("bad_structured.npy", "structured dtypes");
  check("bad_bool.npy", "dtype '|b1' is not one of the eleven DirectML types");
  check("bad_scalar.npy", "shape () is a 0-d array");
  check("bad_object.npy", "object arrays ('|O')");
  check("bad_truncated.npy", "truncated: shape (2, 3, 4) of FLOAT32 needs 96 data bytes but only 93");
}

TEST_CASE("npy: open failures are ErrorCode::Io naming the file") {
  DMLREF_CHECK_ERROR(dmlref::read_npy(kDataDir + "no_such_file.npy"), ErrorCode::Io,
                     "cannot open '" + kDataDir + "no_such_file.npy' for reading");
  DMLREF_CHECK_ERROR(dmlref::read_npy(std::filesystem::path(kDataDir)), ErrorCode::Io, "is a directory");
  const NpyArray a(DataType::UInt8, {3});
  DMLREF_CHECK_ERROR(dmlref::write_npy("/nonexistent_dir_dmlref/x.npy", a), ErrorCode::Io,
                     "cannot open '/nonexistent_dir_dmlref/x.npy' for writing");
}

TEST_CASE("npy: malformed images are rejected with the reason") {
  const auto rejects = [](const std::vector<std::byte>& bytes, const std::string& reason) {
    DMLREF_CHECK_ERROR(dmlref::read_npy(bytes, "case.npy"), ErrorCode::NpyFormat, "npy: 'case.npy': ");
    DMLREF_CHECK_ERROR(dmlref::read_npy(bytes, "case.npy"), ErrorCode::NpyFormat, reason);
  };
  const std::string good = dict("<f4", "(2, 3)");
  CHECK(dmlref::read_npy(image(good, 24)).element_count() == 6);

  // Preamble.
  rejects({}, "truncated: 0 bytes");
  auto bad_magic = image(good, 24);
  bad_magic[1] = std::byte{'X'};
  rejects(bad_magic, "bad magic");
  rejects(image(good, 24, 4, 0), "format version 4.0 is not supported");
  rejects(image(good, 24, 1, 1), "format version 1.1 is not supported");
  rejects(image(good, 24, 0, 0), "format version 0.0");
  auto short_preamble = image(good, 0, 2);
  short_preamble.resize(10);
  rejects(short_preamble, "too short for the version 2.0 preamble of 12");
  auto long_header = image(std::string(20000, ' '), 0, 2);
  rejects(long_header, "the header is 20000 bytes, over the limit of 10000");
  auto lying_length = image(good, 0);
  lying_length[8] = std::byte{0xFF};
  rejects(lying_length, "truncated: the header is 255 bytes but only");

  // The dict.
  rejects(image("", 0), "expected '{'");
  rejects(image("{'descr': '<f4', 'fortran_order': False}\n", 0), "missing key 'shape'");
  rejects(image("{'fortran_order': False, 'shape': (1,)}\n", 4), "missing key 'descr'");
  rejects(image("{'descr': '<f4', 'shape': (1,)}\n", 4), "missing key 'fortran_order'");
  rejects(image("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}\n", 4),
          "unexpected key 'extra'");
  rejects(image("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\n", 4),
          "key 'descr' appears twice");
  rejects(image(dict("<f4", "(3)"), 12), "a one-element shape must be written (n,)");
  rejects(image(dict("<f4", "(-3,)"), 12), "non-negative integers");
  rejects(image(dict("<f4", "(2 3)"), 24), "expected ',' or ')'");
  rejects(image(dict("<f4", "[2, 3]"), 24), "expected '('");
  rejects(image(dict("<f4", "(2, 3)", "1"), 24), "fortran_order must be True or False");
  rejects(image("{'descr': '<f4', 'fortran_order' False, 'shape': (1,)}\n", 4), "expected ':'");
  rejects(image("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}\n", 4), "expected ','");
  rejects(image("{'descr': '<f4", 0), "unterminated string");
  rejects(image("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,)}\n", 4), "escapes");
  rejects(image(good + "junk", 24), "only whitespace may follow the dict");
  rejects(image("{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}\n", 4), "expected ','");
  rejects(image(dict("<f4", "(99999999999999999999,)"), 0), "does not fit 64 bits");

  // Types.
  rejects(image(dict(">i8", "(1,)"), 8), "big-endian data ('>i8')");
  rejects(image(dict("=f4", "(1,)"), 4), "dtype '=f4' is not one of the eleven");
  rejects(image(dict("<c8", "(1,)"), 8), "dtype '<c8'");
  rejects(image(dict("f4", "(1,)"), 4), "dtype 'f4'");
  rejects(image(dict("O", "(1,)"), 8), "object arrays");
  rejects(image("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,)}\n", 4),
          "structured dtypes");

  // Shapes and sizes.
  rejects(image(dict("<f4", "()"), 4), "shape () is a 0-d array");
  rejects(image(dict("<f4", "(2, 0)"), 0), "shape (2, 0) is empty");
  rejects(image(dict("|u1", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), 1), "has 9 dimensions");
  rejects(image(dict("|u1", "(65536, 65536)"), 0), "more than 4294967295");
  rejects(image(dict("<f4", "(2, 3)"), 23), "needs 24 data bytes but only 23");
  rejects(image(dict("<f4", "(2, 3)"), 25), "24 data bytes, but 25 follow it");
}

TEST_CASE("npy: accepted spellings") {
  // One-byte types in any byte order; double quotes; key order; Python 2 longs; no trailing comma.
  CHECK(dmlref::read_npy(image(dict("<i1", "(2,)"), 2)).data_type() == DataType::Int8);
  CHECK(dmlref::read_npy(image(dict(">i1", "(2,)"), 2)).data_type() == DataType::Int8);
  CHECK(dmlref::read_npy(image(dict("<u1", "(2,)"), 2)).data_type() == DataType::UInt8);
  CHECK(dmlref::read_npy(image(dict(">u1", "(2,)"), 2)).data_type() == DataType::UInt8);
  const NpyArray a = dmlref::read_npy(
      image("{\"shape\": (2L, 3L), \"fortran_order\": True, \"descr\": \"<u2\"}", 12));
  CHECK(a.sizes() == std::vector<std::uint32_t>{2, 3});
  CHECK(a.fortran_order());
  CHECK(a.data_type() == DataType::UInt16);
}

TEST_CASE("npy: no prefix and no corrupted header byte reads out of bounds") {
  // Under the sanitizers this is the memory-safety check; everywhere it checks that every failure
  // is a dmlref::Error.
  NpyArray a(DataType::Float16, {2, 3, 1});
  dmlref::fill_distinct(a.view<float16>(), 1);
  const auto good = dmlref::npy_bytes(a);
  std::size_t rejected = 0;
  for (std::size_t n = 0; n < good.size(); ++n) {
    const std::vector<std::byte> prefix(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      (void)dmlref::read_npy(prefix);
    } catch (const dmlref::Error& e) {
      rejected += e.code() == ErrorCode::NpyFormat;
    }
  }
  CHECK(rejected == good.size());
  const auto header = dmlref::parse_npy_header(good, "x");
  std::size_t outcomes = 0;
  for (std::size_t i = 0; i < header.data_offset; ++i) {
    for (unsigned value : {0x00u, 0x27u, 0x29u, 0x2Cu, 0x7Du, 0xFFu}) {
      auto corrupt = good;
      corrupt[i] = std::byte(value);
      try {
        (void)dmlref::read_npy(corrupt);
      } catch (const dmlref::Error&) {
      }
      ++outcomes;
    }
  }
  CHECK(outcomes == header.data_offset * 6);
}

TEST_CASE("npy: arrays as runtime tensors") {
  // UINT8 {5}: DMLCalcBufferTensorSize rounds to 8, and the buffer holds that much (T10).
  NpyArray a(DataType::UInt8, {5});
  CHECK(a.bytes().size() == 5);
  CHECK(a.buffer().size_in_bytes == 8);
  CHECK(a.desc().TotalTensorSizeInBytes == 8);
  CHECK(a.desc().Strides == nullptr);
  CHECK(a.tensor_desc().total_tensor_size_in_bytes == 8);
  const dmlref::BufferTensorDesc d = a.desc();
  const auto bound = dmlref::bind_tensor("test", "OutputTensor", &d, a.buffer().data,
                                         a.buffer().size_in_bytes, true);
  CHECK(bound.tensor.layout.sizes[0] == 5);
  DMLREF_CHECK_ERROR(a.view<std::int8_t>(), ErrorCode::InvalidOption,
                     "holds UINT8 elements; it cannot be viewed as INT8");
  DMLREF_CHECK_ERROR(NpyArray(DataType::Float32, {2, 0}), ErrorCode::T3, "Sizes[1] is 0");
  DMLREF_CHECK_ERROR(NpyArray(DataType::Float32, {}), ErrorCode::T2, "0 dimensions");
  DMLREF_CHECK_ERROR(NpyArray(DataType::Unknown, {1}), ErrorCode::T1, "UNKNOWN");
}

// ------------------------------------------------------------------------------------------------
// Hostile files: the reader checks before it reads, reads no more than the header describes, and
// quotes no raw byte of the file.

namespace {

// A stream of `prefix` followed by endless `fill` bytes, handed out one byte per underflow so the
// test can count exactly how far the reader went.
class EndlessBuf : public std::streambuf {
 public:
  EndlessBuf(std::vector<std::byte> prefix, char fill) : prefix_(std::move(prefix)), fill_(fill) {}
  std::size_t consumed() const { return consumed_; }

 protected:
  int_type underflow() override {
    current_ = consumed_ < prefix_.size() ? static_cast<char>(prefix_[consumed_]) : fill_;
    ++consumed_;
    setg(&current_, &current_, &current_ + 1);
    return traits_type::to_int_type(current_);
  }

 private:
  std::vector<std::byte> prefix_;
  char fill_;
  char current_ = 0;
  std::size_t consumed_ = 0;
};

std::string scratch_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("dmlref_npy_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

}  // namespace

TEST_CASE("npy: a file is named by a std::filesystem::path, std::string, string_view or C string") {
  const std::string path = scratch_path("kinds.npy");
  const std::vector<std::int16_t> values = {1, -2, 3, -4};
  const NpyArray a = NpyArray::from_view(
      TensorView<const std::int16_t>(values.data(), Layout::packed({2, 2})));
  dmlref::write_npy(std::string_view(path), a);
  for (const NpyArray& b :
       {dmlref::read_npy(std::filesystem::path(path)), dmlref::read_npy(path),
        dmlref::read_npy(std::string_view(path)), dmlref::read_npy(path.c_str())}) {
    CHECK(b.name() == path);
    CHECK(b.sizes() == a.sizes());
    CHECK(std::memcmp(b.bytes().data(), a.bytes().data(), a.bytes().size()) == 0);
  }
  std::filesystem::remove(path);
}

TEST_CASE("npy: a pipe (no size up front) is read as far as its header says, then must end") {
  const std::string path = scratch_path("fifo.npy");
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  const auto valid = image(dict("<f4", "(2, 3)"), 24);
  // The writer's bytes sit in its stream's buffer until it closes, then go in one write that
  // fits the pipe's buffer, so it never waits on the reader (nor dies of SIGPIPE when it stops).
  const auto feed = [&](std::size_t extra) {
    return std::thread([&, extra] {
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(valid.data()),
                static_cast<std::streamsize>(valid.size()));
      out << std::string(extra, 'x');
    });
  };
  std::thread writer = feed(0);
  const NpyArray a = dmlref::read_npy(path);
  writer.join();
  CHECK(a.sizes() == std::vector<std::uint32_t>{2, 3});
  writer = feed(1);
  DMLREF_CHECK_ERROR(dmlref::read_npy(path), ErrorCode::NpyFormat,
                     "24 data bytes, but more follow it");
  writer.join();
  std::filesystem::remove(path);
}

namespace {

// A directory of its own for one test, removed with it.
struct ScratchDir {
  explicit ScratchDir(const std::string& name) : path(scratch_path(name)) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;

  // What the directory holds, by name (partial files included).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      out.push_back(entry.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string npy_text(const NpyArray& a) {
  const auto bytes = dmlref::npy_bytes(a);
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

NpyArray counting_array(std::uint32_t count) {
  NpyArray a(DataType::UInt8, {count});
  for (std::uint32_t i = 0; i < count; ++i) a.bytes()[i] = std::byte(i * 7);
  return a;
}

}  // namespace

TEST_CASE("npy: write_npy(path) replaces a file whole, keeps its mode, leaves no partial file") {
  const ScratchDir dir("replace");
  const auto path = dir.path / "x.npy";
  { std::ofstream(path) << "old contents"; }
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  const NpyArray a = counting_array(100);
  dmlref::write_npy(path, a);
  CHECK(file_text(path) == npy_text(a));
  CHECK(dir.names() == std::vector<std::string>{"x.npy"});
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  // A partial file another writer holds (or a crash left) is neither used nor touched.
  { std::ofstream(dir.path / ".x.npy.dmlref-partial-0") << "someone else's"; }
  const NpyArray b = counting_array(3);
  dmlref::write_npy(path.string(), b);
  CHECK(file_text(path) == npy_text(b));
  CHECK(file_text(dir.path / ".x.npy.dmlref-partial-0") == "someone else's");
  CHECK(dir.names() == std::vector<std::string>{".x.npy.dmlref-partial-0", "x.npy"});
}

TEST_CASE("npy: a write that fails part way leaves the old file as it was") {
  const ScratchDir dir("failed_write");
  const auto path = dir.path / "x.npy";
  { std::ofstream(path) << "old contents"; }
  // A file size limit of 4 KiB makes the 1 MiB write fail with EFBIG (SIGXFSZ ignored), as a
  // full disk would, after the header and some data were written.
  rlimit saved {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const NpyArray a = counting_array(1 << 20);
  std::optional<dmlref::Error> error;
  try {
    dmlref::write_npy(path, a);
  } catch (const dmlref::Error& e) {
    error = e;
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);
  REQUIRE(error.has_value());
  CHECK(error->code() == ErrorCode::Io);
  CHECK(std::string(error->what()).find("npy: error writing '" + path.string() + "'") !=
        std::string::npos);
  CHECK(file_text(path) == "old contents");
  CHECK(dir.names() == std::vector<std::string>{"x.npy"});
}

TEST_CASE("npy: write_npy through a symlink replaces the file it names; a directory is refused") {
  const ScratchDir dir("symlink");
  const auto file = dir.path / "real.npy";
  const auto link = dir.path / "link.npy";
  { std::ofstream(file) << "old"; }
  std::filesystem::create_symlink(file, link);
  const NpyArray a = counting_array(10);
  dmlref::write_npy(link, a);
  CHECK(std::filesystem::is_symlink(link));
  CHECK(file_text(file) == npy_text(a));
  CHECK(dir.names() == std::vector<std::string>{"link.npy", "real.npy"});
  DMLREF_CHECK_ERROR(dmlref::write_npy(dir.path, a), ErrorCode::Io,
                     "npy: cannot open '" + dir.path.string() + "' for writing: Is a directory");
  CHECK(dir.names() == std::vector<std::string>{"link.npy", "real.npy"});
  // A dangling link (the library has no readlink to name its file) is replaced by the file.
  const auto dangling = dir.path / "dangling.npy";
  std::filesystem::create_symlink(dir.path / "missing.npy", dangling);
  dmlref::write_npy(dangling, a);
  CHECK_FALSE(std::filesystem::is_symlink(dangling));
  CHECK(file_text(dangling) == npy_text(a));
  CHECK(dir.names() == std::vector<std::string>{"dangling.npy", "link.npy", "real.npy"});
}

TEST_CASE("npy: a target that is not a regular file (a FIFO, a device) is written, not replaced") {
  const ScratchDir dir("fifo_target");
  const auto path = dir.path / "pipe.npy";
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  // The read end opens first without waiting for a writer; the image fits the pipe's buffer, so
  // the write completes without a reader thread and nothing can hang if the FIFO were replaced.
  const int read_end = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(read_end >= 0);
  const NpyArray a = counting_array(40);
  dmlref::write_npy(path, a);
  std::string received(4096, '\0');
  const ::ssize_t got = ::read(read_end, received.data(), received.size());
  ::close(read_end);
  received.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  CHECK(received == npy_text(a));
  CHECK(std::filesystem::is_fifo(path));
  CHECK(dir.names() == std::vector<std::string>{"pipe.npy"});
}

TEST_CASE("npy: /dev/zero and other endless input fail at the magic, reading 12 bytes at most") {
  if (std::filesystem::exists("/dev/zero")) {
    DMLREF_CHECK_ERROR(dmlref::read_npy(std::filesystem::path("/dev/zero")), ErrorCode::NpyFormat,
                       "npy: '/dev/zero': bad magic");
  }
  EndlessBuf zeros({}, '\0');
  std::istream in(&zeros);
  DMLREF_CHECK_ERROR(NpyArray::from_stream(in, "zeros", std::nullopt), ErrorCode::NpyFormat,
                     "bad magic");
  CHECK(zeros.consumed() <= 12);
}

TEST_CASE("npy: a stream is read exactly as far as the header describes, then must end") {
  const auto valid = image(dict("<f4", "(2, 3)"), 24);
  // Endless data after a valid image: the reader takes the 24 data bytes, sees one more and stops.
  EndlessBuf endless(valid, 'x');
  std::istream in(&endless);
  DMLREF_CHECK_ERROR(NpyArray::from_stream(in, "endless", std::nullopt), ErrorCode::NpyFormat,
                     "24 data bytes, but more follow it");
  CHECK(endless.consumed() == valid.size() + 1);
  // A header that promises 2^32 - 1 elements over a short stream: truncated, named as such.
  const auto promise = image(dict("|u1", "(4294967295,)"), 3);
  std::istringstream short_stream(std::string(reinterpret_cast<const char*>(promise.data()), promise.size()));
  DMLREF_CHECK_ERROR(NpyArray::from_stream(short_stream, "short", promise.size()),
                     ErrorCode::NpyFormat, "needs 4294967295 data bytes but only 3");
  // Without a known size (a pipe) the same promise costs only the bytes that arrive.
  std::istringstream pipe_like(std::string(reinterpret_cast<const char*>(promise.data()), promise.size()));
  DMLREF_CHECK_ERROR(NpyArray::from_stream(pipe_like, "pipe", std::nullopt), ErrorCode::NpyFormat,
                     "needs 4294967295 data bytes but only 3");
  // The exact stream reads back.
  std::istringstream exact(std::string(reinterpret_cast<const char*>(valid.data()), valid.size()));
  CHECK(NpyArray::from_stream(exact, "exact", std::nullopt).element_count() == 6);
}

TEST_CASE("npy: a file whose size disagrees with its header is refused before its data is read") {
  // A valid header for 8 bytes, then a sparse file 64 GiB long: refused by its size alone (the
  // old reader read all of it into memory first).
  const std::string path = scratch_path("sparse.npy");
  const auto header_only = image(dict("<f4", "(2,)"), 8);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(header_only.data()),
              static_cast<std::streamsize>(header_only.size()));
  }
  std::filesystem::resize_file(path, std::uint64_t{1} << 36);
  const std::uint64_t follow = (std::uint64_t{1} << 36) - (header_only.size() - 8);
  DMLREF_CHECK_ERROR(dmlref::read_npy(std::filesystem::path(path)), ErrorCode::NpyFormat,
                     "8 data bytes, but " + std::to_string(follow) + " follow it");
  // And a file shorter than its header says.
  std::filesystem::resize_file(path, header_only.size() - 1);
  DMLREF_CHECK_ERROR(dmlref::read_npy(std::filesystem::path(path)), ErrorCode::NpyFormat,
                     "needs 8 data bytes but only 7");
  std::filesystem::remove(path);
}

TEST_CASE("npy: bytes of the file that a message quotes are escaped") {
  const auto no_raw_control = [](const std::vector<std::byte>& bytes, const std::string& escaped) {
    try {
      (void)dmlref::read_npy(bytes, "evil.npy");
      FAIL("accepted");
    } catch (const dmlref::Error& e) {
      const std::string what = e.what();
      CHECK_MESSAGE(what.find(escaped) != std::string::npos, what);
      // Printable ASCII only: C0 controls, DEL and bytes 0x80-0xff (C1 controls such as 0x9b
      // in Latin-1 terminals) all come escaped.
      for (char c : what) {
        const auto u = static_cast<unsigned char>(c);
        CHECK_MESSAGE((u >= 0x20 && u < 0x7f), what);
      }
    }
  };
  // ESC [2J clears a terminal; BEL rings it.
  no_raw_control(image("{'\x1b[2J': 1}\n", 0), "unexpected key '\\x1b[2J'");
  no_raw_control(image(dict("\x07<f4", "(1,)"), 4), "dtype '\\x07<f4'");
  no_raw_control(image("{'descr' \x1b[31m}\n", 0), "\\x1b[31m");
  no_raw_control(image("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\x9b\n", 4),
                 "\\x9b");
  CHECK(dmlref::detail::escape_bytes(std::string("a\\b\n\x7f\xff", 6)) == "a\\\\b\\n\\x7f\\xff");
}

TEST_CASE("npy: write_npy to a stream is the image; reshape changes sizes without a copy") {
  NpyArray a(DataType::Int16, {2, 3});
  dmlref::fill_distinct(a.view<std::int16_t>(), 3);
  std::ostringstream out;
  dmlref::write_npy(out, a);
  const auto image_bytes = dmlref::npy_bytes(a);
  CHECK(out.str() == std::string(reinterpret_cast<const char*>(image_bytes.data()), image_bytes.size()));

  const std::byte* data = a.bytes().data();
  a.reshape({1, 1, 6});
  CHECK(a.sizes() == std::vector<std::uint32_t>{1, 1, 6});
  CHECK(a.bytes().data() == data);
  CHECK(a.view<std::int16_t>().at({0, 0, 4}) == a.view<std::int16_t>().data()[4]);
  DMLREF_CHECK_ERROR(a.reshape({4}), ErrorCode::ShapeMismatch, "cannot reshape {1,1,6} to {4}");
  NpyArray f(DataType::Int16, {2, 3}, true);
  DMLREF_CHECK_ERROR(f.reshape({3, 2}), ErrorCode::ShapeMismatch, "(Fortran order)");
}

}  // namespace test_npy
