// dmlref-check: run one operator of the golden model on .npy inputs, then write the golden output
// (--out) and/or compare a device's output with it (--actual).
//
// Exit status: 0 written / matches, 1 does not match (the report says where and what), 2 bad usage
// or invalid input (the validation message says which rule). Outputs are staged in temporary files
// and renamed into place only when the call ends in 0 or 1; on 2 nothing is written. The command line
// is parsed by CLI11: add_operators() says which flags each operator command takes.
//
// It drives the runtime layer (DirectML-shaped descriptions built from the .npy files), so what it
// checks is what a GPU harness gets from the same call.
#include <dmlref/dmlref.hpp>
#include <dmlref/compare.hpp>
#include <dmlref/npy.hpp>
#include <dmlref/ops/gather_nd1.hpp>
#include <dmlref/ops/join.hpp>
#include <dmlref/ops/reverse_subsequences.hpp>
#include <dmlref/ops/scatter.hpp>
#include <dmlref/ops/split.hpp>
#include <dmlref/version.hpp>

#include "cli_files.hpp"

#include "suite_commands.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

using namespace dmlref;

// What `dmlref-check --help` adds below CLI11's list of commands; each command's own --help lists
// its flags (CLI11 writes those from the option descriptions below).
constexpr const char* kFooter = R"(Each operator command runs that DirectML operator of dmlref's golden model on .npy inputs.
With --out it writes the golden output; with --actual it compares a device's output with it
(bit-exact unless --nan-equal / --ulp). Both may be given. `dmlref-check OPERATOR --help` lists an
operator's flags, `dmlref-check --help-all` every command's. Flags take their value as the next
argument or after '=' (--axis=1, --axis -1).

exit status: 0 written / matches, 1 does not match, 2 bad usage or invalid input.
A call that exits 2 writes nothing: --out files are written to a temporary file next to the
target and renamed into place only once everything (the comparison included) has succeeded.

conformance suites of DxDispatch models (docs/suite.md; `dmlref-check generate --help`):
  generate --out DIR [--ops join,split,...] [--feature-level 5_0] [--seed N] [--max-bytes M] [--overwrite]
  verify SUITE --results DIR [--filter REGEX] [--expect-fail FILE] [--json FILE] [--junit FILE]
         [--max-report N]
docs/cli.md describes every command and how its flags map to DirectML's desc fields.)";

constexpr const char* kOperatorNames = "join, split, scatter, gather_nd1, reverse_subsequences";

// Sizes without their leading 1s, keeping at least `keep` dimensions ({1,1,3} -> {3}, {1} -> {1}).
std::vector<std::uint32_t> without_leading_ones(std::vector<std::uint32_t> s,
                                                std::size_t keep = 1) {
  std::size_t drop = 0;
  while (s.size() - drop > keep && s[drop] == 1) ++drop;
  s.erase(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(drop));
  return s;
}

// A mistake in what was asked for (exit 2), found after CLI11 parsed the command line.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The command line after CLI11 parsed it: the operator and every value of every flag given, as
// typed (each checked by its option's validator already).
struct Args {
  std::string op;
  std::map<std::string, std::vector<std::string>> values;  // flag -> every value given

  bool has(const std::string& flag) const { return values.count(flag) != 0; }
  const std::vector<std::string>& all(const std::string& flag) const {
    static const std::vector<std::string> kNone;
    const auto it = values.find(flag);
    return it == values.end() ? kNone : it->second;
  }
  std::string one(const std::string& flag) const {
    if (!has(flag)) throw UsageError(op + " needs " + flag);
    return all(flag).front();
  }
};

// An integer in [0, max], or nothing.
std::optional<std::uint64_t> to_uint(std::string_view text, std::uint64_t max) {
  if (text.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || v > (max - static_cast<std::uint64_t>(c - '0')) / 10) {
      return std::nullopt;
    }
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

std::uint64_t parse_uint(const std::string& text, std::uint64_t max) {
  const auto v = to_uint(text, max);
  if (!v) throw UsageError(text + " is not an integer in [0, " + std::to_string(max) + "]");
  return *v;
}

std::uint32_t parse_u32(const Args& args, const std::string& flag) {
  return static_cast<std::uint32_t>(parse_uint(args.one(flag), 0xFFFFFFFFu));
}

// CLI11 validators: the message says what the flag allows ("--ulp: x is not an integer in
// [0, 18446744073709551615]"; CLI11 puts the flag's name in front).
CLI::Validator whole_number(std::uint64_t max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        if (to_uint(text, max)) return {};
        return text + " is not an integer in [0, " + std::to_string(max) + "]";
      },
      "");
}

CLI::Validator number_list() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::size_t start = 0;
        for (;;) {
          const std::size_t comma = text.find(',', start);
          const std::string part = text.substr(start, comma - start);
          if (!to_uint(part, 0xFFFFFFFFu)) {
            return "'" + text + "' is not a comma-separated list of integers in [0, 4294967295] (" +
                   (part.empty() ? std::string("an empty entry") : "'" + part + "'") + ")";
          }
          if (comma == std::string::npos) return {};
          start = comma + 1;
        }
      },
      "");
}

