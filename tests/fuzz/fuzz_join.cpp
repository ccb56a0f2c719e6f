// libFuzzer harness for JOIN's runtime entry point (see fuzz_input.hpp for what it checks).
// The shapes are derived from each other so most calls get past validation: every input copies
// the output's sizes except on Axis, and the inputs' Axis sizes sum to the output's. Now and then
// one input is the first one bound twice (same description, same buffer), which is valid.
#include "fuzz_input.hpp"

#include <dmlref/ops/join.hpp>

// This file's own names: the harnesses compile as one translation unit (CMakeLists.txt).
namespace fuzz_join {

using namespace dmlref;
using namespace dmlref::fuzz;

namespace {

struct JoinCall {
  World world;
  std::vector<FuzzTensor> inputs;
  FuzzTensor output;
  std::vector<BufferTensorDesc> input_descs;
  std::uint32_t input_count = 0;
  bool null_inputs = false;
  std::uint32_t axis = 0;
  JoinOptions options;

  JoinOperatorDesc desc() const {
    return {input_count, null_inputs ? nullptr : input_descs.data(), &output.desc, axis};
  }
  std::vector<ConstBuffer> input_buffers(const World& w) const {
    std::vector<ConstBuffer> b;
    for (const FuzzTensor& t : inputs) b.push_back(t.binding.cbuf(w));
    return b;
  }
  std::vector<const FuzzTensor*> all() const {
    std::vector<const FuzzTensor*> v;
    for (const FuzzTensor& t : inputs) v.push_back(&t);
    v.push_back(&output);
    return v;
  }
  std::string describe() const {
    std::string s = "JOIN InputCount " + std::to_string(input_count) +
                    (null_inputs ? " (null)" : "") + " Axis " + std::to_string(axis) + " level 0x" +
                    std::to_string(static_cast<std::uint32_t>(options.feature_level));
    for (const FuzzTensor* t : all()) s += "\n  " + t->describe();
    return s;
  }

  void run(const World& w) const { join(desc(), input_buffers(w), output.binding.buf(w), options); }
  void validate_bound(const World& w) const {
    validate_join(desc(), input_buffers(w), output.binding.buf(w), options);
  }
  void validate_desc() const { validate_join(desc(), options); }

  void typed_reference(const World& w) const {
    const JoinLayouts l = validate_join(desc(), options);
    visit(l.data_type, [&]<class T>(std::type_identity<T>) {
      std::vector<TensorView<const T>> views;
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        views.emplace_back(static_cast<const T*>(inputs[i].binding.ptr(w)), l.inputs[i]);
      }
      dmlref::reference::join<T>(std::span<const TensorView<const T>>(views),
                                 TensorView<T>(static_cast<T*>(output.binding.ptr(w)), l.output),
                                 l.axis, options);
    });
  }

  // The spec's semantics the other way round from the library's loop: every element of input i
  // goes to the output coordinate with its Axis index shifted by the inputs before it.
  DMLREF_FUZZ_UNTRACED void model(const World& w) const {
    const Geo out = geo(output, w);
    if (input_count != inputs.size() || axis >= out.rank)
      defect("accepted with a bad count or Axis (J1, J4)");
    std::uint64_t sum = 0;
    std::vector<Geo> ins;
    for (const FuzzTensor& t : inputs) {
      ins.push_back(geo(t, w));
      const Geo& g = ins.back();
      if (g.rank != out.rank || t.desc.DataType != output.desc.DataType) defect("accepted J2/J3");
      for (std::size_t d = 0; d < g.rank; ++d) {
        if (d != axis && g.sizes[d] != out.sizes[d]) defect("accepted J5");
      }
      sum += g.sizes[axis];
    }
    if (sum != out.sizes[axis]) defect("accepted J6");
    std::uint32_t base = 0;
    for (const Geo& g : ins) {
      odometer(g.rank, g.sizes, [&](const std::uint32_t* c) DMLREF_FUZZ_UNTRACED {
        std::uint32_t o[kMaxRank];
        std::copy(c, c + g.rank, o);
        o[axis] += base;
        copy_element(out, o, g, c);
      });
      base += g.sizes[axis];
    }
  }
};

Outcome run_join(const std::uint8_t* data, std::size_t size) {
  Reader in(data, size);
  SplitMix fill{hash_bytes(data, size)};
  JoinCall c;
  const std::uint32_t rank = in.rank();
  const DataType type = in.data_type();
  c.axis = decode_axis(in, rank);
  const std::uint32_t shape_axis = rank == 0 ? 0 : c.axis % rank;
  c.options.feature_level = in.feature_level();
  const std::uint32_t n = in.odds(40) ? 1 + in.u8() % 12 : 1 + in.u8() % 3;

  std::vector<std::uint32_t> out_sizes(rank);
  for (std::uint32_t& s : out_sizes) s = in.size_like();
  std::vector<std::uint32_t> parts(n);
  std::vector<bool> bound_twice(n, false);
  std::uint64_t sum = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    bound_twice[i] = i > 0 && in.odds(24);
    parts[i] = bound_twice[i] ? parts[0] : in.size_like();
    sum += parts[i];
  }
  if (sum > 0xFFFFFFFFu) in.taint();
  if (rank != 0) out_sizes[shape_axis] = saturate32(sum);

  c.inputs.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    FuzzTensor& t = c.inputs[i];
    if (bound_twice[i]) {
      t = c.inputs[0];  // the same description over the same buffer: inputs may overlap
    } else {
      std::vector<std::uint32_t> sizes = out_sizes;
      if (rank != 0) sizes[shape_axis] = parts[i];
      perturb_sizes(in, sizes);
      decode_tensor(in, c.world, fill, t, in.maybe_other_type(type), std::move(sizes));
    }
    t.name = "InputTensors[" + std::to_string(i) + "]";
    t.sync();
  }
  c.output.name = "OutputTensor";
  c.output.is_output = true;
  std::vector<std::uint32_t> sizes = out_sizes;
  perturb_sizes(in, sizes);
  decode_tensor(in, c.world, fill, c.output, in.maybe_other_type(type), std::move(sizes));

  if (n > 1 && in.odds(16)) {  // two inputs reading one block: valid
    share_block(c.world, fill, c.inputs[in.u8() % n], c.inputs[in.u8() % n]);
  }
  if (in.odds(10)) {  // the output into an input's block (T13 unless it lands past it)
    in.taint();
    alias(in, c.world, c.inputs[in.u8() % n], c.output);
  }
  c.input_count = n;
  if (in.odds(3)) {
    in.taint();
    if (in.u8() & 1) {
      c.input_count = 0;  // J1
    } else {
      c.null_inputs = true;
    }
  }
  for (const FuzzTensor& t : c.inputs) c.input_descs.push_back(t.desc);

  const bool clean = !in.tainted();
  Outcome o = check_call(c, clean);
  o.signature = o.signature * 1000003 + static_cast<std::uint64_t>(type) * 1000 + rank * 10 +
                std::min<std::uint32_t>(n, 9);
  o.valid = o.valid && clean;
  return o;
}

}  // namespace

DMLREF_FUZZ_HARNESS("JOIN", run_join)

}  // namespace fuzz_join
