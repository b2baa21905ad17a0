// The known lock scripts (server/known_scripts.*) through Server::Dispatch on
// a ManualClock: EVAL/EVALSHA/SCRIPT, and each script's replies byte for
// byte, including the edge cases (key missing, value mismatch, multi-key
// partial matches, bad arguments) and the effects written to the log.
//
// Every fixture test runs twice (the parameter): once with the native fast
// path (known-scripts-native yes), once with the same texts run by Lua
// (no). The same expected replies and the same log records both ways are
// the proof that the native equivalents are exactly the scripts.
//
// The expected replies and error texts are Redis 7.0's for the same script
// (checked against Debian's redis-server; tests/integration/
// test_lock_libraries.py also compares them live, case by case).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "command_fixture.h"
#include "common/sha1.h"
#include "log/record.h"
#include "logged_records.h"
#include "server/command.h"
#include "server/scripting/known_scripts.h"
#include "test_server.h"

namespace latch {
namespace {

using resp::Reply;
using scripting::FindKnownScript;
using scripting::FindKnownScriptByText;
using scripting::KnownScript;
using test::Arr;
using test::Bulk;
using test::Int;
using test::kNull;
using test::kOk;
using test::Req;
using test::TestServer;

// The SHA1s, as each library computes them (and Redis from the bytes sent).
constexpr const char* kRedlockLock = "e5a322e2634ef59a516e8ea150cb085afafee684";
constexpr const char* kRedlockUnlock = "0f0f23b9048b36752b5be114f357ba083449f908";
constexpr const char* kRedlockExtend = "ce46f80993d5dac20dd066eb301a4e37994bdbed";
constexpr const char* kSesameAcquire = "1b77b94aa78451d55dfa97e18819bfbfc596cb5b";
constexpr const char* kSesameExtend = "820e9778d2b6733e9ed771e4be90ae73a95a6f3b";
constexpr const char* kSesameRelease = "df51f6837dcfe303d334e6abea9aeae192bab216";
constexpr const char* kSemRelease = "7157921a7cc7cfba979acf6d63f073151df17d12";
constexpr const char* kSemRefresh = "594683e49a64ebaf975caf5f8079a1d097c438f1";
constexpr const char* kUniDelete = "fd83166fb3d7235e3ace652b700c9e217c1adc1f";
constexpr const char* kUniExtend = "e218d686a8f90368e5cd45074f06ce766cad9987";
constexpr const char* kUniAtomicExtend = "c000e088bd4aca36ab429d3b7a16fc736f4cb6f1";
constexpr const char* kUniBatch = "514d8d1b08387624661da2a9098d3949b633eb3a";
constexpr const char* kUniInspect = "994908155dadb1bed08a5af6dee7fedf956c4826";
constexpr const char* kPyRelease = "c3f8721cbb97f72bc19e972846bd7aaf91901658";
constexpr const char* kPyExtend = "a4e8783852e6b949f9ef3a97212805108459a890";
constexpr const char* kPyReacquire = "1cac51482acf5858da00f6d685d68f886cd6b6b2";

const std::vector<std::string> kAllShas = {
    kRedlockLock, kRedlockUnlock, kRedlockExtend, kSesameAcquire, kSesameExtend,    kSesameRelease,
    kSemRelease,  kSemRefresh,    kUniDelete,     kUniExtend,     kUniAtomicExtend, kUniBatch,
    kUniInspect,  kPyRelease,     kPyExtend,      kPyReacquire};

const std::string kNoScript = "-NOSCRIPT No matching script. Please use EVAL.\r\n";

// An error raised by redis.call() inside a script, as Redis 7.0 words it.
std::string CallErr(std::string_view text, std::string_view sha, int line) {
  return "-" + std::string(text) + " script: " + std::string(sha) +
         ", on @user_script:" + std::to_string(line) + ".\r\n";
}
// A Lua runtime error.
std::string LuaErr(std::string_view msg, std::string_view sha, int line) {
  return CallErr("ERR user_script:" + std::to_string(line) + ": " + std::string(msg), sha, line);
}
constexpr std::string_view kNilArg =
    "ERR Lua redis lib command arguments must be strings or integers";
constexpr std::string_view kNotIntText = "ERR value is not an integer or out of range";
constexpr std::string_view kReadOnly = "ERR Write commands are not allowed from read-only scripts.";

const KnownScript& Script(std::string_view sha) {
  const KnownScript* s = FindKnownScript(sha);
  EXPECT_NE(s, nullptr) << sha;
  return *s;
}

Config UncappedConfig() {
  Config c = test::TestConfig();
  c.max_lock_ttl = 0;
  return c;
}

class KnownScriptsTest : public ::testing::TestWithParam<bool> {
 protected:
  explicit KnownScriptsTest(Config config = UncappedConfig()) : ts_(WithMode(std::move(config))) {
    ts_.server().store().set_log(&batch_);
    // The script cache starts empty, as Redis's: the libraries' scripts are
    // loaded first, as a library does on NOSCRIPT.
    for (const KnownScript& s : KnownScripts()) {
      EXPECT_EQ(Run({"SCRIPT", "LOAD", std::string(s.text())}), Bulk(s.sha1));
    }
  }
  static Config WithMode(Config c) {
    c.known_scripts_native = GetParam();
    return c;
  }
  bool native() const { return GetParam(); }
  ~KnownScriptsTest() override { ts_.server().store().set_log(nullptr); }

  std::string Run(const std::vector<std::string>& args) { return ts_.Run(args); }
  // EVALSHA sha numkeys keys… args…
  std::string Sha(std::string_view sha, const std::vector<std::string>& keys,
                  const std::vector<std::string>& args = {}, std::string_view cmd = "EVALSHA") {
    std::vector<std::string> argv = {std::string(cmd), std::string(sha),
                                     std::to_string(keys.size())};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv);
  }
  // EVAL text numkeys keys… args…
  std::string Eval(std::string_view text, const std::vector<std::string>& keys,
                   const std::vector<std::string>& args = {}, std::string_view cmd = "EVAL") {
    std::vector<std::string> argv = {std::string(cmd), std::string(text),
                                     std::to_string(keys.size())};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv);
  }
  std::string Get(const std::string& k) { return Run({"GET", k}); }
  std::string PTtl(const std::string& k) { return Run({"PTTL", k}); }
  // The records logged since the last call, without clock annotations.
  std::string Logged() { return test::TakeLogged(batch_); }
  std::string WallPlus(int64_t ms) { return std::to_string(ts_.clock().WallMs() + ms); }
  void SetPx(const std::string& k, const std::string& v, int64_t ms) {
    ASSERT_EQ(Run({"SET", k, v, "PX", std::to_string(ms)}), kOk);
  }