// An axis is an integer: 0 .. rank-1, or -rank .. -1 counting from the end as in numpy. Only its
// form is checked here; the range needs the input's rank (parse_axis).
CLI::Validator axis_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::string_view digits =
            text.empty() || text[0] != '-' ? std::string_view(text) : std::string_view(text).substr(1);
        if (to_uint(digits, ~std::uint64_t{0})) return {};
        return text + " is not an integer; an axis counts from 0, or from the end when negative "
                      "(-1 is the last dimension)";
      },
      "");
}

// --axis against the rank it indexes: 0..rank-1, or -rank..-1 counting from the end (numpy). A
// non-negative value past the rank (but within DirectML's UINT Axis) is left to the operator's
// own rule (J4, S4, ...), which names DirectML's field.
std::uint32_t parse_axis(const Args& args, std::uint32_t rank) {
  const std::string text = args.one("--axis");
  const bool negative = text[0] == '-';
  const auto magnitude = to_uint(negative ? text.substr(1) : text, ~std::uint64_t{0});
  if (!negative && magnitude && *magnitude <= 0xFFFFFFFFu) return static_cast<std::uint32_t>(*magnitude);
  if (negative && magnitude && *magnitude <= rank) {
    const auto back = static_cast<std::uint32_t>(*magnitude);
    return back == 0 ? 0 : rank - back;
  }
  throw UsageError("--axis " + text + " is outside [-" + std::to_string(rank) + ", " +
                   std::to_string(rank - 1) + "] for the " + std::to_string(rank) + "-d input");
}

std::vector<std::uint32_t> parse_list(const std::string& text) {
  std::vector<std::uint32_t> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    out.push_back(static_cast<std::uint32_t>(parse_uint(text.substr(start, comma - start), 0xFFFFFFFFu)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

CLI::Validator feature_level_name_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (dmlref::find_feature_level(text)) return {};
        std::string known;
        for (FeatureLevel level : dmlref::kFeatureLevels) {
          if (!known.empty()) known += ' ';
          known += dmlref::feature_level_short_name(level);
        }
        return text + " is not a DirectML feature level (" + known + ")";
      },
      "");
}

// The flags of each operator command, as CLI11 options. Every value is kept as typed (validated
// here) and read into Args after the parse, so the operators keep one representation of it.
struct Command {
  CLI::App* app = nullptr;
  std::vector<CLI::Option*> options;
};

Command add_operator(CLI::App& app, const std::string& name, const std::string& description) {
  Command c{app.add_subcommand(name, description), {}};
  c.app->group("Commands");
  // Unknown flags are collected, not refused by CLI11, so the message can say which operator a
  // misplaced flag belongs to.
  c.app->allow_extras();
  return c;
}

CLI::Option* value(Command& c, const std::string& flag, const std::string& help,
                   const std::string& type = "FILE") {
  CLI::Option* o = c.app->add_option(flag, help);
  o->type_name(type);
  c.options.push_back(o);
  return o;
}

CLI::Option* files(Command& c, const std::string& flag, const std::string& help) {
  CLI::Option* o = value(c, flag, help);
  o->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return o;
}

CLI::Option* flag(Command& c, const std::string& name, const std::string& help) {
  CLI::Option* o = c.app->add_flag(name, help);
  c.options.push_back(o);
  return o;
}

CLI::Option* axis(Command& c, const std::string& help) {
  return value(c, "--axis", help, "INT")->required()->check(axis_number());
}

constexpr const char* kAxisHelp =
    "Axis: 0 .. rank-1, or -rank .. -1 counting from the end as in numpy";

void add_common(Command& c) {
  const std::string group = "Output and comparison";
  files(c, "--out",
        "write the golden output (C order, .npy 1.0); never the same file as one the call reads")
      ->group(group);
  files(c, "--actual",
        "the device's output to compare with the golden one (its sizes may differ by leading 1s)")
      ->group(group);
  files(c, "--untouched",
        "the output buffer's contents before the dispatch, so a skipped dispatch is named")
      ->group(group);
  flag(c, "--nan-equal", "every NaN equals every NaN (float types)")->group(group);
  value(c, "--ulp", "float elements within N ULP match; -0 == +0", "N")
      ->check(whole_number(~std::uint64_t{0}))
      ->group(group);
  value(c, "--max-report", "how many differing elements to list (default 10)", "N")
      ->check(whole_number(1000000000))
      ->group(group);
  value(c, "--feature-level",
        "the DirectML feature level to validate against, e.g. 4_1 (default: the newest)", "LEVEL")
      ->check(feature_level_name_check())
      ->group(group);
}

