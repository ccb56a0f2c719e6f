// dmlref-check verify: grades a run of a generated suite (docs/suite.md has the protocol).
// Order of work: the command line; the report targets (never a file it reads, never inside the
// suite); the suite against its manifest (after that case.json, model.json and expected_*.npy are
// trusted); the report targets opened (an unwritable one stops the run before any case is judged);
// then each case, reading the device's files through bounded readers only.
#include "cli_files.hpp"
#include "suite_commands.hpp"
#include "suite_manifest.hpp"

#include <CLI/CLI.hpp>

#include <regex.h>

#include <iostream>
#include <set>

namespace dmlref_suite {
namespace {

namespace cli = dmlref::cli;

enum class Status { Passed, Failed, NotRun, Timeout, ExpectedFailure, Fixed };

const char* status_name(Status s) {
  switch (s) {
    case Status::Passed: return "passed";
    case Status::Failed: return "failed";
    case Status::NotRun: return "not run";
    case Status::Timeout: return "timeout";
    case Status::ExpectedFailure: return "expected failure";
    case Status::Fixed: return "fixed";
  }
  return "";
}

// Whether a status fails the run (for a case whose rule DirectML documents).
bool fails_run(Status s) { return s == Status::Failed || s == Status::NotRun || s == Status::Timeout; }

struct Mismatch {
  std::string tensor;
  std::uint64_t element = 0;   // in the output buffer
  std::string coordinate;      // "[0, 2, 1]", or empty for padding the tensor does not address
  std::string expected, actual;
};

struct Outcome {
  std::string op, name;  // as suite.json has them (shown through display_text)
  bool valid = true;
  std::string rule, stage;
  bool undocumented = false;
  Status status = Status::Passed;
  std::string reason;  // raw: display_text() where it is printed or written
  std::vector<Mismatch> mismatches;
  std::uint64_t more_mismatches = 0;
};

struct VerifyArgs {
  std::string suite, results, filter, expect_fail, json, junit;
  std::size_t max_report = 5;
};

constexpr std::uint64_t kMaxExitCodeBytes = 64;
constexpr std::uint64_t kMaxLogBytes = std::uint64_t{4} << 20;  // read as far as this
constexpr std::uint64_t kMaxExpectFailBytes = std::uint64_t{16} << 20;

const char* const kHelp =
    "Grades a device's run of a generated suite: each case's RESULTS/<op>/<case>/exit_code, log.txt and\n"
    "output files against the golden model's. The suite is checked against its manifest first.\n"
    "Exit 0 when every case passed (expected failures and fixed cases included), 1 when a case failed,\n"
    "timed out or was not run, 2 on bad usage or a modified suite.";

VerifyArgs parse_verify(int argc, char** argv, bool& help_shown) {
  VerifyArgs a;
  CLI::App app{kHelp, "dmlref-check verify"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  app.add_option("SUITE", a.suite, "the suite directory (dmlref-check generate --out)")->required();
  app.add_option("--results", a.results, "the directory a runner filled: RESULTS/<op>/<case>/...")->required();
  app.add_option("--filter", a.filter,
                 "grade only the cases whose <op>/<case> name this regular expression matches (POSIX extended, as "
                 "run_suite.sh's --filter)");
  app.add_option("--expect-fail", a.expect_fail,
                 "a file of <op>/<case> names, one a line (# comments): such a case that fails is an "
                 "'expected failure' and does not fail the run; one that passes is 'fixed'");
  app.add_option("--json", a.json,
                 "write per case: name, op, valid, status (passed, failed, not run, timeout, expected "
                 "failure, fixed), reason and the first mismatches");
  app.add_option("--junit", a.junit, "write JUnit XML (one testsuite per operator)");
  app.add_option("--max-report", a.max_report, "mismatching elements reported per case (default 5)")
      ->check(CLI::Range(0, 100000));
  if (parse_command_line(app, argc, argv, "verify")) {
    help_shown = true;
    return a;
  }
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(a.suite) / "suite.json", ec)) {
    throw UsageError("verify: '" + display_text(a.suite) + "' is not a suite (no suite.json)");
  }
  if (!fs::is_directory(a.results, ec)) {
    throw UsageError("verify: the results directory '" + display_text(a.results) + "' does not exist");
  }
  return a;
}

// A path with every existing part resolved (symlinks followed), the rest appended.
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p).lexically_normal() : r;
}

bool is_within(const fs::path& inner, const fs::path& outer) {
  const std::string i = inner.generic_string(), o = outer.generic_string();
  return i == o || (i.size() > o.size() && i.compare(0, o.size(), o) == 0 && (o.back() == '/' || i[o.size()] == '/'));
}

