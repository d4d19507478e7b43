// Why each figure is what it is: the memory model records, as it computes, each figure's factors
// with this scenario's numbers, the assumption behind it and its source, and each phase's
// components as sums of those figures. The recording functions return the value they record, and
// the code uses that value, so an explanation is the computation itself and cannot drift from it.
// With the scenario's details off (the planner's fast path) nothing is recorded or allocated.
#pragma once

#include <initializer_list>

#include "scenario/scenario.h"

namespace gpumem::detail {

// One factor of a figure: its name, its value and its unit ("params", "tokens", "layers", "B" per
// element, "bytes", "x" for a plain number); `divides` makes it a divisor.
struct Factor {
    const char* name;
    double value;
    const char* unit = "x";
    bool divides = false;
};

// A product of factors, left to right.
inline double product_of(std::initializer_list<Factor> factors) {
    double v = 1;
    bool first = true;
    for (const Factor& f : factors) {
        if (first && !f.divides) v = f.value;
        else v = f.divides ? v / f.value : v * f.value;
        first = false;
    }
    return v;
}

// One part of a sum: a name and its factors (its value is their product).
struct Part {
    const char* name;
    std::initializer_list<Factor> factors;
};

// One term of a phase's component: the figure it is (a recorded key) and its bytes.
struct Term {
    const char* key;
    double bytes;
};

class Explanation {
public:
    explicit Explanation(bool on = true) : on_(on) {}
    bool on() const { return on_; }

    // The calls compute inline and record out of line only when on: the planner's fast path pays
    // for the arithmetic alone.

    // A figure that is the product of its factors: returns the product.
    double product(const char* key, const char* what, std::initializer_list<Factor> factors, const char* source = "") {
        const double v = product_of(factors);
        if (on_) record_product(key, what, factors, source, v);
        return v;
    }
    // A figure that is the sum of its parts, each a product: returns the sum.
    double sum(const char* key, const char* what, std::initializer_list<Part> parts, const char* source = "") {
        double v = 0;
        for (const Part& p : parts) v += product_of(p.factors);
        if (on_) record_sum(key, what, parts, source, v);
        return v;
    }
    // A recorded figure times one more factor (a share kept after sharding, a count of copies):
    // returns value x factor (or value / factor when it divides) and appends the factor.
    double scale(const char* key, double value, const Factor& factor) {
        const double v = factor.divides ? value / factor.value : value * factor.value;
        if (on_) record_scale(key, factor, v);
        return v;
    }
    // A figure the code computes otherwise (a max, a remainder, a budget): its value, its rule in
    // words and the inputs the rule reads. Returns the value.
    double rule(const char* key, const char* what, double value, const char* formula,
                std::initializer_list<Factor> inputs, const char* source = "") {
        if (on_) record_rule(key, what, value, formula, inputs, source);
        return value;
    }
    // The unit of a recorded figure that is not bytes ("B": bytes per element or per token).
    void set_unit(const char* key, const char* unit);
    // The bytes of `component` at `phase` as the sum of its terms (left to right): returns the sum.
    double component(const char* phase, const char* component, std::initializer_list<Term> terms) {
        double v = 0;
        for (const Term& t : terms) v += t.bytes;
        if (on_) record_component(phase, component, terms);
        return v;
    }

    // {"figures": {key: {...}}, "phases": {phase: {component: [{"figure", "bytes"}]}}}; null when off.
    const json& doc() const { return doc_; }

private:
    json& figure(const char* key, const char* what, const char* kind, double value, const char* source);
    void record_product(const char* key, const char* what, std::initializer_list<Factor> factors, const char* source,
                        double value);
    void record_sum(const char* key, const char* what, std::initializer_list<Part> parts, const char* source,
                    double value);
    void record_scale(const char* key, const Factor& factor, double value);
    void record_rule(const char* key, const char* what, double value, const char* formula,
                     std::initializer_list<Factor> inputs, const char* source);
    void record_component(const char* phase, const char* component, std::initializer_list<Term> terms);
    bool on_;
    json doc_;
};

// A factor's value as people read it: counts with thousands separators, element sizes in bytes,
// sizes in GiB (with the bytes), shares as fractions.
std::string factor_text(double value, const std::string& unit);

}  // namespace gpumem::detail