std::vector<Command> add_operators(CLI::App& app) {
  std::vector<Command> commands;
  {
    Command c = add_operator(app, "join", "DML_JOIN_OPERATOR_DESC: concatenate the inputs along --axis");
    axis(c, std::string(kAxisHelp) + " (of the first input)");
    files(c, "--input", "InputTensors[i], once per input, in order")->required();
    commands.push_back(c);
  }
  {
    Command c = add_operator(app, "split",
                             "DML_SPLIT_OPERATOR_DESC: split the input along --axis into pieces "
                             "that keep its rank (as numpy.split)");
    axis(c, kAxisHelp);
    value(c, "--input", "InputTensor")->required();
    CLI::Option* pieces =
        value(c, "--pieces", "the pieces' sizes along the axis, e.g. 2,1,3", "N,N,...")
            ->check(number_list());
    value(c, "--count", "N equal pieces", "N")->check(whole_number(0xFFFFFFFFu))->excludes(pieces);
    value(c, "--out-prefix", "write piece i to PREFIXi.npy (instead of --out once per piece)",
          "PREFIX");
    commands.push_back(c);
  }
  {
    Command c = add_operator(app, "scatter",
                             "DML_SCATTER_OPERATOR_DESC (scatter elements): the input with each "
                             "update stored where its index says along --axis");
    axis(c, kAxisHelp);
    value(c, "--input", "InputTensor")->required();
    value(c, "--indices", "IndicesTensor (any integer type; negative counts from the end)")
        ->required();
    value(c, "--updates", "UpdatesTensor, shaped like the indices")->required();
    flag(c, "--clamp-indices",
         "an index outside [-n, n-1] is clamped into [0, n-1] instead of being an error");
    value(c, "--duplicates",
          "last (default): where updates collide the last one in row-major order is written and "
          "--actual accepts any of them; reject: colliding updates are an error (exit 2)",
          "last|reject")
        ->check(CLI::IsMember({"last", "reject"}));
    commands.push_back(c);
  }
  {
    Command c = add_operator(
        app, "gather_nd1",
        "DML_GATHER_ND1_OPERATOR_DESC (ONNX GatherND): gather the slices the index tuples name; "
        "the output is written and reported with numpy's/ONNX's shape");
    value(c, "--input", "InputTensor")->required();
    value(c, "--indices", "IndicesTensor (any integer type; negative counts from the end)")
        ->required();
    value(c, "--input-dims", "InputDimensionCount r (default: the input file's rank)", "N")
        ->check(whole_number(0xFFFFFFFFu));
    value(c, "--indices-dims", "IndicesDimensionCount q (default: the indices file's rank)", "N")
        ->check(whole_number(0xFFFFFFFFu));
    value(c, "--batch-dims", "BatchDimensionCount b (default 0), as ONNX's batch_dims", "N")
        ->check(whole_number(0xFFFFFFFFu));
    flag(c, "--clamp-indices",
         "an index outside [-n, n-1] is clamped into [0, n-1] instead of being an error");
    commands.push_back(c);
  }
  {
    Command c = add_operator(app, "reverse_subsequences",
                             "DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC: reverse the first L elements "
                             "of each sequence along --axis");
    axis(c, kAxisHelp);
    value(c, "--input", "InputTensor")->required();
    value(c, "--lengths",
          "SequenceLengthsTensor: the input's sizes with 1 at the axis, or without the axis; any "
          "integer type whose values are lengths (>= 0)")
        ->required();
    commands.push_back(c);
  }
  for (Command& c : commands) {
    add_common(c);
    c.app->footer("exit status: 0 written / matches, 1 does not match, 2 bad usage or invalid input "
                  "(nothing is written).\ndocs/cli.md: what each flag means in DirectML's terms.");
  }
  return commands;
}

// Which operator command owns `flag` (for the message about a misplaced one), or "".
std::string owner_of(const std::vector<Command>& commands, const std::string& flag) {
  for (const Command& c : commands) {
    for (const CLI::Option* o : c.options) {
      if (o->check_name(flag)) return c.app->get_name();
    }
  }
  return "";
}

// The parsed command line of the operator command that was given.
Args args_of(const std::vector<Command>& commands) {
  for (const Command& c : commands) {
    if (!c.app->parsed()) continue;
    Args args;
    args.op = c.app->get_name();
    const std::vector<std::string> extras = c.app->remaining();
    if (!extras.empty()) {
      // CLI11 keeps "--flag=value" whole; the flag is the part before '='.
      const std::string& first = extras.front();
      const std::string flag_name = first.substr(0, first.find('='));
      if (flag_name.rfind("-", 0) != 0) {
        throw UsageError("unexpected argument '" + first + "' for " + args.op +
                         " (every value follows its flag)");
      }
      const std::string owner = owner_of(commands, flag_name);
      throw UsageError(owner.empty() ? "unknown flag '" + flag_name + "' for " + args.op
                                     : flag_name + " is not a flag of " + args.op + " (it is one of " +
                                           owner + ")");
    }
    for (const CLI::Option* o : c.options) {
      if (o->count() == 0) continue;
      std::vector<std::string>& v = args.values[o->get_name()];
      if (o->get_expected_min() == 0) {
        v.push_back("");  // a switch
      } else {
        v = o->results();
      }
    }
    return args;
  }
  throw UsageError(std::string("no operator given; the operators are ") + kOperatorNames);
}