  TestServer ts_;
  aof::Batch batch_;
};

// ------------------------------------------------------------------ the table

TEST(Sha1, KnownVectors) {
  EXPECT_EQ(Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  // 56 bytes: the padding needs a second block.
  EXPECT_EQ(Sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(Sha1Hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  EXPECT_EQ(Sha1Hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");  // Redis's
  EXPECT_EQ(Sha1Hex(std::string(64, 'x')), "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163");
}

TEST(KnownScriptTable, EveryEntryIsTheHashOfItsText) {
  std::set<std::string> shas;
  for (const KnownScript& s : KnownScripts()) {
    EXPECT_EQ(Sha1Hex(s.text()), s.sha1) << s.library << " " << s.name;
    EXPECT_EQ(s.sha1.size(), 40u);
    EXPECT_EQ(s.sha1.find_first_not_of("0123456789abcdef"), std::string_view::npos);
    EXPECT_FALSE(s.library.empty());
    EXPECT_FALSE(s.version.empty());
    EXPECT_FALSE(s.file.empty());
    EXPECT_FALSE(s.name.empty());
    EXPECT_GT(s.summary.size(), 40u);
    EXPECT_NE(s.run, nullptr);
    EXPECT_TRUE(shas.insert(std::string(s.sha1)).second) << "duplicate " << s.sha1;
    EXPECT_EQ(FindKnownScriptByText(s.text()), &s);
  }
  // Exactly the scripts listed above, no more.
  EXPECT_EQ(shas, std::set<std::string>(kAllShas.begin(), kAllShas.end()));
  EXPECT_EQ(KnownScripts().size(), 16u);
}

TEST(KnownScriptTable, LookupIgnoresCaseButNotLength) {
  EXPECT_NE(FindKnownScript("E5A322E2634EF59A516E8EA150CB085AFAFEE684"), nullptr);
  EXPECT_EQ(FindKnownScript("e5a322e2634ef59a516e8ea150cb085afafee68"), nullptr);
  EXPECT_EQ(FindKnownScript("e5a322e2634ef59a516e8ea150cb085afafee6840"), nullptr);
  EXPECT_EQ(FindKnownScript(""), nullptr);
  EXPECT_EQ(FindKnownScriptByText("return 1"), nullptr);
}

TEST(KnownScriptTable, LibrariesSummary) {
  std::string libs = KnownScriptLibraries();
  for (const char* want :
       {"redlock 4.2.0 (lockScript, unlockScript, extendScript)", "@sesamecare-oss/redlock 1.4.0",
        "redis-semaphore 5.8.0 (delIfEqualLua, expireIfEqualLua)", "redlock-universal 0.8.5",
        "python3-redis 4.3.4"}) {
    EXPECT_NE(libs.find(want), std::string::npos) << libs;
  }
}

// ------------------------------------------------------------------ EVAL, EVALSHA, SCRIPT

TEST_P(KnownScriptsTest, EvalShaUnknownIsNoScript) {
  EXPECT_EQ(Run({"EVALSHA", std::string(40, 'a'), "1", "k"}), kNoScript);
  EXPECT_EQ(Run({"EVALSHA", "abc", "0"}), kNoScript);
  // A digest that is not 40 characters long is NOSCRIPT before numkeys is read.
  EXPECT_EQ(Run({"EVALSHA", "abc", "5", "k"}), kNoScript);
  EXPECT_EQ(Run({"EVALSHA", "abc", "x"}), kNoScript);
  EXPECT_EQ(Run({"EVALSHA_RO", std::string(40, 'f'), "0"}), kNoScript);
}

TEST_P(KnownScriptsTest, NumKeysValidationAsRedis) {
  for (std::string cmd : {"EVALSHA", "EVALSHA_RO"}) {
    EXPECT_EQ(Run({cmd, kPyRelease, "x", "k"}), "-ERR value is not an integer or out of range\r\n");
    EXPECT_EQ(Run({cmd, kPyRelease, "2", "k"}),
              "-ERR Number of keys can't be greater than number of args\r\n");
    EXPECT_EQ(Run({cmd, kPyRelease, "-1", "k"}), "-ERR Number of keys can't be negative\r\n");
    EXPECT_EQ(Run({cmd, std::string(40, 'a'), "-1"}), "-ERR Number of keys can't be negative\r\n");
  }
  for (std::string cmd : {"EVAL", "EVAL_RO"}) {
    EXPECT_EQ(Run({cmd, "return 1", "abc", "k"}),
              "-ERR value is not an integer or out of range\r\n");
    EXPECT_EQ(Run({cmd, "return 1", "5", "k"}),
              "-ERR Number of keys can't be greater than number of args\r\n");
    EXPECT_EQ(Run({cmd, "return 1", "-1", "k"}), "-ERR Number of keys can't be negative\r\n");
  }
  EXPECT_EQ(Run({"EVAL", "return 1"}), "-ERR wrong number of arguments for 'eval' command\r\n");
  EXPECT_EQ(Run({"EVALSHA", kPyRelease}),
            "-ERR wrong number of arguments for 'evalsha' command\r\n");
}

TEST_P(KnownScriptsTest, OtherScriptsRunInLua) {
  EXPECT_EQ(Run({"EVAL", "return 1", "0"}), Int(1));
  EXPECT_EQ(Run({"SCRIPT", "LOAD", "return 1"}), Bulk("e0e1f9fabfc9d4800c877a703b823ac0578ff8db"));
  EXPECT_EQ(Run({"EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k"}), kNull);
}

TEST_P(KnownScriptsTest, OneByteDifferentIsAnotherScript) {
  for (const KnownScript& s : KnownScripts()) {
    std::string text(s.text());
    std::vector<std::string> variants;
    for (size_t pos : {size_t{0}, text.size() / 2, text.size() - 1}) {
      std::string v = text;
      v[pos] = static_cast<char>(v[pos] ^ 0x20);
      variants.push_back(v);
    }
    variants.push_back(text + " ");
    variants.push_back(text + "\n");
    variants.push_back(text.substr(1));
    variants.push_back(text.substr(0, text.size() - 1));
    for (const std::string& v : variants) {
      EXPECT_EQ(FindKnownScriptByText(v), nullptr);
      EXPECT_EQ(Run({"EVALSHA", Sha1Hex(v), "1", "k", "a", "b", "c"}), kNoScript);
    }
  }
}

TEST_P(KnownScriptsTest, EvalOfTheExactTextRunsIt) {
  const KnownScript& lock = Script(kRedlockLock);
  EXPECT_EQ(Eval(lock.text(), {"k"}, {"tok", "5000"}), Int(1));
  EXPECT_EQ(Get("k"), Bulk("tok"));
  EXPECT_EQ(Eval(Script(kRedlockUnlock).text(), {"k"}, {"tok"}), Int(1));
  EXPECT_EQ(Get("k"), kNull);
  // SCRIPT FLUSH forgets them, as Redis: NOSCRIPT until EVAL or SCRIPT LOAD.
  EXPECT_EQ(Run({"SCRIPT", "FLUSH"}), kOk);
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"tok", "5000"}), kNoScript);
  EXPECT_EQ(Run({"SCRIPT", "EXISTS", kRedlockLock}), Arr({Int(0)}));
  EXPECT_EQ(Eval(lock.text(), {"k"}, {"tok", "5000"}), Int(1));
  EXPECT_EQ(Run({"SCRIPT", "EXISTS", kRedlockLock}), Arr({Int(1)}));
  EXPECT_EQ(Run({"SCRIPT", "LOAD", std::string(Script(kRedlockUnlock).text())}),
            Bulk(kRedlockUnlock));
  // The digest is case-insensitive, as in Redis.
  std::string upper = kRedlockUnlock;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(Sha(upper, {"k"}, {"tok"}), Int(1));
}

TEST_P(KnownScriptsTest, ScriptSubcommands) {
  for (const std::string& sha : kAllShas) {
    EXPECT_EQ(Run({"SCRIPT", "LOAD", std::string(Script(sha).text())}), Bulk(sha));
  }
  EXPECT_EQ(Run({"SCRIPT", "EXISTS", kRedlockLock, std::string(40, 'a'), kPyExtend, "abc",
                 "A4E8783852E6B949F9EF3A97212805108459A890"}),
            Arr({Int(1), Int(0), Int(1), Int(0), Int(1)}));
  EXPECT_EQ(Run({"SCRIPT", "EXISTS"}),
            "-ERR wrong number of arguments for 'script|exists' command\r\n");
  EXPECT_EQ(Run({"SCRIPT", "LOAD"}),
            "-ERR wrong number of arguments for 'script|load' command\r\n");
  EXPECT_EQ(Run({"SCRIPT", "LOAD", "a", "b"}),
            "-ERR wrong number of arguments for 'script|load' command\r\n");
  EXPECT_EQ(Run({"SCRIPT", "FLUSH"}), kOk);
  EXPECT_EQ(Run({"script", "flush", "async"}), kOk);
  EXPECT_EQ(Run({"SCRIPT", "FLUSH", "SYNC"}), kOk);
  const std::string flush_err = "-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n";
  EXPECT_EQ(Run({"SCRIPT", "FLUSH", "foo"}), flush_err);
  EXPECT_EQ(Run({"SCRIPT", "FLUSH", "SYNC", "ASYNC"}), flush_err);
  EXPECT_EQ(Run({"SCRIPT", "KILL"}), "-NOTBUSY No scripts in execution right now.\r\n");
  EXPECT_EQ(Run({"SCRIPT"}), "-ERR wrong number of arguments for 'script' command\r\n");
  EXPECT_EQ(Run({"SCRIPT", "foo"}), "-ERR unknown subcommand 'foo'. Try SCRIPT HELP.\r\n");
  Reply help = ts_.RunParsed({"SCRIPT", "HELP"});
  ASSERT_EQ(help.type, Reply::Type::kArray);
  std::string all;
  for (const Reply& line : help.elements) {
    EXPECT_EQ(line.type, Reply::Type::kSimple);
    all += line.str + "\n";
  }
  EXPECT_EQ(help.elements[0].str,
            "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  EXPECT_NE(all.find("LOAD <script>"), std::string::npos);
}

TEST_P(KnownScriptsTest, CommandTableRows) {
  const CommandRegistry& t = CommandRegistry::Get();
  for (const char* name : {"eval", "evalsha", "eval_ro", "evalsha_ro"}) {
    const CommandSpec* c = t.Find(name);
    ASSERT_NE(c, nullptr) << name;
    // Each known script decides on its path whether it grants a lease.
    EXPECT_FALSE(c->has(kCmdGrantsLease)) << name;
    EXPECT_FALSE(c->has(kCmdWrite)) << name;
    EXPECT_EQ(c->arity, -3);
  }
  const CommandSpec* script = t.Find("script");
  ASSERT_NE(script, nullptr);
  std::set<std::string> subs;
  for (const CommandSpec& s : script->subcommands) subs.insert(s.name);
  EXPECT_EQ(subs, (std::set<std::string>{"debug", "load", "exists", "flush", "kill", "help"}));
}

TEST_P(KnownScriptsTest, InfoCountsScripts) {
  EXPECT_EQ(Sha(kPyRelease, {"k"}, {"t"}), Int(0));
  EXPECT_EQ(Sha(kPyRelease, {"k"}, {"t"}), Int(0));
  Reply info = ts_.RunParsed({"INFO", "latch"});
  EXPECT_NE(info.str.find("known_scripts:16\r\n"), std::string::npos) << info.str;
  EXPECT_NE(info.str.find(native() ? "known_script_calls:2\r\n" : "known_script_calls:0\r\n"),
            std::string::npos)
      << info.str;
  EXPECT_NE(info.str.find(native() ? "lua_script_calls:0\r\n" : "lua_script_calls:2\r\n"),
            std::string::npos)
      << info.str;
  EXPECT_NE(info.str.find("known_script_libraries:redlock 4.2.0 ("), std::string::npos);
}

// ------------------------------------------------------------------ npm redlock 4.2.0

TEST_P(KnownScriptsTest, RedlockLock) {
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"tok", "5000"}), Int(1));
  EXPECT_EQ(Get("k"), Bulk("tok"));
  EXPECT_EQ(PTtl("k"), Int(5000));
  EXPECT_EQ(Logged(), Req({"SET", "k", "tok", "PXAT", WallPlus(5000)}));
  // Held: 0, nothing changes.
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"other", "9000"}), Int(0));
  EXPECT_EQ(Get("k"), Bulk("tok"));
  EXPECT_EQ(PTtl("k"), Int(5000));
  // Multi-key: all free → all set; one held → 0 and none set.
  EXPECT_EQ(Sha(kRedlockLock, {"a", "b", "c"}, {"t2", "3000"}), Int(3));
  for (const char* k : {"a", "b", "c"}) EXPECT_EQ(Get(k), Bulk("t2"));
  EXPECT_EQ(Sha(kRedlockLock, {"x", "y", "a"}, {"t3", "3000"}), Int(0));
  EXPECT_EQ(Get("x"), kNull);
  EXPECT_EQ(Get("y"), kNull);
  // No keys: #KEYS is 0.
  EXPECT_EQ(Sha(kRedlockLock, {}, {"t", "1000"}), Int(0));
  // After expiry the lock is free again.
  ts_.clock().Advance(5001);
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"new", "100"}), Int(1));
  EXPECT_EQ(Get("k"), Bulk("new"));
}

