#include "report/charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/text.h"

namespace opscope::report {
namespace {

using core::EscapeHtml;

constexpr int kKeyWidth = 300;  // the key of numbered points

constexpr const char* kPalette[] = {"#4a7bd0", "#d08a4a", "#3e9b5a", "#b0413e", "#7e57c2",
                                    "#2a9d8f", "#c2a03a", "#5c6b73", "#e76f9a", "#8d6e63"};

// At most `max_chars` bytes before the ellipsis, one fewer once cut.
std::string Shorten(const std::string& text, size_t max_chars) {
  return text.size() <= max_chars ? text : core::CutUtf8(text, max_chars - 1);
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v, bool log) {
    if (!std::isfinite(v) || (log && v <= 0)) return;
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

// Widens a range to whole ticks: decades (or powers of two for byte counts)
// on a log axis, a round step from zero on a linear one.
void Round(Range& r, const Axis& axis) {
  if (axis.log) {
    if (axis.ticks == TickStyle::kBytes) {
      r.lo = std::exp2(std::floor(std::log2(r.lo)));
      r.hi = std::exp2(std::ceil(std::log2(r.hi)));
      if (r.hi <= r.lo) r.hi = r.lo * 2;
    } else {
      r.lo = std::pow(10, std::floor(std::log10(r.lo)));
      r.hi = std::pow(10, std::ceil(std::log10(r.hi)));
      if (r.hi <= r.lo) r.hi = r.lo * 10;
    }
    return;
  }
  r.lo = std::min(r.lo, 0.0);
  if (r.hi <= r.lo) r.hi = r.lo + 1;
  const auto ticks = Ticks(r.lo, r.hi * 1.05, false, axis.ticks);
  r.hi = std::max(r.hi, ticks.empty() ? r.hi : ticks.back().first);
}

}  // namespace

std::string TickLabel(double v, TickStyle style) {
  const double a = std::fabs(v);
  if (style == TickStyle::kBytes) {
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (std::fabs(v) >= 1024 && u < 4) v /= 1024, ++u;
    return fmt::format("{:.4g} {}", v, kUnits[u]);
  }
  if (style == TickStyle::kSi && a >= 1e3) {
    static constexpr std::pair<double, const char*> kPrefixes[] = {
        {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    for (const auto& [scale, prefix] : kPrefixes) {
      if (a >= scale) return fmt::format("{:.4g} {}", v / scale, prefix);
    }
  }
  return fmt::format("{:.4g}", v);
}

std::vector<std::pair<double, std::string>> Ticks(double lo, double hi, bool log, TickStyle style) {
  std::vector<std::pair<double, std::string>> out;
  if (!(hi > lo)) return out;
  const double eps = 1e-9;
  if (log) {
    if (lo <= 0) return out;
    if (style == TickStyle::kBytes) {
      const int e0 = static_cast<int>(std::ceil(std::log2(lo) - eps));
      const int e1 = static_cast<int>(std::floor(std::log2(hi) + eps));
      const int step = std::max(1, (e1 - e0 + 9) / 10);
      for (int e = e0; e <= e1; e += step)
        out.emplace_back(std::exp2(e), TickLabel(std::exp2(e), style));
      return out;
    }
    const int d0 = static_cast<int>(std::ceil(std::log10(lo) - eps));
    const int d1 = static_cast<int>(std::floor(std::log10(hi) + eps));
    const int step = std::max(1, (d1 - d0 + 9) / 10);
    for (int d = d0; d <= d1; d += step) {
      out.emplace_back(std::pow(10, d), TickLabel(std::pow(10, d), style));
      if (d1 - d0 <= 2 && d < d1) {  // few decades: 2x and 5x as well
        for (const double m : {2.0, 5.0})
          out.emplace_back(m * std::pow(10, d), TickLabel(m * std::pow(10, d), style));
      }
    }
    return out;
  }
  const double raw = (hi - lo) / 6;
  const double p = std::pow(10, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  }
  for (double t = std::ceil(lo / step - eps) * step; t <= hi + step * eps; t += step) {
    out.emplace_back(t, TickLabel(std::fabs(t) < step * eps ? 0 : t, style));
  }
  return out;
}

std::string XySvg(const XyChart& c) {
  Range xr, yr;
  for (const Series& s : c.series) {
    for (const auto& [x, y] : s.points) xr.Add(x, c.x.log), yr.Add(y, c.y.log);
  }
  for (const LabelledPoint& p : c.points) xr.Add(p.x, c.x.log), yr.Add(p.y, c.y.log);
  if (xr.empty() || yr.empty()) return "<p>Nothing to draw: no positive values.</p>";
  for (const RefLine& l : c.lines)
    (l.vertical ? xr : yr).Add(l.value, l.vertical ? c.x.log : c.y.log);
  Round(xr, c.x);
  Round(yr, c.y);
  const int left = 78, right = 20, top = 14, bottom = 46;
  const double pw = c.width - left - right, ph = c.height - top - bottom;
  const auto fx = [&](double x) {
    const double f =
        c.x.log ? std::log(x / xr.lo) / std::log(xr.hi / xr.lo) : (x - xr.lo) / (xr.hi - xr.lo);
    return left + pw * f;
  };
  const auto fy = [&](double y) {
    const double f =
        c.y.log ? std::log(y / yr.lo) / std::log(yr.hi / yr.lo) : (y - yr.lo) / (yr.hi - yr.lo);
    return top + ph * (1 - f);
  };
  const auto inside = [&](double x, double y) {
    return std::isfinite(x) && std::isfinite(y) && (!c.x.log || x > 0) && (!c.y.log || y > 0);
  };
  // Labelled points are numbered, their labels in a key right of the plot.
  const bool has_key = std::any_of(c.points.begin(), c.points.end(), [&](const LabelledPoint& p) {
    return !p.label.empty() && inside(p.x, p.y);
  });
  const int drawn_width = c.width + (has_key ? kKeyWidth : 0);
  std::string svg = fmt::format(
      "<svg class=\"chart xy\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">",
      drawn_width, c.height, drawn_width, c.height);
  // Grid and tick labels.
  for (const auto& [v, label] : Ticks(xr.lo, xr.hi, c.x.log, c.x.ticks)) {
    const double x = fx(v);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\" class=\"tick\">{4}</text>",
        x, top, top + ph, top + ph + 14, EscapeHtml(label));
  }
  for (const auto& [v, label] : Ticks(yr.lo, yr.hi, c.y.log, c.y.ticks)) {
    const double y = fy(v);
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" class=\"grid\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\" class=\"tick\">{5}</text>",
        left, y, left + pw, left - 4, y + 4, EscapeHtml(label));
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{:.1f}\" class=\"frame\"/>"
      "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" class=\"title\">{}{}</text>"
      "<text transform=\"translate(14 {:.1f}) rotate(-90)\" text-anchor=\"middle\" "
      "class=\"title\">{}{}</text>",
      left, top, pw, ph, left + pw / 2, c.height - 8, EscapeHtml(c.x.title),
      c.x.log ? " (log)" : "", top + ph / 2, EscapeHtml(c.y.title), c.y.log ? " (log)" : "");
  // Reference lines; labels of lines close together alternate sides.
  double last_y = -1e9, last_x = -1e9;
  bool flip_y = false, flip_x = false;
  std::vector<const RefLine*> sorted_lines;
  for (const RefLine& l : c.lines) sorted_lines.push_back(&l);
  std::stable_sort(sorted_lines.begin(), sorted_lines.end(),
                   [](const RefLine* a, const RefLine* b) { return a->value < b->value; });
  for (const RefLine* line : sorted_lines) {
    const RefLine& l = *line;
    if (!inside(l.vertical ? l.value : xr.lo, l.vertical ? yr.lo : l.value)) continue;
    if (l.vertical) {
      const double x = fx(l.value);
      flip_x = x - last_x < 120 ? !flip_x : false;
      last_x = x;
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" class=\"ref\"/>"
          "<text x=\"{3:.1f}\" y=\"{4}\" class=\"reflabel\">{5}</text>",
          x, top, top + ph, x + 3, top + (flip_x ? 26 : 12), EscapeHtml(l.label));
    } else {
      const double y = fy(l.value);
      flip_y = std::fabs(y - last_y) < 14 ? !flip_y : false;
      last_y = y;
      svg += fmt::format(
          "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" class=\"ref\"/>"
          "<text x=\"{2:.1f}\" y=\"{3:.1f}\" text-anchor=\"end\" class=\"reflabel\">{4}</text>",
          left, y, left + pw - 4, flip_y ? y + 12 : y - 4, EscapeHtml(l.label));
    }
  }
  for (size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    const char* color = kPalette[i % std::size(kPalette)];
    std::string points;
    for (const auto& [x, y] : s.points) {
      if (!inside(x, y)) continue;
      points += fmt::format("{:.1f},{:.1f} ", fx(x), fy(y));
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{}: {}, {}</title>"
          "</circle>",
          fx(x), fy(y), s.line ? 2.5 : 3.5, color, EscapeHtml(s.name), TickLabel(x, c.x.ticks),
          TickLabel(y, c.y.ticks));
    }
    if (s.line && !points.empty()) {
      svg +=
          fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" points=\"{}\"/>",
                      color, points);
    }
  }
  // The legend, top left inside the frame.
  for (size_t i = 0; i < c.series.size(); ++i) {
    const double y = top + 14 + 15 * static_cast<double>(i);
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{:.1f}\" width=\"12\" height=\"4\" fill=\"{}\"/><text x=\"{}\" "
        "y=\"{:.1f}\" class=\"legend\">{}</text>",
        left + 8, y - 4, kPalette[i % std::size(kPalette)], left + 24, y,
        EscapeHtml(Shorten(c.series[i].name, 60)));
  }
  // Points: the labelled ones numbered, their labels in a key right of the plot
  // (labels written beside clustered points would overlap).
  int number = 0;
  std::string key;
  for (const LabelledPoint& p : c.points) {
    if (!inside(p.x, p.y)) continue;
    const double x = fx(p.x), y = fy(p.y);
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" class=\"point\"><title>{}</title></circle>", x,
        y, EscapeHtml(p.hover.empty() ? p.label : p.hover));
    if (p.label.empty()) continue;
    ++number;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"plabel\">{}</text>", x + 5, y - 4,
                       number);
    key +=
        fmt::format("<text x=\"{}\" y=\"{}\" class=\"plabel\">{} {}<title>{}</title></text>",
                    c.width + 8, top + 12 + 15 * number, number, EscapeHtml(Shorten(p.label, 40)),
                    EscapeHtml(p.hover.empty() ? p.label : p.hover));
  }
  return svg + key + "</svg>";
}

