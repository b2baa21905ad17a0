// Pub/sub: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE,
// SUNSUBSCRIBE, PUBLISH, SPUBLISH and PUBSUB, with Redis 7.0's replies
// (the hub and its rules: server/pubsub.h).
//
// A (un)subscription answers with one frame per channel — [kind, channel,
// count] — a push frame in RESP3, an array in RESP2, where count is what the
// session still listens to: channels and patterns together for the
// classic commands, shard channels alone for the S… ones. Nothing here is a
// write: PUBLISH changes no key and is never logged, so the restart
// quarantine does not refuse it.
#include "server/pubsub.h"
#include "server/commands/common.h"

namespace latch::commands {

namespace {

using Kind = PubSub::Kind;

// [kind, name or nil, count], pushed to the session: a push frame in RESP3,
// an array in RESP2, that CLIENT REPLY OFF does not silence (Redis sends
// these as pushes too).
void Confirm(CommandContext& ctx, std::string_view kind, const std::string_view* name,
             size_t count) {
  std::string frame = "*3\r\n$";
  AppendInt(frame, static_cast<int64_t>(kind.size()));
  frame += "\r\n";
  frame.append(kind);
  frame += "\r\n";
  if (name != nullptr) {
    frame += '$';
    AppendInt(frame, static_cast<int64_t>(name->size()));
    frame += "\r\n";
    frame.append(*name);
    frame += "\r\n";
  } else {
    frame += ctx.session.resp == 3 ? "_\r\n" : "$-1\r\n";
  }
  frame += ':';
  AppendInt(frame, static_cast<int64_t>(count));
  frame += "\r\n";
  ctx.session.Push(frame);
}

void SubscribeGeneric(CommandContext& ctx, Kind kind) {
  const std::string_view verb = kind == Kind::kChannel ? "subscribe" : "ssubscribe";
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    ctx.pubsub.Subscribe(ctx.session, ctx.argv[i], kind);
    Confirm(
        ctx, verb, &ctx.argv[i],
        kind == Kind::kChannel ? ctx.session.subscriptions() : ctx.session.shard_channels.size());
  }
}

void UnsubscribeGeneric(CommandContext& ctx, Kind kind) {
  const std::string_view verb = kind == Kind::kChannel ? "unsubscribe" : "sunsubscribe";
  auto count = [&] {
    return kind == Kind::kChannel ? ctx.session.subscriptions() : ctx.session.shard_channels.size();
  };
  if (ctx.argv.size() > 1) {
    for (size_t i = 1; i < ctx.argv.size(); ++i) {
      ctx.pubsub.Unsubscribe(ctx.session, ctx.argv[i], kind);
      Confirm(ctx, verb, &ctx.argv[i], count());
    }
    return;
  }
  // Every channel (in no particular order, as Redis's dict gives them);
  // subscribed to none, one frame with a nil channel.
  auto& mine = kind == Kind::kChannel ? ctx.session.channels : ctx.session.shard_channels;
  std::vector<std::string> names(mine.begin(), mine.end());
  for (const std::string& name : names) {
    ctx.pubsub.Unsubscribe(ctx.session, name, kind);
    std::string_view view = name;
    Confirm(ctx, verb, &view, count());
  }
  if (names.empty()) Confirm(ctx, verb, nullptr, count());
}

}  // namespace

void Subscribe(CommandContext& ctx) {
  SubscribeGeneric(ctx, Kind::kChannel);
}

void SSubscribe(CommandContext& ctx) {
  SubscribeGeneric(ctx, Kind::kShard);
}

void Unsubscribe(CommandContext& ctx) {
  UnsubscribeGeneric(ctx, Kind::kChannel);
}

void SUnsubscribe(CommandContext& ctx) {
  UnsubscribeGeneric(ctx, Kind::kShard);
}

void PSubscribe(CommandContext& ctx) {
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    ctx.pubsub.PSubscribe(ctx.session, ctx.argv[i]);
    Confirm(ctx, "psubscribe", &ctx.argv[i], ctx.session.subscriptions());
  }
}