// A report target must be a new or regular file outside the suite (checked on the path as given
// and through any symlink it is).
void check_target_place(const std::string& flag, const std::string& target, const fs::path& suite) {
  const std::string shown = flag + " '" + display_text(target) + "'";
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw UsageError("verify: " + shown + " is " + cli::file_kind(st.st_mode) + ", not a regular file");
  }
  const fs::path canonical_suite = resolved(suite);
  const fs::path lexical = resolved(fs::path(target).parent_path().empty() ? fs::path(".") : fs::path(target).parent_path()) /
                           fs::path(target).filename();
  if (is_within(lexical, canonical_suite) || is_within(resolved(target), canonical_suite)) {
    throw UsageError("verify: " + shown + " is inside the suite '" + display_text(suite.string()) +
                     "'; write reports outside it");
  }
}

std::set<std::string> read_expect_fail(const std::string& path) {
  std::string text;
  try {
    text = cli::read_regular_file(path, kMaxExpectFailBytes);
  } catch (const cli::FileRefused& e) {
    throw UsageError(std::string("verify: --expect-fail: ") + e.what());
  }
  std::set<std::string> names;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    names.insert(line.substr(first, last - first + 1));
  }
  return names;
}

// ------------------------------------------------------------------------------------------------
// A case as the suite describes it (trusted once the manifest matched, but still checked for shape:
// a suite.json rewritten with a fresh manifest must not lead verify outside the suite).

struct OutputSpec {
  std::string tensor, expected, result;
  std::map<std::uint64_t, std::vector<std::uint64_t>> accept;  // SCATTER collisions
};

struct CaseSpec {
  std::string path, op, name;
  bool valid = true;
  std::string rule, stage, why, note;
  bool undocumented = false;
  std::vector<OutputSpec> outputs;
};

// A name inside a case's directory: no '/', no '..', not empty.
bool plain_name(const std::string& n) {
  return !n.empty() && n != "." && n != ".." && n.find('/') == std::string::npos &&
         n.find('\\') == std::string::npos && n.find('\0') == std::string::npos;
}

Json read_listed_json(const fs::path& suite, const std::string& rel) {
  try {
    return Json::parse(cli::read_regular_file((suite / rel).string(), kMaxSuiteFileBytes, false, false));
  } catch (const FormatError& e) {
    throw TamperedSuite("the suite is damaged: " + display_text(rel) + ": " + e.what());
  } catch (const cli::FileRefused& e) {
    throw TamperedSuite(std::string("the suite is damaged: ") + e.what());
  }
}

CaseSpec load_case(const fs::path& suite, const std::string& path, const std::set<std::string>& listed) {
  CaseSpec c;
  c.path = path;
  const auto slash = path.find('/');
  const std::string shown = "'" + display_text(path) + "'";
  if (slash == std::string::npos || !plain_name(path.substr(0, slash)) || !plain_name(path.substr(slash + 1))) {
    throw TamperedSuite("the suite is damaged: suite.json lists the case " + shown + ", which is not <op>/<case>");
  }
  c.op = path.substr(0, slash);
  c.name = path.substr(slash + 1);
  if (listed.count(path + "/case.json") == 0 || listed.count(path + "/model.json") == 0) {
    throw TamperedSuite("the suite is modified: suite.json lists the case " + shown +
                        ", whose case.json and model.json its manifest does not");
  }
  const Json j = read_listed_json(suite, path + "/case.json");
  try {
    if (j.at("op").str() != c.op) throw FormatError("\"op\" is not the case's directory");
    c.valid = j.at("valid").boolean();
    c.why = j.at("why").str();
    const auto& outputs = j.at("outputs").items();
    if (!c.valid) {
      c.rule = j.at("rule").str();
      c.stage = j.at("stage").str();
      if (c.stage != "create" && c.stage != "bind") throw FormatError("\"stage\" is neither create nor bind");
      if (const Json* u = j.find("undocumented")) c.undocumented = u->boolean();
      if (const Json* n = j.find("note")) c.note = n->str();
      if (!outputs.empty()) throw FormatError("an invalid case lists outputs");
      return c;
    }
    if (outputs.empty()) throw FormatError("a valid case lists no outputs");
    // The results verify reads are exactly the model's writeFile targets.
    const Json model = read_listed_json(suite, path + "/model.json");
    std::vector<std::string> targets;
    for (const Json& command : model.at("commands").items()) {
      if (command.at("type").str() == "writeFile") targets.push_back(command.at("targetPath").str());
    }
    std::set<std::string> seen;
    for (const Json& o : outputs) {
      OutputSpec s{o.at("tensor").str(), o.at("expected").str(), o.at("result").str(), {}};
      if (!plain_name(s.expected) || !plain_name(s.result)) {
        throw FormatError("an output's \"expected\" or \"result\" is not a plain name inside the case's directory");
      }
      if (listed.count(path + "/" + s.expected) == 0) throw FormatError("an expected file the manifest does not list");
      if (std::find(targets.begin(), targets.end(), s.result) == targets.end() || !seen.insert(s.result).second) {
        throw FormatError("the result '" + display_text(s.result) + "' is not one of model.json's writeFile targets");
      }
      if (const Json* collisions = o.find("collisions")) {
        for (const Json& k : collisions->items()) {
          std::vector<std::uint64_t>& list = s.accept[k.at("element").u64()];
          for (const Json& bits : k.at("accept").items()) {
            const std::string& h = bits.str();
            std::uint64_t v = 0;
            if (h.rfind("0x", 0) != 0 || std::from_chars(h.data() + 2, h.data() + h.size(), v, 16).ec != std::errc()) {
              throw FormatError("collision candidate '" + display_text(h) + "' is not a hex bit pattern");
            }
            list.push_back(v);
          }
        }
      }
      c.outputs.push_back(std::move(s));
    }
    if (seen.size() != targets.size()) throw FormatError("model.json writes files case.json does not check");
  } catch (const FormatError& e) {
    throw TamperedSuite("the suite is damaged: " + display_text(path) + "/case.json: " + e.what());
  }
  return c;
}