TEST_P(KnownScriptsTest, RedlockLockErrors) {
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"tok", "abc"}), CallErr(kNotIntText, kRedlockLock, 11));
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"tok", "0"}),
            CallErr("ERR invalid expire time in 'set' command", kRedlockLock, 11));
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"tok", "-5"}),
            CallErr("ERR invalid expire time in 'set' command", kRedlockLock, 11));
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"tok"}), CallErr(kNilArg, kRedlockLock, 11));
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {}), CallErr(kNilArg, kRedlockLock, 11));
  EXPECT_EQ(Get("k"), kNull);
  // EVAL_RO: the SET is a write.
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"tok", "100"}, "EVALSHA_RO"),
            CallErr(kReadOnly, kRedlockLock, 11));
  EXPECT_EQ(Get("k"), kNull);
  // ... but a held key answers 0 before any write is tried.
  ASSERT_EQ(Run({"SET", "h", "x"}), kOk);
  EXPECT_EQ(Sha(kRedlockLock, {"h"}, {"tok", "100"}, "EVALSHA_RO"), Int(0));
  EXPECT_EQ(Logged(), Req({"SET", "h", "x"}));
}

TEST_P(KnownScriptsTest, RedlockUnlock) {
  SetPx("a", "tok", 5000);
  SetPx("b", "other", 5000);
  Logged();
  // a matches, b holds another value, c is missing: 1, only a deleted.
  EXPECT_EQ(Sha(kRedlockUnlock, {"a", "b", "c"}, {"tok"}), Int(1));
  EXPECT_EQ(Get("a"), kNull);
  EXPECT_EQ(Get("b"), Bulk("other"));
  EXPECT_EQ(Logged(), Req({"DEL", "a"}));
  EXPECT_EQ(Sha(kRedlockUnlock, {"a"}, {"tok"}), Int(0));
  EXPECT_EQ(Sha(kRedlockUnlock, {"b"}, {"tok"}), Int(0));
  EXPECT_EQ(Sha(kRedlockUnlock, {"b"}, {}), Int(0));  // nil never equals
  EXPECT_EQ(Sha(kRedlockUnlock, {}, {"tok"}), Int(0));
  EXPECT_EQ(Logged(), "");
  SetPx("c", "tok", 5000);
  SetPx("d", "tok", 5000);
  EXPECT_EQ(Sha(kRedlockUnlock, {"c", "d"}, {"tok"}), Int(2));
  EXPECT_EQ(Run({"EXISTS", "c", "d"}), Int(0));
  // EVAL_RO: the DEL is a pcall, whose error the script ignores — it still
  // counts the key, which stays.
  SetPx("e", "tok", 5000);
  EXPECT_EQ(Sha(kRedlockUnlock, {"e"}, {"tok"}, "EVALSHA_RO"), Int(1));
  EXPECT_EQ(Get("e"), Bulk("tok"));
}

