// Every kind of record latch's log holds, listed once.
//
// Each consumer of the log is generated from this list or must implement a
// method per entry (aof::Handler in record.h), so adding a kind is one line
// here plus its handler in each consumer, and the build names every consumer
// that lacks it:
//   - the writer encodes a record with the word given here (Batch::Append);
//   - the reader's validator checks each record's shape against the counts
//     given here, then the kind's own rules (record.cc, Decode);
//   - the Store applies it, live and in replay (store.cc, Store::Applier);
//   - the fuzz model applies it to a plain map (tests/fuzz/fuzz_aof.cc).
//
// X(Name, "WORD", min words, max words (-1: any), step): a record is WORD
// followed by its arguments; it has between min and max words in all (WORD
// included), and when max is -1 its words past min come in groups of
// `step`. Words starting with '#' are annotations: lines of their own that
// Redis's loader and redis-check-aof skip (record.h).
//
// Records are effects, never requests (record.h says why): each is a command
// redis-server itself replays to the same data.
//
// Lists. Eight kinds, each the effect of one list command in that command's
// own words, so a reader of the log (or redis-check-aof) sees what happened:
// RPUSH and LPUSH (also for LPUSHX/RPUSHX, which only differ in whether they
// may create the key), LPOP and RPOP with the count actually removed (LPOP,
// RPOP, LMPOP, BLPOP, BRPOP, BLMPOP, and a blocked pop served later: "LPOP
// key 1"), LSET, LINSERT, LREM and LTRIM. Nothing smaller expresses every
// list write exactly: a change in the middle needs LSET (replace), LINSERT
// (insert) or LREM (remove), and the ends need a push per end. The pops and
// LTRIM overlap (LPOP key n is LTRIM key n -1) but each is kept as the one
// record of its command, as Redis 7.0 itself propagates them. The moves —
// LMOVE, RPOPLPUSH, BLMOVE, BRPOPLPUSH — get no kind of their own: they are a
// pop and a push written as one unit (MULTI … EXEC, so a replay applies both
// or neither); on a single list, the push comes first, so the list is never
// empty in between and keeps its TTL, as it does in Redis.
#pragma once

// clang-format off
#define LATCH_RECORD_KINDS(X)                                                    \
  /* keys, whatever their type */                                                \
  X(Set,       "SET",       3, 5, 1)  /* SET key value [PXAT unix-ms] */         \
  X(Del,       "DEL",       2, -1, 1) /* DEL key [key ...] */                    \
  X(PExpireAt, "PEXPIREAT", 3, 3, 1)  /* PEXPIREAT key unix-ms */                \
  X(Persist,   "PERSIST",   2, 2, 1)  /* PERSIST key */                          \
  X(FlushAll,  "FLUSHALL",  1, 1, 1)                                             \
  X(FlushDb,   "FLUSHDB",   1, 1, 1)  /* the selected database */                \
  X(SwapDb,    "SWAPDB",    3, 3, 1)  /* SWAPDB a b */                           \
  X(Select,    "SELECT",    2, 2, 1)  /* the database of the records after it */ \
  X(Multi,     "MULTI",     1, 1, 1)  /* the records up to EXEC: all or none */  \
  X(Exec,      "EXEC",      1, 1, 1)                                             \
  X(Rename,    "RENAME",    3, 3, 1)  /* RENAME key newkey: value and lease */   \
  /* function libraries (of no database): one word, three kinds, told apart */   \
  /* by the subcommand (record.cc, Decode; KindOf names the first) */            \
  X(FunctionLoad,   "FUNCTION", 3, 4, 1) /* FUNCTION LOAD [REPLACE] code */      \
  X(FunctionDelete, "FUNCTION", 3, 3, 1) /* FUNCTION DELETE name */              \
  X(FunctionFlush,  "FUNCTION", 2, 3, 1) /* FUNCTION FLUSH [ASYNC|SYNC] */       \
  /* hashes (server/types/hash.h) */                                             \
  X(HSet,      "HSET",      4, -1, 2) /* HSET key field value [field value ...] */ \
  X(HDel,      "HDEL",      3, -1, 1) /* HDEL key field [field ...] */           \
  /* sets (server/types/set.h) */                                                \
  X(SAdd,      "SADD",      3, -1, 1) /* SADD key member [member ...] */         \
  X(SRem,      "SREM",      3, -1, 1) /* SREM key member [member ...] */         \
  /* sorted sets (server/types/zset.h) */                                        \
  X(ZAdd,      "ZADD",      4, -1, 2) /* ZADD key score member [score member]* */\
  X(ZRem,      "ZREM",      3, -1, 1) /* ZREM key member [member ...] */         \
  /* lists (server/types/list.h; the set is explained below) */                  \
  X(RPush,     "RPUSH",     3, -1, 1) /* RPUSH key element [element ...] */      \
  X(LPush,     "LPUSH",     3, -1, 1) /* LPUSH key element [element ...] */      \
  X(LPop,      "LPOP",      2, 3, 1)  /* LPOP key [count] */                     \
  X(RPop,      "RPOP",      2, 3, 1)  /* RPOP key [count] */                     \
  X(LSet,      "LSET",      4, 4, 1)  /* LSET key index element */               \
  X(LInsert,   "LINSERT",   5, 5, 1)  /* LINSERT key BEFORE|AFTER pivot element */ \
  X(LRem,      "LREM",      4, 4, 1)  /* LREM key count element */               \
  X(LTrim,     "LTRIM",     4, 4, 1)  /* LTRIM key start stop */                 \
  /* annotations */                                                              \
  X(Clock,     "#latch-clock", 0, 0, 1) /* the wall/boot relation (record.h) */  \
  X(Fence,     "#latch-fence", 0, 0, 1) /* the next SET's fencing token */
// clang-format on
