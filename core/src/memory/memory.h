// The memory model: per-GPU bytes over the phases of a step, for the heaviest rank.
#pragma once

#include <array>
#include <initializer_list>
#include <stdexcept>
#include <utility>
#include <string>
#include <vector>

#include "memory/explain.h"
#include "model/model.h"
#include "scenario/scenario.h"

namespace gpumem::detail {

// The components of a phase's bytes, declared once: the enum and, in its order, the JSON names
// (display order). Their sum at the peak is the device total.
enum class Component { Weights, Gradients, OptimizerStates, Activations, Logits, KvCache, Temporaries, Overheads };
inline constexpr const char* kComponentNames[] = {"weights", "gradients", "optimizer_states", "activations",
                                                  "logits",  "kv_cache",  "temporaries",      "overheads"};
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
    const char* name = "";  // "forward", "loss", "backward", "optimizer_step", "prefill", ...
    ComponentBytes bytes;   // allocated bytes by component at this phase's high point
    double allocated() const { return bytes.sum(); }
};

// The phases of a step, in order: a fixed-capacity list (the models have at most four phases).
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
    explicit Breakdown(const Scenario& s)
        : assumptions(s.details), serving(s.details), warnings(s.details), explain(s.details && s.explain) {}
    Timeline timeline;
    double outside_allocator = 0;  // on the GPU but not in PyTorch's allocator (paged optimizer state)
    double host_bytes = 0;         // CPU RAM for offloaded state
    double nvme_bytes = 0;         // NVMe for offloaded state
    Notes assumptions;             // the figures behind each component, for people
    Notes serving;                 // serving capacity (engines that preallocate), or null
    double claimed = 0;            // an engine that claims a fixed share of the card (vLLM): the device total
    bool engine_fits = true;       // false when the engine cannot hold the requested load
    double trainable_params = 0;   // training: parameters this GPU trains, before data-parallel sharding
    // Reserved bytes the caching allocator still holds from before the step (a load-time transient it cached,
    // as torchtune 0.1's NF4 quantization): reserved is at least this even where the step allocates less.
    double reserved_floor = 0;
    Messages warnings;
    Explanation explain;  // each figure's factors, and each phase's components as sums of figures
};

// A phase whose components are each the sum of the figures named: {{Component::Weights, {{"weights", w}}}, ...}.
struct ComponentTerms {
    Component component;
    std::initializer_list<Term> terms;
};
inline void push_phase(Breakdown& out, const char* phase, std::initializer_list<ComponentTerms> components) {
    Phase p;
    p.name = phase;
    for (const ComponentTerms& c : components)
        p.bytes.set(c.component, out.explain.component(phase, name(c.component), c.terms));
    out.timeline.push_back(p);
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
// The memory part of the estimate result document for a read scenario (details on); `figures`, when
// given, receives the evaluation it rests on. estimate() (api/estimate.cpp) adds the layers above.
json estimate_result(const Scenario& s, Figures* figures = nullptr);

}  // namespace gpumem::detail
