// dmlref-check generate: writes a conformance suite of DxDispatch models whose expected outputs
// are the golden model's (see suite.hpp for the format and README.md's "Run the suite" section).
#include "suite_commands.hpp"
#include "suite_manifest.hpp"
#include "suite_runners.hpp"

#include <dmlref/version.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <numeric>
#include <optional>
#include <set>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

namespace dmlref_suite {
namespace {

using dmlref::FeatureLevel;
using dmlref::SupportRow;

// splitmix64: the same stream on every platform, so a seed names one suite.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint32_t below(std::uint64_t n) { return static_cast<std::uint32_t>(next() % n); }
  bool one_in(std::uint32_t n) { return below(n) == 0; }

 private:
  std::uint64_t state_;
};

// ------------------------------------------------------------------------------------------------
// A case as planned: the tensors of the desc in DirectML's field order, the scalar fields, and
// how each input buffer is filled.

enum class Fill { Data, Special, Indices, Lengths };

struct TensorPlan {
  std::string field;    // "InputTensors[1]", "OutputTensor", ...
  std::string group;    // "InputTensors" / "OutputTensors" for array members, else empty
  DataType type = DataType::Float32;
  std::vector<std::uint32_t> sizes, strides;  // strides empty: packed
  bool output = false;
  Fill fill = Fill::Data;
  std::function<std::int64_t(const dmlref::Coord&)> value;  // Indices / Lengths
  // What an invalid case changes beyond sizes, types and strides:
  std::string type_text;             // DataType as written (T1)
  std::uint64_t total_bytes = 0;     // explicit TotalTensorSizeInBytes (T8)
  std::uint32_t alignment = 0;       // GuaranteedBaseOffsetAlignment (T9)
  bool owned_by_dml = false;         // T11
  std::uint64_t buffer_bytes = 0;    // the resource's size when not the tensor's own (T10, T2-T4)
  std::string alias_of;              // bound to this other tensor's resource (T13)
};

struct CasePlan {
  std::string label;
  std::string why;
  std::string rule;  // invalid cases only
  std::vector<TensorPlan> tensors;
  std::map<std::string, std::uint32_t> scalars;  // Axis, InputCount, ...
  bool large = false;

  TensorPlan& tensor(const std::string& field) {
    for (TensorPlan& t : tensors) {
      if (t.field == field) return t;
    }
    throw std::logic_error("no tensor " + field);
  }
};

dmlref::Layout plan_layout(const TensorPlan& t) {
  if (t.strides.empty()) return dmlref::Layout::packed(t.sizes);
  std::vector<std::int64_t> s(t.strides.begin(), t.strides.end());
  return dmlref::Layout::strided(t.sizes, s);
}

std::uint64_t tensor_bytes(const TensorPlan& t) {
  if (t.buffer_bytes != 0) return t.buffer_bytes;
  return dmlref::calc_buffer_tensor_size(t.type, t.sizes, t.strides);
}

// ------------------------------------------------------------------------------------------------
// Shapes and layouts

enum class Kind { Packed, Padded, Transposed, Broadcast, PaddedTransposed };
constexpr Kind kInputKinds[] = {Kind::Packed, Kind::Padded, Kind::Transposed, Kind::Broadcast,
                                Kind::PaddedTransposed};
constexpr Kind kOutputKinds[] = {Kind::Packed, Kind::Padded, Kind::Transposed,
                                 Kind::PaddedTransposed};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Packed: return "packed";
    case Kind::Padded: return "padded";
    case Kind::Transposed: return "transposed";
    case Kind::Broadcast: return "broadcast";
    case Kind::PaddedTransposed: return "padded-transposed";
  }
  return "";
}

// Sizes whose product stays at most `budget`; about one dimension in five is 1.
std::vector<std::uint32_t> random_sizes(Rng& rng, std::uint32_t rank, std::uint64_t budget) {
  std::vector<std::uint32_t> s(rank, 1);
  for (std::uint32_t d = 0; d < rank; ++d) {
    const std::uint32_t left = rank - d;
    std::uint64_t cap = 1;
    for (;;) {  // the largest cap with cap^left <= budget
      std::uint64_t p = 1;
      for (std::uint32_t k = 0; k < left && p <= budget; ++k) p *= cap + 1;
      if (p > budget) break;
      ++cap;
    }
    s[d] = rng.one_in(5) ? 1 : 1 + rng.below(std::min<std::uint64_t>(cap, 9));
    budget /= s[d];
  }
  return s;
}

