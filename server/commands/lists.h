// What the list family's two files share (lists.cc: pushes, pops, reads,
// LSET, LINSERT, LREM, LTRIM, LPOS; list_moves.cc: the moves, LMPOP and the
// blocking pops).
#pragma once

#include <cstdint>
#include <string_view>

#include "server/commands/common.h"
#include "server/types/list.h"

namespace latch::commands {

// The list at `key`: true with *entry/*list (both nullptr when absent);
// false after replying WRONGTYPE.
inline bool FindList(CommandContext& ctx, std::string_view key, const Keyspace::Entry** entry,
                     const ListValue** list, Access access) {
  if (!FindTyped(ctx, key, ValueType::kList, entry, access)) return false;
  *list = *entry != nullptr ? static_cast<const ListValue*>((*entry)->object()) : nullptr;
  return true;
}

// The lease deadline a write to `e` works under (AdmitGrant's argument).
inline int64_t DeadlineOf(const Keyspace::Entry* e) {
  return e != nullptr ? e->deadline : kNoDeadline;
}

// LEFT / RIGHT (case-insensitive): false after replying the syntax error.
bool ListEndOrReply(CommandContext& ctx, std::string_view arg, ListValue::End* end);

// Pops up to `count` elements from `end` of the list at `key` (which holds
// `list`, non-empty) and replies them: a bulk for a single pop
// (`as_array` false), else an array, in the order popped. The effect is
// logged as LPOP/RPOP key n. The caller admitted the grant.
void PopAndReply(CommandContext& ctx, std::string_view key, const ListValue& list,
                 ListValue::End end, int64_t count, bool as_array);

// LMOVE's work once `src` (holding `from_list`, non-empty) is known:
// checks the destination's type, admits the grant, pops from `from` and
// pushes to `to` as one unit, and replies the element.
void MoveAndReply(CommandContext& ctx, std::string_view src, const Keyspace::Entry* src_entry,
                  std::string_view dst, ListValue::End from, ListValue::End to);

}  // namespace latch::commands
