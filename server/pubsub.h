// Pub/sub: channels, patterns and shard channels, and the keyspace
// notifications that ride on them.
//
// Why a lock server has it. A lock client that does not poll waits for a
// message: Redisson subscribes to `redisson_lock__channel:{name}` before it
// tries, and every unlock script publishes there; simple-redis-mutex does
// the same on a second connection. An operator watches leases run out with
// keyspace notifications (`notify-keyspace-events Ex` and
// `__keyevent@0__:expired`). The race every pub/sub lock must handle — a
// release published between a failed try and the SUBSCRIBE is lost — is the
// client's: subscribe first, then try (docs/guide.md).
//
// The rules, as Redis 7.0's:
//  - A message goes to every subscriber of its channel, in subscription
//    order, then to the subscribers of every matching pattern (glob rules
//    as KEYS); a shard channel (SSUBSCRIBE/SPUBLISH) ignores patterns. The
//    reply to PUBLISH counts the deliveries.
//  - Delivery is immediate: the message is appended to each subscriber's
//    output during the publishing command (from a script or MULTI too, so
//    it follows the effects that command made before it), and leaves at the
//    end of the loop iteration with the subscriber's other output. Nothing
//    of pub/sub goes to the log.
//  - A subscriber over the `pubsub` class's client-output-buffer-limit
//    (32mb hard, 8mb for 60 s by default) is disconnected: a subscriber that
//    stops reading cannot grow the server's memory without bound.
//  - In RESP2 a subscribed connection may only (un)subscribe, PING, QUIT and
//    RESET (the gate refuses the rest); in RESP3 messages are push frames
//    mixed with ordinary replies.
//  - Keyspace notifications (Notify): with `notify-keyspace-events`
//    enabling the event's class, `__keyspace@<db>__:<key>` gets the event
//    name and `__keyevent@<db>__:<event>` gets the key. Commands name their
//    events as Redis's do (notify.h lists the classes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace latch {

class Session;

// Redis's notification classes (NOTIFY_* in its server.h), for
// `notify-keyspace-events` and Notify's `type`.
enum NotifyClass : uint32_t {
  kNotifyKeyspace = 1u << 0,  // K
  kNotifyKeyevent = 1u << 1,  // E
  kNotifyGeneric = 1u << 2,   // g: DEL, EXPIRE, RENAME…
  kNotifyString = 1u << 3,    // $
  kNotifyList = 1u << 4,      // l
  kNotifySet = 1u << 5,       // s
  kNotifyHash = 1u << 6,      // h
  kNotifyZset = 1u << 7,      // z
  kNotifyExpired = 1u << 8,   // x: a key removed because its lease ended
  kNotifyEvicted = 1u << 9,   // e
  kNotifyStream = 1u << 10,   // t (latch has no streams: never sent)
  kNotifyKeyMiss = 1u << 11,  // m: a read of a missing key (not in A)
  kNotifyModule = 1u << 13,   // d (latch has no modules: never sent)
  kNotifyNew = 1u << 14,      // n: a key created (not in A)
  kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash |
               kNotifyZset | kNotifyExpired | kNotifyEvicted | kNotifyStream | kNotifyModule,
};

// `notify-keyspace-events` ↔ flags, with Redis's parsing and canonical
// order ("AKE", "gxE"…). nullopt-like -1: a character that is no class.
int64_t NotifyFlagsFromString(std::string_view classes);
std::string NotifyFlagsToString(uint32_t flags);

class PubSub {
 public:
  enum class Kind { kChannel, kShard };

  PubSub() = default;
  PubSub(const PubSub&) = delete;
  PubSub& operator=(const PubSub&) = delete;

  // ---- subscriptions (each returns whether it changed anything; the
  // session's own sets, in session.h, are kept here too)
  bool Subscribe(Session& s, std::string_view channel, Kind kind);
  bool Unsubscribe(Session& s, std::string_view channel, Kind kind);
  bool PSubscribe(Session& s, std::string_view pattern);
  bool PUnsubscribe(Session& s, std::string_view pattern);
  // A closed connection (or RESET): every subscription of `s` goes.
  void Forget(Session& s);

  // ---- messages
  // Delivers `message` on `channel`; returns how many subscriptions got it.
  int64_t Publish(std::string_view channel, std::string_view message, Kind kind);

  // ---- keyspace notifications
  void set_notify_flags(uint32_t flags) { notify_flags_ = flags; }
  uint32_t notify_flags() const { return notify_flags_; }
  // One branch when the class is off (the default: no class is on).
  void Notify(uint32_t type, std::string_view event, std::string_view key, int db) {
    if ((notify_flags_ & type) != 0) Emit(event, key, db);
  }

  // ---- introspection (PUBSUB, INFO, CLIENT LIST)
  // The channels with subscribers that match `pattern` (all when empty).
  std::vector<std::string_view> Channels(std::string_view pattern, bool all, Kind kind) const;
  size_t Subscribers(std::string_view channel, Kind kind) const;
  size_t channel_count() const { return channels_.size(); }
  size_t shard_channel_count() const { return shard_.size(); }
  size_t pattern_count() const { return patterns_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Map = std::unordered_map<std::string, std::vector<Session*>, Hash, std::equal_to<>>;
  Map& map(Kind kind) { return kind == Kind::kChannel ? channels_ : shard_; }
  const Map& map(Kind kind) const { return kind == Kind::kChannel ? channels_ : shard_; }
  static void Remove(Map& m, std::string_view name, const Session* s);
  void Emit(std::string_view event, std::string_view key, int db);

  Map channels_;
  Map shard_;
  Map patterns_;
  uint32_t notify_flags_ = 0;
  // Reused by Publish: the frame, and the sessions to deliver to.
  std::string frame_;
  std::vector<Session*> targets_;
};

}  // namespace latch
