// The ACL rules (server/acl): parsing, describing back as Redis 7.0 does,
// and the check of a command's name, keys and channels.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/sha256.h"
#include "server/acl/users.h"
#include "server/command_keys.h"

namespace latch::acl {
namespace {

const CommandSpec& AclTestCmd(std::string_view name) {
  const CommandSpec* c = FindCommand(CommandRegistry::Get(), name);
  EXPECT_NE(c, nullptr) << name;
  return *c;
}

User AclTestUser(std::vector<std::string_view> rules) {
  User u("u", CommandRegistry::Get());
  auto err = u.ApplyAll(rules);
  EXPECT_FALSE(err.has_value()) << *err;
  return u;
}

Denied AclTestCheck(const User& u, std::vector<std::string_view> argv, int* pos = nullptr) {
  int p = 0;
  Denied d = u.Check(AclTestCmd(argv[0]), argv, &p);
  if (pos != nullptr) *pos = p;
  return d;
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(std::string(1000, 'a')),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
  // 55 and 56 bytes: the length fits in the last block, or needs another.
  EXPECT_EQ(Sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

TEST(AclRules, NewUserIsOffAndAllowedNothing) {
  User u("x", CommandRegistry::Get());
  EXPECT_EQ(u.Describe(), "off resetchannels -@all");
  EXPECT_FALSE(u.Unrestricted());
}

TEST(AclRules, DescribeInRedisOrder) {
  User u = AclTestUser({"on", ">pw", "~lock:app1:*", "%R~foo*", "&ch*", "+@read", "-get"});
  EXPECT_EQ(u.Describe(), "on #" + Sha256Hex("pw") +
                              " ~lock:app1:* %R~foo* resetchannels &ch* -@all +@read -get");
  User all = AclTestUser({"on", "nopass", "allkeys", "allchannels", "allcommands"});
  EXPECT_EQ(all.Describe(), "on nopass ~* &* +@all");
  EXPECT_TRUE(all.Unrestricted());
  User minus = AclTestUser({"+@all", "-@dangerous"});
  EXPECT_EQ(minus.selectors[0].DescribeCommands(), "+@all -@dangerous");
  User sel = AclTestUser({"(~x* +del)"});
  EXPECT_EQ(sel.Describe(), "off resetchannels -@all (~x* resetchannels -@all +del)");
}

TEST(AclRules, Errors) {
  User u("x", CommandRegistry::Get());
  std::vector<std::string_view> bad = {"+nosuch"};
  EXPECT_EQ(*u.ApplyAll(bad),
            "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL");
  std::vector<std::string_view> keys = {"allkeys", "~a"};
  EXPECT_NE(u.ApplyAll(keys)->find("'allkeys' flag"), std::string::npos);
  std::vector<std::string_view> open = {"(~a", "+get"};
  EXPECT_EQ(*u.ApplyAll(open), "Unmatched parenthesis in acl selector starting at '(~a'.");
  std::vector<std::string_view> sub = {"+config|get|x"};
  EXPECT_NE(u.ApplyAll(sub)->find("first-arg of a subcommand"), std::string::npos);
  // Nothing applied on failure.
  EXPECT_EQ(u.Describe(), "off resetchannels -@all");
}

TEST(AclRules, PasswordsAddRemoveAndCheck) {
  User u = AclTestUser({"on", ">a", ">b", "#" + std::string(64, 'c')});
  EXPECT_TRUE(u.CheckPassword("a"));
  EXPECT_TRUE(u.CheckPassword("b"));
  EXPECT_FALSE(u.CheckPassword("c"));
  EXPECT_FALSE(u.Apply("<a").has_value());
  EXPECT_FALSE(u.CheckPassword("a"));
  EXPECT_TRUE(u.Apply("<a").has_value());
  EXPECT_FALSE(u.Apply("nopass").has_value());
  EXPECT_TRUE(u.CheckPassword("anything"));
}

TEST(AclCheck, CommandsSubcommandsAndFirstArgs) {
  User u = AclTestUser({"on", "allkeys", "+get", "+config|get", "+select|0"});
  EXPECT_EQ(AclTestCheck(u, {"get", "k"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"set", "k", "v"}), Denied::kCommand);
  EXPECT_EQ(AclTestCheck(u, {"config|get", "maxmemory"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"config|set", "maxmemory", "1"}), Denied::kCommand);
  EXPECT_EQ(AclTestCheck(u, {"select", "0"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"select", "1"}), Denied::kCommand);
  // AUTH is always allowed.
  EXPECT_EQ(AclTestCheck(u, {"auth", "u", "p"}), Denied::kNone);
}

TEST(AclCheck, KeysWithReadAndWriteAccess) {
  User u = AclTestUser({"on", "+@all", "~lock:app1:*", "%R~r:*", "%W~w:*"});
  int pos = 0;
  EXPECT_EQ(AclTestCheck(u, {"set", "lock:app1:x", "v"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"del", "lock:app1:x", "lock:app2:x"}, &pos), Denied::kKey);
  EXPECT_EQ(pos, 2);
  EXPECT_EQ(AclTestCheck(u, {"get", "r:1"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"set", "r:1", "v"}), Denied::kKey);
  EXPECT_EQ(AclTestCheck(u, {"set", "w:1", "v"}), Denied::kNone);
  // SET … GET reads the old value too.
  EXPECT_EQ(AclTestCheck(u, {"set", "w:1", "v", "GET"}), Denied::kKey);
  EXPECT_EQ(AclTestCheck(u, {"get", "w:1"}), Denied::kKey);
  EXPECT_EQ(AclTestCheck(u, {"delifeq", "lock:app2:x", "v"}), Denied::kKey);
  EXPECT_EQ(AclTestCheck(u, {"lockinfo", "lock:app2:x"}), Denied::kKey);
  EXPECT_EQ(AclTestCheck(u, {"fence", "lock:app1:x"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"eval", "return 1", "1", "lock:app2:x"}), Denied::kKey);
  EXPECT_EQ(AclTestCheck(u, {"eval", "return 1", "0"}), Denied::kNone);
}

// The check walks a plain key range in place (CommandSpec::plain_keys) and
// collects positions otherwise (KeyPositions): for every command, at every
// argument count, a key the user may not reach must be refused exactly
// where KeyPositions says keys are.
TEST(AclCheck, InPlaceKeyWalkAgreesWithKeyPositions) {
  User u = AclTestUser({"on", "+@all", "~ok*"});
  size_t plain = 0;
  CommandRegistry::Get().ForEachCommand([&](const CommandSpec& cmd) {
    if (cmd.acl_special == CommandSpec::AclSpecial::kSort) return;  // its STORE key aside
    plain += cmd.plain_keys ? 1 : 0;
    const size_t bar = cmd.fullname.find('|');
    for (size_t argc = 1; argc <= 7; ++argc) {
      std::vector<std::string> words;
      words.push_back(cmd.fullname.substr(0, bar));
      if (bar != std::string::npos) words.push_back(cmd.fullname.substr(bar + 1));
      while (words.size() < argc) words.push_back("ok" + std::to_string(words.size()));
      for (size_t j = 1; j < argc; ++j) {
        std::vector<std::string_view> argv(words.begin(), words.end());
        argv[j] = "no";
        std::vector<std::pair<int, const KeySpec*>> positions;
        bool expect_refused = false;
        if (KeyPositions(cmd, argv, &positions, KeySpecsOf(cmd))) {
          for (const auto& [i, spec] : positions) {
            if (static_cast<size_t>(i) == j && !KeyAccessFor(cmd, *spec, argv).not_key) {
              expect_refused = true;
            }
          }
        }
        int pos = 0;
        const Denied d = u.Check(cmd, argv, &pos);
        EXPECT_EQ(d == Denied::kKey, expect_refused)
            << cmd.fullname << " argc " << argc << " at " << j;
        if (d == Denied::kKey) {
          EXPECT_EQ(pos, static_cast<int>(j)) << cmd.fullname;
        }
      }
    }
  });
  EXPECT_GT(plain, 100u);  // the in-place walk is the usual case
}

// The usual restricted user (`~prefix*`, read and write) is allowed by a
// shortcut; a change of rules changes it, and any other shape — or a
// refusal — takes the whole check.
TEST(AclCheck, PrefixUserShortcutFollowsTheRules) {
  User u = AclTestUser({"on", "+@all", "-@dangerous", "+sort", "~lock:*"});
  int pos = 0;
  EXPECT_EQ(AclTestCheck(u, {"set", "lock:a", "v", "NX", "PX", "100"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"mget", "lock:a", "lock:b", "other", "lock:c"}, &pos), Denied::kKey);
  EXPECT_EQ(pos, 3);
  EXPECT_EQ(AclTestCheck(u, {"flushall"}), Denied::kCommand);
  EXPECT_EQ(AclTestCheck(u, {"debug", "sleep", "0"}), Denied::kCommand);
  EXPECT_EQ(AclTestCheck(u, {"publish", "ch", "m"}), Denied::kChannel);
  EXPECT_EQ(AclTestCheck(u, {"sort", "lock:a", "STORE", "other"}), Denied::kKey);
  ASSERT_FALSE(u.ApplyAll(std::vector<std::string_view>{"resetkeys", "~app:*"}).has_value());
  EXPECT_EQ(AclTestCheck(u, {"set", "lock:a", "v"}), Denied::kKey);
  EXPECT_EQ(AclTestCheck(u, {"set", "app:a", "v"}), Denied::kNone);
  // Read only: not the shortcut's shape; SET is refused, GET allowed.
  ASSERT_FALSE(u.ApplyAll(std::vector<std::string_view>{"resetkeys", "%R~app:*"}).has_value());
  EXPECT_EQ(AclTestCheck(u, {"set", "app:a", "v"}), Denied::kKey);
  EXPECT_EQ(AclTestCheck(u, {"get", "app:a"}), Denied::kNone);
  // A pattern with a special character before its end: a glob, not a prefix.
  ASSERT_FALSE(u.ApplyAll(std::vector<std::string_view>{"resetkeys", "~a?p:*"}).has_value());
  EXPECT_EQ(AclTestCheck(u, {"set", "a?p:x", "v"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"set", "axp:x", "v"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"set", "ap:x", "v"}), Denied::kKey);
}

TEST(AclCheck, ChannelsAndLiteralPatterns) {
  User u = AclTestUser({"on", "+@all", "allkeys", "resetchannels", "&news:*"});
  EXPECT_EQ(AclTestCheck(u, {"publish", "news:1", "m"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"publish", "other", "m"}), Denied::kChannel);
  EXPECT_EQ(AclTestCheck(u, {"psubscribe", "news:*"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"psubscribe", "news:1*"}), Denied::kChannel);
  EXPECT_EQ(AclTestCheck(u, {"subscribe", "news:2", "x"}), Denied::kChannel);
}

TEST(AclCheck, SelectorsAnyMayAllow) {
  User u = AclTestUser({"on", "~a:*", "+get", "(~b:* +set)"});
  EXPECT_EQ(AclTestCheck(u, {"get", "a:1"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"set", "b:1", "v"}), Denied::kNone);
  EXPECT_EQ(AclTestCheck(u, {"set", "a:1", "v"}), Denied::kKey);
  EXPECT_EQ(AclTestCheck(u, {"del", "a:1"}), Denied::kCommand);
}

TEST(AclUsers, RequirepassAndLog) {
  Users users(CommandRegistry::Get());
  EXPECT_EQ(users.Default().Describe(), "on nopass ~* &* +@all");
  EXPECT_TRUE(users.Default().unrestricted_cache);
  users.SetRequirePass("pw");
  EXPECT_EQ(users.Default().Describe(), "on #" + Sha256Hex("pw") + " ~* &* +@all");
  auto err = users.Load("user default on nopass ~* &* +@all\nuser a on +nosuch\n", "f.acl");
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(*err,
            "f.acl:2: Error in applying operation '+nosuch': Unknown command or category name in "
            "ACL.");
  EXPECT_FALSE(users.Load("user b on ~x +get\n", "f.acl").has_value());
  ASSERT_NE(users.Find("b"), nullptr);
  EXPECT_EQ(users.Default().Describe(), "on nopass ~* &* +@all");
}

}  // namespace
}  // namespace latch::acl
