// Analysis pass "links": which host event encloses which, and which operator
// launched each piece of device work (analyze/links.h), computed once for the
// passes that need them (layout, fusion).
#ifndef OPSCOPE_ANALYZE_PASSES_LINKS_H_
#define OPSCOPE_ANALYZE_PASSES_LINKS_H_

#include "analyze/passes/pass.h"

namespace opscope::analyze {

// Its entry in the pass table.
Pass LinksPass();

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_PASSES_LINKS_H_
