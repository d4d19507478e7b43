// Training and fine-tuning memory: model state by precision recipe and
// sharding, activations per saved tensor of the block, logits and loss, and the step timeline.

#include <algorithm>
#include <cmath>

#include "memory/memory.h"
#include "memory/model_cache.h"

namespace gpumem::detail {

namespace {

// Bytes of an fp32 element (settings.h): master copies, fp32 weights and gradients, LoRA adapters.
constexpr double kFp32 = storage_bytes(Dtype::Fp32);

// torchtune v0.1.x (spring 2024), whose recipes allocated differently from today's (settings.h FrameworkVersion).
bool torchtune_01(const TrainingSettings& t) {
    return t.framework == Framework::Torchtune && t.framework_version == FrameworkVersion::Torchtune01;
}

struct Recipe {
    double weight = 2, grad = 2, master = 0;  // bytes per trainable parameter
    double frozen_weight = 2;                 // bytes per frozen parameter
};

Recipe recipe_of(const TrainingSettings& t) {
    const double a = compute_bytes(t.dtype);  // fp8 training keeps bf16 weights
    switch (t.precision) {
        case Precision::AmpFp32Weights:
            return {kFp32, kFp32, 0, kFp32};
        case Precision::Pure:
            return {a, a, 0, a};
        case Precision::MixedMasterFp32:
            return {a, a, kFp32, a};
        case Precision::MixedFp32Grads:
            return {a, kFp32, kFp32, a};
        case Precision::Auto:
            break;  // resolved by the reader (resolve_precision in scenario.cpp)
    }
    return {a, a, 0, a};
}

// Optimizer state bytes for `n` trainable elements of a tensor of shape rows × cols.
double state_bytes(Optimizer opt, double state_dtype_bytes, double rows, double cols) {
    double n = rows * cols;
    bool matrix = cols > 1;
    switch (opt) {
        case Optimizer::Sgd:
            return 0;
        case Optimizer::SgdMomentum:
        case Optimizer::Nesterov:
        case Optimizer::Adagrad:
        case Optimizer::Rmsprop:
        case Optimizer::Lion:
            return n * state_dtype_bytes;
        case Optimizer::Amsgrad:
            return 3 * n * state_dtype_bytes;
        case Optimizer::Adafactor:  // factored second moment for matrices (row + column sums), full for vectors
            return (matrix ? rows + cols : n) * state_dtype_bytes;
        case Optimizer::Adamw8bit:
        case Optimizer::PagedAdamw8bit:
            // bitsandbytes: 2 states × 1 byte + an fp32 absmax per 2048-element block; tensors under 4096
            // elements stay 32-bit (min_8bit_size).
            if (n < 4096) return 2 * n * 4;
            return 2 * (n + 4 * std::ceil(n / 2048));
        case Optimizer::Muon:  // momentum for hidden matrices; AdamW (2 states) for the rest
            return (matrix ? 1 : 2) * n * state_dtype_bytes;
        case Optimizer::Shampoo: {
            // Distributed Shampoo: per block of at most 1024×1024, left and right preconditioners and their
            // inverse roots (4 matrices), plus an Adagrad grafting state per element.
            const double B = 1024;
            if (!matrix) return 2 * n * state_dtype_bytes;
            double br = std::min(rows, B), bc = std::min(cols, B);
            double blocks = std::ceil(rows / B) * std::ceil(cols / B);
            return (blocks * 2 * (br * br + bc * bc) + n) * state_dtype_bytes;
        }
        case Optimizer::Adam:
        case Optimizer::Adamw:
        case Optimizer::AdamwFused:
        case Optimizer::Nadam:
        case Optimizer::Radam:
        case Optimizer::Adabelief:
        case Optimizer::Lamb:
        case Optimizer::SparseAdam:
        case Optimizer::PagedAdamw32bit:
            break;
    }
    return 2 * n * state_dtype_bytes;  // two moments
}

// Bytes autograd keeps for one decoder layer per token, for the block as
// transformers builds it. `s` is the sequence length one rank sees.
struct LayerActivations {
    double per_token = 0;         // everything saved for backward: the sum of the parts below, in their order
    double norms = 0;             // the norms' saved inputs and outputs
    double sandwich_norms = 0;    // the extra norms of a sandwich block (gemma2/3)
    double attention = 0;         // q, k, v, the kernel's output and log-sum-exp, o_proj's input
    double repeated_kv = 0;       // eager attention: k and v copied up to every head
    double attention_scores = 0;  // the eager s² terms (Megatron's selective recompute drops them)
    double mlp = 0;               // the MLP's (or the routed experts') intermediates
    double dropout_masks = 0;     // residual dropout masks
    double lora = 0;              // the adapters' own
    double op_selective = 0;      // what per-op selective checkpointing keeps (see below)
    double head_input = 0;        // the final norm's saved tensors and the output projection's input, per token
};

// Per-op selective checkpointing (torch.utils.checkpoint with a save policy, as torchtitan's "op"
// mode): the layer input, the attention kernel's output and log-sum-exp, and the odd-numbered matmul outputs
// of the layer in the order they run (the policy counts aten.mm calls per layer and recomputes every second
// one: torchtitan/parallelisms/parallelize_llama.py _apply_ac_to_transformer_block @9dec370): wq (1st), wv
// (3rd), w1 (5th) and w2 (7th) of a gated block, whose MLP runs w2(silu(w1(x)) * w3(x)); wq, wv and fc1 of a
// plain one. A mixture of experts keeps half of its matmul outputs, on average; everything else is recomputed.
double op_selective_per_token(const ModelSpec& m, double a, double tp, double h_part, double q, double kv, double heads,
                              double I) {
    double matmuls = q + kv;  // wq and wv of q, k, v, o
    if (m.num_experts)
        matmuls = (q + 2 * kv + h_part +
                   ((m.gated_mlp ? 2 : 1) * static_cast<double>(m.moe_intermediate_size) / tp + h_part) *
                       static_cast<double>(m.num_experts_per_tok)) /
                  2;
    else matmuls += m.gated_mlp ? I + h_part : I;
    return a * h_part + a * q + 4 * heads + a * matmuls;
}

// LoRA and QLoRA: what the adapters of one layer keep per token, added to `per_token` one adapter at
// a time. A frozen base (LoRA) is taken to save the same tensors: its inputs still feed the adapters
// and the activation gradients; what frozen weights let autograd skip is not modelled.
// The adapters add their own: B keeps A's output (rank r) for its weight gradient, and with
// lora.dropout > 0, A's input is a dropped-out copy of the linear's input (compute dtype) whose
// mask dropout keeps (1 byte): (a + 1) x in_features per token and adapted linear. Without dropout A
// reads the input the frozen linear already keeps. litgpt fuses q, k and v into one linear with one
// dropout (LoRAQKVLinear); PEFT and torchtune give each projection its own.
void add_lora_activations(double& per_token, const ModelSpec& m, const TrainingSettings& t, double a, double tp,
                          double h, double q, double I) {
    const double r = static_cast<double>(t.lora_rank), drop = t.lora_dropout > 0 ? a + 1 : 0;
    const double k = m.num_experts ? static_cast<double>(m.num_experts_per_tok) : 1;
    const double moe_share =
        m.num_experts ? static_cast<double>(layer_count(m, Layers::Moe)) / static_cast<double>(m.num_layers) : 0;
    const double moe_I = static_cast<double>(m.moe_intermediate_size) / tp;
    bool qkv_dropout_counted = false;
    for (LoraTarget target : t.lora_targets) {
        if (target == LoraTarget::QProj || target == LoraTarget::KProj || target == LoraTarget::VProj) {
            const double in = t.framework == Framework::Litgpt && qkv_dropout_counted ? 0 : h;
            qkv_dropout_counted = true;
            per_token += a * r + drop * in;
        } else if (target == LoraTarget::OProj) {
            per_token += a * r + drop * q;
        } else if (target == LoraTarget::GateProj || target == LoraTarget::UpProj || target == LoraTarget::DownProj) {
            // An MLP linear sees each token once in a dense layer and once per routed expert (k) in an
            // MoE layer; the down projection reads the intermediate activation.
            const bool down = target == LoraTarget::DownProj;
            per_token +=
                (1 - moe_share) * (a * r + drop * (down ? I : h)) + moe_share * k * (a * r + drop * (down ? moe_I : h));
        }  // lm_head: once per token, not per layer (small beside the logits)
    }
}

LayerActivations layer_activations(const ModelSpec& m, const TrainingSettings& t, double s, double tp, bool sp) {
    double a = compute_bytes(t.dtype);
    double h = static_cast<double>(m.hidden_size);
    double q = static_cast<double>(m.num_attention_heads * m.head_dim) / tp;
    double kv = static_cast<double>(m.num_key_value_heads * m.head_dim) / tp;
    double heads = static_cast<double>(m.num_attention_heads) / tp;
    double I = static_cast<double>(m.intermediate_size) / tp;
    double h_part = sp ? h / tp : h;  // norms and residual are split only under sequence parallelism

    LayerActivations out;
    // Norms: RMSNorm in transformers upcasts (saves the fp32 input and the normalised value in the
    // compute dtype), and its output is saved by the next matmul. LayerNorm is one kernel: input + output.
    double norm = m.norm == ModelSpec::Norm::RMS ? (4 + a + a) * h_part : (a + a) * h_part;
    if (m.norm == ModelSpec::Norm::RMS && a == 4) norm = 3 * 4 * h_part;
    const double eager_norm = norm;  // what a norm outside any compiled region keeps
    // torch.compile: Inductor generates one kernel for the norm, and AOTAutograd's min-cut partitioner
    // saves what its backward needs at least cost: the input and the fp32 statistics per token (rstd;
    // mean and rstd for LayerNorm), recomputing the upcast and the normalised output (a pointwise
    // chain) in the backward instead of saving them (He, "Min-cut optimal recomputation with
    // AOTAutograd", dev-discuss.pytorch.org, 2022; the same two tensors a hand-fused RMSNorm kernel saves).
    if (t.compile != Compile::None) norm = a * h_part + (m.norm == ModelSpec::Norm::RMS ? 4 : 8);
    out.norms = norm * static_cast<double>(m.norms_per_layer == 1 ? 1 : 2);
    // torchtitan's tensor-parallel plan gathers the sequence before attention and the feed-forward
    // (parallelize_llama.py @9dec370: PrepareModuleInput, Shard(1) -> Replicate()): the colwise linears read, and
    // save for their weight gradients, the whole sequence's input rather than this rank's share of it. (Megatron
    // saves the share and gathers it again in backward.)
    if (sp && tp > 1 && t.framework == Framework::Torchtitan)
        out.norms += static_cast<double>(m.norms_per_layer == 1 ? 1 : 2) * a * (h - h_part);
    // Sandwich norms (gemma2/3: post_attention_layernorm and post_feedforward_layernorm, litgpt's post_attention_norm
    // and post_mlp_norm, litgpt/model.py:161-167 @00af8b0d) keep what a norm keeps except its output, which feeds
    // the residual add (saves nothing) instead of a matmul.
    if (m.norms_per_layer >= 4) out.sandwich_norms = 2 * (norm - a * h_part);
    // torchtitan: above the last block, outside every checkpointed and compiled region (models/llama/model.py
    // Transformer.forward: self.norm(h), then self.output(h); parallelize_llama.py apply_compile wraps each
    // TransformerBlock only, @9dec370), the final RMSNorm runs eagerly and keeps what a layer's norm keeps (models/
    // norms.py RMSNorm: its fp32 input, the normalised output in bf16), and the output projection saves its input for
    // its weight gradient. Under tensor parallelism the plan gathers that input over the sequence first (apply_tp:
    // "output": ColwiseParallel(input_layouts=Shard(1))): the head saves the whole sequence's [B, S, H] while the norm
    // keeps this rank's share. (Other frameworks save the same two tensors; not modelled there yet: T x H, small beside
    // the logits except at torchtitan's token counts.)
    if (t.framework == Framework::Torchtitan) out.head_input = eager_norm + (sp && tp > 1 ? a * (h - h_part) : 0);
    // Attention: rotated q and k, v, the kernel's output and its log-sum-exp (fp32 per head), and
    // o_proj's input (the output made contiguous after the head transpose).
    out.attention = a * (3 * q + 2 * kv) + 4 * heads;
    // Attention-logit softcapping (gemma2) cannot run in SDPA: litgpt then computes attention by hand
    // whatever was asked (litgpt/model.py CausalSelfAttention.scaled_dot_product_attention, "with softcapping
    // we cannot use SDPA", @00af8b0d), and the tanh between the scores and the softmax keeps its output.
    const bool softcap = m.attn_logit_softcapping > 0;
    if (t.attention == Attention::Eager || (softcap && t.framework == Framework::Litgpt)) {
        // repeat_kv copies k and v up to every head; scores softmax in fp32, cast back, and dropout.
        out.repeated_kv = a * 2 * (q - kv);
        double probs = (a == 4 ? 4 : 4 + a) * heads * s;
        if (softcap) probs += a * heads * s;  // tanh(scores / cap) saves its output for backward
        if (m.attention_dropout > 0) probs += (1 + a) * heads * s;
        out.attention_scores = probs;
    }
    // MLP: gated keeps gate, act(gate), up and their product; plain keeps fc1's output and act.
    // An MoE layer does that for each of the top-k experts a token visits, keeps the router's fp32
    // probabilities and the token copies dispatched to the experts; averaged over the layers.
    double per_mlp = m.gated_mlp ? 4 : 2;
    double dense_mlp = per_mlp * a * I;
    if (m.num_experts) {
        double k = static_cast<double>(m.num_experts_per_tok), E = static_cast<double>(m.num_experts);
        double moe_mlp = per_mlp * a * static_cast<double>(m.moe_intermediate_size) / tp * k + 4 * E + a * h * k +
                         per_mlp * a * static_cast<double>(m.shared_expert_intermediate_size) / tp;
        double moe_share = static_cast<double>(layer_count(m, Layers::Moe)) / static_cast<double>(m.num_layers);
        out.mlp = moe_share * moe_mlp + (1 - moe_share) * dense_mlp;
    } else {
        out.mlp = dense_mlp;
    }
    if (m.hidden_dropout > 0) out.dropout_masks = 2 * h_part;  // two 1-byte residual dropout masks
    out.op_selective = op_selective_per_token(m, a, tp, h_part, q, kv, heads, I);
    if (t.method == Method::Lora || t.method == Method::Qlora) add_lora_activations(out.lora, m, t, a, tp, h, q, I);
    out.per_token = 0;
    for (double part : {out.norms, out.sandwich_norms, out.attention, out.repeated_kv, out.attention_scores, out.mlp,
                        out.dropout_masks, out.lora})
        out.per_token += part;
    return out;
}

// ---- The phases of training_memory, in the order it runs them.

// What one GPU holds of the model and which of it trains.
struct Params {
    Shard shard;                      // the untied head copy, if any, added to its non-layer parameters
    double P_gpu = 0;                 // parameters on one GPU before data-parallel sharding
    double head_copy = 0;             // a framework's own lm_head copy of tied embeddings (litgpt)
    double quantized_head = 0;        // QLoRA under litgpt: an untied lm_head, quantized with the layers
    double largest_layer_matrix = 0;  // the largest weight matrix in a layer, per GPU
    double largest_tensor = 0;        // the largest tensor (the head copy included), per GPU
    bool adapters = false;            // lora / qlora
    bool partial = false;             // frozen (the top layers train)
    double trainable = 0, frozen = 0, lora = 0;
};

// LoRA parameters on one GPU: the adapters of every targeted linear on this stage's layers.
double lora_parameters(const ModelSpec& m, const TrainingSettings& t, const Shard& shard) {
    double h = static_cast<double>(m.hidden_size), q = static_cast<double>(m.num_attention_heads * m.head_dim),
           kv = static_cast<double>(m.num_key_value_heads * m.head_dim), I = static_cast<double>(m.intermediate_size);
    double r = static_cast<double>(t.lora_rank), per_layer = 0, head_adapter = 0;
    for (LoraTarget target : t.lora_targets) {
        if (target == LoraTarget::LmHead) head_adapter = r * (h + static_cast<double>(m.vocab_size));
        else if (target == LoraTarget::QProj) per_layer += r * (h + q);
        else if (target == LoraTarget::KProj || target == LoraTarget::VProj) per_layer += r * (h + kv);
        else if (target == LoraTarget::OProj) per_layer += r * (q + h);
        else per_layer += r * (h + I);  // gate_proj, up_proj, down_proj
    }
    return per_layer * shard.layers + head_adapter;
}

Params trained_params(const Scenario& sc, Notes& why) {
    const ModelSpec& m = sc.model;
    const TrainingSettings& t = sc.training;
    const double tp = static_cast<double>(sc.parallel.tp);
    Params p;
    p.shard = shard_of(sc, sc.parallel.tp, sc.parallel.pp, sc.parallel.ep);
    Shard& shard = p.shard;
    p.P_gpu = shard.params();
    // A framework that keeps its own lm_head copy of tied embeddings (litgpt converts tied checkpoints
    // that way: convert_hf_checkpoint copies transformer.wte.weight to lm_head.weight) holds one more
    // vocab x hidden matrix on the last stage.
    if (t.untie_embeddings && m.tie_word_embeddings) {
        p.head_copy = static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size) / tp;
        p.P_gpu += p.head_copy;
        shard.non_layer_params += p.head_copy;
        why["untied_lm_head_parameters_per_gpu"] = p.head_copy;
    }
    // The largest single weight matrix (a layer's or the head's), per GPU: what a per-tensor step or a
    // per-matrix dequantization holds at once.
    p.largest_layer_matrix = shard.largest_layer_matrix;
    p.largest_tensor = std::max(shard.largest_tensor, p.head_copy);

