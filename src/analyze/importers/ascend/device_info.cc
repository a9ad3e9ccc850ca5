#include "analyze/importers/ascend/device_info.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>
#include <optional>
#include <string>

#include "analyze/importers/json_file.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

// info.json is a small object (a few KB).
constexpr size_t kMaxBytes = size_t{16} << 20;

// A number written as a JSON number or as a decimal string ("1800").
std::optional<double> Number(simdjson::dom::element e) {
  double d = 0;
  int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  if (e.get_double().get(d) == simdjson::SUCCESS) return d;
  std::string_view text;
  if (e.get_string().get(text) != simdjson::SUCCESS || text.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return d;
}

}  // namespace

ReportedChip ReadDeviceInfo(Source& source) {
  const std::string& path = source.name();
  simdjson::dom::parser parser;
  const simdjson::dom::element root = ReadJsonFile(source, parser, kMaxBytes, "an info.json");
  simdjson::dom::array devices;
  simdjson::dom::object device;
  if (root["DeviceInfo"].get_array().get(devices) != simdjson::SUCCESS ||
      devices.at(0).get_object().get(device) != simdjson::SUCCESS) {
    throw Error(ErrorCode::kInvalidInput, path + ": no DeviceInfo list with a device in it");
  }
  ReportedChip chip;
  chip.source = path;
  const auto read = [&](const char* key, double max) {
    simdjson::dom::element e;
    const bool present = device[key].get(e) == simdjson::SUCCESS;
    const std::optional<double> v = present ? Number(e) : std::nullopt;
    if (!v || !(*v > 0) || *v > max) {
      throw Error(ErrorCode::kInvalidInput,
                  path + ": DeviceInfo[0]." + key + " is " +
                      (present ? "'" + simdjson::to_string(e) + "', not a positive number"
                               : std::string("absent")));
    }
    return *v;
  };
  const double cores = read("ai_core_num", 4096);
  if (cores != static_cast<int>(cores)) {
    throw Error(ErrorCode::kInvalidInput,
                path + ": DeviceInfo[0].ai_core_num is not a whole number");
  }
  chip.cores = static_cast<int>(cores);
  // The vector cores, where recorded (absent in older releases): a count
  // that is not a positive whole number is left unread.
  if (simdjson::dom::element e; device["aiv_num"].get(e) == simdjson::SUCCESS) {
    const std::optional<double> v = Number(e);
    if (v && *v > 0 && *v <= 4096 && *v == static_cast<int>(*v)) {
      chip.vector_cores = static_cast<int>(*v);
    }
  }
  chip.core_mhz = read("aic_frequency", 100000);
  chip.core_kind = "AI Core";
  // 16x16x16 multiply-adds per Cube core a cycle (8192 FLOP), twice that for
  // int8: msprof-analyze's ChipPeakFLOPSCalculator's formula (docs/formats/ascend.md 7).
  const double per_cycle = chip.cores * chip.core_mhz * 1e6;
  chip.flops_per_second["fp16"] = chip.flops_per_second["bf16"] = per_cycle * 8192;
  chip.flops_per_second["int8"] = per_cycle * 16384;
  chip.derivation = fmt::format(
      "{} AI cores x {:g} MHz x 8192 FLOP/cycle = {:.1f} TFLOP/s fp16/bf16, x 16384 = {:.1f} "
      "TOPS int8 (msprof-analyze's formula)",
      chip.cores, chip.core_mhz, per_cycle * 8192 / 1e12, per_cycle * 16384 / 1e12);
  return chip;
}

}  // namespace opscope::analyze
