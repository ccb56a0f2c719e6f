// SCATTER through the runtime entry point, the way a GPU test harness calls it: the same
// DirectML-shaped description plus the buffers. Reproduces both examples of the DirectML page
// (docs/scatter.md) and shows that example 2 as the page prints it is rejected.
// Exits non-zero when a result differs from the page.
#include <dmlref/dmlref.hpp>
#include <dmlref/ops/scatter.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace dmlref;

// The pages' bracket notation: [8,6,2,7,4] and [[20,11,0],[10,0,22],[0,21,12]].
std::string brackets(const std::vector<float>& values, const std::vector<std::uint32_t>& sizes,
                     std::size_t dim = 0, std::size_t offset = 0) {
  std::size_t inner = 1;
  for (std::size_t d = dim + 1; d < sizes.size(); ++d) inner *= sizes[d];
  std::string s = "[";
  for (std::uint32_t i = 0; i < sizes[dim]; ++i) {
    if (i != 0) s += ',';
    if (dim + 1 == sizes.size()) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", static_cast<double>(values[offset + i]));
      s += text;
    } else {
      s += brackets(values, sizes, dim + 1, offset + i * inner);
    }
  }
  return s + "]";
}

template <class T>
ConstBuffer in(const std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}
template <class T>
Buffer out(std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}

// Runs one scatter of FLOAT32 data with UINT32 indices and compares with the page's output.
bool run_example(const char* title, const std::vector<std::uint32_t>& input_sizes,
                 const std::vector<float>& input, const std::vector<std::uint32_t>& indices_sizes,
                 const std::vector<std::uint32_t>& indices, const std::vector<float>& updates,
                 std::uint32_t axis, const std::vector<float>& expected) {
  const TensorDesc input_desc(DataType::Float32, input_sizes);
  const TensorDesc indices_desc(DataType::UInt32, indices_sizes);
  const TensorDesc updates_desc(DataType::Float32, indices_sizes);
  const TensorDesc output_desc(DataType::Float32, input_sizes);
  const BufferTensorDesc i = input_desc.desc(), x = indices_desc.desc(), u = updates_desc.desc(),
                         o = output_desc.desc();
  const ScatterOperatorDesc desc{&i, &x, &u, &o, axis};

  std::vector<float> output(input.size());
  scatter(desc, in(input), in(indices), in(updates), out(output));

  std::printf(
      "%s\n  Axis: %u\n  InputTensor:   %s\n  IndicesTensor: %s\n  UpdatesTensor: %s\n"
      "  OutputTensor:  %s\n",
      title, axis, brackets(input, input_sizes).c_str(),
      brackets(std::vector<float>(indices.begin(), indices.end()), indices_sizes).c_str(),
      brackets(updates, indices_sizes).c_str(), brackets(output, input_sizes).c_str());
  if (output != expected) {
    std::printf("  MISMATCH: the page says %s\n", brackets(expected, input_sizes).c_str());
    return false;
  }
  return true;
}

// Example 2 with InputTensor {2,3}, as the page prints it; must be rejected with `code`.
bool rejects_as_printed(const std::vector<std::uint32_t>& output_sizes, ErrorCode code) {
  const std::vector<float> input(9, 0.0f);  // the page shows three rows of zeros
  const std::vector<std::uint32_t> indices{1, 0, 2, 0, 2, 1};
  const std::vector<float> updates{10, 11, 12, 20, 21, 22};
  std::vector<float> output(9, 0.0f);
  const TensorDesc input_desc(DataType::Float32, {2, 3});
  const TensorDesc indices_desc(DataType::UInt32, {2, 3});
  const TensorDesc updates_desc(DataType::Float32, {2, 3});
  const TensorDesc output_desc(DataType::Float32, output_sizes);
  const BufferTensorDesc i = input_desc.desc(), x = indices_desc.desc(), u = updates_desc.desc(),
                         o = output_desc.desc();
  const ScatterOperatorDesc desc{&i, &x, &u, &o, 0};
  try {
    scatter(desc, in(input), in(indices), in(updates), out(output));
  } catch (const Error& e) {
    std::printf("  with OutputTensor Sizes {%u,%u}: rejected: %s\n", output_sizes[0],
                output_sizes[1], e.what());
    return e.code() == code;
  }
  std::printf("  with OutputTensor Sizes {%u,%u}: accepted, but a {2,3} input must be rejected\n",
              output_sizes[0], output_sizes[1]);
  return false;
}

// Example 1's duplicate as a GPU harness sees it: the colliding element, and a result check that
// accepts either update there (DirectML guarantees no winner) but nothing else.
bool show_duplicates() {
  const std::vector<float> input{0, 1, 2, 3, 4};
  const std::vector<std::uint32_t> indices{3, 1, 3, 0};
  const std::vector<float> updates{5, 6, 7, 8};
  const TensorDesc data5(DataType::Float32, {5}), index4(DataType::UInt32, {4}),
      data4(DataType::Float32, {4});
  const BufferTensorDesc i = data5.desc(), x = index4.desc(), u = data4.desc(), o = data5.desc();
  const ScatterOperatorDesc desc{&i, &x, &u, &o, 0};
  std::printf("Example 1's collisions:\n");
  for (const auto& c : find_scatter_collisions(desc, in(input), in(indices), in(updates))) {
    std::printf("  %s\n", c.to_string().c_str());
  }
  const std::vector<float> gpu_other_winner{8, 6, 2, 5, 4}, gpu_wrong{8, 6, 2, 3, 4};
  const auto accepted =
      check_scatter_result(desc, in(input), in(indices), in(updates), in(gpu_other_winner));
  const auto rejected =
      check_scatter_result(desc, in(input), in(indices), in(updates), in(gpu_wrong));
  std::printf("  GPU result [8,6,2,5,4]: %s\n  GPU result [8,6,2,3,4]: %s\n",
              accepted.to_string().c_str(), rejected.to_string().c_str());
  return accepted.ok() && !rejected.ok();
}

}  // namespace

int main() {
  bool ok = run_example("Example 1. 1-D scatter (index 3 twice: the later update, 7, wins)", {5},
                        {0, 1, 2, 3, 4}, {4}, {3, 1, 3, 0}, {5, 6, 7, 8}, 0, {8, 6, 2, 7, 4});
  ok &= show_duplicates();
  ok &= run_example("Example 2. 2-D scatter (InputTensor {3,3}, as the data shows)", {3, 3},
                    std::vector<float>(9, 0.0f), {2, 3}, {1, 0, 2, 0, 2, 1},
                    {10, 11, 12, 20, 21, 22}, 0, {20, 11, 0, 10, 0, 22, 0, 21, 12});
  std::printf("Example 2 as printed (InputTensor Sizes {2,3}):\n");
  ok &= rejects_as_printed({3, 3}, ErrorCode::SC5);
  ok &= rejects_as_printed({2, 3}, ErrorCode::SC8);
  std::printf(ok ? "all as the page says\n" : "FAILED\n");
  return ok ? 0 : 1;
}