    p.adapters = t.method == Method::Lora || t.method == Method::Qlora;
    p.partial = t.method == Method::Frozen;
    p.trainable = p.P_gpu;
    if (p.partial) {
        // Partial training: the top `trainable_layers` layers (on this stage: the last one holds
        // them), the head if asked, and a trainable module feeding the first layer; the rest is frozen.
        double head = m.tie_word_embeddings && p.head_copy == 0
                          ? 0
                          : static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size) / tp;
        double layers_here = std::min(static_cast<double>(t.trainable_layers), shard.layers);
        p.trainable = layers_here * shard.layer_params + (t.train_lm_head ? head : 0);
        p.trainable = std::min(p.trainable, p.P_gpu);
        p.frozen = p.P_gpu - p.trainable;
        p.trainable += static_cast<double>(t.trainable_input_parameters);
        why["trainable_parameters_per_gpu"] = p.trainable;
        if (why.on()) {  // the whole model's count, for the result's parameters.trainable
            const Shard whole = shard_of(sc, 1, 1, 1);
            const double layers = std::min(static_cast<double>(t.trainable_layers), whole.layers);
            const double whole_head = head * tp;
            why["trainable_parameters_total"] =
                std::min(layers * whole.layer_params + (t.train_lm_head ? whole_head : 0), whole.params()) +
                static_cast<double>(t.trainable_input_parameters);
        }
    }
    if (p.adapters) {
        p.lora = lora_parameters(m, t, shard);
        p.trainable = p.lora;
        p.frozen = p.P_gpu;
        why["lora_parameters_per_gpu"] = p.lora;
    }
    // litgpt's QLoRA quantizes through Lightning's BitsandbytesPrecision, which builds the model with every
    // torch.nn.Linear swapped for a bitsandbytes 4-bit one (module_init_context: _ClassReplacementContextManager;
    // litgpt passes no ignore_modules; lightning/fabric/plugins/precision/bitsandbytes.py @f5d8250), and litgpt's
    // lm_head is such a Linear (litgpt/lora.py GPT: LoRALinear wraps torch.nn.Linear, @00af8b0d): an untied head is
    // quantized like the layers' matrices. (A tied one is the head copy above, quantized already; transformers
    // keeps the output embedding out of bitsandbytes, torchtune's output projection is a plain Linear.)
    if (t.method == Method::Qlora && t.framework == Framework::Litgpt && !m.tie_word_embeddings &&
        sc.parallel.pp == 1) {
        p.quantized_head = static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size) / tp;
        why["quantized_lm_head_parameters_per_gpu"] = p.quantized_head;
    }
    return p;
}

// The model's states on one GPU before data-parallel sharding, in bytes.
struct States {
    Recipe rc;
    double weights = 0, grads = 0, master = 0, states = 0;
    double dequant_temp = 0;  // QLoRA: one dequantized matrix at a time
};