// ------------------------------------------------------------------------------------------------
// Judging one case

// The exit_code file: a decimal integer (HRESULTs are negative in PowerShell), maybe after a
// byte-order mark and with whitespace around, or the word "timeout".
struct ExitCode {
  bool timeout = false;
  std::int64_t value = 0;
};

std::optional<ExitCode> parse_exit_code(std::string text) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return std::nullopt;
  const auto last = text.find_last_not_of(" \t\r\n");
  const std::string word = text.substr(first, last - first + 1);
  if (word == "timeout") return ExitCode{true, 0};
  std::int64_t v = 0;
  const auto r = std::from_chars(word.data(), word.data() + word.size(), v);
  if (r.ec != std::errc() || r.ptr != word.data() + word.size()) return std::nullopt;
  return ExitCode{false, v};
}

// Where a run stopped, read from its log: DxDispatch's own messages.
enum class Stage { None, Parse, Device, Create, Bind };

Stage stage_in_log(const std::string& log) {
  if (log.find("Failed to parse the model") != std::string::npos) return Stage::Parse;
  if (log.find("Failed to create a device") != std::string::npos) return Stage::Device;
  const bool create = log.find("ERROR creating dispatchable") != std::string::npos;
  const bool bind = log.find("ERROR while binding resources") != std::string::npos;
  if (create && !bind) return Stage::Create;
  if (bind && !create) return Stage::Bind;
  return Stage::None;
}

// An exit code that says the process died of a signal (bash: 128 + N) or crashed on Windows
// (an NTSTATUS error such as 0xC0000005, negative in PowerShell).
bool crash_code(std::int64_t code) {
  if (code > 128 && code < 128 + 65) return true;
  const auto low = static_cast<std::uint32_t>(code);
  return (low & 0xF0000000u) == 0xC0000000u;
}

std::string log_reason(const std::string& log_text, bool have_log) {
  switch (stage_in_log(log_text)) {
    case Stage::Parse: return "the model did not parse (\"Failed to parse the model\" in log.txt)";
    case Stage::Device: return "no device (\"Failed to create a device\" in log.txt)";
    default: break;
  }
  return have_log ? "" : "no log.txt";
}

