// dmlref-check generate / verify end to end: a small suite is generated, run on a simulated
// correct device (each model.json executed with the runtime layer, results written where
// DxDispatch writes them), then verified; then one flipped bit, one accepted invalid case and one
// missing case must each fail verify with the case named. The suite's models are parsed back and
// compared with their cases, and every expected output is re-derived by the reference loops.
// The tool's path comes from tools/CMakeLists.txt (DMLREF_CHECK_EXE).
#include "test_support.hpp"

#ifdef DMLREF_CHECK_EXE

#include "../tools/suite.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
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
    std::string log = "Dispatch 'op': 1 iterations\n";
    try {
      dmlref_suite::Model m = dmlref_suite::load_model(suite / path / "model.json");
      dmlref_suite::run_model(m, dmlref_suite::Engine::Fast);
      dmlref_suite::write_results(m, out);
    } catch (const dmlref::Error&) {
      // DxDispatch's message and exit code for the stage DirectML refuses the case at.
      const bool bind = dmlref_suite::read_json(suite / path / "case.json").at("stage").str() == "bind";
      code = bind ? 5 : 62;
      log = bind ? "ERROR while binding resources\n" : "ERROR creating dispatchable 'op'\n";
    }
    dmlref_suite::write_text(out / "log.txt", log);
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
        const auto e = dmlref::read_npy(f.suite / path / out.at("expected").str());
        const std::size_t esize = dmlref::element_size(e.data_type());
        const std::uint64_t sentinel = dmlref_suite::sentinel_bits(e.data_type());
        for (std::size_t i = 0; i < e.bytes().size() / esize; ++i) {
          padding_checked = padding_checked || dmlref_suite::element_at(e.bytes().data(), esize, i) == sentinel;
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
  CHECK(contains(r.output, "is not an intact suite"));
  CHECK(std::distance(fs::directory_iterator(root / "mine"), fs::directory_iterator()) == 1);
  CHECK(run_tool(root, "generate --out a" + small).status == 2);
  CHECK(contains(run_tool(root, "generate --out a" + small).output, "is not empty; give --overwrite"));
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
  // Each for its own reason, and neither writes x.
  r = run_tool(root, "generate --out x --ops nope");
  CHECK_MESSAGE(contains(r.output, "--ops: unknown operator 'nope'"), r.output);
  r = run_tool(root, "generate --out x --ops gather_nd1 --feature-level 2_1");
  CHECK_MESSAGE(contains(r.output, "gather_nd1 needs DML_FEATURE_LEVEL_3_0; the target is DML_FEATURE_LEVEL_2_1"),
                r.output);
  // --feature-level's spellings, as the operator commands take them (one parser).
  for (const std::string level : {"2.1", "DML_FEATURE_LEVEL_2_1"}) {
    r = run_tool(root, "generate --out x --ops gather_nd1 --feature-level " + level);
    CHECK(r.status == 2);
    CHECK_MESSAGE(contains(r.output, "the target is DML_FEATURE_LEVEL_2_1"), r.output);
  }
  r = run_tool(root, "generate --out x --feature-level 9_9");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "--feature-level 9_9 is not a DirectML feature level"));
  CHECK_FALSE(fs::exists(root / "x"));
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
  std::size_t undocumented = 0;  // reported apart: T10, T11, T12 per operator and G7
  for (const std::string& path : case_paths(f.suite)) undocumented += case_of(f.suite, path).find("undocumented") ? 1 : 0;
  CHECK(undocumented == 5 * 3 + 1);
  const Run r = f.verify(" --junit junit.xml");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(contains(r.output, "all " + std::to_string(cases - undocumented) + " cases passed"));
  CHECK(contains(r.output, "undocumented (DirectML does not document its behaviour; not counted): " +
                               std::to_string(undocumented) + " cases, " + std::to_string(undocumented) +
                               " refused at the stage assumed"));
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
    const auto e = dmlref::read_npy(f.suite / p / "expected_0.npy");
    const std::size_t esize = dmlref::element_size(e.data_type());
    for (std::size_t i = 0; i < e.bytes().size() / esize; ++i) {
      if (dmlref_suite::element_at(e.bytes().data(), esize, i) == dmlref_suite::sentinel_bits(e.data_type())) {
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
  // Each for its own reason (any of them alone would exit 2 for all four).
  CHECK(contains(run_tool(f.root, "verify suite").output, "--results is required"));
  CHECK(contains(run_tool(f.root, "verify results --results results").output, "'results' is not a suite (no suite.json)"));
  CHECK(contains(run_tool(f.root, "verify suite --results nowhere").output,
                 "the results directory 'nowhere' does not exist"));
  const Run unknown = run_tool(f.root, "verify suite --results results --frobnicate 1");
  CHECK_MESSAGE(contains(unknown.output, "--frobnicate"), unknown.output);
  CHECK(contains(unknown.output, "dmlref-check verify --help lists the flags"));
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
      // (read_npy refuses data beyond what the header describes: the dimensions cover the buffer.)
      const auto e = dmlref::read_npy(f.suite / path / outputs[i].at("expected").str());
      CHECK(e.data_type() == b.type);
      CHECK(e.sizes() == w.dimensions);
      CHECK(e.bytes().size() == b.bytes.size());
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

// ------------------------------------------------------------------------------------------------
// The suite as a careless user and an attacker would use it, through the
// runner, a fake DxDispatch (tests/suite_fake_device.sh) and verify.

namespace {

Run run_shell(const fs::path& dir, const std::string& command) {
  const fs::path log = fs::temp_directory_path() / ("dmlref_shell_" + std::to_string(::getpid()) + ".txt");
  const std::string line = "cd '" + dir.string() + "' && { " + command + " ; } > '" + log.string() + "' 2>&1";
  const int raw = std::system(line.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.output = dmlref_suite::read_text(log);
  return r;
}

// dmlref-check under a 60-second limit: a hang fails the test instead of stalling it.
Run run_tool_bounded(const fs::path& dir, const std::string& args) {
  return run_shell(dir, "timeout 60 '" + std::string(DMLREF_CHECK_EXE) + "' " + args);
}

std::string sha256_of(const fs::path& file) {
  const Run r = run_shell(file.parent_path(), "sha256sum '" + file.string() + "'");
  REQUIRE(r.status == 0);
  return r.output.substr(0, 64);
}

// Rewrites suite.json: its manifest entry for `rel` gets the file's current hash (an attacker who
// rewrites the manifest too), optionally renaming entries whose path starts with `from` to `to`.
void rewrite_manifest(const fs::path& suite, const std::string& rel, const std::string& from = "",
                      const std::string& to = "") {
  Json j = dmlref_suite::read_json(suite / "suite.json");
  Json files = Json::object();
  for (const auto& [path, hash] : j.at("manifest").at("files").members()) {
    std::string p = path;
    if (!from.empty() && p.rfind(from, 0) == 0) p = to + p.substr(from.size());
    files.set(p, p == rel ? Json(sha256_of(suite / p)) : hash);
  }
  Json manifest = j.at("manifest");
  manifest.set("files", files);
  j.set("manifest", manifest);
  if (!from.empty()) {
    Json cases = Json::array();
    for (const Json& c : j.at("cases").items()) cases.push(c.str() == from.substr(0, from.size() - 1) ? Json(to.substr(0, to.size() - 1)) : c);
    j.set("cases", cases);
  }
  dmlref_suite::write_text(suite / "suite.json", j.dump());
}

// Every file under `dir` with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = dmlref_suite::read_text(e.path());
  }
  return out;
}

// Valid UTF-8 with no control character but newline: what a strict XML parser and a terminal take.
bool clean_utf8(const std::string& s) {
  return dmlref_suite::display_text(s) == s || [&] {
    // display_text doubles backslashes and escapes newlines: compare line by line without them.
    std::string t;
    for (char c : s) t += (c == '\n' || c == '\\') ? ' ' : c;
    return dmlref_suite::display_text(t) == t;
  }();
}

// A small suite (JOIN only) run through run_suite.sh with the fake device.
struct RunnerFixture {
  fs::path root, suite, results, device;
  Run generated;
  RunnerFixture() {
    root = fs::temp_directory_path() / ("dmlref_runner_" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    suite = root / "suite";
    results = root / "results";
    device = root / "dxdispatch";
    const fs::path script = fs::path(__FILE__).parent_path() / "suite_fake_device.sh";
    dmlref_suite::write_text(device, "#!/bin/sh\nexec bash '" + script.string() + "' \"$@\"\n");
    fs::permissions(device, fs::perms::owner_all, fs::perm_options::add);
    generated = run_tool(root, "generate --out suite --ops join --seed 11 --max-bytes 2000000");
  }
  ~RunnerFixture() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  // run_suite.sh DXDISPATCH RESULTS ARGS, with FAKE_DX_MODE=mode.
  Run run(const std::string& results_arg, const std::string& args = "", const std::string& mode = "correct") const {
    return run_shell(root, "FAKE_DX_MODE=" + mode + " timeout 120 suite/run_suite.sh ./dxdispatch " + results_arg + " " + args);
  }
  Run verify(const std::string& args) const { return run_tool_bounded(root, "verify suite " + args); }
};

const RunnerFixture& runner() {
  static const RunnerFixture f;
  REQUIRE_MESSAGE(f.generated.status == 0, f.generated.output);
  return f;
}

// A few valid cases and every invalid one: what most runner tests need.
const std::string kFew = "--filter '^join/(00[0-3]_|.*invalid)'";

std::string invalid_case(const fs::path& suite, const std::string& rule) {
  return find_case(suite, "join", [&](const Json& c, const std::string&) {
    return !c.at("valid").boolean() && c.at("rule").str() == rule;
  });
}

}  // namespace

TEST_CASE("suite: the manifest lists every file generate wrote, and verify refuses any change") {
  const RunnerFixture& f = runner();
  const Json j = dmlref_suite::read_json(f.suite / "suite.json");
  CHECK(j.at("manifest").at("algorithm").str() == "sha256");
  // The hashes as coreutils' sha256sum computes them, in one call over the whole suite.
  const Run sums = run_shell(f.suite, "find . -type f ! -name suite.json -exec sha256sum {} +");
  REQUIRE(sums.status == 0);
  std::map<std::string, std::string> expected;
  std::istringstream lines(sums.output);
  for (std::string line; std::getline(lines, line);) expected[line.substr(68)] = line.substr(0, 64);  // "<hash>  ./<path>"
  std::set<std::string> listed;
  for (const auto& entry : j.at("manifest").at("files").members()) {  // clang 14: no structured binding in CHECK
    listed.insert(entry.first);
    CHECK_MESSAGE(entry.second.str() == expected[entry.first], entry.first);
  }
  std::set<std::string> on_disk;
  for (const auto& e : fs::recursive_directory_iterator(f.suite)) {
    if (e.is_regular_file()) on_disk.insert(fs::relative(e.path(), f.suite).generic_string());
  }
  on_disk.erase("suite.json");
  CHECK(listed == on_disk);
  CHECK(listed.count("run_suite.sh") == 1);
  CHECK(listed.count("run_suite.ps1") == 1);
  CHECK(listed.count("README.md") == 1);

  // Any byte changed, a file missing or replaced by a symlink: exit 2 before any case, naming it.
  const std::string path = find_case(f.suite, "join", [](const Json& c, const std::string&) { return c.at("valid").boolean(); });
  fs::create_directories(f.results);
  for (const std::string file : {"model.json", "case.json", "expected_0.npy"}) {
    CAPTURE(file);
    const Restore restore(f.suite / path);
    std::string bytes = dmlref_suite::read_text(f.suite / path / file);
    bytes.back() = static_cast<char>(bytes.back() ^ 1);
    dmlref_suite::write_text(f.suite / path / file, bytes);
    const Run r = f.verify("--results results");
    CHECK(r.status == 2);
    CHECK_MESSAGE(contains(r.output, path + "/" + file + "' does not have the SHA-256"), r.output);
    CHECK_FALSE(contains(r.output, "summary"));
  }
  {
    const Restore restore(f.suite / path);
    fs::remove(f.suite / path / "model.json");
    fs::create_symlink(f.root / "elsewhere.json", f.suite / path / "model.json");
    dmlref_suite::write_text(f.root / "elsewhere.json", "{}");
    const Run r = f.verify("--results results");
    CHECK(r.status == 2);
    CHECK_MESSAGE(contains(r.output, "is a symbolic link"), r.output);
  }
}

TEST_CASE("suite: case.json is trusted only through the manifest (issue item 5)") {
  const RunnerFixture& f = runner();
  REQUIRE(f.run("results", kFew).status == 0);
  REQUIRE(f.verify("--results results " + kFew).status == 0);
  const std::string path = find_case(f.suite, "join", [](const Json& c, const std::string&) { return c.at("valid").boolean(); });
  const std::string invalid = invalid_case(f.suite, "J3");
  const Restore restore_suite(f.suite);
  const auto edit = [&](const std::string& from, const std::string& to, const std::string& target) {
    std::string text = dmlref_suite::read_text(f.suite / target / "case.json");
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    dmlref_suite::write_text(f.suite / target / "case.json", text);
  };
  // "valid": false on a valid case, "outputs": [], an absolute "expected": each is a modified
  // suite (exit 2); rewriting the manifest as well does not get them through either.
  edit("\"valid\": true", "\"valid\": false", path);
  Run r = f.verify("--results results");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "does not have the SHA-256"));
  rewrite_manifest(f.suite, path + "/case.json");
  r = f.verify("--results results");
  CHECK(r.status == 2);
  CHECK_MESSAGE(contains(r.output, "the suite is damaged"), r.output);
  edit("\"valid\": false", "\"valid\": true", path);
  edit("\"expected\": \"expected_0.npy\"", "\"expected\": \"/dev/zero\"", path);
  rewrite_manifest(f.suite, path + "/case.json");
  r = f.verify("--results results");
  CHECK(r.status == 2);
  CHECK_MESSAGE(contains(r.output, "not a plain name inside the case's directory"), r.output);
  edit("\"expected\": \"/dev/zero\"", "\"expected\": \"expected_0.npy\"", path);
  edit("\"result\": \"output_0.npy\"", "\"result\": \"../../../x.npy\"", path);
  rewrite_manifest(f.suite, path + "/case.json");
  CHECK(f.verify("--results results").status == 2);
  // Refused as a name outside the case's directory (not, say, as a stale manifest entry).
  r = f.verify("--results results");
  CHECK_MESSAGE(contains(r.output, path + "/case.json: an output's \"expected\" or \"result\" is not a plain name"),
                r.output);
  edit("\"result\": \"../../../x.npy\"", "\"result\": \"output_0.npy\"", path);
  rewrite_manifest(f.suite, path + "/case.json");
  REQUIRE(f.verify("--results results " + kFew).status == 0);
  // An invalid case without its stage.
  edit("\"stage\": \"create\"", "\"stage\": \"never\"", invalid);
  rewrite_manifest(f.suite, invalid + "/case.json");
  r = f.verify("--results results");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "neither create nor bind"));
  edit("\"stage\": \"never\"", "\"stage\": \"create\"", invalid);
  rewrite_manifest(f.suite, invalid + "/case.json");
  // A manifest path outside the suite is itself tampering.
  for (const std::string bad : {"../outside.txt", "/etc/hostname", "join/../../x"}) {
    Json j = dmlref_suite::read_json(f.suite / "suite.json");
    Json files = j.at("manifest").at("files");
    files.set(bad, std::string(64, '0'));
    Json manifest = j.at("manifest");
    manifest.set("files", files);
    j.set("manifest", manifest);
    dmlref_suite::write_text(f.suite / "suite.json", j.dump());
    r = f.verify("--results results");
    CHECK(r.status == 2);
    CHECK_MESSAGE(contains(r.output, "not a relative path inside the suite"), r.output);
  }
}