TEST_P(KnownScriptsTest, RedlockExtend) {
  SetPx("a", "tok", 1000);
  SetPx("b", "tok", 1000);
  Logged();
  ts_.clock().Advance(400);
  EXPECT_EQ(Sha(kRedlockExtend, {"a", "b"}, {"tok", "5000"}), Int(2));
  EXPECT_EQ(PTtl("a"), Int(5000));
  EXPECT_EQ(PTtl("b"), Int(5000));
  // Two writes: one transaction in the log, so a replay never applies half.
  EXPECT_EQ(Logged(), Req({"MULTI"}) + Req({"SET", "a", "tok", "PXAT", WallPlus(5000)}) +
                          Req({"SET", "b", "tok", "PXAT", WallPlus(5000)}) + Req({"EXEC"}));
  // One key lost (another value, or missing): 0, nothing extended.
  SetPx("c", "other", 1000);
  EXPECT_EQ(Sha(kRedlockExtend, {"a", "c"}, {"tok", "9000"}), Int(0));
  EXPECT_EQ(Sha(kRedlockExtend, {"a", "missing"}, {"tok", "9000"}), Int(0));
  EXPECT_EQ(PTtl("a"), Int(5000));
  EXPECT_EQ(Sha(kRedlockExtend, {"a"}, {}), Int(0));
  EXPECT_EQ(Sha(kRedlockExtend, {"a"}, {"tok", "x"}), CallErr(kNotIntText, kRedlockExtend, 11));
  EXPECT_EQ(Sha(kRedlockExtend, {"a"}, {"tok"}), CallErr(kNilArg, kRedlockExtend, 11));
  // A key without TTL that holds the value gets one.
  ASSERT_EQ(Run({"SET", "p", "tok"}), kOk);
  EXPECT_EQ(Sha(kRedlockExtend, {"p"}, {"tok", "700"}), Int(1));
  EXPECT_EQ(PTtl("p"), Int(700));
}

// ------------------------------------------------------------------ @sesamecare-oss/redlock 1.4.0

