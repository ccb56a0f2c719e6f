// dmlref-check generate / verify end to end: a small suite is generated, run on a simulated
// correct device (each model.json executed with the runtime layer, results written where
// DxDispatch writes them), then verified; then one flipped bit, one accepted invalid case and one
// missing case must each fail verify with the case named. The suite's models are parsed back and
// compared with their cases, and every expected output is re-derived by the reference loops.
// The tool's path comes from tools/CMakeLists.txt (DMLREF_CHECK_EXE).
#include "test_support.hpp"

#ifdef DMLREF_CHECK_EXE

#include "../tools/suite.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

namespace test_suite {  // this file's own names (tests/CMakeLists.txt: unity groups)

namespace {

namespace fs = std::filesystem;
using dmlref_suite::Json;

struct Run {
  int status = -1;
  std::string output;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs dmlref-check with `args` (already quoted) in `dir`.
Run run_tool(const fs::path& dir, const std::string& args) {
  const fs::path log = dir / "log.txt";
  const std::string command = "cd '" + dir.string() + "' && '" + std::string(DMLREF_CHECK_EXE) + "' " + args +
                              " > '" + log.string() + "' 2>&1";
  const int raw = std::system(command.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.output = dmlref_suite::read_text(log);
  return r;
}

std::vector<std::string> case_paths(const fs::path& suite) {
  const Json manifest = dmlref_suite::read_json(suite / "suite.json");
  std::vector<std::string> out;
  for (const Json& j : manifest.at("cases").items()) out.push_back(j.str());
  return out;
}

// A correct device: each model executed by the golden model's runtime layer, its writeFiles
// written under results/<op>/<case>, the exit code beside them (non-zero when it rejects).
void simulate_device(const fs::path& suite, const fs::path& results) {
  for (const std::string& path : case_paths(suite)) {
    const fs::path out = results / path;
    fs::create_directories(out);
    int code = 0;
    try {
      dmlref_suite::Model m = dmlref_suite::load_model(suite / path / "model.json");
      dmlref_suite::run_model(m, dmlref_suite::Engine::Fast);
      dmlref_suite::write_results(m, out);
    } catch (const dmlref::Error&) {
      code = 1;
    }
    dmlref_suite::write_text(out / "exit_code", std::to_string(code) + "\n");
  }
}

// One suite (all operators, large cases left out) and its simulated results, shared by the tests.
struct Fixture {
  fs::path root, suite, results;
  Run generated;
  Fixture() {
    root = fs::temp_directory_path() / ("dmlref_suite_" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    suite = root / "suite";
    results = root / "results";
    generated = run_tool(root, "generate --out suite --seed 7 --max-bytes 16000000");
    if (generated.status == 0) simulate_device(suite, results);
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  Run verify(const std::string& extra = "") const {
    return run_tool(root, "verify suite --results results" + extra);
  }
};

const Fixture& fixture() {
  static const Fixture f;
  REQUIRE_MESSAGE(f.generated.status == 0, f.generated.output);
  return f;
}

Json case_of(const fs::path& suite, const std::string& path) {
  return dmlref_suite::read_json(suite / path / "case.json");
}

// The first case of `op` for which `pick` holds.
template <class F>
std::string find_case(const fs::path& suite, const std::string& op, F pick) {
  for (const std::string& path : case_paths(suite)) {
    if (path.rfind(op + "/", 0) == 0 && pick(case_of(suite, path), path)) return path;
  }
  FAIL("no such case of " << op);
  return "";
}

// Restores a file or directory when the test case ends.
class Restore {
 public:
  explicit Restore(fs::path path) : path_(std::move(path)), saved_(path_.string() + ".saved") {
    fs::remove_all(saved_);
    fs::copy(path_, saved_, fs::copy_options::recursive);
  }
  ~Restore() {
    std::error_code ec;
    fs::remove_all(path_, ec);
    fs::rename(saved_, path_, ec);
  }
  Restore(const Restore&) = delete;
  Restore& operator=(const Restore&) = delete;

 private:
  fs::path path_, saved_;
};

std::size_t npy_data_offset(const std::string& bytes) {
  return 10 + (static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8));
}

void flip_bit(const fs::path& file, std::size_t data_byte) {
  std::string bytes = dmlref_suite::read_text(file);
  bytes[npy_data_offset(bytes) + data_byte] ^= 0x10;
  dmlref_suite::write_text(file, bytes);
}

}  // namespace

TEST_CASE("suite: generate covers every operator's types, ranks, layouts, options and rules") {
  const Fixture& f = fixture();
  const std::map<std::string, std::vector<std::string>> operator_rules = {
      {"join", {"J1", "J2", "J3", "J4", "J5", "J6"}},
      {"split", {"S1", "S2", "S3", "S4", "S5", "S6"}},
      {"scatter", {"SC1", "SC2", "SC3", "SC4", "SC5", "SC6", "SC7"}},
      {"gather_nd1", {"G1", "G2", "G3", "G4", "G5", "G6", "G7", "G8", "G9"}},
      {"reverse_subsequences", {"R1", "R2", "R3", "R4", "R5"}},
  };
  for (const auto& entry : operator_rules) {
    const std::string& op = entry.first;  // not a structured binding: clang 14 cannot capture one
    const std::vector<std::string>& rules = entry.second;
    CAPTURE(op);
    std::size_t valid = 0;
    std::set<std::string> types, broken, ranks, layouts;
    bool padding_checked = false;
    for (const std::string& path : case_paths(f.suite)) {
      if (path.rfind(op + "/", 0) != 0) continue;
      const Json c = case_of(f.suite, path);
      const Json model = dmlref_suite::read_json(f.suite / path / "model.json");
      const Json& desc = model.at("dispatchables").at("op").at("desc");
      CHECK(model.at("dispatchables").at("op").at("type").str() == dmlref_suite::operator_type(op));
      if (!c.at("valid").boolean()) {
        broken.insert(c.at("rule").str());
        continue;
      }
      ++valid;
      for (const auto& [field, value] : desc.members()) {
        for (const Json& t : value.is_array() ? value.items() : std::vector<Json>{value}) {
          if (!t.is_object()) continue;
          types.insert(t.at("DataType").str());
          ranks.insert(std::to_string(t.at("Sizes").items().size()));
          if (const Json* s = t.find("Strides")) {
            const auto strides = s->u32_list();
            const bool broadcast = std::find(strides.begin(), strides.end(), 0u) != strides.end();
            layouts.insert(field.find("Output") != std::string::npos ? "strided output"
                           : broadcast                             ? "broadcast input"
                                                                   : "strided input");
          }
        }
      }
      // The sentinel in an expected file marks padding a correct device leaves alone.
      for (const Json& out : c.at("outputs").items()) {
        const auto e = dmlref_suite::read_result(f.suite / path / out.at("expected").str(), ~std::size_t{0});
        const std::size_t esize = dmlref::element_size(e.type);
        const std::uint64_t sentinel = dmlref_suite::sentinel_bits(e.type);
        for (std::size_t i = 0; i < e.data.size() / esize; ++i) {
          padding_checked = padding_checked || dmlref_suite::element_at(e.data.data(), esize, i) == sentinel;
        }
      }
    }
    CHECK(valid >= 150);
    CHECK(padding_checked);
    CHECK(layouts == std::set<std::string>{"broadcast input", "strided input", "strided output"});
    for (dmlref::DataType t : dmlref::kAllDataTypes) {
      CHECK_MESSAGE(types.count(dmlref_suite::type_string(t)) == 1, dmlref::data_type_name(t));
    }
    for (int r = 1; r <= 8; ++r) CHECK_MESSAGE(ranks.count(std::to_string(r)) == 1, r);
    for (const std::string& rule : rules) CHECK_MESSAGE(broken.count(rule) == 1, rule);
    for (const char* rule : {"T1", "T2", "T3", "T4", "T8", "T9", "T10", "T11", "T12", "T13"}) {
      CHECK_MESSAGE(broken.count(rule) == 1, rule);
    }
    // DirectML validates descriptions, never tensor values: an index out of range is no error a
    // device reports, so those rules stay in the library's own tests only.
    CHECK(broken.count("SC8") == 0);
    CHECK(broken.count("G10") == 0);
  }
  // Operator options: SCATTER collisions, REVERSE_SUBSEQUENCES lengths 0 and full, every
  // GATHER_ND1 batch count up to 3.
  CHECK_NOTHROW(find_case(f.suite, "scatter", [](const Json& c, const std::string&) {
    return c.at("valid").boolean() && c.at("outputs").items().at(0).find("collisions") != nullptr;
  }));
  for (const char* mode : {"_zero_", "_full_", "_longer-than-axis_"}) {
    CHECK_NOTHROW(find_case(f.suite, "reverse_subsequences",
                            [&](const Json&, const std::string& path) { return contains(path, mode); }));
  }
  for (const char* b : {"b0m", "b1m", "b2m", "b3m"}) {
    CHECK_NOTHROW(find_case(f.suite, "gather_nd1", [&](const Json&, const std::string& path) { return contains(path, b); }));
  }
}

TEST_CASE("suite: generate is deterministic for a seed and refuses to overwrite") {
  const fs::path root = fs::temp_directory_path() / ("dmlref_suite_gen_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string small = " --ops join,reverse_subsequences --max-bytes 4000000";
  REQUIRE(run_tool(root, "generate --out a --seed 3" + small).status == 0);
  REQUIRE(run_tool(root, "generate --out b --seed 3" + small).status == 0);
  REQUIRE(run_tool(root, "generate --out c --seed 4" + small).status == 0);
  std::size_t files = 0, differ_c = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root / "a")) {
    if (!entry.is_regular_file()) continue;
    const fs::path rel = fs::relative(entry.path(), root / "a");
    ++files;
    CHECK_MESSAGE(dmlref_suite::read_text(entry.path()) == dmlref_suite::read_text(root / "b" / rel), rel.string());
    if (!fs::exists(root / "c" / rel) || dmlref_suite::read_text(entry.path()) != dmlref_suite::read_text(root / "c" / rel)) {
      ++differ_c;
    }
  }
  CHECK(files > 300);
  CHECK(differ_c > files / 2);

  // A non-empty directory is kept as it is; --overwrite replaces only a suite.
  fs::create_directories(root / "mine");
  dmlref_suite::write_text(root / "mine" / "keep.txt", "x");
  Run r = run_tool(root, "generate --out mine" + small);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "is not empty"));
  r = run_tool(root, "generate --out mine --overwrite" + small);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "no suite.json"));
  CHECK(std::distance(fs::directory_iterator(root / "mine"), fs::directory_iterator()) == 1);
  CHECK(run_tool(root, "generate --out a" + small).status == 2);
  CHECK(run_tool(root, "generate --out a --overwrite --seed 4" + small).status == 0);
  CHECK(dmlref_suite::read_text(root / "a" / "suite.json") == dmlref_suite::read_text(root / "c" / "suite.json"));
  // A call that fails writes nothing: no suite, no temporary directory left behind.
  r = run_tool(root, "generate --out tiny --max-bytes 1000");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "too small"));
  CHECK_FALSE(fs::exists(root / "tiny"));
  for (const auto& entry : fs::directory_iterator(root)) CHECK_FALSE(contains(entry.path().filename().string(), ".tmp-"));
  CHECK(run_tool(root, "generate --out x --ops nope").status == 2);
  CHECK(run_tool(root, "generate --out x --ops gather_nd1 --feature-level 2_1").status == 2);
  fs::remove_all(root);
}

