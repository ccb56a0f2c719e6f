// The README's C++ snippets, each run here and checked: the README copies the lines between
// `// README:` markers verbatim (scripts/check_readme.py fails CI when a README block is not
// found in an example), and this program exits 1 when a result differs from what the README says
// it is.
#include <dmlref/dmlref.hpp>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

int failures = 0;

template <class T, std::size_t N>
void expect(const char* what, const T (&got)[N], const std::vector<T>& want) {
  const bool ok = std::vector<T>(got, got + N) == want;
  std::printf("%-22s", what);
  for (const T& v : got) std::printf(" %g", static_cast<double>(v));
  std::printf("%s\n", ok ? "" : "   <-- differs from the README");
  failures += ok ? 0 : 1;
}

void runtime_join() {
  using namespace dmlref;
  // README: join
  // JOIN {2,2} and {2,1} along axis 1 into {2,3}. The descriptions point at your arrays.
  const std::uint32_t a_sizes[] = {2, 2}, b_sizes[] = {2, 1}, out_sizes[] = {2, 3};
  const BufferTensorDesc inputs[] = {buffer_tensor_desc(DataType::Float32, a_sizes),
                                     buffer_tensor_desc(DataType::Float32, b_sizes)};
  const BufferTensorDesc output = buffer_tensor_desc(DataType::Float32, out_sizes);
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6};
  float out[6];
  join(JoinOperatorDesc{2, inputs, &output, /*Axis=*/1}, {{a, sizeof a}, {b, sizeof b}},
       {out, sizeof out});
  // out: 1 2 5 3 4 6
  // README: end
  expect("JOIN", out, {1, 2, 5, 3, 4, 6});
}

void runtime_split() {
  using namespace dmlref;
  // README: split
  // SPLIT {2,3} along axis 1 into {2,1} and {2,2}.
  const std::uint32_t in_sizes[] = {2, 3}, p_sizes[] = {2, 1}, q_sizes[] = {2, 2};
  const BufferTensorDesc input = buffer_tensor_desc(DataType::Int32, in_sizes);
  const BufferTensorDesc outputs[] = {buffer_tensor_desc(DataType::Int32, p_sizes),
                                      buffer_tensor_desc(DataType::Int32, q_sizes)};
  const std::int32_t x[] = {1, 2, 3, 4, 5, 6};
  std::int32_t p[2], q[4];
  split(SplitOperatorDesc{&input, 2, outputs, /*Axis=*/1}, {x, sizeof x},
        {{p, sizeof p}, {q, sizeof q}});
  // p: 1 4    q: 2 3 5 6
  // README: end
  expect("SPLIT p", p, {1, 4});
  expect("SPLIT q", q, {2, 3, 5, 6});
}

void runtime_scatter() {
  using namespace dmlref;
  // README: scatter
  // SCATTER along axis 0: out = input, then out[where[i]] = values[i].
  const std::uint32_t data_sizes[] = {5}, index_sizes[] = {4};
  const BufferTensorDesc data = buffer_tensor_desc(DataType::Float32, data_sizes);
  const BufferTensorDesc indices = buffer_tensor_desc(DataType::UInt32, index_sizes);
  const BufferTensorDesc updates = buffer_tensor_desc(DataType::Float32, index_sizes);
  const float input[] = {0, 1, 2, 3, 4}, values[] = {5, 6, 7, 8};
  const std::uint32_t where[] = {3, 1, 3, 0};
  float out[5];
  scatter(ScatterOperatorDesc{&data, &indices, &updates, &data, /*Axis=*/0},
          {input, sizeof input}, {where, sizeof where}, {values, sizeof values},
          {out, sizeof out});
  // out: 8 6 2 7 4   (index 3 twice: the last update wins; DuplicatePolicy::Reject refuses)
  // README: end
  expect("SCATTER", out, {8, 6, 2, 7, 4});
}

void runtime_gather_nd1() {
  using namespace dmlref;
  // README: gather_nd1
  // GATHER_ND1 picks rows of a {2,2} input with {2,1} index tuples (r = q = 2, b = 0).
  const std::uint32_t in_sizes[] = {2, 2}, idx_sizes[] = {2, 1};
  const BufferTensorDesc input = buffer_tensor_desc(DataType::Float32, in_sizes);
  const BufferTensorDesc indices = buffer_tensor_desc(DataType::Int64, idx_sizes);
  const BufferTensorDesc output = buffer_tensor_desc(DataType::Float32, in_sizes);
  const float x[] = {0, 1, 2, 3};
  const std::int64_t rows[] = {-1, 0};  // signed indices count from the end
  float out[4];
  gather_nd1(GatherNd1OperatorDesc{&input, &indices, &output, 2, 2, 0}, {x, sizeof x},
             {rows, sizeof rows}, {out, sizeof out});
  // out: 2 3 0 1   (an index out of range throws G10 unless index_policy is Clamp)
  // README: end
  expect("GATHER_ND1", out, {2, 3, 0, 1});
}

