// GATHER_ND1 through the runtime layer, the way a GPU test harness calls it: the same
// DML_GATHER_ND1_OPERATOR_DESC it gives DirectML, plus CPU buffers. Reproduces the three examples
// of DirectML's page (docs/gather_nd1.md) and exits non-zero on any mismatch.
#include <dmlref/dmlref.hpp>
#include <dmlref/ops/gather_nd1.hpp>

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace {

using dmlref::DataType;

// The pages' notation: nested brackets over the meaningful dimensions (leading 1s dropped), e.g.
// [[2,3],[0,1]].
std::string brackets(const std::vector<float>& values, const std::vector<std::uint32_t>& sizes) {
  std::size_t first = 0;
  while (first + 1 < sizes.size() && sizes[first] == 1) ++first;
  std::string out;
  std::size_t next = 0;
  auto emit = [&](auto&& self, std::size_t d) -> void {
    out += '[';
    for (std::uint32_t i = 0; i < sizes[d]; ++i) {
      if (i != 0) out += ',';
      if (d + 1 == sizes.size()) {
        char text[32];
        std::snprintf(text, sizeof text, "%g", static_cast<double>(values[next++]));
        out += text;
      } else {
        self(self, d + 1);
      }
    }
    out += ']';
  };
  emit(emit, first);
  return out;
}

std::string braces(const std::vector<std::uint32_t>& sizes) {
  std::string out = "{";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? "," : "") + std::to_string(sizes[i]);
  return out + "}";
}

// Runs one example: FLOAT32 data, UINT32 indices, packed tensors. Returns true when the output
// has the expected sizes and values.
bool run_example(const char* title, const std::vector<std::uint32_t>& input_sizes,
                 const std::vector<float>& input, const std::vector<std::uint32_t>& indices_sizes,
                 const std::vector<std::uint32_t>& indices, std::uint32_t r, std::uint32_t q,
                 std::uint32_t b, const std::vector<std::uint32_t>& expected_sizes,
                 const std::vector<float>& expected) {
  const std::vector<std::uint32_t> output_sizes = dmlref::infer_gather_nd1_output_sizes(
      std::span<const std::uint32_t>(input_sizes), std::span<const std::uint32_t>(indices_sizes),
      r, q, b);
  const dmlref::TensorDesc input_desc(DataType::Float32, input_sizes);
  const dmlref::TensorDesc indices_desc(DataType::UInt32, indices_sizes);
  const dmlref::TensorDesc output_desc(DataType::Float32, output_sizes);
  const dmlref::BufferTensorDesc in = input_desc.desc();
  const dmlref::BufferTensorDesc ix = indices_desc.desc();
  const dmlref::BufferTensorDesc out = output_desc.desc();
  const dmlref::GatherNd1OperatorDesc desc{&in, &ix, &out, r, q, b};

  std::vector<float> output(output_desc.total_tensor_size_in_bytes / sizeof(float));
  dmlref::gather_nd1(desc, {input.data(), input.size() * sizeof(float)},
                     {indices.data(), indices.size() * sizeof(std::uint32_t)},
                     {output.data(), output.size() * sizeof(float)});

  std::printf("%s\n", title);
  std::printf("  InputDimensionCount %u, IndicesDimensionCount %u, BatchDimensionCount %u\n", r, q,
              b);
  std::printf("  InputTensor   %s %s\n", braces(input_sizes).c_str(),
              brackets(input, input_sizes).c_str());
  std::vector<float> indices_as_float(indices.begin(), indices.end());
  std::printf("  IndicesTensor %s %s\n", braces(indices_sizes).c_str(),
              brackets(indices_as_float, indices_sizes).c_str());
  std::printf("  OutputTensor  %s %s\n", braces(output_sizes).c_str(),
              brackets(output, output_sizes).c_str());
  const bool ok = output_sizes == expected_sizes && output == expected;
  if (!ok) {
    std::printf("  MISMATCH: expected %s %s\n", braces(expected_sizes).c_str(),
                brackets(expected, expected_sizes).c_str());
  }
  return ok;
}

}  // namespace

int main() {
  bool ok = true;
  try {
    ok &= run_example("Example 1: 1D remapping", {2, 2}, {0, 1, 2, 3}, {2, 1}, {1, 0}, 2, 2, 0,
                      {2, 2}, {2, 3, 0, 1});
    ok &= run_example("Example 2: 2D remapping with a batch", {1, 3, 2, 2},
                      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {1, 3, 2, 2},
                      {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0}, 3, 3, 1, {1, 1, 3, 2},
                      {0, 3, 7, 4, 9, 10});

    // Example 3 gives sizes only. The output keeps the trailing k = r - b - m = 2 input sizes, as
    // the page's worked example says (its formula line's "last m" would give {1,2,5,6,7}).
    std::printf("Example 3: output sizes (sizes only)\n");
    const std::vector<std::uint32_t> input_sizes = {3, 4, 5, 6, 7};
    const std::vector<std::uint32_t> indices_sizes = {1, 1, 1, 2, 3};
    const std::vector<std::uint32_t> inferred = dmlref::infer_gather_nd1_output_sizes(
        std::span<const std::uint32_t>(input_sizes),
        std::span<const std::uint32_t>(indices_sizes), 5, 3, 0);
    // The description-only validator agrees once the output is described with those sizes.
    const dmlref::TensorDesc in(DataType::Float32, input_sizes);
    const dmlref::TensorDesc ix(DataType::UInt32, indices_sizes);
    const dmlref::TensorDesc out(DataType::Float32, inferred);
    const dmlref::BufferTensorDesc in_d = in.desc(), ix_d = ix.desc(), out_d = out.desc();
    const auto validated = dmlref::validate_gather_nd1({&in_d, &ix_d, &out_d, 5, 3, 0});
    std::printf("  InputTensor.Sizes %s, InputDimensionCount 5\n", braces(input_sizes).c_str());
    std::printf("  IndicesTensor.Sizes %s, IndicesDimensionCount 3, BatchDimensionCount 0\n",
                braces(indices_sizes).c_str());
    std::printf("  OutputTensor.Sizes %s\n", braces(inferred).c_str());
    const std::vector<std::uint32_t> expected = {1, 1, 2, 6, 7};
    if (inferred != expected || validated != expected) {
      std::printf("  MISMATCH: expected %s\n", braces(expected).c_str());
      ok = false;
    }
  } catch (const dmlref::Error& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  std::printf(ok ? "all examples match\n" : "MISMATCH\n");
  return ok ? 0 : 1;
}
