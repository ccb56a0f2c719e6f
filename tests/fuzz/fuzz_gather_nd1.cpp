// libFuzzer harness for GATHER_ND1's runtime entry point (see fuzz_input.hpp for what it checks).
// The shapes are derived from each other so most calls get past validation: r, b, m and q are
// drawn inside G4-G6 with the output's meaningful dimensions fitting in R, the input and indices
// are right-aligned behind leading 1s (G7) and share their batch sizes (G8), and the output has
// the inferred sizes (G9). Index values address the input dimension of their tuple position,
// mostly in range, sometimes negative, out of range or extreme (G10). Now and then the input and
// the indices share one block, which is valid.
#include "fuzz_input.hpp"

#include <dmlref/ops/gather_nd1.hpp>

// This file's own names: the harnesses compile as one translation unit (CMakeLists.txt).
namespace fuzz_gather_nd1 {

using namespace dmlref;
using namespace dmlref::fuzz;

namespace {

struct GatherCall {
  World world;
  FuzzTensor input, indices, output;
  std::uint32_t r = 0, q = 0, b = 0;
  GatherNd1Options options;

  GatherNd1OperatorDesc desc() const { return {&input.desc, &indices.desc, &output.desc, r, q, b}; }
  std::vector<const FuzzTensor*> all() const { return {&input, &indices, &output}; }
  std::string describe() const {
    std::string s = "GATHER_ND1 InputDimensionCount " + std::to_string(r) +
                    " IndicesDimensionCount " + std::to_string(q) + " BatchDimensionCount " +
                    std::to_string(b) + " level " +
                    std::to_string(static_cast<std::uint32_t>(options.feature_level)) +
                    " index_policy " + std::to_string(static_cast<int>(options.index_policy));
    for (const FuzzTensor* t : all()) s += "\n  " + t->describe();
    return s;
  }

  void run(const World& w) const {
    gather_nd1(desc(), input.binding.cbuf(w), indices.binding.cbuf(w), output.binding.buf(w),
               options);
  }
  void validate_bound(const World& w) const {
    validate_gather_nd1(desc(), input.binding.cbuf(w), indices.binding.cbuf(w),
                        output.binding.buf(w), options);
  }
  void validate_desc() const { validate_gather_nd1(desc(), options); }

  void typed_reference(const World& w) const {
    validate_gather_nd1(desc(), options);
    visit(input.desc.DataType, [&]<class T>(std::type_identity<T>) {
      visit_index(indices.desc.DataType, ErrorCode::G3, [&]<class I>(std::type_identity<I>) {
        dmlref::reference::gather_nd1<T, I>(
            TensorView<const T>(static_cast<const T*>(input.binding.ptr(w)), layout_of(input)),
            TensorView<const I>(static_cast<const I*>(indices.binding.ptr(w)), layout_of(indices)),
            TensorView<T>(static_cast<T*>(output.binding.ptr(w)), layout_of(output)), r, q, b,
            options);
      });
    });
  }

