#include "analyze/importers/kernel_details_importer.h"

#include <fstream>
#include <map>
#include <vector>

#include "analyze/importers/chrome_json_importer.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

// Reads one CSV record (RFC 4180: quoted fields may hold commas, doubled quotes
// and line breaks). Returns false at the end of the input.
bool ReadRecord(std::istream& in, std::vector<std::string>& fields, int& line) {
  fields.clear();
  std::string field;
  bool quoted = false, any = false;
  char c;
  while (in.get(c)) {
    any = true;
    if (quoted) {
      if (c == '"') {
        if (in.peek() == '"') {
          in.get(c);
          field += '"';
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      ++line;
      fields.push_back(std::move(field));
      return true;
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted)
    throw Error(ErrorCode::kInvalidInput,
                "a quoted field is not closed before the end of the file");
  if (any) fields.push_back(std::move(field));
  return any;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool SniffKernelDetails(std::string_view head) {
  const auto line_end = head.find('\n');
  const std::string_view header = head.substr(0, line_end);
  return header.find("Name") != std::string_view::npos &&
         header.find("Start Time(us)") != std::string_view::npos &&
         header.find("Duration(us)") != std::string_view::npos;
}

void ImportKernelDetails(const std::filesystem::path& path, TraceModel& model) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, "cannot open '" + path.string() + "'");
  int line = 1;
  std::vector<std::string> fields;
  const auto bad = [&](int at, const std::string& what) {
    return Error(ErrorCode::kInvalidInput,
                 path.string() + ": line " + std::to_string(at) + ": " + what);
  };
  try {
    if (!ReadRecord(in, fields, line)) throw bad(1, "the file is empty");
  } catch (const Error& e) {
    throw bad(line, e.what());
  }
  std::map<std::string, size_t> column;
  const size_t header_fields = fields.size();
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string name(Trim(fields[i]));
    if (!column.emplace(name, i).second) {
      throw bad(1, "the column '" + name + "' appears twice");
    }
  }
  for (const char* required : {"Name", "Start Time(us)", "Duration(us)"}) {
    if (!column.count(required)) throw bad(1, std::string("no '") + required + "' column");
  }
  const auto optional = [&](const char* name) {
    return column.count(name) ? column.at(name) : SIZE_MAX;
  };
  const size_t name_col = column.at("Name"), start_col = column.at("Start Time(us)"),
               dur_col = column.at("Duration(us)"), type_col = optional("Type"),
               core_col = optional("Accelerator Core"), stream_col = optional("Stream ID");
  while (true) {
    const int record_line = line;
    try {
      if (!ReadRecord(in, fields, line)) break;
    } catch (const Error& e) {
      throw bad(record_line, e.what());
    }
    if (fields.size() == 1 && Trim(fields[0]).empty()) continue;  // a blank line
    if (fields.size() != header_fields) {
      throw bad(record_line, std::to_string(fields.size()) + " fields where the header has " +
                                 std::to_string(header_fields));
    }
    int64_t start = 0, duration = 0;
    if (!MicrosToNs(Trim(fields[start_col]), start)) {
      throw bad(record_line, "'Start Time(us)' is not a time: '" + fields[start_col] + "'");
    }
    if (!MicrosToNs(Trim(fields[dur_col]), duration) || duration < 0) {
      throw bad(record_line, "'Duration(us)' is not a duration: '" + fields[dur_col] + "'");
    }
    const auto text = [&](size_t col) {
      return col == SIZE_MAX ? std::string_view() : Trim(fields[col]);
    };
    const std::string_view stream = text(stream_col);
    model.start_ns.push_back(start);
    model.duration_ns.push_back(duration);
    model.name.push_back(model.Intern(Trim(fields[name_col])));
    model.category.push_back(model.Intern(text(type_col) == "N/A" ? "" : text(type_col)));
    model.track.push_back(
        model.TrackFor("Ascend Hardware", stream.empty() || stream == "N/A" ? "0" : stream));
    model.cls.push_back(EventClass::kKernel);
    model.flops.push_back(-1);
    model.bytes.push_back(-1);
    model.correlation.push_back(-1);
    model.kind.push_back(model.Intern(text(core_col) == "N/A" ? "" : text(core_col)));
    model.external_id.push_back(-1);
    model.input_dims.push_back(0);
    model.input_type.push_back(0);
    model.concrete_inputs.push_back(0);
  }
  for (auto& track : model.tracks) track.process = "Ascend Hardware";
  model.format = "ascend-kernel-details";
  model.source = path.string();
}

}  // namespace opscope::analyze
