// Describe a tensor the way DirectML does, bind it to memory, and read it through a typed view.
#include <dmlref/dmlref.hpp>

#include <cstdio>
#include <vector>

int main() {
  using namespace dmlref;
  // A 2x3 FLOAT32 tensor stored transposed: column-major strides {1,2}.
  const TensorDesc desc(DataType::Float32, {2, 3}, {1, 2});
  std::vector<float> memory = {1, 4, 2, 5, 3, 6};  // columns (1,4) (2,5) (3,6)
  const BufferTensorDesc d = desc.desc();
  const BoundTensor bound = bind_tensor("example", "InputTensor", &d, memory.data(),
                                        memory.size() * sizeof(float), false);
  const TensorView<const float> view = view_of<const float>(bound);
  std::printf("DMLCalcBufferTensorSize = %llu bytes\n",
              static_cast<unsigned long long>(desc.total_tensor_size_in_bytes));
  std::printf("rows: ");
  for (std::uint32_t r = 0; r < 2; ++r) {
    std::printf("[");
    for (std::uint32_t c = 0; c < 3; ++c) {
      std::printf(c ? ",%g" : "%g", static_cast<double>(view.at({r, c})));
    }
    std::printf("]");
  }
  std::printf("\n");  // expect [1,2,3][4,5,6]
  return 0;
}
