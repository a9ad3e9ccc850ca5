#include "monitor/prometheus.h"

#include <map>

#include "core/text.h"

namespace opscope::monitor {
namespace {

// Backslash and newline are escaped in HELP text; label values escape '"' too.
std::string Escape(const std::string& text, bool quotes) {
  std::string out;
  for (const char c : core::SanitizeUtf8(text)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Labels(const std::vector<std::pair<std::string, std::string>>& labels) {
  if (labels.empty()) return {};
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    out +=
        (i ? "," : "") + labels[i].first + "=\"" + Escape(labels[i].second, /*quotes=*/true) + "\"";
  }
  return out + "}";
}

}  // namespace

std::string ToPrometheusText(const std::vector<Metric>& metrics, double collect_seconds) {
  // Group samples by exported name, in order of first appearance.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Metric*>> groups;
  std::vector<const Metric*> unavailable;
  for (const Metric& m : metrics) {
    if (!m.value) {
      unavailable.push_back(&m);
      continue;
    }
    const std::string name = "opscope_" + m.name + (m.kind == MetricKind::kCounter ? "_total" : "");
    if (!groups.count(name)) order.push_back(name);
    groups[name].push_back(&m);
  }
  std::string out;
  for (const std::string& name : order) {
    const Metric& first = *groups[name].front();
    out += "# HELP " + name + " " + Escape(first.help, /*quotes=*/false) + "\n";
    out += "# TYPE " + name + (first.kind == MetricKind::kCounter ? " counter\n" : " gauge\n");
    for (const Metric* m : groups[name]) {
      out += name + Labels(m->labels) + " ";
      core::AppendJsonNumber(out, *m->value);
      out += "\n";
    }
  }
  out +=
      "# HELP opscope_metric_unavailable A metric that cannot be read on this machine, with the "
      "reason\n";
  out += "# TYPE opscope_metric_unavailable gauge\n";
  for (const Metric* m : unavailable) {
    auto labels = m->labels;
    labels.emplace_back("metric", m->Key());
    labels.emplace_back("reason", m->unavailable);
    out += "opscope_metric_unavailable" + Labels(labels) + " 1\n";
  }
  out += "# HELP opscope_collect_duration_seconds Time the last collection of all samplers took\n";
  out += "# TYPE opscope_collect_duration_seconds gauge\n";
  out += "opscope_collect_duration_seconds ";
  core::AppendJsonNumber(out, collect_seconds);
  out += "\n";
  return out;
}

}  // namespace opscope::monitor