// {elements, optimizer-state bytes} of the whole tensor-parallel shard of the model, tensor by tensor
// (Adafactor, Shampoo and Muon depend on the shapes); memoised per layout in the model cache.
std::pair<double, double> model_optimizer_totals(const Scenario& sc, double state_dtype) {
    const Parallelism& par = sc.parallel;
    const double tp = static_cast<double>(par.tp);
    return optimizer_totals(sc, par.tp, par.ep, state_dtype, [&] {
        double model_tp = 0, model_states = 0, elems = 0, bytes = 0;
        const LayerCounts counts(sc.model);
        const Tensor* last = nullptr;
        for (const Tensor& x : tensors_of(sc)) {
            if (!last || !same_shape(*last, x)) {  // routed experts repeat one shape hundreds of times
                double repeat = x.in_layers() ? static_cast<double>(counts[x.layers]) : 1;
                double rows = static_cast<double>(x.rows) / (x.tp_sharded ? tp : 1) /
                              (x.expert ? static_cast<double>(par.ep) : 1);
                double cols = static_cast<double>(x.cols);
                elems = rows * cols * repeat;
                bytes = state_bytes(sc.training.optimizer, state_dtype, rows, cols) * repeat;
                last = &x;
            }
            model_tp += elems;
            model_states += bytes;
        }
        return std::pair<double, double>{model_tp, model_states};
    });
}

// A QLoRA base: the layers' linear matrices in the bitsandbytes format, the rest in the compute dtype.
// Returns the format's bytes per quantized parameter; sets the dequantized matrix's transient.
double qlora_bytes_per_param(const Scenario& sc, const Params& p, States& st, Breakdown& out) {
    const TrainingSettings& t = sc.training;
    // bitsandbytes on the layers' linear matrices, sized by the format catalogue; 4-bit with the
    // QLoRA paper's double quant (an 8-bit absmax per 64 plus an fp32 scale per 256 of them).
    Format base_format = *sc.format(weight_format_of(t.quantization));
    // Double quant: off by default in transformers' BitsAndBytesConfig and litgpt's bnb.nf4.
    if (t.double_quant) apply_double_quant(base_format);
    double bytes4 = base_format.bytes_per_param();
    out.assumptions["qlora_bytes_per_quantized_param"] = bytes4;
    // bitsandbytes' MatMul4Bit dequantizes the whole weight to the compute dtype for every forward
    // and backward matmul (F.dequantize_4bit(B).to(A.dtype)): one matrix-sized transient, the
    // largest quantized one at the peak (the head when quantized, else an MLP matrix).
    const double largest = std::max({p.largest_layer_matrix, p.head_copy, p.quantized_head});
    st.dequant_temp =
        out.explain.product("qlora_dequantized_matrix", "the largest quantized matrix, dequantized for its matmul",
                            {{"elements of the largest matrix", largest, "elements"},
                             {"bytes per element (compute dtype)", compute_bytes(t.dtype), "B"}},
                            "bitsandbytes MatMul4Bit: F.dequantize_4bit(B).to(A.dtype) in forward and backward");
    // litgpt (Lightning's BitsandbytesPrecision) quantizes each weight from an fp16 copy (_Linear4bit.quantize:
    // weight.contiguous().to(device, dtype=torch.half), lightning/fabric/plugins/precision/bitsandbytes.py @f5d8250,
    // unchanged at 7f0c343), so the quant state's dtype is fp16 whatever the compute dtype: dequantize_4bit allocates
    // its output in that dtype (torch.empty(quant_state.shape, dtype=quant_state.dtype), bitsandbytes/functional.py
    // @0.42.0, the release litgpt pinned), and MatMul4Bit's .to(A.dtype) casts it to the compute dtype (bf16, or fp32
    // under 32-true) beside it. Both copies are alive during the cast: 2 + 2 B per element of the matrix, the lm_head
    // at litgpt's peak (its chunked head calls the quantized lm_head once per 128 positions, at the end of the forward
    // and the start of the backward).
    if (t.framework == Framework::Litgpt && t.dtype != Dtype::Fp16) {
        st.dequant_temp = out.explain.product(
            "qlora_dequantized_matrix",
            "the largest quantized matrix, dequantized in fp16 and cast to the compute dtype beside it",
            {{"elements of the largest matrix", largest, "elements"},
             {"bytes per element: fp16 dequantized + its compute-dtype cast", 2 + compute_bytes(t.dtype), "B"}},
            "lightning/fabric/plugins/precision/bitsandbytes.py _Linear4bit.quantize @f5d8250 (quantizes "
            "weight.to(torch.half)); bitsandbytes 0.42.0 dequantize_4bit (output in the quant state's dtype) and "
            "MatMul4Bit.forward/backward (.to(A.dtype))");
    }
    if (torchtune_01(t)) {
        // torchtune 0.1 quantizes with torchao's NF4Tensor (a7670be58, the release torchtune 0.1 pinned):
        // linear_nf4's forward and backward call weight.to(bf16), i.e. get_original_weight(), which holds at
        // once both nibble index tensors as int64 (4 + 4 B per element), their two bf16 lookups (1 + 1), the
        // two scaled halves (1 + 1) and the stacked result (2): 14 bytes per element of the matrix.
        st.dequant_temp = out.explain.product(
            "qlora_dequantized_matrix", "the largest quantized matrix, dequantized for its matmul (torchao NF4)",
            {{"elements of the largest matrix", largest, "elements"},
             {"bytes per element alive in get_original_weight", 14, "B"}},
            "torchao/dtypes/nf4tensor.py NF4Tensor.get_original_weight @a7670be58 (linear_nf4: weight.to(dtype))");
    }
    out.assumptions["qlora_dequantized_matrix_bytes"] = st.dequant_temp;
    return bytes4;
}

States model_states(const Scenario& sc, const Params& p, Breakdown& out) {
    const TrainingSettings& t = sc.training;
    Notes& why = out.assumptions;
    Explanation& ex = out.explain;
    States st;
    st.rc = recipe_of(t);
    const Recipe& rc = st.rc;
    double state_dtype = storage_bytes(t.optimizer_state_dtype);  // int8: 8-bit optimizers
    // The source names the scenario's recipe; built only when recorded (the planner's fast path allocates nothing).
    const std::string recipe_text = ex.on() ? std::string("the precision recipe: training.precision ") +
                                                  name(t.precision) + ", training.dtype " + name(t.dtype) +
                                                  " (docs/memory-model.md, precision recipes)"
                                            : std::string();
    const char* recipe = recipe_text.c_str();
    // Full and partial training: a gradient per trained parameter, and fp32 master copies when the recipe keeps them.
    auto gradients_and_master = [&](double trained, const char* count) {
        st.grads = ex.product("gradients", "one gradient per trained parameter",
                              {{count, trained, "params"}, {"bytes per gradient", rc.grad, "B"}}, recipe);
        if (rc.master > 0)
            st.master = ex.product("master_weights", "fp32 master copies of the trained parameters (mixed precision)",
                                   {{count, trained, "params"}, {"bytes per copy", rc.master, "B"}}, recipe);
    };
    if (p.adapters) {
        // PEFT keeps adapters in fp32 (autocast_adapter_dtype) and trains them with fp32 grads and states.
        // torchtune and litgpt build the whole model, adapters included, under the run's default dtype: torchtune's
        // recipes instantiate it inside set_default_dtype(self._dtype) (recipes/lora_finetune_single_device.py
        // _setup_model @v0.1.1 and @v0.3.0; its LoRALinear's lora_a/lora_b are nn.Linear, torchtune/modules/peft/
        // lora.py), litgpt inside fabric.init_module(), whose precision plugin (bf16-true, or bitsandbytes with
        // dtype bf16) sets the default dtype (litgpt/finetune/lora.py @00af8b0d; lightning/fabric/plugins/precision/
        // bitsandbytes.py module_init_context @f5d8250), so lora_A/lora_B are created in bf16. Under a pure recipe
        // their adapters, and the gradients autograd gives them, are in the compute dtype; torch.optim keeps its
        // moments in the parameter's dtype (torch/optim/adamw.py: torch.zeros_like(p)), bitsandbytes' 32-bit
        // optimizers in fp32 whatever the parameter (bitsandbytes/optim/optimizer.py Optimizer2State.init_state
        // @0.42.0: state1 = get_state_buffer(p, dtype=torch.float32) when optim_bits == 32).
        const bool native =
            (t.framework == Framework::Torchtune || t.framework == Framework::Litgpt) && t.precision == Precision::Pure;
        const double adapter = native ? compute_bytes(t.dtype) : kFp32;
        const char* peft = native ? "torchtune / litgpt: the model, adapters included, built under the run's default "
                                    "dtype (set_default_dtype / fabric.init_module)"
                                  : "PEFT LoraModel: adapters in fp32 (autocast_adapter_dtype=True)";
        const char* adapter_dtype = native ? "bytes per element (the compute dtype)" : "fp32";
        if (t.method == Method::Qlora) {
            // An untied head copy is an nn.Linear too: litgpt's bitsandbytes plugin quantizes every one.
            const double linear = std::min(p.shard.linear_params + p.head_copy + p.quantized_head, p.frozen);
            const double bytes4 = qlora_bytes_per_param(sc, p, st, out);
            st.weights =
                ex.sum("weights", "the quantized base, the rest of the base and the adapters",
                       {{"quantized linear matrices",
                         {{"linear parameters", linear, "params"}, {"bytes per quantized weight", bytes4, "B"}}},
                        {"the rest of the base (embeddings, norms)",
                         {{"parameters", p.frozen - linear, "params"}, {"bytes per weight", rc.frozen_weight, "B"}}},
                        {"LoRA adapters", {{"adapter parameters", p.lora, "params"}, {adapter_dtype, adapter, "B"}}}},
                       "QLoRA (Dettmers et al. 2023): 4-bit base, bf16 compute; bitsandbytes formats from "
                       "presets/dtypes.json");
        } else {
            st.weights = ex.sum(
                "weights", "the frozen base and the adapters",
                {{"frozen base", {{"parameters", p.frozen, "params"}, {"bytes per weight", rc.frozen_weight, "B"}}},
                 {"LoRA adapters", {{"adapter parameters", p.lora, "params"}, {adapter_dtype, adapter, "B"}}}},
                peft);
        }
        st.grads = ex.product("gradients", "the adapters' gradients",
                              {{"adapter parameters", p.lora, "params"}, {adapter_dtype, adapter, "B"}}, peft);
        state_dtype = storage_bytes(is_8bit(t.optimizer) ? StateDtype::Int8 : StateDtype::Fp32);
        if (native && !is_8bit(t.optimizer) && t.optimizer != Optimizer::PagedAdamw32bit) state_dtype = adapter;
        st.states = ex.rule("optimizer_states", "the optimizer's state for the adapters",
                            state_bytes(t.optimizer, state_dtype, p.lora, 1),
                            "states per parameter by optimizer (Adam family: 2 moments) x state dtype bytes",
                            {{"adapter parameters", p.lora, "params"}, {"state dtype bytes", state_dtype, "B"}},
                            "torch.optim and bitsandbytes optimizers (8-bit: 2 bytes + an fp32 absmax per 2048)");
    } else if (p.partial) {
        st.weights =
            ex.sum("weights", "the frozen and the trained parameters",
                   {{"frozen", {{"parameters", p.frozen, "params"}, {"bytes per weight", rc.frozen_weight, "B"}}},
                    {"trained", {{"parameters", p.trainable, "params"}, {"bytes per weight", rc.weight, "B"}}}},
                   recipe);
        gradients_and_master(p.trainable, "trained parameters");
        st.states = ex.rule("optimizer_states", "the optimizer's state for the trained parameters",
                            state_bytes(t.optimizer, state_dtype, p.trainable, 1),
                            "states per parameter by optimizer (Adam family: 2 moments) x state dtype bytes",
                            {{"trained parameters", p.trainable, "params"}, {"state dtype bytes", state_dtype, "B"}},
                            "torch.optim");
    } else {
        st.weights =
            ex.product("weights", "the model's parameters on this GPU",
                       {{"parameters on this GPU", p.P_gpu, "params"}, {"bytes per weight", rc.weight, "B"}}, recipe);
        gradients_and_master(p.P_gpu, "parameters on this GPU");
        // Optimizer state by tensor shape for the whole tensor-parallel shard, scaled to this GPU's stage.
        auto [model_tp, model_states] = model_optimizer_totals(sc, state_dtype);
        if (model_tp > 0)
            st.states = ex.product(
                "optimizer_states", "the optimizer's state, tensor by tensor, for this GPU's parameters",
                {{"state bytes of the tensor-parallel shard (summed tensor by tensor)", model_states, "bytes"},
                 {"parameters on this GPU", p.P_gpu, "params"},
                 {"parameters of the tensor-parallel shard", model_tp, "params", true}},
                "per tensor: Adam family 2 moments; Adafactor factored rows + columns; Shampoo 1024-blocks; Muon 1 "
                "for matrices; bitsandbytes 8-bit 2 bytes + absmax per 2048");
        else
            st.states =
                ex.rule("optimizer_states", "the optimizer's state", state_bytes(t.optimizer, state_dtype, p.P_gpu, 1),
                        "states per parameter by optimizer x state dtype bytes",
                        {{"parameters on this GPU", p.P_gpu, "params"}, {"state dtype bytes", state_dtype, "B"}},
                        "torch.optim");
    }
    why["bytes_per_trainable_param"] = {{"weights", p.adapters ? kFp32 : rc.weight},
                                        {"gradients", p.adapters ? kFp32 : rc.grad},
                                        {"master", p.adapters ? 0.0 : rc.master},
                                        {"optimizer_states", p.trainable > 0 ? st.states / p.trainable : 0.0}};
    return st;
}

