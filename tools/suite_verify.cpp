// dmlref-check verify: grades a device's run of a generated suite (see suite_generate.cpp).
#include "cli_files.hpp"
#include "suite_commands.hpp"
#include "suite_manifest.hpp"

#include <iostream>
#include <set>

namespace dmlref_suite {
namespace {

enum class Status { Pass, Fail, NotRun };

struct Outcome {
  std::string op, name;  // "join", "003_float32_..."
  Status status = Status::Pass;
  std::string reason;    // one line
  std::string details;   // the first differences, one per line
};

struct VerifyArgs {
  fs::path suite, results, junit;
  std::size_t max_report = 5;
};

VerifyArgs parse_verify(int argc, char** argv) {
  VerifyArgs a;
  std::set<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      if (!a.suite.empty()) throw UsageError("verify: one suite directory, not '" + arg + "' too");
      a.suite = arg;
      continue;
    }
    if (arg != "--results" && arg != "--junit" && arg != "--max-report") {
      throw UsageError("verify: unknown flag '" + arg + "'");
    }
    if (!seen.insert(arg).second) throw UsageError("verify: " + arg + " given twice");
    if (i + 1 >= argc) throw UsageError("verify: " + arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--results") {
      a.results = value;
    } else if (arg == "--junit") {
      a.junit = value;
    } else {
      std::size_t n = 0;
      const auto r = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || r.ec != std::errc() || r.ptr != value.data() + value.size() || n > 100000) {
        throw UsageError("verify: --max-report " + value + " is not a number in [0, 100000]");
      }
      a.max_report = n;
    }
  }
  if (a.suite.empty()) throw UsageError("verify needs the suite directory");
  if (a.results.empty()) throw UsageError("verify needs --results RESULTS");
  if (!fs::is_regular_file(a.suite / "suite.json")) {
    throw UsageError("verify: '" + a.suite.string() + "' is not a suite (no suite.json)");
  }
  if (!fs::is_directory(a.results)) {
    throw UsageError("verify: the results directory '" + a.results.string() + "' does not exist");
  }
  return a;
}

// The exit code file as the runners write it: a decimal integer (HRESULTs are negative on
// Windows), maybe with a byte-order mark and whitespace.
std::optional<std::int64_t> read_exit_code(const fs::path& path) {
  std::string text = read_text(path);
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return std::nullopt;
  const auto last = text.find_last_not_of(" \t\r\n");
  const std::string number = text.substr(first, last - first + 1);
  std::int64_t v = 0;
  const auto r = std::from_chars(number.data(), number.data() + number.size(), v);
  if (r.ec != std::errc() || r.ptr != number.data() + number.size()) return std::nullopt;
  return v;
}

// The output tensor's description in the case's model, for coordinates in reports.
dmlref::Layout output_layout(const fs::path& case_dir, const std::string& tensor) {
  const Json model = read_json(case_dir / "model.json");
  const Json& desc = model.at("dispatchables").members().at(0).second.at("desc");
  const Json* t = nullptr;
  if (const auto bracket = tensor.find('['); bracket != std::string::npos) {
    const std::size_t i = std::stoul(tensor.substr(bracket + 1));
    t = &desc.at(tensor.substr(0, bracket)).items().at(i);
  } else {
    t = &desc.at(tensor);
  }
  std::list<detail::DescStore> store;
  return dmlref::detail::layout_of_desc(*detail::parse_tensor(store, *t));
}

struct Mismatch {
  std::uint64_t element = 0;
  std::uint64_t expected = 0, actual = 0;
  const std::vector<std::uint64_t>* accept = nullptr;
};