// The first `max_report` mismatches of one output, their count, and their coordinates where the
// walk over the tensor's coordinates is bounded by the buffer's size.
std::string compare_output(const fs::path& suite, const CaseSpec& c, const OutputSpec& o, const fs::path& result_dir,
                           std::size_t max_report, Outcome& out) {
  const fs::path case_dir = suite / c.op / c.name;
  const std::string& shown = o.result;  // reasons are escaped where they are shown
  const std::string expected_bytes = cli::read_regular_file((case_dir / o.expected).string(), kMaxSuiteFileBytes, false, false);
  const dmlref::NpyArray expected = dmlref::read_npy(
      std::as_bytes(std::span<const char>(expected_bytes.data(), expected_bytes.size())), o.expected);
  // A device's file may be at most the expected data plus the largest header numpy reads.
  const std::uint64_t limit = expected.bytes().size() + dmlref::kNpyMaxHeaderSize + dmlref::detail::kNpyMaxPreamble;
  std::string actual_bytes;
  try {
    actual_bytes = cli::read_regular_file((result_dir / o.result).string(), limit);
  } catch (const cli::FileRefused& e) {
    if (!fs::exists(fs::symlink_status(result_dir / o.result))) return o.tensor + ": no result file " + shown;
    return o.tensor + ": " + shown + " refused: " + e.raw_message();
  }
  dmlref::NpyArray actual;
  try {
    actual = dmlref::read_npy(std::as_bytes(std::span<const char>(actual_bytes.data(), actual_bytes.size())), o.result);
  } catch (const dmlref::Error& e) {
    return o.tensor + ": " + shown + " is not a .npy file of the output: " + e.what();
  }
  const DataType type = expected.data_type();
  if (actual.data_type() != type) {
    return o.tensor + ": " + shown + " holds " + std::string(dmlref::data_type_name(actual.data_type())) +
           " elements, expected " + std::string(dmlref::data_type_name(type));
  }
  if (actual.sizes() != expected.sizes() || actual.fortran_order()) {
    return o.tensor + ": " + shown + " has shape " + dmlref::Layout::packed(actual.sizes()).sizes_string() +
           (actual.fortran_order() ? " (Fortran order)" : "") + ", expected " +
           dmlref::Layout::packed(expected.sizes()).sizes_string();
  }
  const std::size_t esize = dmlref::element_size(type);
  const std::uint64_t count = expected.bytes().size() / esize;
  std::uint64_t mismatches = 0;
  struct Raw {
    std::uint64_t element, expected, actual;
    const std::vector<std::uint64_t>* accept;
  };
  std::vector<Raw> first;
  for (std::uint64_t e = 0; e < count; ++e) {
    const std::uint64_t x = element_at(expected.bytes().data(), esize, e);
    const std::uint64_t a = element_at(actual.bytes().data(), esize, e);
    if (a == x) continue;
    const auto it = o.accept.find(e);
    if (it != o.accept.end() && std::find(it->second.begin(), it->second.end(), a) != it->second.end()) continue;
    ++mismatches;
    if (first.size() < max_report) first.push_back({e, x, a, it == o.accept.end() ? nullptr : &it->second});
  }
  if (mismatches == 0) return "";
  // Name each reported element by its coordinate, or as padding. The walk visits every coordinate
  // of the tensor: only when they are no more than the buffer's elements (a correct output tensor
  // never addresses an element twice), so no description can make it cost more than the data.
  std::map<std::uint64_t, std::string> coords;
  try {
    const Json model = read_listed_json(suite, c.path + "/model.json");
    const Json& desc = model.at("dispatchables").members().at(0).second.at("desc");
    const Json* t = nullptr;
    if (const auto bracket = o.tensor.find('['); bracket != std::string::npos) {
      std::size_t i = 0;
      std::from_chars(o.tensor.data() + bracket + 1, o.tensor.data() + o.tensor.size(), i);
      t = &desc.at(o.tensor.substr(0, bracket)).items().at(i);
    } else {
      t = &desc.at(o.tensor);
    }
    std::list<detail::DescStore> store;
    const dmlref::Layout layout = dmlref::detail::layout_of_desc(*detail::parse_tensor(store, *t));
    std::uint64_t coordinates = 1;  // saturates: 65535^8 must not wrap around
    for (std::uint32_t d = 0; d < layout.rank && coordinates <= count; ++d) {
      const auto size = static_cast<std::uint64_t>(layout.sizes[d]);
      coordinates = size != 0 && coordinates > count / size ? count + 1 : coordinates * size;
    }
    if (coordinates <= count) {
      std::set<std::uint64_t> wanted;
      for (const Raw& m : first) wanted.insert(m.element);
      dmlref::for_each_coordinate(layout, [&](const dmlref::Coord& co) {
        const auto offset = static_cast<std::uint64_t>(layout.offset(co));
        if (wanted.count(offset) != 0 && coords.count(offset) == 0) {
          coords[offset] = dmlref::detail::coordinate_string(co, layout.rank);
        }
      });
    }
  } catch (const std::exception&) {
    coords.clear();  // the report still names buffer elements
  }
  for (const Raw& m : first) {
    Mismatch r;
    r.tensor = o.tensor;
    r.element = m.element;
    if (const auto it = coords.find(m.element); it != coords.end()) r.coordinate = it->second;
    if (m.accept != nullptr) {
      r.expected = "one of {";
      for (std::size_t i = 0; i < m.accept->size(); ++i) r.expected += (i == 0 ? "" : ", ") + format_bits(type, (*m.accept)[i]);
      r.expected += "}";
    } else {
      r.expected = format_bits(type, m.expected);
    }
    r.actual = format_bits(type, m.actual);
    out.mismatches.push_back(std::move(r));
  }
  out.more_mismatches += mismatches - first.size();
  return o.tensor + ": " + std::to_string(mismatches) + " of " + std::to_string(count) + " buffer elements differ";
}