// What the engine adds beside the sharded states: buffers, gathered layers and unsharded gradients.
struct EngineBytes {
    std::uint64_t stage = 0;            // the ZeRO stage in effect (FSDP's shardings as their stages)
    double shard_group = 1;             // the ranks that share one model slice's states
    double temporaries_persistent = 0;  // DDP's bucket copy, ZeRO's reduce bucket
    double gathered = 0;                // ZeRO-3 / FSDP: gathered layers in the compute dtype
    double pp_unsharded_grads = 0, fsdp_unsharded_grads = 0;
    double fsdp1_root = 0, nosync_grads = 0, root_grad_assembly = 0;  // litgpt's FSDP1 (root_units)
    double root_grads_backward = 0;                                   // torchtitan's FSDP2 root (root_units)
};

// FSDP's root unit, which stays gathered after forward: litgpt (FSDP1 through Fabric) and torchtitan (FSDP2).
void root_units(const Scenario& sc, const Params& p, const States& st, EngineBytes& e, Breakdown& out) {
    Notes& why = out.assumptions;
    Explanation& ex = out.explain;
    const ModelSpec& m = sc.model;
    const TrainingSettings& t = sc.training;
    const double a = compute_bytes(t.dtype), tp = static_cast<double>(sc.parallel.tp);
    const bool tt01 = torchtune_01(t);
    if (t.framework == Framework::Litgpt || tt01) {
        // torchtune 0.1's distributed recipes wrap the model in FSDP1 the same way: FullyShardedDataParallel with
        // ModuleWrapPolicy({TransformerDecoderLayer}) (lora_fsdp_wrap_policy adds the adapters), FULL_SHARD,
        // mixed_precision=None, so the root unit holds tok_embeddings, norm and output
        // (recipes/full_finetune_distributed.py, lora_finetune_distributed.py @fef3ed10d).
        // litgpt shards through Lightning Fabric's FSDPStrategy, which is FSDP1 (FullyShardedDataParallel) with
        // auto_wrap_policy={Block}: every Block is a unit and the root unit holds what is left, the embeddings,
        // the final norm and the lm_head. FSDP1 does not free the root's unsharded parameters after forward
        // (torch/distributed/fsdp/_runtime_utils.py _post_forward_reshard: "Do not free the root's parameters
        // in the post-forward for FULL_SHARD"): its gathered flat parameter, a buffer apart from the shard, stays
        // in the compute dtype through forward, loss and backward.
        e.fsdp1_root = ex.product(
            "fsdp_root_gathered", "FSDP1's root unit (embeddings, final norm, head), kept gathered",
            {{"root parameters", p.shard.non_layer_params, "params"}, {"bytes per element (compute dtype)", a, "B"}},
            "torch/distributed/fsdp/_runtime_utils.py _post_forward_reshard (root not freed)");
        // The root's gradient: its parameters are views (split) of the flat parameter, so autograd assembles
        // the flat gradient at the end of backward from the per-parameter gradients (split's backward: a cat),
        // both alive at once, and, inside no_sync with a gradient already there, adds it to that one.
        // Gradient accumulation: Fabric's no_backward_sync is FSDP1's no_sync() (lightning/fabric/strategies/
        // fsdp.py _FSDPBackwardSyncControl), which keeps every unit's unsharded gradient until the last
        // micro-batch (FULL_SHARD still frees the parameters: _should_free_in_backward). litgpt's loops call it
        // on every micro-batch but the last (finetune/full.py, lora.py: fabric.no_backward_sync(model,
        // enabled=is_accumulating)).
        // torchtune 0.1 calls loss.backward() on every micro-batch without no_sync: FSDP1 reduce-scatters each one.
        if (t.gradient_accumulation_steps > 1 && !tt01)
            e.nosync_grads = ex.product("fsdp1_no_sync_gradients",
                                        "every unsharded gradient, kept by no_sync while gradients accumulate",
                                        {{"trained parameters on this GPU", p.trainable, "params"},
                                         {"bytes per gradient", p.adapters ? kFp32 : st.rc.grad, "B"}},
                                        "lightning/fabric/strategies/fsdp.py _FSDPBackwardSyncControl (FSDP1 no_sync)");
        if (!p.adapters)
            e.root_grad_assembly = ex.product("fsdp1_root_gradient_assembly",
                                              "the root's flat gradient assembled from its views' gradients",
                                              {{"root parameters", p.shard.non_layer_params, "params"},
                                               {"bytes per gradient", st.rc.grad, "B"},
                                               {"copies alive (1 with 2 accumulation steps, else 2)",
                                                t.gradient_accumulation_steps == 2 ? 1.0 : 2.0}},
                                              "autograd: split's backward is a cat (FSDP1 flat parameter views)");
        why["fsdp1_root_gathered_bytes"] = e.fsdp1_root;
        why["fsdp1_no_sync_unsharded_gradient_bytes"] = e.nosync_grads;
    }
    if (t.framework == Framework::Torchtitan) {
        // torchtitan applies fully_shard (FSDP2) to each TransformerBlock and then to the whole model, whose own
        // group is tok_embeddings, norm and output (torchtitan/parallelisms/parallelize_llama.py:334-339
        // @9dec370; models/llama3/parallelize_llama.py:362-367 @e7c0cae). FSDP2 does not reshard the root after
        // forward (torch/distributed/_composable/fsdp/_fsdp_state.py _lazy_init: "For the root, do not reshard
        // after forward"), so that group stays gathered in param_dtype through forward and backward, and its
        // post-backward (the reduce-scatter) runs in the final callback: the output weight's unsharded gradient,
        // produced first, lives through the whole backward.
        e.fsdp1_root = ex.product(
            "fsdp_root_gathered", "FSDP2's root group (embeddings, final norm, output), kept gathered",
            {{"root parameters", p.shard.non_layer_params, "params"}, {"bytes per element (compute dtype)", a, "B"}},
            "torch/distributed/_composable/fsdp/_fsdp_state.py _lazy_init (root not resharded)");
        e.root_grads_backward =
            ex.product("fsdp_root_output_gradient", "the output weight's unsharded gradient, alive through backward",
                       {{"vocabulary", static_cast<double>(m.vocab_size), "elements"},
                        {"hidden size", static_cast<double>(m.hidden_size), "elements"},
                        {"tensor-parallel size", tp, "x", true},
                        {"bytes per element (compute dtype)", a, "B"}},
                       "torchtitan parallelize_llama.py: fully_shard on the whole model; FSDP2 root post-backward");
        why["fsdp_root_gathered_bytes"] = e.fsdp1_root;
        why["fsdp_root_output_gradient_bytes"] = e.root_grads_backward;
    }
}

