#include "cli/explain_text.h"

#include <set>
#include <sstream>

namespace gpumem::cli {

using nlohmann::json;

namespace {

constexpr const char* kComponents[] = {"weights", "gradients", "optimizer_states", "activations",
                                       "logits",  "kv_cache",  "temporaries",      "overheads"};

std::string gib(double bytes) {
    char text[32];
    if (bytes > 0 && bytes < 0.1 * 1073741824.0) std::snprintf(text, sizeof text, "%.1f MiB", bytes / 1048576.0);
    else std::snprintf(text, sizeof text, "%.2f GiB", bytes / 1073741824.0);
    return text;
}

std::string text_of(const json& v, const char* key) {
    return v.contains(key) && v[key].is_string() ? v[key].get<std::string>() : std::string();
}

// One figure: what it is, its rule and the numbers, its parts or inputs, its source.
void figure_text(std::ostringstream& out, const std::string& key, const json& f, const std::string& indent) {
    out << indent << key << " = " << text_of(f, "text") << ": " << text_of(f, "what") << "\n";
    const std::string kind = text_of(f, "kind");
    if (kind != "sum") out << indent << "    " << text_of(f, "formula") << "\n";
    if (kind == "product") {
        out << indent << "    = " << text_of(f, "with") << "\n";
    } else if (kind == "sum") {  // each part: its name, and its factors when it has more than one
        for (const json& p : f["parts"]) {
            out << indent << "    + " << text_of(p, "name") << ": " << text_of(p, "with");
            if (p["factors"].size() > 1) {
                const double v = p["value"].get<double>();
                out << " = " << (text_of(f, "unit") == "bytes" ? gib(v) : std::to_string(std::llround(v)) + " B");
            }
            out << "\n";
        }
    } else {
        for (const json& i : f.value("inputs", json::array()))
            out << indent << "    " << text_of(i, "name") << " = " << text_of(i, "text") << "\n";
    }
    for (const json& s : f.value("scaled_by", json::array()))
        out << indent << "    " << (s.value("divides", false) ? "÷ " : "× ") << text_of(s, "name") << " = "
            << text_of(s, "text") << "\n";
    if (f.contains("source")) out << indent << "    source: " << text_of(f, "source") << "\n";
}

}  // namespace

std::string explain_text(const json& result) {
    if (!result.contains("explain") || !result["explain"].is_object()) return "";
    const json& e = result["explain"];
    const json& figures = e["figures"];
    const json& components = result["per_gpu"]["components"];
    std::ostringstream out;
    out << "\nwhy each figure is what it is (the peak: " << text_of(e, "peak_phase") << ")\n";
    std::set<std::string> shown;
    for (const char* c : kComponents) {
        const double bytes = components.value(c, 0.0);
        if (bytes == 0 || !e["peak"].contains(c)) continue;
        const json& terms = e["peak"][c];
        out << "\n" << c << " " << gib(bytes) << " =";
        for (std::size_t i = 0; i < terms.size(); ++i)
            out << (i ? " +" : "") << " " << terms[i]["figure"].get<std::string>();
        out << "\n";
        for (const json& t : terms) {
            const std::string key = t["figure"];
            if (shown.insert(key).second && figures.contains(key)) figure_text(out, key, figures[key], "  ");
        }
    }
    bool header = false;
    for (const auto& [key, f] : figures.items()) {
        if (shown.count(key)) continue;
        if (!header) out << "\nthe figures these rest on, and those of the other phases\n";
        header = true;
        figure_text(out, key, f, "  ");
    }
    out << "\neach phase, by component (GiB) and the figures it adds up\n";
    for (const json& phase : result["per_gpu"]["timeline"]) {
        const std::string name = phase["phase"];
        out << "  " << name << ": " << gib(phase["allocated_bytes"].get<double>()) << " allocated\n";
        for (const char* c : kComponents) {
            if (!e["phases"][name].contains(c) || e["phases"][name][c].empty()) continue;
            const json& terms = e["phases"][name][c];
            out << "    " << c << ":";
            for (std::size_t i = 0; i < terms.size(); ++i)
                out << (i ? " +" : "") << " " << terms[i]["figure"].get<std::string>() << " "
                    << gib(terms[i]["bytes"].get<double>());
            out << "\n";
        }
    }
    return out.str();
}

}  // namespace gpumem::cli
