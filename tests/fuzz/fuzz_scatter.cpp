// libFuzzer harness for SCATTER's runtime entry point (see fuzz_input.hpp for what it checks).
// The shapes are derived from each other so most calls get past validation: the output and the
// input share sizes, the indices copy them except on Axis, the updates copy the indices. Index
// values are mostly reduced modulo the Axis size, sometimes negative, sometimes out of range or
// extreme (SC8), sometimes distinct along Axis so DuplicatePolicy::Reject accepts them. Now and
// then the updates are the input bound twice, or two inputs share one block: both valid.
#include "fuzz_input.hpp"

#include <dmlref/ops/scatter.hpp>

// This file's own names: the harnesses compile as one translation unit (CMakeLists.txt).
namespace fuzz_scatter {

using namespace dmlref;
using namespace dmlref::fuzz;

namespace {

struct ScatterCall {
  World world;
  FuzzTensor input, indices, updates, output;
  std::uint32_t axis = 0;
  ScatterOptions options;

  ScatterOperatorDesc desc() const {
    return {&input.desc, &indices.desc, &updates.desc, &output.desc, axis};
  }
  std::vector<const FuzzTensor*> all() const { return {&input, &indices, &updates, &output}; }
  std::string describe() const {
    std::string s = "SCATTER Axis " + std::to_string(axis) + " level " +
                    std::to_string(static_cast<std::uint32_t>(options.feature_level)) +
                    " index_policy " + std::to_string(static_cast<int>(options.index_policy)) +
                    " duplicates " + std::to_string(static_cast<int>(options.duplicates));
    for (const FuzzTensor* t : all()) s += "\n  " + t->describe();
    return s;
  }

  void run(const World& w) const {
    scatter(desc(), input.binding.cbuf(w), indices.binding.cbuf(w), updates.binding.cbuf(w),
            output.binding.buf(w), options);
  }
  void validate_bound(const World& w) const {
    validate_scatter(desc(), input.binding.cbuf(w), indices.binding.cbuf(w),
                     updates.binding.cbuf(w), output.binding.buf(w), options);
  }
  void validate_desc() const { validate_scatter(desc(), options); }

  void typed_reference(const World& w) const {
    validate_scatter(desc(), options);
    visit(input.desc.DataType, [&]<class T>(std::type_identity<T>) {
      visit_index(indices.desc.DataType, ErrorCode::SC3, [&]<class I>(std::type_identity<I>) {
        dmlref::reference::scatter<T, I>(
            TensorView<const T>(static_cast<const T*>(input.binding.ptr(w)), layout_of(input)),
            TensorView<const I>(static_cast<const I*>(indices.binding.ptr(w)), layout_of(indices)),
            TensorView<const T>(static_cast<const T*>(updates.binding.ptr(w)), layout_of(updates)),
            TensorView<T>(static_cast<T*>(output.binding.ptr(w)), layout_of(output)), axis,
            options);
      });
    });
  }