TEST_CASE("suite: a tampered output layout cannot make verify walk more than the buffer (item 4)") {
  const RunnerFixture& f = runner();
  REQUIRE(f.run("results", kFew).status == 0);
  const std::string path = "join/000_" + find_case(f.suite, "join", [](const Json&, const std::string& p) {
    return p.rfind("join/000_", 0) == 0;
  }).substr(9);
  const Restore restore_suite(f.suite / path);
  const Restore restore_results(f.results / path);
  // The output tensor: 65535^8 coordinates, all on one element, and a fresh manifest entry.
  Json model = dmlref_suite::read_json(f.suite / path / "model.json");
  Json dispatchables = model.at("dispatchables");
  Json op = dispatchables.at("op");
  Json desc = op.at("desc");
  Json out = desc.at("OutputTensor");
  out.set("Sizes", Json::array_of(std::vector<std::uint32_t>(8, 65535)));
  out.set("Strides", Json::array_of(std::vector<std::uint32_t>(8, 0)));
  desc.set("OutputTensor", out);
  op.set("desc", desc);
  dispatchables.set("op", op);
  model.set("dispatchables", dispatchables);
  dmlref_suite::write_text(f.suite / path / "model.json", model.dump());
  {
    const Restore restore_json(f.suite / "suite.json");
    rewrite_manifest(f.suite, path + "/model.json");
    flip_bit(f.results / path / "output_0.npy", 0);
    const auto start = std::chrono::steady_clock::now();
    const Run r = f.verify("--results results --filter '^join/000_'");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
    CHECK(r.status == 1);
    CHECK_MESSAGE(contains(r.output, "FAIL " + path + ": OutputTensor: 1 of "), r.output);
  }
  // Without the fresh manifest entry it is a modified suite.
  const Run r = f.verify("--results results");
  CHECK(r.status == 2);
  CHECK(contains(r.output, path + "/model.json' does not have the SHA-256"));
}