void runtime_reverse_subsequences() {
  using namespace dmlref;
  // README: reverse_subsequences
  // REVERSE_SUBSEQUENCES: row i of a {3,4} tensor reversed over its first lens[i] elements.
  const std::uint32_t sizes[] = {3, 4}, len_sizes[] = {3, 1};
  const BufferTensorDesc data = buffer_tensor_desc(DataType::UInt8, sizes);
  const BufferTensorDesc lengths = buffer_tensor_desc(DataType::UInt32, len_sizes);
  const std::uint8_t x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::uint32_t lens[] = {2, 4, 3};
  std::uint8_t out[12];
  reverse_subsequences(ReverseSubsequencesOperatorDesc{&data, &lengths, &data, /*Axis=*/1},
                       {x, sizeof x}, {lens, sizeof lens}, {out, sizeof out});
  // out: 2 1 3 4  8 7 6 5  11 10 9 12
  // README: end
  expect("REVERSE_SUBSEQUENCES", out, {2, 1, 3, 4, 8, 7, 6, 5, 11, 10, 9, 12});
}

void typed_layer() {
  using namespace dmlref;
  // README: typed
  // The typed layer: views (pointer, sizes, strides in elements) of one element type.
  const float a_columns[] = {1, 3, 2, 4};  // [[1,2],[3,4]] stored column by column
  const float b[] = {5, 6};
  float out[6];
  const TensorView<const float> a(a_columns, Layout::strided({2, 2}, {1, 2}));
  join<float>({a, TensorView<const float>(b, {2, 1})}, TensorView<float>(out, {2, 3}), 1);
  // out: 1 2 5 3 4 6
  // README: end
  expect("typed JOIN", out, {1, 2, 5, 3, 4, 6});
}

void check_gpu_result() {
  using namespace dmlref;
  // README: check
  // golden: dmlref's output for the call; gpu: what the device wrote, read back.
  const float golden[] = {1, 2, 5, 3, 4, 6};
  const float gpu[] = {1, 2, 5, 3, 4.0000005f, 6};
  const CompareResult r = compare(TensorView<const float>(golden, {2, 3}),
                                  TensorView<const float>(gpu, {2, 3}));  // bit-exact
  if (!r.passed()) std::cout << r << "\n";  // which element, both values and their bits
  // README: end
  const bool ok = !r.passed() && r.mismatch_count == 1 &&
                  r.mismatches[0].coordinate_string() == "[1,1]";
  std::printf("%-22s %s\n", "compare", ok ? "caught [1,1]" : "did NOT catch [1,1]");
  failures += ok ? 0 : 1;
}

void rule_id() {
  using namespace dmlref;
  const std::uint32_t a_sizes[] = {2, 2}, b_sizes[] = {3, 1}, out_sizes[] = {2, 3};
  const BufferTensorDesc inputs[] = {buffer_tensor_desc(DataType::Float32, a_sizes),
                                     buffer_tensor_desc(DataType::Float32, b_sizes)};
  const BufferTensorDesc output = buffer_tensor_desc(DataType::Float32, out_sizes);
  try {
    validate_join(JoinOperatorDesc{2, inputs, &output, 1});
    std::printf("JOIN of {2,2} and {3,1} was accepted\n");
    ++failures;
  } catch (const Error& e) {
    const std::string message = e.what();
    const std::string expected =
        "JOIN: InputTensors[1].Sizes[0] is 3 but OutputTensor.Sizes[0] is 2; every dimension "
        "except Axis (1) must match [J5]";
    std::printf("%-22s %s\n", "error", message.c_str());
    failures += (e.code() == ErrorCode::J5 && message == expected) ? 0 : 1;
  }
  // The feature-level example of docs/tensors.md and docs/errors.md.
  const std::uint32_t sizes[] = {1, 1, 2, 2};
  const BufferTensorDesc f64 = buffer_tensor_desc(DataType::Float64, sizes);
  try {
    JoinOptions options;
    options.feature_level = FeatureLevel::k3_0;
    validate_join(JoinOperatorDesc{1, &f64, &f64, 3}, options);
    ++failures;
  } catch (const Error& e) {
    const std::string expected = "JOIN: InputTensors[0].DataType FLOAT64 needs "
                                 "DML_FEATURE_LEVEL_4_1; the target is DML_FEATURE_LEVEL_3_0 "
                                 "[FeatureLevel]";
    std::printf("%-22s %s\n", "error", e.what());
    failures += (e.what() == expected) ? 0 : 1;
  }
}

}  // namespace

int main() {
  runtime_join();
  runtime_split();
  runtime_scatter();
  runtime_gather_nd1();
  runtime_reverse_subsequences();
  typed_layer();
  check_gpu_result();
  rule_id();
  std::printf("dmlref %s: %s\n", DMLREF_VERSION_STRING,
              failures == 0 ? "every README result as printed" : "README RESULTS DIFFER");
  return failures == 0 ? 0 : 1;
}
