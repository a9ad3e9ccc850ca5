// The chip of a CANN profiling run, from its device_{id}/info.json.{id}
// (msprof writes one per device, under each PROF_* folder, torch_npu's
// included): DeviceInfo[0]'s `ai_core_num` and `aic_frequency` (MHz), the
// two figures msprof-analyze reads to work out a chip's peak FLOP/s
// (docs/formats/ascend.md 1.4 and 7). Roofline ceilings follow from them
// (the chip's peaks, reported.h; passes/roofline.h: ChipCeilings).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_DEVICE_INFO_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_DEVICE_INFO_H_

#include "analyze/reported.h"
#include "analyze/source.h"

namespace opscope::analyze {

// Throws Error(kInvalidInput) naming the file and key for text that is not
// JSON, no DeviceInfo list, or a core count or frequency that is absent or
// not a positive number (either may be written as a number or a string).
ReportedChip ReadDeviceInfo(Source& info_json);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_DEVICE_INFO_H_