Outcome judge(const fs::path& suite, const fs::path& results, const CaseSpec& c, std::size_t max_report) {
  Outcome o;
  o.op = c.op;
  o.name = c.name;
  o.valid = c.valid;
  o.rule = c.rule;
  o.stage = c.stage;
  o.undocumented = c.undocumented;
  const fs::path dir = results / c.op / c.name;
  const fs::path exit_path = dir / "exit_code";
  if (!fs::exists(fs::symlink_status(exit_path))) {
    o.status = Status::NotRun;
    o.reason = "not run (no " + c.path + "/exit_code in the results)";
    return o;
  }
  o.status = Status::Failed;
  std::optional<ExitCode> code;
  try {
    code = parse_exit_code(cli::read_regular_file(exit_path.string(), kMaxExitCodeBytes));
  } catch (const cli::FileRefused& e) {
    o.reason = "exit_code refused: " + e.raw_message();
    return o;
  }
  if (!code) {
    o.reason = "exit_code holds neither a number nor the word timeout";
    return o;
  }
  if (code->timeout) {
    o.status = Status::Timeout;
    o.reason = "the run was killed by the runner's timeout";
    return o;
  }
  std::string log;
  bool have_log = true;
  try {
    log = cli::read_regular_file((dir / "log.txt").string(), kMaxLogBytes, /*prefix=*/true);
  } catch (const cli::FileRefused&) {
    have_log = false;
  }
  // PowerShell 5's own redirection writes UTF-16: its messages are found in the low bytes.
  if (log.rfind("\xFF\xFE", 0) == 0) {
    std::string narrow;
    for (std::size_t i = 2; i + 1 < log.size(); i += 2) narrow += log[i + 1] == '\0' ? log[i] : '?';
    log = std::move(narrow);
  }
  const std::string code_text = std::to_string(code->value);
  if (!c.valid) {
    if (code->value == 0) {
      o.reason = "accepted an invalid case (exit code 0); it breaks " + c.rule + ": " + c.why;
      return o;
    }
    const Stage stage = stage_in_log(log);
    const Stage want = c.stage == "bind" ? Stage::Bind : Stage::Create;
    if (stage == want) {
      o.status = Status::Passed;
      return o;
    }
    if (stage == Stage::Parse || stage == Stage::Device) {
      o.reason = log_reason(log, have_log) + ", exit code " + code_text + "; it breaks " + c.rule +
                 ", which DirectML refuses at " + c.stage;
    } else if (stage == Stage::Create || stage == Stage::Bind) {
      o.reason = std::string("failed at ") + (stage == Stage::Create ? "create" : "bind") +
                 " (exit code " + code_text + "), but DirectML refuses " + c.rule + " at " + c.stage;
    } else if (crash_code(code->value)) {
      o.reason = "crashed (exit code " + code_text + ") instead of refusing " + c.rule + " at " + c.stage;
    } else {
      o.reason = "exit code " + code_text + " without DirectML's refusal at " + c.stage + " in log.txt (\"" +
                 (c.stage == "bind" ? "ERROR while binding resources" : "ERROR creating dispatchable") +
                 "\"); it breaks " + c.rule;
    }
    return o;
  }
  if (code->value != 0) {
    const std::string why = log_reason(log, have_log);
    o.reason = (crash_code(code->value) ? "crashed: exit code " : "exit code ") + code_text + " for a valid case" +
               (why.empty() ? " (see log.txt in its results)" : "; " + why);
    return o;
  }
  std::vector<std::string> reasons;
  for (const OutputSpec& out : c.outputs) {
    std::string r;
    try {
      r = compare_output(suite, c, out, dir, max_report, o);
    } catch (const cli::FileRefused& e) {
      throw TamperedSuite(std::string("the suite is damaged: ") + e.what());
    } catch (const dmlref::Error& e) {
      throw TamperedSuite(std::string("the suite is damaged: ") + e.what());
    }
    if (!r.empty()) reasons.push_back(r);
  }
  if (reasons.empty()) {
    o.status = Status::Passed;
    return o;
  }
  for (std::size_t i = 0; i < reasons.size(); ++i) o.reason += (i == 0 ? "" : "; ") + reasons[i];
  return o;
}

