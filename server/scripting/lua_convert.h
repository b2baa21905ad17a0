// Redis 7.0's conversions between replies and Lua values, both ways.
//
// A command's reply → Lua (what redis.call returns), script_lua.c's
// redisProtocolToLuaType:
//   integer → number; bulk → string; RESP2 null bulk or null array → false,
//   RESP3 null → nil; array → table 1..n; status → {ok = s};
//   error → {err = "CODE msg"}; and from RESP3 (redis.setresp(3)):
//   map → {map = {k = v}}, set → {set = {k = true}}, double → {double = n},
//   boolean → boolean, big number → {big_number = s},
//   verbatim → {verbatim_string = {format = f, string = s}}.
//
// A Lua value → the script's reply, luaReplyToRedisReply:
//   string → bulk; number → integer (truncated); true → 1 (RESP3: #t);
//   false → nil (RESP3: #f); nil and anything else → nil;
//   table → {err=…} an error, {ok=…} a status, {double=…}, {big_number=…},
//   {verbatim_string=…}, {map=…}, {set=…}, else an array of t[1], t[2]… up
//   to the first nil. Tables nested past Lua's stack limit end in
//   "reached lua stack limit" at that depth, as in Redis.
// The Lua value is first turned into a resp::Reply (reading Lua only), then
// written as a reply: no C++ object is ever built while Lua could raise.
#pragma once

#include <lua.hpp>

#include "protocol/reply_parser.h"
#include "protocol/reply_sink.h"

namespace latch::scripting {

// Pushes `r` (captured in protocol `resp`) as Lua sees it. May raise a Lua
// error (memory).
void PushReply(lua_State* L, const resp::Reply& r, int resp);

// Converts the value on top of the stack and pops it. Raises nothing (call
// it outside the memory limit's scope). Booleans stay kBoolean: how they
// are written depends on the script's protocol, in WriteReply.
void PopReply(lua_State* L, resp::Reply* out);

// Writes a converted value to the client (script_resp: the script's own
// protocol, redis.setresp's, which decides how booleans look).
void WriteReply(const resp::Reply& v, resp::ReplySink& out, int script_resp);

// Lua's (long long)number, defined for every double (NaN and out-of-range
// values give INT64_MIN, as x86-64's conversion does in Redis).
int64_t LuaNumberToInt(lua_Number n);

}  // namespace latch::scripting
