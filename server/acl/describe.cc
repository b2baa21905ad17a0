// Users printed back as rules (ACL LIST, ACL GETUSER, ACL SAVE), in Redis
// 7.0's words and order (ACLDescribeUser): flags, passwords, then each
// selector's keys, channels and commands.
#include <algorithm>

#include "server/acl/user.h"

namespace latch::acl {

namespace {

// How many commands (and subcommands) of `category` `bits` allows and
// refuses (ACLCountCategoryBitsForSelector).
void Count(const CommandRegistry& r, const std::vector<bool>& bits, std::string_view category,
           size_t* on, size_t* off) {
  *on = *off = 0;
  r.ForEachCommand([&](const CommandSpec& c) {
    if (InCategory(c, category)) ++(bits[c.index] ? *on : *off);
  });
}

}  // namespace

// The command rules: "+@all" or "-@all", then the categories that fit the
// allowed commands best, then the single commands that still differ
// (ACLDescribeSelectorCommandRules). Redis lists those single commands in
// its command table's hash order; latch in its registry's order.
std::string Selector::DescribeCommands() const {
  const bool additive = !future_commands;
  std::string rules = additive ? "-@all " : "+@all ";
  Selector fake(*registry);
  (void)fake.Apply(additive ? "-@all" : "+@all");
  Selector temp = *this;
  std::vector<bool> applied(Categories().size(), false);
  while (true) {
    int best = -1;
    size_t min_diff = SIZE_MAX, max_same = 0;
    for (size_t j = 0; j < Categories().size(); ++j) {
      if (applied[j]) continue;
      size_t on, off;
      Count(*registry, temp.allowed, Categories()[j], &on, &off);
      const size_t diff = additive ? off : on;
      const size_t same = additive ? on : off;
      if (same > diff && (diff < min_diff || (diff == min_diff && same > max_same))) {
        best = static_cast<int>(j);
        min_diff = diff;
        max_same = same;
      }
    }
    if (best < 0) break;
    const std::string cat(Categories()[static_cast<size_t>(best)]);
    (void)fake.Apply((additive ? "+@" : "-@") + cat);
    (void)temp.Apply((additive ? "-@" : "+@") + cat);
    rules += (additive ? "+@" : "-@") + cat + " ";
    applied[static_cast<size_t>(best)] = true;
  }
  auto single = [&](const CommandSpec& c) {
    const bool user_bit = allowed[c.index];
    if (user_bit != fake.allowed[c.index]) {
      rules += (user_bit ? "+" : "-") + c.fullname + " ";
      fake.allowed[c.index] = user_bit;
      for (const CommandSpec& s : c.subcommands) fake.allowed[s.index] = user_bit;
    }
  };
  for (const CommandSpec& c : registry->commands()) {
    single(c);
    for (const CommandSpec& s : c.subcommands) single(s);
    if (!allowed[c.index]) {
      for (const std::string& a : first_args[c.index]) rules += "+" + c.fullname + "|" + a + " ";
    }
  }
  rules.pop_back();
  return rules;
}

std::string Selector::DescribeKeys() const {
  if (all_keys) return "~*";
  std::string out;
  for (const KeyPattern& k : keys) {
    if (!out.empty()) out += ' ';
    out += k.perms == kPermAll ? "~" : k.perms == kPermRead ? "%R~" : "%W~";
    out += k.pattern;
  }
  return out;
}

std::string Selector::DescribeChannels() const {
  if (all_channels) return "&*";
  std::string out;
  for (const std::string& c : channels) {
    if (!out.empty()) out += ' ';
    out += "&" + c;
  }
  return out;
}

std::string Selector::Describe() const {
  std::string out;
  if (all_keys || !keys.empty()) out += DescribeKeys() + " ";
  if (all_channels) {
    out += "&* ";
  } else {
    out += "resetchannels ";
    if (!channels.empty()) out += DescribeChannels() + " ";
  }
  return out + DescribeCommands();
}

std::string User::DescribeFlags(bool with_space) const {
  std::string out;
  auto add = [&](std::string_view f) {
    out += f;
    if (with_space) out += ' ';
  };
  add(enabled ? "on" : "off");
  if (nopass) add("nopass");
  if (sanitize == 2) add("skip-sanitize-payload");
  if (sanitize == 1) add("sanitize-payload");
  return out;
}

std::string User::Describe() const {
  std::string out = DescribeFlags(true);
  for (const std::string& p : passwords) out += "#" + p + " ";
  for (const Selector& s : selectors) {
    if (s.root) {
      out += s.Describe();
    } else {
      out += " (" + s.Describe() + ")";
    }
  }
  return out;
}

}  // namespace latch::acl