// Compares one output; returns "" when it matches, else the reason, with details appended.
std::string compare_output(const fs::path& case_dir, const fs::path& result_dir, const Json& out,
                           std::size_t max_report, std::string& details) {
  const std::string tensor = out.at("tensor").str();
  const std::string result_name = out.at("result").str();
  const ResultFile expected = read_result(case_dir / out.at("expected").str(), ~std::size_t{0});
  const fs::path result_path = result_dir / result_name;
  if (!fs::exists(result_path)) return tensor + ": no result file " + result_name;
  ResultFile actual;
  try {
    actual = read_result(result_path, expected.data.size());
  } catch (const std::exception& e) {
    return tensor + ": cannot read " + result_name + ": " + e.what();
  }
  if (actual.type != expected.type) {
    return tensor + ": " + result_name + " holds " + std::string(dmlref::data_type_name(actual.type)) +
           " elements, expected " + std::string(dmlref::data_type_name(expected.type));
  }
  if (actual.shape != expected.shape) {
    return tensor + ": " + result_name + " has shape " + dmlref::Layout::packed(actual.shape).sizes_string() +
           ", expected " + dmlref::Layout::packed(expected.shape).sizes_string();
  }
  if (actual.data.size() < expected.data.size()) {
    return tensor + ": " + result_name + " holds " + std::to_string(actual.data.size()) + " data bytes, expected " +
           std::to_string(expected.data.size());
  }
  std::map<std::uint64_t, std::vector<std::uint64_t>> accept;
  if (const Json* collisions = out.find("collisions")) {
    for (const Json& c : collisions->items()) {
      std::vector<std::uint64_t>& list = accept[c.at("element").u64()];
      for (const Json& bits : c.at("accept").items()) {
        const std::string& h = bits.str();
        std::uint64_t v = 0;
        if (h.rfind("0x", 0) != 0 || std::from_chars(h.data() + 2, h.data() + h.size(), v, 16).ec != std::errc()) {
          throw FormatError("case.json: collision candidate '" + h + "' is not a hex bit pattern");
        }
        list.push_back(v);
      }
    }
  }
  const DataType type = expected.type;
  const std::size_t esize = dmlref::element_size(type);
  const std::uint64_t count = expected.data.size() / esize;
  std::uint64_t mismatches = 0;
  std::vector<Mismatch> first;
  for (std::uint64_t e = 0; e < count; ++e) {
    const std::uint64_t x = element_at(expected.data.data(), esize, e);
    const std::uint64_t a = element_at(actual.data.data(), esize, e);
    if (a == x) continue;
    const auto it = accept.find(e);
    if (it != accept.end() && std::find(it->second.begin(), it->second.end(), a) != it->second.end()) continue;
    ++mismatches;
    if (first.size() < max_report) first.push_back({e, x, a, it == accept.end() ? nullptr : &it->second});
  }
  if (mismatches == 0) return "";
  // Name each reported element by its coordinate, or as padding the tensor does not address.
  std::map<std::uint64_t, dmlref::Coord> coords;
  std::uint32_t rank = 0;
  try {
    const dmlref::Layout layout = output_layout(case_dir, tensor);
    rank = layout.rank;
    std::set<std::uint64_t> wanted;
    for (const Mismatch& m : first) wanted.insert(m.element);
    dmlref::for_each_coordinate(layout, [&](const dmlref::Coord& c) {
      const auto offset = static_cast<std::uint64_t>(layout.offset(c));
      if (wanted.count(offset) != 0 && coords.count(offset) == 0) coords[offset] = c;
    });
  } catch (const std::exception&) {
    coords.clear();  // without the model the report still names buffer elements
  }
  std::ostringstream os;
  for (const Mismatch& m : first) {
    os << "    ";
    const auto c = coords.find(m.element);
    if (c != coords.end()) {
      os << tensor << dmlref::detail::coordinate_string(c->second, rank) << " (buffer element " << m.element << ")";
    } else {
      os << "buffer element " << m.element << " (padding " << tensor << " does not address)";
    }
    os << ": expected ";
    if (m.accept != nullptr) {
      os << "one of {";
      for (std::size_t i = 0; i < m.accept->size(); ++i) os << (i == 0 ? "" : ", ") << format_bits(type, (*m.accept)[i]);
      os << "}";
    } else {
      os << format_bits(type, m.expected);
      if (c == coords.end()) os << " (the sentinel)";
    }
    os << ", actual " << format_bits(type, m.actual) << "\n";
  }
  if (mismatches > first.size()) os << "    ... and " << (mismatches - first.size()) << " more\n";
  details += os.str();
  return tensor + ": " + std::to_string(mismatches) + " of " + std::to_string(count) + " buffer elements differ";
}