TEST_CASE("suite: the runner never deletes the suite or files it did not write (item 1)") {
  const RunnerFixture& f = runner();
  const auto before = snapshot(f.suite);
  fs::create_directories(f.root / "parent_of_nothing");
  for (const std::string& results : std::vector<std::string>{"suite", "suite/", "suite/results", "suite/join", "suite/../suite", ".", f.root.string(),
                                    "/"}) {
    CAPTURE(results);
    const Run r = f.run("'" + results + "'", kFew);
    CHECK(r.status == 2);
    CHECK_MESSAGE((contains(r.output, "is the suite or inside it") || contains(r.output, "contains the suite") ||
                   contains(r.output, "root directory")), r.output);
  }
  // Run inside the suite with RESULTS '.', as the issue did.
  Run r = run_shell(f.suite, "FAKE_DX_MODE=correct ./run_suite.sh ../dxdispatch . " + kFew);
  CHECK(r.status == 2);
  CHECK(snapshot(f.suite) == before);
  CHECK_FALSE(fs::exists(f.suite / "results"));

  // A second run replaces only that case's exit_code, log.txt and outputs.
  REQUIRE(f.run("results", kFew).status == 0);
  const std::string path = find_case(f.suite, "join", [](const Json&, const std::string& p) { return p.rfind("join/001_", 0) == 0; });
  dmlref_suite::write_text(f.results / path / "notes.txt", "mine");
  fs::create_directories(f.results / path / "mine");
  dmlref_suite::write_text(f.results / path / "output_0.npy", "stale");
  r = f.run("results", kFew);
  CHECK(r.status == 0);
  CHECK(dmlref_suite::read_text(f.results / path / "notes.txt") == "mine");
  CHECK(fs::is_directory(f.results / path / "mine"));
  CHECK(dmlref_suite::read_text(f.results / path / "output_0.npy") ==
        dmlref_suite::read_text(f.suite / path / "expected_0.npy"));
  CHECK(snapshot(f.suite) == before);
  CHECK(f.verify("--results results " + kFew).status == 0);
  // A case directory of RESULTS that leads into the suite (a symlinked <op>) is skipped.
  fs::remove_all(f.root / "sneaky");
  fs::create_directories(f.root / "sneaky");
  fs::create_directory_symlink(f.suite / "join", f.root / "sneaky" / "join");
  r = f.run("sneaky", "--filter '^join/00[0-1]_'");
  CHECK_MESSAGE(contains(r.output, "leads into the suite"), r.output);
  CHECK(snapshot(f.suite) == before);
}

