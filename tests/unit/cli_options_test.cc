// The tools' option library (tools/cli/options.h): durations with units.
#include "tools/cli/options.h"

#include <gtest/gtest.h>

namespace latch::cli {
namespace {

TEST(CliDuration, Units) {
  EXPECT_EQ(ParseDuration("250us"), Micros(250));
  EXPECT_EQ(ParseDuration("500ms"), Micros(500'000));
  EXPECT_EQ(ParseDuration("8s"), Micros(8'000'000));
  EXPECT_EQ(ParseDuration("1.5s"), Micros(1'500'000));
  EXPECT_EQ(ParseDuration("2m"), Micros(120'000'000));
  EXPECT_EQ(ParseDuration("2min"), Micros(120'000'000));
  EXPECT_EQ(ParseDuration("1h"), Micros(3'600'000'000));
}

TEST(CliDuration, BareNumbersAndJunkAreRefusedWithAReason) {
  std::string why;
  EXPECT_EQ(ParseDuration("5000", &why), std::nullopt);
  EXPECT_EQ(why, "'5000' has no unit: write 5000ms or 5000s (units: us, ms, s, m, h)");
  EXPECT_EQ(ParseDuration("5 s", &why), std::nullopt);
  EXPECT_EQ(ParseDuration("5sec", &why), std::nullopt);
  EXPECT_EQ(why, "'5sec' has an unknown unit 'sec' (units: us, ms, s, m, h)");
  EXPECT_EQ(ParseDuration("soon", &why), std::nullopt);
  EXPECT_EQ(why, "'soon' is not a duration (e.g. 500ms, 8s, 2m)");
  EXPECT_EQ(ParseDuration("-1s", &why), std::nullopt);
  EXPECT_EQ(ParseDuration("8d", &why), std::nullopt);
  EXPECT_EQ(ParseDuration("200h", &why), std::nullopt);
  EXPECT_EQ(why, "'200h' is too long (at most a week)");
}

TEST(CliDuration, Format) {
  EXPECT_EQ(FormatDuration(Millis(250)), "250 ms");
  EXPECT_EQ(FormatDuration(Millis(1500)), "1.50 s");
  EXPECT_EQ(FormatDuration(Millis(125'000)), "2 min 5 s");
}

}  // namespace
}  // namespace latch::cli