// Strides of the kind; `keep` is a dimension that must not broadcast (or -1).
std::vector<std::uint32_t> make_strides(Rng& rng, const std::vector<std::uint32_t>& sizes, Kind kind,
                                        int keep = -1) {
  if (kind == Kind::Packed) return {};
  const auto rank = static_cast<std::uint32_t>(sizes.size());
  std::vector<std::uint32_t> order(rank);  // outermost first
  std::iota(order.begin(), order.end(), 0u);
  const bool transposed = kind == Kind::Transposed || kind == Kind::PaddedTransposed;
  const bool padded = kind == Kind::Padded || kind == Kind::PaddedTransposed;
  if (transposed) {
    for (std::uint32_t i = rank; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  }
  std::vector<bool> zero(rank, false);
  if (kind == Kind::Broadcast) {
    std::vector<std::uint32_t> candidates;
    for (std::uint32_t d = 0; d < rank; ++d) {
      if (sizes[d] > 1 && static_cast<int>(d) != keep) candidates.push_back(d);
    }
    if (!candidates.empty()) zero[candidates[rng.below(candidates.size())]] = true;
    if (candidates.size() > 2 && rng.one_in(2)) zero[candidates[rng.below(candidates.size())]] = true;
  }
  std::vector<std::uint32_t> strides(rank, 0);
  std::uint64_t running = padded && rng.one_in(3) ? 2 : 1;
  for (std::uint32_t k = rank; k-- > 0;) {
    const std::uint32_t d = order[k];
    if (zero[d]) continue;
    strides[d] = static_cast<std::uint32_t>(running);
    running = running * sizes[d] + (padded ? rng.below(3) : 0);
  }
  return strides;
}

// ------------------------------------------------------------------------------------------------
// Generation context: the level's tables narrowed to what a case may use.

const SupportRow* row_at(std::span<const SupportRow> rows, FeatureLevel level) {
  const SupportRow* best = nullptr;
  for (const SupportRow& r : rows) {
    if (r.level <= level && (best == nullptr || r.level > best->level)) best = &r;
  }
  return best;
}

std::vector<DataType> types_of(const dmlref::DataTypeSet& set) {
  std::vector<DataType> out;
  for (DataType t : dmlref::kAllDataTypes) {
    if (set.contains(t)) out.push_back(t);
  }
  return out;
}

struct OpContext {
  std::string op;
  FeatureLevel level;
  Rng rng;
  std::vector<DataType> types;        // data tensors
  std::vector<DataType> index_types;  // indices / lengths tensors (if any)
  std::uint32_t min_rank = 1, max_rank = 8;
  bool negative_indices = false;

  DataType type_for(int i) const { return types[static_cast<std::size_t>(i) % types.size()]; }
  DataType index_type_for(int i) const {
    return index_types[static_cast<std::size_t>(i / 3 + i) % index_types.size()];
  }
  std::uint32_t rank_for(int i) const {
    return min_rank + static_cast<std::uint32_t>(i / 2 + i) % (max_rank - min_rank + 1);
  }
  // A type of the level other than `t` (for rules about mismatched types).
  DataType other_type(DataType t) const {
    for (DataType u : types) {
      if (u != t) return u;
    }
    return t;
  }
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

TensorPlan tensor(std::string field, DataType type, std::vector<std::uint32_t> sizes,
                  std::vector<std::uint32_t> strides = {}, bool output = false) {
  TensorPlan t;
  t.field = std::move(field);
  const auto bracket = t.field.find('[');
  if (bracket != std::string::npos) t.group = t.field.substr(0, bracket);
  t.type = type;
  t.sizes = std::move(sizes);
  t.strides = std::move(strides);
  t.output = output;
  return t;
}

std::string array_field(const char* group, std::size_t i) {
  return std::string(group) + "[" + std::to_string(i) + "]";
}

// Splits `total` into `k` positive parts.
std::vector<std::uint32_t> partition(Rng& rng, std::uint32_t total, std::uint32_t k) {
  std::vector<std::uint32_t> parts(k, 1);
  for (std::uint32_t left = total - k; left > 0; --left) ++parts[rng.below(k)];
  return parts;
}

// How many elements a case's largest tensor may hold: mostly small, some medium.
std::uint64_t budget_for(int i) { return i % 10 == 9 ? 3000 : 240; }

std::string layout_label(const std::vector<Kind>& in, Kind out) {
  std::string s = "in-" + std::string(kind_name(in.front()));
  if (out != Kind::Packed) s += "_out-" + std::string(kind_name(out));
  return s;
}

// ------------------------------------------------------------------------------------------------
// Valid cases, one builder per operator. `i` picks the type, rank and layouts so that every value
// of each appears; `sizes_override` fixes the (output or input) sizes for the edge cases.

using Sizes = std::vector<std::uint32_t>;

// What most builders draw first: the data type, the index type, the sizes, an axis.
struct Drawn {
  DataType type, index_type;
  Sizes sizes;
  std::uint32_t rank, axis;
};

Drawn draw(OpContext& c, int i, const std::optional<Sizes>& fixed) {
  Drawn d{c.type_for(i), c.index_types.empty() ? DataType::UInt32 : c.index_type_for(i),
          fixed ? *fixed : random_sizes(c.rng, c.rank_for(i), budget_for(i)), 0, 0};
  d.rank = static_cast<std::uint32_t>(d.sizes.size());
  d.axis = c.rng.below(d.rank);
  return d;
}

CasePlan join_case(OpContext& c, int i, std::optional<Sizes> fixed = {}) {
  Rng& rng = c.rng;
  Drawn d = draw(c, i, fixed);
  const DataType type = d.type;
  Sizes& out = d.sizes;
  const std::uint32_t rank = d.rank, axis = d.axis;
  const std::uint32_t k = std::min<std::uint32_t>(1 + rng.below(4), out[axis] + (fixed ? 0 : 3));
  if (!fixed) out[axis] = std::max(out[axis], k);
  const std::uint32_t pieces = std::min(k, out[axis]);
  CasePlan p;
  const Kind out_kind = kOutputKinds[static_cast<std::size_t>(i / 5) % 4];
  std::vector<Kind> kinds;
  for (std::uint32_t j = 0; j < pieces; ++j) {
    const Kind kind = j == 0 ? kInputKinds[static_cast<std::size_t>(i) % 5] : kInputKinds[rng.below(5)];
    kinds.push_back(kind);
  }
  const Sizes parts = partition(rng, out[axis], pieces);
  for (std::uint32_t j = 0; j < pieces; ++j) {
    Sizes s = out;
    s[axis] = parts[j];
    TensorPlan t = tensor(array_field("InputTensors", j), type, s, make_strides(rng, s, kinds[j]));
    t.fill = i % 6 == 5 ? Fill::Special : Fill::Data;
    p.tensors.push_back(std::move(t));
  }
  p.tensors.push_back(tensor("OutputTensor", type, out, make_strides(rng, out, out_kind), true));
  p.scalars = {{"InputCount", pieces}, {"Axis", axis}};
  p.label = lower(dmlref::data_type_name(type)) + "_r" + std::to_string(rank) + "_axis" +
            std::to_string(axis) + "_" + std::to_string(pieces) + "in_" + layout_label(kinds, out_kind);
  p.why = "JOIN of " + std::to_string(pieces) + " " + std::string(dmlref::data_type_name(type)) +
          " input(s) along axis " + std::to_string(axis) + " of " + std::to_string(rank) +
          " dimensions; inputs " + kind_name(kinds.front()) + ", output " + kind_name(out_kind);
  return p;
}

CasePlan split_case(OpContext& c, int i, std::optional<Sizes> fixed = {}) {
  Rng& rng = c.rng;
  Drawn d = draw(c, i, fixed);
  const DataType type = d.type;
  Sizes& in = d.sizes;
  const std::uint32_t rank = d.rank, axis = d.axis;
  const std::uint32_t k = 1 + rng.below(4);
  if (!fixed) in[axis] = std::max(in[axis], k);
  const std::uint32_t pieces = std::min(k, in[axis]);
  const Kind in_kind = kInputKinds[static_cast<std::size_t>(i) % 5];
  CasePlan p;
  TensorPlan input = tensor("InputTensor", type, in, make_strides(rng, in, in_kind));
  input.fill = i % 6 == 5 ? Fill::Special : Fill::Data;
  p.tensors.push_back(std::move(input));
  const Sizes parts = partition(rng, in[axis], pieces);
  const Kind first_out = kOutputKinds[static_cast<std::size_t>(i / 5) % 4];
  for (std::uint32_t j = 0; j < pieces; ++j) {
    Sizes s = in;
    s[axis] = parts[j];
    const Kind kind = j == 0 ? first_out : kOutputKinds[rng.below(4)];
    p.tensors.push_back(tensor(array_field("OutputTensors", j), type, s, make_strides(rng, s, kind), true));
  }
  p.scalars = {{"OutputCount", pieces}, {"Axis", axis}};
  p.label = lower(dmlref::data_type_name(type)) + "_r" + std::to_string(rank) + "_axis" +
            std::to_string(axis) + "_" + std::to_string(pieces) + "out_" + layout_label({in_kind}, first_out);
  p.why = "SPLIT of " + std::string(dmlref::data_type_name(type)) + " into " + std::to_string(pieces) +
          " output(s) along axis " + std::to_string(axis) + " of " + std::to_string(rank) +
          " dimensions; input " + kind_name(in_kind) + ", first output " + kind_name(first_out);
  return p;
}

// A signed index type may count from the end (from 3_0 on): sometimes use the negative form.
std::int64_t maybe_negative(const OpContext& c, DataType index_type, std::int64_t v, std::uint64_t n,
                            std::uint64_t salt) {
  const bool is_signed = index_type == DataType::Int32 || index_type == DataType::Int64;
  if (is_signed && c.negative_indices && (salt % 3) == 1) return v - static_cast<std::int64_t>(n);
  return v;
}

std::uint64_t mix(const dmlref::Coord& co, std::uint32_t rank, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (std::uint32_t d = 0; d < rank; ++d) h = (h ^ co[d]) * 0x100000001B3ull + 0x9E37u;
  return h ^ (h >> 29);
}

CasePlan scatter_case(OpContext& c, int i, std::optional<Sizes> fixed = {}) {
  Rng& rng = c.rng;
  const Drawn d = draw(c, i, fixed);
  const DataType type = d.type, index_type = d.index_type;
  const Sizes& in = d.sizes;
  const std::uint32_t rank = d.rank, axis = d.axis, n = in[axis];
  const bool collide = i % 3 == 0;
  Sizes idx = in;
  idx[axis] = collide ? 1 + rng.below(n + 2) : 1 + rng.below(n);
  const Kind in_kind = kInputKinds[static_cast<std::size_t>(i) % 5];
  const Kind idx_kind = kInputKinds[static_cast<std::size_t>(i / 5) % 5];
  const Kind out_kind = kOutputKinds[static_cast<std::size_t>(i / 2) % 4];
  CasePlan p;
  TensorPlan input = tensor("InputTensor", type, in, make_strides(rng, in, in_kind));
  input.fill = i % 6 == 5 ? Fill::Special : Fill::Data;
  TensorPlan indices = tensor("IndicesTensor", index_type, idx,
                              make_strides(rng, idx, idx_kind, collide ? -1 : static_cast<int>(axis)));
  indices.fill = Fill::Indices;
  // Without collisions each line along Axis gets distinct targets: a stride coprime with n.
  std::uint32_t step = 1 + rng.below(n);
  while (std::gcd(step, n) != 1) step = step % n + 1;
  const std::uint64_t seed = rng.next();
  const OpContext* ctx = &c;
  indices.value = [=](const dmlref::Coord& co) -> std::int64_t {
    dmlref::Coord line = co;
    line[axis] = 0;
    const std::uint64_t h = mix(line, rank, seed);
    const std::uint64_t target =
        collide ? mix(co, rank, seed) % n : (static_cast<std::uint64_t>(co[axis]) * step + h) % n;
    return maybe_negative(*ctx, index_type, static_cast<std::int64_t>(target), n, mix(co, rank, seed + 1));
  };
  TensorPlan updates = tensor("UpdatesTensor", type, idx, make_strides(rng, idx, kInputKinds[rng.below(5)]));
  updates.fill = input.fill;
  p.tensors = {std::move(input), std::move(indices), std::move(updates),
               tensor("OutputTensor", type, in, make_strides(rng, in, out_kind), true)};
  p.scalars = {{"Axis", axis}};
  p.label = lower(dmlref::data_type_name(type)) + "_" + lower(dmlref::data_type_name(index_type)) + "_r" +
            std::to_string(rank) + "_axis" + std::to_string(axis) + (collide ? "_random" : "_distinct") + "_" +
            layout_label({in_kind}, out_kind) + "_idx-" + kind_name(idx_kind);
  p.why = "SCATTER of " + std::string(dmlref::data_type_name(type)) + " with " +
          std::string(dmlref::data_type_name(index_type)) + " indices along axis " + std::to_string(axis) +
          " of " + std::to_string(rank) + " dimensions, " +
          (collide ? "random indices" : "distinct targets along each line");
  return p;
}

CasePlan gather_case(OpContext& c, int i, std::optional<Sizes> fixed_input = {}) {
  Rng& rng = c.rng;
  const DataType type = c.type_for(i);
  const DataType index_type = c.index_type_for(i);
  std::uint32_t rank = 0, r = 0, q = 0, b = 0, m = 0;
  const std::uint32_t want_b = static_cast<std::uint32_t>(i % 4);
  for (int attempt = 0;; ++attempt) {
    rank = fixed_input ? static_cast<std::uint32_t>(fixed_input->size()) : c.rank_for(i + attempt);
    r = 1 + rng.below(rank);
    q = 1 + rng.below(rank);
    b = std::min({want_b, r - 1, q - 1});
    if (attempt < 50 && b != want_b) continue;
    m = 1 + rng.below(r - b);
    if ((q - 1) + (r - b - m) <= rank) break;
  }
  Sizes in(rank, 1), idx(rank, 1);
  const Sizes meaningful = fixed_input ? Sizes(fixed_input->end() - r, fixed_input->end())
                                       : random_sizes(rng, r, budget_for(i) / 4 + 1);
  std::copy(meaningful.begin(), meaningful.end(), in.end() - r);
  const Sizes grid = random_sizes(rng, q - 1 - b, 12);
  for (std::uint32_t j = 0; j < b; ++j) idx[rank - q + j] = in[rank - r + j];
  std::copy(grid.begin(), grid.end(), idx.begin() + (rank - q + b));
  idx[rank - 1] = m;
  const Sizes out = dmlref::infer_gather_nd1_output_sizes(in, idx, r, q, b);
  const Kind in_kind = kInputKinds[static_cast<std::size_t>(i) % 5];
  const Kind idx_kind = kInputKinds[static_cast<std::size_t>(i / 5) % 5];
  const Kind out_kind = kOutputKinds[static_cast<std::size_t>(i / 2) % 4];
  CasePlan p;
  TensorPlan input = tensor("InputTensor", type, in, make_strides(rng, in, in_kind));
  input.fill = i % 6 == 5 ? Fill::Special : Fill::Data;
  // The tuple dimension never broadcasts: each of its coordinates addresses a different size.
  TensorPlan indices = tensor("IndicesTensor", index_type, idx,
                              make_strides(rng, idx, idx_kind, static_cast<int>(rank - 1)));
  indices.fill = Fill::Indices;
  const std::uint64_t seed = rng.next();
  const OpContext* ctx = &c;
  indices.value = [=](const dmlref::Coord& co) -> std::int64_t {
    const std::uint32_t n = in[rank - r + b + co[rank - 1]];
    const std::uint64_t h = mix(co, rank, seed);
    return maybe_negative(*ctx, index_type, static_cast<std::int64_t>(h % n), n, h >> 20);
  };
  p.tensors = {std::move(input), std::move(indices),
               tensor("OutputTensor", type, out, make_strides(rng, out, out_kind), true)};
  p.scalars = {{"InputDimensionCount", r}, {"IndicesDimensionCount", q}, {"BatchDimensionCount", b}};
  p.label = lower(dmlref::data_type_name(type)) + "_" + lower(dmlref::data_type_name(index_type)) + "_R" +
            std::to_string(rank) + "_r" + std::to_string(r) + "q" + std::to_string(q) + "b" +
            std::to_string(b) + "m" + std::to_string(m) + "_" + layout_label({in_kind}, out_kind) +
            "_idx-" + kind_name(idx_kind);
  p.why = "GATHER_ND1 of " + std::string(dmlref::data_type_name(type)) + " with " +
          std::string(dmlref::data_type_name(index_type)) + " indices: DimensionCount " +
          std::to_string(rank) + ", r " + std::to_string(r) + ", q " + std::to_string(q) + ", batch " +
          std::to_string(b) + ", " + std::to_string(m) + " coordinate(s) per tuple";
  return p;
}

CasePlan reverse_case(OpContext& c, int i, std::optional<Sizes> fixed = {}) {
  Rng& rng = c.rng;
  const Drawn d = draw(c, i, fixed);
  const DataType type = d.type, length_type = d.index_type;
  const Sizes& in = d.sizes;
  const std::uint32_t rank = d.rank, axis = d.axis, n = in[axis];
  Sizes len = in;
  len[axis] = 1;
  static constexpr const char* kModes[] = {"mixed", "zero", "full", "longer-than-axis"};
  const int mode = i % 4;
  const Kind in_kind = kInputKinds[static_cast<std::size_t>(i) % 5];
  const Kind len_kind = kInputKinds[static_cast<std::size_t>(i / 4) % 5];
  const Kind out_kind = kOutputKinds[static_cast<std::size_t>(i / 2) % 4];
  CasePlan p;
  TensorPlan input = tensor("InputTensor", type, in, make_strides(rng, in, in_kind));
  input.fill = i % 6 == 5 ? Fill::Special : Fill::Data;
  TensorPlan lengths = tensor("SequenceLengthsTensor", length_type, len, make_strides(rng, len, len_kind));
  lengths.fill = Fill::Lengths;
  const std::uint64_t seed = rng.next();
  lengths.value = [=](const dmlref::Coord& co) -> std::int64_t {
    const std::uint64_t h = mix(co, rank, seed);
    switch (mode) {
      case 1: return 0;
      case 2: return n;
      case 3: return n + 1 + static_cast<std::int64_t>(h % 5);
      default: return static_cast<std::int64_t>(h % (n + 1));
    }
  };
  p.tensors = {std::move(input), std::move(lengths),
               tensor("OutputTensor", type, in, make_strides(rng, in, out_kind), true)};
  p.scalars = {{"Axis", axis}};
  p.label = lower(dmlref::data_type_name(type)) + "_" + lower(dmlref::data_type_name(length_type)) + "_r" +
            std::to_string(rank) + "_axis" + std::to_string(axis) + "_" + kModes[mode] + "_" +
            layout_label({in_kind}, out_kind) + "_len-" + kind_name(len_kind);
  p.why = "REVERSE_SUBSEQUENCES of " + std::string(dmlref::data_type_name(type)) + " along axis " +
          std::to_string(axis) + " of " + std::to_string(rank) + " dimensions, " +
          std::string(dmlref::data_type_name(length_type)) + " lengths: " + kModes[mode];
  return p;
}

using Builder = CasePlan (*)(OpContext&, int, std::optional<Sizes>);

Builder builder_of(const std::string& op) {
  if (op == "join") return join_case;
  if (op == "split") return split_case;
  if (op == "scatter") return scatter_case;
  if (op == "gather_nd1") return gather_case;
  return reverse_case;
}

// The valid cases of one operator: random cases over every type, rank and layout, then the edge
// sizes, then a few large ones (dropped first when the suite must be smaller).
std::vector<CasePlan> valid_cases(OpContext& c) {
  const Builder build = builder_of(c.op);
  std::vector<CasePlan> out;
  const int kRandom = 160;
  for (int i = 0; i < kRandom; ++i) out.push_back(build(c, i, std::nullopt));
  // Edge sizes: a single element at the lowest and highest rank, size-1 dimensions around a
  // long one, and an odd byte count (the buffer rounds up to 4 bytes).
  const std::uint32_t lo = c.min_rank, hi = c.max_rank;
  std::vector<Sizes> edges = {Sizes(lo, 1), Sizes(hi, 1)};
  Sizes ones_around(hi, 1);
  ones_around[hi / 2] = 37;
  edges.push_back(ones_around);
  Sizes odd(lo, 1);
  odd.back() = 1023;
  edges.push_back(odd);
  int i = kRandom;
  for (const Sizes& s : edges) {
    CasePlan p = build(c, i++, s);
    p.label = "edge_" + p.label;
    out.push_back(std::move(p));
  }
  // Large: about a million elements of four bytes, packed and transposed.
  for (int k = 0; k < 2; ++k) {
    Sizes s(std::max<std::uint32_t>(lo, 3), 1);
    s[s.size() - 3] = 64;
    s[s.size() - 2] = 128;
    s[s.size() - 1] = 128;
    CasePlan p = build(c, k, s);
    p.label = "large_" + p.label;
    p.large = true;
    out.push_back(std::move(p));
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Invalid cases: a small valid case (4 dimensions, allowed at every level) with one rule broken.

struct InvalidSpec {
  std::string rule;
  std::string why;
  std::function<void(CasePlan&, const OpContext&)> mutate;
};

CasePlan base_case(OpContext& c) {
  const DataType type = c.types.front() == DataType::Float64 ? DataType::Float32 : c.types.front();
  const DataType index_type = DataType::UInt32;
  CasePlan p;
  if (c.op == "join") {
    p.tensors = {tensor("InputTensors[0]", type, {2, 1, 4, 2}), tensor("InputTensors[1]", type, {2, 2, 4, 2}),
                 tensor("OutputTensor", type, {2, 3, 4, 2}, {}, true)};
    p.scalars = {{"InputCount", 2}, {"Axis", 1}};
  } else if (c.op == "split") {
    p.tensors = {tensor("InputTensor", type, {2, 3, 4, 2}), tensor("OutputTensors[0]", type, {2, 1, 4, 2}, {}, true),
                 tensor("OutputTensors[1]", type, {2, 2, 4, 2}, {}, true)};
    p.scalars = {{"OutputCount", 2}, {"Axis", 1}};
  } else if (c.op == "scatter") {
    TensorPlan idx = tensor("IndicesTensor", index_type, {2, 3, 2, 2});
    idx.fill = Fill::Indices;
    idx.value = [](const dmlref::Coord& co) -> std::int64_t { return (co[2] + co[3]) % 4; };
    p.tensors = {tensor("InputTensor", type, {2, 3, 4, 2}), std::move(idx),
                 tensor("UpdatesTensor", type, {2, 3, 2, 2}), tensor("OutputTensor", type, {2, 3, 4, 2}, {}, true)};
    p.scalars = {{"Axis", 2}};
  } else if (c.op == "gather_nd1") {
    TensorPlan idx = tensor("IndicesTensor", index_type, {1, 3, 2, 1});
    idx.fill = Fill::Indices;
    idx.value = [](const dmlref::Coord& co) -> std::int64_t { return (co[1] + co[2]) % 4; };
    p.tensors = {tensor("InputTensor", type, {1, 3, 4, 2}), std::move(idx),
                 tensor("OutputTensor", type, {1, 3, 2, 2}, {}, true)};
    p.scalars = {{"InputDimensionCount", 3}, {"IndicesDimensionCount", 3}, {"BatchDimensionCount", 1}};
  } else {
    TensorPlan len = tensor("SequenceLengthsTensor", index_type, {2, 3, 1, 2});
    len.fill = Fill::Lengths;
    len.value = [](const dmlref::Coord& co) -> std::int64_t { return co[1] + co[3]; };
    p.tensors = {tensor("InputTensor", type, {2, 3, 4, 2}), std::move(len),
                 tensor("OutputTensor", type, {2, 3, 4, 2}, {}, true)};
    p.scalars = {{"Axis", 2}};
  }
  return p;
}

// The first tensor that is not an output, and the first output.
TensorPlan& first_input(CasePlan& p) {
  for (TensorPlan& t : p.tensors) {
    if (!t.output) return t;
  }
  throw std::logic_error("no input");
}
TensorPlan& first_output(CasePlan& p) {
  for (TensorPlan& t : p.tensors) {
    if (t.output) return t;
  }
  throw std::logic_error("no output");
}

// Keeps a tensor's buffer the size it had before its description was broken.
void keep_buffer(TensorPlan& t) { t.buffer_bytes = tensor_bytes(t); }

std::vector<InvalidSpec> tensor_rules() {
  return {
      {"T1", "an input's DataType is DML_TENSOR_DATA_TYPE_UNKNOWN",
       [](CasePlan& p, const OpContext&) { first_input(p).type_text = "DML_TENSOR_DATA_TYPE_UNKNOWN"; }},
      {"T2", "an input has 9 dimensions",
       [](CasePlan& p, const OpContext&) {
         TensorPlan& t = first_input(p);
         keep_buffer(t);
         t.sizes.insert(t.sizes.begin(), 5, 1u);
       }},
      {"T3", "an input has a size of 0",
       [](CasePlan& p, const OpContext&) {
         TensorPlan& t = first_input(p);
         keep_buffer(t);
         t.sizes[0] = 0;
       }},
      {"T4", "an input has 2^32 elements",
       [](CasePlan& p, const OpContext&) {
         TensorPlan& t = first_input(p);
         keep_buffer(t);
         t.sizes = {65536, 65536, 1, 1};
       }},
      {"T8", "an input's TotalTensorSizeInBytes is 4 bytes short of DMLCalcBufferTensorSize",
       [](CasePlan& p, const OpContext&) {
         TensorPlan& t = first_input(p);
         t.total_bytes = tensor_bytes(t) - 4;
       }},
      {"T9", "the output's GuaranteedBaseOffsetAlignment is 3",
       [](CasePlan& p, const OpContext&) { first_output(p).alignment = 3; }},
      {"T10", "the output's buffer is 4 bytes smaller than its TotalTensorSizeInBytes",
       [](CasePlan& p, const OpContext&) {
         TensorPlan& t = first_output(p);
         t.buffer_bytes = tensor_bytes(t) - 4;
       }},
      {"T11", "the output has DML_TENSOR_FLAG_OWNED_BY_DML",
       [](CasePlan& p, const OpContext&) { first_output(p).owned_by_dml = true; }},
      {"T12", "the output has a zero stride on a dimension of size 2 (one element written twice)",
       [](CasePlan& p, const OpContext&) {
         TensorPlan& t = first_output(p);
         const dmlref::Layout packed = dmlref::Layout::packed(t.sizes);
         t.strides.assign(packed.strides.begin(), packed.strides.begin() + packed.rank);
         t.strides[static_cast<std::size_t>(std::find_if(t.sizes.begin(), t.sizes.end(),
                                                         [](std::uint32_t n) { return n > 1; }) -
                                            t.sizes.begin())] = 0;
       }},
      {"T13", "the output is bound to an input's buffer (no operator here runs in place)",
       [](CasePlan& p, const OpContext&) { first_output(p).alias_of = first_input(p).field; }},
  };
}

// Mutations that several operators' rules share.
std::function<void(CasePlan&, const OpContext&)> retype(std::string field) {
  return [field](CasePlan& p, const OpContext& c) { p.tensor(field).type = c.other_type(p.tensor(field).type); };
}
std::function<void(CasePlan&, const OpContext&)> set_scalar(std::string field, std::uint32_t value) {
  return [field, value](CasePlan& p, const OpContext&) { p.scalars[field] = value; };
}
void float_indices(CasePlan& p, const OpContext&) {
  p.tensor("IndicesTensor").type = DataType::Float32;
  p.tensor("IndicesTensor").fill = Fill::Data;
}

std::vector<InvalidSpec> operator_rules(const std::string& op) {
  using P = CasePlan;
  using C = const OpContext;
  if (op == "join" || op == "split") {
    // JOIN and SPLIT share their rules (J1-J6 / S1-S6), seen from the other side: JOIN's pieces
    // are its inputs, SPLIT's its outputs.
    const bool join = op == "join";
    const std::string r = join ? "J" : "S", count = join ? "InputCount" : "OutputCount";
    const std::string piece = join ? "InputTensors[1]" : "OutputTensors[1]";
    const std::string whole = join ? "OutputTensor" : "InputTensor";
    const std::string a_piece = join ? "an input" : "an output", the_whole = join ? "the output" : "the input";
    return {
        {r + "1", count + " is 0",
         [=](P& p, C&) {
           std::erase_if(p.tensors, [&](const TensorPlan& t) { return t.field != whole; });
           p.scalars[count] = 0;
         }},
        {r + "2", a_piece + " has 3 dimensions, " + the_whole + " 4",
         [=](P& p, C&) { p.tensor(piece).sizes = {2, 4, 2}; }},
        {r + "3", a_piece + "'s DataType differs from " + the_whole + "'s", retype(piece)},
        {r + "4", "Axis is 4 with 4 dimensions", set_scalar("Axis", 4)},
        {r + "5", a_piece + " differs from " + the_whole + " in a dimension other than Axis",
         [=](P& p, C&) { p.tensor(piece).sizes[2] = 3; }},
        {r + "6", "the sizes along Axis of the pieces do not add up to " + the_whole + "'s",
         [=](P& p, C&) { p.tensor(whole).sizes[1] = 4; }},
    };
  }
  if (op == "scatter") {
    return {
        {"SC1", "IndicesTensor and UpdatesTensor have 3 dimensions, the input 4",
         [](P& p, C&) {
           p.tensor("IndicesTensor").sizes = {3, 2, 2};
           p.tensor("UpdatesTensor").sizes = {3, 2, 2};
         }},
        {"SC2", "UpdatesTensor's DataType differs from the input's", retype("UpdatesTensor")},
        {"SC3", "IndicesTensor is FLOAT32", float_indices},
        {"SC4", "Axis is 4 with 4 dimensions", set_scalar("Axis", 4)},
        {"SC5", "OutputTensor's sizes differ from InputTensor's",
         [](P& p, C&) { p.tensor("OutputTensor").sizes[0] = 3; }},
        {"SC6", "UpdatesTensor's sizes differ from IndicesTensor's",
         [](P& p, C&) { p.tensor("UpdatesTensor").sizes[2] = 1; }},
        {"SC7", "IndicesTensor differs from InputTensor in a dimension other than Axis",
         [](P& p, C&) {
           p.tensor("IndicesTensor").sizes[0] = 1;
           p.tensor("UpdatesTensor").sizes[0] = 1;
         }},
    };
  }
  if (op == "gather_nd1") {
    return {
        {"G1", "IndicesTensor has 3 dimensions, the input 4",
         [](P& p, C&) {
           p.tensor("IndicesTensor").sizes = {3, 2, 1};
         }},
        {"G2", "OutputTensor's DataType differs from the input's", retype("OutputTensor")},
        {"G3", "IndicesTensor is FLOAT32", float_indices},
        {"G4", "InputDimensionCount is 5 with 4 dimensions", set_scalar("InputDimensionCount", 5)},
        {"G5", "BatchDimensionCount equals InputDimensionCount", set_scalar("BatchDimensionCount", 3)},
        {"G6", "each index tuple has 3 coordinates but only 2 input dimensions follow the batch",
         [](P& p, C&) {
           TensorPlan& t = p.tensor("IndicesTensor");
           t.sizes[3] = 3;
           t.value = [](const dmlref::Coord&) -> std::int64_t { return 0; };
         }},
        {"G7", "InputDimensionCount is 3 but the input's leading size is 2",
         [](P& p, C&) { p.tensor("InputTensor").sizes[0] = 2; }},
        {"G8", "the batch sizes of InputTensor (3) and IndicesTensor (2) differ",
         [](P& p, C&) { p.tensor("IndicesTensor").sizes[1] = 2; }},
        {"G9", "OutputTensor's sizes are not the inferred ones",
         [](P& p, C&) { p.tensor("OutputTensor").sizes[3] = 3; }},
    };
  }
  return {
      {"R1", "SequenceLengthsTensor has 3 dimensions, the input 4",
       [](P& p, C&) { p.tensor("SequenceLengthsTensor").sizes = {3, 1, 2}; }},
      {"R2", "OutputTensor's sizes differ from InputTensor's",
       [](P& p, C&) { p.tensor("OutputTensor").sizes[0] = 3; }},
      {"R2", "OutputTensor's DataType differs from InputTensor's", retype("OutputTensor")},
      {"R3", "SequenceLengthsTensor's size along Axis is 2, not 1",
       [](P& p, C&) { p.tensor("SequenceLengthsTensor").sizes[2] = 2; }},
      {"R3", "SequenceLengthsTensor differs from InputTensor in a dimension other than Axis",
       [](P& p, C&) { p.tensor("SequenceLengthsTensor").sizes[1] = 2; }},
      {"R4", "SequenceLengthsTensor is INT32",
       [](P& p, C&) { p.tensor("SequenceLengthsTensor").type = DataType::Int32; }},
      {"R5", "Axis is 4 with 4 dimensions", set_scalar("Axis", 4)},
  };
}

std::vector<CasePlan> invalid_cases(OpContext& c) {
  std::vector<CasePlan> out;
  std::vector<InvalidSpec> specs = operator_rules(c.op);
  for (InvalidSpec& s : tensor_rules()) specs.push_back(std::move(s));
  for (const InvalidSpec& s : specs) {
    CasePlan p = base_case(c);
    s.mutate(p, c);
    p.rule = s.rule;
    p.why = s.why;
    p.label = "invalid_" + s.rule;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace
}  // namespace dmlref_suite

namespace dmlref_suite {
namespace {

// ------------------------------------------------------------------------------------------------
// Input values

// Random bits of the type; unless `special`, floats are finite and normal (NaN payloads, -0,
// subnormals and infinities get cases of their own). The sentinel never appears.
void fill_data(Rng& rng, dmlref::NpyArray& a, bool special) {
  const DataType type = a.data_type();
  const std::size_t esize = dmlref::element_size(type);
  const std::uint64_t sentinel = sentinel_bits(type);
  const std::uint64_t mask = esize == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * esize)) - 1;
  // Exponent field: shift and width, for the three float types.
  int shift = 0, width = 0;
  if (type == DataType::Float16) shift = 10, width = 5;
  if (type == DataType::Float32) shift = 23, width = 8;
  if (type == DataType::Float64) shift = 52, width = 11;
  const std::uint64_t exp_mask = width == 0 ? 0 : ((std::uint64_t{1} << width) - 1) << shift;
  std::byte* data = a.bytes().data();
  for (std::uint64_t i = 0; i < a.element_count(); ++i) {
    std::uint64_t bits = rng.next() & mask;
    if (width != 0) {
      const std::uint64_t exp = bits & exp_mask;
      if (special && i % 4 == 0) {
        // ±0, ±infinity, a quiet and a signalling NaN with payloads, a subnormal.
        const std::uint64_t sign = bits & (std::uint64_t{1} << (8 * esize - 1));
        switch ((i / 4) % 5) {
          case 0: bits = sign; break;
          case 1: bits = sign | exp_mask; break;
          case 2: bits = sign | exp_mask | (std::uint64_t{1} << (shift - 1)) | 5; break;
          case 3: bits = sign | exp_mask | 3; break;
          default: bits = sign | ((bits & ((std::uint64_t{1} << shift) - 1)) | 1); break;
        }
      } else if (!special) {
        if (exp == exp_mask) bits &= ~(std::uint64_t{1} << (shift + width - 1));
        if (exp == 0) bits |= std::uint64_t{1} << shift;
      }
    }
    if (bits == sentinel) bits ^= 1;
    set_element(data, esize, i, bits);
  }
}

// Index or length values at every coordinate the tensor addresses (0 in the padding).
void fill_values(dmlref::NpyArray& a, const TensorPlan& t) {
  dmlref::visit(a.data_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      const dmlref::TensorView<T> v(a.view<T>().data(), plan_layout(t));
      dmlref::for_each_coordinate(v.layout(), [&](const dmlref::Coord& co) {
        v[co] = static_cast<T>(t.value(co));
      });
    }
  });
}

// ------------------------------------------------------------------------------------------------
// Writing one case

const std::vector<std::string>& desc_fields(const std::string& op) {
  static const std::map<std::string, std::vector<std::string>> kFields = {
      {"join", {"InputCount", "InputTensors", "OutputTensor", "Axis"}},
      {"split", {"InputTensor", "OutputCount", "OutputTensors", "Axis"}},
      {"scatter", {"InputTensor", "IndicesTensor", "UpdatesTensor", "OutputTensor", "Axis"}},
      {"gather_nd1",
       {"InputTensor", "IndicesTensor", "OutputTensor", "InputDimensionCount", "IndicesDimensionCount",
        "BatchDimensionCount"}},
      {"reverse_subsequences", {"InputTensor", "SequenceLengthsTensor", "OutputTensor", "Axis"}},
  };
  return kFields.at(op);
}

std::string resource_name(const std::string& field) {
  std::string s;
  for (char ch : field) {
    if (ch == '[') {
      s += '_';
    } else if (ch != ']') {
      s += ch;
    }
  }
  return s;
}

Json tensor_json(const TensorPlan& t) {
  Json j = Json::object();
  j.set("DataType", t.type_text.empty() ? type_string(t.type) : t.type_text);
  j.set("Sizes", Json::array_of(t.sizes));
  if (!t.strides.empty()) j.set("Strides", Json::array_of(t.strides));
  if (t.owned_by_dml) j.set("Flags", "DML_TENSOR_FLAG_OWNED_BY_DML");
  if (t.total_bytes != 0) j.set("TotalTensorSizeInBytes", t.total_bytes);
  if (t.alignment != 0) j.set("GuaranteedBaseOffsetAlignment", t.alignment);
  return j;
}

std::uint64_t safe_tensor_bytes(const TensorPlan& t) {
  try {
    return tensor_bytes(t);
  } catch (const dmlref::Error&) {
    return 64;  // an invalid description: a small buffer, the rule fails before it is used
  }
}

struct ResourcePlan {
  std::string name;
  const TensorPlan* owner = nullptr;
  std::uint64_t bytes = 0;
};

std::vector<ResourcePlan> plan_resources(const CasePlan& p, std::map<std::string, std::string>& bound) {
  std::vector<ResourcePlan> out;
  for (const TensorPlan& t : p.tensors) {
    const std::uint64_t need = safe_tensor_bytes(t);
    if (t.alias_of.empty()) {
      bound[t.field] = resource_name(t.field);
      out.push_back({resource_name(t.field), &t, need});
    } else {
      bound[t.field] = bound.at(t.alias_of);
      for (ResourcePlan& r : out) {
        if (r.name == bound[t.field]) r.bytes = std::max(r.bytes, need);
      }
    }
  }
  return out;
}

std::uint64_t estimate_bytes(const CasePlan& p) {
  std::map<std::string, std::string> bound;
  std::uint64_t total = 8192;  // model.json, case.json and the .npy headers
  for (const ResourcePlan& r : plan_resources(p, bound)) total += r.bytes;
  for (const TensorPlan& t : p.tensors) {
    if (t.output) total += safe_tensor_bytes(t);  // the expected file
  }
  return total;
}

// The writeFile shape: the tensor's sizes when they cover the whole buffer, else the buffer 1-D.
std::vector<std::uint32_t> file_dimensions(const TensorPlan& t, std::uint64_t buffer_bytes) {
  const std::size_t esize = dmlref::element_size(t.type);
  std::uint64_t count = 1;
  for (std::uint32_t s : t.sizes) count *= s;
  if (t.strides.empty() && count * esize == buffer_bytes) return t.sizes;
  return {static_cast<std::uint32_t>(buffer_bytes / esize)};
}

// Where DirectML refuses a case that breaks `rule`: CreateOperator refusing the desc ("create"),
// or binding refusing the resources ("bind": a buffer too small for its tensor, an output range
// that intersects an input's). A note where DirectML documents neither (the suite's README and
// verify report those cases apart).
struct InvalidStage {
  const char* stage;
  std::string note;
};

InvalidStage stage_of(const std::string& rule) {
  if (rule == "T10") {
    return {"bind",
            "DirectML requires a bound buffer to hold the tensor's TotalTensorSizeInBytes, but does not document "
            "whether binding a smaller one fails or is caught only by the debug layer"};
  }
  if (rule == "T13") return {"bind", ""};
  if (rule == "T11") {
    return {"create",
            "DirectML documents DML_TENSOR_FLAG_OWNED_BY_DML for inputs bound at initialization; whether "
            "CreateOperator refuses it on an output is not documented"};
  }
  if (rule == "T12") {
    return {"create",
            "DirectML does not document whether CreateOperator refuses an output whose strides address one "
            "element twice"};
  }
  if (rule == "G7") {
    return {"create",
            "DirectML does not document whether GATHER_ND1 refuses leading input or indices sizes other than 1 "
            "beyond InputDimensionCount and IndicesDimensionCount"};
  }
  return {"create", ""};
}

struct Written {
  std::string path;  // <op>/<case>
  bool valid = false;
  std::uint64_t bytes = 0;
};

Written write_case(const fs::path& suite, const std::string& op, const std::string& name, CasePlan& p,
                   FeatureLevel level, std::uint64_t seed) {
  const bool valid = p.rule.empty();
  const fs::path dir = suite / op / name;
  fs::create_directories(dir);
  Written w{op + "/" + name, valid, 0};
  Rng rng(seed);
  std::map<std::string, std::string> bound;
  const std::vector<ResourcePlan> resources = plan_resources(p, bound);

  Json model = Json::object();
  Json& res = model.set("resources", Json::object());
  for (const ResourcePlan& r : resources) {
    const TensorPlan& t = *r.owner;
    const std::size_t esize = dmlref::element_size(t.type);
    Json j = Json::object();
    j.set("initialValuesDataType", type_string(t.type));
    Json init = Json::object();
    if (t.output) {
      init.set("valueCount", r.bytes / esize);
      init.set("value", Json::number_text(sentinel_text(t.type)));
    } else {
      dmlref::NpyArray a(t.type, {static_cast<std::uint32_t>(r.bytes / esize)});
      if (t.fill == Fill::Indices || t.fill == Fill::Lengths) {
        fill_values(a, t);
      } else {
        fill_data(rng, a, t.fill == Fill::Special);
      }
      const std::vector<std::byte> image = dmlref::npy_bytes(a);
      write_file(dir / (r.name + ".npy"), image);
      w.bytes += image.size();
      init.set("sourcePath", r.name + ".npy");
    }
    j.set("initialValues", std::move(init));
    j.set("sizeInBytes", r.bytes);
    res.set(r.name, std::move(j));
  }

  Json desc = Json::object();
  Json bindings = Json::object();
  for (const std::string& field : desc_fields(op)) {
    if (const auto s = p.scalars.find(field); s != p.scalars.end()) {
      desc.set(field, s->second);
      continue;
    }
    Json tensors = Json::array(), names = Json::array();
    bool found = false;
    for (const TensorPlan& t : p.tensors) {
      if (t.group == field) {
        tensors.push(tensor_json(t));
        names.push(bound.at(t.field));
      } else if (t.field == field) {
        desc.set(field, tensor_json(t));
        bindings.set(field, bound.at(t.field));
        found = true;
      }
    }
    if (!found) {
      desc.set(field, std::move(tensors));
      bindings.set(field, std::move(names));
    }
  }
  Json op_json = Json::object();
  op_json.set("type", operator_type(op));
  op_json.set("desc", std::move(desc));
  model.set("dispatchables", Json::object()).set("op", std::move(op_json));
  Json& commands = model.set("commands", Json::array());
  Json dispatch = Json::object();
  dispatch.set("type", "dispatch");
  dispatch.set("dispatchable", "op");
  dispatch.set("bindings", std::move(bindings));
  commands.push(std::move(dispatch));

  Json case_json = Json::object();
  case_json.set("op", op);
  case_json.set("valid", valid);
  case_json.set("feature_level", dmlref::feature_level_short_name(level));
  case_json.set("why", p.why);
  if (!valid) {
    case_json.set("rule", p.rule);
    const InvalidStage st = stage_of(p.rule);
    case_json.set("stage", st.stage);
    if (!st.note.empty()) {
      case_json.set("undocumented", true);
      case_json.set("note", st.note);
    }
  }
  Json& outputs = case_json.set("outputs", Json::array());
  std::vector<const TensorPlan*> output_tensors;
  for (const TensorPlan& t : p.tensors) {
    if (t.output) output_tensors.push_back(&t);
  }
  if (valid) {
    for (std::size_t i = 0; i < output_tensors.size(); ++i) {
      const TensorPlan& t = *output_tensors[i];
      std::uint64_t bytes = 0;
      for (const ResourcePlan& r : resources) {
        if (r.name == bound.at(t.field)) bytes = r.bytes;
      }
      Json wf = Json::object();
      wf.set("type", "writeFile");
      wf.set("resource", bound.at(t.field));
      wf.set("targetPath", "output_" + std::to_string(i) + ".npy");
      wf.set("dimensions", Json::array_of(file_dimensions(t, bytes)));
      commands.push(std::move(wf));
    }
  }
  const std::string model_text = model.dump();
  write_text(dir / "model.json", model_text);
  w.bytes += model_text.size();

  // The expected outputs: this very model run by the golden model, written as writeFile would.
  Model m = load_model(dir / "model.json");
  if (valid) {
    run_model(m, Engine::Fast, level);
    const std::vector<Collision> collisions = scatter_collisions(m);
    if (op == "scatter") {
      case_json.set("why", p.why + (collisions.empty() ? "; no two updates collide"
                                                       : "; " + std::to_string(collisions.size()) +
                                                             " output element(s) where updates collide"));
    }
    for (std::size_t i = 0; i < m.writes.size(); ++i) {
      const WriteFileCommand& wf = m.writes[i];
      const ModelBuffer& b = m.resources.at(wf.resource);
      const std::vector<std::byte> image = writefile_image(b.type, wf.dimensions, b.bytes);
      const std::string expected = "expected_" + std::to_string(i) + ".npy";
      write_file(dir / expected, image);
      w.bytes += image.size();
      Json o = Json::object();
      o.set("tensor", output_tensors[i]->field);
      o.set("result", wf.target);
      o.set("expected", expected);
      if (!collisions.empty()) {
        Json& list = o.set("collisions", Json::array());
        for (const Collision& k : collisions) {
          Json e = Json::object();
          e.set("element", k.offset);
          Json accept = Json::array();
          for (std::uint64_t bits : k.candidates) accept.push(hex(bits));
          e.set("accept", std::move(accept));
          list.push(std::move(e));
        }
      }
      outputs.push(std::move(o));
    }
  } else {
    // Generated cases are checked: the golden model must reject each with exactly its rule.
    bool rejected = false;
    try {
      run_model(m, Engine::Fast, level);
    } catch (const dmlref::Error& e) {
      if (dmlref::error_code_name(e.code()) != p.rule) {
        throw std::logic_error(w.path + " should break " + p.rule + " but the golden model says: " + e.what());
      }
      case_json.set("why", p.why + " (the golden model: " + e.what() + ")");
      rejected = true;
    }
    if (!rejected) {
      throw std::logic_error(w.path + " should break " + p.rule + " but the golden model accepts it");
    }
  }
  const std::string case_text = case_json.dump();
  write_text(dir / "case.json", case_text);
  w.bytes += case_text.size();
  return w;
}

// ------------------------------------------------------------------------------------------------
// The suite's own README and runners

std::string dx_level(FeatureLevel level) {
  std::string s = dmlref::feature_level_short_name(level);
  s[1] = '.';
  return s;
}

std::string readme_text(const Json& manifest, FeatureLevel level) {
  std::ostringstream os;
  os << "# DirectML data-movement conformance suite (dmlref)\n\n"
     << "Generated by `" << manifest.at("generator").str() << " generate` (seed " << manifest.at("seed").u64()
     << ", target " << dmlref::feature_level_name(level) << "). Every case is one DirectML operator "
     << "(JOIN, SPLIT, SCATTER, GATHER_ND1, REVERSE_SUBSEQUENCES) described as a DxDispatch model; the expected "
     << "outputs are dmlref's golden model's. The protocol below is all a runner must follow, so the suite "
     << "runs through DxDispatch or through any runtime of your own (dmlref's docs/suite.md has it in full).\n\n"
     << "## Layout\n\n"
     << "```\n<op>/<case>/model.json      the DxDispatch model: inputs from .npy files, output buffers\n"
     << "                             filled with a sentinel, one operator, one dispatch, a writeFile\n"
     << "                             per output (output_<i>.npy)\n"
     << "<op>/<case>/case.json       op, valid, feature_level, why; rule, stage (and undocumented,\n"
     << "                             note) for invalid cases; outputs: tensor, result, expected\n"
     << "<op>/<case>/*.npy           the input buffers; expected_<i>.npy: exactly the file a correct\n"
     << "                             device's writeFile produces (the whole buffer)\n"
     << "suite.json                  the list of cases and the manifest: the SHA-256 of every other file\n"
     << "run_suite.sh, run_suite.ps1 the runners (bash on WSL or Linux, PowerShell on Windows)\n```\n\n"
     << "Input tensors may be packed, padded, transposed or broadcast (zero strides): each input file is "
     << "the tensor's whole buffer, one dimension long. Output buffers start filled with a sentinel "
     << "value; slots the output tensor does not address (padding) must still hold it afterwards, so "
     << "an expected file shows it there. SCATTER cases whose indices collide list, per output, the "
     << "colliding buffer elements and the bit patterns of every update that may land there "
     << "(`collisions`: `element`, `accept`); DirectML guarantees no winner, so any one is correct; "
     << "the expected file holds one of them.\n\n"
     << "Invalid cases break one rule each (`rule`: the operator's rules and the tensor rules T1-T4, "
     << "T8-T13 that a model can express; T5-T7 describe strides and are not errors). `stage` says where "
     << "DirectML refuses the case: `create` (CreateOperator refuses the desc; DxDispatch prints "
     << "`ERROR creating dispatchable` and exits with 0x8007023E, 62 in bash, -2147024322 in PowerShell) or "
     << "`bind` (binding refuses the resources, e.g. T13's output bound to an input's buffer; DxDispatch "
     << "prints `ERROR while binding resources`). Where DirectML does not document its behaviour (T10, T11, "
     << "T12, and GATHER_ND1's G7) `case.json` has `\"undocumented\": true` and a `note`; verify reports "
     << "those cases apart and they do not decide its exit status. Rules about index values (SCATTER's SC8, "
     << "GATHER_ND1's G10) are not in the suite: DirectML validates descriptions and bindings, never tensor "
     << "values.\n\n"
     << "## Run it\n\n"
     << "Build DxDispatch (github.com/microsoft/DirectML, folder DxDispatch), then:\n\n"
     << "```\n# Windows PowerShell\n.\\run_suite.ps1 -DxDispatch C:\\path\\to\\dxdispatch.exe -Results C:\\results "
     << "[-Timeout 300] [-Filter REGEX] [-Jobs N] [-ExtraArgs @('-a', '1')]\n"
     << "# bash (WSL or Linux)\n./run_suite.sh /path/to/dxdispatch RESULTS [--timeout 300] [--filter REGEX] "
     << "[--jobs N] [-- DxDispatch arguments]\n```\n\n"
     << "Each case runs as `dxdispatch <op>/<case>/model.json --output_path RESULTS/<op>/<case> "
     << "--dml_feature_level " << dx_level(level) << "`, and leaves in `RESULTS/<op>/<case>/`: `exit_code` (the "
     << "exit code and a newline, or the word `timeout`), `log.txt` (DxDispatch's output) and the output "
     << "files its writeFile commands write. The options:\n\n"
     << "- `--timeout SECONDS` / `-Timeout`: a case running longer is killed and recorded as `timeout` "
     << "(default 300 seconds; 0: no limit).\n"
     << "- `--filter REGEX` / `-Filter`: run only the cases whose `<op>/<case>` name matches.\n"
     << "- `--jobs N` / `-Jobs`: run N cases at once (default 1).\n"
     << "- DxDispatch's own arguments: after RESULTS or after `--` (bash), in `-ExtraArgs` (PowerShell), "
     << "e.g. `-a 1` to pick an adapter or `-d` for the debug layers.\n\n"
     << "RESULTS must lie outside the suite: a runner refuses (exit 2, nothing touched) a RESULTS that is the "
     << "suite, lies inside it or contains it. Before a case runs it deletes only that case's `exit_code`, "
     << "`log.txt` and output files of an earlier run; other files in RESULTS stay.\n\n"
     << "DxDispatch's exit code alone does not say why a run failed: a model that does not parse (\"Failed to "
     << "parse the model\", exit 255 in bash), a missing device (\"Failed to create a device\") or a crash are "
     << "failures too, and a `writeFile` that fails is only logged (the exit code stays 0, the output file is "
     << "missing). So verify reads `log.txt` as well.\n\n"
     << "## Check the results\n\n"
     << "```\ndmlref-check verify SUITE --results RESULTS [--filter REGEX] [--expect-fail FILE] [--json FILE] "
     << "[--junit FILE]\n```\n\n"
     << "verify first checks the suite against its manifest and refuses a modified suite (exit 2, naming the "
     << "file). A valid case passes when the run exited 0 and every output file equals the expected one bit "
     << "for bit (at SCATTER collisions, any listed candidate). An invalid case passes when the run failed at "
     << "the case's stage (its message in `log.txt`, a non-zero exit code); exit 0, a parse failure, a missing "
     << "device, a crash or the other stage fail it, with that reason. A case without an `exit_code` is "
     << "\"not run\", one whose `exit_code` says `timeout` is \"timeout\". Result files are read only if they "
     << "are regular files no larger than the expected file allows (an `exit_code` at most 64 bytes).\n\n"
     << "- `--filter REGEX`: grade only the cases whose `<op>/<case>` matches.\n"
     << "- `--expect-fail FILE`: `<op>/<case>` names, one a line (`#` starts a comment). A listed case that "
     << "fails is an \"expected failure\" and does not fail the run; one that passes is \"fixed\".\n"
     << "- `--json FILE`: per case `name`, `op`, `valid`, `status` (passed, failed, not run, timeout, "
     << "expected failure, fixed), `reason`, `mismatches` (the first differing elements); `rule`, `stage` "
     << "and `undocumented` for invalid cases; and a `summary`.\n"
     << "- `--junit FILE`: JUnit XML, one testsuite per operator.\n\n"
     << "A report file may not be inside the suite or be any file verify reads (hard links and symlinks "
     << "count), and must be writable: verify checks that before grading. verify prints the first differing "
     << "elements of each failing case and a summary per operator; it exits 0 when every counted case passed "
     << "(expected failures and fixed cases included), 1 otherwise, 2 on bad usage or a modified suite.\n";
  return os.str();
}

// ------------------------------------------------------------------------------------------------
// The command

constexpr const char* kAllOps[] = {"join", "split", "scatter", "gather_nd1", "reverse_subsequences"};

struct GenerateArgs {
  fs::path out;
  std::vector<std::string> ops;
  FeatureLevel level = FeatureLevel::k5_0;
  std::uint64_t seed = 1;
  std::uint64_t max_bytes = std::uint64_t{256} << 20;
  bool overwrite = false;
  bool ops_given = false;
};

GenerateArgs parse_generate(int argc, char** argv, bool& help_shown) {
  GenerateArgs a;
  std::string out, ops, level;
  CLI::App app{"Writes a conformance suite of DxDispatch models whose expected outputs are the golden model's,\n"
               "with the runners run_suite.sh and run_suite.ps1 and a README. DIR is written whole or not at all.",
               "dmlref-check generate"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  app.add_option("--out", out, "the suite's directory (new, empty, or with --overwrite an intact suite)")->required();
  app.add_option("--ops", ops, "operators, comma-separated: join, split, scatter, gather_nd1, reverse_subsequences "
                               "(default: all the feature level has)");
  app.add_option("--feature-level", level, "DirectML feature level the cases target, e.g. 4_1, 5_0 (default 5_0)");
  app.add_option("--seed", a.seed, "seed of the cases' shapes and values (default 1): a seed names one suite");
  app.add_option("--max-bytes", a.max_bytes, "cap on the suite's size; large cases are left out first (default 256 MiB)");
  app.add_flag("--overwrite", a.overwrite,
               "replace DIR when it holds exactly a suite generate wrote (its manifest matches every file)");
  if (parse_command_line(app, argc, argv, "generate")) {
    help_shown = true;
    return a;
  }
  a.out = out;
  if (!level.empty()) a.level = parse_level(level);
  if (app.count("--ops") != 0) {
    a.ops_given = true;
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = ops.find(',', start);
      const std::string op = ops.substr(start, comma - start);
      if (std::find(std::begin(kAllOps), std::end(kAllOps), op) == std::end(kAllOps)) {
        throw UsageError("generate: --ops: unknown operator '" + display_text(op) +
                         "' (join, split, scatter, gather_nd1, reverse_subsequences)");
      }
      if (std::find(a.ops.begin(), a.ops.end(), op) == a.ops.end()) a.ops.push_back(op);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (a.out.empty()) throw UsageError("generate needs --out DIR");
  if (a.ops.empty()) a.ops.assign(std::begin(kAllOps), std::end(kAllOps));
  return a;
}

FeatureLevel introduced(const std::string& op) {
  if (op == "gather_nd1") return dmlref::kGatherNd1IntroducedLevel;
  if (op == "reverse_subsequences") return dmlref::kReverseSubsequencesIntroduced;
  return FeatureLevel::k1_0;
}

OpContext context_for(const std::string& op, FeatureLevel level, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (char ch : op) h = h * 131 + static_cast<unsigned char>(ch);
  OpContext c{op, level, Rng(h), {}, {}, 1, 8, level >= FeatureLevel::k3_0};
  std::span<const SupportRow> data, index;
  if (op == "join") data = dmlref::kJoinSupport;
  if (op == "split") data = dmlref::kSplitSupport;
  if (op == "scatter") data = dmlref::kScatterSupport, index = dmlref::kScatterIndicesSupport;
  if (op == "gather_nd1") data = dmlref::kGatherNd1DataSupport, index = dmlref::kGatherNd1IndicesSupport;
  if (op == "reverse_subsequences") {
    data = dmlref::kReverseSubsequencesSupport;
    index = dmlref::kReverseSubsequencesSequenceLengthsSupport;
  }
  const SupportRow* row = row_at(data, level);
  c.types = types_of(row->types);
  c.min_rank = row->min_dimensions;
  c.max_rank = row->max_dimensions;
  if (!index.empty()) {
    const SupportRow* index_row = row_at(index, level);
    c.index_types = types_of(index_row->types);
    c.min_rank = std::max(c.min_rank, index_row->min_dimensions);
    c.max_rank = std::min(c.max_rank, index_row->max_dimensions);
  }
  return c;
}

// Builds the suite in `tmp`; returns the manifest.
Json build_suite(const GenerateArgs& a, const fs::path& tmp, std::ostream& log) {
  struct OpPlans {
    std::string op;
    std::vector<CasePlan> cases;
  };
  std::vector<OpPlans> plans;
  for (const std::string& op : a.ops) {
    if (a.level < introduced(op)) {
      if (a.ops_given) {
        throw UsageError("generate: " + op + " needs " + dmlref::feature_level_name(introduced(op)) +
                         "; the target is " + dmlref::feature_level_name(a.level));
      }
      log << "skipping " << op << ": it needs " << dmlref::feature_level_name(introduced(op)) << "\n";
      continue;
    }
    OpContext c = context_for(op, a.level, a.seed);
    OpPlans p{op, valid_cases(c)};
    for (CasePlan& k : invalid_cases(c)) p.cases.push_back(std::move(k));
    plans.push_back(std::move(p));
  }
  // Fit --max-bytes: drop the large cases, largest first, while the suite is too big.
  std::uint64_t total = 0;
  std::vector<std::pair<std::uint64_t, CasePlan*>> large;
  for (OpPlans& p : plans) {
    for (CasePlan& k : p.cases) {
      const std::uint64_t bytes = estimate_bytes(k);
      total += bytes;
      if (k.large) large.emplace_back(bytes, &k);
    }
  }
  std::sort(large.begin(), large.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::set<const CasePlan*> dropped;
  for (const auto& [bytes, k] : large) {
    if (total <= a.max_bytes) break;
    total -= bytes;
    dropped.insert(k);
  }
  if (total > a.max_bytes) {
    throw UsageError("generate: the suite needs about " + std::to_string(total) + " bytes; --max-bytes " +
                     std::to_string(a.max_bytes) + " is too small");
  }
  Json manifest = Json::object();
  manifest.set("generator", std::string("dmlref-check ") + DMLREF_VERSION_STRING);
  manifest.set("seed", a.seed);
  manifest.set("feature_level", dmlref::feature_level_short_name(a.level));
  Json& cases = manifest.set("cases", Json::array());
  std::uint64_t written = 0;
  for (OpPlans& p : plans) {
    int index = 0, valid = 0, invalid = 0;
    for (CasePlan& k : p.cases) {
      const int number = index++;
      if (dropped.count(&k) != 0) continue;
      std::string name = std::to_string(number);
      name.insert(0, 3 - std::min<std::size_t>(3, name.size()), '0');
      name += "_" + k.label;
      const std::uint64_t case_seed = a.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(number) * 7919 +
                                      static_cast<std::uint64_t>(p.op.size());
      const Written w = write_case(tmp, p.op, name, k, a.level, case_seed);
      cases.push(w.path);
      written += w.bytes;
      (w.valid ? valid : invalid) += 1;
    }
    log << p.op << ": " << valid << " valid, " << invalid << " invalid cases\n";
  }
  log << "total: " << cases.items().size() << " cases, " << written << " bytes";
  if (!dropped.empty()) log << " (" << dropped.size() << " large case(s) left out to fit --max-bytes)";
  log << "\n";
  write_text(tmp / "README.md", readme_text(manifest, a.level));
  write_text(tmp / "run_suite.sh", runner_text(kBashRunner, dx_level(a.level)));
  fs::permissions(tmp / "run_suite.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add);
  write_text(tmp / "run_suite.ps1", runner_text(kPowerShellRunner, dx_level(a.level)));
  // Last: the SHA-256 of every file written above, so verify can trust them.
  manifest.set("manifest", make_manifest(tmp));
  write_text(tmp / "suite.json", manifest.dump());
  return manifest;
}

// Refuses (UsageError) to replace `dir` unless it holds exactly a suite generate wrote: a
// manifest that matches every file it lists, and nothing else (no other file, symlink or folder).
void check_replaceable(const fs::path& dir) {
  const std::string shown = "'" + display_text(dir.string()) + "'";
  std::set<std::string> listed;
  try {
    listed = check_manifest(dir, read_suite_json(dir));
  } catch (const std::exception& e) {
    throw UsageError("generate: " + shown + " is not an intact suite, so --overwrite will not replace it (" +
                     display_text(e.what()) + "); remove it yourself or choose another --out");
  }
  std::set<std::string> folders;
  for (const std::string& rel : listed) {
    for (std::size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1)) {
      folders.insert(rel.substr(0, slash));
    }
  }
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = fs::relative(it->path(), dir).generic_string();
    const fs::file_status st = it->symlink_status();
    const bool ours = fs::is_directory(st) ? folders.count(rel) != 0
                                           : fs::is_regular_file(st) && (listed.count(rel) != 0 || rel == "suite.json");
    if (!ours) {
      throw UsageError("generate: " + shown + " holds '" + display_text(rel) +
                       "', which generate did not write; --overwrite replaces only a suite as generated");
    }
  }
}

// Removes what an interrupted generate left beside DIR: ".NAME.tmp-PID" (a suite half built)
// and ".NAME.old-PID" (the suite being replaced), where process PID no longer runs. An old suite
// is put back when DIR itself is missing (the run died between its two renames).
void clean_leftovers(const fs::path& out, std::ostream& log) {
  const fs::path parent = out.parent_path();
  const std::string name = out.filename().string();
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) return;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string file = entry.path().filename().string();
    for (const char* kind : {".tmp-", ".old-"}) {
      const std::string prefix = "." + name + kind;
      if (file.size() <= prefix.size() || file.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string digits = file.substr(prefix.size());
      pid_t pid = 0;
      const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
      if (r.ec != std::errc() || r.ptr != digits.data() + digits.size() || pid <= 0) continue;
      if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // still running
      if (!fs::is_directory(entry.symlink_status(ec))) continue;
      if (std::string(kind) == ".old-" && !fs::exists(fs::symlink_status(out, ec))) {
        fs::rename(entry.path(), out, ec);
        if (!ec) {
          log << "restored " << display_text(out.string()) << " from an interrupted run\n";
          continue;
        }
      }
      fs::remove_all(entry.path(), ec);
      if (!ec) log << "removed " << display_text(entry.path().string()) << ", left by an interrupted run\n";
    }
  }
}

}  // namespace

int generate_main(int argc, char** argv) {
  bool help_shown = false;
  const GenerateArgs a = parse_generate(argc, argv, help_shown);
  if (help_shown) return 0;
  fs::path out = fs::absolute(a.out).lexically_normal();
  if (!out.has_filename()) out = out.parent_path();
  std::error_code ec;
  // A symlinked DIR is followed: the suite goes where it points and the link stays a link.
  if (fs::is_symlink(out, ec)) {
    const fs::path target = fs::canonical(out, ec);
    if (ec || !fs::is_directory(target, ec)) {
      throw UsageError("generate: '" + display_text(out.string()) + "' is a symlink to no directory");
    }
    out = target;
  }
  std::ostringstream log;
  clean_leftovers(out, log);
  if (fs::exists(fs::symlink_status(out, ec))) {
    if (!fs::is_directory(out, ec)) {
      throw UsageError("generate: '" + display_text(out.string()) + "' exists and is not a directory");
    }
    if (!fs::is_empty(out, ec)) {
      if (!a.overwrite) {
        throw UsageError("generate: '" + display_text(out.string()) +
                         "' is not empty; give --overwrite to replace the suite in it");
      }
      check_replaceable(out);
    }
  }
  // Built beside DIR and renamed into place: DIR is either the old suite or the whole new one.
  const std::string stamp = std::to_string(::getpid());
  const fs::path tmp = out.parent_path() / ("." + out.filename().string() + ".tmp-" + stamp);
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp);
  const auto start = std::chrono::steady_clock::now();
  try {
    build_suite(a, tmp, log);
    if (fs::exists(out)) {
      const fs::path old = out.parent_path() / ("." + out.filename().string() + ".old-" + stamp);
      fs::rename(out, old);
      try {
        fs::rename(tmp, out);
      } catch (...) {
        fs::rename(old, out, ec);  // put the old suite back: never leave DIR missing
        throw;
      }
      fs::remove_all(old, ec);
    } else {
      fs::rename(tmp, out);
    }
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << log.str() << "wrote " << out.string() << " in " << static_cast<int>(seconds * 1000) << " ms\n";
  return 0;
}

}  // namespace dmlref_suite
