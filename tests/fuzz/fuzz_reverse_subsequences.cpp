// libFuzzer harness for REVERSE_SUBSEQUENCES' runtime entry point (see fuzz_input.hpp for what it
// checks). The shapes are derived from each other so most calls get past validation: the output
// has the input's sizes, the lengths too except 1 on Axis, often broadcast. Every length is valid
// (longer ones clamp to the Axis size), so lengths range over 0 .. n + 1 and the extremes (2^32 + k
// must not truncate to k). Now and then the input and the lengths share one block: valid.
#include "fuzz_input.hpp"

#include <dmlref/ops/reverse_subsequences.hpp>

// This file's own names: the harnesses compile as one translation unit (CMakeLists.txt).
namespace fuzz_reverse_subsequences {

using namespace dmlref;
using namespace dmlref::fuzz;

namespace {

struct ReverseCall {
  World world;
  FuzzTensor input, lengths, output;
  std::uint32_t axis = 0;
  ReverseSubsequencesOptions options;

  ReverseSubsequencesOperatorDesc desc() const {
    return {&input.desc, &lengths.desc, &output.desc, axis};
  }
  std::vector<const FuzzTensor*> all() const { return {&input, &lengths, &output}; }
  std::string describe() const {
    std::string s = "REVERSE_SUBSEQUENCES Axis " + std::to_string(axis) + " level " +
                    std::to_string(static_cast<std::uint32_t>(options.feature_level));
    for (const FuzzTensor* t : all()) s += "\n  " + t->describe();
    return s;
  }

  void run(const World& w) const {
    reverse_subsequences(desc(), input.binding.cbuf(w), lengths.binding.cbuf(w),
                         output.binding.buf(w), options);
  }
  void validate_bound(const World& w) const {
    validate_reverse_subsequences(desc(), input.binding.cbuf(w), lengths.binding.cbuf(w),
                                  output.binding.buf(w), options);
  }
  void validate_desc() const { validate_reverse_subsequences(desc(), options); }

  void typed_reference(const World& w) const {
    validate_reverse_subsequences(desc(), options);
    visit(input.desc.DataType, [&]<class T>(std::type_identity<T>) {
      auto run_with = [&]<class L>(std::type_identity<L>) {
        dmlref::reference::reverse_subsequences<T, L>(
            TensorView<const T>(static_cast<const T*>(input.binding.ptr(w)), layout_of(input)),
            TensorView<const L>(static_cast<const L*>(lengths.binding.ptr(w)), layout_of(lengths)),
            TensorView<T>(static_cast<T*>(output.binding.ptr(w)), layout_of(output)), axis,
            options);
      };
      if (lengths.desc.DataType == DataType::UInt32) {
        run_with(std::type_identity<std::uint32_t>{});
      } else {
        run_with(std::type_identity<std::uint64_t>{});
      }
    });
  }

  // The spec's semantics driven by the lengths: each subsequence (one per lengths element) has
  // its first L elements reversed and the rest copied.
  DMLREF_FUZZ_UNTRACED void model(const World& w) const {
    const Geo in = geo(input, w), len = geo(lengths, w), out = geo(output, w);
    const std::size_t rank = in.rank;
    if (len.rank != rank || out.rank != rank) defect("accepted R1");
    if (axis >= rank) defect("accepted R5");
    if (output.desc.DataType != input.desc.DataType) defect("accepted R2 (DataType)");
    for (std::size_t d = 0; d < rank; ++d) {
      if (out.sizes[d] != in.sizes[d]) defect("accepted R2 (Sizes)");
      if (len.sizes[d] != (d == axis ? 1 : in.sizes[d])) defect("accepted R3");
    }
    const DataType ltype = lengths.desc.DataType;
    if (ltype != DataType::UInt32 && ltype != DataType::UInt64) defect("accepted R4");
    const std::uint32_t n = in.sizes[axis];
    odometer(rank, len.sizes, [&](const std::uint32_t* c) DMLREF_FUZZ_UNTRACED {
      const std::uint64_t length = std::min<std::uint64_t>(load_index(ltype, len.at(c)), n);
      std::uint32_t o[kMaxRank], x[kMaxRank];
      std::copy(c, c + rank, o);
      std::copy(c, c + rank, x);
      for (std::uint32_t a = 0; a < n; ++a) {
        o[axis] = a;
        x[axis] = a < length ? static_cast<std::uint32_t>(length - 1 - a) : a;
        copy_element(out, o, in, x);
      }
    });
  }
};

Outcome run_reverse(const std::uint8_t* data, std::size_t size) {
  Reader in(data, size);
  SplitMix fill{hash_bytes(data, size)};
  ReverseCall c;
  const std::uint32_t rank = in.rank();
  const DataType type = in.data_type();
  const DataType length_type = in.u8() % 2 == 0 ? DataType::UInt32 : DataType::UInt64;
  c.axis = decode_axis(in, rank);
  const std::uint32_t shape_axis = rank == 0 ? 0 : c.axis % rank;
  IndexSource source;  // early in the input, where short inputs still reach it
  source.decode(in, length_type, /*every_value_valid=*/true);
  c.options.feature_level = in.feature_level();

  std::vector<std::uint32_t> in_sizes(rank);
  for (std::uint32_t& s : in_sizes) s = in.size_like();

  c.input.name = "InputTensor";
  std::vector<std::uint32_t> sizes = in_sizes;
  perturb_sizes(in, sizes);
  decode_tensor(in, c.world, fill, c.input, in.maybe_other_type(type), std::move(sizes));
  c.lengths.name = "SequenceLengthsTensor";
  sizes = in_sizes;
  if (rank != 0) sizes[shape_axis] = 1;
  perturb_sizes(in, sizes);
  decode_tensor(in, c.world, fill, c.lengths, in.maybe_other_type(length_type), std::move(sizes));
  c.output.name = "OutputTensor";
  c.output.is_output = true;
  sizes = in_sizes;
  perturb_sizes(in, sizes);
  decode_tensor(in, c.world, fill, c.output, in.maybe_other_type(type), std::move(sizes));

  if (in.odds(16)) share_block(c.world, fill, c.input, c.lengths);  // valid
  if (in.odds(10)) {
    in.taint();
    alias(in, c.world, in.u8() & 1 ? c.input : c.lengths, c.output);
  }

  const std::uint64_t n = rank == 0 ? 1 : std::uint64_t{in_sizes[shape_axis]} + 2;
  write_indices(
      c.world, c.lengths, source, fill, [&](const std::uint32_t*) { return n; },
      [&](const std::uint32_t* u) DMLREF_FUZZ_UNTRACED { return u[0]; });

  const bool clean = !in.tainted();
  Outcome o = check_call(c, clean);
  o.signature = o.signature * 1000003 + static_cast<std::uint64_t>(type) * 1000 +
                static_cast<std::uint64_t>(length_type) * 10 + rank;
  o.valid = o.valid && clean;
  return o;
}

}  // namespace

DMLREF_FUZZ_HARNESS("REVERSE_SUBSEQUENCES", run_reverse)

}  // namespace fuzz_reverse_subsequences
