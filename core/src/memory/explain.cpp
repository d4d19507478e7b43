// The explanation recorder (explain.h): figures with their factors, and phases as sums of figures.

#include "memory/explain.h"

#include <cmath>
#include <cstdio>

namespace gpumem::detail {

namespace {

json factors_json(std::initializer_list<Factor> factors) {
    json out = json::array();
    for (const Factor& f : factors) {
        json one = {{"name", f.name}, {"value", f.value}, {"unit", f.unit}, {"text", factor_text(f.value, f.unit)}};
        if (f.divides) one["divides"] = true;
        out.push_back(one);
    }
    return out;
}

// "name × name ÷ name" and, with the numbers, "8,030,261,248 params × 2 B ÷ 8".
void product_text(std::initializer_list<Factor> factors, std::string& names, std::string& numbers) {
    bool first = true;
    for (const Factor& f : factors) {
        const char* op = first ? "" : f.divides ? " ÷ " : " × ";
        names += std::string(first && f.divides ? "1 ÷ " : op) + f.name;
        numbers += std::string(first && f.divides ? "1 ÷ " : op) + factor_text(f.value, f.unit);
        first = false;
    }
}

bool count_unit(const std::string& unit) {
    return unit == "B" || unit == "params" || unit == "tokens" || unit == "layers" || unit == "elements" ||
           unit == "sequences" || unit == "blocks" || unit == "x" || unit == "heads" || unit == "positions";
}

}  // namespace

std::string factor_text(double value, const std::string& unit) {
    char text[64];
    if (!std::isfinite(value)) return "not a number";
    if (unit == "bytes") {
        const double a = std::fabs(value);
        if (a >= 0.1 * 1073741824.0) std::snprintf(text, sizeof text, "%.2f GiB", value / 1073741824.0);
        else if (a >= 1048576.0) std::snprintf(text, sizeof text, "%.1f MiB", value / 1048576.0);
        else std::snprintf(text, sizeof text, "%.0f bytes", value);
        return text;
    }
    if (unit == "B" && (value != std::floor(value) || std::fabs(value) >= 1e15)) {
        std::snprintf(text, sizeof text, "%.6g B", value);
        return text;
    }
    if (unit == "share") {
        const double n = value > 0 ? 1 / value : 0;
        if (n >= 1 && std::fabs(n - std::round(n)) < 1e-9 * n) std::snprintf(text, sizeof text, "1/%.0f", n);
        else std::snprintf(text, sizeof text, "%.6g", value);
        return text;
    }
    if (unit == "GiB") {
        std::snprintf(text, sizeof text, "%.6g GiB", value);
        return text;
    }
    if (count_unit(unit) && value == std::floor(value) && std::fabs(value) < 1e15) {
        std::snprintf(text, sizeof text, "%.0f", std::fabs(value));
        std::string digits = text, grouped;
        for (std::size_t i = 0; i < digits.size(); ++i) {
            if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
            grouped += digits[i];
        }
        std::string word = unit;  // "1 layer", "2 layers"
        if (value == 1 && word.size() > 1 && word.back() == 's') word.pop_back();
        return (value < 0 ? "-" : "") + grouped + (unit == "x" ? "" : " " + word);
    }
    std::snprintf(text, sizeof text, "%.6g", value);
    return std::string(text) + (unit == "x" || unit[0] == '\0' ? "" : " " + unit);
}

json& Explanation::figure(const char* key, const char* what, const char* kind, double value, const char* source) {
    json& f = doc_["figures"][key];
    f = {{"what", what}, {"kind", kind}, {"value", value}, {"unit", "bytes"}, {"text", factor_text(value, "bytes")}};
    if (source != nullptr && source[0] != '\0') f["source"] = source;
    return f;
}

void Explanation::record_product(const char* key, const char* what, std::initializer_list<Factor> factors,
                                 const char* source, double value) {
    json& f = figure(key, what, "product", value, source);
    std::string names, numbers;
    product_text(factors, names, numbers);
    f["formula"] = names;
    f["with"] = numbers;
    f["factors"] = factors_json(factors);
}

void Explanation::record_sum(const char* key, const char* what, std::initializer_list<Part> parts, const char* source,
                             double value) {
    json& f = figure(key, what, "sum", value, source);
    json list = json::array();
    std::string formula;
    for (const Part& p : parts) {
        const double pv = product_of(p.factors);
        if (pv == 0) continue;  // a part this scenario does not have
        std::string names, with;
        product_text(p.factors, names, with);
        list.push_back({{"name", p.name},
                        {"value", pv},
                        {"formula", names},
                        {"with", with},
                        {"factors", factors_json(p.factors)}});
        formula += (formula.empty() ? "" : " + ") + std::string(p.name);
    }
    f["formula"] = formula;
    f["parts"] = list;
}

// Nothing recorded under that key (a figure this setup does not have, e.g. adapters' master weights):
// the value alone; a term naming it with bytes is reported by the tests.
void Explanation::record_scale(const char* key, const Factor& factor, double value) {
    if (!doc_.contains("figures") || !doc_["figures"].contains(key)) return;
    json& f = doc_["figures"][key];
    f["value"] = value;
    f["text"] = factor_text(value, f.value("unit", "bytes"));
    const char* op = factor.divides ? " ÷ " : " × ";
    const std::string name = factor.name, number = factor_text(factor.value, factor.unit);
    if (f["kind"] == "product") {
        f["formula"] = f["formula"].get<std::string>() + op + name;
        f["with"] = f["with"].get<std::string>() + op + number;
        f["factors"].push_back(factors_json({factor})[0]);
    } else {  // a sum or a rule, then scaled: (the sum) × factor
        f["scaled_by"].push_back(factors_json({factor})[0]);
        f["formula"] = "(" + f["formula"].get<std::string>() + ")" + op + name;
    }
}

void Explanation::record_rule(const char* key, const char* what, double value, const char* formula,
                              std::initializer_list<Factor> inputs, const char* source) {
    json& f = figure(key, what, "rule", value, source);
    f["formula"] = formula;
    f["inputs"] = factors_json(inputs);
}

void Explanation::set_unit(const char* key, const char* unit) {
    if (!on_ || !doc_["figures"].contains(key)) return;
    json& f = doc_["figures"][key];
    f["unit"] = unit;
    f["text"] = factor_text(f["value"].get<double>(), unit);
}

void Explanation::record_component(const char* phase, const char* component, std::initializer_list<Term> terms) {
    json list = json::array();
    for (const Term& t : terms)  // a figure not alive at this phase (0 bytes here) is left out
        if (t.bytes != 0) list.push_back({{"figure", t.key}, {"bytes", t.bytes}});
    doc_["phases"][phase][component] = list;
}

}  // namespace gpumem::detail
