// REVERSE_SUBSEQUENCES through the runtime layer: the two examples of DirectML's page, built from
// the same buffer tensor descriptions a GPU test harness hands DirectML. Prints each tensor in the
// page's notation and exits non-zero if an output differs from the page.
#include <dmlref/dmlref.hpp>
#include <dmlref/ops/reverse_subsequences.hpp>

#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace {

// "{1,1,3,4} [[1,2,3,4],[5,6,7,8],[9,10,11,12]]": the sizes, then the values nested by dimension
// with the leading size-1 dimensions left out, as the page writes them.
template <class T>
std::string bracket_notation(const std::vector<std::uint32_t>& sizes,
                             const std::vector<T>& values) {
  std::ostringstream os;
  os << '{';
  for (std::size_t d = 0; d < sizes.size(); ++d) os << (d ? "," : "") << sizes[d];
  os << "} ";
  std::size_t first = 0;
  while (first + 1 < sizes.size() && sizes[first] == 1) ++first;
  std::size_t next = 0;
  auto print = [&](auto& self, std::size_t d) -> void {
    os << '[';
    for (std::uint32_t i = 0; i < sizes[d]; ++i) {
      if (i != 0) os << ',';
      if (d + 1 == sizes.size()) {
        os << values[next++];
      } else {
        self(self, d + 1);
      }
    }
    os << ']';
  };
  print(print, first);
  return os.str();
}

struct PageExample {
  const char* title;
  std::uint32_t axis;
  std::vector<std::uint32_t> lengths_sizes;
  std::vector<std::uint32_t> lengths;
  std::vector<float> expected;
};

// Runs one example through dmlref::reverse_subsequences(desc, buffers); true when it matches.
bool run(const PageExample& example) {
  using namespace dmlref;
  const std::vector<std::uint32_t> sizes = {1, 1, 3, 4};
  const std::vector<float> input = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<float> output(input.size());

  // Packed descriptions; TotalTensorSizeInBytes is DMLCalcBufferTensorSize's.
  const TensorDesc input_desc(DataType::Float32, sizes);
  const TensorDesc lengths_desc(DataType::UInt32, example.lengths_sizes);
  const TensorDesc output_desc(DataType::Float32, sizes);
  const BufferTensorDesc in = input_desc.desc();
  const BufferTensorDesc len = lengths_desc.desc();
  const BufferTensorDesc out = output_desc.desc();
  const ReverseSubsequencesOperatorDesc desc{&in, &len, &out, example.axis};

  reverse_subsequences(
      desc, ConstBuffer(input.data(), input.size() * sizeof(float)),
      ConstBuffer(example.lengths.data(), example.lengths.size() * sizeof(std::uint32_t)),
      Buffer{output.data(), output.size() * sizeof(float)});

  const bool ok = output == example.expected;
  std::printf("%s: Axis %u\n", example.title, example.axis);
  std::printf("  InputTensor           FLOAT32 %s\n", bracket_notation(sizes, input).c_str());
  std::printf("  SequenceLengthsTensor UINT32  %s\n",
              bracket_notation(example.lengths_sizes, example.lengths).c_str());
  std::printf("  OutputTensor          FLOAT32 %s  %s\n", bracket_notation(sizes, output).c_str(),
              ok ? "(matches the page)" : "DIFFERS from the page:");
  if (!ok) {
    std::printf("  page says                     %s\n",
                bracket_notation(sizes, example.expected).c_str());
  }
  return ok;
}

}  // namespace

int main() {
  const PageExample examples[] = {
      {"Example 1", 3, {1, 1, 3, 1}, {2, 4, 3}, {2, 1, 3, 4, 8, 7, 6, 5, 11, 10, 9, 12}},
      // Lengths 1 and 0 leave their columns as they are.
      {"Example 2", 2, {1, 1, 1, 4}, {2, 3, 1, 0}, {5, 10, 3, 4, 1, 6, 7, 8, 9, 2, 11, 12}},
  };
  bool ok = true;
  for (const PageExample& e : examples) ok = run(e) && ok;
  return ok ? 0 : 1;
}
