// The ceilings an operator's achieved FLOP/s and bandwidth are rated against
// (passes/roofline.h): measured (ceilings.json), from the datasheet, or from
// the run's chip.
#ifndef OPSCOPE_ANALYZE_CEILINGS_H_
#define OPSCOPE_ANALYZE_CEILINGS_H_

#include <map>
#include <string>

namespace opscope::analyze {

struct RooflineCeilings {
  std::string device;
  std::string source;                              // where the figures come from
  std::map<std::string, double> flops_per_second;  // by dtype: "fp32", "bf16"
  double bytes_per_second = 0;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_CEILINGS_H_