TEST_P(KnownScriptsTest, SesameAcquireExtendRelease) {
  // ARGV[1] is the database the script SELECTs for the rest of its run; a
  // SELECT that fails ("abc", "", an index past `databases`) is caught by the
  // pcall and the script goes on in the caller's database. Either way the
  // caller stays in its own database afterwards.
  for (auto [arg, db] : std::vector<std::pair<std::string, std::string>>{
           {"0", "0"}, {"3", "3"}, {"abc", "0"}, {"", "0"}, {"16", "0"}}) {
    EXPECT_EQ(Sha(kSesameAcquire, {"a", "b"}, {arg, "tok", "4000"}), Int(2)) << arg;
    EXPECT_EQ(Sha(kSesameAcquire, {"b", "c"}, {arg, "x", "4000"}), Int(0)) << arg;
    EXPECT_EQ(Run({"DBSIZE"}), Int(db == "0" ? 2 : 0)) << arg;
    ASSERT_EQ(Run({"SELECT", db}), kOk);
    EXPECT_EQ(Get("a"), Bulk("tok")) << arg;
    EXPECT_EQ(Get("c"), kNull);
    ASSERT_EQ(Run({"SELECT", "0"}), kOk);
    EXPECT_EQ(Sha(kSesameExtend, {"a", "b"}, {arg, "tok", "9000"}), Int(2)) << arg;
    ASSERT_EQ(Run({"SELECT", db}), kOk);
    EXPECT_EQ(PTtl("b"), Int(9000));
    ASSERT_EQ(Run({"SELECT", "0"}), kOk);
    EXPECT_EQ(Sha(kSesameExtend, {"a", "b"}, {arg, "x", "9000"}), Int(0)) << arg;
    EXPECT_EQ(Sha(kSesameRelease, {"a", "b", "c"}, {arg, "tok"}), Int(2)) << arg;
    ASSERT_EQ(Run({"SELECT", db}), kOk);
    EXPECT_EQ(Run({"DBSIZE"}), Int(0));
    ASSERT_EQ(Run({"SELECT", "0"}), kOk);
  }
  // The log names the database of each write with a SELECT, as Redis's AOF
  // does; the EVALSHA itself is never logged, only its effects.
  std::string log = Logged();
  EXPECT_NE(log.find(Req({"SELECT", "3"}) + Req({"MULTI"}) +
                     Req({"SET", "a", "tok", "PXAT", WallPlus(4000)})),
            std::string::npos);
  EXPECT_EQ(log.find("EVAL"), std::string::npos);
  EXPECT_EQ(Sha(kSesameAcquire, {"a"}, {"0", "tok", "0"}),
            CallErr("ERR invalid expire time in 'set' command", kSesameAcquire, 16));
  EXPECT_EQ(Sha(kSesameAcquire, {"a"}, {"0", "tok"}), CallErr(kNilArg, kSesameAcquire, 16));
  EXPECT_EQ(Sha(kSesameAcquire, {"a"}, {}), CallErr(kNilArg, kSesameAcquire, 16));
  SetPx("a", "tok", 100);
  EXPECT_EQ(Sha(kSesameExtend, {"a"}, {"0", "tok", "1.5"}),
            CallErr(kNotIntText, kSesameExtend, 16));
  EXPECT_EQ(Sha(kSesameRelease, {"a"}, {"0"}), Int(0));
  EXPECT_EQ(Sha(kSesameRelease, {"a"}, {"0", "tok"}, "EVALSHA_RO"), Int(1));
  EXPECT_EQ(Get("a"), Bulk("tok"));
}

// ------------------------------------------------------------------ redis-semaphore 5.8.0

TEST_P(KnownScriptsTest, SemaphoreRelease) {
  SetPx("m", "id1", 5000);
  Logged();
  EXPECT_EQ(Sha(kSemRelease, {"m"}, {"id2"}), Int(0));
  EXPECT_EQ(Sha(kSemRelease, {"missing"}, {"id1"}), Int(0));
  EXPECT_EQ(Sha(kSemRelease, {"m"}, {}), Int(0));
  EXPECT_EQ(Sha(kSemRelease, {"m"}, {"id1"}, "EVALSHA_RO"), CallErr(kReadOnly, kSemRelease, 6));
  EXPECT_EQ(Logged(), "");
  EXPECT_EQ(Sha(kSemRelease, {"m"}, {"id1"}), Int(1));
  EXPECT_EQ(Get("m"), kNull);
  EXPECT_EQ(Logged(), Req({"DEL", "m"}));
  EXPECT_EQ(Sha(kSemRelease, {}, {"id1"}), CallErr(kNilArg, kSemRelease, 5));
}

TEST_P(KnownScriptsTest, SemaphoreRefresh) {
  SetPx("m", "id1", 1000);
  Logged();
  EXPECT_EQ(Sha(kSemRefresh, {"m"}, {"id1", "8000"}), Int(1));
  EXPECT_EQ(PTtl("m"), Int(8000));
  EXPECT_EQ(Logged(), Req({"PEXPIREAT", "m", WallPlus(8000)}));
  EXPECT_EQ(Sha(kSemRefresh, {"m"}, {"id2", "9000"}), Int(0));
  EXPECT_EQ(Sha(kSemRefresh, {"none"}, {"id1", "9000"}), Int(0));
  EXPECT_EQ(PTtl("m"), Int(8000));
  EXPECT_EQ(Sha(kSemRefresh, {"m"}, {"id1", "soon"}), CallErr(kNotIntText, kSemRefresh, 9));
  EXPECT_EQ(Sha(kSemRefresh, {"m"}, {"id1"}), CallErr(kNilArg, kSemRefresh, 9));
  EXPECT_EQ(Sha(kSemRefresh, {"m"}, {"id1", "100"}, "EVALSHA_RO"),
            CallErr(kReadOnly, kSemRefresh, 9));
  EXPECT_EQ(PTtl("m"), Int(8000));
  // PEXPIRE to 0 deletes the key; the script still replies 1.
  EXPECT_EQ(Sha(kSemRefresh, {"m"}, {"id1", "0"}), Int(1));
  EXPECT_EQ(Get("m"), kNull);
  EXPECT_EQ(Logged(), Req({"DEL", "m"}));
}

// ------------------------------------------------------------------ redlock-universal 0.8.5

TEST_P(KnownScriptsTest, UniversalDeleteAndExtendIfMatch) {
  SetPx("k", "v", 1000);
  EXPECT_EQ(Sha(kUniExtend, {"k"}, {"w", "5000"}), Int(0));
  EXPECT_EQ(Sha(kUniExtend, {"k"}, {"v", "5000"}), Int(1));
  EXPECT_EQ(PTtl("k"), Int(5000));
  EXPECT_EQ(Sha(kUniExtend, {"nokey"}, {"v", "5000"}), Int(0));
  EXPECT_EQ(Sha(kUniExtend, {"k"}, {"v", "x"}), CallErr(kNotIntText, kUniExtend, 2));
  EXPECT_EQ(Sha(kUniExtend, {"k"}, {"v"}), CallErr(kNilArg, kUniExtend, 2));
  EXPECT_EQ(Sha(kUniDelete, {"k"}, {"w"}), Int(0));
  EXPECT_EQ(Sha(kUniDelete, {"nokey"}, {"v"}), Int(0));
  EXPECT_EQ(Sha(kUniDelete, {"k"}, {"v"}, "EVALSHA_RO"), CallErr(kReadOnly, kUniDelete, 2));
  EXPECT_EQ(Sha(kUniDelete, {"k"}, {"v"}), Int(1));
  EXPECT_EQ(Get("k"), kNull);
  EXPECT_EQ(Sha(kUniDelete, {}, {"v"}), CallErr(kNilArg, kUniDelete, 1));
}

