// A layout set on a read scenario (scenario/layout.h).

#include "scenario/layout.h"

#include <algorithm>

namespace gpumem::detail {

void apply_layout(Scenario& s, const Layout& l) {
    s.parallel.dp = l.dp;
    s.parallel.tp = l.tp;
    s.parallel.pp = l.pp;
    s.parallel.cp = l.cp;
    s.parallel.ep = l.ep;
    s.parallel.sequence_parallel = l.sequence_parallel;
    s.hardware.num_gpus = s.parallel.world();
    if (s.mode == Mode::Training) {
        s.training.batch_size = l.batch_size;
        s.training.gradient_accumulation_steps = l.grad_accum;
        if (l.seq_len) s.training.seq_len = l.seq_len;
        if (l.checkpointing) s.training.activation_checkpointing = *l.checkpointing;
        // As the reader resolves it (scenario.cpp): the step's micro-batches, at least one per stage.
        if (!s.parallel.pipeline_microbatches_given) s.parallel.pipeline_microbatches = std::max(l.grad_accum, l.pp);
    } else {
        s.inference.batch_size = l.batch_size;
        if (l.seq_len) s.inference.context_len = l.seq_len;
    }
}

std::string layout_problem(const ModelSpec& m, const Layout& l, std::uint64_t seq_len) {
    if (m.num_attention_heads && m.num_attention_heads % l.tp)
        return "tensor_parallel_size must divide the attention heads";
    if (m.num_key_value_heads && l.tp > 1 && m.num_key_value_heads % l.tp && l.tp % m.num_key_value_heads)
        return "tensor_parallel_size must divide the kv heads or be a multiple of them";
    if (m.num_layers && m.num_layers % l.pp) return "pipeline_parallel_size must divide the layers";
    if (l.ep > 1 && (m.num_experts == 0 || m.num_experts % l.ep)) return "expert_parallel_size must divide the experts";
    if (l.ep > 1 && (l.dp * l.cp) % l.ep) return "expert_parallel_size must divide data x context parallel sizes";
    if (l.cp > 1 && seq_len % l.cp) return "context_parallel_size must divide the sequence length";
    return "";
}

Layout layout_of(const Scenario& s) {
    Layout l;
    l.dp = s.parallel.dp, l.tp = s.parallel.tp, l.pp = s.parallel.pp, l.cp = s.parallel.cp, l.ep = s.parallel.ep;
    l.sequence_parallel = s.parallel.sequence_parallel;
    if (s.mode == Mode::Training) {
        l.batch_size = s.training.batch_size;
        l.grad_accum = s.training.gradient_accumulation_steps;
        l.seq_len = s.training.seq_len;
    } else {
        l.batch_size = s.inference.batch_size;
        l.seq_len = s.inference.context_len;
    }
    return l;
}

}  // namespace gpumem::detail
