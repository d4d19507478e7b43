// The memory model: per-GPU bytes over the phases of a step, for the heaviest rank.
#pragma once

#include <array>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <string>
#include <vector>

#include "model/model.h"
#include "scenario/scenario.h"

namespace gpumem::detail {

// The components of a phase's bytes, declared once: the enum and, in its order, the JSON names
// (display order). Their sum at the peak is the device total.
enum class Component { Weights, Gradients, OptimizerStates, Activations, Logits, KvCache, Temporaries, Overheads };
inline constexpr const char* kComponentNames[] = {"weights", "gradients", "optimizer_states", "activations",
                                                  "logits", "kv_cache", "temporaries", "overheads"};
constexpr std::size_t kComponents = sizeof(kComponentNames) / sizeof(kComponentNames[0]);
static_assert(static_cast<std::size_t>(Component::Overheads) + 1 == kComponents, "one name per component");
constexpr const char* name(Component c) { return kComponentNames[static_cast<std::size_t>(c)]; }

// Bytes by component at one phase: a fixed array (no allocation), written as the map it replaces:
// {{Component::Weights, w}, {Component::KvCache, kv}}. Only the components a phase names are listed in its output.
class ComponentBytes {
public:
    ComponentBytes() = default;
    ComponentBytes(std::initializer_list<std::pair<Component, double>> list) {
        for (const auto& [c, b] : list) set(c, b);
    }
    void set(Component c, double b) {
        value_[index(c)] = b;
        present_ |= 1u << index(c);
    }
    bool has(Component c) const { return present_ & (1u << index(c)); }
    double operator[](Component c) const { return value_[index(c)]; }
    // In the names' alphabetical order, as the std::map this replaced summed them (same rounding).
    double sum() const {
        static constexpr std::size_t order[kComponents] = {3, 1, 5, 4, 2, 7, 6, 0};
        double s = 0;
        for (std::size_t i : order) s += value_[i];
        return s;
    }

private:
    static constexpr std::size_t index(Component c) { return static_cast<std::size_t>(c); }
    std::array<double, kComponents> value_{};
    unsigned present_ = 0;
};

struct Phase {
    const char* name = "";                  // "forward", "loss", "backward", "optimizer_step", "prefill", ...
    ComponentBytes bytes;                   // allocated bytes by component at this phase's high point
    double allocated() const { return bytes.sum(); }
};

// The phases of a step, in order: a fixed-capacity list (the models have at most five phases).
class Timeline {
public:
    void push_back(const Phase& p) {
        if (size_ == items_.size()) throw std::logic_error("more than 8 phases in a timeline");
        items_[size_++] = p;
    }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const Phase& operator[](std::size_t i) const { return items_[i]; }
    const Phase* begin() const { return items_.data(); }
    const Phase* end() const { return items_.data() + size_; }

private:
    std::array<Phase, 8> items_{};
    std::size_t size_ = 0;
};

// Notes for people (assumptions, serving figures): a JSON object that is only built when the
// scenario asks for details (Scenario::details). The planner's fast path turns them off so that an
// evaluation allocates nothing; the figures are computed by the same code either way.
class Notes {
public:
    explicit Notes(bool on = true) : on_(on) {}
    class Entry {
    public:
        Entry(Notes& notes, const char* key) : notes_(notes), key_(key) {}
        template <typename T>
        void operator=(T&& value) {
            if (notes_.on_) notes_.doc_[key_] = std::forward<T>(value);
        }
        void operator=(std::initializer_list<std::pair<const char*, json>> object) {
            if (notes_.on_) notes_.doc_[key_] = make(object);
        }

