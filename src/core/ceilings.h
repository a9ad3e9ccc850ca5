// Measured ceilings of a device (`opscope bench roofline` writes them; the
// benchmarks and the analyzer read them): peak FLOP/s per data type and memory
// bandwidth, with where and how they were measured.
#ifndef OPSCOPE_CORE_CEILINGS_H_
#define OPSCOPE_CORE_CEILINGS_H_

#include <filesystem>
#include <map>
#include <string>

namespace opscope::core {

struct Ceilings {
  std::string device_id;
  std::string device_name;
  std::map<std::string, double> flops_per_second;  // by dtype name: "fp32", "bf16"
  double memory_bytes_per_second = 0;              // read + write bytes
  std::map<std::string, std::string> method;       // what each figure came from
  // The clock the device's theoretical peaks assume, how it was obtained, and
  // when (UTC): the peaks the ceilings are compared with depend on it.
  double clock_ghz = 0;
  std::string clock_source;
  std::string written_at;
};

// Writes atomically. Throws Error(kIo).
void SaveCeilings(const Ceilings& ceilings, const std::filesystem::path& path);
// Throws Error(kIo) if unreadable, Error(kInvalidInput) naming the problem.
Ceilings LoadCeilings(const std::filesystem::path& path);

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_CEILINGS_H_