// ZeRO-3 and FSDP's full shard: the gathered units and their unsharded gradients.
void gathered_units(const Scenario& sc, const Params& p, const States& st, EngineBytes& e, Breakdown& out) {
    Notes& why = out.assumptions;
    Explanation& ex = out.explain;
    const ModelSpec& m = sc.model;
    const TrainingSettings& t = sc.training;
    const EngineType type = sc.engine.type;
    const double tp = static_cast<double>(sc.parallel.tp), layer_gpu = p.shard.layer_params;
    // Gathered full layers in the compute dtype: the one running and the one prefetched (DeepSpeed:
    // up to stage3_prefetch_bucket_size elements; FSDP: the next whole unit, since its all-gather is
    // issued ahead on its own stream, in both passes: FSDP2's implicit forward prefetch and its
    // backward prefetch of one unit, FSDP1's BACKWARD_PRE default).
    double a = compute_bytes(t.dtype);
    const double prefetched =
        type == EngineType::Fsdp ? layer_gpu : std::min(sc.tunable(Tunable::Zero3PrefetchElements), layer_gpu);
    // torchtune shards the token embeddings and the output projection as units of their own
    // (custom_sharded_layers: ['tok_embeddings', 'output'] in its large-vocabulary configs, e.g.
    // recipes/configs/llama3_1/70B_full.yaml @9bafd16fc; torchtune/training/_distributed.py shard_model:
    // fully_shard on each such module): with a 128k vocabulary the output unit (vocab x hidden) outweighs a
    // decoder layer, and it is the running unit at the start of backward, beside the prefetched last layer.
    double running_unit = layer_gpu;
    if (type == EngineType::Fsdp && t.framework == Framework::Torchtune && !torchtune_01(t) && !p.adapters &&
        sc.parallel.pp == 1)
        running_unit = std::max(layer_gpu, static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size) / tp);
    e.gathered = ex.sum(
        "gathered_layers", "the running unit and the prefetched one, gathered in the compute dtype",
        {{"running unit", {{"parameters", running_unit, "params"}, {"bytes per element", a, "B"}}},
         {"prefetched unit",
          {{"parameters (FSDP: the next unit; DeepSpeed: up to stage3_prefetch_bucket_size)", prefetched, "params"},
           {"bytes per element", a, "B"}}}},
        "FSDP2 implicit prefetch / FSDP1 BACKWARD_PRE; DeepSpeed stage3_prefetch_bucket_size");
    // FSDP in backward: the running unit's unsharded gradients, in the reduce dtype, until their
    // reduce-scatter has sharded them (FSDP2 frees the unsharded gradient after the reduce-scatter;
    // the fp32 upcast when param_dtype differs from reduce_dtype). DeepSpeed's equivalent is its
    // reduce bucket (shard_over_data_parallel).
    if (type == EngineType::Fsdp && !p.adapters) {
        e.fsdp_unsharded_grads = ex.product(
            "fsdp_unsharded_gradients", "the running unit's unsharded gradients until their reduce-scatter",
            {{"unit parameters", running_unit, "params"}, {"bytes per gradient (reduce dtype)", st.rc.grad, "B"}},
            "FSDP2 post-backward: reduce-scatter, then free");
        why["fsdp_unsharded_gradient_bytes"] = e.fsdp_unsharded_grads;
    }
    if (type == EngineType::Fsdp && sc.parallel.pp > 1) {
        // FSDP under a pipeline schedule (torch.distributed.pipelining's stage: reshard_after_backward
        // and gradient sync off until the last micro-batch; torchtitan: reshard_after_forward off with
        // PP): the stage's parameters stay gathered in the compute dtype for the whole step, and its
        // unsharded gradients accumulate in the reduce dtype (FSDP2 upcasts them to reduce_dtype).
        e.gathered = ex.product("gathered_layers", "the stage's parameters, gathered for the whole step",
                                {{"parameters on this GPU", p.P_gpu, "params"}, {"bytes per element", a, "B"}},
                                "torch.distributed.pipelining with FSDP: reshard_after_forward off");
        e.pp_unsharded_grads = ex.product("fsdp_pipeline_unsharded_gradients",
                                          "the stage's unsharded gradients, accumulated over the micro-batches",
                                          {{"trained parameters on this GPU", p.trainable, "params"},
                                           {"bytes per gradient", p.adapters ? kFp32 : st.rc.grad, "B"}},
                                          "torch.distributed.pipelining: gradient sync off until the last micro-batch");
        why["fsdp_pipeline_unsharded_gradient_bytes"] = e.pp_unsharded_grads;
    }
    why["zero3_gathered_bytes"] = e.gathered;
    if (type == EngineType::Fsdp && sc.parallel.pp == 1) root_units(sc, p, st, e, out);
}

// The states sharded over data parallelism (ZeRO stages, FSDP shardings, Megatron's distributed
// optimizer), and the engine's own buffers.
EngineBytes shard_over_data_parallel(const Scenario& sc, const Params& p, States& st, Breakdown& out) {
    Notes& why = out.assumptions;
    const Parallelism& par = sc.parallel;
    const EngineSettings& eng = sc.engine;
    const EngineType type = eng.type;
    EngineBytes e;
    double bucket_elems = std::min(sc.tunable(Tunable::ZeroReduceBucketElements), p.trainable);
    if (type == EngineType::Ddp && sc.tunable(Tunable::DdpBucketView) == 0 && par.dp > 1) {
        // the reducer's flat bucket copy of every gradient
        e.temporaries_persistent += out.explain.rule(
            "ddp_bucket_copy", "DDP's flat bucket copy of every gradient", st.grads, "the gradients' bytes, once more",
            {{"gradients", st.grads, "bytes"}}, "torch DistributedDataParallel without gradient_as_bucket_view");
        why["ddp_bucket_copy_bytes"] = st.grads;
    }
    // State shards over every rank that holds the same model slice: data x context parallel
    // (FSDP's dp_shard x cp mesh, Megatron's distributed optimizer over DP x CP).
    e.shard_group = static_cast<double>(par.dp) * static_cast<double>(par.cp);
    if (type == EngineType::DeepSpeed || type == EngineType::MegatronDeepSpeed) e.stage = eng.zero_stage;
    if (type == EngineType::Fsdp) {
        if (eng.fsdp_sharding == FsdpSharding::FullShard) e.stage = 3;
        else if (eng.fsdp_sharding == FsdpSharding::ShardGradOp) e.stage = 2;
        else if (eng.fsdp_sharding == FsdpSharding::HybridShard) {  // sharded within a node, replicated across
            e.stage = 3;
            e.shard_group = std::min(e.shard_group, static_cast<double>(sc.hardware.gpus_per_node));
        }
    }
    // Expert weights are replicated only over the data-parallel ranks of one expert-parallel group
    // (Megatron's expert_data_parallel = dp x cp / ep; FSDP2/torchtitan shard experts over dp_shard / ep),
    // so their state shards over that many ranks, the rest over the whole group.
    double expert_share =
        (!p.adapters && !p.partial && p.P_gpu > 0) ? std::min(1.0, p.shard.expert_params / p.P_gpu) : 0.0;
    double expert_group = std::max(1.0, e.shard_group / static_cast<double>(par.ep));
    const Factor share{"share this GPU keeps (sharded over the data-parallel ranks)",
                       (1 - expert_share) / e.shard_group + expert_share / expert_group, "share"};
    Explanation& ex = out.explain;
    why["expert_state_shard_group"] = expert_group;
    // Megatron's distributed optimizer: fp32 master + states sharded over DP x CP; without it, every
    // data-parallel rank keeps them whole.
    if ((type == EngineType::Megatron && eng.distributed_optimizer) || e.stage >= 1) {
        st.master = ex.scale("master_weights", st.master, share);
        st.states = ex.scale("optimizer_states", st.states, share);
    }
    if (e.stage >= 2) {
        double g = ex.scale("gradients", st.grads, share);
        if (type != EngineType::Fsdp)
            e.temporaries_persistent += ex.product(
                "zero_reduce_bucket", "DeepSpeed's reduce bucket for the gradients",
                {{"bucket elements (min of reduce_bucket_size and the trained parameters)", bucket_elems, "elements"},
                 {"bytes per gradient", st.grads / std::max(p.trainable, 1.0), "B"}},
                "DeepSpeed ZeRO stage 1-2: reduce_bucket_size (tunable zero_reduce_bucket_elements)");
        st.grads = g;
    }
    if (e.stage == 3) {
        st.weights = ex.scale("weights", st.weights, share);
        gathered_units(sc, p, st, e, out);
    }
    why["zero_stage_effective"] = e.stage;
    why["shard_group"] = e.shard_group;
    return e;
}

// Offload: optimizer (and master) to host or NVMe, and the weights with ZeRO-3 or FSDP.
void offload(const Scenario& sc, const Params& p, const EngineBytes& e, States& st, Breakdown& out) {
    const EngineSettings& eng = sc.engine;
    Explanation& ex = out.explain;
    // What moves leaves the GPU: its figure is multiplied by 0, and the host (or NVMe) holds it.
    if (eng.offload_optimizer != Offload::None) {
        const Factor away{"on the GPU after offload_optimizer (moved to the host or NVMe)", 0};
        double moved = st.master + st.states;
        (eng.offload_optimizer == Offload::Cpu ? out.host_bytes : out.nvme_bytes) += moved;
        // ZeRO-Offload keeps fp32 gradients on the host too.
        out.host_bytes += (sc.training.precision == Precision::MixedMasterFp32 ? p.P_gpu / e.shard_group * kFp32 : 0);
        st.master = ex.scale("master_weights", st.master, away);
        st.states = ex.scale("optimizer_states", st.states, away);
    }
    if (eng.offload_param != Offload::None) {
        const Factor away{"on the GPU after offload_param (moved to the host or NVMe)", 0};
        (eng.offload_param == Offload::Cpu ? out.host_bytes : out.nvme_bytes) += st.weights;
        st.weights = ex.scale("weights", st.weights, away);
        if (eng.type == EngineType::Fsdp) {
            // FSDP's CPU offload moves the sharded gradients with the parameters (FSDP1
            // CPUOffload(offload_params=True), FSDP2 CPUOffloadPolicy: "offloads parameters, gradients and optimizer
            // step to CPU").
            out.host_bytes += st.grads;
            st.grads = ex.scale("gradients", st.grads, away);
        }
    }
}

// The activations autograd keeps over the step, and the backward's working set.
struct Activations {
    double tokens = 0;           // tokens of one micro-batch on one rank (sequence / context parallel)
    double layer_full = 0;       // one layer's saved tensors without checkpointing (what a recompute rebuilds)
    double acts = 0;             // what stays on the GPU for every layer in flight
    double act_layers = 0;       // layers that keep activations
    double in_flight = 1;        // micro-batches alive at once on the first pipeline stage
    double recompute = 0;        // one layer rebuilt in backward under checkpointing
    double layer_grad_work = 0;  // gradients alive while one layer is differentiated
    double qd = 0, I_tp = 0;     // per-token widths of attention's q and the MLP's intermediate, per GPU
    double head_input = 0;       // the final norm's saved tensors and the output projection's input (to the loss)
};

