// The pipeline prefetch: a pipeline's memory misses, overlapped.
//
// Looking a key up in a large keyspace, or a field up in a large hash, is a
// chain of dependent cache misses: the bucket, then the entry it points to,
// then the collection's own bucket and node. Run one request after another,
// a pipeline of 16 requests waits for its 16 chains one after another, and
// on a keyspace or a hash that does not fit in the caches that waiting is
// most of the time a request takes (perf on HSET into a hash of 100,000
// fields: 42% in the field lookup, in Redis 37%).
//
// So before the requests of one read run, Run() looks at up to 16 of them
// and walks every one's lookup a step at a time, all requests per step: the
// loads of a step go out together, and by the next step they have arrived.
// (Valkey 8 does the same for the batches of its I/O threads.)
//
// A hint only: nothing here changes the keyspace or the collections (no
// rehash step, no expiry, no access clock), and the requests then run as
// they always do. A wrong guess (a key that is not there, ZADD's flags where
// the member usually is) costs a wasted load.
#pragma once

#include <cstddef>
#include <string_view>

namespace latch {

class CommandRegistry;
class Keyspace;

class PipelinePrefetch {
 public:
  // The most requests one call looks at (a pipeline's depth in
  // redis-benchmark -P 16; more would evict what the first ones loaded).
  static constexpr size_t kMaxRequests = 16;

  struct Result {
    size_t requests = 0;  // complete requests looked at
    size_t lookups = 0;   // of them, those with a key to warm
  };
  // Warms what the complete requests at the front of `input` will look up
  // in `ks`. Does nothing unless there are at least two of them: a lone
  // request has nothing to overlap with (then both counts are 0).
  static Result Run(std::string_view input, const Keyspace& ks, const CommandRegistry& registry);
};

}  // namespace latch
