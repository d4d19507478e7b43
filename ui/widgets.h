// Small widgets the panels share: a help marker, byte formatting, and a horizontal stacked-bar
// chart drawn with ImDrawList in ImPlot's grammar (Begin / Setup / Plot / End), since ImPlot
// itself is in no registry this project can use.
//
//     if (BeginStackedBars("##per_gpu", x_max))               // x_max: axis end, in value units
//     {
//         SetupStackedBarsItems(labels, colors, count);          // one legend item per segment
//         PlotStackedBar("GPU 0", values, count, capacity);      // one bar; values[i] stacks item i
//         EndStackedBars();                                      // draws the value axis
//     }
//
// Values are whatever unit the caller picks (the panels pass GiB); the chart does no memory
// arithmetic beyond placing the numbers it is given.
#pragma once

#include <cstdint>
#include <string>

#include "imgui.h"

namespace gpumem::ui {

// A "(?)" that shows `desc` in a tooltip when hovered (as in imgui_demo.cpp).
void HelpMarker(const char* desc);

// Wrapped text in `color`, as an item with an ID (`str_id`, e.g. "##link_message"): a notice
// that tools following items by ID, such as Dear ImGui's test-engine hooks, can find.
void TextNotice(const char* str_id, const ImVec4& color, const char* text);

// "12.34 GiB" (2^30 bytes), "512.0 MiB" below one GiB.
std::string FormatBytes(std::uint64_t bytes);
// "8.03 B", "124 M": a parameter count in words.
std::string FormatCount(std::uint64_t count);

// Green below 80 % of the card, amber up to 95 %, red above: the one colour code for utilisation.
ImVec4 UtilizationColor(double utilization);

// The chart. Begin returns false when clipped (then call nothing else, like ImGui::BeginChild's
// siblings in ImPlot). `x_max` is the end of the value axis; `unit` labels its ticks.
// `widest_label` sets the width of the label column (default: room for "GPU 000").
bool BeginStackedBars(const char* str_id, double x_max, const char* unit = "GiB",
                      float width = 0.0f /* 0: available width */, const char* widest_label = nullptr);
// Names and colours of the segments, in stacking order; the pointers must outlive the chart.
void SetupStackedBarsItems(const char* const labels[], const ImU32 colors[], int count);
// One horizontal bar: values[i] is the length of segment i; a marker is drawn at `capacity`
// (the card), and the part of the bar past it is outlined in red. Hover shows a tooltip.
void PlotStackedBar(const char* label, const double values[], int count, double capacity);
// Draws the value axis under the bars and closes the chart.
void EndStackedBars();

}  // namespace gpumem::ui
