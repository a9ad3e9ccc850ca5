// A producer's own messages (Kineto's logged warnings, an XSpace's errors and
// warnings) as an import note says them: each distinct text once with its
// count, the first few of them, the rest counted.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_COUNTED_TEXTS_H_
#define OPSCOPE_ANALYZE_IMPORTERS_COUNTED_TEXTS_H_

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>

namespace opscope::analyze {

struct CountedTexts {
  std::string list;   // "'a' (3 times); 'b'; 4 more"
  int64_t total = 0;  // all the messages, the distinct ones each with its count
};

// `said`: each distinct text and how often it came, in the order to list
// them; the first `listed` are named.
inline CountedTexts ListCounted(const std::map<std::string, int64_t>& said, size_t listed) {
  CountedTexts out;
  size_t named = 0;
  int64_t others = 0;
  for (const auto& [text, n] : said) {
    out.total += n;
    if (named++ >= listed) {
      others += n;
      continue;
    }
    out.list += fmt::format("{}'{}'{}", out.list.empty() ? "" : "; ", text,
                            n > 1 ? fmt::format(" ({} times)", n) : std::string());
  }
  if (others > 0) out.list += fmt::format("; {} more", others);
  return out;
}

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_COUNTED_TEXTS_H_