std::string BarSvg(const std::vector<std::pair<std::string, double>>& bars,
                   const std::string& unit) {
  if (bars.empty()) return "<p>No data.</p>";
  double max = 0;
  for (const auto& [label, value] : bars) max = std::max(max, value);
  const int row = 22, label_width = 360, bar_width = 440;
  std::string svg =
      fmt::format("<svg class=\"chart\" width=\"{}\" height=\"{}\" role=\"img\">",
                  label_width + bar_width + 110, row * static_cast<int>(bars.size()) + 6);
  for (size_t i = 0; i < bars.size(); ++i) {
    const auto& [label, value] = bars[i];
    const double w = max > 0 ? bar_width * value / max : 0;
    const int y = static_cast<int>(i) * row + 4;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", label_width - 6,
                       y + 14, EscapeHtml(Shorten(label, 52)));
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"16\" class=\"bar\"><title>{}: {:.3f} "
        "{}</title></rect>",
        label_width, y, w, EscapeHtml(label), value, EscapeHtml(unit));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{:.3f} {}</text>", label_width + w + 4, y + 14,
                       value, EscapeHtml(unit));
  }
  return svg + "</svg>";
}

std::string HeatmapSvg(const Heatmap& map) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& row : map.values) {
    for (const double v : row) {
      if (v < 0) continue;
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  }
  if (!any || map.rows.empty() || map.columns.empty()) return "<p>No data.</p>";
  // Cells shrink with the grid so a thousand ranks still fit on a page.
  const int cell_h = std::clamp(600 / static_cast<int>(map.rows.size()), 2, 18);
  const int cell_w = std::clamp(720 / static_cast<int>(map.columns.size()), 3, 48);
  const int left = 90, top = 40;
  const int width = left + cell_w * static_cast<int>(map.columns.size()) + 20;
  const int height = top + cell_h * static_cast<int>(map.rows.size()) + 40;
  std::string svg =
      fmt::format("<svg class=\"chart\" width=\"{}\" height=\"{}\" role=\"img\">", width, height);
  // Column labels: at most ~24 of them, evenly spaced.
  const size_t col_step = std::max<size_t>(1, map.columns.size() / 24);
  for (size_t c = 0; c < map.columns.size(); c += col_step) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                       left + static_cast<int>(c) * cell_w + cell_w / 2, top - 6,
                       EscapeHtml(Shorten(map.columns[c], 12)));
  }
  const size_t row_step = std::max<size_t>(1, 12 / static_cast<size_t>(cell_h));
  for (size_t r = 0; r < map.rows.size(); ++r) {
    const int y = top + static_cast<int>(r) * cell_h;
    if (r % row_step == 0) {
      svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", left - 6,
                         y + std::min(cell_h, 12), EscapeHtml(Shorten(map.rows[r], 14)));
    }
    for (size_t c = 0; c < map.columns.size(); ++c) {
      const double v = r < map.values.size() && c < map.values[r].size() ? map.values[r][c] : -1;
      const int x = left + static_cast<int>(c) * cell_w;
      if (v < 0) {
        svg += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ddd\"><title>{}, {}: "
            "absent</title></rect>",
            x, y, cell_w, cell_h, EscapeHtml(map.rows[r]), EscapeHtml(map.columns[c]));
        continue;
      }
      const double t = hi > lo ? (v - lo) / (hi - lo) : 0;
      // From a pale yellow to a dark red.
      const int red = static_cast<int>(255 - 90 * t), green = static_cast<int>(245 - 215 * t),
                blue = static_cast<int>(200 - 170 * t);
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"rgb({},{},{})\"><title>{}, "
          "{}: {:.4g} {}</title></rect>",
          x, y, cell_w, cell_h, red, green, blue, EscapeHtml(map.rows[r]),
          EscapeHtml(map.columns[c]), v, EscapeHtml(map.unit));
    }
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\">light {:.4g} {} \u2192 dark {:.4g} {}; grey: no such step</text>",
      left, height - 12, lo, EscapeHtml(map.unit), hi, EscapeHtml(map.unit));
  return svg + "</svg>";
}

