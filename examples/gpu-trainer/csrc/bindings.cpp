// Registers the fused ops as torch.ops.gpu_trainer.* so they work with torch.compile.
#include <torch/extension.h>
#include <torch/library.h>

namespace gpu_trainer {
torch::Tensor bias_gelu_forward(torch::Tensor input, torch::Tensor bias);
torch::Tensor bias_gelu_backward(torch::Tensor grad_out, torch::Tensor input,
                                 torch::Tensor bias);
}  // namespace gpu_trainer

TORCH_LIBRARY(gpu_trainer, m) {
  m.def("fused_gelu(Tensor input, Tensor bias) -> Tensor");
  m.def("fused_gelu_backward(Tensor grad_out, Tensor input, Tensor bias) -> Tensor");
}

TORCH_LIBRARY_IMPL(gpu_trainer, CUDA, m) {
  m.impl("fused_gelu", &gpu_trainer::bias_gelu_forward);
  m.impl("fused_gelu_backward", &gpu_trainer::bias_gelu_backward);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "Fused bias+GeLU kernels for gpu_trainer";
}
