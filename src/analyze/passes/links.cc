#include "analyze/passes/links.h"

#include "analyze/analysis.h"
#include "analyze/links.h"

namespace opscope::analyze {

Pass LinksPass() {
  return {"links",
          "Which host event encloses which, and which operator launched each device event?",
          {},
          [](const TraceModel& model, Analysis& a) { a.links = LinkEvents(model); }};
}

}  // namespace opscope::analyze