TEST_CASE("suite: a simulated conformant device passes through the runner; misbehaviour fails as such (items 9, 10)") {
  const RunnerFixture& f = runner();
  // The whole suite, two cases at a time, with DxDispatch arguments passed on.
  const fs::path args = f.root / "args.txt";
  fs::remove(args);
  Run r = run_shell(f.root, "FAKE_DX_ARGS='" + args.string() + "' suite/run_suite.sh ./dxdispatch results --jobs 2 -- -a 1");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const std::size_t cases = case_paths(f.suite).size();
  CHECK(contains(r.output, "ran " + std::to_string(cases) + " cases"));
  CHECK(contains(dmlref_suite::read_text(args), "-a\n1\n"));
  r = f.verify("--results results --json report.json --junit report.xml");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(contains(r.output, "undocumented (DirectML does not document its behaviour; not counted)"));
  const Json report = dmlref_suite::read_json(f.root / "report.json");
  CHECK(report.at("cases").items().size() == cases);
  CHECK(report.at("summary").at("passed").u64() == cases);
  std::size_t undocumented = 0;
  for (const std::string& path : case_paths(f.suite)) {
    const Json c = case_of(f.suite, path);
    CHECK(dmlref_suite::read_text(f.results / path / "exit_code") == (c.at("valid").boolean() ? "0\n" : c.at("stage").str() == "bind" ? "5\n" : "62\n"));
    CHECK(fs::exists(f.results / path / "log.txt"));
    if (c.at("valid").boolean()) continue;
    // Each invalid case names its stage; T10 and T13 are refused at binding.
    const std::string rule = c.at("rule").str();
    CHECK(c.at("stage").str() == (rule == "T10" || rule == "T13" ? "bind" : "create"));
    const bool unknown = rule == "T10" || rule == "T11" || rule == "T12";
    CHECK((c.find("undocumented") != nullptr) == unknown);
    if (unknown) {
      ++undocumented;
      CHECK(c.at("note").str().size() > 20);
    }
  }
  CHECK(undocumented == 3);

  // Each misbehaviour fails every invalid case with its own reason.
  struct Bad {
    const char* mode;
    const char* reason;
  };
  for (const Bad bad : {Bad{"parse-fail", "the model did not parse"}, Bad{"no-device", "no device"},
                        Bad{"wrong-stage", "failed at bind (exit code 5), but DirectML refuses J3 at create"},
                        Bad{"exit1", "exit code 1 without DirectML's refusal at create"},
                        Bad{"accept", "accepted an invalid case (exit code 0)"},
                        Bad{"crash", "crashed (exit code 139)"}}) {
    CAPTURE(bad.mode);
    r = f.run("bad", "--filter 'invalid_J3$'", bad.mode);
    REQUIRE(r.status == 0);
    r = f.verify("--results bad --filter 'invalid_J3$'");
    CHECK(r.status == 1);
    CHECK_MESSAGE(contains(r.output, "FAIL " + invalid_case(f.suite, "J3") + ": "), r.output);
    CHECK_MESSAGE(contains(r.output, bad.reason), r.output);
  }
  // Undocumented cases are reported apart: accepting them does not fail the run.
  r = f.run("bad", "--filter 'invalid_T1[0-3]$'", "accept");
  r = f.verify("--results bad --filter 'invalid_T1[0-3]$' --junit undocumented.xml");
  CHECK_MESSAGE(r.status == 1, r.output);  // T13 is documented
  CHECK(contains(r.output, "FAIL " + invalid_case(f.suite, "T13") + ": accepted an invalid case"));
  CHECK(contains(r.output, "FAIL [undocumented] " + invalid_case(f.suite, "T10") + ": accepted an invalid case"));
  CHECK(contains(r.output, "undocumented (DirectML does not document its behaviour; not counted): 3 cases, 0 refused"));
  const std::string xml = dmlref_suite::read_text(f.root / "undocumented.xml");
  CHECK(contains(xml, "tests=\"4\" failures=\"1\" skipped=\"3\""));
  CHECK(f.verify("--results bad --filter 'invalid_T1[0-2]$'").status == 0);
  // A log that PowerShell 5 wrote (UTF-16 after a byte-order mark) is read too.
  REQUIRE(f.run("bad", "--filter 'invalid_J3$'").status == 0);
  std::string utf16 = "\xff\xfe";
  for (char ch : std::string("ERROR creating dispatchable 'op'\r\n")) {
    utf16 += ch;
    utf16 += '\0';
  }
  dmlref_suite::write_text(f.root / "bad" / invalid_case(f.suite, "J3") / "log.txt", utf16);
  CHECK(f.verify("--results bad --filter 'invalid_J3$'").status == 0);
  // A valid case whose model did not parse fails as such.
  r = f.run("bad", "--filter '^join/000_'", "parse-fail");
  r = f.verify("--results bad --filter '^join/000_'");
  CHECK(r.status == 1);
  CHECK_MESSAGE(contains(r.output, "exit code 255 for a valid case; the model did not parse"), r.output);
}