TEST_CASE("suite: a lower feature level restricts every case to its table") {
  const fs::path root = fs::temp_directory_path() / ("dmlref_suite_fl_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const Run r = run_tool(root, "generate --out s --feature-level 3_0 --max-bytes 12000000");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(contains(r.output, "skipping")  == false);  // all five operators exist at 3_0
  for (const std::string& path : case_paths(root / "s")) {
    const Json c = case_of(root / "s", path);
    CHECK(c.at("feature_level").str() == "3_0");
    if (!c.at("valid").boolean()) continue;
    // The golden model validates the case at 3_0: a tensor outside the table throws.
    dmlref_suite::Model m = dmlref_suite::load_model(root / "s" / path / "model.json");
    CHECK_NOTHROW(dmlref_suite::run_model(m, dmlref_suite::Engine::Fast, dmlref::FeatureLevel::k3_0));
    CHECK_FALSE(contains(dmlref_suite::read_text(root / "s" / path / "model.json"), "FLOAT64"));
  }
  fs::remove_all(root);
}

TEST_CASE("suite: a simulated correct device passes verify") {
  const Fixture& f = fixture();
  const std::size_t cases = case_paths(f.suite).size();
  const Run r = f.verify(" --junit junit.xml");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(contains(r.output, "all " + std::to_string(cases) + " cases passed"));
  CHECK(contains(r.output, "scatter: "));
  const std::string xml = dmlref_suite::read_text(f.root / "junit.xml");
  CHECK(contains(xml, "<testsuites name=\"dmlref conformance\" tests=\"" + std::to_string(cases) + "\" failures=\"0\">"));
  CHECK(contains(xml, "<testsuite name=\"gather_nd1\""));
}

TEST_CASE("suite: one flipped bit fails verify and names the case and the element") {
  const Fixture& f = fixture();
  const std::string path = find_case(f.suite, "split", [](const Json& c, const std::string&) { return c.at("valid").boolean(); });
  const Restore restore(f.results / path);
  flip_bit(f.results / path / "output_0.npy", 0);  // element 0: the tensor's first element
  const Run r = f.verify(" --junit junit.xml");
  CHECK(r.status == 1);
  CHECK_MESSAGE(contains(r.output, "FAIL " + path + ": OutputTensors[0]: 1 of "), r.output);
  CHECK(contains(r.output, "OutputTensors[0][0"));
  CHECK(contains(r.output, "(buffer element 0): expected "));
  CHECK(contains(dmlref_suite::read_text(f.root / "junit.xml"), "failures=\"1\""));
}

TEST_CASE("suite: a write into an output's padding fails verify") {
  const Fixture& f = fixture();
  // A case whose expected output holds the sentinel: that element is padding.
  std::size_t padding_element = 0;
  const std::string path = find_case(f.suite, "join", [&](const Json& c, const std::string& p) {
    if (!c.at("valid").boolean()) return false;
    const auto e = dmlref_suite::read_result(f.suite / p / "expected_0.npy", ~std::size_t{0});
    const std::size_t esize = dmlref::element_size(e.type);
    for (std::size_t i = 0; i < e.data.size() / esize; ++i) {
      if (dmlref_suite::element_at(e.data.data(), esize, i) == dmlref_suite::sentinel_bits(e.type)) {
        padding_element = i * esize;
        return true;
      }
    }
    return false;
  });
  const Restore restore(f.results / path);
  flip_bit(f.results / path / "output_0.npy", padding_element);
  const Run r = f.verify();
  CHECK(r.status == 1);
  CHECK_MESSAGE(contains(r.output, "FAIL " + path), r.output);
  CHECK(contains(r.output, "(padding OutputTensor does not address): expected"));
  CHECK(contains(r.output, "(the sentinel)"));
}

TEST_CASE("suite: an accepted invalid case fails verify") {
  const Fixture& f = fixture();
  const std::string path = find_case(f.suite, "scatter", [](const Json& c, const std::string&) {
    return !c.at("valid").boolean() && c.at("rule").str() == "SC1";
  });
  const Restore restore(f.results / path);
  dmlref_suite::write_text(f.results / path / "exit_code", "0\n");
  const Run r = f.verify();
  CHECK(r.status == 1);
  CHECK_MESSAGE(contains(r.output, "FAIL " + path + ": accepted an invalid case (exit code 0); it breaks SC1"), r.output);
}

TEST_CASE("suite: a missing case is not run and fails verify") {
  const Fixture& f = fixture();
  const std::string path = find_case(f.suite, "reverse_subsequences", [](const Json&, const std::string&) { return true; });
  const Restore restore(f.results / path);
  fs::remove_all(f.results / path);
  const Run r = f.verify(" --junit junit.xml");
  CHECK(r.status == 1);
  CHECK_MESSAGE(contains(r.output, "NOT RUN " + path), r.output);
  CHECK(contains(r.output, "1 not run"));
  CHECK(contains(dmlref_suite::read_text(f.root / "junit.xml"), "type=\"not-run\""));
}

TEST_CASE("suite: verify's usage errors exit 2") {
  const Fixture& f = fixture();
  CHECK(run_tool(f.root, "verify suite").status == 2);
  CHECK(run_tool(f.root, "verify results --results results").status == 2);  // no suite.json
  CHECK(run_tool(f.root, "verify suite --results nowhere").status == 2);
  CHECK(run_tool(f.root, "verify suite --results results --frobnicate 1").status == 2);
}

TEST_CASE("suite: every generated model parsed back equals its case") {
  const Fixture& f = fixture();
  for (const std::string& path : case_paths(f.suite)) {
    CAPTURE(path);
    const Json c = case_of(f.suite, path);
    const dmlref_suite::Model m = dmlref_suite::load_model(f.suite / path / "model.json");
    CHECK(m.op_type == dmlref_suite::operator_type(c.at("op").str()));
    CHECK(path.rfind(c.at("op").str() + "/", 0) == 0);
    CHECK(c.at("feature_level").str() == "5_0");
    const auto& outputs = c.at("outputs").items();
    if (!c.at("valid").boolean()) {
      CHECK(c.at("rule").is_string());
      CHECK(outputs.empty());
      continue;
    }
    CHECK(c.find("rule") == nullptr);
    REQUIRE(outputs.size() == m.writes.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const dmlref_suite::WriteFileCommand& w = m.writes[i];
      CHECK(w.target == outputs[i].at("result").str());
      // The writeFile's resource is the one bound to the output tensor the case names.
      const std::string tensor = outputs[i].at("tensor").str();
      const auto bracket = tensor.find('[');
      const std::string field = tensor.substr(0, bracket);
      const std::size_t index = bracket == std::string::npos ? 0 : std::stoul(tensor.substr(bracket + 1));
      CHECK(m.bindings.at(field).at(index) == w.resource);
      // The expected file is what writeFile of that buffer gives: its type, its dimensions, all of it.
      const dmlref_suite::ModelBuffer& b = m.resources.at(w.resource);
      const auto e = dmlref_suite::read_result(f.suite / path / outputs[i].at("expected").str(), ~std::size_t{0});
      CHECK(e.type == b.type);
      CHECK(e.shape == w.dimensions);
      CHECK(e.data.size() == b.bytes.size());
    }
  }
}

TEST_CASE("suite: every expected output is re-derived by the reference loops") {
  const Fixture& f = fixture();
  std::size_t checked = 0;
  for (const std::string& path : case_paths(f.suite)) {
    CAPTURE(path);
    const Json c = case_of(f.suite, path);
    dmlref_suite::Model m = dmlref_suite::load_model(f.suite / path / "model.json");
    if (!c.at("valid").boolean()) {
      try {
        dmlref_suite::run_model(m, dmlref_suite::Engine::Reference);
        FAIL("the reference accepts an invalid case");
      } catch (const dmlref::Error& e) {
        CHECK(dmlref::error_code_name(e.code()) == c.at("rule").str());
      }
      continue;
    }
    dmlref_suite::run_model(m, dmlref_suite::Engine::Reference);
    for (std::size_t i = 0; i < m.writes.size(); ++i) {
      const dmlref_suite::ModelBuffer& b = m.resources.at(m.writes[i].resource);
      const auto image = dmlref_suite::writefile_image(b.type, m.writes[i].dimensions, b.bytes);
      const std::string expected = dmlref_suite::read_text(f.suite / path / ("expected_" + std::to_string(i) + ".npy"));
      CHECK(std::string(reinterpret_cast<const char*>(image.data()), image.size()) == expected);
      ++checked;
    }
  }
  CHECK(checked > 750);
}

}  // namespace test_suite

#endif  // DMLREF_CHECK_EXE
