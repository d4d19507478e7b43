// Peak memory against one size (gpumem.h, sweep() and sweep_svg()): the scenario estimated at a
// range of values of one field, the card's capacity, and the max-fit point, as data and as an SVG
// picture. Every point is an estimate(); the boundary is maxfit()'s.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gpumem/gpumem.h"

namespace gpumem {

namespace {

using json = nlohmann::json;

constexpr double kBytesPerGiB = 1073741824.0;

// The fields a sweep can run over, by mode.
struct Axis {
    const char* field;
    const char* label;
    bool training;
};
const Axis kAxes[] = {
    {"training.seq_len", "sequence length (tokens)", true},
    {"training.batch_size", "micro-batch per GPU", true},
    {"inference.context_len", "context (tokens)", false},
    {"inference.batch_size", "concurrent sequences", false},
};

json refuse(const std::string& field, const std::string& problem) {
    return {{"ok", false},
            {"errors", {{{"field", field}, {"problem", problem}, {"value", ""}, {"message", field + ": " + problem}}}}};
}

void set_field(json& s, const std::string& field, std::uint64_t value) {
    const std::size_t dot = field.find('.');
    json& section = s[field.substr(0, dot)];
    if (!section.is_object()) section = json::object();
    section[field.substr(dot + 1)] = value;
}

// Powers of two from 1 up to past `top` (and `top` itself), at most 24 points.
std::vector<std::uint64_t> sweep_values(std::uint64_t top) {
    std::vector<std::uint64_t> v;
    for (std::uint64_t x = 1; x < top && v.size() < 23; x *= 2) v.push_back(x);
    v.push_back(top);
    return v;
}

std::string number(double v, int decimals = 1) {
    char text[32];
    std::snprintf(text, sizeof text, "%.*f", decimals, v);
    return text;
}

std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '&') out += "&amp;";
        else if (c == '"') out += "&quot;";
        else out += c;
    }
    return out;
}

}  // namespace

json sweep(const json& request) {
    if (!request.is_object() || !request.contains("scenario") || !request["scenario"].is_object())
        return refuse("scenario", "is required: the scenario to sweep (an object)");
    const std::string field = request.value("field", std::string());
    const json base = estimate(request["scenario"]);
    if (!base.value("ok", false)) return base;
    const bool training = base["scenario"]["mode"] == "training";
    const Axis* axis = nullptr;
    std::string allowed;
    for (const Axis& a : kAxes) {
        if (a.training != training) continue;
        allowed += (allowed.empty() ? "" : ", ") + std::string(a.field);
        if (field == a.field) axis = &a;
    }
    if (!axis)
        return refuse("field",
                      "must be one of " + allowed + " for a " + (training ? "training" : "inference") + " scenario");

    // The range: up to twice the larger of the scenario's value and the max-fit value.
    const std::size_t dot = field.find('.');
    const std::uint64_t current = base["scenario"][field.substr(0, dot)][field.substr(dot + 1)];
    std::uint64_t boundary = 0;
    const json fit = maxfit(request["scenario"]);
    if (fit.value("ok", false))
        for (const json& s : fit["solvers"])
            if (s["field"] == field) boundary = s["value"];
    std::uint64_t top = 2;  // a power of two: the default range ends on a tick
    while (top < std::max<std::uint64_t>({current, boundary, 1}) * 2) top *= 2;
    if (request.contains("max")) {
        const json& m = request["max"];
        if (!m.is_number_unsigned() || m.get<std::uint64_t>() < 2 || m.get<std::uint64_t>() > (std::uint64_t{1} << 40))
            return refuse("max", "must be an integer from 2 to 2^40: the largest value of the sweep");
        top = m.get<std::uint64_t>();
    }

    json points = json::array();
    for (std::uint64_t v : sweep_values(top)) {
        json s = request["scenario"];
        set_field(s, field, v);
        json e = estimate(s);
        if (!e.value("ok", false)) break;  // past the field's limit: the curve stops there
        points.push_back(
            {{"value", v}, {"device_total_bytes", e["per_gpu"]["device_total_bytes"]}, {"fits", e["fits"]}});
    }
    return {{"ok", true},
            {"field", field},
            {"label", axis->label},
            {"capacity_bytes", base["per_gpu"]["capacity_bytes"]},
            {"current", {{"value", current}, {"device_total_bytes", base["per_gpu"]["device_total_bytes"]}}},
            {"max_fit", boundary},
            {"points", points},
            {"model", base["model"].value("name", std::string())},
            {"gpu", base["scenario"]["hardware"]["gpu"]}};
}