TEST_P(KnownScriptsTest, UniversalAtomicExtend) {
  EXPECT_EQ(Sha(kUniAtomicExtend, {"k"}, {"v", "100", "5000"}), Arr({Int(-1), Int(-2)}));
  SetPx("k", "v", 1000);
  ts_.clock().Advance(300);
  // 700 ms left: below a minimum of 800 → {0, 700}; nothing changes.
  EXPECT_EQ(Sha(kUniAtomicExtend, {"k"}, {"v", "800", "5000"}), Arr({Int(0), Int(700)}));
  EXPECT_EQ(PTtl("k"), Int(700));
  Logged();
  // Enough left and ours → {1, ttl before}, TTL now 5000.
  EXPECT_EQ(Sha(kUniAtomicExtend, {"k"}, {"v", "500", "5000"}), Arr({Int(1), Int(700)}));
  EXPECT_EQ(PTtl("k"), Int(5000));
  EXPECT_EQ(Logged(), Req({"PEXPIREAT", "k", WallPlus(5000)}));
  // Someone else's → {-1, ttl}.
  EXPECT_EQ(Sha(kUniAtomicExtend, {"k"}, {"w", "500", "9000"}), Arr({Int(-1), Int(5000)}));
  // tonumber(): " 1e3 " and "0x10" are numbers.
  EXPECT_EQ(Sha(kUniAtomicExtend, {"k"}, {"v", " 1e3 ", "0x10"}), Arr({Int(1), Int(5000)}));
  EXPECT_EQ(PTtl("k"), Int(16));
  // A key without TTL: PTTL -1 is below any positive minimum.
  ASSERT_EQ(Run({"SET", "p", "v"}), kOk);
  EXPECT_EQ(Sha(kUniAtomicExtend, {"p"}, {"v", "1", "5000"}), Arr({Int(0), Int(-1)}));
  EXPECT_EQ(Sha(kUniAtomicExtend, {"p"}, {"v", "-5", "5000"}), Arr({Int(1), Int(-1)}));
  EXPECT_EQ(PTtl("p"), Int(5000));
  // A minimum that is not a number: Lua compares a number with nil.
  EXPECT_EQ(Sha(kUniAtomicExtend, {"p"}, {"v", "abc", "5000"}),
            LuaErr("attempt to compare number with nil", kUniAtomicExtend, 11));
  EXPECT_EQ(Sha(kUniAtomicExtend, {"p"}, {"v"}),
            LuaErr("attempt to compare number with nil", kUniAtomicExtend, 11));
  // ...but a missing key answers before the comparison.
  EXPECT_EQ(Sha(kUniAtomicExtend, {"none"}, {}), Arr({Int(-1), Int(-2)}));
  // A new TTL that is not a number is a nil argument to PEXPIRE; a fraction
  // is printed as such and refused by PEXPIRE.
  EXPECT_EQ(Sha(kUniAtomicExtend, {"p"}, {"v", "1", "soon"}),
            CallErr(kNilArg, kUniAtomicExtend, 18));
  EXPECT_EQ(Sha(kUniAtomicExtend, {"p"}, {"v", "1", "1.5"}),
            CallErr(kNotIntText, kUniAtomicExtend, 18));
  EXPECT_EQ(Sha(kUniAtomicExtend, {"p"}, {"v", "1", "1e20"}),
            CallErr(kNotIntText, kUniAtomicExtend, 18));
  EXPECT_EQ(Sha(kUniAtomicExtend, {}, {"v", "1", "5"}), CallErr(kNilArg, kUniAtomicExtend, 1));
}

TEST_P(KnownScriptsTest, UniversalBatchAcquire) {
  EXPECT_EQ(Sha(kUniBatch, {"a", "b", "c"}, {"va", "vb", "vc", "4000"}), Arr({Int(1), Int(3)}));
  EXPECT_EQ(Get("a"), Bulk("va"));
  EXPECT_EQ(Get("b"), Bulk("vb"));
  EXPECT_EQ(Get("c"), Bulk("vc"));
  EXPECT_EQ(PTtl("c"), Int(4000));
  EXPECT_EQ(Logged(), Req({"MULTI"}) + Req({"SET", "a", "va", "PXAT", WallPlus(4000)}) +
                          Req({"SET", "b", "vb", "PXAT", WallPlus(4000)}) +
                          Req({"SET", "c", "vc", "PXAT", WallPlus(4000)}) + Req({"EXEC"}));
  // The first key held is named; nothing is set.
  EXPECT_EQ(Sha(kUniBatch, {"x", "b", "c"}, {"1", "2", "3", "4000"}),
            Arr({Int(0), Int(2), Bulk("b")}));
  EXPECT_EQ(Get("x"), kNull);
  EXPECT_EQ(Logged(), "");
  // No keys: {1, 0}.
  EXPECT_EQ(Sha(kUniBatch, {}, {}), Arr({Int(1), Int(0)}));
  // Fewer values than keys: the SETs run in order until ARGV[i] is nil, and
  // what was set stays set (no rollback in Redis either).
  EXPECT_EQ(Sha(kUniBatch, {"p", "q", "r"}, {"vp", "1000"}), CallErr(kNilArg, kUniBatch, 11));
  EXPECT_EQ(Get("p"), Bulk("vp"));
  EXPECT_EQ(Get("q"), Bulk("1000"));  // ARGV[2] is both q's value and the TTL
  EXPECT_EQ(Get("r"), kNull);
  EXPECT_EQ(Sha(kUniBatch, {"s"}, {}), CallErr(kNilArg, kUniBatch, 11));
  EXPECT_EQ(Sha(kUniBatch, {"s"}, {"v", "zero"}), CallErr(kNilArg, kUniBatch, 11));
  EXPECT_EQ(Sha(kUniBatch, {"s"}, {"v", "0"}),
            CallErr("ERR invalid expire time in 'set' command", kUniBatch, 11));
  EXPECT_EQ(Get("s"), kNull);
}

