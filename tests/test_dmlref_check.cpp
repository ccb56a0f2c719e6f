// dmlref-check end to end: every operator through .npy files, exit codes 0, 1 and 2, the help
// text. The tool's path comes from tools/CMakeLists.txt (DMLREF_CHECK_EXE); without the tools
// this file has no tests.
#define DMLREF_TEST_NO_OPERATORS  // no operator header: see test_support.hpp
#include "test_support.hpp"

#ifdef DMLREF_CHECK_EXE

#include <dmlref/npy.hpp>
#include <dmlref/version.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace test_dmlref_check {  // this file's own names (tests/CMakeLists.txt: unity groups)

using dmlref::DataType;
using dmlref::NpyArray;

namespace {

namespace fs = std::filesystem;

// A fresh directory per test case, removed at the end.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("dmlref_check_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

struct Run {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Run run_tool(const TempDir& dir, const std::string& args) {
  const std::string log = dir / "log.txt";
  const std::string command =
      std::string("'") + DMLREF_CHECK_EXE + "' " + args + " > '" + log + "' 2>&1";
  const int raw = std::system(command.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  r.output = ss.str();
  return r;
}

template <class T>
NpyArray array(std::vector<std::uint32_t> sizes, const std::vector<T>& values,
               bool fortran_order = false) {
  NpyArray a(dmlref::data_type_of<T>, std::move(sizes), fortran_order);
  const auto v = a.view<T>();
  std::size_t i = 0;
  dmlref::for_each_coordinate(v.layout(), [&](const dmlref::Coord& c) { v[c] = values.at(i++); });
  REQUIRE(i == values.size());
  return a;
}

template <class T>
std::string save(const TempDir& dir, const std::string& name, std::vector<std::uint32_t> sizes,
                 const std::vector<T>& values, bool fortran_order = false) {
  const std::string path = dir / name;
  dmlref::write_npy(path, array<T>(std::move(sizes), values, fortran_order));
  return path;
}

// Row-major values of a .npy file.
template <class T>
std::vector<T> values_of(const std::string& path) {
  const NpyArray a = dmlref::read_npy(path);
  std::vector<T> out;
  const auto v = a.view<T>();
  dmlref::for_each_coordinate(v.layout(), [&](const dmlref::Coord& c) { out.push_back(v[c]); });
  return out;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("dmlref-check: --help lists the commands, --help-all and OPERATOR --help the flags") {
  TempDir dir;
  Run r = run_tool(dir, "--help");
  CHECK(r.status == 0);
  for (const char* word :
       {"join", "split", "scatter", "gather_nd1", "reverse_subsequences", "generate", "verify",
        "--version", "--help-all", "exit status", "0 written / matches, 1 does not match, 2 bad usage",
        "A call that exits 2 writes nothing", "--axis=1", "docs/cli.md"}) {
    CHECK_MESSAGE(contains(r.output, word), word);
  }
  r = run_tool(dir, "--help-all");
  CHECK(r.status == 0);
  for (const char* word :
       {"--axis", "--input", "--pieces", "--count", "--out-prefix", "--indices", "--updates",
        "--input-dims", "--indices-dims", "--batch-dims", "--lengths", "--out", "--actual",
        "--untouched", "--nan-equal", "--ulp", "--max-report", "--feature-level",
        "--clamp-indices", "--duplicates", "clamped into [0, n-1]", "counting from the end",
        "InputDimensionCount", "BatchDimensionCount", "SequenceLengthsTensor"}) {
    CHECK_MESSAGE(contains(r.output, word), word);
  }
  // One operator's help: its own flags and the common ones, not another operator's.
  r = run_tool(dir, "gather_nd1 --help");
  CHECK(r.status == 0);
  CHECK(contains(r.output, "DML_GATHER_ND1_OPERATOR_DESC"));
  CHECK(contains(r.output, "--batch-dims"));
  CHECK(contains(r.output, "--ulp"));
  CHECK_FALSE(contains(r.output, "--lengths"));
  CHECK_FALSE(contains(r.output, "--axis"));
}

TEST_CASE("dmlref-check: join (spec example 1) writes, matches, mismatches, rejects") {
  TempDir dir;
  const auto a = save<float>(dir, "a.npy", {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  const auto b = save<float>(dir, "b.npy", {1, 1, 2, 4}, {7, 8, 9, 10, 11, 12, 13, 14});
  const std::string inputs = " --input '" + a + "' --input '" + b + "'";
  Run r = run_tool(dir, "join --axis 3" + inputs + " --out '" + (dir / "golden.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(contains(r.output, "OutputTensor FLOAT32 {1,1,2,7}"));
  CHECK(values_of<float>(dir / "golden.npy") ==
        std::vector<float>{1, 2, 3, 7, 8, 9, 10, 4, 5, 6, 11, 12, 13, 14});

  // The device's output: right, then one element wrong at [0,0,1,5].
  r = run_tool(dir, "join --axis 3" + inputs + " --actual '" + (dir / "golden.npy") + "'");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(contains(r.output, "all 14 elements match (bit-exact)"));
  const auto bad = save<float>(dir, "bad.npy", {1, 1, 2, 7},
                               {1, 2, 3, 7, 8, 9, 10, 4, 5, 6, 11, 12, 99, 14});
  r = run_tool(dir, "join --axis 3" + inputs + " --actual '" + bad + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "1 of 14 elements differ"));
  CHECK(contains(r.output, "at [0,0,1,5]: expected 13 (0x41500000), actual 99 (0x42c60000)"));

  // Leading 1s may be dropped, and the order may be Fortran's.
  const auto squeezed = save<float>(dir, "squeezed.npy", {2, 7},
                                    {1, 2, 3, 7, 8, 9, 10, 4, 5, 6, 11, 12, 13, 14}, true);
  r = run_tool(dir, "join --axis 3" + inputs + " --actual '" + squeezed + "'");
  CHECK_MESSAGE(r.status == 0, r.output);

  // Invalid input: the validation message and exit 2.
  r = run_tool(dir, "join --axis 2" + inputs + " --out '" + (dir / "x.npy") + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "[J5]"));
  CHECK_FALSE(fs::exists(dir / "x.npy"));
  // An --actual of other sizes is a wrong result (exit 1) that names both shapes; --out is written.
  r = run_tool(dir, "join --axis 3" + inputs + " --actual '" + a + "' --out '" + (dir / "w.npy") + "'");
  CHECK(r.status == 1);
  CHECK_MESSAGE(contains(r.output, "the actual output has sizes {1,1,2,3} but the golden output "
                                   "has {1,1,2,7}"), r.output);
  CHECK(fs::exists(dir / "w.npy"));
}

TEST_CASE("dmlref-check: split (spec example 1) with --pieces, --count, --out-prefix") {
  TempDir dir;
  const auto x = save<std::int16_t>(dir, "x.npy", {1, 1, 6, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Run r = run_tool(dir, "split --axis 2 --input '" + x + "' --pieces 2,1,3 --out-prefix '" +
                            (dir / "p") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(values_of<std::int16_t>(dir / "p0.npy") == std::vector<std::int16_t>{1, 2, 3, 4});
  CHECK(values_of<std::int16_t>(dir / "p1.npy") == std::vector<std::int16_t>{5, 6});
  CHECK(values_of<std::int16_t>(dir / "p2.npy") == std::vector<std::int16_t>{7, 8, 9, 10, 11, 12});
  CHECK(dmlref::read_npy(dir / "p2.npy").sizes() == std::vector<std::uint32_t>{1, 1, 3, 2});

  r = run_tool(dir, "split --axis 3 --input '" + x + "' --count 2 --out-prefix '" + (dir / "q") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(values_of<std::int16_t>(dir / "q1.npy") == std::vector<std::int16_t>{2, 4, 6, 8, 10, 12});

  const std::string actuals = " --actual '" + (dir / "p0.npy") + "' --actual '" + (dir / "p1.npy") +
                              "' --actual '" + (dir / "p2.npy") + "'";
  r = run_tool(dir, "split --axis 2 --input '" + x + "' --pieces 2,1,3" + actuals);
  CHECK_MESSAGE(r.status == 0, r.output);
  save<std::int16_t>(dir, "p1.npy", {1, 1, 1, 2}, {5, -6});
  r = run_tool(dir, "split --axis 2 --input '" + x + "' --pieces 2,1,3" + actuals);
  CHECK(r.status == 1);
  CHECK(contains(r.output, "OutputTensors[1]"));
  CHECK(contains(r.output, "at [0,0,0,1]: expected 6, actual -6"));
  // Pieces that do not add up (S6 at inference) and too few --actual.
  r = run_tool(dir, "split --axis 2 --input '" + x + "' --pieces 2,2" + actuals);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "SPLIT"));
  r = run_tool(dir, "split --axis 2 --input '" + x + "' --pieces 2,1,3 --actual '" + (dir / "p0.npy") + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "split has 3 output(s) but 1 --actual were given"));
}

TEST_CASE("dmlref-check: scatter accepts any colliding update, rejects a wrong one") {
  TempDir dir;
  const auto input = save<std::int32_t>(dir, "in.npy", {5}, {0, 1, 2, 3, 4});
  const auto indices = save<std::uint32_t>(dir, "idx.npy", {4}, {3, 1, 3, 0});
  const auto updates = save<std::int32_t>(dir, "upd.npy", {4}, {5, 6, 7, 8});
  const std::string args = "scatter --axis 0 --input '" + input + "' --indices '" + indices +
                           "' --updates '" + updates + "'";
  Run r = run_tool(dir, args + " --out '" + (dir / "golden.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(values_of<std::int32_t>(dir / "golden.npy") == std::vector<std::int32_t>{8, 6, 2, 7, 4});
  // Element 3 is targeted by updates 5 and 7: a device may write either.
  const auto first_wins = save<std::int32_t>(dir, "a.npy", {5}, {8, 6, 2, 5, 4});
  r = run_tool(dir, args + " --actual '" + first_wins + "'");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(contains(r.output, "1 colliding output element"));
  const auto wrong = save<std::int32_t>(dir, "b.npy", {5}, {8, 6, 2, 6, 4});
  r = run_tool(dir, args + " --actual '" + wrong + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "OutputTensor[3]: expected one of the colliding updates"));
  // Duplicates rejected on request; an out-of-range index is SC8 unless clamped.
  r = run_tool(dir, args + " --duplicates reject --out '" + (dir / "x.npy") + "'");
  CHECK(r.status == 2);
  CHECK_MESSAGE(contains(r.output, "both target OutputTensor[3]"), r.output);
  CHECK(contains(r.output, "DuplicatePolicy::Reject forbids two updates for one output element"));
  CHECK_FALSE(fs::exists(dir / "x.npy"));
  const auto far = save<std::uint32_t>(dir, "far.npy", {4}, {3, 1, 9, 0});
  const std::string far_args = "scatter --axis 0 --input '" + input + "' --indices '" + far +
                               "' --updates '" + updates + "' --out '" + (dir / "y.npy") + "'";
  r = run_tool(dir, far_args);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "[SC8]"));
  r = run_tool(dir, far_args + " --clamp-indices");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(values_of<std::int32_t>(dir / "y.npy") == std::vector<std::int32_t>{8, 6, 2, 5, 7});
  // --ulp on integers changes nothing: the wrong result stays wrong, and it is a comparison now.
  r = run_tool(dir, args + " --ulp 1 --actual '" + wrong + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "the ULP tolerance applies to float types only"));
}

TEST_CASE("dmlref-check: scatter takes --ulp and --nan-equal, colliding updates included") {
  TempDir dir;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto input = save<float>(dir, "in.npy", {5}, {0, 1, 2, 3, 4});
  const auto indices = save<std::int64_t>(dir, "idx.npy", {4}, {3, 1, 3, 0});
  const auto updates = save<float>(dir, "upd.npy", {4}, {5, nan, 7, 8});
  const std::string args = "scatter --axis 0 --input '" + input + "' --indices '" + indices +
                           "' --updates '" + updates + "'";
  const float five_up = std::nextafter(5.0f, 10.0f), two_up = std::nextafter(2.0f, 10.0f);
  // Element 3 collides (5 or 7): one ULP from the first candidate; element 2 one ULP off; element
  // 1 a NaN of another payload.
  const float other_nan = -nan;
  const auto near = save<float>(dir, "near.npy", {5}, {8, other_nan, two_up, five_up, 4});
  Run r = run_tool(dir, args + " --actual '" + near + "'");
  CHECK(r.status == 1);
  r = run_tool(dir, args + " --ulp 1 --actual '" + near + "'");
  CHECK(r.status == 1);  // the NaN still differs
  CHECK(contains(r.output, "at [1]"));
  r = run_tool(dir, args + " --ulp 1 --nan-equal --actual '" + near + "'");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(contains(r.output, "all 5 elements match (within 1 ULP, -0 == +0, every NaN equal)"));
  CHECK(contains(r.output, "1 colliding output element accepts any one of its updates"));
  // Two ULP from 5 and far from 7: wrong, and the report lists the colliding candidates.
  const float five_up2 = std::nextafter(five_up, 10.0f);
  const auto far = save<float>(dir, "far.npy", {5}, {8, nan, 2, five_up2, 4});
  r = run_tool(dir, args + " --ulp=1 --nan-equal --actual='" + far + "'");
  CHECK(r.status == 1);
  CHECK_MESSAGE(contains(r.output, "1 of 5 elements differ"), r.output);
  CHECK(contains(r.output, "at [3]"));
  CHECK(contains(r.output, "colliding: OutputTensor[3]: IndicesTensor[0] -> 5 (0x40a00000), "
                           "IndicesTensor[2] -> 7 (0x40e00000)"));
  r = run_tool(dir, args + " --ulp 2 --nan-equal --actual '" + far + "'");
  CHECK_MESSAGE(r.status == 0, r.output);
}

TEST_CASE("dmlref-check: gather_nd1 (spec examples 1 and 2)") {
  TempDir dir;
  // Example 1 with numpy's natural ranks: input {2,2}, indices {2,1}.
  const auto input = save<float>(dir, "in.npy", {2, 2}, {0, 1, 2, 3});
  const auto indices = save<std::uint32_t>(dir, "idx.npy", {2, 1}, {1, 0});
  Run r = run_tool(dir, "gather_nd1 --input '" + input + "' --indices '" + indices + "' --out '" +
                            (dir / "o.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(values_of<float>(dir / "o.npy") == std::vector<float>{2, 3, 0, 1});
  // Example 2: r = 3, q = 3, b = 1 on 4-d tensors.
  const auto input2 = save<std::uint8_t>(dir, "in2.npy", {1, 3, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const auto indices2 = save<std::int64_t>(dir, "idx2.npy", {1, 3, 2, 2}, {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0});
  const std::string args2 = "gather_nd1 --input '" + input2 + "' --indices '" + indices2 +
                            "' --input-dims 3 --indices-dims 3 --batch-dims 1";
  r = run_tool(dir, args2 + " --out '" + (dir / "o2.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  // Written with numpy/ONNX's shape: (q - 1) + (r - b - m) = 2 dimensions, not DirectML's 4.
  CHECK(dmlref::read_npy(dir / "o2.npy").sizes() == std::vector<std::uint32_t>{3, 2});
  CHECK(values_of<std::uint8_t>(dir / "o2.npy") == std::vector<std::uint8_t>{0, 3, 7, 4, 9, 10});
  const auto off = save<std::uint8_t>(dir, "off.npy", {3, 2}, {0, 3, 7, 4, 9, 11});
  r = run_tool(dir, args2 + " --actual '" + off + "'");
  CHECK(r.status == 1);
  // Reported in the shape it is written with, (3, 2), not DirectML's {1,1,3,2}.
  CHECK_MESSAGE(contains(r.output, "OutputTensor ('" + off + "') UINT8 {3,2}: 1 of 6 elements differ"),
                r.output);
  CHECK(contains(r.output, "at [2,1]: expected 10, actual 11"));
  // DirectML's own sizes are accepted as well (leading 1s), and reported the same way.
  const auto padded_off = save<std::uint8_t>(dir, "poff.npy", {1, 1, 3, 2}, {0, 3, 7, 4, 9, 11});
  r = run_tool(dir, args2 + " --actual '" + padded_off + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "at [2,1]: expected 10, actual 11"));
  const auto wrong_shape = save<std::uint8_t>(dir, "ws.npy", {2, 3}, {0, 3, 7, 4, 9, 10});
  r = run_tool(dir, args2 + " --actual '" + wrong_shape + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "the actual output has sizes {2,3} but the golden output has {3,2}"));
  r = run_tool(dir, args2 + " --batch-dims 3 --out '" + (dir / "z.npy") + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "--batch-dims"));
  // Refused for being given twice, not for anything in its value.
  CHECK_MESSAGE(contains(r.output, "--batch-dims: At Most 1 required but received 2"), r.output);
  r = run_tool(dir, "gather_nd1 --input '" + input2 + "' --indices '" + indices2 +
                        "' --input-dims 3 --indices-dims 3 --batch-dims 3 --out '" + (dir / "z.npy") + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "[G5]"));
}

TEST_CASE("dmlref-check: reverse_subsequences (spec example 1)") {
  TempDir dir;
  const auto input = save<dmlref::float16>(dir, "in.npy", {1, 1, 3, 4}, [] {
    std::vector<dmlref::float16> v;
    for (int i = 1; i <= 12; ++i) v.emplace_back(static_cast<float>(i));
    return v;
  }());
  const auto lengths = save<std::uint32_t>(dir, "len.npy", {1, 1, 3, 1}, {2, 4, 3});
  const std::string args = "reverse_subsequences --axis 3 --input '" + input + "' --lengths '" + lengths + "'";
  Run r = run_tool(dir, args + " --out '" + (dir / "o.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  std::vector<float> got;
  for (dmlref::float16 h : values_of<dmlref::float16>(dir / "o.npy")) got.push_back(static_cast<float>(h));
  CHECK(got == std::vector<float>{2, 1, 3, 4, 8, 7, 6, 5, 11, 10, 9, 12});
  // One ULP off: a mismatch, unless --ulp 1. The report prints float16 bits.
  std::vector<dmlref::float16> near;
  for (float f : got) near.emplace_back(f);
  near[5] = dmlref::float16::from_bits(static_cast<std::uint16_t>(near[5].bits() + 1));
  const auto actual = save<dmlref::float16>(dir, "near.npy", {1, 1, 3, 4}, near);
  r = run_tool(dir, args + " --actual '" + actual + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "at [0,0,1,1]: expected 7 (0x4700), actual 7.0039062 (0x4701)"));
  r = run_tool(dir, args + " --ulp 1 --actual '" + actual + "'");
  CHECK_MESSAGE(r.status == 0, r.output);
  // Lengths of numpy's default int64 and without the axis dimension, (1, 1, 3): the same result.
  const auto numpy_lengths = save<std::int64_t>(dir, "nlen.npy", {1, 1, 3}, {2, 4, 3});
  r = run_tool(dir, "reverse_subsequences --axis=-1 --input '" + input + "' --lengths '" +
                        numpy_lengths + "' --out '" + (dir / "n.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(file_text(dir / "n.npy") == file_text(dir / "o.npy"));
  const auto small_lengths = save<std::int8_t>(dir, "blen.npy", {1, 1, 3, 1}, {2, 4, 3});
  r = run_tool(dir, args.substr(0, args.find(" --lengths")) + " --lengths '" + small_lengths +
                        "' --actual '" + (dir / "o.npy") + "'");
  CHECK_MESSAGE(r.status == 0, r.output);
  // A negative length is R4, named with its place; so is a float lengths tensor.
  const auto negative = save<std::int64_t>(dir, "neg.npy", {1, 1, 3}, {2, -4, 3});
  r = run_tool(dir, "reverse_subsequences --axis 3 --input '" + input + "' --lengths '" + negative +
                        "' --out '" + (dir / "x.npy") + "'");
  CHECK(r.status == 2);
  CHECK_MESSAGE(contains(r.output, "holds INT64 values and the one at [0,0,1] is -4"), r.output);
  CHECK(contains(r.output, "[R4]"));
  const auto float_lengths = save<float>(dir, "flen.npy", {1, 1, 3, 1}, {2, 4, 3});
  r = run_tool(dir, "reverse_subsequences --axis 3 --input '" + input + "' --lengths '" +
                        float_lengths + "' --out '" + (dir / "x.npy") + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "[R4]"));
  CHECK_FALSE(fs::exists(dir / "x.npy"));
  // Lengths of the input's rank must have 1 at the axis (R3); other ranks are R1.
  const auto other_rank = save<std::uint32_t>(dir, "r2.npy", {3}, {2, 4, 3});
  r = run_tool(dir, "reverse_subsequences --axis 3 --input '" + input + "' --lengths '" +
                        other_rank + "' --out '" + (dir / "x.npy") + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "[R1]"));
}

TEST_CASE("dmlref-check: a skipped dispatch is named; NaN payloads with --nan-equal") {
  TempDir dir;
  const auto a = save<double>(dir, "a.npy", {2}, {1.5, std::numeric_limits<double>::quiet_NaN()});
  const auto untouched = save<double>(dir, "u.npy", {2}, {-1, -1});
  const std::string args = "join --axis 0 --input '" + a + "'";
  Run r = run_tool(dir, args + " --actual '" + untouched + "' --untouched '" + untouched + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "was the dispatch skipped?"));
  const auto zeros = save<double>(dir, "z.npy", {2}, {0, 0});
  r = run_tool(dir, args + " --actual '" + zeros + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "all zeros"));
  const auto other_nan = save<double>(dir, "n.npy", {2}, {1.5, -std::numeric_limits<double>::quiet_NaN()});
  r = run_tool(dir, args + " --actual '" + other_nan + "'");
  CHECK(r.status == 1);
  r = run_tool(dir, args + " --nan-equal --actual '" + other_nan + "'");
  CHECK_MESSAGE(r.status == 0, r.output);
}

TEST_CASE("dmlref-check: bad usage and bad files are exit 2 with a message") {
  TempDir dir;
  const auto a = save<float>(dir, "a.npy", {2}, {1, 2});
  const std::string out = " --out '" + (dir / "o.npy") + "'";
  const auto expect2 = [&](const std::string& args, const std::string& message) {
    const Run r = run_tool(dir, args);
    CHECK_MESSAGE(r.status == 2, args, "\n", r.output);
    CHECK_MESSAGE(contains(r.output, message), args, "\n", r.output);
  };
  expect2("", "no operator given");
  expect2("concat --axis 0", "unknown command 'concat'");
  expect2("join --axis 0 --input '" + a + "' --frobnicate" + out, "unknown flag '--frobnicate'");
  expect2("join --axis 0 --input '" + a + "' --frobnicate=3" + out, "unknown flag '--frobnicate'");
  expect2("join --axis 0 --input '" + a + "' --pieces 1" + out,
          "--pieces is not a flag of join (it is one of split)");
  expect2("join --axis 0 --input '" + a + "' stray" + out, "unexpected argument 'stray'");
  expect2("join --input '" + a + "'" + out, "--axis is required");
  // The message says what an axis may be: negative ones count from the end.
  expect2("join --axis x --input '" + a + "'" + out,
          "--axis: x is not an integer; an axis counts from 0, or from the end when negative");
  expect2("join --axis=1.5 --input '" + a + "'" + out, "--axis: 1.5 is not an integer");
  expect2("join --axis 0 --input '" + a + "' --ulp -1" + out,
          "--ulp: -1 is not an integer in [0, 18446744073709551615]");
  expect2("split --axis 0 --input '" + a + "' --pieces 1,,1" + out,
          "--pieces: '1,,1' is not a comma-separated list of integers");
  expect2("split --axis 0 --input '" + a + "' --pieces 1,1 --count 2" + out, "excludes");
  expect2("split --axis 0 --input '" + a + "' --pieces 1,1 --count 2" + out, "--pieces excludes --count");
  expect2("scatter --axis 0 --input '" + a + "' --indices '" + a + "' --updates '" + a +
              "' --duplicates first" + out, "--duplicates");
  // The value is what is refused (every other flag of that call is in order).
  expect2("scatter --axis 0 --input '" + a + "' --indices '" + a + "' --updates '" + a +
              "' --duplicates first" + out, "--duplicates: first not in {last,reject}");
  expect2("join --axis 0 --input '" + a + "'", "nothing to do");
  expect2("join --axis 0 --input '" + (dir / "missing.npy") + "'" + out, "cannot open '");
  expect2("join --axis 0 --input '" + a + "' --feature-level 9_9" + out, "not a DirectML feature level");
  expect2("join --axis 0 --input '" + a + "' --feature-level 3_0" + out, "DML_FEATURE_LEVEL");
  expect2("join --axis 0 --input '" + a + "' --actual", "--actual: 1 required FILE missing");
  {
    std::ofstream junk(dir / "junk.npy", std::ios::binary);
    junk << "not numpy at all";
  }
  expect2("join --axis 0 --input '" + (dir / "junk.npy") + "'" + out, "bad magic");
  const auto ints = save<std::int32_t>(dir, "i.npy", {2}, {1, 2});
  expect2("join --axis 0 --input '" + a + "' --actual '" + ints + "'",
          "holds INT32 elements but the output is FLOAT32");
  CHECK(run_tool(dir, "join --axis 0 --input '" + a + "' --feature-level 4_1" + out).status == 0);
}

TEST_CASE("dmlref-check: --flag=value everywhere; narrow integer indices") {
  TempDir dir;
  const auto x = save<float>(dir, "x.npy", {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const auto rows = save<std::int8_t>(dir, "rows.npy", {2, 1}, {2, -3});
  Run r = run_tool(dir, "gather_nd1 --input='" + x + "' --indices='" + rows + "' --batch-dims=0 "
                        "--input-dims=2 --indices-dims=2 --max-report=3 --feature-level=4_1 "
                        "--out='" + (dir / "g.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(values_of<float>(dir / "g.npy") == std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3});
  const auto where = save<std::uint16_t>(dir, "w.npy", {1, 4}, {2, 0, 1, 2});
  const auto upd = save<float>(dir, "u.npy", {1, 4}, {-1, -2, -3, -4});
  r = run_tool(dir, "scatter --axis=0 --input='" + x + "' --indices='" + where + "' --updates='" +
                        upd + "' --duplicates=last --out='" + (dir / "s.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(values_of<float>(dir / "s.npy") ==
        std::vector<float>{0, -2, 2, 3, 4, 5, -3, 7, -1, 9, 10, -4});
  r = run_tool(dir, "split --axis=-1 --input='" + x + "' --pieces=1,3 --out-prefix='" + (dir / "p") +
                        "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(values_of<float>(dir / "p0.npy") == std::vector<float>{0, 4, 8});
  r = run_tool(dir, "join --axis=0 --input='" + x + "' --input='" + x + "' --actual='" + x +
                        "' --nan-equal --ulp=0");
  CHECK(r.status == 1);  // a wrong shape: {3,4} where {6,4} is due
  CHECK(contains(r.output, "the actual output has sizes {3,4} but the golden output has {6,4}"));
}

// ------------------------------------------------------------------------------------------------
// Nothing lost: outputs never replace what the call reads, and a failing call writes nothing.

namespace {

// Hidden files in a directory: where a temporary output left behind would show.
std::vector<std::string> hidden_files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.front() == '.') names.push_back(name);
  }
  return names;
}

}  // namespace

TEST_CASE("dmlref-check: --out naming a file the call reads is refused (exit 2), even via links") {
  TempDir dir;
  const auto a = save<float>(dir, "a.npy", {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  const auto b = save<float>(dir, "b.npy", {1, 1, 2, 4}, {7, 8, 9, 10, 11, 12, 13, 14});
  // A wrong device result: overwritten by the golden output it would then "match".
  const auto wrong = save<float>(dir, "device.npy", {2, 7}, std::vector<float>(14, 99.0f));
  const std::string before = file_text(wrong);
  fs::create_symlink(wrong, dir / "link.npy");
  fs::create_hard_link(wrong, dir / "hard.npy");
  const std::string join = "join --axis 3 --input '" + a + "' --input '" + b + "'";
  for (const std::string& out : {wrong, dir / "link.npy", dir / "hard.npy"}) {
    const Run r = run_tool(dir, join + " --out '" + out + "' --actual '" + wrong + "'");
    CHECK_MESSAGE(r.status == 2, r.output);
    CHECK_MESSAGE(contains(r.output, "--out '" + out + "' and --actual '" + wrong +
                                         "' are the same file"), r.output);
    CHECK(file_text(wrong) == before);
  }
  const std::string a_before = file_text(a);
  Run r = run_tool(dir, join + " --out '" + a + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "--out '" + a + "' and --input '" + a + "' are the same file"));
  r = run_tool(dir, join + " --out '" + (dir / "x.npy") + "' --actual '" + wrong +
                        "' --untouched '" + (dir / "link.npy") + "'");
  CHECK(r.status == 1);  // reading one file twice is fine
  const auto whole = save<float>(dir, "whole.npy", {4}, {1, 2, 3, 4});
  r = run_tool(dir, "split --axis 0 --count 2 --input '" + whole + "' --out '" + (dir / "p.npy") +
                        "' --out '" + (dir / "p.npy") + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "are the same file"));
  // --out-prefix: the first piece's name, piece0.npy, is the input itself.
  const auto piece0 = save<float>(dir, "piece0.npy", {4}, {1, 2, 3, 4});
  r = run_tool(dir, "split --axis 0 --count 2 --input '" + piece0 + "' --out-prefix '" +
                        (dir / "piece") + "'");
  CHECK(r.status == 2);
  CHECK_MESSAGE(contains(r.output, "--out-prefix '" + piece0 + "' and --input '" + piece0 +
                                       "' are the same file"), r.output);
  CHECK(values_of<float>(piece0) == std::vector<float>{1, 2, 3, 4});
  CHECK_FALSE(fs::exists(dir / "piece1.npy"));
  CHECK(file_text(a) == a_before);
  CHECK(values_of<float>(whole) == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("dmlref-check: a call that fails writes nothing; exit 0 and 1 write the output") {
  TempDir dir;
  const auto a = save<float>(dir, "a.npy", {2}, {1, 2});
  const auto existing = save<float>(dir, "K.npy", {1}, {42});
  const std::string before = file_text(existing);
  const std::string join = "join --axis 0 --input '" + a + "' --input '" + a + "'";
  const auto ints = save<std::int32_t>(dir, "ints.npy", {4}, {1, 2, 1, 2});

  // A missing --actual, an --actual of another type, a usage error after --out, an invalid
  // operator call.
  const std::vector<std::string> failing_tails = {" --actual '" + (dir / "missing.npy") + "'",
                                                  " --actual '" + ints + "'", " --max-report x",
                                                  " --feature-level 9_9"};
  for (const std::string& tail : failing_tails) {
    for (const std::string& out : {dir / "G.npy", existing}) {
      const Run r = run_tool(dir, join + " --out '" + out + "'" + tail);
      CHECK_MESSAGE(r.status == 2, tail, "\n", r.output);
      CHECK(!fs::exists(dir / "G.npy"));
      CHECK(file_text(existing) == before);
      CHECK(hidden_files_in(dir / "").empty());  // no temporary file left behind
    }
  }
  const auto rejected = save<std::int32_t>(dir, "i.npy", {2}, {1, 2});
  Run r = run_tool(dir, "join --axis 0 --input '" + a + "' --input '" + rejected + "' --out '" +
                            existing + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "[J3]"));
  CHECK(file_text(existing) == before);

  // Exit 1 (a mismatch) is a completed call: the golden output is written.
  const auto wrong = save<float>(dir, "wrong.npy", {4}, {1, 2, 1, 9});
  r = run_tool(dir, join + " --out '" + existing + "' --actual '" + wrong + "'");
  CHECK_MESSAGE(r.status == 1, r.output);
  CHECK(values_of<float>(existing) == std::vector<float>{1, 2, 1, 2});
  CHECK(contains(r.output, "wrote " + existing));
  // Writing through a symlink replaces the file it points to, keeping the link.
  fs::create_symlink(existing, dir / "via.npy");
  r = run_tool(dir, "join --axis 0 --input '" + a + "' --out '" + (dir / "via.npy") + "'");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(fs::is_symlink(dir / "via.npy"));
  CHECK(values_of<float>(existing) == std::vector<float>{1, 2});
  // A FIFO (like /dev/null or /dev/stdout) is written, not replaced by a file. Its read end opens
  // first without waiting; the image fits the pipe's buffer, so the tool never waits either.
  const std::string fifo = dir / "pipe.npy";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const int read_end = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(read_end >= 0);
  r = run_tool(dir, "join --axis 0 --input '" + a + "' --out '" + fifo + "'");
  std::string received(4096, '\0');
  const ::ssize_t got = ::read(read_end, received.data(), received.size());
  ::close(read_end);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(fs::is_fifo(fifo));
  received.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  const auto image = dmlref::read_npy(std::span(reinterpret_cast<const std::byte*>(received.data()),
                                                received.size()));
  CHECK(image.view<float>().at({1}) == 2.0f);
}

TEST_CASE("dmlref-check: negative --axis as numpy; /dev/zero; --version") {
  TempDir dir;
  const auto a = save<float>(dir, "a.npy", {2, 3}, {1, 2, 3, 4, 5, 6});
  const auto b = save<float>(dir, "b.npy", {2, 1}, {7, 8});
  const std::string inputs = " --input '" + a + "' --input '" + b + "'";
  Run r = run_tool(dir, "join --axis -1" + inputs + " --out '" + (dir / "o.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(values_of<float>(dir / "o.npy") == std::vector<float>{1, 2, 3, 7, 4, 5, 6, 8});
  r = run_tool(dir, "join --axis -2 --input '" + a + "' --input '" + a + "' --out '" + (dir / "o.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(dmlref::read_npy(dir / "o.npy").sizes() == std::vector<std::uint32_t>{4, 3});
  r = run_tool(dir, "join --axis -3" + inputs + " --out '" + (dir / "o.npy") + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "--axis -3 is outside [-2, 1] for the 2-d input"));
  r = run_tool(dir, "split --axis -1 --count 3 --input '" + a + "' --out-prefix '" + (dir / "p") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(values_of<float>(dir / "p2.npy") == std::vector<float>{3, 6});
  // Each piece keeps the input's rank, as numpy.split gives it: (2, 1), not (2,).
  CHECK(dmlref::read_npy(dir / "p2.npy").sizes() == std::vector<std::uint32_t>{2, 1});
  const auto lengths = save<std::uint32_t>(dir, "len.npy", {2, 1}, {3, 2});
  r = run_tool(dir, "reverse_subsequences --axis -1 --input '" + a + "' --lengths '" + lengths +
                        "' --out '" + (dir / "r.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(values_of<float>(dir / "r.npy") == std::vector<float>{3, 2, 1, 5, 4, 6});
  r = run_tool(dir, "join --axis -x" + inputs + " --out '" + (dir / "o.npy") + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "--axis: -x is not an integer"));

  r = run_tool(dir, "join --axis 0 --input /dev/zero --out '" + (dir / "z.npy") + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "npy: '/dev/zero': bad magic"));
  CHECK(!fs::exists(dir / "z.npy"));

  r = run_tool(dir, "--version");
  CHECK(r.status == 0);
  CHECK(r.output == std::string("dmlref-check ") + DMLREF_VERSION_STRING + "\n");
}

TEST_CASE("dmlref-check: gather_nd1 --out has numpy's shape; --actual may carry DirectML's 1s") {
  TempDir dir;
  // numpy: x[tuple(idx.T)] for x of shape (3, 4) and idx [[0, 1], [2, 3]] is [x[0,1], x[2,3]],
  // shape (2,); DirectML's output is {1, 2}.
  const auto x = save<float>(dir, "x.npy", {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const auto idx = save<std::int32_t>(dir, "idx.npy", {2, 2}, {0, 1, 2, 3});
  const std::string args = "gather_nd1 --input '" + x + "' --indices '" + idx + "'";
  Run r = run_tool(dir, args + " --out '" + (dir / "g.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(contains(r.output, "OutputTensor FLOAT32 {2}"));
  CHECK(dmlref::read_npy(dir / "g.npy").sizes() == std::vector<std::uint32_t>{2});
  CHECK(values_of<float>(dir / "g.npy") == std::vector<float>{1, 11});
  r = run_tool(dir, args + " --actual '" + (dir / "g.npy") + "'");
  CHECK_MESSAGE(r.status == 0, r.output);
  const auto padded = save<float>(dir, "padded.npy", {1, 2}, {1, 11});
  r = run_tool(dir, args + " --actual '" + padded + "'");
  CHECK_MESSAGE(r.status == 0, r.output);
  // Rows of a 3-d input by 2-d indices of different rank: (3, 1) indices into (2, 3, 4) give
  // numpy's (3, 3, 4).
  std::vector<std::uint8_t> cube_values(24);
  for (std::uint8_t i = 0; i < 24; ++i) cube_values[i] = i;  // element (i, j, k) holds 12i + 4j + k
  const auto cube = save<std::uint8_t>(dir, "cube.npy", {2, 3, 4}, cube_values);
  const auto rows = save<std::int64_t>(dir, "rows.npy", {3, 1}, {1, 0, 1});
  r = run_tool(dir, "gather_nd1 --input '" + cube + "' --indices '" + rows + "' --out '" +
                        (dir / "c.npy") + "'");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(dmlref::read_npy(dir / "c.npy").sizes() == std::vector<std::uint32_t>{3, 3, 4});
  std::vector<std::uint8_t> rows_1_0_1;  // cube[1], cube[0], cube[1]
  for (std::uint8_t first : {12, 0, 12}) {
    for (std::uint8_t i = 0; i < 12; ++i) rows_1_0_1.push_back(static_cast<std::uint8_t>(first + i));
  }
  CHECK(values_of<std::uint8_t>(dir / "c.npy") == rows_1_0_1);
  r = run_tool(dir, args + " --batch-dims -1 --out '" + (dir / "n.npy") + "'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "--batch-dims: -1 is not an integer in [0, 4294967295]"));
}

}  // namespace test_dmlref_check

#endif  // DMLREF_CHECK_EXE