TEST_CASE("suite: the runner's --timeout, --filter and --jobs; verify's --filter, --expect-fail and --json") {
  const RunnerFixture& f = runner();
  fs::remove_all(f.root / "slow");
  const auto start = std::chrono::steady_clock::now();
  Run r = f.run("slow", "--timeout 1 --jobs 3 --filter '^join/00[0-2]_'", "hang");
  CHECK(r.status == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  CHECK(contains(r.output, "ran 3 cases"));
  std::size_t ran = 0;
  for (const auto& e : fs::recursive_directory_iterator(f.root / "slow")) ran += e.path().filename() == "exit_code" ? 1 : 0;
  CHECK(ran == 3);
  r = f.verify("--results slow --filter '^join/00[0-2]_' --json slow.json");
  CHECK(r.status == 1);
  CHECK(contains(r.output, "TIMEOUT join/000_"));
  CHECK(contains(dmlref_suite::read_text(f.root / "slow.json"), "\"status\": \"timeout\""));
  CHECK(f.run("slow", "--timeout soon").status == 2);
  CHECK(f.run("slow", "--jobs 0").status == 2);
  CHECK(f.run("slow", "--filter '('").status == 2);
  // Each refused for its own reason, before any case ran (exit 2 alone would also be a missing
  // DXDISPATCH or RESULTS).
  const auto slow_before = snapshot(f.root / "slow");
  for (const auto& bad : std::vector<std::pair<std::string, std::string>>{
           {"--timeout soon", "--timeout 'soon' is not a whole number of seconds"},
           {"--jobs 0", "--jobs '0' is not a positive whole number"},
           {"--filter '('", "--filter '(' is not a regular expression"}}) {
    CAPTURE(bad.first);
    r = f.run("slow", bad.first, "hang");
    CHECK(r.status == 2);
    CHECK_MESSAGE(contains(r.output, bad.second), r.output);
    CHECK_FALSE(contains(r.output, "ran "));
  }
  CHECK(snapshot(f.root / "slow") == slow_before);

  // --expect-fail: a listed case that fails is an expected failure, one that passes is fixed.
  REQUIRE(f.run("results", kFew).status == 0);
  const std::string broken = find_case(f.suite, "join", [](const Json&, const std::string& p) { return p.rfind("join/002_", 0) == 0; });
  const std::string fine = find_case(f.suite, "join", [](const Json&, const std::string& p) { return p.rfind("join/003_", 0) == 0; });
  const Restore restore(f.results / broken);
  flip_bit(f.results / broken / "output_0.npy", 0);
  dmlref_suite::write_text(f.root / "xfail.txt", "# known\n" + broken + "\n" + fine + "  # was broken\n\n");
  r = f.verify("--results results " + kFew + " --expect-fail xfail.txt --json out.json");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(contains(r.output, "EXPECTED FAILURE " + broken));
  CHECK(contains(r.output, "FIXED " + fine));
  const Json report = dmlref_suite::read_json(f.root / "out.json");
  bool saw_mismatch = false;
  for (const Json& c : report.at("cases").items()) {
    if (c.at("name").str() == broken) {
      CHECK(c.at("status").str() == "expected failure");
      CHECK(c.at("op").str() == "join");
      CHECK(c.at("valid").boolean());
      CHECK(contains(c.at("reason").str(), "1 of "));
      REQUIRE(c.at("mismatches").items().size() == 1);
      CHECK(c.at("mismatches").items()[0].at("element").u64() == 0);
      saw_mismatch = true;
    }
    if (c.at("name").str() == fine) CHECK(c.at("status").str() == "fixed");
  }
  CHECK(saw_mismatch);
  // Without the list the same run fails; a list naming no case is a usage error.
  CHECK(f.verify("--results results " + kFew).status == 1);
  dmlref_suite::write_text(f.root / "xfail.txt", "join/no_such_case\n");
  r = f.verify("--results results --expect-fail xfail.txt");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "no case of the suite"));
  // Both spellings of a flag work; --help lists every flag.
  CHECK(f.verify("--results=results --filter=^join/003_").status == 0);
  r = run_tool(f.root, "verify --help");
  CHECK(r.status == 0);
  for (const char* flag : {"--results", "--filter", "--expect-fail", "--json", "--junit", "--max-report"}) CHECK(contains(r.output, flag));
  r = run_tool(f.root, "generate --help");
  CHECK(r.status == 0);
  for (const char* flag : {"--out", "--ops", "--feature-level", "--seed", "--max-bytes", "--overwrite"}) CHECK(contains(r.output, flag));
  r = run_shell(f.root, "grep -c -- '-Timeout\\|-Filter\\|-Jobs' suite/run_suite.ps1");
  CHECK(std::stoi(r.output) >= 6);
}