    private:
        Notes& notes_;
        const char* key_;
    };
    Entry operator[](const char* key) { return Entry(*this, key); }
    // The whole document as one object: out.serving = {{"engine", "vllm"}, ...}.
    Notes& operator=(std::initializer_list<std::pair<const char*, json>> object) {
        if (on_) doc_ = make(object);
        return *this;
    }
    bool on() const { return on_; }
    const json& doc() const { return doc_; }  // null until written

private:
    static json make(std::initializer_list<std::pair<const char*, json>> object) {
        json o = json::object();
        for (const auto& [k, v] : object) o[k] = v;
        return o;
    }
    bool on_;
    json doc_;
};

// Warnings for people; dropped without a copy when the scenario asks for no details.
class Messages {
public:
    explicit Messages(bool on = true) : on_(on) {}
    void push_back(const char* text) {
        if (on_) list_.emplace_back(text);
    }
    void push_back(std::string text) {
        if (on_) list_.push_back(std::move(text));
    }
    auto begin() const { return list_.begin(); }
    auto end() const { return list_.end(); }
    bool empty() const { return list_.empty(); }

private:
    bool on_;
    std::vector<std::string> list_;
};

struct Breakdown {
    Breakdown() = default;
    explicit Breakdown(const Scenario& s) : assumptions(s.details), serving(s.details), warnings(s.details) {}
    Timeline timeline;
    double outside_allocator = 0;           // on the GPU but not in PyTorch's allocator (paged optimizer state)
    double host_bytes = 0;                  // CPU RAM for offloaded state
    double nvme_bytes = 0;                  // NVMe for offloaded state
    Notes assumptions;                      // the figures behind each component, for people
    Notes serving;                          // serving capacity (engines that preallocate), or null
    double claimed = 0;                     // an engine that claims a fixed share of the card (vLLM): the device total
    bool engine_fits = true;                // false when the engine cannot hold the requested load
    double trainable_params = 0;            // training: parameters this GPU trains, before data-parallel sharding
    Messages warnings;
};

// Weights of one GPU's shard: the heaviest pipeline stage, tensor- and expert-parallel splits applied.
struct Shard {
    double layers = 0;           // decoder layers on the heaviest stage
    double layer_params = 0;     // parameters of one layer on one GPU
    double non_layer_params = 0; // embeddings / head / final norm on the heaviest stage, one GPU
    double linear_params = 0;    // of those, in the layers' linear (quantizable) matrices, routers excepted
    double expert_params = 0;    // of those, inside routed experts
    double attention_linear_params = 0;  // of those, attention's q/k/v/o matrices
    double largest_layer_matrix = 0;     // the largest weight matrix in a layer, one GPU's part
    double largest_tensor = 0;           // the largest tensor of the model, one GPU's part
    double scale = 1;            // a model known only by size: its declared total over its guessed shape's (declared_scale)
    double total() const { return layers * layer_params + non_layer_params; }
    // The parameters one GPU holds: total(), scaled to the declared size for a model known only by it.
    double params() const { return total() * scale; }
};
Shard shard_of(const ModelSpec& model, std::uint64_t tp, std::uint64_t pp, std::uint64_t ep);
Shard shard_of(const ModelSpec& model, const std::vector<Tensor>& tensors, std::uint64_t tp, std::uint64_t pp, std::uint64_t ep);

// layer_count() for each Layers kind, counted once (it walks the per-layer MoE flags). Every kind
// is filled in a loop, so a kind added to Layers is counted without touching this.
struct LayerCounts {
    explicit LayerCounts(const ModelSpec& m) {
        for (std::size_t i = 0; i < kLayerKinds; ++i) n[i] = layer_count(m, static_cast<Layers>(i));
    }
    std::uint64_t operator[](Layers l) const { return n.at(static_cast<std::size_t>(l)); }
    std::array<std::uint64_t, kLayerKinds> n{};
};
// Two tensors whose optimizer state and shard share are the same (names aside).
inline bool same_shape(const Tensor& a, const Tensor& b) {
    return a.rows == b.rows && a.cols == b.cols && a.layers == b.layers && a.tp_sharded == b.tp_sharded && a.expert == b.expert;
}

// What a scenario's model gives every evaluation, computed once per model and kept with the
// scenario (Scenario::cache): its tensor list and, per layout, its shard and optimizer-state
// totals. The figures are the same as computing them afresh (memoised, not approximated).
const std::vector<Tensor>& tensors_of(const Scenario& s);
Shard shard_of(const Scenario& s, std::uint64_t tp, std::uint64_t pp, std::uint64_t ep);
// {elements, optimizer state bytes} of the whole model sharded by tp (and experts by ep), as
// `compute` returns them; memoised by (tp, ep, optimizer, state dtype).
template <typename Fn>
std::pair<double, double> optimizer_totals(const Scenario& s, std::uint64_t tp, std::uint64_t ep, double state_dtype, Fn compute);

struct ModelCache {
    std::array<std::uint64_t, 13> fingerprint{};  // the model's shape it was built for
    std::vector<Tensor> tensors;
    std::unordered_map<std::uint64_t, Shard> shards;  // by packed (tp, pp, ep)
    std::optional<Optimizer> optimizer;                // the optimizer and state dtype `states` is for
    double state_dtype = -1;
    std::unordered_map<std::uint64_t, std::pair<double, double>> states;  // by packed (tp, ep)
};
// The scenario's cache, built on first use (and rebuilt when a copy's model no longer matches it).
ModelCache& cache_of(const Scenario& s);
// Layout sizes are at most 2^20 (scenario.cpp), so three fit in 63 bits.
inline std::uint64_t pack_layout(std::uint64_t a, std::uint64_t b, std::uint64_t c) { return (a << 42) | (b << 21) | c; }

template <typename Fn>
std::pair<double, double> optimizer_totals(const Scenario& s, std::uint64_t tp, std::uint64_t ep, double state_dtype, Fn compute) {
    ModelCache& c = cache_of(s);
    if (c.optimizer != s.training.optimizer || c.state_dtype != state_dtype) {
        c.states.clear();
        c.optimizer = s.training.optimizer;
        c.state_dtype = state_dtype;
    }
    auto key = pack_layout(tp, 0, ep);
    auto it = c.states.find(key);
    if (it != c.states.end()) return it->second;
    return c.states[key] = compute();
}

Breakdown training_memory(const Scenario& s);
Breakdown inference_memory(const Scenario& s);

// One evaluation: the step's peak and the three figures (allocated, reserved, device total).
struct Figures {
    Breakdown breakdown;
    std::size_t peak = 0;  // index of the peak phase in breakdown.timeline
    double allocated = 0, reserved = 0, device = 0, slack = 0, context = 0;
    bool fits = false;
};
// What estimate() computes for a read scenario; with s.details false it allocates nothing.
Figures evaluate(const Scenario& s);
// The whole estimate result document for a read scenario (details on), as estimate() returns it.
json estimate_result(const Scenario& s);

}  // namespace gpumem::detail