Outcome check_case(const VerifyArgs& a, const std::string& path) {
  Outcome o;
  const auto slash = path.find('/');
  if (slash == std::string::npos) throw FormatError("suite.json: case '" + path + "' is not <op>/<case>");
  o.op = path.substr(0, slash);
  o.name = path.substr(slash + 1);
  const fs::path case_dir = a.suite / o.op / o.name;
  const fs::path result_dir = a.results / o.op / o.name;
  const Json c = read_json(case_dir / "case.json");
  if (!fs::exists(result_dir / "exit_code")) {
    o.status = Status::NotRun;
    o.reason = "not run (no " + (fs::path(o.op) / o.name / "exit_code").string() + " in the results)";
    return o;
  }
  const std::optional<std::int64_t> code = read_exit_code(result_dir / "exit_code");
  o.status = Status::Fail;
  if (!code) {
    o.reason = "exit_code does not hold a number";
    return o;
  }
  if (!c.at("valid").boolean()) {
    if (*code != 0) {
      o.status = Status::Pass;
    } else {
      o.reason = "accepted an invalid case (exit code 0); it breaks " + c.at("rule").str() + ": " + c.at("why").str();
    }
    return o;
  }
  if (*code != 0) {
    o.reason = "exit code " + std::to_string(*code) + " for a valid case (see log.txt in its results)";
    return o;
  }
  std::vector<std::string> reasons;
  for (const Json& out : c.at("outputs").items()) {
    const std::string r = compare_output(case_dir, result_dir, out, a.max_report, o.details);
    if (!r.empty()) reasons.push_back(r);
  }
  if (reasons.empty()) {
    o.status = Status::Pass;
    return o;
  }
  for (std::size_t i = 0; i < reasons.size(); ++i) o.reason += (i == 0 ? "" : "; ") + reasons[i];
  return o;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string junit_xml(const std::vector<std::string>& ops, const std::vector<Outcome>& outcomes) {
  std::size_t failures = 0;
  for (const Outcome& o : outcomes) failures += o.status != Status::Pass ? 1 : 0;
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<testsuites name=\"dmlref conformance\" tests=\"" << outcomes.size() << "\" failures=\"" << failures << "\">\n";
  for (const std::string& op : ops) {
    std::size_t tests = 0, failed = 0;
    for (const Outcome& o : outcomes) {
      if (o.op != op) continue;
      ++tests;
      failed += o.status != Status::Pass ? 1 : 0;
    }
    os << "  <testsuite name=\"" << xml_escape(op) << "\" tests=\"" << tests << "\" failures=\"" << failed << "\">\n";
    for (const Outcome& o : outcomes) {
      if (o.op != op) continue;
      os << "    <testcase classname=\"dmlref." << xml_escape(op) << "\" name=\"" << xml_escape(o.name) << "\"";
      if (o.status == Status::Pass) {
        os << "/>\n";
        continue;
      }
      os << ">\n      <failure type=\"" << (o.status == Status::NotRun ? "not-run" : "failed") << "\" message=\""
         << xml_escape(o.reason) << "\">" << xml_escape(o.details) << "</failure>\n    </testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
  return os.str();
}

}  // namespace

int verify_main(int argc, char** argv) {
  const VerifyArgs a = parse_verify(argc, argv);
  std::vector<Outcome> outcomes;
  std::vector<std::string> ops;
  // The suite first: every file it lists must be the one generate wrote.
  const Json suite_json = read_suite_json(a.suite);
  const std::set<std::string> listed = check_manifest(a.suite, suite_json);
  try {
    const Json& manifest = suite_json;
    for (const Json& path : manifest.at("cases").items()) {
      if (listed.count(path.str() + "/case.json") == 0 || listed.count(path.str() + "/model.json") == 0) {
        throw TamperedSuite("the suite is modified: suite.json lists the case '" +
                            dmlref::detail::escape_bytes(path.str()) + "', whose files its manifest does not");
      }
      Outcome o = check_case(a, path.str());
      if (std::find(ops.begin(), ops.end(), o.op) == ops.end()) ops.push_back(o.op);
      if (o.status == Status::Fail) {
        std::cout << "FAIL " << o.op << "/" << o.name << ": " << o.reason << "\n" << o.details;
      } else if (o.status == Status::NotRun) {
        std::cout << "NOT RUN " << o.op << "/" << o.name << "\n";
      }
      outcomes.push_back(std::move(o));
    }
  } catch (const FormatError& e) {
    throw UsageError(std::string("verify: the suite is damaged: ") + e.what());
  } catch (const dmlref::Error& e) {
    throw UsageError(std::string("verify: the suite is damaged: ") + e.what());
  }
  std::size_t passed = 0, failed = 0, not_run = 0;
  std::cout << "\nsummary:\n";
  for (const std::string& op : ops) {
    std::size_t p = 0, f = 0, n = 0;
    for (const Outcome& o : outcomes) {
      if (o.op != op) continue;
      (o.status == Status::Pass ? p : o.status == Status::Fail ? f : n) += 1;
    }
    std::cout << "  " << op << ": " << (p + f + n) << " cases, " << p << " passed, " << f << " failed, " << n
              << " not run\n";
    passed += p;
    failed += f;
    not_run += n;
  }
  if (failed == 0 && not_run == 0) {
    std::cout << "all " << passed << " cases passed\n";
  } else {
    std::cout << failed << " failed, " << not_run << " not run, " << passed << " passed\n";
  }
  if (!a.junit.empty()) {
    // Written whole or not at all, as every output of dmlref-check (cli_files.hpp).
    dmlref::cli::AtomicOutput junit(a.junit.string());
    junit.stream() << junit_xml(ops, outcomes);
    junit.finish();
    junit.commit();
  }
  return failed == 0 && not_run == 0 ? 0 : 1;
}

}  // namespace dmlref_suite