void PUnsubscribe(CommandContext& ctx) {
  if (ctx.argv.size() > 1) {
    for (size_t i = 1; i < ctx.argv.size(); ++i) {
      ctx.pubsub.PUnsubscribe(ctx.session, ctx.argv[i]);
      Confirm(ctx, "punsubscribe", &ctx.argv[i], ctx.session.subscriptions());
    }
    return;
  }
  // Every pattern, in subscription order.
  std::vector<std::string> patterns = ctx.session.patterns;
  for (const std::string& p : patterns) {
    ctx.pubsub.PUnsubscribe(ctx.session, p);
    std::string_view view = p;
    Confirm(ctx, "punsubscribe", &view, ctx.session.subscriptions());
  }
  if (patterns.empty()) Confirm(ctx, "punsubscribe", nullptr, ctx.session.subscriptions());
}

void Publish(CommandContext& ctx) {
  ctx.reply.Int(ctx.pubsub.Publish(ctx.argv[1], ctx.argv[2], Kind::kChannel));
}

void SPublish(CommandContext& ctx) {
  ctx.reply.Int(ctx.pubsub.Publish(ctx.argv[1], ctx.argv[2], Kind::kShard));
}

namespace {

// PUBSUB CHANNELS / SHARDCHANNELS [pattern]
void ListChannels(CommandContext& ctx, Kind kind) {
  if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  const bool all = ctx.argv.size() == 2;
  auto names = ctx.pubsub.Channels(all ? std::string_view() : ctx.argv[2], all, kind);
  ctx.reply.Array(names.size());
  for (std::string_view n : names) ctx.reply.Bulk(n);
}

// PUBSUB NUMSUB / SHARDNUMSUB [channel …]: channel, count pairs.
void CountSubscribers(CommandContext& ctx, Kind kind) {
  ctx.reply.Array((ctx.argv.size() - 2) * 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    ctx.reply.Bulk(ctx.argv[i]);
    ctx.reply.Int(static_cast<int64_t>(ctx.pubsub.Subscribers(ctx.argv[i], kind)));
  }
}

}  // namespace

void PubSubChannels(CommandContext& ctx) {
  ListChannels(ctx, Kind::kChannel);
}

void PubSubShardChannels(CommandContext& ctx) {
  ListChannels(ctx, Kind::kShard);
}

void PubSubNumSub(CommandContext& ctx) {
  CountSubscribers(ctx, Kind::kChannel);
}

void PubSubShardNumSub(CommandContext& ctx) {
  CountSubscribers(ctx, Kind::kShard);
}

void PubSubNumPat(CommandContext& ctx) {
  ctx.reply.Int(static_cast<int64_t>(ctx.pubsub.pattern_count()));
}

void PubSubHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      // clang-format off: one line (a split literal here reads as a missing comma)
      "    Return the currently active shard level channels matching a <pattern> (default: '*').",
      // clang-format on
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
  };
  ReplyRedisHelp(ctx, "PUBSUB", kLines);
}

// ---------------------------------------------------------------- registration

