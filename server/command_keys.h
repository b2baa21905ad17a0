// Where a command's keys are in its arguments, from its key specs, as Redis
// 7.0's getKeysUsingKeySpecs finds them: COMMAND GETKEYS reports them, and
// the ACL check (server/acl) tests each against the user's key patterns
// with the access its spec's flags say (read, write).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/command.h"

namespace latch {

// A command's key specs: its own (KeySpecs), or the one its legacy key
// range makes (first, last, step), as COMMAND INFO reports them. (The
// registry resolves both into CommandSpec::key_specs: no copy.)
std::span<const KeySpec> KeySpecsOf(const CommandSpec& cmd);

// The positions of the keys in `argv` (the command's own, argv[0] its
// name), spec by spec, each with its spec. False when a spec does not fit
// the arguments (numkeys past them, or less than one): Redis then asks the
// command's getkeys procedure, which finds no key either.
bool KeyPositions(const CommandSpec& cmd, std::span<const std::string_view> argv,
                  std::vector<std::pair<int, const KeySpec*>>* out, std::span<const KeySpec> specs);

// The key SORT / SORT_RO stores into (STORE key), which no key spec can
// find: Redis's sortGetKeys. The ACL check tests it for writing.
std::optional<int> SortStoreKey(std::span<const std::string_view> argv);

// The flags of one key of `cmd` sent with `argv`: the spec's, except for a
// spec with variable_flags, whose flags the arguments decide (Redis's
// getkeys procedures): SET overwrites (OW update) unless GET reads the old
// value (RW access update).
std::vector<std::string> KeyFlagsFor(const CommandSpec& cmd, const KeySpec& spec,
                                     std::span<const std::string_view> argv);

// The same as the ACL check needs it, without building strings: whether
// the key is read and/or changed, or is no key at all.
struct KeyAccess {
  bool reads = false, writes = false, not_key = false;
};
// SET's rule: whether GET is among its options (the old value is read).
bool SetReadsOldValue(std::span<const std::string_view> argv);
inline KeyAccess KeyAccessFor(const CommandSpec& cmd, const KeySpec& spec,
                              std::span<const std::string_view> argv) {
  // SET overwrites (OW update), or reads the old value too with GET (RW
  // access update): KeyFlagsFor's rule.
  if (spec.variable_flags && cmd.acl_special == CommandSpec::AclSpecial::kSet) {
    return KeyAccess{SetReadsOldValue(argv), true, false};
  }
  return KeyAccess{spec.reads, spec.writes, spec.not_key};
}

}  // namespace latch