TEST_P(KnownScriptsTest, UniversalInspect) {
  EXPECT_EQ(Sha(kUniInspect, {"k"}), kNull);
  EXPECT_EQ(Sha(kUniInspect, {"k"}, {}, "EVALSHA_RO"), kNull);
  SetPx("k", "owner", 3000);
  ts_.clock().Advance(1000);
  EXPECT_EQ(Sha(kUniInspect, {"k"}), Arr({Bulk("owner"), Int(2000)}));
  EXPECT_EQ(Sha(kUniInspect, {"k"}, {}, "EVALSHA_RO"), Arr({Bulk("owner"), Int(2000)}));
  ASSERT_EQ(Run({"SET", "p", "v"}), kOk);
  EXPECT_EQ(Sha(kUniInspect, {"p"}), Arr({Bulk("v"), Int(-1)}));
  EXPECT_EQ(Sha(kUniInspect, {}), CallErr(kNilArg, kUniInspect, 1));
}

TEST_P(KnownScriptsTest, NullIsResp3NullAfterHello3) {
  ASSERT_EQ(Run({"HELLO", "3"}).substr(0, 1), "%");
  EXPECT_EQ(Sha(kUniInspect, {"k"}), "_\r\n");
  EXPECT_EQ(Sha(kUniAtomicExtend, {"k"}, {"v", "1", "2"}), Arr({Int(-1), Int(-2)}));
}

// ------------------------------------------------------------------ python3-redis 4.3.4

TEST_P(KnownScriptsTest, PyRelease) {
  SetPx("lock", "tok", 5000);
  Logged();
  EXPECT_EQ(Sha(kPyRelease, {"lock"}, {"nope"}), Int(0));
  EXPECT_EQ(Sha(kPyRelease, {"none"}, {"tok"}), Int(0));
  EXPECT_EQ(Sha(kPyRelease, {"lock"}, {}), Int(0));
  EXPECT_EQ(Sha(kPyRelease, {"lock"}, {"tok"}, "EVALSHA_RO"), CallErr(kReadOnly, kPyRelease, 6));
  EXPECT_EQ(Sha(kPyRelease, {}, {}), CallErr(kNilArg, kPyRelease, 2));
  EXPECT_EQ(Logged(), "");
  EXPECT_EQ(Sha(kPyRelease, {"lock"}, {"tok"}), Int(1));
  EXPECT_EQ(Get("lock"), kNull);
  EXPECT_EQ(Logged(), Req({"DEL", "lock"}));
}

TEST_P(KnownScriptsTest, PyExtend) {
  SetPx("lock", "tok", 1000);
  ts_.clock().Advance(200);
  Logged();
  // "0": add to the 800 ms left.
  EXPECT_EQ(Sha(kPyExtend, {"lock"}, {"tok", "2000", "0"}), Int(1));
  EXPECT_EQ(PTtl("lock"), Int(2800));
  EXPECT_EQ(Logged(), Req({"PEXPIREAT", "lock", WallPlus(2800)}));
  // "1" (or anything else): replace.
  EXPECT_EQ(Sha(kPyExtend, {"lock"}, {"tok", "2000", "1"}), Int(1));
  EXPECT_EQ(PTtl("lock"), Int(2000));
  EXPECT_EQ(Sha(kPyExtend, {"lock"}, {"tok", "3000"}), Int(1));
  EXPECT_EQ(PTtl("lock"), Int(3000));
  EXPECT_EQ(Sha(kPyExtend, {"lock"}, {"other", "2000", "0"}), Int(0));
  EXPECT_EQ(Sha(kPyExtend, {"none"}, {"tok", "2000", "0"}), Int(0));
  // Lua arithmetic on the string: " 10 " is a number, "ten" is not.
  EXPECT_EQ(Sha(kPyExtend, {"lock"}, {"tok", " 10 ", "0"}), Int(1));
  EXPECT_EQ(PTtl("lock"), Int(3010));
  EXPECT_EQ(Sha(kPyExtend, {"lock"}, {"tok", "ten", "0"}),
            LuaErr("attempt to perform arithmetic on field '?' (a string value)", kPyExtend, 16));
  EXPECT_EQ(Sha(kPyExtend, {"lock"}, {"tok"}), CallErr(kNilArg, kPyExtend, 18));
  EXPECT_EQ(Sha(kPyExtend, {"lock"}, {"tok", "ten", "1"}), CallErr(kNotIntText, kPyExtend, 18));
  EXPECT_EQ(Sha(kPyExtend, {"lock"}, {"tok", "0.5", "0"}), CallErr(kNotIntText, kPyExtend, 18));
  // A lock without TTL is not extended.
  ASSERT_EQ(Run({"SET", "forever", "tok"}), kOk);
  EXPECT_EQ(Sha(kPyExtend, {"forever"}, {"tok", "2000", "0"}), Int(0));
  EXPECT_EQ(PTtl("forever"), Int(-1));
  EXPECT_EQ(Sha(kPyExtend, {"lock"}, {"tok", "100", "1"}, "EVALSHA_RO"),
            CallErr(kReadOnly, kPyExtend, 18));
}

TEST_P(KnownScriptsTest, PyReacquire) {
  SetPx("lock", "tok", 1000);
  ts_.clock().Advance(900);
  EXPECT_EQ(Sha(kPyReacquire, {"lock"}, {"tok", "1000"}), Int(1));
  EXPECT_EQ(PTtl("lock"), Int(1000));
  EXPECT_EQ(Sha(kPyReacquire, {"lock"}, {"x", "1000"}), Int(0));
  EXPECT_EQ(Sha(kPyReacquire, {"none"}, {"tok", "1000"}), Int(0));
  EXPECT_EQ(Sha(kPyReacquire, {"lock"}, {"tok", "-1"}), Int(1));  // PEXPIRE deletes
  EXPECT_EQ(Get("lock"), kNull);
  EXPECT_EQ(Logged(), Req({"SET", "lock", "tok", "PXAT", WallPlus(-900 + 1000)}) +
                          Req({"PEXPIREAT", "lock", WallPlus(1000)}) + Req({"DEL", "lock"}));
}

// ------------------------------------------------------------------ max-lock-ttl

class CappedScriptsTest : public KnownScriptsTest {
 protected:
  static Config Capped() {
    Config c = test::TestConfig();
    c.max_lock_ttl = 10000;
    return c;
  }
  CappedScriptsTest() : KnownScriptsTest(Capped()) {}
};

