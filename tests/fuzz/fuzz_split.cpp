// libFuzzer harness for SPLIT's runtime entry point (see fuzz_input.hpp for what it checks).
// The shapes are derived from each other so most calls get past validation: every output copies
// the input's sizes except on Axis, and the outputs' Axis sizes sum to the input's. Aliasing puts
// an output into the input's or another output's block (T13 unless it lands past it).
#include "fuzz_input.hpp"

#include <dmlref/ops/split.hpp>

// This file's own names: the harnesses compile as one translation unit (CMakeLists.txt).
namespace fuzz_split {

using namespace dmlref;
using namespace dmlref::fuzz;

namespace {

struct SplitCall {
  World world;
  FuzzTensor input;
  std::vector<FuzzTensor> outputs;
  std::vector<BufferTensorDesc> output_descs;
  std::uint32_t output_count = 0;
  bool null_outputs = false;
  std::uint32_t axis = 0;
  SplitOptions options;

  SplitOperatorDesc desc() const {
    return {&input.desc, output_count, null_outputs ? nullptr : output_descs.data(), axis};
  }
  std::vector<Buffer> output_buffers(const World& w) const {
    std::vector<Buffer> b;
    for (const FuzzTensor& t : outputs) b.push_back(t.binding.buf(w));
    return b;
  }
  std::vector<const FuzzTensor*> all() const {
    std::vector<const FuzzTensor*> v{&input};
    for (const FuzzTensor& t : outputs) v.push_back(&t);
    return v;
  }
  std::string describe() const {
    std::string s = "SPLIT OutputCount " + std::to_string(output_count) +
                    (null_outputs ? " (null)" : "") + " Axis " + std::to_string(axis) + " level " +
                    std::to_string(static_cast<std::uint32_t>(options.feature_level));
    for (const FuzzTensor* t : all()) s += "\n  " + t->describe();
    return s;
  }

  void run(const World& w) const {
    split(desc(), input.binding.cbuf(w), std::span<const Buffer>(output_buffers(w)), options);
  }
  void validate_bound(const World& w) const {
    validate_split(desc(), input.binding.cbuf(w), std::span<const Buffer>(output_buffers(w)),
                   options);
  }
  void validate_desc() const { validate_split(desc(), options); }

  void typed_reference(const World& w) const {
    const SplitLayouts l = validate_split(desc(), options);
    visit(l.data_type, [&]<class T>(std::type_identity<T>) {
      std::vector<TensorView<T>> views;
      for (std::size_t i = 0; i < outputs.size(); ++i) {
        views.emplace_back(static_cast<T*>(outputs[i].binding.ptr(w)), l.outputs[i]);
      }
      dmlref::reference::split<T>(
          TensorView<const T>(static_cast<const T*>(input.binding.ptr(w)), l.input),
          std::span<const TensorView<T>>(views), l.axis, options);
    });
  }

  // The spec's semantics driven by the input: each input element goes to the output whose Axis
  // range holds it.
  DMLREF_FUZZ_UNTRACED void model(const World& w) const {
    const Geo in = geo(input, w);
    if (output_count != outputs.size() || axis >= in.rank)
      defect("accepted with a bad count or Axis (S1, S4)");
    std::vector<Geo> outs;
    std::vector<std::uint64_t> ends;
    std::uint64_t sum = 0;
    for (const FuzzTensor& t : outputs) {
      outs.push_back(geo(t, w));
      const Geo& g = outs.back();
      if (g.rank != in.rank || t.desc.DataType != input.desc.DataType) defect("accepted S2/S3");
      for (std::size_t d = 0; d < g.rank; ++d) {
        if (d != axis && g.sizes[d] != in.sizes[d]) defect("accepted S5");
      }
      sum += g.sizes[axis];
      ends.push_back(sum);
    }
    if (sum != in.sizes[axis]) defect("accepted S6");
    odometer(in.rank, in.sizes, [&](const std::uint32_t* c) DMLREF_FUZZ_UNTRACED {
      std::size_t i = 0;
      while (c[axis] >= ends[i]) ++i;
      std::uint32_t o[kMaxRank];
      std::copy(c, c + in.rank, o);
      o[axis] = static_cast<std::uint32_t>(c[axis] - (ends[i] - outs[i].sizes[axis]));
      copy_element(outs[i], o, in, c);
    });
  }
};

Outcome run_split(const std::uint8_t* data, std::size_t size) {
  Reader in(data, size);
  SplitMix fill{hash_bytes(data, size)};
  SplitCall c;
  const std::uint32_t rank = in.rank();
  const DataType type = in.data_type();
  c.axis = decode_axis(in, rank);
  const std::uint32_t shape_axis = rank == 0 ? 0 : c.axis % rank;
  c.options.feature_level = in.feature_level();
  const std::uint32_t n = in.odds(40) ? 1 + in.u8() % 12 : 1 + in.u8() % 3;

  std::vector<std::uint32_t> in_sizes(rank);
  for (std::uint32_t& s : in_sizes) s = in.size_like();
  std::vector<std::uint32_t> parts(n);
  std::uint64_t sum = 0;
  for (std::uint32_t& p : parts) sum += (p = in.size_like());
  if (sum > 0xFFFFFFFFu) in.taint();
  if (rank != 0) in_sizes[shape_axis] = saturate32(sum);

  c.input.name = "InputTensor";
  std::vector<std::uint32_t> sizes = in_sizes;
  perturb_sizes(in, sizes);
  decode_tensor(in, c.world, fill, c.input, in.maybe_other_type(type), std::move(sizes));
  c.outputs.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    FuzzTensor& t = c.outputs[i];
    t.name = "OutputTensors[" + std::to_string(i) + "]";
    t.is_output = true;
    sizes = in_sizes;
    if (rank != 0) sizes[shape_axis] = parts[i];
    perturb_sizes(in, sizes);
    decode_tensor(in, c.world, fill, t, in.maybe_other_type(type), std::move(sizes));
  }
  if (in.odds(12)) {  // an output into the input's or another output's block
    in.taint();
    FuzzTensor& to = c.outputs[in.u8() % n];
    const std::uint32_t from = in.u8() % (n + 1);
    alias(in, c.world, from == n ? c.input : c.outputs[from], to);
  }
  c.output_count = n;
  if (in.odds(3)) {
    in.taint();
    if (in.u8() & 1) {
      c.output_count = 0;  // S1
    } else {
      c.null_outputs = true;
    }
  }
  for (const FuzzTensor& t : c.outputs) c.output_descs.push_back(t.desc);

  const bool clean = !in.tainted();
  Outcome o = check_call(c, clean);
  o.signature = o.signature * 1000003 + static_cast<std::uint64_t>(type) * 1000 + rank * 10 +
                std::min<std::uint32_t>(n, 9);
  o.valid = o.valid && clean;
  return o;
}

}  // namespace

DMLREF_FUZZ_HARNESS("SPLIT", run_split)

}  // namespace fuzz_split