Activations activations(const Scenario& sc, const Params& p, Breakdown& out) {
    const ModelSpec& m = sc.model;
    const TrainingSettings& t = sc.training;
    const Parallelism& par = sc.parallel;
    Notes& why = out.assumptions;
    Explanation& ex = out.explain;
    const double tp = static_cast<double>(par.tp);
    const bool megatron_engine =
        sc.engine.type == EngineType::Megatron || sc.engine.type == EngineType::MegatronDeepSpeed;
    Activations x;
    // Image tokens (multimodal) join the sequence.
    double s = static_cast<double>(t.seq_len + t.images * t.image_tokens) / static_cast<double>(par.cp);
    x.tokens = static_cast<double>(t.batch_size) * s;
    const double tokens = x.tokens, a = compute_bytes(t.dtype);
    LayerActivations la = layer_activations(m, t, s, tp, par.sequence_parallel);
    const char* block = "the saved tensors of the block as transformers builds it (Korthikanti et al. 2022, Table 2)";
    const double per_token =
        ex.sum("activation_bytes_per_token_per_layer", "what one layer saves for backward, per token",
               {{"norms", {{"bytes", la.norms, "B"}}},
                {"sandwich norms", {{"bytes", la.sandwich_norms, "B"}}},
                {"attention: q, k, v, output, log-sum-exp", {{"bytes", la.attention, "B"}}},
                {"eager attention: k and v repeated to every head", {{"bytes", la.repeated_kv, "B"}}},
                {"eager attention: scores and probabilities", {{"bytes", la.attention_scores, "B"}}},
                {"MLP intermediates", {{"bytes", la.mlp, "B"}}},
                {"residual dropout masks", {{"bytes", la.dropout_masks, "B"}}},
                {"LoRA adapters", {{"bytes", la.lora, "B"}}}},
               block);
    ex.set_unit("activation_bytes_per_token_per_layer", "B");
    x.layer_full = per_token * tokens;
    double saved_per_token = per_token;
    if (t.activation_checkpointing == Checkpointing::Full)
        saved_per_token = ex.product("saved_bytes_per_token_per_layer", "full checkpointing keeps each layer's input",
                                     {{"bytes per element", a, "B"},
                                      {"hidden size", static_cast<double>(m.hidden_size), "elements"},
                                      {"sequence-parallel split", par.sequence_parallel ? tp : 1, "x", true}},
                                     "torch.utils.checkpoint / Megatron --recompute-granularity full");
    else if (t.activation_checkpointing == Checkpointing::Selective)
        saved_per_token = ex.rule(
            "saved_bytes_per_token_per_layer", "selective checkpointing's saved tensors per token",
            megatron_engine ? per_token - la.attention_scores : la.op_selective,
            megatron_engine ? "everything but the attention scores (recomputed)"
                            : "the layer input, the attention output and log-sum-exp, every other matmul output",
            {{"all saved bytes per token", per_token, "B"}, {"attention scores per token", la.attention_scores, "B"}},
            megatron_engine ? "Megatron --recompute-granularity selective (Korthikanti et al. 2022)"
                            : "torchtitan activation checkpointing mode \"op\" (save-policy checkpointing)");
    if (t.activation_checkpointing != Checkpointing::None) ex.set_unit("saved_bytes_per_token_per_layer", "B");
    double layer_saved = saved_per_token * tokens;
    why["selective_checkpointing"] = megatron_engine
                                         ? "Megatron: recompute the attention core (s² terms)"
                                         : "per-op policy: keep every other matmul output and the attention output";
    // 1F1B pipeline: the first stage holds min(pp, micro-batches) in flight (Korthikanti et al. §4.2).
    x.in_flight = std::min<double>(static_cast<double>(par.pp), static_cast<double>(par.pipeline_microbatches));
    // Layers that keep activations: every layer, except in partial training with nothing trainable below
    // the top layers: frozen layers under the lowest trainable one run without an autograd graph. A
    // trainable module under the first layer (a projector) needs activation gradients through every frozen
    // layer above it, so they all keep their tensors.
    x.act_layers = p.shard.layers;
    if (p.partial && t.trainable_input_parameters == 0)
        x.act_layers = std::min(static_cast<double>(t.trainable_layers), p.shard.layers);
    x.acts = ex.product(
        "activations_saved", "the tensors autograd keeps for backward, every layer in flight",
        {{t.activation_checkpointing == Checkpointing::None ? "saved bytes per token per layer"
                                                            : "saved bytes per token per layer (checkpointed)",
          saved_per_token, "B"},
         {"tokens of one micro-batch on this GPU", tokens, "tokens"},
         {"layers keeping activations", x.act_layers, "layers"},
         {"micro-batches in flight (1F1B: min(pp, micro-batches))", x.in_flight}},
        block);
    if (t.activation_offloading) {
        // Saved tensors stream to pinned host memory as the forward goes and come back one layer ahead in
        // backward (torchtune OffloadActivations with streams): about two layers' worth stays on the GPU.
        double on_gpu = std::min(x.acts, layer_saved * std::min(2.0, x.act_layers));
        out.host_bytes += x.acts - on_gpu;
        why["offloaded_activation_bytes"] = x.acts - on_gpu;
        x.acts = ex.rule("activations_saved", "the saved tensors left on the GPU by activation offloading", on_gpu,
                         "min(every layer's saved tensors, two layers' worth): the rest streams to the host",
                         {{"every layer's saved tensors", x.acts, "bytes"}, {"one layer's", layer_saved, "bytes"}},
                         "torchtune OffloadActivations (use_streams)");
    }
    // The final norm and the output projection save their inputs through the forward and the loss, checkpointing
    // or not (frameworks checkpoint the decoder blocks); activation offloading streams them to the host too.
    if (la.head_input > 0 && !t.activation_offloading)
        x.head_input = ex.product(
            "final_norm_and_head_input", "the final norm's saved tensors and the output projection's saved input",
            {{"bytes per token: one norm's saved tensors + the head's input (torchtitan SP: the gathered sequence)",
              la.head_input, "B"},
             {"tokens of one micro-batch on this GPU", tokens, "tokens"}},
            "autograd: RMSNorm saves its fp32 input and normalised output, nn.Linear its input; torchtitan "
            "parallelize_llama.py apply_tp @9dec370 (output: ColwiseParallel, input_layouts=Shard(1))");
    x.recompute = t.activation_checkpointing == Checkpointing::None || x.act_layers == 0
                      ? 0
                      : ex.product("recompute_one_layer", "one layer rebuilt in backward under checkpointing",
                                   {{"saved bytes per token per layer (everything)", per_token, "B"},
                                    {"tokens", tokens, "tokens"}},
                                   "torch.utils.checkpoint: the layer's forward runs again before its backward");
    // Gradients alive while one layer is differentiated: the gradient of its output and of its
    // residual input, plus the MLP's intermediates (gate, up and their product) or attention's
    // q, k, v and output, whichever is larger.
    x.I_tp =
        static_cast<double>(m.num_experts ? m.moe_intermediate_size * std::max<std::uint64_t>(1, m.num_experts_per_tok)
                                          : m.intermediate_size) /
        tp;
    x.qd = static_cast<double>(m.num_attention_heads * m.head_dim) / tp;
    double kvd = static_cast<double>(m.num_key_value_heads * m.head_dim) / tp;
    if (x.act_layers > 0)
        x.layer_grad_work = ex.product(
            "layer_gradient_work", "the gradients alive while one layer is differentiated",
            {{"bytes per element", a, "B"},
             {"tokens", tokens, "tokens"},
             {"per token: output and residual gradients (2h) + max(MLP intermediates, q k v o)",
              2 * static_cast<double>(m.hidden_size) + std::max((m.gated_mlp ? 3 : 2) * x.I_tp, 2 * x.qd + 2 * kvd),
              "elements"}},
            "autograd's backward of one decoder layer");
    why["activation_bytes_per_token_per_layer"] = per_token;
    why["activation_layers_on_gpu"] = x.act_layers * x.in_flight;
    return x;
}

// The logits and the loss's fp32 working set (on the last stage; vocab-parallel under TP).
struct Logits {
    double forward = 0;  // what the forward leaves alive
    double peak = 0;     // the loss's high point (its gradients in backward)
};

