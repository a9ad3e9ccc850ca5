// The reports' charts as inline SVG: axes with tick values (log or linear),
// labelled series, reference lines and labelled points, and bar charts. Every
// string is escaped; no script, font or request.
#ifndef OPSCOPE_REPORT_CHARTS_H_
#define OPSCOPE_REPORT_CHARTS_H_

#include <string>
#include <utility>
#include <vector>

namespace opscope::report {

// How an axis writes its tick values: SI prefixes ("10 G"), binary sizes
// ("4 KiB", for byte counts), or plain numbers.
enum class TickStyle { kSi, kBytes, kPlain };

struct Axis {
  std::string title;  // with its unit: "FLOP/s", "size (bytes)"
  bool log = false;
  TickStyle ticks = TickStyle::kSi;
};

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
  bool line = true;                               // false: markers only
};

// A labelled point (a top operator on the roofline).
struct LabelledPoint {
  double x = 0, y = 0;
  std::string label, hover;
};

// A labelled reference line across the plot: horizontal at `value` on the y
// axis (a peak) or vertical on the x axis (a cache size).
struct RefLine {
  double value = 0;
  std::string label;
  bool vertical = false;
};

struct XyChart {
  Axis x, y;
  std::vector<Series> series;
  std::vector<LabelledPoint> points;
  std::vector<RefLine> lines;
  int width = 760, height = 380;
};

// The chart as <svg>, or a sentence when nothing has a positive value to draw.
std::string XySvg(const XyChart& chart);

// Tick positions and labels between lo and hi (lo < hi; both > 0 on a log axis).
std::vector<std::pair<double, std::string>> Ticks(double lo, double hi, bool log, TickStyle style);
// A value as a tick label: "2.5 T", "512 KiB", "0.01".
std::string TickLabel(double value, TickStyle style);

// Horizontal bars, one per (label, value), with the value written after each.
std::string BarSvg(const std::vector<std::pair<std::string, double>>& bars,
                   const std::string& unit);

// One stacked horizontal bar per row: parts in the order of `kinds` (each a CSS
// class and a legend entry), scaled to the largest row's total.
struct StackedRow {
  std::string label;
  std::vector<double> parts;  // one per kind
};
std::string StackedSvg(const std::vector<StackedRow>& rows, const std::vector<std::string>& kinds,
                       const std::string& unit);

// A grid of cells coloured by value (light: the least, dark: the most; grey:
// absent, a negative value), rows and columns labelled, each cell's value in
// its hover text: a rank x step map of step times.
struct Heatmap {
  std::vector<std::string> rows, columns;
  std::vector<std::vector<double>> values;  // [row][column], < 0 absent
  std::string unit;                         // of the hover values ("ms")
};
std::string HeatmapSvg(const Heatmap& map);

}  // namespace opscope::report

#endif  // OPSCOPE_REPORT_CHARTS_H_