// The array under `sizes`, when its sizes equal `sizes` up to leading 1s (DirectML pads ranks with
// leading 1s: a 4-d JOIN output read back as a 2-d array is the same data). A C-order array is
// reshaped in place; a Fortran-order one is copied. Anything else cannot be compared: a usage
// error naming both.
NpyArray conform(NpyArray a, const std::vector<std::uint32_t>& sizes, DataType type,
                 const std::string& role) {
  if (a.data_type() != type) {
    throw UsageError(role + " '" + a.name() + "' holds " + std::string(data_type_name(a.data_type())) +
                     " elements but the output is " + std::string(data_type_name(type)));
  }
  const Layout want = Layout::packed(sizes);
  if (without_leading_ones(a.sizes()) != without_leading_ones(sizes)) {
    throw UsageError(role + " '" + a.name() + "' has sizes " + a.layout().sizes_string() +
                     " but the output has " + want.sizes_string());
  }
  if (!a.fortran_order()) {
    a.reshape(sizes);
    return a;
  }
  // The same elements under the wanted sizes: trailing dimensions keep their strides, the
  // leading 1s address nothing.
  Layout view_layout = want;
  const std::uint32_t shift_in = a.rank(), shift_out = want.rank;
  for (std::uint32_t d = 0; d < want.rank; ++d) view_layout.strides[d] = 0;
  for (std::uint32_t k = 1; k <= std::min(shift_in, shift_out); ++k) {
    view_layout.strides[shift_out - k] = a.layout().strides[shift_in - k];
  }
  return visit(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return NpyArray::from_view(TensorView<const T>(a.view<T>().data(), view_layout), a.name());
  });
}


// The same array in C order (a Fortran-order one is copied), so it can be reshaped.
NpyArray c_order(NpyArray a) {
  if (!a.fortran_order()) return a;
  return visit(a.data_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return NpyArray::from_view(a.view<T>(), a.name());
  });
}

// `a`'s integer values as elements of To (each fits: the callers check).
template <class To>
NpyArray converted(const NpyArray& a) {
  NpyArray out(data_type_of<To>, a.sizes(), false, a.name());
  const TensorView<To> dst = out.view<To>();
  visit(a.data_type(), [&](auto tag) {
    using From = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<From>) {
      const TensorView<const From> src = a.view<From>();
      for_each_coordinate(src.layout(), [&](const Coord& c) { dst[c] = static_cast<To>(src[c]); });
    }
  });
  return out;
}

bool is_narrow_integer(DataType t) {
  return t == DataType::Int8 || t == DataType::Int16 || t == DataType::UInt8 ||
         t == DataType::UInt16;
}

// Indices of numpy's narrow integer types widened to the 32-bit type of the same signedness,
// which every feature level takes (SC3, G3); the values are unchanged.
NpyArray as_indices(NpyArray a) {
  if (!is_narrow_integer(a.data_type())) return a;
  const bool is_signed = a.data_type() == DataType::Int8 || a.data_type() == DataType::Int16;
  return is_signed ? converted<std::int32_t>(a) : converted<std::uint32_t>(a);
}

// Lengths of any integer type (numpy's default is int64): DirectML takes UINT32 or UINT64 (R4),
// so the values are converted when every one is a length, to UINT32 when each fits in it (every
// feature level takes UINT32), else to UINT64. A negative value is an error naming it.
NpyArray as_lengths(NpyArray a) {
  const DataType t = a.data_type();
  if (t == DataType::UInt32 || t == DataType::UInt64) return a;
  bool fits_u32 = true;
  const bool integral = visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      const TensorView<const T> v = a.view<T>();
      for_each_coordinate(v.layout(), [&](const Coord& c) {
        if constexpr (std::is_signed_v<T>) {
          if (v[c] < 0) {
            throw UsageError("REVERSE_SUBSEQUENCES: --lengths '" + a.name() + "' holds " +
                             std::string(data_type_name(t)) + " values and the one at " +
                             detail::coordinate_string(c, v.layout().rank) + " is " +
                             std::to_string(v[c]) +
                             "; a length is at least 0 (SequenceLengthsTensor.DataType is "
                             "UINT32 or UINT64) [R4]");
          }
        }
        if (static_cast<std::uint64_t>(v[c]) > 0xFFFFFFFFu) fits_u32 = false;
      });
      return true;
    } else {
      return false;
    }
  });
  if (!integral) return a;  // floats stay as they are: R4 names their type
  return fits_u32 ? converted<std::uint32_t>(a) : converted<std::uint64_t>(a);
}

struct Outputs {
  std::vector<NpyArray> arrays;
  std::vector<std::string> names;  // DirectML's: OutputTensor, OutputTensors[i]
  // The sizes each output is written with, where they differ from DirectML's (GATHER_ND1's
  // leading 1s dropped, as numpy/ONNX shape it); empty otherwise.
  std::vector<std::vector<std::uint32_t>> file_sizes;
};

std::vector<std::uint32_t> padded(const std::vector<std::uint32_t>& sizes, std::size_t rank) {
  std::vector<std::uint32_t> out(rank - sizes.size(), 1);
  out.insert(out.end(), sizes.begin(), sizes.end());
  return out;
}

class Checker {
 public:
  explicit Checker(Args args) : args_(std::move(args)) {
    if (args_.has("--feature-level")) level_ = *dmlref::find_feature_level(args_.one("--feature-level"));
    if (args_.has("--max-report")) {
      compare_.max_report = static_cast<std::size_t>(parse_uint(args_.one("--max-report"), 1000000000));
    }
    compare_.nan_equal = args_.has("--nan-equal");
    if (args_.has("--ulp")) compare_.ulp_tolerance = parse_uint(args_.one("--ulp"), ~std::uint64_t{0});
    if (!args_.has("--out") && !args_.has("--out-prefix") && !args_.has("--actual")) {
      throw UsageError("nothing to do: give --out (or --out-prefix) to write the golden output, "
                       "--actual to compare one, or both");
    }
  }