Logits logits_and_loss(const Scenario& sc, double tokens, Breakdown& out) {
    const TrainingSettings& t = sc.training;
    Explanation& ex = out.explain;
    const double a = compute_bytes(t.dtype);
    double V = static_cast<double>(sc.model.vocab_size) / static_cast<double>(sc.parallel.tp);
    double copies = sc.tunable(Tunable::LossFp32Copies);
    const Factor T{"tokens", tokens, "tokens"}, vocab{"vocabulary entries on this GPU", V, "elements"};
    const Factor logit{"bytes per logit (compute dtype)", a, "B"}, fp32{"bytes per fp32 value", 4, "B"};
    const char* loss_source = "torch.nn.functional.cross_entropy: log_softmax in fp32, then its gradient";
    Logits l;
    // A compiled loss (torch.compile of the cross-entropy) fuses the fp32 upcast and log-softmax into
    // reductions over the logits: the forward keeps the logits and a log-sum-exp per token, and the
    // backward writes the logits' gradient in the compute dtype from one kernel (softmax - one-hot).
    const bool compiled_loss = t.compile == Compile::LayersAndLoss;
    if (t.loss == Loss::Standard && compiled_loss) {
        const char* inductor = "torch.compile of the loss: log-softmax fused into reductions";
        l.forward = ex.sum("logits_forward", "the logits and a log-sum-exp per token",
                           {{"logits", {logit, T, vocab}}, {"log-sum-exp", {fp32, T}}}, inductor);
        l.peak = ex.sum("logits_loss", "the logits, their gradient and the log-sum-exp",
                        {{"logits and their gradient", {{"copies", 2}, logit, T, vocab}}, {"log-sum-exp", {fp32, T}}},
                        inductor);
    } else if (t.loss == Loss::Standard && t.framework == Framework::Torchtitan && sc.parallel.tp > 1) {
        // torchtitan under tensor parallelism computes the loss in loss_parallel(): the output is vocab-sharded and
        // DTensor's own ops run the cross-entropy on this GPU's shard (torch/distributed/tensor/parallel/loss.py).
        // Forward: the loss_fn's fp32 copy of the logits, then _log_softmax's shifted = x - max and exp(shifted),
        // then the result, beside the compute-dtype logits: (β + 3 x 4) at its high point, the result kept. The
        // loop deletes the logits before backward (train.py: del pred); the fused nll + log_softmax backward
        // holds the saved result, zeros_like(x), exp(x), their sum and its product with the gradient: 4 x 4.
        const char* lp = "torch/distributed/tensor/parallel/loss.py _log_softmax, _nll_loss_and_log_softmax_backward";
        l.forward = ex.product("logits_forward", "the logits and the loss-parallel log-softmax's fp32 output",
                               {{"bytes per logit: compute dtype + fp32 log-softmax", a + 4, "B"}, T, vocab}, lp);
        l.peak = ex.product(
            "logits_loss", "loss parallel: the larger of its forward and backward working sets",
            {{"bytes per logit: max(compute dtype + 3 x fp32, 4 x fp32)", std::max(a + 12, 16.0), "B"}, T, vocab}, lp);
    } else if (t.loss == Loss::Standard && torchtune_01(t)) {
        // torchtune 0.1: the model itself returns fp32 logits (TransformerDecoder.forward: self.output(h).float(),
        // the compute-dtype output freed at once), the recipe shifts them into a new fp32 tensor
        // (logits[..., :-1, :].contiguous()) that its `logits` variable holds through the backward, and
        // cross_entropy keeps log_softmax's fp32 output. At the loss's gradient: the held logits beside
        // loss_fp32_copies fp32 tensors (torchtune/modules/transformer.py, recipes/*_finetune_*.py @fef3ed10d).
        const char* tt = "torchtune 0.1 TransformerDecoder: self.output(h).float(); recipe: shifted .contiguous() copy";
        l.forward = ex.product("logits_forward", "the model's fp32 logits (shifted copy) and log_softmax's output",
                               {{"bytes per logit: fp32 logits + fp32 log-softmax", 8, "B"}, T, vocab}, tt);
        l.peak = ex.product(
            "logits_loss", "the held fp32 logits and the loss's fp32 copies at its gradient",
            {{"bytes per logit: fp32 logits + 4 x fp32 copies (tunable loss_fp32_copies)", 4 + 4 * copies, "B"},
             T,
             vocab},
            tt);
    } else if (t.loss == Loss::Standard) {
        l.forward =
            ex.product("logits_forward", "the logits and log_softmax's saved fp32 output",
                       {{"bytes per logit: compute dtype + fp32 log-softmax", a + 4, "B"}, T, vocab}, loss_source);
        l.peak = ex.product(
            "logits_loss", "the logits and the loss's fp32 copies at its gradient",
            {{"bytes per logit: compute dtype + 4 x fp32 copies (tunable loss_fp32_copies)", a + 4 * copies, "B"},
             T,
             vocab},
            loss_source);
    } else if (t.loss == Loss::Chunked) {
        const Factor chunks{"chunks (tunable chunked_loss_chunks)",
                            std::max(1.0, sc.tunable(Tunable::ChunkedLossChunks)), "x", true};
        const char* chunked = "torchtune CEWithChunkedOutputLoss: fp32 upcast one chunk at a time";
        l.forward =
            compiled_loss
                ? ex.sum("logits_forward", "the logits and a log-sum-exp per token",
                         {{"logits", {logit, T, vocab}}, {"log-sum-exp", {fp32, T}}}, chunked)
                : ex.sum("logits_forward", "the logits and one chunk's fp32 log-softmax",
                         {{"logits", {logit, T, vocab}}, {"one chunk in fp32", {fp32, T, vocab, chunks}}}, chunked);
        l.peak = ex.sum("logits_loss", "the logits and one chunk's fp32 copies",
                        {{"logits", {logit, T, vocab}},
                         {"one chunk's copies",
                          {{compiled_loss ? "bytes per gradient (compute dtype)" : "bytes: 4 x fp32 copies",
                            compiled_loss ? a : 4 * copies, "B"},
                           T,
                           vocab,
                           chunks}}},
                        chunked);
    } else {  // fused linear + cross-entropy: logits exist one token chunk at a time
        l.forward = 0;
        l.peak = ex.product("logits_loss", "fused linear + cross-entropy: one chunk's fp32 work over the hidden size",
                            {{"bytes: 4 x fp32 copies", 4 * copies, "B"},
                             T,
                             {"hidden size", static_cast<double>(sc.model.hidden_size), "elements"}},
                            "Liger FusedLinearCrossEntropy / Cut Cross-Entropy (Wijmans et al. 2024)");
    }
    out.assumptions["logits_elements"] = tokens * V;
    return l;
}

// The foreach Adam-family step's temporary: one tensor the size of the second moment, on the GPU's
// share of the state. DeepSpeed and Megatron step with their own fused Adam kernels: no temporary.
// So does torchtune, whose recipes' configs build torch.optim.AdamW with fused=True; torchtune 0.1's configs
// built it without (recipes/configs/llama2/7B_full.yaml @fef3ed10d: _component_: torch.optim.AdamW, lr only), and
// torch 2.2 then steps with the foreach implementation on CUDA tensors.
double optimizer_step_temp(const Scenario& sc, const Params& p, const States& st, Explanation& ex) {
    const TrainingSettings& t = sc.training;
    const EngineType type = sc.engine.type;
    const Optimizer opt = t.optimizer;
    bool foreach_adam = opt == Optimizer::Adam || opt == Optimizer::Adamw || opt == Optimizer::Nadam ||
                        opt == Optimizer::Radam || opt == Optimizer::Amsgrad || opt == Optimizer::Adabelief;
    bool torch_optimizer = (type == EngineType::None || type == EngineType::Ddp || type == EngineType::Fsdp) &&
                           (t.framework != Framework::Torchtune || torchtune_01(t));
    if (t.optimizer_in_backward) return 0;  // each parameter steps alone from its gradient hook
    if (!foreach_adam || !torch_optimizer || sc.engine.offload_optimizer != Offload::None) return 0;
    double per_state = p.trainable > 0 ? st.states / (opt == Optimizer::Amsgrad ? 3 : 2) : 0;
    return ex.product("optimizer_step_temporary", "the foreach step's temporary, the size of one state",
                      {{"one state's bytes (the states ÷ their number)", per_state, "bytes"},
                       {"copies (tunable optimizer_step_temp_copies)", sc.tunable(Tunable::OptimizerStepTempCopies)}},
                      torchtune_01(t) ? "torch/optim/adamw.py _multi_tensor_adamw: torch._foreach_sqrt of exp_avg_sq "
                                        "(torchtune 0.1 configs: torch.optim.AdamW, not fused; "
                                        "recipes/configs/llama2/7B_full.yaml @fef3ed10d)"
                                      : "torch/optim/adamw.py _multi_tensor_adamw: torch._foreach_sqrt of exp_avg_sq");
}

// A loop that keeps the previous step's loss and logits referenced (litgpt) holds, through the next
// forward, that step's logits (in the compute dtype) and what its graph still owns after backward:
// autograd frees the tensors saved with save_for_backward as it goes, but not those a custom
// Function keeps on ctx, which live as long as the graph. bitsandbytes' MatMul4Bit keeps its input
// that way (ctx.tensors = (A, B)), so with QLoRA every quantized matmul's input stays: the attention
// and MLP inputs (one each when the block shares its norm), o_proj's and down_proj's inputs.
double retained_previous_step(const Scenario& sc, const Params& p, const Activations& x, Breakdown& out) {
    Notes& why = out.assumptions;
    const ModelSpec& m = sc.model;
    const TrainingSettings& t = sc.training;
    if (!t.retains_previous_step) return 0;
    const double a = compute_bytes(t.dtype),
                 V = static_cast<double>(m.vocab_size) / static_cast<double>(sc.parallel.tp);
    double shared_norm = m.norms_per_layer == 1 ? 1 : 2;
    double inputs = t.method == Method::Qlora
                        ? shared_norm * static_cast<double>(m.hidden_size) + x.qd + (m.num_experts ? 0 : x.I_tp)
                        : 0;
    double retained = out.explain.sum(
        "previous_step_retained", "the previous step's logits and what its graph still owns",
        {{"logits",
          {{"bytes per element", a, "B"}, {"tokens", x.tokens, "tokens"}, {"vocabulary on this GPU", V, "elements"}}},
         {"QLoRA matmul inputs kept on ctx",
          {{"bytes per element", a, "B"},
           {"tokens", x.tokens, "tokens"},
           {"elements per token per layer", inputs, "elements"},
           {"layers", p.shard.layers, "layers"}}}},
        "litgpt's loops keep the loss referenced; bitsandbytes MatMul4Bit saves its input on ctx");
    why["previous_step_retained_bytes"] = retained;
    return retained;
}

// torch.autocast over fp32 weights (precision amp_fp32_weights without an engine that casts them itself):
// autocast casts each fp32 leaf weight a matmul reads to the compute dtype once and caches the copy until the
// outermost autocast region exits (aten/src/ATen/autocast_mode.cpp cached_cast: fp32 leaves that require grad),
// so by the loss every linear's copy is alive: the layers' linear matrices and an untied head, in the compute
// dtype. FSDP and DeepSpeed cast the weights themselves (their mixed-precision parameters); adapters train
// over a base already in the compute dtype.
double autocast_weight_cache(const Scenario& sc, const Params& p, Explanation& ex) {
    const TrainingSettings& t = sc.training;
    const EngineType type = sc.engine.type;
    if (t.precision != Precision::AmpFp32Weights || p.adapters || t.dtype == Dtype::Fp32) return 0;
    if (type != EngineType::None && type != EngineType::Ddp) return 0;
    const ModelSpec& m = sc.model;
    const double head = m.tie_word_embeddings && p.head_copy == 0
                            ? 0
                            : static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size) /
                                  static_cast<double>(sc.parallel.tp);
    return ex.product(
        "autocast_weight_cache", "autocast's compute-dtype copies of the fp32 linear weights",
        {{"linear weights on this GPU (layers' matrices + an untied head)", p.shard.linear_params + head, "params"},
         {"bytes per element (compute dtype)", compute_bytes(t.dtype), "B"}},
        "aten/src/ATen/autocast_mode.cpp cached_cast (cleared when the outermost autocast exits)");
}