std::string StackedSvg(const std::vector<StackedRow>& rows, const std::vector<std::string>& kinds,
                       const std::string& unit) {
  if (rows.empty()) return "<p>No data.</p>";
  double longest = 0;
  for (const StackedRow& r : rows) {
    double total = 0;
    for (const double p : r.parts) total += std::max(p, 0.0);
    longest = std::max(longest, total);
  }
  if (longest <= 0) longest = 1;
  const int row = 22, label_width = 170, width = 600;
  const int legend_y = row * static_cast<int>(rows.size()) + 20;
  std::string svg = fmt::format("<svg class=\"chart\" width=\"{}\" height=\"{}\" role=\"img\">",
                                label_width + width + 120, legend_y + 10);
  for (size_t i = 0; i < rows.size(); ++i) {
    const StackedRow& r = rows[i];
    const int y = static_cast<int>(i) * row + 4;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", label_width - 6,
                       y + 13, EscapeHtml(Shorten(r.label, 26)));
    double x = label_width, total = 0;
    for (size_t k = 0; k < r.parts.size() && k < kinds.size(); ++k) {
      const double v = std::max(r.parts[k], 0.0);
      total += v;
      const double w = width * v / longest;
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"16\" class=\"{}\"><title>{}: {}: "
          "{:.3f} {}</title></rect>",
          x, y, w, EscapeHtml(kinds[k]), EscapeHtml(r.label), EscapeHtml(kinds[k]), v,
          EscapeHtml(unit));
      x += w;
    }
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{:.3f} {}</text>", x + 4, y + 13, total,
                       EscapeHtml(unit));
  }
  int lx = label_width;
  for (const std::string& kind : kinds) {
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" class=\"{}\"/><text x=\"{}\" "
        "y=\"{}\">{}</text>",
        lx, legend_y - 10, EscapeHtml(kind), lx + 16, legend_y, EscapeHtml(kind));
    lx += 16 + 8 * static_cast<int>(kind.size()) + 20;
  }
  return svg + "</svg>";
}

}  // namespace opscope::report
