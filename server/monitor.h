// MONITOR: every executed command, in Redis's line format.
//
// MONITOR shows the order in which the one loop executed the commands: that
// order is the whole atomicity story (docs/guide.md uses it to show why a
// SET NX or a DELIFEQ cannot be interleaved with another client's command).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace latch {

struct CommandSpec;

// `+1700000000.123456 [0 127.0.0.1:50000] "set" "k" "v"\r\n` (0: the
// client's database), with
// passwords redacted as Redis 7 does.
std::string MonitorLine(int64_t wall_us, int db, std::string_view addr,
                        std::span<const std::string_view> argv, const CommandSpec& cmd);

}  // namespace latch
