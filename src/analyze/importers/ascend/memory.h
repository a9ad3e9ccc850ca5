// torch_npu's memory files (ascend.md 3.7): operator_memory.csv (one row per
// block an operator allocated: size, allocation and release times, the
// allocator's totals at each) and memory_record.csv (the totals over time per
// component). What they answer: how high memory went, when, and which
// operators held it at that moment.
//
// msprof's operator_memory_*.csv and memory_record_*.csv (ascend.md 5.2) are
// read by the same code: the same columns with totals in KB, and a block's
// Duration(us) in place of its release time.
//
// Units as documented: Size(KB) in KB of 1024 bytes, totals in MB of 1024 KB
// (msprof: KB); times in microseconds (a trailing tab); an empty release time
// (duration) means the block was not freed inside the window; a negative size
// means it was allocated before the window (its release is in it).
#ifndef OPSCOPE_ANALYZE_IMPORTERS_ASCEND_MEMORY_H_
#define OPSCOPE_ANALYZE_IMPORTERS_ASCEND_MEMORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/source.h"

namespace opscope::analyze {

struct AscendMemoryHolder {
  std::string name;  // the operator that allocated
  int64_t blocks = 0, bytes = 0;
};

struct AscendMemoryComponent {
  std::string component;                                        // PTA, GE, PTA+GE, APP, WORKSPACE
  int64_t peak_allocated_bytes = -1, peak_reserved_bytes = -1;  // -1: not recorded
  int64_t peak_reserved_ns = -1;
};

struct AscendMemory {
  std::string source, record_source;
  int64_t blocks = 0;           // allocations in the window (positive sizes)
  int64_t before_window = 0;    // rows with a negative size
  int64_t allocated_bytes = 0;  // their sizes summed
  // The highest "Allocation Total Allocated" and when, with the operator whose
  // allocation reached it, and the reserved total then.
  int64_t peak_allocated_bytes = -1, peak_ns = -1, peak_reserved_bytes = -1;
  std::string peak_operator;
  // Blocks of the window live at the peak (allocated at or before it, not yet
  // released), per operator, the largest first; and their sum.
  std::vector<AscendMemoryHolder> live_at_peak;
  int64_t live_at_peak_bytes = 0;
  // Every operator's allocations in the window, the largest total first.
  std::vector<AscendMemoryHolder> by_operator;
  std::vector<AscendMemoryComponent> components;  // memory_record.csv, by name
};

// Either source may be null. Throws Error(kInvalidInput) naming the file, line
// and column of a value that is not a number, or a header without the columns.
AscendMemory ReadAscendMemory(Source* operator_memory, Source* memory_record);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_MEMORY_H_
