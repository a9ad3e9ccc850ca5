// Huawei Ascend NPUs through DCMI, the driver's device-management library
// (libdcmi.so), loaded with dlopen at run time: no SDK at build time; only the
// functions used are declared, from Huawei's published DCMI API reference
// (dcmi_init, dcmi_get_card_list, dcmi_get_device_id_in_card, and per chip
// dcmi_get_device_utilization_rate, _temperature, _power_info, _frequency,
// _hbm_info, _health, _chip_info). OPSCOPE_DCMI_LIBRARY overrides the
// library path (tests point it at a stand-in). Where DCMI cannot be loaded
// (containers often lack it), AscendCL's aclrtGetDeviceUtilizationRate gives
// the cube, vector and AI CPU utilization alone (libascendcl.so, or
// OPSCOPE_ACL_LIBRARY).
#ifndef OPSCOPE_MONITOR_DCMI_SAMPLER_H_
#define OPSCOPE_MONITOR_DCMI_SAMPLER_H_

#include <memory>
#include <string>
#include <vector>

#include "monitor/sampler.h"

namespace opscope::monitor {

// One sampler per NPU chip ("npu:0", "npu:1", ... in card, then chip order),
// its metrics labelled with the DCMI card and chip ids; on failure an empty
// list and `why` ("no Ascend driver: ...").
std::vector<std::unique_ptr<Sampler>> OpenDcmiSamplers(std::string& why);

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_DCMI_SAMPLER_H_
