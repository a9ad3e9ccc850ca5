// AI Core operators judged by family as msprof-analyze's advisor judges them
// (reported.h: FamilyVerdict says what and where opscope differs): the
// accumulation per (operator, shapes) behind PipeTable::families.
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_AI_CORE_FAMILIES_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_AI_CORE_FAMILIES_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/reported.h"

namespace opscope::analyze {

// The ratios the family rules read, in this order (NaN: not recorded).
enum class FamilyRatio { kAicMac, kAicMte2, kAicFixpipe, kAivVec, kAivMte2, kAivMte3 };
inline constexpr int kFamilyRatios = 6;
inline constexpr std::array<const char*, kFamilyRatios> kFamilyRatioColumns = {
    "aic_mac_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio",
    "aiv_vec_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio"};

// A shapes text's dimensions: "8192,512;512->8192" gives inputs {{8192,512},
// {512}} and outputs {{8192}}; a dimension that is not a whole number makes
// the whole text unreadable (false).
struct ShapeLists {
  std::vector<std::vector<int64_t>> inputs, outputs;
};
bool ParseShapes(std::string_view in_out, ShapeLists& out);

class AiCoreFamilies {
 public:
  // One task: its name, operator type, core type ("AI_CORE", "AI_VECTOR_CORE",
  // "MIX_AIV", ...), shapes and data types ("in->out"), duration and ratios.
  void Add(std::string_view name, std::string_view type, std::string_view core,
           std::string_view shapes, std::string_view dtype, int64_t dur_ns,
           const std::array<double, kFamilyRatios>& ratios);
  // The verdicts; `all_task_ns`: every task's time (the vector filter's 1%).
  std::vector<FamilyVerdict> Finish(int64_t all_task_ns) const;

 private:
  struct Group {
    std::string family, name, type, shapes, dtype;
    int64_t count = 0, total_ns = 0;
    double memory_mb = 0;  // cube: the calls' inputs and output, 2 bytes an element
    std::array<double, kFamilyRatios> sum{};
    std::array<int64_t, kFamilyRatios> n{};
  };
  std::map<std::string, Group, std::less<>> groups_;  // name '\n' shapes
  std::map<std::string, int64_t, std::less<>> vector_type_ns_;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_AI_CORE_FAMILIES_H_
