// Differential tests of the JSON event reader: the AVX2 block scanner and the
// byte-by-byte scanner must agree on every document, valid or not, whatever the
// chunk size.
#include <gtest/gtest.h>

#include <fstream>
#include <ostream>
#include <random>

#include "analyze/json_event_reader.h"
#include "opscope/opscope.h"
#include "test_util.h"

namespace opscope::analyze {
namespace {

struct Outcome {
  std::vector<std::pair<std::string, uint64_t>> events;
  std::map<std::string, std::string> members;
  std::string error;
  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Outcome& o) {
  out << o.events.size() << " events, error '" << o.error << "'";
  for (const auto& [json, offset] : o.events) out << "\n  @" << offset << " " << json.substr(0, 60);
  for (const auto& [key, value] : o.members)
    out << "\n  member " << key << " = " << value.substr(0, 40);
  return out;
}

Outcome Read(const std::filesystem::path& path, size_t chunk, bool simd) {
  Outcome out;
  try {
    const auto info = ReadJsonEvents(
        path,
        [&](std::string_view e, uint64_t offset) {
          out.events.emplace_back(std::string(e), offset);
        },
        JsonReadOptions{chunk, simd});
    out.members = info.members;
  } catch (const Error& e) {
    out.error = e.what();
  }
  return out;
}

std::string RandomString(std::mt19937& rng) {
  static const std::vector<std::string> pieces = {
      "a",    "{",    "}",   "[",       "]",        ",",     ":",       " ",
      "\\\"", "\\\\", "\\n", "\\u00e9", "\xc3\xa9", "x{y}z", "\\\\\\\""};
  std::string s;
  const int n = static_cast<int>(rng() % 12);
  for (int i = 0; i < n; ++i) s += pieces[rng() % pieces.size()];
  return s;
}

std::string RandomEvent(std::mt19937& rng) {
  std::string e = "{\"ph\":\"X\",\"name\":\"" + RandomString(rng) +
                  "\",\"ts\":" + std::to_string(rng() % 100000) +
                  ",\"dur\":" + std::to_string(rng() % 1000);
  if (rng() % 2) {
    e += ",\"args\":{\"k\":[1,{\"n\":\"" + RandomString(rng) + "\"},[[]]],\"s\":\"" +
         RandomString(rng) + "\"}";
  }
  return e + "}";
}

std::string RandomDocument(std::mt19937& rng, bool corrupt) {
  std::string events;
  const int n = 1 + static_cast<int>(rng() % 40);
  for (int i = 0; i < n; ++i) {
    events += (i ? (rng() % 3 ? ",\n" : " , ") : "") + RandomEvent(rng);
  }
  std::string doc = rng() % 2 ? "[" + events + "]"
                              : "{\"schemaVersion\":1,\"deviceProperties\":[{\"name\":\"" +
                                    RandomString(rng) + "\"}],\"traceEvents\":[" + events +
                                    "],\"traceName\":\"t\"}";
  if (corrupt) {
    const size_t at = rng() % doc.size();
    switch (rng() % 4) {
      case 0: doc.resize(at); break;        // truncated
      case 1: doc.insert(at, "5"); break;   // stray number
      case 2: doc[at] = '"'; break;         // broken string
      default: doc.insert(at, "}"); break;  // extra bracket
    }
  }
  return doc;
}

TEST(JsonReaderFuzz, BlockAndByteScannersAgree) {
  testing::TempDir dir;
  std::mt19937 rng(20261129);
  int errors = 0;
  for (int round = 0; round < 1000; ++round) {
    const bool corrupt = round % 3 == 2;
    const std::string doc = RandomDocument(rng, corrupt);
    const auto path = dir.path() / "doc.json";
    std::ofstream(path, std::ios::binary) << doc;
    const Outcome reference = Read(path, 1 << 20, /*simd=*/false);
    for (const size_t chunk : {size_t{1} << 20, size_t{97}, size_t{64}, size_t{7}}) {
      const Outcome simd = Read(path, chunk, true);
      const Outcome bytes = Read(path, chunk, false);
      ASSERT_EQ(simd, reference) << "round " << round << " chunk " << chunk << "\n" << doc;
      ASSERT_EQ(bytes, reference) << "round " << round << " chunk " << chunk << "\n" << doc;
    }
    if (!corrupt) {
      EXPECT_TRUE(reference.error.empty()) << reference.error << "\n" << doc;
    } else if (!reference.error.empty()) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 150) << "corrupt documents should mostly be refused";
}

}  // namespace
}  // namespace opscope::analyze
