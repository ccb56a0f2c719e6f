// dmlref-check: run one operator of the golden model on .npy inputs, then write the golden output
// (--out) and/or compare a device's output with it (--actual).
//
// Exit status: 0 written / matches, 1 does not match (the report says where and what), 2 bad usage
// or invalid input (the validation message says which rule). Outputs are staged in temporary files
// and renamed into place only when the call ends in 0 or 1; on 2 nothing is written. See kHelp.
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

#include "suite_main.hpp"

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
#include <vector>

namespace {

using namespace dmlref;

constexpr std::string_view kHelp = R"(usage: dmlref-check OPERATOR [flags]
       dmlref-check --help | --version

Runs one DirectML data-movement operator of dmlref's golden model on .npy inputs. With --out it
writes the golden output; with --actual it compares a device's output with the golden one
(bit-exact unless --nan-equal / --ulp). Both may be given.

operators and their flags:
  join                  --axis N --input A.npy --input B.npy [--input ...]
  split                 --axis N --input X.npy (--pieces 2,1,3 | --count N)
                        outputs: --out-prefix P (writes P0.npy, P1.npy, ...) or --out once per
                        output; --actual once per output, in order; each piece keeps the
                        input's rank, as numpy.split gives it
  scatter               --axis N --input X.npy --indices I.npy --updates U.npy
                        [--clamp-indices] [--duplicates last|reject]
                        (the comparison accepts any one of the updates that collide on an element)
  gather_nd1            --input X.npy --indices I.npy [--input-dims r] [--indices-dims q]
                        [--batch-dims b] [--clamp-indices]
                        r and q default to the ranks of the files, b to 0 (b >= 0, as ONNX's
                        GatherND batch_dims); when the ranks differ both tensors get leading 1s
                        up to the larger rank (DirectML's tensors share one DimensionCount); the
                        output is written with numpy's/ONNX's shape, without those leading 1s
  reverse_subsequences  --axis N --input X.npy --lengths L.npy

  --axis N              counts from 0; a negative N counts from the end as in numpy (-1 is the
                        last dimension of the input, of the first input for join)
  --clamp-indices       scatter, gather_nd1: an index outside [-n, n-1] is clamped into [0, n-1]
                        (after a negative one counts from the end) instead of being an error
                        (exit 2); without it every index must be in range
  --duplicates last     scatter (the default): where several updates hit one element, the last
                        one in row-major order of the indices is the golden value written by
                        --out; --actual accepts any one of them there
  --duplicates reject   scatter: two updates for one element are an error (exit 2)

output and comparison (every operator):
  --out FILE            write the golden output (C order, .npy version 1.0); it must not be the
                        same file (or a link to it) as any input, --actual or --untouched
  --actual FILE         the device's output to compare; its sizes may differ from the golden
                        output's only by leading 1s
  --untouched FILE      the output buffer's contents before the dispatch (once per output), so
                        a skipped dispatch is named in the report
  --nan-equal           every NaN equals every NaN (not for scatter)
  --ulp N               float elements within N ULP match; -0 == +0 (not for scatter)
  --max-report N        how many differing elements to list (default 10)
  --feature-level L     the target DirectML feature level, e.g. 4_1, 3_0 (default: newest)
  --help                this text
  --version             the version of dmlref

exit status: 0 written / matches, 1 does not match, 2 bad usage or invalid input.
A call that exits 2 writes nothing: --out files are written to a temporary file next to the
target and renamed into place only once everything (the comparison included) has succeeded.

conformance suites of DxDispatch models (README.md: "Run the suite on a DirectML device"):
  generate --out DIR [--ops join,split,...] [--feature-level 5_0] [--seed N] [--max-bytes M] [--overwrite]
  verify DIR --results RESULTS [--junit FILE] [--max-report N]
)";

// Sizes without their leading 1s, keeping at least one dimension ({1,1,3} -> {3}, {1} -> {1}).
std::vector<std::uint32_t> without_leading_ones(std::vector<std::uint32_t> s,
                                                std::size_t keep = 1) {
  std::size_t drop = 0;
  while (s.size() - drop > keep && s[drop] == 1) ++drop;
  s.erase(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(drop));
  return s;
}

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const std::set<std::string> kOperators = {"join", "split", "scatter", "gather_nd1",
                                          "reverse_subsequences"};

// Which flags each operator takes (beyond the common ones), so a misplaced flag is an error and
// not silently ignored.
const std::map<std::string, std::set<std::string>> kOperatorFlags = {
    {"join", {"--axis", "--input"}},
    {"split", {"--axis", "--input", "--pieces", "--count", "--out-prefix"}},
    {"scatter", {"--axis", "--input", "--indices", "--updates", "--clamp-indices", "--duplicates"}},
    {"gather_nd1",
     {"--input", "--indices", "--input-dims", "--indices-dims", "--batch-dims", "--clamp-indices"}},
    {"reverse_subsequences", {"--axis", "--input", "--lengths"}},
};
const std::set<std::string> kCommonFlags = {"--out", "--actual", "--untouched", "--nan-equal",
                                            "--ulp", "--max-report", "--feature-level"};
const std::set<std::string> kSwitches = {"--nan-equal", "--clamp-indices"};
const std::set<std::string> kRepeatable = {"--input", "--out", "--actual", "--untouched"};

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

std::uint64_t parse_uint(const std::string& flag, const std::string& text, std::uint64_t max) {
  std::uint64_t v = 0;
  if (text.empty()) throw UsageError(flag + " needs a number");
  for (char c : text) {
    if (c < '0' || c > '9' || v > (max - static_cast<std::uint64_t>(c - '0')) / 10) {
      throw UsageError(flag + " " + text + " is not a number in [0, " + std::to_string(max) + "]");
    }
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

std::uint32_t parse_u32(const Args& args, const std::string& flag) {
  return static_cast<std::uint32_t>(parse_uint(flag, args.one(flag), 0xFFFFFFFFu));
}

// --axis against the rank it indexes: 0..rank-1, or -rank..-1 counting from the end (numpy). A
// non-negative value past the rank is left to the operator's own rule (J4, S4, ...).
std::uint32_t parse_axis(const Args& args, std::uint32_t rank) {
  const std::string text = args.one("--axis");
  if (text.empty() || text[0] != '-') return parse_u32(args, "--axis");
  const std::string digits = text.substr(1);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError("--axis " + text + " is not a number");
  }
  const std::string range = "[-" + std::to_string(rank) + ", " + std::to_string(rank - 1) + "]";
  if (digits.size() > 10 || std::stoull(digits) > rank) {
    throw UsageError("--axis " + text + " is outside " + range + " for the " +
                     std::to_string(rank) + "-d input");
  }
  const auto back = static_cast<std::uint32_t>(std::stoull(digits));
  return back == 0 ? 0 : rank - back;
}

std::vector<std::uint32_t> parse_list(const std::string& flag, const std::string& text) {
  std::vector<std::uint32_t> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    out.push_back(static_cast<std::uint32_t>(
        parse_uint(flag, text.substr(start, comma - start), 0xFFFFFFFFu)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

FeatureLevel parse_feature_level(const std::string& text) {
  constexpr FeatureLevel kLevels[] = {
      FeatureLevel::k1_0, FeatureLevel::k2_0, FeatureLevel::k2_1, FeatureLevel::k3_0,
      FeatureLevel::k3_1, FeatureLevel::k4_0, FeatureLevel::k4_1, FeatureLevel::k5_0,
      FeatureLevel::k5_1, FeatureLevel::k5_2, FeatureLevel::k6_0, FeatureLevel::k6_1,
      FeatureLevel::k6_2, FeatureLevel::k6_3, FeatureLevel::k6_4};
  constexpr std::string_view kPrefix = "DML_FEATURE_LEVEL_";
  // Built by appending: GCC 12's -Wrestrict misfires on "literal" + std::string&& at -O2.
  std::string t(text.rfind(kPrefix, 0) == 0 ? "" : kPrefix);
  t += text;
  std::replace(t.begin(), t.end(), '.', '_');
  std::string known;
  for (FeatureLevel level : kLevels) {
    const std::string name = feature_level_name(level);
    if (name == t) return level;
    if (!known.empty()) known += ' ';
    known.append(name, kPrefix.size());
  }
  throw UsageError("--feature-level " + text + " is not a DirectML feature level (" + known + ")");
}

Args parse_args(int argc, char** argv) {
  Args args;
  if (argc < 2) throw UsageError("no operator given");
  args.op = argv[1];
  if (kOperators.count(args.op) == 0) {
    throw UsageError("unknown operator '" + args.op +
                     "'; the operators are join, split, scatter, gather_nd1, reverse_subsequences");
  }
  const auto& own = kOperatorFlags.at(args.op);
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (own.count(flag) == 0 && kCommonFlags.count(flag) == 0) {
      bool known = false;
      for (const auto& [op, flags] : kOperatorFlags) known = known || flags.count(flag) != 0;
      throw UsageError(known ? flag + " is not a flag of " + args.op
                             : "unknown flag '" + flag + "'");
    }
    if (args.has(flag) && kRepeatable.count(flag) == 0) throw UsageError(flag + " given twice");
    if (kSwitches.count(flag) != 0) {
      args.values[flag].push_back("");
      continue;
    }
    if (i + 1 >= argc) throw UsageError(flag + " needs a value");
    args.values[flag].push_back(argv[++i]);
  }
  return args;
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
    if (args_.has("--feature-level")) level_ = parse_feature_level(args_.one("--feature-level"));
    if (args_.has("--max-report")) {
      compare_.max_report = static_cast<std::size_t>(
          parse_uint("--max-report", args_.one("--max-report"), 1000000000));
    }
    compare_.nan_equal = args_.has("--nan-equal");
    if (args_.has("--ulp")) {
      compare_.ulp_tolerance = parse_uint("--ulp", args_.one("--ulp"), ~std::uint64_t{0});
    }
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
    if (!args_.has("--input")) throw UsageError("join needs --input (once per input)");
    (void)args_.one("--axis");  // a missing --axis is reported before any file is read
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
    (void)args_.one("--axis");
    const NpyArray& input = inputs_.emplace_back(load(args_.one("--input")));
    const std::uint32_t axis = parse_axis(args_, input.rank());
    if (args_.has("--pieces") == args_.has("--count")) {
      throw UsageError("split needs exactly one of --pieces a,b,... and --count N");
    }
    const auto sizes =
        args_.has("--pieces")
            ? infer_split_output_sizes(input.sizes(), axis,
                                       parse_list("--pieces", args_.one("--pieces")))
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
    if (args_.has("--duplicates")) {
      const std::string d = args_.one("--duplicates");
      if (d == "last") {
        options.duplicates = DuplicatePolicy::LastWins;
      } else if (d == "reject") {
        options.duplicates = DuplicatePolicy::Reject;
      } else {
        throw UsageError("--duplicates " + d + " is not one of last, reject");
      }
    }
    return options;
  }

  void run_scatter() {
    if (args_.has("--nan-equal") || args_.has("--ulp")) {
      throw UsageError("--nan-equal and --ulp do not apply to scatter: its duplicate-aware "
                       "check is bit-exact");
    }
    (void)args_.one("--axis");
    inputs_.push_back(load(args_.one("--input")));
    inputs_.push_back(load(args_.one("--indices")));
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
    NpyArray indices = load(args_.one("--indices"));
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
    (void)args_.one("--axis");
    inputs_.push_back(load(args_.one("--input")));
    inputs_.push_back(load(args_.one("--lengths")));
    const std::uint32_t axis = parse_axis(args_, inputs_[0].rank());
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
    // Load and conform everything first, so bad input is exit 2 before any report is printed.
    std::vector<NpyArray> actual, untouched;
    for (std::size_t i = 0; i < n; ++i) {
      const NpyArray& golden = outputs_.arrays[i];
      actual.push_back(
          conform(load(actual_paths[i]), golden.sizes(), golden.data_type(), "--actual"));
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
      std::optional<ConstBuffer> before;
      if (!untouched.empty()) before = untouched[i].buffer();
      const CompareResult result =
          compare(golden.desc(), golden.buffer(), actual[i].buffer(), options, before);
      if (args_.op == "scatter") {
        // Where two updates collide DirectML guarantees no winner: accept any of them.
        const BufferTensorDesc actual_desc = actual[i].desc();
        const auto check = check_scatter_result(
            scatter_desc(scatter_axis_, &actual_desc), inputs_[0].buffer(), inputs_[1].buffer(),
            inputs_[2].buffer(), actual[i].buffer(), scatter_options(), compare_.max_report);
        std::cout << options.name << ": " << check.to_string() << "\n" << result.notes();
        all_match = all_match && check.ok();
      } else {
        std::cout << result.to_string();
        all_match = all_match && result.passed();
      }
    }
    return all_match ? 0 : 1;
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
  if (argc >= 2 && (std::string_view(argv[1]) == "generate" || std::string_view(argv[1]) == "verify")) {
    try {
      return std::string_view(argv[1]) == "generate" ? dmlref_suite::generate_main(argc - 1, argv + 1)
                                                     : dmlref_suite::verify_main(argc - 1, argv + 1);
    } catch (const std::exception& e) {
      std::cerr << "dmlref-check: " << e.what() << "\n";
      return 2;
    }
  }
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") {
      std::cout << kHelp;
      return 0;
    }
    if (std::string_view(argv[i]) == "--version") {
      std::cout << "dmlref-check " << DMLREF_VERSION_STRING << "\n";
      return 0;
    }
  }
  try {
    Checker checker(parse_args(argc, argv));
    return checker.run();
  } catch (const UsageError& e) {
    std::cerr << "dmlref-check: " << e.what() << "\n(dmlref-check --help lists the flags)\n";
    return 2;
  } catch (const dmlref::Error& e) {
    // Validation of the inputs, a .npy problem, or a file that cannot be opened.
    std::cerr << "dmlref-check: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dmlref-check: " << e.what() << "\n";
    return 2;
  }
}
