// The JSON writer: separators, escaping, numbers, misuse refused; its output
// parsed back by Python's json module.
#include "core/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "opscope/opscope.h"
#include "test_util.h"

namespace opscope::core {
namespace {

TEST(JsonWriter, NestedValuesWithSeparatorsAndEscapes) {
  std::string out;
  JsonWriter json(out);
  json.BeginObject()
      .Member("name", "a \"quoted\"\nname\x01")
      .Member("count", 3)
      .Member("ratio", 0.25)
      .Member("missing", std::optional<double>())
      .Member("nan", std::nan(""))
      .Member("ok", true)
      .Key("list")
      .BeginArray()
      .Int(-1)
      .String("x")
      .BeginObject()
      .EndObject()
      .BeginArray()
      .EndArray()
      .Null()
      .EndArray()
      .EndObject();
  EXPECT_TRUE(json.complete());
  EXPECT_EQ(out,
            "{\"name\":\"a \\\"quoted\\\"\\nname\\u0001\",\"count\":3,\"ratio\":0.25,"
            "\"missing\":null,\"nan\":null,\"ok\":true,\"list\":[-1,\"x\",{},[],null]}");
  testing::TempDir dir;
  const auto path = dir.path() / "out.json";
  std::ofstream(path) << out;
  const auto check = testing::RunCommand(std::string(OPSCOPE_PYTHON) +
                                         " -c 'import json,sys; json.load(open(sys.argv[1]))' " +
                                         testing::Quote(path.string()));
  EXPECT_EQ(check.status, 0) << check.output;
}

TEST(JsonWriter, MisuseIsRefused) {
  std::string out;
  JsonWriter object(out);
  object.BeginObject();
  EXPECT_THROW(object.Int(1), Error) << "a value without a key";
  EXPECT_THROW(object.EndArray(), Error);
  std::string other;
  JsonWriter array(other);
  array.BeginArray();
  EXPECT_THROW(array.Key("k"), Error) << "a key in an array";
  array.EndArray();
  EXPECT_THROW(array.Int(2), Error) << "a second top-level value";
}

}  // namespace
}  // namespace opscope::core
