// Compiled (never run) by scripts/check_headers.sh under its warnings, with the runtime entry
// points instantiated: a call to each public template the typed and runtime layers and npy.hpp
// have, so that the bodies behind them (templates, and the functions kept
// `template <class Deferred = void>` so that they compile only where called) are checked for
// warnings too, not only parsed.
#include <dmlref/dmlref.hpp>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <span>
#include <string>
#include <vector>

namespace {

using dmlref::Buffer;
using dmlref::ConstBuffer;
using dmlref::TensorView;

[[maybe_unused]] void call_typed_layer(TensorView<const float> in, TensorView<float> out,
                                       TensorView<const std::int32_t> indices,
                                       TensorView<const std::uint32_t> lengths) {
  const std::vector<TensorView<const float>> inputs{in, in};
  const std::vector<TensorView<float>> outputs{out, out};
  const std::span<const TensorView<const float>> input_span(inputs);
  const std::span<const TensorView<float>> output_span(outputs);

  dmlref::validate_join<float>(input_span, out, 0);
  dmlref::join<float>(input_span, out, 0);
  dmlref::join<float>({in, in}, out, 0);
  dmlref::join<float>(outputs, out, 0);
  dmlref::reference::join<float>(input_span, out, 0);

  dmlref::validate_split<float>(in, output_span, 0);
  dmlref::split<float>(in, output_span, 0);
  dmlref::split<float>(in, outputs, 0);
  dmlref::reference::split<float>(in, output_span, 0);

  dmlref::validate_scatter<float, std::int32_t>(in, indices, in, out, 0);
  dmlref::scatter<float, std::int32_t>(in, indices, in, out, 0);
  dmlref::reference::scatter<float, std::int32_t>(in, indices, in, out, 0);

  dmlref::validate_gather_nd1(in, indices, out, 2, 2, 0);
  dmlref::gather_nd1(in, indices, out, 2, 2, 0);
  dmlref::reference::gather_nd1(in, indices, out, 2, 2, 0);

  dmlref::validate_reverse_subsequences(in, lengths, out, 0);
  dmlref::reverse_subsequences<float>(in, lengths, out, 0);
  dmlref::reference::reverse_subsequences<float>(in, lengths, out, 0);
}

[[maybe_unused]] void call_runtime_layer(const dmlref::JoinOperatorDesc& join,
                                         const dmlref::SplitOperatorDesc& split,
                                         const dmlref::ScatterOperatorDesc& scatter,
                                         const dmlref::GatherNd1OperatorDesc& gather,
                                         const dmlref::ReverseSubsequencesOperatorDesc& reverse,
                                         const dmlref::BufferTensorDesc& tensor, ConstBuffer in,
                                         Buffer out, std::span<const ConstBuffer> ins,
                                         std::span<const Buffer> outs) {
  const std::vector<std::uint32_t> sizes{2, 3};
  dmlref::infer_join_output_sizes({sizes, sizes}, 0);
  dmlref::infer_split_output_sizes(sizes, 0, {1, 1});
  dmlref::infer_split_output_sizes(sizes, 0, 2u);
  dmlref::infer_gather_nd1_output_sizes({2, 3}, {2, 1}, 2, 2, 0);

  dmlref::validate_join(join);
  dmlref::validate_join(join, ins, out);
  dmlref::validate_join(join, {in, in}, out);
  dmlref::validate_split(split);
  dmlref::validate_split(split, in, outs);
  dmlref::validate_split(split, in, {out, out});
  dmlref::validate_scatter(scatter);
  dmlref::validate_scatter(scatter, in, in, in, out);
  dmlref::validate_gather_nd1(gather);
  dmlref::validate_gather_nd1(gather, in, in, out);
  dmlref::validate_reverse_subsequences(reverse);
  dmlref::validate_reverse_subsequences(reverse, in, in, out);
  dmlref::bind_tensor("OP", "Tensor", &tensor, in.data, in.size_in_bytes, false);
}

[[maybe_unused]] void call_npy(std::span<const std::byte> image, TensorView<const float> view) {
  dmlref::NpyArray array(dmlref::DataType::Float32, {2, 3});
  array.reshape({3, 2});
  (void)array.tensor_desc();
  (void)dmlref::NpyArray::from_view(view);
  (void)dmlref::read_npy(image);
  (void)dmlref::read_npy(std::string("in.npy"));
  std::stringstream stream;
  dmlref::write_npy(stream, array);
  (void)dmlref::NpyArray::from_stream(stream, "stream", std::nullopt);
  (void)dmlref::npy_bytes(array);
  (void)dmlref::npy_bytes(view);
  (void)dmlref::parse_npy_header(image, "image");
  dmlref::write_npy(std::string("out.npy"), array);
  dmlref::write_npy(std::string("out.npy"), view);
}

}  // namespace
