// The tunables: named, documented, overridable factors of the memory model (what a calibration
// fits), declared once in one table. A scenario holds their values in a fixed array indexed by the
// enum; its "overheads" object reads and lists them by name.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpumem::detail {

enum class Tunable {
    CudaContextGib,
    AllocatorFragmentation,
    NcclBuffersGib,
    DdpBucketView,
    ZeroReduceBucketElements,
    Zero3PrefetchElements,
    ZeroGradSetToNone,
    OptimizerStepTempCopies,
    LossFp32Copies,
    ChunkedLossChunks,
    VllmCudaGraphGib,
    PrefillEfficiency,
    DecodeBandwidthEfficiency
};

struct TunableRow {
    Tunable id;
    const char* name;  // the key in the scenario's "overheads"
    double fallback;   // its value when the scenario gives none; each doc says where it comes from
    const char* unit;
    const char* doc;
};

inline constexpr TunableRow kTunables[] = {
    {Tunable::CudaContextGib, "cuda_context_gib", 0.5, "GiB",
     "CUDA context, kernels and library handles outside PyTorch's allocator (0.3-1 GiB by card and CUDA "
     "version); counts in the device total only"},
    {Tunable::AllocatorFragmentation, "allocator_fragmentation", 0.05, "fraction of allocated",
     "caching-allocator slack: reserved = allocated x (1 + this); block rounding to 2 MiB segments"},
    {Tunable::NcclBuffersGib, "nccl_buffers_gib", 0.25, "GiB",
     "NCCL communicator buffers when more than one GPU talks: NCCL_BUFFSIZE 4 MiB x 2 directions x up to 32 "
     "channels; device total only"},
    {Tunable::DdpBucketView, "ddp_bucket_view", 0, "0/1",
     "1 when DDP's gradient_as_bucket_view=True; 0 (PyTorch's default) keeps a second, flat copy of the "
     "gradients in the reducer's buckets"},
    {Tunable::ZeroReduceBucketElements, "zero_reduce_bucket_elements", 5e8, "elements",
     "DeepSpeed reduce_bucket_size default (500,000,000): ZeRO-2/3 gradient reduction buffer, capped at the "
     "model's size"},
    {Tunable::Zero3PrefetchElements, "zero3_prefetch_elements", 5e7, "elements",
     "DeepSpeed stage3_prefetch_bucket_size default (50,000,000): parameters gathered ahead under ZeRO-3"},
    {Tunable::ZeroGradSetToNone, "zero_grad_set_to_none", 1, "0/1",
     "1: zero_grad() frees the gradients after each step (set_to_none=True, PyTorch's default from 2.0); "
     "0: they stay allocated, zeroed, through the next forward (PyTorch 1.x's default)"},
    {Tunable::OptimizerStepTempCopies, "optimizer_step_temp_copies", 1, "state-sized copies",
     "multi-tensor (foreach) Adam-family steps allocate one temporary of the second-moment size "
     "(torch._foreach_sqrt); fused and 8-bit optimizers do not"},
    {Tunable::LossFp32Copies, "loss_fp32_copies", 3, "fp32 logits-sized tensors",
     "standard loss: fp32 upcast of the logits and log_softmax output in the forward, then the loss gradient "
     "and log_softmax's gradient in the backward; at most 3 alive at once with the bf16 logits"},
    {Tunable::ChunkedLossChunks, "chunked_loss_chunks", 8, "chunks",
     "chunked cross-entropy (torchtune CEWithChunkedOutputLoss) upcasts one of this many chunks at a time"},
    {Tunable::VllmCudaGraphGib, "vllm_cuda_graph_gib", 0.5, "GiB", "reserved for CUDA graphs by vLLM-style engines"},
    {Tunable::PrefillEfficiency, "prefill_efficiency", 0.5, "fraction of peak",
     "throughput only: share of the card's dense peak a prefill's matmuls and attention reach (large-batch GEMMs "
     "reach 0.6-0.8 of peak, attention and small layers less)"},
    {Tunable::DecodeBandwidthEfficiency, "decode_bandwidth_efficiency", 0.7, "fraction of peak",
     "throughput only: share of the card's peak HBM bandwidth a decode step's reads reach (gpt-fast's README "
     "measures 1,397 of 2,039 GB/s on an A100 for Llama-2-7B in bf16 at batch 1, and about 1,700 at best)"},
};
constexpr std::size_t kTunableCount = sizeof(kTunables) / sizeof(kTunables[0]);

constexpr bool tunables_in_enum_order() {
    for (std::size_t i = 0; i < kTunableCount; ++i)
        if (static_cast<std::size_t>(kTunables[i].id) != i) return false;
    return true;
}
static_assert(tunables_in_enum_order(), "kTunables lists the enum's values in order");

// A tunable's row.
constexpr const TunableRow& row(Tunable t) { return kTunables[static_cast<std::size_t>(t)]; }

// The tunable called `name`; nullopt when none is.
inline std::optional<Tunable> find_tunable(std::string_view name) {
    for (const TunableRow& r : kTunables)
        if (name == r.name) return r.id;
    return std::nullopt;
}

// Every tunable's value, indexed by the enum; the table's fallbacks until a scenario overrides them.
class TunableValues {
public:
    constexpr TunableValues() {
        for (std::size_t i = 0; i < kTunableCount; ++i) values_[i] = kTunables[i].fallback;
    }
    constexpr double operator[](Tunable t) const { return values_[static_cast<std::size_t>(t)]; }
    constexpr double& operator[](Tunable t) { return values_[static_cast<std::size_t>(t)]; }

private:
    std::array<double, kTunableCount> values_{};
};

}  // namespace gpumem::detail