  // The spec's semantics driven by the indices: for every index tuple (the indices' coordinates
  // without the last), copy the addressed input slice of k trailing dimensions.
  DMLREF_FUZZ_UNTRACED void model(const World& w) const {
    const Geo in = geo(input, w), ix = geo(indices, w), out = geo(output, w);
    const std::size_t rank = in.rank;
    if (ix.rank != rank || out.rank != rank) defect("accepted G1");
    if (output.desc.DataType != input.desc.DataType) defect("accepted G2");
    const DataType itype = indices.desc.DataType;
    if (!is_index_type(itype)) defect("accepted G3");
    if (r < 1 || r > rank || q < 1 || q > rank) defect("accepted G4");
    if (b >= r || b >= q) defect("accepted G5");
    const std::uint32_t m = ix.sizes[rank - 1];
    if (m < 1 || m > r - b) defect("accepted G6");
    for (std::size_t d = 0; d < rank - r; ++d) {
      if (in.sizes[d] != 1) defect("accepted G7 (input)");
    }
    for (std::size_t d = 0; d < rank - q; ++d) {
      if (ix.sizes[d] != 1) defect("accepted G7 (indices)");
    }
    for (std::size_t j = 0; j < b; ++j) {
      if (in.sizes[rank - r + j] != ix.sizes[rank - q + j]) defect("accepted G8");
    }
    const std::uint32_t k = r - b - m;
    const std::uint32_t meaningful = q - 1 + k;
    if (meaningful > rank) defect("accepted G9 (too many output dimensions)");
    std::vector<std::uint32_t> expected(rank - meaningful, 1);
    for (std::size_t d = rank - q; d + 1 < rank; ++d) expected.push_back(ix.sizes[d]);
    for (std::size_t d = rank - k; d < rank; ++d) expected.push_back(in.sizes[d]);
    if (!std::equal(expected.begin(), expected.end(), out.sizes)) defect("accepted G9 (sizes)");

    const bool clamp_policy = options.index_policy == IndexPolicy::Clamp;
    const std::uint32_t* slice_sizes = in.sizes + (rank - k);
    odometer(rank - 1, ix.sizes, [&](const std::uint32_t* g) DMLREF_FUZZ_UNTRACED {
      std::uint32_t x[kMaxRank] = {}, o[kMaxRank] = {};
      for (std::uint32_t i = 0; i < b; ++i) x[rank - r + i] = g[rank - q + i];
      std::uint32_t u[kMaxRank];
      std::copy(g, g + rank - 1, u);
      for (std::uint32_t j = 0; j < m; ++j) {
        u[rank - 1] = j;
        const std::size_t dim = rank - r + b + j;
        const std::uint64_t raw = load_index(itype, ix.at(u));
        const std::optional<std::uint64_t> idx = normalize(itype, raw, in.sizes[dim]);
        if (!idx && !clamp_policy) defect("accepted an index outside its input dimension (G10)");
        x[dim] = static_cast<std::uint32_t>(idx ? *idx : clamp(itype, raw, in.sizes[dim]));
      }
      for (std::uint32_t i = 0; i + 1 < q; ++i) o[rank - meaningful + i] = g[rank - q + i];
      odometer(k, slice_sizes,
               [&](const std::uint32_t* s) DMLREF_FUZZ_UNTRACED {  // once when k is 0
                 for (std::uint32_t i = 0; i < k; ++i) x[rank - k + i] = o[rank - k + i] = s[i];
                 copy_element(out, o, in, x);
               });
    });
  }
};

Outcome run_gather(const std::uint8_t* data, std::size_t size) {
  static constexpr DataType kIndexTypesByByte[] = {DataType::UInt32, DataType::Int32,
                                                   DataType::UInt64, DataType::Int64};
  Reader in(data, size);
  SplitMix fill{hash_bytes(data, size)};
  GatherCall c;
  const std::uint32_t rank = in.rank();
  const std::uint32_t R = std::clamp<std::uint32_t>(rank, 1, kMaxRank);  // the shapes' rank
  const DataType type = in.data_type();
  const DataType index_type = kIndexTypesByByte[in.u8() % 4];
  // The options and the index values early in the input, where short inputs still reach them.
  IndexSource source;
  source.decode(in, index_type);
  c.options.feature_level = in.feature_level();
  c.options.index_policy = decode_index_policy(in);

  // r, b, m, then q so that (q - 1) + k fits in R.
  const std::uint32_t r = 1 + in.u8() % R;
  const std::uint32_t b = in.u8() % r;
  const std::uint32_t m = 1 + in.u8() % (r - b);
  const std::uint32_t k = r - b - m;
  const std::uint32_t q_max = R - std::max<std::uint32_t>(k, 1) + 1;
  const std::uint32_t q = b + 1 + in.u8() % (q_max - b);
  const std::uint32_t meaningful = q - 1 + k;

  std::vector<std::uint32_t> in_sizes(R, 1), ix_sizes(R, 1), out_sizes(R - meaningful, 1);
  for (std::uint32_t d = R - r; d < R; ++d) in_sizes[d] = in.size_like();
  for (std::uint32_t j = 0; j < b; ++j) ix_sizes[R - q + j] = in_sizes[R - r + j];
  for (std::uint32_t d = R - q + b; d + 1 < R; ++d) ix_sizes[d] = in.size_like();
  ix_sizes[R - 1] = m;
  for (std::uint32_t d = R - q; d + 1 < R; ++d) out_sizes.push_back(ix_sizes[d]);
  for (std::uint32_t d = R - k; d < R; ++d) out_sizes.push_back(in_sizes[d]);
  if (rank != R) {  // a hostile DimensionCount: same shapes, cut or padded in front
    for (auto* v : {&in_sizes, &ix_sizes, &out_sizes}) {
      if (rank < R) {
        v->erase(v->begin(), v->begin() + (R - rank));
      } else {
        v->insert(v->begin(), rank - R, 1u);
      }
    }
  }

  c.r = r;
  c.q = q;
  c.b = b;
  if (in.odds(6)) {
    in.taint();
    std::uint32_t* field[] = {&c.r, &c.q, &c.b};
    *field[in.u8() % 3] = in.u8() < 200 ? in.u8() % 10 : in.u32();
  }

  c.input.name = "InputTensor";
  perturb_sizes(in, in_sizes);
  decode_tensor(in, c.world, fill, c.input, in.maybe_other_type(type), in_sizes);
  c.indices.name = "IndicesTensor";
  perturb_sizes(in, ix_sizes);
  decode_tensor(in, c.world, fill, c.indices, in.maybe_other_type(index_type), ix_sizes);
  c.output.name = "OutputTensor";
  c.output.is_output = true;
  perturb_sizes(in, out_sizes);
  decode_tensor(in, c.world, fill, c.output, in.maybe_other_type(type), out_sizes);

  if (in.odds(16)) share_block(c.world, fill, c.input, c.indices);  // valid
  if (in.odds(10)) {
    in.taint();
    alias(in, c.world, in.u8() & 1 ? c.input : c.indices, c.output);
  }

  const std::size_t ix_rank = c.indices.sizes.size();
  write_indices(
      c.world, c.indices, source, fill,
      [&](const std::uint32_t* u) DMLREF_FUZZ_UNTRACED -> std::uint64_t {
        // The size of the input dimension this tuple position addresses (when the shapes allow).
        const std::uint64_t dim = std::uint64_t{R} - r + b + u[ix_rank - 1];
        return ix_rank == R && dim < c.input.sizes.size() ? c.input.sizes[dim] : 1;
      },
      [&](const std::uint32_t* u) DMLREF_FUZZ_UNTRACED { return u[ix_rank - 1]; });

  // Each tuple position has its own range: an element two positions share keeps the value
  // written last, which may be out of range for the other position.
  if (!injective(c.indices)) in.taint();

  const bool clean = !in.tainted();
  Outcome o = check_call(c, clean);
  o.signature = o.signature * 1000003 + static_cast<std::uint64_t>(type) * 100000 +
                static_cast<std::uint64_t>(index_type) * 1000 + R * 100 + q * 10 + b;
  o.valid = o.valid && clean;
  return o;
}

}  // namespace

DMLREF_FUZZ_HARNESS("GATHER_ND1", run_gather)

}  // namespace fuzz_gather_nd1
