#include "server/pubsub.h"

#include <algorithm>

#include "common/glob.h"
#include "protocol/text.h"
#include "server/session.h"

namespace latch {

namespace {

// A RESP2 array of bulk strings; Session::Push turns its '*' into RESP3's
// '>' for a RESP3 subscriber.
void Frame(std::string& out, std::initializer_list<std::string_view> parts) {
  out.clear();
  out += '*';
  AppendInt(out, static_cast<int64_t>(parts.size()));
  out += "\r\n";
  for (std::string_view p : parts) {
    out += '$';
    AppendInt(out, static_cast<int64_t>(p.size()));
    out += "\r\n";
    out.append(p);
    out += "\r\n";
  }
}

constexpr struct {
  char letter;
  uint32_t flag;
} kClasses[] = {{'g', kNotifyGeneric}, {'$', kNotifyString},  {'l', kNotifyList},
                {'s', kNotifySet},     {'h', kNotifyHash},    {'z', kNotifyZset},
                {'x', kNotifyExpired}, {'e', kNotifyEvicted}, {'t', kNotifyStream},
                {'d', kNotifyModule},  {'n', kNotifyNew}};

}  // namespace

int64_t NotifyFlagsFromString(std::string_view classes) {
  uint32_t flags = 0;
  for (char c : classes) {
    switch (c) {
      case 'A':
        flags |= kNotifyAll;
        break;
      case 'K':
        flags |= kNotifyKeyspace;
        break;
      case 'E':
        flags |= kNotifyKeyevent;
        break;
      case 'm':
        flags |= kNotifyKeyMiss;
        break;
      default: {
        bool known = false;
        for (const auto& k : kClasses) {
          if (k.letter == c) {
            flags |= k.flag;
            known = true;
          }
        }
        if (!known) return -1;
      }
    }
  }
  return flags;
}

std::string NotifyFlagsToString(uint32_t flags) {
  std::string out;
  if ((flags & kNotifyAll) == kNotifyAll) {
    out += 'A';
  } else {
    for (const auto& k : kClasses) {
      if (flags & k.flag) out += k.letter;
    }
  }
  if (flags & kNotifyKeyspace) out += 'K';
  if (flags & kNotifyKeyevent) out += 'E';
  if (flags & kNotifyKeyMiss) out += 'm';
  return out;
}

bool PubSub::Subscribe(Session& s, std::string_view channel, Kind kind) {
  auto& mine = kind == Kind::kChannel ? s.channels : s.shard_channels;
  if (!mine.emplace(channel).second) return false;
  Map& m = map(kind);
  auto it = m.find(channel);
  if (it == m.end()) it = m.emplace(std::string(channel), std::vector<Session*>{}).first;
  it->second.push_back(&s);
  return true;
}

void PubSub::Remove(Map& m, std::string_view name, const Session* s) {
  auto it = m.find(name);
  if (it == m.end()) return;
  auto& v = it->second;
  v.erase(std::find(v.begin(), v.end(), s));
  // A channel nobody listens to any more leaves the table, so that
  // subscribing to millions of names and leaving costs nothing after.
  if (v.empty()) m.erase(it);
}

bool PubSub::Unsubscribe(Session& s, std::string_view channel, Kind kind) {
  auto& mine = kind == Kind::kChannel ? s.channels : s.shard_channels;
  auto it = mine.find(channel);
  if (it == mine.end()) return false;
  Remove(map(kind), channel, &s);
  mine.erase(it);
  return true;
}

bool PubSub::PSubscribe(Session& s, std::string_view pattern) {
  if (std::find(s.patterns.begin(), s.patterns.end(), pattern) != s.patterns.end()) return false;
  s.patterns.emplace_back(pattern);
  auto it = patterns_.find(pattern);
  if (it == patterns_.end())
    it = patterns_.emplace(std::string(pattern), std::vector<Session*>{}).first;
  it->second.push_back(&s);
  return true;
}

bool PubSub::PUnsubscribe(Session& s, std::string_view pattern) {
  auto it = std::find(s.patterns.begin(), s.patterns.end(), pattern);
  if (it == s.patterns.end()) return false;
  Remove(patterns_, pattern, &s);
  s.patterns.erase(it);
  return true;
}

void PubSub::Forget(Session& s) {
  for (const std::string& c : s.channels) Remove(channels_, c, &s);
  for (const std::string& c : s.shard_channels) Remove(shard_, c, &s);
  for (const std::string& p : s.patterns) Remove(patterns_, p, &s);
  s.channels.clear();
  s.shard_channels.clear();
  s.patterns.clear();
}

int64_t PubSub::Publish(std::string_view channel, std::string_view message, Kind kind) {
  int64_t receivers = 0;
  // The subscriber lists are copied before delivery: a subscriber pushed
  // over its output limit is closed on the spot, which unsubscribes it
  // (Forget) while the message is still going out to the others. Closed
  // sessions are freed only once the loop turns, so the copies stay valid.
  const Map& m = map(kind);
  if (auto it = m.find(channel); it != m.end()) {
    targets_ = it->second;
    Frame(frame_, {kind == Kind::kChannel ? "message" : "smessage", channel, message});
    for (Session* s : targets_) {
      if (!s->closing()) s->Push(frame_);
      ++receivers;
    }
  }
  if (kind == Kind::kShard || patterns_.empty()) return receivers;
  // Patterns: copied as (pattern, subscribers) first, for the same reason.
  std::vector<std::pair<std::string, std::vector<Session*>>> matching;
  for (const auto& [pattern, sessions] : patterns_) {
    if (GlobMatch(pattern, channel)) matching.emplace_back(pattern, sessions);
  }
  for (const auto& [pattern, sessions] : matching) {
    Frame(frame_, {"pmessage", pattern, channel, message});
    for (Session* s : sessions) {
      if (!s->closing()) s->Push(frame_);
      ++receivers;
    }
  }
  return receivers;
}

void PubSub::Emit(std::string_view event, std::string_view key, int db) {
  std::string channel;
  const std::string dbid = std::to_string(db);
  if (notify_flags_ & kNotifyKeyspace) {
    channel = "__keyspace@" + dbid + "__:";
    channel.append(key);
    Publish(channel, event, Kind::kChannel);
  }
  if (notify_flags_ & kNotifyKeyevent) {
    channel = "__keyevent@" + dbid + "__:";
    channel.append(event);
    Publish(channel, key, Kind::kChannel);
  }
}

std::vector<std::string_view> PubSub::Channels(std::string_view pattern, bool all,
                                               Kind kind) const {
  std::vector<std::string_view> out;
  for (const auto& [name, sessions] : map(kind)) {
    if (all || GlobMatch(pattern, name)) out.emplace_back(name);
  }
  return out;
}

size_t PubSub::Subscribers(std::string_view channel, Kind kind) const {
  const Map& m = map(kind);
  auto it = m.find(channel);
  return it == m.end() ? 0 : it->second.size();
}

}  // namespace latch
