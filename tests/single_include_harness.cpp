// A GPU harness's translation unit built against single_include/ alone (no include/ on the path):
// the generated single header must hold everything the five runtime operators need. Runs each on
// its spec page's example through DirectML-shaped descriptions and exits non-zero on any
// difference. Built and run by CTest (single_include_harness); scripts/amalgamate.py regenerates
// the header.
#include <dmlref/dmlref.hpp>

#if __has_include(<dmlref/core.hpp>)
#error "include/ is on the include path: this test must see single_include/ only"
#endif

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace dmlref;

int failures = 0;

template <class T>
void expect_equal(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  if (got == want) {
    std::printf("ok    %s\n", what);
    return;
  }
  ++failures;
  std::printf("FAIL  %s:", what);
  for (const T& v : got) std::printf(" %g", static_cast<double>(v));
  std::printf("\n");
}

template <class T>
ConstBuffer in(const std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}
template <class T>
Buffer out(std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}

void join_example() {
  const std::vector<std::uint32_t> a_sizes = {1, 1, 2, 3}, b_sizes = {1, 1, 2, 4},
                                   out_sizes = {1, 1, 2, 7};
  const BufferTensorDesc inputs[] = {buffer_tensor_desc(DataType::Float32, a_sizes),
                                     buffer_tensor_desc(DataType::Float32, b_sizes)};
  const BufferTensorDesc output = buffer_tensor_desc(DataType::Float32, out_sizes);
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12, 13, 14};
  std::vector<float> result(14, -1.0f);
  join(JoinOperatorDesc{2, inputs, &output, 3}, {in(a), in(b)}, out(result));
  expect_equal("JOIN", result, {1, 2, 3, 7, 8, 9, 10, 4, 5, 6, 11, 12, 13, 14});
}

void split_example() {
  const TensorDesc input(DataType::Int16, {1, 1, 6, 2});
  const TensorDesc pieces[] = {TensorDesc(DataType::Int16, {1, 1, 2, 2}),
                               TensorDesc(DataType::Int16, {1, 1, 1, 2}),
                               TensorDesc(DataType::Int16, {1, 1, 3, 2})};
  const BufferTensorDesc input_desc = input.desc();
  const BufferTensorDesc outputs[] = {pieces[0].desc(), pieces[1].desc(), pieces[2].desc()};
  const std::vector<std::int16_t> data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<std::int16_t> p0(4), p1(2), p2(6);
  split(SplitOperatorDesc{&input_desc, 3, outputs, 2}, in(data), {out(p0), out(p1), out(p2)});
  expect_equal("SPLIT piece 0", p0, {1, 2, 3, 4});
  expect_equal("SPLIT piece 1", p1, {5, 6});
  expect_equal("SPLIT piece 2", p2, {7, 8, 9, 10, 11, 12});
}

void scatter_example() {
  const TensorDesc data5(DataType::Float32, {5}), index4(DataType::UInt32, {4}),
      data4(DataType::Float32, {4});
  const BufferTensorDesc i = data5.desc(), x = index4.desc(), u = data4.desc(), o = data5.desc();
  const std::vector<float> input = {0, 1, 2, 3, 4}, updates = {5, 6, 7, 8};
  const std::vector<std::uint32_t> indices = {3, 1, 3, 0};
  std::vector<float> result(5);
  scatter(ScatterOperatorDesc{&i, &x, &u, &o, 0}, in(input), in(indices), in(updates),
          out(result));
  expect_equal("SCATTER", result, {8, 6, 2, 7, 4});
}

void gather_nd1_example() {
  const TensorDesc input(DataType::Float32, {1, 3, 2, 2}), indices(DataType::UInt32, {1, 3, 2, 2}),
      output(DataType::Float32, {1, 1, 3, 2});
  const BufferTensorDesc i = input.desc(), x = indices.desc(), o = output.desc();
  const std::vector<float> data = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const std::vector<std::uint32_t> tuples = {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0};
  std::vector<float> result(6);
  gather_nd1(GatherNd1OperatorDesc{&i, &x, &o, 3, 3, 1}, in(data), in(tuples), out(result));
  expect_equal("GATHER_ND1", result, {0, 3, 7, 4, 9, 10});
}

void reverse_subsequences_example() {
  const TensorDesc data(DataType::UInt8, {1, 1, 3, 4}), lengths(DataType::UInt64, {1, 1, 3, 1});
  const BufferTensorDesc i = data.desc(), l = lengths.desc(), o = data.desc();
  const std::vector<std::uint8_t> input = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<std::uint64_t> lens = {2, 4, 3};
  std::vector<std::uint8_t> result(12);
  reverse_subsequences(ReverseSubsequencesOperatorDesc{&i, &l, &o, 3}, in(input), in(lens),
                       out(result));
  expect_equal("REVERSE_SUBSEQUENCES", result,
               std::vector<std::uint8_t>{2, 1, 3, 4, 8, 7, 6, 5, 11, 10, 9, 12});
}

void version_and_errors() {
  const bool version_ok = std::strcmp(DMLREF_VERSION_STRING, "") != 0 &&
                          kVersion == DMLREF_VERSION_MAJOR * 10000 + DMLREF_VERSION_MINOR * 100 +
                                          DMLREF_VERSION_PATCH;
  std::printf("%s  version %s\n", version_ok ? "ok  " : "FAIL", DMLREF_VERSION_STRING);
  failures += version_ok ? 0 : 1;
  // JOIN along Axis 2 of example 1's tensors breaks J5, and the error says so.
  const TensorDesc a(DataType::Float32, {1, 1, 2, 3}), b(DataType::Float32, {1, 1, 2, 4}),
      c(DataType::Float32, {1, 1, 4, 3});
  const BufferTensorDesc inputs[] = {a.desc(), b.desc()};
  const BufferTensorDesc output = c.desc();
  try {
    validate_join(JoinOperatorDesc{2, inputs, &output, 2});
    std::printf("FAIL  JOIN with mismatched sizes was accepted\n");
    ++failures;
  } catch (const Error& e) {
    const bool ok = e.code() == ErrorCode::J5 && std::string(e.what()).ends_with("[J5]");
    std::printf("%s  rejected: %s\n", ok ? "ok  " : "FAIL", e.what());
    failures += ok ? 0 : 1;
  }
}

}  // namespace

int main() {
  join_example();
  split_example();
  scatter_example();
  gather_nd1_example();
  reverse_subsequences_example();
  version_and_errors();
  if (failures == 0) {
    std::printf("single header: all five operators agree with their pages\n");
  } else {
    std::printf("single header: %d failure(s)\n", failures);
  }
  return failures == 0 ? 0 : 1;
}