  // Compute, then stage every --out in a temporary file, then compare, and only then move the
  // staged files into place: any failure on the way (exit 2) leaves every file as it was.
  int run() {
    compute();
    const auto paths = out_paths();
    refuse_overwriting_inputs(paths);
    std::vector<std::unique_ptr<cli::AtomicOutput>> staged;
    for (std::size_t i = 0; i < paths.size(); ++i) staged.push_back(stage(paths[i], i));
    const int verdict = check();
    for (std::size_t i = 0; i < staged.size(); ++i) {
      staged[i]->commit();
      std::cout << "wrote " << paths[i] << ": " << outputs_.names[i] << " "
                << data_type_name(outputs_.arrays[i].data_type()) << " "
                << Layout::packed(written_sizes(i)).sizes_string() << "\n";
    }
    return verdict;
  }

 private:
  NpyArray load(const std::string& path) { return read_npy(std::filesystem::path(path)); }

  void compute() {
    const std::string& op = args_.op;
    if (op == "join") return run_join();
    if (op == "split") return run_split();
    if (op == "scatter") return run_scatter();
    if (op == "gather_nd1") return run_gather_nd1();
    return run_reverse_subsequences();
  }

  NpyArray& add_output(DataType type, std::vector<std::uint32_t> sizes, std::string name) {
    outputs_.arrays.emplace_back(type, std::move(sizes), false, name);
    outputs_.names.push_back(std::move(name));
    return outputs_.arrays.back();
  }

  void run_join() {
    for (const std::string& path : args_.all("--input")) inputs_.push_back(load(path));
    const std::uint32_t axis = parse_axis(args_, inputs_[0].rank());
    std::vector<std::vector<std::uint32_t>> sizes;
    std::vector<BufferTensorDesc> descs;
    std::vector<ConstBuffer> buffers;
    for (const NpyArray& a : inputs_) {
      sizes.push_back(a.sizes());
      descs.push_back(a.desc());
      buffers.push_back(a.buffer());
    }
    const auto out_sizes = infer_join_output_sizes(sizes, axis);
    NpyArray& out = add_output(inputs_[0].data_type(), out_sizes, "OutputTensor");
    const BufferTensorDesc out_desc = out.desc();
    JoinOperatorDesc desc;
    desc.InputCount = static_cast<std::uint32_t>(descs.size());
    desc.InputTensors = descs.data();
    desc.OutputTensor = &out_desc;
    desc.Axis = axis;
    JoinOptions options;
    options.feature_level = level_;
    join(desc, buffers, out.buffer(), options);
  }