TEST_CASE("suite: verify never writes a report over a file it reads, or inside the suite (items 2, 8)") {
  const RunnerFixture& f = runner();
  REQUIRE(f.run("results", kFew).status == 0);
  const std::string path = find_case(f.suite, "join", [](const Json&, const std::string& p) { return p.rfind("join/001_", 0) == 0; });
  const auto suite_before = snapshot(f.suite);
  const auto results_before = snapshot(f.results);
  fs::remove(f.root / "link");
  fs::create_symlink(f.results / path / "exit_code", f.root / "link");
  fs::remove(f.root / "hard");
  fs::create_hard_link(f.results / path / "output_0.npy", f.root / "hard");
  for (const std::string flag : {"--junit", "--json"}) {
    for (const std::string& target : std::vector<std::string>{"results/" + path + "/output_0.npy", "results/" + path + "/exit_code",
                                     "results/" + path + "/log.txt", "suite/" + path + "/expected_0.npy",
                                     "suite/suite.json", "suite/new_report.xml", "link", "hard"}) {
      CAPTURE(flag);
      CAPTURE(target);
      const Run r = f.verify("--results results " + kFew + " " + flag + " " + target);
      CHECK(r.status == 2);
      CHECK_FALSE(contains(r.output, "summary"));
      CHECK_MESSAGE((contains(r.output, "which verify reads") || contains(r.output, "inside the suite")), r.output);
    }
  }
  CHECK(snapshot(f.suite) == suite_before);
  CHECK(snapshot(f.results) == results_before);
  CHECK_FALSE(fs::exists(f.suite / "new_report.xml"));
  // The two reports may not be one file; an unwritable one stops the run before any case.
  Run r = f.verify("--results results " + kFew + " --junit same.out --json same.out");
  CHECK(r.status == 2);
  CHECK_MESSAGE(contains(r.output, "--junit 'same.out' is --json: give two different files"), r.output);
  CHECK_FALSE(contains(r.output, "summary"));
  CHECK_FALSE(fs::exists(f.root / "same.out"));
  r = f.verify("--results results " + kFew + " --junit no/such/dir/r.xml");
  CHECK(r.status == 2);
  CHECK_MESSAGE(contains(r.output, "cannot open 'no/such/dir/r.xml' for writing"), r.output);
  CHECK_FALSE(contains(r.output, "summary"));
  fs::remove(f.root / "fifo");
  REQUIRE(::mkfifo((f.root / "fifo").c_str(), 0600) == 0);
  r = f.verify("--results results " + kFew + " --junit fifo");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "is a FIFO"));
}