std::string sweep_svg(const json& s) {
    // A 640 x 360 chart: log2 x axis, linear GiB y axis from 0, the capacity as a dashed line, the
    // points as a polyline (green where they fit, red where not), the scenario's own value and the
    // max-fit value marked.
    const double W = 640, H = 360, left = 64, right = 24, top = 36, bottom = 52;
    const json& pts = s["points"];
    if (pts.empty()) return "";
    const double cap = s["capacity_bytes"].get<double>() / kBytesPerGiB;
    double ymax = cap;
    for (const json& p : pts) ymax = std::max(ymax, p["device_total_bytes"].get<double>() / kBytesPerGiB);
    ymax *= 1.08;
    const double x0 = std::log2(pts.front()["value"].get<double>()), x1 = std::log2(pts.back()["value"].get<double>());
    auto X = [&](double v) { return left + (x1 > x0 ? (std::log2(v) - x0) / (x1 - x0) : 0.5) * (W - left - right); };
    auto Y = [&](double gib) { return H - bottom - gib / ymax * (H - top - bottom); };

    std::string o =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"360\" viewBox=\"0 0 640 360\" "
        "font-family=\"sans-serif\" font-size=\"12\">\n";
    o += "<rect width=\"640\" height=\"360\" fill=\"white\"/>\n";
    std::string model = s.value("model", std::string());
    if (model.size() > 48) model = model.substr(0, 47) + "...";
    o += "<text x=\"" + number(left, 0) + "\" y=\"22\" font-size=\"13\">" + escape(model) + " on " +
         escape(s.value("gpu", std::string())) + ": peak per GPU</text>\n";
    // Axes and grid.
    o += "<line x1=\"" + number(left, 0) + "\" y1=\"" + number(H - bottom, 0) + "\" x2=\"" + number(W - right, 0) +
         "\" y2=\"" + number(H - bottom, 0) + "\" stroke=\"black\"/>\n";
    o += "<line x1=\"" + number(left, 0) + "\" y1=\"" + number(top, 0) + "\" x2=\"" + number(left, 0) + "\" y2=\"" +
         number(H - bottom, 0) + "\" stroke=\"black\"/>\n";
    const double step = ymax > 400 ? 100 : ymax > 160 ? 40 : ymax > 80 ? 20 : ymax > 40 ? 10 : ymax > 16 ? 4 : 2;
    for (double g = 0; g <= ymax; g += step)
        o += "<text x=\"" + number(left - 6, 0) + "\" y=\"" + number(Y(g) + 4) + "\" text-anchor=\"end\">" +
             number(g, 0) + "</text><line x1=\"" + number(left, 0) + "\" y1=\"" + number(Y(g)) + "\" x2=\"" +
             number(W - right, 0) + "\" y2=\"" + number(Y(g)) + "\" stroke=\"#ddd\"/>\n";
    // Tick labels, left to right, each at least 40 px from the last (the last value always shown).
    std::vector<double> ticks;
    for (const json& p : pts) ticks.push_back(p["value"].get<double>());
    double shown = -1e9;
    for (std::size_t i = 0; i < ticks.size(); ++i) {
        const bool last = i + 1 == ticks.size();
        if (!last && (X(ticks[i]) - shown < 40 || X(ticks.back()) - X(ticks[i]) < 40)) continue;
        shown = X(ticks[i]);
        o += "<text x=\"" + number(X(ticks[i])) + "\" y=\"" + number(H - bottom + 16, 0) +
             "\" text-anchor=\"middle\">" + number(ticks[i], 0) + "</text>\n";
    }
    o += "<text x=\"" + number((left + W - right) / 2, 0) + "\" y=\"" + number(H - 12, 0) +
         "\" text-anchor=\"middle\">" + escape(s["label"].get<std::string>()) + "</text>\n";
    o += "<text x=\"16\" y=\"" + number((top + H - bottom) / 2, 0) + "\" transform=\"rotate(-90 16 " +
         number((top + H - bottom) / 2, 0) + ")\" text-anchor=\"middle\">GiB per GPU</text>\n";
    // Capacity.
    o += "<line class=\"capacity\" x1=\"" + number(left, 0) + "\" y1=\"" + number(Y(cap)) + "\" x2=\"" +
         number(W - right, 0) + "\" y2=\"" + number(Y(cap)) + "\" stroke=\"#c62828\" stroke-dasharray=\"6 4\"/>\n";
    o += "<text x=\"" + number(left + 6, 0) + "\" y=\"" + number(Y(cap) - 6) + "\" fill=\"#c62828\">" + "capacity " +
         number(cap) + " GiB</text>\n";
    // The curve and its points.
    std::string line;
    for (const json& p : pts)
        line += number(X(p["value"].get<double>())) + "," +
                number(Y(p["device_total_bytes"].get<double>() / kBytesPerGiB)) + " ";
    o += "<polyline class=\"peak\" fill=\"none\" stroke=\"#1565c0\" stroke-width=\"2\" points=\"" + line + "\"/>\n";
    for (const json& p : pts)
        o += "<circle class=\"point\" cx=\"" + number(X(p["value"].get<double>())) + "\" cy=\"" +
             number(Y(p["device_total_bytes"].get<double>() / kBytesPerGiB)) + "\" r=\"3.5\" fill=\"" +
             (p["fits"] == true ? "#2e7d32" : "#c62828") + "\"><title>" + number(p["value"].get<double>(), 0) + ": " +
             number(p["device_total_bytes"].get<double>() / kBytesPerGiB, 2) + " GiB</title></circle>\n";
    // The scenario's own value, ringed.
    const json& cur = s["current"];
    o += "<circle class=\"current\" cx=\"" + number(X(cur["value"].get<double>())) + "\" cy=\"" +
         number(Y(cur["device_total_bytes"].get<double>() / kBytesPerGiB)) +
         "\" r=\"7\" fill=\"none\" stroke=\"black\" stroke-width=\"1.5\"><title>this scenario</title></circle>\n";
    // The max-fit boundary, its label on the side with room.
    const double fit = s["max_fit"];
    if (fit >= pts.front()["value"].get<double>() && fit <= pts.back()["value"].get<double>()) {
        const bool room_right = X(fit) < W - right - 90;
        o += "<line class=\"max-fit\" x1=\"" + number(X(fit)) + "\" y1=\"" + number(top, 0) + "\" x2=\"" +
             number(X(fit)) + "\" y2=\"" + number(H - bottom, 0) +
             "\" stroke=\"#2e7d32\" stroke-dasharray=\"2 3\"/><text x=\"" + number(X(fit) + (room_right ? 4 : -4)) +
             "\" y=\"" + number(top + 12, 0) + "\" text-anchor=\"" + (room_right ? "start" : "end") +
             "\" fill=\"#2e7d32\">max fit " + number(fit, 0) + "</text>\n";
    }
    return o + "</svg>\n";
}

}  // namespace gpumem
