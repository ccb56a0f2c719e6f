// The JOIN and SPLIT examples of DirectML's pages (docs/join.md, docs/split.md), run through
// the runtime entry points a GPU harness would call, printed in the pages' notation. Exits 1 if
// any output differs from the page's values.
#include <dmlref/dmlref.hpp>
#include <dmlref/ops/join.hpp>
#include <dmlref/ops/split.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

struct Tensor {
  std::vector<std::uint32_t> sizes;
  std::vector<float> values;  // packed row-major
};

void print_nested(std::string& out, const std::vector<std::uint32_t>& dims, std::size_t d,
                  const std::vector<float>& values, std::size_t& next) {
  out += '[';
  for (std::uint32_t i = 0; i < dims[d]; ++i) {
    if (i != 0) out += ',';
    if (d + 1 == dims.size()) {
      char number[32];
      std::snprintf(number, sizeof number, "%g", static_cast<double>(values[next++]));
      out += number;
    } else {
      print_nested(out, dims, d + 1, values, next);
    }
  }
  out += ']';
}

// "{1,1,2,7} [[1,2,3,7,8,9,10],[4,5,6,11,12,13,14]]": the pages drop leading size-1 dimensions
// from the brackets but always keep at least two levels ({1,1,1,2} prints as [[5,6]]).
std::string bracket(const Tensor& t) {
  std::string out = "{";
  for (std::size_t d = 0; d < t.sizes.size(); ++d) {
    if (d != 0) out += ',';
    out += std::to_string(t.sizes[d]);
  }
  out += "} ";
  std::vector<std::uint32_t> dims = t.sizes;
  while (dims.size() > 2 && dims.front() == 1) dims.erase(dims.begin());
  std::size_t next = 0;
  print_nested(out, dims, 0, t.values, next);
  return out;
}

dmlref::TensorDesc desc_of(const std::vector<std::uint32_t>& sizes) {
  return dmlref::TensorDesc(dmlref::DataType::Float32, sizes);
}

bool report(const char* name, const Tensor& got, const Tensor& expected) {
  const bool ok = got.sizes == expected.sizes && got.values == expected.values;
  std::printf("  %s %s%s\n", name, bracket(got).c_str(), ok ? "" : "   <-- differs from the page");
  if (!ok) std::printf("  page says %s\n", bracket(expected).c_str());
  return ok;
}

bool run_join(const char* title, const std::vector<Tensor>& inputs, std::uint32_t axis,
              const Tensor& expected) {
  using namespace dmlref;
  std::printf("JOIN %s, Axis %u\n", title, axis);
  std::vector<std::vector<std::uint32_t>> input_sizes;
  for (const Tensor& t : inputs) input_sizes.push_back(t.sizes);
  Tensor output{infer_join_output_sizes(input_sizes, axis), {}};
  output.values.assign(expected.values.size(), -1.0f);

  std::vector<TensorDesc> owned;
  for (const Tensor& t : inputs) owned.push_back(desc_of(t.sizes));
  std::vector<BufferTensorDesc> descs;
  std::vector<ConstBuffer> buffers;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    descs.push_back(owned[i].desc());
    buffers.emplace_back(inputs[i].values.data(), inputs[i].values.size() * sizeof(float));
    std::printf("  InputTensors[%zu] %s\n", i, bracket(inputs[i]).c_str());
  }
  const TensorDesc output_owned = desc_of(output.sizes);
  const BufferTensorDesc output_desc = output_owned.desc();
  const auto count = static_cast<std::uint32_t>(inputs.size());
  join(JoinOperatorDesc{count, descs.data(), &output_desc, axis},
       buffers, Buffer{output.values.data(), output.values.size() * sizeof(float)});
  return report("OutputTensor", output, expected);
}

bool run_split(const char* title, const Tensor& input, std::uint32_t axis,
               const std::vector<Tensor>& expected) {
  using namespace dmlref;
  std::printf("SPLIT %s, Axis %u\n", title, axis);
  std::printf("  InputTensor %s\n", bracket(input).c_str());
  std::vector<std::uint32_t> pieces;
  for (const Tensor& t : expected) pieces.push_back(t.sizes[axis]);
  std::vector<Tensor> outputs;
  for (auto& sizes : infer_split_output_sizes(input.sizes, axis, pieces)) {
    outputs.push_back({sizes, {}});
  }
  std::vector<TensorDesc> owned;
  std::vector<BufferTensorDesc> descs;
  std::vector<Buffer> buffers;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].values.assign(expected[i].values.size(), -1.0f);
    owned.push_back(desc_of(outputs[i].sizes));
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    descs.push_back(owned[i].desc());
    buffers.push_back({outputs[i].values.data(), outputs[i].values.size() * sizeof(float)});
  }
  const TensorDesc input_owned = desc_of(input.sizes);
  const BufferTensorDesc input_desc = input_owned.desc();
  split(SplitOperatorDesc{&input_desc, static_cast<std::uint32_t>(outputs.size()), descs.data(),
                          axis},
        ConstBuffer(input.values.data(), input.values.size() * sizeof(float)), buffers);
  bool ok = true;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string name = "OutputTensors[" + std::to_string(i) + "]";
    ok = report(name.c_str(), outputs[i], expected[i]) && ok;
  }
  return ok;
}

}  // namespace

int main() {
  bool ok = true;
  try {
    ok = run_join("example 1",
                  {{{1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}},
                   {{1, 1, 2, 4}, {7, 8, 9, 10, 11, 12, 13, 14}}},
                  3, {{1, 1, 2, 7}, {1, 2, 3, 7, 8, 9, 10, 4, 5, 6, 11, 12, 13, 14}}) &&
         ok;
    const std::vector<Tensor> three = {{{1, 1, 2, 2}, {1, 2, 3, 4}},
                                       {{1, 1, 2, 2}, {5, 6, 7, 8}},
                                       {{1, 1, 2, 2}, {9, 10, 11, 12}}};
    ok = run_join("example 2", three, 1,
                  {{1, 3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}) && ok;
    ok = run_join("example 2", three, 2,
                  {{1, 1, 6, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}) && ok;
    ok = run_join("example 2", three, 3,
                  {{1, 1, 2, 6}, {1, 2, 5, 6, 9, 10, 3, 4, 7, 8, 11, 12}}) && ok;

    const Tensor input = {{1, 1, 6, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}};
    ok = run_split("example 1", input, 2,
                   {{{1, 1, 2, 2}, {1, 2, 3, 4}},
                    {{1, 1, 1, 2}, {5, 6}},
                    {{1, 1, 3, 2}, {7, 8, 9, 10, 11, 12}}}) && ok;
    ok = run_split("example 2", input, 3,
                   {{{1, 1, 6, 1}, {1, 3, 5, 7, 9, 11}}, {{1, 1, 6, 1}, {2, 4, 6, 8, 10, 12}}}) &&
         ok;
  } catch (const dmlref::Error& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  std::printf(ok ? "all outputs match the pages\n" : "SOME OUTPUTS DIFFER FROM THE PAGES\n");
  return ok ? 0 : 1;
}