  void run_split() {
    const NpyArray& input = inputs_.emplace_back(load(args_.one("--input")));
    const std::uint32_t axis = parse_axis(args_, input.rank());
    if (args_.has("--pieces") == args_.has("--count")) {
      throw UsageError("split needs exactly one of --pieces a,b,... and --count N");
    }
    const auto sizes =
        args_.has("--pieces")
            ? infer_split_output_sizes(input.sizes(), axis, parse_list(args_.one("--pieces")))
            : infer_split_output_sizes(input.sizes(), axis, parse_u32(args_, "--count"));
    outputs_.arrays.reserve(sizes.size());  // descs below point into the arrays
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      std::string name = "OutputTensors[";
      name += std::to_string(i);
      add_output(input.data_type(), sizes[i], name + "]");
    }
    std::vector<BufferTensorDesc> descs;
    std::vector<Buffer> buffers;
    for (NpyArray& a : outputs_.arrays) {
      descs.push_back(a.desc());
      buffers.push_back(a.buffer());
    }
    const BufferTensorDesc in_desc = input.desc();
    SplitOperatorDesc desc;
    desc.InputTensor = &in_desc;
    desc.OutputCount = static_cast<std::uint32_t>(descs.size());
    desc.OutputTensors = descs.data();
    desc.Axis = axis;
    SplitOptions options;
    options.feature_level = level_;
    split(desc, input.buffer(), buffers, options);
  }

  ScatterOptions scatter_options() const {
    ScatterOptions options;
    options.feature_level = level_;
    options.index_policy = args_.has("--clamp-indices") ? IndexPolicy::Clamp : IndexPolicy::Error;
    // CLI11 took only last or reject (IsMember); last is the default.
    if (args_.has("--duplicates") && args_.one("--duplicates") == "reject") {
      options.duplicates = DuplicatePolicy::Reject;
    }
    return options;
  }

  void run_scatter() {
    inputs_.push_back(load(args_.one("--input")));
    inputs_.push_back(as_indices(load(args_.one("--indices"))));
    inputs_.push_back(load(args_.one("--updates")));
    const std::uint32_t axis = parse_axis(args_, inputs_[0].rank());
    NpyArray& out = add_output(inputs_[0].data_type(), inputs_[0].sizes(), "OutputTensor");
    descs_ = {inputs_[0].desc(), inputs_[1].desc(), inputs_[2].desc(), out.desc()};
    scatter(scatter_desc(axis, &descs_[3]), inputs_[0].buffer(), inputs_[1].buffer(),
            inputs_[2].buffer(), out.buffer(), scatter_options());
    scatter_axis_ = axis;
  }

  ScatterOperatorDesc scatter_desc(std::uint32_t axis, const BufferTensorDesc* output) const {
    ScatterOperatorDesc desc;
    desc.InputTensor = &descs_[0];
    desc.IndicesTensor = &descs_[1];
    desc.UpdatesTensor = &descs_[2];
    desc.OutputTensor = output;
    desc.Axis = axis;
    return desc;
  }

  void run_gather_nd1() {
    NpyArray input = load(args_.one("--input"));
    NpyArray indices = as_indices(load(args_.one("--indices")));
    const std::uint32_t r = args_.has("--input-dims") ? parse_u32(args_, "--input-dims") : input.rank();
    const std::uint32_t q =
        args_.has("--indices-dims") ? parse_u32(args_, "--indices-dims") : indices.rank();
    const std::uint32_t b = args_.has("--batch-dims") ? parse_u32(args_, "--batch-dims") : 0;
    const std::size_t rank = std::max(input.rank(), indices.rank());
    if (input.rank() < rank) {
      const auto sizes = padded(input.sizes(), rank);
      const DataType type = input.data_type();
      input = conform(std::move(input), sizes, type, "--input");
    }
    if (indices.rank() < rank) {
      const auto sizes = padded(indices.sizes(), rank);
      const DataType type = indices.data_type();
      indices = conform(std::move(indices), sizes, type, "--indices");
    }
    inputs_.push_back(std::move(input));
    inputs_.push_back(std::move(indices));
    const auto sizes = infer_gather_nd1_output_sizes(inputs_[0].sizes(), inputs_[1].sizes(), r, q, b);
    NpyArray& out = add_output(inputs_[0].data_type(), sizes, "OutputTensor");
    // numpy/ONNX: rank (q - 1) + (r - b - m); DirectML pads it with leading 1s to the shared rank.
    const std::uint32_t m = inputs_[1].sizes().back();
    const std::size_t numpy_rank = std::max<std::size_t>(1, q - 1 + r - b - m);
    outputs_.file_sizes.push_back(without_leading_ones(sizes, numpy_rank));
    const BufferTensorDesc in_desc = inputs_[0].desc(), idx_desc = inputs_[1].desc(),
                           out_desc = out.desc();
    GatherNd1OperatorDesc desc;
    desc.InputTensor = &in_desc;
    desc.IndicesTensor = &idx_desc;
    desc.OutputTensor = &out_desc;
    desc.InputDimensionCount = r;
    desc.IndicesDimensionCount = q;
    desc.BatchDimensionCount = b;
    GatherNd1Options options;
    options.feature_level = level_;
    options.index_policy = args_.has("--clamp-indices") ? IndexPolicy::Clamp : IndexPolicy::Error;
    gather_nd1(desc, inputs_[0].buffer(), inputs_[1].buffer(), out.buffer(), options);
  }

  void run_reverse_subsequences() {
    inputs_.push_back(load(args_.one("--input")));
    NpyArray lengths = as_lengths(load(args_.one("--lengths")));
    const std::uint32_t axis = parse_axis(args_, inputs_[0].rank());
    // Lengths without the axis dimension (numpy's natural shape) get it back, as size 1 (R3).
    if (lengths.rank() + 1 == inputs_[0].rank() && axis < inputs_[0].rank()) {
      std::vector<std::uint32_t> sizes = lengths.sizes();
      sizes.insert(sizes.begin() + axis, 1);
      lengths = c_order(std::move(lengths));
      lengths.reshape(sizes);
    }
    inputs_.push_back(std::move(lengths));
    NpyArray& out = add_output(inputs_[0].data_type(), inputs_[0].sizes(), "OutputTensor");
    const BufferTensorDesc in_desc = inputs_[0].desc(), len_desc = inputs_[1].desc(),
                           out_desc = out.desc();
    ReverseSubsequencesOperatorDesc desc;
    desc.InputTensor = &in_desc;
    desc.SequenceLengthsTensor = &len_desc;
    desc.OutputTensor = &out_desc;
    desc.Axis = axis;
    ReverseSubsequencesOptions options;
    options.feature_level = level_;
    reverse_subsequences(desc, inputs_[0].buffer(), inputs_[1].buffer(), out.buffer(), options);
  }

  // The file names for the golden outputs, one per output, or none.
  std::vector<std::string> out_paths() const {
    const std::size_t n = outputs_.arrays.size();
    std::vector<std::string> paths = args_.all("--out");
    if (args_.has("--out-prefix")) {
      if (!paths.empty()) throw UsageError("give --out or --out-prefix, not both");
      for (std::size_t i = 0; i < n; ++i) {
        paths.push_back(args_.one("--out-prefix") + std::to_string(i) + ".npy");
      }
    }
    if (!paths.empty() && paths.size() != n) {
      throw UsageError(args_.op + " has " + std::to_string(n) + " output(s) but " +
                       std::to_string(paths.size()) + " --out were given" +
                       (args_.op == "split" ? " (or use --out-prefix)" : ""));
    }
    return paths;
  }

  // The sizes output i is written with.
  std::vector<std::uint32_t> written_sizes(std::size_t i) const {
    return i < outputs_.file_sizes.size() ? outputs_.file_sizes[i] : outputs_.arrays[i].sizes();
  }

  // Writes output i in full to a temporary file next to `path`; commit() moves it into place.
  std::unique_ptr<cli::AtomicOutput> stage(const std::string& path, std::size_t i) {
    auto file = std::make_unique<cli::AtomicOutput>(path);
    NpyArray& array = outputs_.arrays[i];
    const std::vector<std::uint32_t> sizes = array.sizes();
    array.reshape(written_sizes(i));
    write_npy(file->stream(), array);
    array.reshape(sizes);
    file->finish();
    return file;
  }

  // An --out that is the same file as anything the call reads (or as another --out) would
  // destroy it, and a device result overwritten by the golden one would then "match".
  void refuse_overwriting_inputs(const std::vector<std::string>& out_paths) const {
    static const char* const kRead[] = {"--input",   "--indices", "--updates",
                                        "--lengths", "--actual",  "--untouched"};
    const std::string out_flag = args_.has("--out-prefix") ? "--out-prefix" : "--out";
    const auto refuse = [](const std::string& first, const std::string& second) {
      throw UsageError(first + " and " + second +
                       " are the same file; writing the golden output would replace it (give "
                       "the output another file name)");
    };
    cli::SameFileIndex files;
    for (const std::string& path : out_paths) {
      const std::string label = out_flag + " '" + path + "'";
      if (const auto earlier = files.add(path, {label, true})) refuse(earlier->label, label);
    }
    if (!files.any_existing()) return;  // a file the call reads exists
    for (const char* flag : kRead) {
      for (const std::string& path : args_.all(flag)) {
        const std::string label = std::string(flag) + " '" + path + "'";
        const auto earlier = files.add(path, {label, false});
        if (earlier && earlier->is_output) refuse(earlier->label, label);
      }
    }
  }

  int check() {
    const auto& actual_paths = args_.all("--actual");
    const auto& untouched_paths = args_.all("--untouched");
    const std::size_t n = outputs_.arrays.size();
    if (actual_paths.empty()) {
      if (!untouched_paths.empty()) throw UsageError("--untouched needs --actual");
      return 0;
    }
    if (actual_paths.size() != n) {
      throw UsageError(args_.op + " has " + std::to_string(n) + " output(s) but " +
                       std::to_string(actual_paths.size()) + " --actual were given");
    }
    if (!untouched_paths.empty() && untouched_paths.size() != n) {
      throw UsageError(args_.op + " has " + std::to_string(n) + " output(s) but " +
                       std::to_string(untouched_paths.size()) + " --untouched were given");
    }
    // Load and conform everything first, so bad input is exit 2 before any report is printed. An
    // --actual of other sizes (beyond leading 1s) is a wrong result, not bad input: exit 1.
    std::vector<std::optional<NpyArray>> actual;
    std::vector<std::string> actual_sizes;  // of each --actual as read
    std::vector<NpyArray> untouched;
    for (std::size_t i = 0; i < n; ++i) {
      NpyArray& golden = outputs_.arrays[i];
      // GATHER_ND1 is compared in the shape it is written in. (This moves the array's sizes: a
      // description taken of it before, like descs_[3], no longer applies.)
      if (i < outputs_.file_sizes.size()) golden.reshape(outputs_.file_sizes[i]);
      NpyArray a = load(actual_paths[i]);
      actual_sizes.push_back(a.layout().sizes_string());
      if (a.data_type() == golden.data_type() &&
          without_leading_ones(a.sizes()) != without_leading_ones(golden.sizes())) {
        actual.emplace_back();
      } else {
        actual.emplace_back(conform(std::move(a), golden.sizes(), golden.data_type(), "--actual"));
      }
      if (!untouched_paths.empty()) {
        untouched.push_back(
            conform(load(untouched_paths[i]), golden.sizes(), golden.data_type(), "--untouched"));
      }
    }
    bool all_match = true;
    for (std::size_t i = 0; i < n; ++i) {
      const NpyArray& golden = outputs_.arrays[i];
      CompareOptions options = compare_;
      options.name = outputs_.names[i] + " ('" + actual_paths[i] + "')";
      if (!actual[i]) {
        std::cout << options.name << " " << data_type_name(golden.data_type()) << ": the actual "
                  << "output has sizes " << actual_sizes[i] << " but the golden output has "
                  << golden.layout().sizes_string() << " (they may differ only by leading 1s)\n";
        all_match = false;
        continue;
      }
      const NpyArray& got = *actual[i];
      std::optional<ConstBuffer> before;
      if (!untouched.empty()) before = untouched[i].buffer();
      if (args_.op == "scatter" && (compare_.nan_equal || compare_.ulp_tolerance)) {
        all_match = check_scatter_within_tolerance(golden, got, options, before) && all_match;
        continue;
      }
      const CompareResult result = compare(golden.desc(), golden.buffer(), got.buffer(), options, before);
      if (args_.op == "scatter") {
        // Where two updates collide DirectML guarantees no winner: accept any of them.
        const BufferTensorDesc actual_desc = got.desc();
        const auto check = check_scatter_result(
            scatter_desc(scatter_axis_, &actual_desc), inputs_[0].buffer(), inputs_[1].buffer(),
            inputs_[2].buffer(), got.buffer(), scatter_options(), compare_.max_report);
        std::cout << options.name << ": " << check.to_string() << "\n" << result.notes();
        all_match = all_match && check.ok();
      } else {
        std::cout << result.to_string();
        all_match = all_match && result.passed();
      }
    }
    return all_match ? 0 : 1;
  }

  // SCATTER under --ulp / --nan-equal: an element that several updates target matches when it
  // matches any one of them under the tolerance; every other element, when it matches the golden
  // value. The golden output with each such element replaced by the actual value is compared with
  // the actual output under the tolerance, so the report is compare's, plus the candidates of each
  // colliding element reported.
  bool check_scatter_within_tolerance(const NpyArray& golden, const NpyArray& got,
                                      const CompareOptions& options,
                                      std::optional<ConstBuffer> before) const {
    const BufferTensorDesc golden_desc = golden.desc();
    const auto collisions =
        find_scatter_collisions(scatter_desc(scatter_axis_, &golden_desc), inputs_[0].buffer(),
                                inputs_[1].buffer(), inputs_[2].buffer(), scatter_options());
    NpyArray accepted = golden;
    visit(golden.data_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const TensorView<T> want = accepted.view<T>();
      const TensorView<const T> have = got.view<T>();
      for (const auto& collision : collisions) {
        const Coord& c = collision.output_coordinate;
        for (const auto& candidate : collision.candidates) {
          if (elements_match(detail::scatter_element_from_bits<T>(candidate.value.bits), have[c],
                             options)) {
            want[c] = have[c];
            break;
          }
        }
      }
    });
    const CompareResult result =
        compare(accepted.desc(), accepted.buffer(), got.buffer(), options, before);
    std::cout << result.to_string();
    if (!collisions.empty()) {
      std::cout << "  " << collisions.size() << " colliding output element"
                << (collisions.size() == 1 ? " accepts" : "s accept")
                << " any one of its updates\n";
    }
    std::set<Coord> reported;
    for (const Mismatch& m : result.mismatches) reported.insert(m.coordinate);
    for (const auto& collision : collisions) {
      if (reported.count(collision.output_coordinate) != 0) {
        std::cout << "  colliding: " << collision.to_string() << "\n";
      }
    }
    return result.passed();
  }

  Args args_;
  FeatureLevel level_ = kLatestFeatureLevel;
  CompareOptions compare_;
  std::vector<NpyArray> inputs_;
  std::vector<BufferTensorDesc> descs_;
  std::uint32_t scatter_axis_ = 0;
  Outputs outputs_;
};

}  // namespace