// ------------------------------------------------------------------------------------------------
// Reports

std::string xml_escape(const std::string& raw) {
  const std::string s = display_text(raw);  // valid UTF-8, no control characters
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string details_text(const Outcome& o) {
  std::ostringstream os;
  for (const Mismatch& m : o.mismatches) {
    os << "    ";
    if (!m.coordinate.empty()) {
      os << display_text(m.tensor) << m.coordinate << " (buffer element " << m.element << ")";
    } else {
      os << "buffer element " << m.element << " (padding " << display_text(m.tensor) << " does not address)";
    }
    os << ": expected " << m.expected << (m.coordinate.empty() && m.expected.rfind("one of", 0) != 0 ? " (the sentinel)" : "")
       << ", actual " << m.actual << "\n";
  }
  if (o.more_mismatches != 0) os << "    ... and " << o.more_mismatches << " more\n";
  return os.str();
}

// In JUnit, what does not decide verify's exit status is "skipped": expected failures, and cases
// whose behaviour DirectML does not document when they did not pass.
std::string junit_xml(const std::vector<std::string>& ops, const std::vector<Outcome>& outcomes) {
  const auto skipped_case = [](const Outcome& o) {
    return o.status == Status::ExpectedFailure || (o.undocumented && o.status != Status::Passed && o.status != Status::Fixed);
  };
  const auto failing = [&](const Outcome& o) {
    return o.status != Status::Passed && o.status != Status::Fixed && !skipped_case(o);
  };
  std::size_t failures = 0;
  for (const Outcome& o : outcomes) failures += failing(o) ? 1 : 0;
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<testsuites name=\"dmlref conformance\" tests=\"" << outcomes.size() << "\" failures=\"" << failures << "\">\n";
  for (const std::string& op : ops) {
    std::size_t tests = 0, failed = 0, skipped = 0;
    for (const Outcome& o : outcomes) {
      if (o.op != op) continue;
      ++tests;
      failed += failing(o) ? 1 : 0;
      skipped += skipped_case(o) ? 1 : 0;
    }
    os << "  <testsuite name=\"" << xml_escape(op) << "\" tests=\"" << tests << "\" failures=\"" << failed
       << "\" skipped=\"" << skipped << "\">\n";
    for (const Outcome& o : outcomes) {
      if (o.op != op) continue;
      os << "    <testcase classname=\"dmlref." << xml_escape(op) << "\" name=\"" << xml_escape(o.name) << "\"";
      if (o.status == Status::Passed || o.status == Status::Fixed) {
        os << "/>\n";
        continue;
      }
      os << ">\n";
      if (skipped_case(o)) {
        os << "      <skipped message=\"" << (o.status == Status::ExpectedFailure ? "expected failure: " : "undocumented: ")
           << xml_escape(o.reason) << "\"/>\n";
      } else {
        const char* type = o.status == Status::NotRun ? "not-run" : o.status == Status::Timeout ? "timeout" : "failed";
        os << "      <failure type=\"" << type << "\" message=\"" << xml_escape(o.reason) << "\">"
           << xml_escape(details_text(o)) << "</failure>\n";
      }
      os << "    </testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
  return os.str();
}

std::string json_report(const VerifyArgs& a, const std::vector<Outcome>& outcomes, std::size_t passed,
                        std::size_t failed) {
  Json j = Json::object();
  j.set("suite", display_text(a.suite));
  j.set("results", display_text(a.results));
  Json& summary = j.set("summary", Json::object());
  std::map<std::string, std::size_t> counts;
  for (const Outcome& o : outcomes) ++counts[status_name(o.status)];
  for (Status s : {Status::Passed, Status::Failed, Status::NotRun, Status::Timeout, Status::ExpectedFailure,
                   Status::Fixed}) {
    summary.set(status_name(s), static_cast<std::uint64_t>(counts[status_name(s)]));
  }
  summary.set("counted_passed", static_cast<std::uint64_t>(passed));
  summary.set("counted_failing", static_cast<std::uint64_t>(failed));
  Json& cases = j.set("cases", Json::array());
  for (const Outcome& o : outcomes) {
    Json c = Json::object();
    c.set("name", display_text(o.op + "/" + o.name));
    c.set("op", display_text(o.op));
    c.set("valid", o.valid);
    if (!o.valid) {
      c.set("rule", display_text(o.rule));
      c.set("stage", display_text(o.stage));
      c.set("undocumented", o.undocumented);
    }
    c.set("status", status_name(o.status));
    c.set("reason", display_text(o.reason));
    Json& list = c.set("mismatches", Json::array());
    for (const Mismatch& m : o.mismatches) {
      Json e = Json::object();
      e.set("tensor", display_text(m.tensor));
      e.set("element", m.element);
      if (!m.coordinate.empty()) e.set("coordinate", m.coordinate);
      e.set("expected", m.expected);
      e.set("actual", m.actual);
      list.push(std::move(e));
    }
    if (o.more_mismatches != 0) c.set("more_mismatches", o.more_mismatches);
    cases.push(std::move(c));
  }
  return j.dump();
}

}  // namespace

int verify_main(int argc, char** argv) {
  bool help_shown = false;
  const VerifyArgs a = parse_verify(argc, argv, help_shown);
  if (help_shown) return 0;
  const fs::path suite = a.suite, results = a.results;

  // 1. The report targets: regular or new files, outside the suite, not one another.
  std::vector<std::pair<std::string, std::string>> targets;  // flag, path
  if (!a.json.empty()) targets.emplace_back("--json", a.json);
  if (!a.junit.empty()) targets.emplace_back("--junit", a.junit);
  for (const auto& [flag, path] : targets) check_target_place(flag, path, suite);
  // POSIX extended syntax, as the bash runner's --filter (=~) reads it.
  struct Filter {
    regex_t re{};
    bool active = false;
    ~Filter() {
      if (active) regfree(&re);
    }
    bool matches(const std::string& s) const { return !active || regexec(&re, s.c_str(), 0, nullptr, 0) == 0; }
  } filter;
  if (!a.filter.empty()) {
    const int error = regcomp(&filter.re, a.filter.c_str(), REG_EXTENDED | REG_NOSUB);
    if (error != 0) {
      char message[256];
      regerror(error, &filter.re, message, sizeof message);
      throw UsageError("verify: --filter '" + display_text(a.filter) + "' is not a regular expression: " + message);
    }
    filter.active = true;
  }
  std::set<std::string> expect_fail;
  if (!a.expect_fail.empty()) expect_fail = read_expect_fail(a.expect_fail);

  // 2. The suite against its manifest; then every case's description.
  const Json suite_json = read_suite_json(suite);
  const std::set<std::string> listed = check_manifest(suite, suite_json);
  std::vector<CaseSpec> cases;
  std::set<std::string> all_names;
  try {
    for (const Json& path : suite_json.at("cases").items()) {
      all_names.insert(path.str());
      if (!filter.matches(path.str())) continue;
      cases.push_back(load_case(suite, path.str(), listed));
    }
  } catch (const FormatError& e) {
    throw TamperedSuite(std::string("the suite is damaged: suite.json: ") + e.what());
  }
  for (const std::string& name : expect_fail) {
    if (all_names.count(name) == 0) {
      throw UsageError("verify: --expect-fail '" + display_text(a.expect_fail) + "' names '" + display_text(name) +
                       "', which is no case of the suite");
    }
  }

  // 3. No report may replace a file verify reads (device and inode: hard links and symlinks count).
  cli::SameFileIndex reads;
  const auto note_read = [&](const fs::path& p, const std::string& label) { (void)reads.add(p.string(), {label, false}); };
  note_read(suite / "suite.json", "the suite's suite.json");
  for (const std::string& rel : listed) note_read(suite / rel, "the suite's " + display_text(rel));
  if (!a.expect_fail.empty()) note_read(a.expect_fail, "the --expect-fail file");
  for (const CaseSpec& c : cases) {
    const fs::path dir = results / c.op / c.name;
    note_read(dir / "exit_code", "the result " + display_text(c.path) + "/exit_code");
    note_read(dir / "log.txt", "the result " + display_text(c.path) + "/log.txt");
    for (const OutputSpec& o : c.outputs) note_read(dir / o.result, "the result " + display_text(c.path + "/" + o.result));
  }
  for (const auto& [flag, path] : targets) {
    if (const auto same = reads.add(path, {flag, true})) {
      throw UsageError("verify: " + flag + " '" + display_text(path) + "' is " + same->label +
                       (same->is_output ? ": give two different files" : ", which verify reads; write the report elsewhere"));
    }
  }

  // 4. The reports opened before any case is judged: an unwritable one stops the run now.
  std::vector<std::unique_ptr<cli::AtomicOutput>> reports;
  for (const auto& [flag, path] : targets) {
    try {
      reports.push_back(std::make_unique<cli::AtomicOutput>(path));
    } catch (const dmlref::Error& e) {
      throw UsageError("verify: " + flag + ": " + e.what());
    }
  }

  // 5. The cases.
  std::vector<Outcome> outcomes;
  std::vector<std::string> ops;
  for (const CaseSpec& c : cases) {
    Outcome o = judge(suite, results, c, a.max_report);
    if (expect_fail.count(c.path) != 0) {
      if (o.status == Status::Passed) {
        o.status = Status::Fixed;
        o.reason = "listed in --expect-fail but passed";
      } else if (o.status != Status::NotRun) {
        o.status = Status::ExpectedFailure;
      }
    }
    if (std::find(ops.begin(), ops.end(), o.op) == ops.end()) ops.push_back(o.op);
    const std::string shown = display_text(c.path);
    const std::string tag = o.undocumented ? " [undocumented]" : "";
    switch (o.status) {
      case Status::Failed:
        std::cout << "FAIL" << tag << " " << shown << ": " << display_text(o.reason) << "\n" << details_text(o);
        break;
      case Status::NotRun: std::cout << "NOT RUN" << tag << " " << shown << "\n"; break;
      case Status::Timeout: std::cout << "TIMEOUT" << tag << " " << shown << "\n"; break;
      case Status::ExpectedFailure:
        std::cout << "EXPECTED FAILURE" << tag << " " << shown << ": " << display_text(o.reason) << "\n";
        break;
      case Status::Fixed: std::cout << "FIXED" << tag << " " << shown << ": " << display_text(o.reason) << "\n"; break;
      case Status::Passed: break;
    }
    outcomes.push_back(std::move(o));
  }

  // 6. The summary: the cases whose rule DirectML documents decide the exit status; those whose
  // behaviour is undocumented are reported apart.
  std::size_t passed = 0, failing = 0;
  std::cout << "\nsummary:\n";
  for (const std::string& op : ops) {
    std::map<Status, std::size_t> n;
    std::size_t total = 0;
    for (const Outcome& o : outcomes) {
      if (o.op != op || o.undocumented) continue;
      ++n[o.status];
      ++total;
    }
    std::cout << "  " << display_text(op) << ": " << total << " cases, " << n[Status::Passed] << " passed, "
              << n[Status::Failed] << " failed, " << n[Status::NotRun] << " not run";
    if (n[Status::Timeout] != 0) std::cout << ", " << n[Status::Timeout] << " timeout";
    if (n[Status::ExpectedFailure] != 0) std::cout << ", " << n[Status::ExpectedFailure] << " expected failure";
    if (n[Status::Fixed] != 0) std::cout << ", " << n[Status::Fixed] << " fixed";
    std::cout << "\n";
  }
  std::map<Status, std::size_t> total, undocumented;
  for (const Outcome& o : outcomes) {
    ++(o.undocumented ? undocumented : total)[o.status];
    if (o.undocumented) continue;
    if (fails_run(o.status)) {
      ++failing;
    } else {
      ++passed;
    }
  }
  std::size_t undocumented_count = 0;
  for (const auto& [s, k] : undocumented) undocumented_count += k;
  if (undocumented_count != 0) {
    std::cout << "  undocumented (DirectML does not document its behaviour; not counted): " << undocumented_count
              << " cases, " << undocumented[Status::Passed] << " refused at the stage assumed, "
              << (undocumented_count - undocumented[Status::Passed]) << " not\n";
  }
  if (failing == 0) {
    std::cout << "all " << passed << " cases passed";
    if (total[Status::ExpectedFailure] + total[Status::Fixed] != 0) {
      std::cout << " (" << total[Status::ExpectedFailure] << " expected failure(s), " << total[Status::Fixed]
                << " fixed)";
    }
    std::cout << "\n";
  } else {
    std::cout << total[Status::Failed] << " failed, " << total[Status::NotRun] << " not run, " << total[Status::Timeout]
              << " timeout, " << passed << " passed\n";
  }

  for (std::size_t i = 0; i < targets.size(); ++i) {
    reports[i]->stream() << (targets[i].first == "--json" ? json_report(a, outcomes, passed, failing)
                                                          : junit_xml(ops, outcomes));
    reports[i]->finish();
  }
  for (auto& r : reports) r->commit();
  return failing == 0 ? 0 : 1;
}

}  // namespace dmlref_suite
