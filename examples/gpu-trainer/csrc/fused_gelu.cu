// Fused bias + GeLU (tanh approximation) for the classifier's feed-forward block.
//
// Each __global__ function below handles one element per thread; the bias is broadcast
// along the last dimension. Saving a separate bias-add kernel was worth ~6% step time
// on A100 when we measured it.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

namespace gpu_trainer {

constexpr float kAlpha = 0.7978845608f;  // sqrt(2 / pi)
constexpr float kBeta = 0.044715f;

__device__ __forceinline__ float gelu_tanh(float x) {
  float inner = kAlpha * (x + kBeta * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

__global__ void bias_gelu_forward_kernel(const __half* __restrict__ input,
                                         const __half* __restrict__ bias,
                                         __half* __restrict__ output,
                                         int64_t numel, int64_t hidden) {
  int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (idx >= numel) return;
  float x = __half2float(input[idx]) + __half2float(bias[idx % hidden]);
  output[idx] = __float2half(gelu_tanh(x));
}

__global__ void bias_gelu_backward_kernel(const __half* __restrict__ grad_out,
                                          const __half* __restrict__ input,
                                          const __half* __restrict__ bias,
                                          __half* __restrict__ grad_in,
                                          int64_t numel, int64_t hidden) {
  int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (idx >= numel) return;
  float x = __half2float(input[idx]) + __half2float(bias[idx % hidden]);
  float inner = kAlpha * (x + kBeta * x * x * x);
  float t = tanhf(inner);
  float d_inner = kAlpha * (1.0f + 3.0f * kBeta * x * x);
  float grad = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * d_inner;
  grad_in[idx] = __float2half(__half2float(grad_out[idx]) * grad);
}

// Host launchers. The bias gradient is a plain sum over rows, done in ATen by the caller.
torch::Tensor bias_gelu_forward(torch::Tensor input, torch::Tensor bias) {
  TORCH_CHECK(input.is_cuda() && bias.is_cuda(), "fused_gelu: tensors must be on CUDA");
  TORCH_CHECK(input.scalar_type() == at::kHalf, "fused_gelu: only fp16 is supported");
  auto output = torch::empty_like(input);
  const int64_t numel = input.numel();
  const int threads = 256;
  const int blocks = (numel + threads - 1) / threads;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  bias_gelu_forward_kernel<<<blocks, threads, 0, stream>>>(
      reinterpret_cast<const __half*>(input.data_ptr<at::Half>()),
      reinterpret_cast<const __half*>(bias.data_ptr<at::Half>()),
      reinterpret_cast<__half*>(output.data_ptr<at::Half>()), numel, bias.numel());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return output;
}

torch::Tensor bias_gelu_backward(torch::Tensor grad_out, torch::Tensor input,
                                 torch::Tensor bias) {
  auto grad_in = torch::empty_like(input);
  const int64_t numel = input.numel();
  const int threads = 256;
  const int blocks = (numel + threads - 1) / threads;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  bias_gelu_backward_kernel<<<blocks, threads, 0, stream>>>(
      reinterpret_cast<const __half*>(grad_out.data_ptr<at::Half>()),
      reinterpret_cast<const __half*>(input.data_ptr<at::Half>()),
      reinterpret_cast<const __half*>(bias.data_ptr<at::Half>()),
      reinterpret_cast<__half*>(grad_in.data_ptr<at::Half>()), numel, bias.numel());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return grad_in;
}

}  // namespace gpu_trainer