int main(int argc, char** argv) {
  // The suite's commands parse their own flags (suite_generate.cpp, suite_verify.cpp).
  if (argc >= 2 && (std::string_view(argv[1]) == "generate" || std::string_view(argv[1]) == "verify")) {
    try {
      return std::string_view(argv[1]) == "generate" ? dmlref_suite::generate_main(argc - 1, argv + 1)
                                                     : dmlref_suite::verify_main(argc - 1, argv + 1);
    } catch (const std::exception& e) {
      std::cerr << "dmlref-check: " << e.what() << "\n";
      return 2;
    }
  }
  CLI::App app("dmlref-check: DirectML's data-movement operators on .npy files, from dmlref's "
               "golden model",
               "dmlref-check");
  app.set_version_flag("--version", std::string("dmlref-check ") + DMLREF_VERSION_STRING,
                       "print the version of dmlref and exit");
  app.set_help_all_flag("--help-all", "every command's flags");
  app.require_subcommand(0, 1);
  app.get_formatter()->label("SUBCOMMAND", "COMMAND");
  const std::vector<Command> commands = add_operators(app);
  // Listed with the operators; main() hands them their arguments before CLI11 parses anything.
  app.add_subcommand("generate", "write a conformance suite of DxDispatch models")->group("Commands");
  app.add_subcommand("verify", "grade a device's results of a suite")->group("Commands");
  app.footer(kFooter);  // after the commands, which would inherit it
  std::string hint = "dmlref-check --help lists the commands";
  try {
    if (argc >= 2 && argv[1][0] != '-') {
      const std::string command = argv[1];
      if (std::none_of(commands.begin(), commands.end(),
                       [&](const Command& c) { return c.app->get_name() == command; })) {
        throw UsageError("unknown command '" + command + "'; the operators are " + kOperatorNames +
                         "; generate and verify handle conformance suites");
      }
      hint = "dmlref-check " + command + " --help lists its flags";
    }
    app.parse(argc, argv);
    Checker checker(args_of(commands));
    return checker.run();
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "dmlref-check: " << e.what() << "\n(" << hint << ")\n";
    return 2;
  } catch (const UsageError& e) {
    std::cerr << "dmlref-check: " << e.what() << "\n(" << hint << ")\n";
    return 2;
  } catch (const std::exception& e) {
    // Validation of the inputs, a .npy problem, or a file that cannot be opened.
    std::cerr << "dmlref-check: " << e.what() << "\n";
    return 2;
  }
}