void RegisterPubSub(CommandRegistry& r) {
  using namespace spec;
  auto doc = [](std::string summary, std::string since, std::string complexity) {
    return Doc{std::move(summary), std::move(since), "pubsub", std::move(complexity)};
  };
  // Allowed while loading and in a RESP2 subscribed session, never from a
  // script (NOSCRIPT: a script cannot listen).
  const uint32_t kListen = kCmdNoScript | kCmdLoading | kCmdStale | kCmdSubscribedContext;
  const std::vector<std::string> kAcl = {"pubsub", "slow"};
  r.Add(Cmd("subscribe", -2, kListen | kCmdSentinel, Subscribe, kAcl,
            doc("Listen for messages published to the given channels", "2.0.0",
                "O(N) where N is the number of channels to subscribe to."),
            {Multiple(Str("channel"))}));
  r.Add(Cmd("unsubscribe", -1, kListen | kCmdSentinel, Unsubscribe, kAcl,
            doc("Stop listening for messages posted to the given channels", "2.0.0",
                "O(N) where N is the number of clients already subscribed to a channel."),
            {Optional(Multiple(Str("channel")))}));
  r.Add(Cmd("psubscribe", -2, kListen | kCmdSentinel, PSubscribe, kAcl,
            doc("Listen for messages published to channels matching the given patterns", "2.0.0",
                "O(N) where N is the number of patterns the client is already subscribed to."),
            {Multiple(Block("pattern", {Pattern("pattern")}))}));
  r.Add(
      Cmd("punsubscribe", -1, kListen | kCmdSentinel, PUnsubscribe, kAcl,
          doc("Stop listening for messages posted to channels matching the given patterns", "2.0.0",
              "O(N+M) where N is the number of patterns the client is already subscribed and M "
              "is the number of total patterns subscribed in the system (by any client)."),
          {Optional(Multiple(Pattern("pattern")))}));
  // Shard channels stand where keys would (a cluster routes them by slot):
  // Redis gives them "not_key" key specs.
  r.Add(KeySpecs(Cmd("ssubscribe", -2, kListen, SSubscribe, kAcl,
                     doc("Listen for messages published to the given shard channels", "7.0.0",
                         "O(N) where N is the number of shard channels to subscribe to."),
                     {Multiple(Str("shardchannel"))}),
                 1, -1, 1, {RangeSpec({"not_key"}, 1, -1)}));
  r.Add(KeySpecs(
      Cmd("sunsubscribe", -1, kListen, SUnsubscribe, kAcl,
          doc("Stop listening for messages posted to the given shard channels", "7.0.0",
              "O(N) where N is the number of clients already subscribed to a shard channel."),
          {Optional(Multiple(Str("shardchannel")))}),
      1, -1, 1, {RangeSpec({"not_key"}, 1, -1)}));
  r.Add(Cmd("publish", 3, kCmdLoading | kCmdStale | kFast | kCmdSentinel, Publish,
            {"pubsub", "fast"},
            doc("Post a message to a channel", "2.0.0",
                "O(N+M) where N is the number of clients subscribed to the receiving channel and M "
                "is the total number of subscribed patterns (by any client)."),
            {Str("channel"), Str("message")}));
  r.Add(KeySpecs(
      Cmd("spublish", 3, kCmdLoading | kCmdStale | kFast, SPublish, {"pubsub", "fast"},
          doc("Post a message to a shard channel", "7.0.0",
              "O(N) where N is the number of clients subscribed to the receiving shard channel."),
          {Str("shardchannel"), Str("message")}),
      1, 1, 1, {RangeSpec({"not_key"}, 1)}));
  const uint32_t kIntro = kCmdLoading | kCmdStale;
  r.Add(Container(
      "pubsub", {"slow"},
      doc("A container for Pub/Sub commands", "2.8.0", "Depends on subcommand."),
      {Cmd("channels", -2, kIntro, PubSubChannels, kAcl,
           doc("List active channels", "2.8.0",
               "O(N) where N is the number of active channels, and assuming constant time "
               "pattern matching (relatively short channels and patterns)"),
           {Optional(Pattern("pattern"))}),
       Cmd("numpat", 2, kIntro, PubSubNumPat, kAcl,
           doc("Get the count of unique patterns pattern subscriptions", "2.8.0", "O(1)")),
       Cmd("numsub", -2, kIntro, PubSubNumSub, kAcl,
           doc("Get the count of subscribers for channels", "2.8.0",
               "O(N) for the NUMSUB subcommand, where N is the number of requested channels"),
           {Optional(Multiple(Str("channel")))}),
       Cmd("shardchannels", -2, kIntro, PubSubShardChannels, kAcl,
           doc("List active shard channels", "7.0.0",
               "O(N) where N is the number of active shard channels, and assuming constant time "
               "pattern matching (relatively short shard channels)."),
           {Optional(Pattern("pattern"))}),
       Cmd("shardnumsub", -2, kIntro, PubSubShardNumSub, kAcl,
           doc("Get the count of subscribers for shard channels", "7.0.0",
               "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard "
               "channels"),
           {Optional(Multiple(Str("shardchannel")))}),
       Cmd("help", 2, kIntro, PubSubHelp, {"slow"},
           doc("Show helpful text about the different subcommands", "6.2.0", "O(1)"))}));
}

}  // namespace latch::commands
