// The timeline page: one self-contained HTML file (inline CSS, SVG and a few
// lines of script; nothing fetched from the network) that a person opens in
// a browser to see a run: a lane per client and per node, the leases, the
// faults marked, and every violation in red with its explanation.
//
// Both latch-fixture check (the histories, checker.h) and latch-chaos (its
// run record) draw through this one model, so a violation looks the same
// wherever it was found.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/history/checker.h"

namespace latch::history {

struct PageModel {
  struct Lane {
    std::string label;
    std::string group;  // "clients", "nodes", …: a heading when it changes
  };
  struct Bar {
    int lane = 0;
    double from = 0, to = 0;  // ms on the page's time line
    std::string kind;         // css class: hold, claim, unsupported, lease, promise, down, …
    std::string color;        // a CSS colour, or empty for the kind's
    std::string title;        // the tooltip
  };
  struct Mark {
    int lane = -1;  // -1: across every lane
    double t = 0;
    std::string label;  // a few letters on the lane
    std::string title;
  };
  struct Violation {
    double from = 0, to = 0;
    std::vector<int> lanes;
    std::string text;
  };

  std::string title;
  std::vector<std::string> summary;  // lines under the title
  double t0 = 0, t1 = 0;             // the time line; shown relative to t0, in s
  std::vector<Lane> lanes;
  std::vector<Bar> bars;
  std::vector<Mark> marks;
  std::vector<Violation> violations;
  std::vector<std::pair<std::string, std::string>> legend;  // css class, text
};

// The page for a checker's report (latch-fixture check).
PageModel ModelFromReport(const Report& r, const std::string& title);

// The HTML text.
std::string RenderPage(const PageModel& m);

// Writes it; the error text on failure.
std::optional<std::string> WritePage(const std::string& path, const PageModel& m);

// A stable colour for a token (the same token is the same colour on every
// lane).
std::string TokenColor(const std::string& token);

}  // namespace latch::history