TEST_CASE("suite: verify reads results only as regular files of bounded size (item 3)") {
  const RunnerFixture& f = runner();
  REQUIRE(f.run("results", kFew).status == 0);
  std::vector<std::string> paths;
  for (const std::string& p : case_paths(f.suite)) {
    if (p.rfind("join/00", 0) == 0 && paths.size() < 4) paths.push_back(p);
  }
  REQUIRE(paths.size() == 4);
  const std::string invalid = invalid_case(f.suite, "J2");
  std::vector<std::unique_ptr<Restore>> restore;
  for (const std::string& p : paths) restore.push_back(std::make_unique<Restore>(f.results / p));
  restore.push_back(std::make_unique<Restore>(f.results / invalid));
  fs::remove(f.results / paths[0] / "output_0.npy");
  fs::create_symlink("/dev/zero", f.results / paths[0] / "output_0.npy");
  fs::remove(f.results / paths[1] / "output_0.npy");
  REQUIRE(::mkfifo((f.results / paths[1] / "output_0.npy").c_str(), 0600) == 0);
  fs::remove(f.results / paths[2] / "exit_code");
  REQUIRE(::mkfifo((f.results / paths[2] / "exit_code").c_str(), 0600) == 0);
  // 8 GiB, sparse, behind the correct header.
  fs::resize_file(f.results / paths[3] / "output_0.npy", std::uintmax_t{8} << 30);
  dmlref_suite::write_text(f.results / invalid / "exit_code", std::string(65, '6') + "\n");
  fs::remove(f.results / invalid / "log.txt");
  REQUIRE(::mkfifo((f.results / invalid / "log.txt").c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  const Run r = f.verify("--results results " + kFew);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  CHECK(r.status == 1);
  CHECK_MESSAGE(contains(r.output, "FAIL " + paths[0] + ": OutputTensor: output_0.npy refused: "), r.output);
  CHECK(contains(r.output, "is a character device, not a regular file"));
  CHECK(contains(r.output, "FAIL " + paths[1] + ": OutputTensor: output_0.npy refused: "));
  CHECK(contains(r.output, "is a FIFO, not a regular file"));
  CHECK(contains(r.output, "FAIL " + paths[2] + ": exit_code refused: "));
  CHECK(contains(r.output, "holds 8589934592 bytes, more than the"));
  CHECK(contains(r.output, "FAIL " + invalid + ": exit_code refused: "));
  CHECK(contains(r.output, "holds 66 bytes, more than the 64"));
  CHECK(contains(r.output, "5 failed"));
}

TEST_CASE("suite: hostile case names are escaped on the terminal and in the JUnit XML (item 6)") {
  const RunnerFixture& f = runner();
  REQUIRE(f.run("results", kFew).status == 0);
  const std::string path = find_case(f.suite, "join", [](const Json&, const std::string& p) { return p.rfind("join/002_", 0) == 0; });
  const std::string hostile = "join/\xff\x1b[31mred\x1b[0m_<&\"'>_\xc3\xa9";
  const Restore restore_suite(f.suite);
  const Restore restore_results(f.results);
  fs::rename(f.suite / path, f.suite / hostile);
  fs::rename(f.results / path, f.results / hostile);
  rewrite_manifest(f.suite, "", path + "/", hostile + "/");
  flip_bit(f.results / hostile / "output_0.npy", 0);
  const Run r = f.verify("--results results --filter 'red|invalid' --junit hostile.xml --json hostile.json");
  CHECK(r.status == 1);
  CHECK_FALSE(contains(r.output, "\x1b"));
  CHECK_FALSE(contains(r.output, "\xff"));
  CHECK_MESSAGE(contains(r.output, "FAIL join/\\xff\\x1b[31mred\\x1b[0m_<&\"'>_\xc3\xa9: OutputTensor"), r.output);
  const std::string xml = dmlref_suite::read_text(f.root / "hostile.xml");
  CHECK(clean_utf8(xml));
  CHECK(contains(xml, "name=\"\\xff\\x1b[31mred\\x1b[0m_&lt;&amp;&quot;&apos;&gt;_\xc3\xa9\""));
  const std::string json = dmlref_suite::read_text(f.root / "hostile.json");
  CHECK(clean_utf8(json));
  CHECK_NOTHROW(dmlref_suite::Json::parse(json));
  // A strict XML parser, where one is installed.
  const Run py = run_shell(f.root, "command -v python3 >/dev/null || exit 77; python3 -c \"import xml.etree.ElementTree as E; "
                                   "E.parse('hostile.xml')\"");
  CHECK_MESSAGE((py.status == 0 || py.status == 77), py.output);
  // A refused result's path is escaped once, where the reason is shown (not a second time over
  // the file reader's own escapes: \\xff, \\xc3\\xa9).
  fs::remove(f.results / hostile / "output_0.npy");
  REQUIRE(::mkfifo((f.results / hostile / "output_0.npy").c_str(), 0600) == 0);
  const Run refused = f.verify("--results results --filter 'red'");
  CHECK(refused.status == 1);
  CHECK_FALSE(contains(refused.output, "\x1b"));
  CHECK_MESSAGE(contains(refused.output, "output_0.npy refused: 'results/join/\\xff\\x1b[31mred\\x1b[0m_<&\"'>_\xc3\xa9/"
                                         "output_0.npy' is a FIFO, not a regular file"),
                refused.output);
}

TEST_CASE("suite: generate --overwrite replaces only an intact suite, follows a symlink, cleans up (item 7)") {
  const fs::path root = fs::temp_directory_path() / ("dmlref_overwrite_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string small = " --ops join --max-bytes 2000000";
  REQUIRE(run_tool(root, "generate --out s" + small).status == 0);
  // Anything generate did not write blocks --overwrite, and survives.
  for (const std::string extra : {"notes.txt", "results/join/x/exit_code", "join/extra.npy"}) {
    CAPTURE(extra);
    fs::create_directories((root / "s" / extra).parent_path());
    dmlref_suite::write_text(root / "s" / extra, "mine");
    const Run r = run_tool(root, "generate --out s --overwrite --seed 9" + small);
    CHECK(r.status == 2);
    CHECK_MESSAGE(contains(r.output, "which generate did not write"), r.output);
    CHECK(dmlref_suite::read_text(root / "s" / extra) == "mine");
    CHECK(dmlref_suite::read_json(root / "s" / "suite.json").at("seed").u64() == 1);
    fs::remove(root / "s" / extra);
    if (extra.rfind("results", 0) == 0) fs::remove_all(root / "s" / "results");
  }
  // A modified file or a suite.json without a manifest ("{}") blocks it too.
  fs::create_directories(root / "t");
  dmlref_suite::write_text(root / "t" / "suite.json", "{}");
  dmlref_suite::write_text(root / "t" / "notes.txt", "mine");
  Run r = run_tool(root, "generate --out t --overwrite" + small);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "is not an intact suite"));
  CHECK(dmlref_suite::read_text(root / "t" / "notes.txt") == "mine");
  // An intact suite is replaced.
  r = run_tool(root, "generate --out s --overwrite --seed 9" + small);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(dmlref_suite::read_json(root / "s" / "suite.json").at("seed").u64() == 9);
  // A symlinked DIR: the suite goes where it points; the link stays a link.
  fs::create_directory_symlink("s", root / "link");
  r = run_tool(root, "generate --out link --overwrite --seed 10" + small);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(fs::is_symlink(root / "link"));
  CHECK(dmlref_suite::read_json(root / "s" / "suite.json").at("seed").u64() == 10);
  // kill -9 during generate: the next run removes the half-built folder.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::chdir(root.c_str());
    ::execl(DMLREF_CHECK_EXE, DMLREF_CHECK_EXE, "generate", "--out", "k", "--max-bytes", "300000000", nullptr);
    ::_exit(127);
  }
  const fs::path partial = root / (".k.tmp-" + std::to_string(pid));
  for (int i = 0; i < 2000 && !fs::exists(partial / "join"); ++i) ::usleep(5000);
  CHECK(fs::exists(partial));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(fs::exists(partial));
  r = run_tool(root, "generate --out k" + small);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(contains(r.output, "left by an interrupted run"));
  CHECK_FALSE(fs::exists(partial));
  for (const auto& e : fs::directory_iterator(root)) CHECK_FALSE(contains(e.path().filename().string(), ".tmp-"));
  fs::remove_all(root);
}

}  // namespace test_suite

#endif  // DMLREF_CHECK_EXE
