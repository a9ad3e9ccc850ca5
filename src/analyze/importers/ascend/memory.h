// torch_npu's memory files (docs/formats/ascend.md 3.7): operator_memory.csv (one row per
// block an operator allocated: size, allocation and release times, the
// allocator's totals at each) and memory_record.csv (the totals over time per
// component). What they answer: how high memory went, when, and which
// operators held it at that moment.
//
// msprof's operator_memory_*.csv and memory_record_*.csv (docs/formats/ascend.md 5.2) are
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

#include "analyze/reported.h"
#include "analyze/source.h"

namespace opscope::analyze {

// Either source may be null. Throws Error(kInvalidInput) naming the file, line
// and column of a value that is not a number, or a header without the columns.
ReportedMemory ReadAscendMemory(Source* operator_memory, Source* memory_record);

// The same from an Ascend SQLite export (docs/formats/ascend.md 4): OP_MEMORY
// (names in STRING_IDS, sizes in bytes, times in ns, a NULL release time: not
// freed in the window) and MEMORY_RECORD (components in STRING_IDS, totals in
// bytes). Either table may be absent; `path` names the database in sources.
class SqliteDb;
ReportedMemory ReadAscendDbMemory(const SqliteDb& db, const std::string& path);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_IMPORTERS_ASCEND_MEMORY_H_