  // The spec's semantics: output = input, then every update in row-major order of the indices.
  DMLREF_FUZZ_UNTRACED void model(const World& w) const {
    const Geo in = geo(input, w), ix = geo(indices, w), up = geo(updates, w), out = geo(output, w);
    const std::size_t rank = in.rank;
    if (ix.rank != rank || up.rank != rank || out.rank != rank) defect("accepted SC1");
    const DataType type = input.desc.DataType;
    if (updates.desc.DataType != type || output.desc.DataType != type) defect("accepted SC2");
    const DataType itype = indices.desc.DataType;
    if (!is_index_type(itype)) defect("accepted SC3");
    if (axis >= rank) defect("accepted SC4");
    for (std::size_t d = 0; d < rank; ++d) {
      if (out.sizes[d] != in.sizes[d]) defect("accepted SC5");
      if (up.sizes[d] != ix.sizes[d]) defect("accepted SC6");
      if (d != axis && ix.sizes[d] != in.sizes[d]) defect("accepted SC7");
    }
    const std::uint64_t n = in.sizes[axis];
    const bool clamp_policy = options.index_policy == IndexPolicy::Clamp;
    auto target = [&](const std::uint32_t* u) DMLREF_FUZZ_UNTRACED {
      const std::uint64_t raw = load_index(itype, ix.at(u));
      const std::optional<std::uint64_t> k = normalize(itype, raw, n);
      if (!k && !clamp_policy) defect("accepted an index outside the Axis (SC8)");
      return static_cast<std::uint32_t>(k ? *k : clamp(itype, raw, n));
    };
    if (options.duplicates == DuplicatePolicy::Reject) {
      std::vector<bool> taken(out.count(), false);
      odometer(rank, ix.sizes, [&](const std::uint32_t* u) DMLREF_FUZZ_UNTRACED {
        std::uint32_t c[kMaxRank];
        std::copy(u, u + rank, c);
        c[axis] = target(u);
        std::uint64_t flat = 0;
        for (std::size_t d = 0; d < rank; ++d) flat = flat * out.sizes[d] + c[d];
        if (taken[flat])
          defect("accepted two updates for one element under DuplicatePolicy::Reject");
        taken[flat] = true;
      });
    }
    odometer(rank, in.sizes,
             [&](const std::uint32_t* c) DMLREF_FUZZ_UNTRACED { copy_element(out, c, in, c); });
    odometer(rank, ix.sizes, [&](const std::uint32_t* u) DMLREF_FUZZ_UNTRACED {
      std::uint32_t c[kMaxRank];
      std::copy(u, u + rank, c);
      c[axis] = target(u);
      copy_element(out, c, up, u);
    });
  }
};

// More indices (and updates) than any output here has elements: kMaxBufferBytes of 1-byte elements.
constexpr std::uint64_t kMoreIndicesThanAnyOutput = kMaxBufferBytes + 1;

Outcome run_scatter(const std::uint8_t* data, std::size_t size) {
  static constexpr DataType kIndexTypesByByte[] = {DataType::UInt32, DataType::Int32,
                                                   DataType::UInt64, DataType::Int64};
  Reader in(data, size);
  SplitMix fill{hash_bytes(data, size)};
  ScatterCall c;
  const std::uint32_t rank = in.rank();
  const DataType type = in.data_type();
  const DataType index_type = kIndexTypesByByte[in.u8() % 4];
  c.axis = decode_axis(in, rank);
  const std::uint32_t shape_axis = rank == 0 ? 0 : c.axis % rank;
  // The options and the index values early in the input, where short inputs still reach them.
  IndexSource source;
  source.decode(in, index_type);
  c.options.feature_level = in.feature_level();
  c.options.index_policy = decode_index_policy(in);
  const std::uint8_t dup = in.u8();

  std::vector<std::uint32_t> in_sizes(rank);
  for (std::uint32_t& s : in_sizes) s = in.size_like();
  const bool updates_are_input = rank != 0 && in.odds(20);
  std::vector<std::uint32_t> ix_sizes = in_sizes;
  if (rank != 0 && !updates_are_input) ix_sizes[shape_axis] = in.size_like();

  c.input.name = "InputTensor";
  std::vector<std::uint32_t> sizes = in_sizes;
  perturb_sizes(in, sizes);
  decode_tensor(in, c.world, fill, c.input, in.maybe_other_type(type), std::move(sizes));
  c.indices.name = "IndicesTensor";
  sizes = ix_sizes;
  perturb_sizes(in, sizes);
  decode_tensor(in, c.world, fill, c.indices, in.maybe_other_type(index_type), std::move(sizes));
  if (updates_are_input) {
    c.updates = c.input;  // the input's description and buffer bound again: valid
  } else {
    // The indices' sizes as decoded, perturbation included: a perturbed dimension other than
    // Axis then reaches SC7 (checked after SC6, which a copy passes); with sizes of their own the
    // updates would fail SC6 first, and SC7 went unreached in 424,375 calls.
    sizes = c.indices.sizes;
    perturb_sizes(in, sizes);
    decode_tensor(in, c.world, fill, c.updates, in.maybe_other_type(type), std::move(sizes));
  }
  c.updates.name = "UpdatesTensor";
  c.updates.sync();
  c.output.name = "OutputTensor";
  c.output.is_output = true;
  sizes = in_sizes;
  perturb_sizes(in, sizes);
  decode_tensor(in, c.world, fill, c.output, in.maybe_other_type(type), std::move(sizes));

  if (in.odds(16)) {  // two inputs reading one block: valid
    FuzzTensor* inputs[] = {&c.input, &c.indices, &c.updates};
    share_block(c.world, fill, *inputs[in.u8() % 3], *inputs[in.u8() % 3]);
  }
  if (in.odds(10)) {
    in.taint();
    const FuzzTensor* inputs[] = {&c.input, &c.indices, &c.updates};
    alias(in, c.world, *inputs[in.u8() % 3], c.output);
  }

  const std::uint32_t n = rank == 0 ? 1 : in_sizes[shape_axis];
  write_indices(
      c.world, c.indices, source, fill, [&](const std::uint32_t*) { return n; },
      [&](const std::uint32_t* u) DMLREF_FUZZ_UNTRACED { return u[shape_axis]; });

  if (dup < 200) {
    c.options.duplicates = DuplicatePolicy::LastWins;
  } else if (dup < 252) {
    c.options.duplicates = DuplicatePolicy::Reject;
    // Distinct along Axis only when the Shifted values land on distinct elements of their own.
    if (source.mode() != IndexSource::Mode::Shifted || source.has_pokes() ||
        c.indices.has_strides || rank == 0 || ix_sizes[shape_axis] > n ||
        c.indices.binding.block == c.input.binding.block ||
        c.indices.binding.block == c.updates.binding.block) {
      in.taint();
    }
  } else {
    in.taint();
    c.options.duplicates = static_cast<DuplicatePolicy>(2 + dup % 4);  // InvalidOption
  }

  // Broadcast indices and updates can describe up to 2^32 - 1 updates over a few stored values.
  // Under LastWins that is a valid call whose work (and the model's, and the typed reference's) is
  // one step per update: minutes under the sanitizers. Such a call has more indices than any
  // output buffer here has elements, so it has duplicates: fuzz it under Reject, which must reject
  // it at the first repeat, in time proportional to the output.
  std::uint64_t index_count = 1;  // saturating at the bound
  for (std::uint32_t s : c.indices.sizes)
    index_count = std::min(index_count * s, kMoreIndicesThanAnyOutput);
  if (index_count == kMoreIndicesThanAnyOutput &&
      c.options.duplicates == DuplicatePolicy::LastWins) {
    in.taint();
    c.options.duplicates = DuplicatePolicy::Reject;
  }

  const bool clean = !in.tainted();
  Outcome o = check_call(c, clean);
  o.signature = o.signature * 1000003 + static_cast<std::uint64_t>(type) * 1000 +
                static_cast<std::uint64_t>(index_type) * 10 + rank;
  o.valid = o.valid && clean;
  return o;
}

}  // namespace

DMLREF_FUZZ_HARNESS("SCATTER", run_scatter)

}  // namespace fuzz_scatter
