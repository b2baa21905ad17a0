#include "server/command_keys.h"

#include <algorithm>
#include <cstdlib>

#include "protocol/text.h"

namespace latch {

// A command's key specs: its own (KeySpecs), or the one its legacy key
// range makes (first, last, step), as COMMAND INFO reports them.
std::span<const KeySpec> KeySpecsOf(const CommandSpec& cmd) {
  return cmd.key_specs;
}

namespace {

// A key found by a command's getkeys procedure rather than by its specs
// carries no flags (Redis's genericGetKeys sets 0): the ACL then asks only
// that some key pattern matches it, whatever its read/write access.
const KeySpec kNoFlags{};

// C's atoi, which Redis's genericGetKeys uses for numkeys: leading white
// space, a sign, digits up to the first other character; a value past
// long's range saturates, then is cut to int as a C cast does.
int Atoi(std::string_view text) {
  const std::string copy(text);  // strtol stops at a NUL as atoi does
  return static_cast<int>(std::strtol(copy.c_str(), nullptr, 10));
}

// Redis's genericGetKeys(storeKeyOfs, keyCountOfs, firstKeyOfs, 1), the
// getkeys procedure of every command whose keys are counted (EVAL, FCALL,
// ZUNIONSTORE, LMPOP…), which Redis falls back to when a spec does not fit
// the arguments: numkeys "01", "+1" or " 1" is no number to the spec's
// parser (string2ll) but is 1 to atoi.
void GenericKeys(std::span<const std::string_view> argv, std::span<const KeySpec> specs,
                 const KeySpec& counted, std::vector<std::pair<int, const KeySpec*>>* out) {
  out->clear();
  const int argc = static_cast<int>(argv.size());
  const int count_at = counted.index + counted.keynumidx;
  const int first = counted.index + counted.firstkey;
  if (count_at >= argc) return;
  const int num = Atoi(argv[static_cast<size_t>(count_at)]);
  if (num < 1 || num > (argc - first)) return;
  for (int i = 0; i < num; ++i) out->emplace_back(first + i, &kNoFlags);
  // The destination of the *STORE forms (a plain spec before the count).
  for (const KeySpec& spec : specs) {
    if (&spec != &counted && !spec.keynum && !spec.unknown && spec.index < count_at) {
      out->emplace_back(spec.index, &kNoFlags);
    }
  }
}

}  // namespace

// The positions of the keys in `argv` (the command's own, argv[0] its
// name), spec by spec, each with its spec's flags, as Redis 7.0's
// getKeysUsingKeySpecs finds them. False when a spec does not fit the
// arguments (numkeys past them, or less than one): Redis then asks the
// command's getkeys procedure, which finds no key either — except for a
// count it reads differently (GenericKeys).
bool KeyPositions(const CommandSpec& cmd, std::span<const std::string_view> argv,
                  std::vector<std::pair<int, const KeySpec*>>* out,
                  std::span<const KeySpec> specs) {
  const int argc = static_cast<int>(argv.size());
  for (const KeySpec& spec : specs) {
    if (spec.unknown) continue;  // the command finds those itself
    int first = spec.index, last;
    const int step = std::max(spec.keystep, 1);
    if (spec.keynum) {
      std::optional<int64_t> numkeys;
      if (spec.keynumidx < argc - first) {
        numkeys = ParseInt64(argv[static_cast<size_t>(first + spec.keynumidx)]);
      }
      const int64_t l = numkeys ? first + spec.firstkey + *numkeys - 1 : 0;
      if (!numkeys || *numkeys < 1 || l >= argc) {
        // The spec does not fit: the command's getkeys procedure decides.
        GenericKeys(argv, specs, spec, out);
        return true;
      }
      first += spec.firstkey;
      last = static_cast<int>(l);
    } else if (spec.lastkey >= 0) {
      last = first + spec.lastkey;
    } else if (spec.limit == 0) {
      last = argc + spec.lastkey;
    } else {
      last = first + ((argc - first) / spec.limit + spec.lastkey);
    }
    if (last >= argc || last < first || first >= argc) {
      // Past the arguments given: a command of variable arity reports the
      // error itself when it runs, so there is simply no key there.
      if (!spec.keynum && cmd.arity < 0 && first < argc) last = argc - 1;
      if (last >= argc || last < first || first >= argc) return false;
    }
    for (int i = first; i <= last; i += step) out->emplace_back(i, &spec);
  }
  return true;
}

std::optional<int> SortStoreKey(std::span<const std::string_view> argv) {
  // As Redis's sortGetKeys: skip each option's arguments, so that a value
  // that reads "store" is not taken for the option.
  std::optional<int> found;
  // The words compared as C strings, as SORT's own parser and Redis's
  // strcasecmp read them: "STORE\0x" is STORE.
  for (size_t i = 2; i < argv.size(); ++i) {
    const std::string_view word = UpToNul(argv[i]);
    if (EqualsIgnoreCase(word, "LIMIT")) {
      i += 2;
    } else if (EqualsIgnoreCase(word, "GET") || EqualsIgnoreCase(word, "BY")) {
      i += 1;
    } else if (EqualsIgnoreCase(word, "STORE") && i + 1 < argv.size()) {
      found = static_cast<int>(i + 1);  // the last STORE wins, as in Redis
      i += 1;
    }
  }
  return found;
}

std::vector<std::string> KeyFlagsFor(const CommandSpec& cmd, const KeySpec& spec,
                                     std::span<const std::string_view> argv) {
  std::vector<std::string> declared = spec.flags;
  if (std::find(declared.begin(), declared.end(), "variable_flags") != declared.end()) {
    std::erase(declared, std::string("variable_flags"));
    if (cmd.acl_special == CommandSpec::AclSpecial::kSet) {
      const bool get = SetReadsOldValue(argv);
      declared = get ? std::vector<std::string>{"RW", "access", "update"}
                     : std::vector<std::string>{"OW", "update"};
    }
  }
  return declared;
}

bool SetReadsOldValue(std::span<const std::string_view> argv) {
  // As SET's parser and Redis's setGetKeys read it: a C string, so
  // "GET\0…" is GET (and asks for read access too).
  bool get = false;
  for (size_t i = 3; i < argv.size(); ++i) {
    const std::string_view word = UpToNul(argv[i]);
    get |= word.size() == 3 && EqualsIgnoreCase(word, "GET");
  }
  return get;
}

}  // namespace latch
