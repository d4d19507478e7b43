// The page for keyboards and screen readers. The canvas is one element to the browser, so this
// file keeps, each frame, the list of controls in reading order (every item Dear ImGui's
// test-engine hooks report that keyboard navigation can land on: not disabled, not a child
// window, not inside a popup), with a name, a role and a value for each:
//
//     AccessRowLabel("Sequence length");            // widgets.cpp, FormRow: names the row's control
//     AccessDescribe("slider", "8192 tokens");      // widgets.cpp: the role and value of the last item
//
// Tab and Shift+Tab move keyboard focus along that list (Tab past the last control leaves the canvas
// for the page's next element), and FocusText() says what has focus, for the page's aria-live mirror.
// DetailsText() is the results that are not in the summary: the fit suggestions, the "why" lines
// shown and the export text. No platform code: main.cpp hands the texts to the page.
#pragma once

#include <string>

struct ImGuiContext;
struct ImRect;

namespace gpumem::ui {

struct AppState;

// The label of the form row being drawn: the next control's name.
void AccessRowLabel(const char* label);
// The role ("slider", "combo box", "number field") and value shown of the item just submitted, and its
// name where the item has none of its own (nullptr: keep it).
void AccessDescribe(const char* role, const std::string& value, const char* name = nullptr);
// The same for the item `id` about to be submitted (a combo: described before its popup opens).
void AccessDescribeNext(unsigned int id, const char* role, const std::string& value);

// From the test-engine hooks (test_hooks.cpp): every item with an ID, and the label and state flags
// a widget reports.
void AccessItemAdd(ImGuiContext* ctx, const ImRect& bb, unsigned int id);
void AccessItemInfo(ImGuiContext* ctx, unsigned int id, const char* label, int status_flags);
// Called as a frame starts (before Dear ImGui's NewFrame: the last frame's list is the one Tab moves
// along), and once it has started (Tab's move is made then, after the frame's navigation update).
void AccessNewFrame();
void AccessFrameStarted();

// Tab (backward: Shift+Tab), between frames. Returns false when there is no control past the focused
// one in that direction: focus then leaves the canvas.
bool AccessTab(bool backward);
// Focus came into the canvas from the page by Tab (backward: Shift+Tab from the element after it):
// the first control, or the last.
void AccessEnter(bool backward);

// "Sequence length, slider, 8192 tokens": the control keyboard navigation is on ("" when none).
std::string FocusText();
// The fit suggestions, the "why" lines on screen and the export text, as plain text.
std::string DetailsText(const AppState& state);

}  // namespace gpumem::ui