// The step as a timeline (steady state; zero_grad(set_to_none=True) unless the tunable says otherwise):
// forward, loss, backward and the optimizer step.
void step_timeline(const Scenario& sc, const Params& p, const States& st, const EngineBytes& e, const Activations& x,
                   const Logits& logits, Breakdown& out) {
    const TrainingSettings& t = sc.training;
    Notes& why = out.assumptions;
    Explanation& ex = out.explain;
    bool paged = is_paged(t.optimizer);  // paged optimizers live in CUDA unified memory, outside PyTorch's allocator
    double opt_total = st.master + st.states;
    if (paged)
        out.outside_allocator =
            ex.rule("paged_optimizer_state", "paged optimizer state, in CUDA unified memory", opt_total,
                    "master weights + optimizer states, outside torch's allocator",
                    {{"master weights", st.master, "bytes"}, {"optimizer states", st.states, "bytes"}},
                    "bitsandbytes paged optimizers (cudaMallocManaged)");
    double step_temp = optimizer_step_temp(sc, p, st, ex);
    double grads = st.grads;
    // Gradients alive through the forward: accumulation keeps them between micro-batches (and so does
    // zero_grad without set_to_none). Optimizer in backward: a gradient lives from its accumulation until
    // its parameter has stepped, so at most about the largest tensor's gradient is alive.
    const bool accumulating = t.gradient_accumulation_steps > 1 || sc.tunable(Tunable::ZeroGradSetToNone) == 0;
    double accumulated = accumulating && !t.optimizer_in_backward ? grads : 0;
    double in_backward = 0;
    if (t.optimizer_in_backward) {
        double per_param = p.trainable > 0 ? grads / p.trainable : 0;
        in_backward = ex.rule("optimizer_in_backward_gradients", "the gradients alive with the optimizer in backward",
                              std::min(grads, per_param * (p.partial || p.adapters ? p.trainable : p.largest_tensor)),
                              "min(all gradients, the largest tensor's gradient; all of them for adapters)",
                              {{"gradients", grads, "bytes"}, {"largest tensor", p.largest_tensor, "elements"}},
                              "torchtune optimizer_in_bwd: each parameter steps in its gradient hook");
        why["optimizer_in_backward_gradient_bytes"] = in_backward;
    }
    // FSDP1 no_sync (litgpt): from the second micro-batch on, every unsharded gradient is live, through the
    // forward and the whole backward, in place of the sharded ones (zero_grad freed those at the last step).
    const double nosync = e.nosync_grads;
    if (nosync > 0) accumulated = in_backward = 0;
    const double grads_peak = nosync > 0 ? nosync : t.optimizer_in_backward ? in_backward : grads;
    const double pp_grads = nosync > 0 ? 0 : e.pp_unsharded_grads;
    // Each component of each phase is the sum of the figures named (Explanation::component).
    auto phase = [&](const char* name, std::initializer_list<Term> w, std::initializer_list<Term> g,
                     std::initializer_list<Term> o, std::initializer_list<Term> act, std::initializer_list<Term> logit,
                     std::initializer_list<Term> temp) {
        out.timeline.push_back({name,
                                {{Component::Weights, ex.component(name, "weights", w)},
                                 {Component::Gradients, ex.component(name, "gradients", g)},
                                 {Component::OptimizerStates, ex.component(name, "optimizer_states", o)},
                                 {Component::Activations, ex.component(name, "activations", act)},
                                 {Component::Logits, ex.component(name, "logits", logit)},
                                 {Component::Temporaries, ex.component(name, "temporaries", temp)}}});
    };
    const Term weights{"weights", st.weights}, acts{"activations_saved", x.acts};
    const Term head{"final_norm_and_head_input", x.head_input};
    const Term master{"master_weights", paged ? 0 : st.master}, states{"optimizer_states", paged ? 0 : st.states};
    const Term persistent{sc.engine.type == EngineType::Ddp ? "ddp_bucket_copy" : "zero_reduce_bucket",
                          e.temporaries_persistent};
    const Term gathered{"gathered_layers", e.gathered}, dequant{"qlora_dequantized_matrix", st.dequant_temp};
    const Term root{"fsdp_root_gathered", e.fsdp1_root};
    const Term retained{"previous_step_retained", retained_previous_step(sc, p, x, out)};
    const Term cast{"autocast_weight_cache", autocast_weight_cache(sc, p, ex)};
    const std::initializer_list<Term> forward_grads = {{"fsdp1_no_sync_gradients", nosync},
                                                       {"gradients", accumulated},
                                                       {"fsdp_pipeline_unsharded_gradients", pp_grads}};
    const double live_fwd = accumulated + pp_grads + nosync;
    phase("forward", {weights}, forward_grads, {master, states}, {acts, head}, {{"logits_forward", logits.forward}},
          {persistent, gathered, dequant, retained, root, cast});
    phase("loss", {weights}, forward_grads, {master, states}, {acts, head}, {{"logits_loss", logits.peak}},
          {persistent, gathered, root, cast});
    // Backward: activations are freed as gradients appear; the high point is at one of the ends,
    // plus the working set of the layer being differentiated (and its recomputation).
    double head_grads = std::min(grads_peak, grads * (p.shard.non_layer_params / std::max(1.0, p.P_gpu)));
    double start = x.acts + std::max(live_fwd, head_grads);
    double layers_alive = std::max(1.0, x.act_layers * x.in_flight);
    double end = grads_peak + pp_grads + e.root_grad_assembly + (x.acts / layers_alive);
    const std::initializer_list<Term> back_temp = {persistent, gathered,
                                                   dequant,    {"fsdp_unsharded_gradients", e.fsdp_unsharded_grads},
                                                   root,       {"fsdp_root_output_gradient", e.root_grads_backward}};
    const Term recompute{"recompute_one_layer", x.recompute}, work{"layer_gradient_work", x.layer_grad_work};
    if (start >= end) {
        const double at_start = ex.rule(
            "gradients_at_backward_start", "the gradients alive as backward starts", std::max(live_fwd, head_grads),
            "max(the gradients alive through the forward, the head's and embeddings' gradients)",
            {{"alive through the forward", live_fwd, "bytes"}, {"the head's and embeddings'", head_grads, "bytes"}},
            "autograd computes the head's gradients first");
        // Without checkpointing each linear saved its cast weight for its input gradient: all alive as backward
        // starts (autocast's cache is gone, the saved copies are not); with it, none outlive the forward.
        const Term saved_cast{"autocast_weight_cache",
                              t.activation_checkpointing == Checkpointing::None ? cast.bytes : 0.0};
        phase("backward", {weights}, {{"gradients_at_backward_start", at_start}}, {master, states},
              {acts, recompute, work}, {},
              {persistent,
               gathered,
               dequant,
               {"fsdp_unsharded_gradients", e.fsdp_unsharded_grads},
               root,
               {"fsdp_root_output_gradient", e.root_grads_backward},
               saved_cast});
    } else {
        const double one_layer = ex.product("activations_one_layer", "the last layer's saved tensors, as backward ends",
                                            {{"saved tensors of every layer in flight", x.acts, "bytes"},
                                             {"layers in flight", layers_alive, "layers", true}},
                                            "autograd frees each layer's saved tensors once its backward has run");
        phase("backward", {weights},
              {{"fsdp1_no_sync_gradients", nosync},
               {"optimizer_in_backward_gradients", nosync > 0 ? 0 : in_backward},
               {"gradients", nosync > 0 || t.optimizer_in_backward ? 0 : grads},
               {"fsdp_pipeline_unsharded_gradients", pp_grads},
               {"fsdp1_root_gradient_assembly", e.root_grad_assembly}},
              {master, states}, {{"activations_one_layer", one_layer}, recompute, work}, {}, back_temp);
    }
    if (!t.optimizer_in_backward)
        phase("optimizer_step", {weights}, {{"gradients", grads}}, {master, states}, {}, {},
              {persistent, gathered, {"optimizer_step_temporary", step_temp}});
    why["optimizer_step_temp_bytes"] = step_temp;
    why["autocast_weight_cache_bytes"] = cast.bytes;
    if (paged)
        out.warnings.push_back(
            "paged optimizer state (" + std::to_string(static_cast<long long>(opt_total / 1048576)) +
            " MiB) lives in CUDA unified memory: on the GPU, but not in torch's allocated/reserved figures");
}

// torchtune 0.1's QLoRA loads the checkpoint into NF4 parameters through its copy_ override
// (torchtune/utils/_register_nf4_dispatch_ops.py inplace_copy @fef3ed10d: to_nf4(src.to(device))), which quantizes
// each bf16 matrix on the GPU beside the weights already there. torchao's quantize_tensor_nearest (a7670be58) then
// holds, per element of the matrix: the bf16 source (2 B), its block-scaled copy (2 B), and the distance to each of
// the 16 NF4 codes in bf16, twice ((value - nf4) and its .abs(): 2 x 16 x 2 B). load_state_dict walks the modules
// in registration order, attention (q_proj first) before the MLP, so when the largest (MLP) matrix comes, the
// caching allocator holds q_proj's 68 B per element as cached segments too small for its two distance tensors,
// which get segments of their own; its 4 B per element fit in the cached ones. The recipe never empties the cache
// and its memory_stats_log resets the peaks only to the reserved bytes then held, so the reserved peak it reports
// is at least the load's.
void nf4_load_peak(const Scenario& sc, const Params& p, const States& st, Breakdown& out) {
    const ModelSpec& m = sc.model;
    const double largest = std::max(p.largest_layer_matrix, p.head_copy);
    const double q_proj =
        std::min(largest, static_cast<double>(m.hidden_size) * static_cast<double>(m.num_attention_heads * m.head_dim) /
                              static_cast<double>(sc.parallel.tp));
    const bool apart = q_proj < largest;  // the same shape reuses its own cached segments
    out.reserved_floor = out.explain.sum(
        "nf4_load_peak", "the peak while torchao quantized the checkpoint, kept cached",
        {{"the weights on the GPU", {{"weights", st.weights, "bytes"}}},
         {"the largest matrix's two distance tensors",
          {{"elements of the largest matrix", largest, "elements"},
           {"bytes per element: 16 codes x bf16 x 2 tensors", apart ? 64.0 : 68.0, "B"}}},
         {"q_proj's quantization, cached before it",
          {{"elements of q_proj", apart ? q_proj : 0.0, "elements"},
           {"bytes per element: source 2 + scaled 2 + 2 x 32", 68, "B"}}}},
        "torchao/dtypes/nf4tensor.py NF4Tensor.from_tensor, quantize_tensor_nearest @a7670be58; torchtune "
        "inplace_copy @fef3ed10d; CUDACachingAllocator keeps segments until empty_cache()");
    out.assumptions["nf4_load_peak_bytes"] = out.reserved_floor;
}

}  // namespace

// One optimizer step on the heaviest rank: which parameters train, their states by the precision
// recipe, sharded over data parallelism and offloaded as the engine does, the activations, the
// logits and loss, then the step's timeline.
Breakdown training_memory(const Scenario& sc) {
    Breakdown out(sc);
    Notes& why = out.assumptions;
    const Params p = trained_params(sc, why);
    States st = model_states(sc, p, out);
    out.trainable_params = p.trainable;
    const EngineBytes e = shard_over_data_parallel(sc, p, st, out);
    offload(sc, p, e, st, out);
    const Activations x = activations(sc, p, out);
    const Logits logits = logits_and_loss(sc, x.tokens, out);
    step_timeline(sc, p, st, e, x, logits, out);
    if (torchtune_01(sc.training) && sc.training.method == Method::Qlora) nf4_load_peak(sc, p, st, out);
    if (sc.training.dtype == Dtype::Fp8)
        out.warnings.push_back(
            "fp8 training is modelled with bf16 weights and activations (Transformer Engine keeps fp8 copies only "
            "transiently)");
    return out;
}

}  // namespace gpumem::detail