TEST_P(CappedScriptsTest, TtlOverTheCapIsTheCommandsErrorInsideTheScript) {
  const std::string over = "ERR TTL 20000 ms exceeds max-lock-ttl (10000 ms)";
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"tok", "20000"}), CallErr(over, kRedlockLock, 11));
  EXPECT_EQ(Sha(kSesameAcquire, {"k"}, {"0", "tok", "20000"}), CallErr(over, kSesameAcquire, 16));
  EXPECT_EQ(Sha(kUniBatch, {"k"}, {"tok", "20000"}), CallErr(over, kUniBatch, 11));
  EXPECT_EQ(Get("k"), kNull);
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"tok", "10000"}), Int(1));
  EXPECT_EQ(Sha(kRedlockExtend, {"k"}, {"tok", "20000"}), CallErr(over, kRedlockExtend, 11));
  EXPECT_EQ(Sha(kSemRefresh, {"k"}, {"tok", "20000"}), CallErr(over, kSemRefresh, 9));
  EXPECT_EQ(Sha(kUniExtend, {"k"}, {"tok", "20000"}), CallErr(over, kUniExtend, 2));
  EXPECT_EQ(Sha(kUniAtomicExtend, {"k"}, {"tok", "1", "20000"}),
            CallErr(over, kUniAtomicExtend, 18));
  EXPECT_EQ(Sha(kPyReacquire, {"k"}, {"tok", "20000"}), CallErr(over, kPyReacquire, 6));
  EXPECT_EQ(Sha(kPyExtend, {"k"}, {"tok", "20000", "1"}), CallErr(over, kPyExtend, 18));
  // Adding to the 10000 left goes over the cap too.
  EXPECT_EQ(Sha(kPyExtend, {"k"}, {"tok", "5000", "0"}),
            CallErr("ERR TTL 15000 ms exceeds max-lock-ttl (10000 ms)", kPyExtend, 18));
  EXPECT_EQ(PTtl("k"), Int(10000));
  // A mismatch answers 0 before any TTL is looked at.
  EXPECT_EQ(Sha(kRedlockExtend, {"k"}, {"other", "20000"}), Int(0));
  // Releases are not leases.
  EXPECT_EQ(Sha(kRedlockUnlock, {"k"}, {"tok"}), Int(1));
}

// ------------------------------------------------------------------ quarantine

// A server in restart quarantine (quarantine always). The quarantine writes
// its state record in the working directory: the test runs in a fresh one.
class QuarantinedScriptsTest : public KnownScriptsTest {
 protected:
  static Config Quarantined() {
    Config c = test::TestConfig();
    c.quarantine = QuarantineMode::kAlways;
    c.quarantine_ms = 60000;
    c.max_lock_ttl = 30000;
    return c;
  }
  QuarantinedScriptsTest() : KnownScriptsTest(Quarantined()) {}
  void SetUp() override {
    old_cwd_ = std::filesystem::current_path();
    char tmpl[] = "/tmp/latch-ks-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::filesystem::current_path(dir_);
    ts_.server().lease_policy().Begin(ts_.clock().MonoMs(), aof::LogIdentity{});
    ts_.server().lease_policy().Start(ts_.clock().MonoMs(), {});
    ASSERT_TRUE(ts_.server().lease_policy().quarantined(ts_.clock().MonoMs()));
  }
  void TearDown() override {
    std::filesystem::current_path(old_cwd_);
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path old_cwd_, dir_;
};

TEST_P(QuarantinedScriptsTest, GrantsAreRefusedReleasesAllowed) {
  auto refused = [](const std::string& r) { return r.rfind("-QUARANTINE ", 0) == 0; };
  EXPECT_TRUE(refused(Sha(kRedlockLock, {"k"}, {"tok", "1000"})))
      << Sha(kRedlockLock, {"k"}, {"tok", "1000"});
  EXPECT_TRUE(refused(Sha(kSesameAcquire, {"k"}, {"0", "tok", "1000"})));
  EXPECT_TRUE(refused(Sha(kUniBatch, {"k", "j"}, {"a", "b", "1000"})));
  EXPECT_EQ(Get("k"), kNull);
  EXPECT_EQ(Get("j"), kNull);
  // A key that exists (replayed from the log, say): the lock script answers
  // 0 without granting anything, and extending it is refused.
  ts_.server().store().Put("k", "tok", Lease::Until(ts_.clock().MonoMs() + 5000),
                           ts_.server().Now());
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"other", "1000"}), Int(0));
  EXPECT_TRUE(refused(Sha(kRedlockExtend, {"k"}, {"tok", "1000"})));
  EXPECT_TRUE(refused(Sha(kSemRefresh, {"k"}, {"tok", "1000"})));
  EXPECT_TRUE(refused(Sha(kUniExtend, {"k"}, {"tok", "1000"})));
  EXPECT_TRUE(refused(Sha(kUniAtomicExtend, {"k"}, {"tok", "1", "1000"})));
  EXPECT_TRUE(refused(Sha(kPyExtend, {"k"}, {"tok", "1000", "0"})));
  EXPECT_TRUE(refused(Sha(kPyReacquire, {"k"}, {"tok", "1000"})));
  // A mismatch is not a grant: the answer is 0 as usual.
  EXPECT_EQ(Sha(kPyReacquire, {"k"}, {"nope", "1000"}), Int(0));
  // Reads and releases work.
  EXPECT_EQ(Sha(kUniInspect, {"k"}), Arr({Bulk("tok"), Int(5000)}));
  EXPECT_EQ(Sha(kRedlockUnlock, {"k"}, {"tok"}), Int(1));
  EXPECT_EQ(Get("k"), kNull);
  // Once the quarantine is over, grants go through.
  ts_.clock().Advance(60001);
  ts_.server().lease_policy().Cron(ts_.clock().MonoMs());
  EXPECT_EQ(Sha(kRedlockLock, {"k"}, {"tok", "1000"}), Int(1));
}

std::string Mode(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "Native" : "Lua";
}

INSTANTIATE_TEST_SUITE_P(NativeAndLua, KnownScriptsTest, ::testing::Bool(), Mode);
INSTANTIATE_TEST_SUITE_P(NativeAndLua, CappedScriptsTest, ::testing::Bool(), Mode);
INSTANTIATE_TEST_SUITE_P(NativeAndLua, QuarantinedScriptsTest, ::testing::Bool(), Mode);

}  // namespace
}  // namespace latch
