/* hiredis_smoke: Debian's libhiredis (0.14) used against a running latch-server,
 * as a C program using the library would.
 *
 *   hiredis_smoke PORT
 *
 * Runs the lock recipe (SET NX PX, SET IFEQ to renew, DELIFEQ to release),
 * DELEX/DIGEST, a pipeline built with redisAppendCommand, binary-safe values,
 * and checks that every reply arrives with the hiredis reply type a Redis
 * server would give it (status, error, integer, nil, string, array). Prints
 * "ok NAME" per check; on the first failure prints "FAIL NAME: why" and exits
 * 1. tests/integration/test_clients.py compiles and runs it.
 */
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks = 0;

static void fail(const char *name, const char *fmt, ...) {
  va_list ap;
  printf("FAIL %s: ", name);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  exit(1);
}

static void ok(const char *name) {
  printf("ok %s\n", name);
  fflush(stdout);
  ++checks;
}

static const char *type_name(int type) {
  switch (type) {
    case REDIS_REPLY_STRING: return "string";
    case REDIS_REPLY_ARRAY: return "array";
    case REDIS_REPLY_INTEGER: return "integer";
    case REDIS_REPLY_NIL: return "nil";
    case REDIS_REPLY_STATUS: return "status";
    case REDIS_REPLY_ERROR: return "error";
    default: return "unknown";
  }
}

/* The reply must exist and be of `type`; returns it. */
static redisReply *expect_type(const char *name, redisContext *c, redisReply *r, int type) {
  if (r == NULL) fail(name, "no reply (context error %d: %s)", c->err, c->errstr);
  if (r->type != type) {
    fail(name, "reply type %s, want %s (str=%.*s)", type_name(r->type), type_name(type),
         r->str ? (int)r->len : 0, r->str ? r->str : "");
  }
  return r;
}

static void expect_status(const char *name, redisContext *c, redisReply *r, const char *want) {
  expect_type(name, c, r, REDIS_REPLY_STATUS);
  if (strcmp(r->str, want) != 0) fail(name, "status '%s', want '%s'", r->str, want);
  freeReplyObject(r);
  ok(name);
}

static void expect_string(const char *name, redisContext *c, redisReply *r, const char *want,
                          size_t len) {
  expect_type(name, c, r, REDIS_REPLY_STRING);
  if (r->len != len || memcmp(r->str, want, len) != 0) {
    fail(name, "string '%.*s' (%zu bytes), want %zu bytes", (int)r->len, r->str, r->len, len);
  }
  freeReplyObject(r);
  ok(name);
}

static void expect_int(const char *name, redisContext *c, redisReply *r, long long want) {
  expect_type(name, c, r, REDIS_REPLY_INTEGER);
  if (r->integer != want) fail(name, "integer %lld, want %lld", r->integer, want);
  freeReplyObject(r);
  ok(name);
}

static void expect_int_range(const char *name, redisContext *c, redisReply *r, long long lo,
                             long long hi) {
  expect_type(name, c, r, REDIS_REPLY_INTEGER);
  if (r->integer < lo || r->integer > hi) {
    fail(name, "integer %lld, want %lld..%lld", r->integer, lo, hi);
  }
  freeReplyObject(r);
  ok(name);
}

static void expect_nil(const char *name, redisContext *c, redisReply *r) {
  expect_type(name, c, r, REDIS_REPLY_NIL);
  freeReplyObject(r);
  ok(name);
}

static void expect_error(const char *name, redisContext *c, redisReply *r, const char *want) {
  expect_type(name, c, r, REDIS_REPLY_ERROR);
  if (strcmp(r->str, want) != 0) fail(name, "error '%s', want '%s'", r->str, want);
  freeReplyObject(r);
  ok(name);
}

static redisReply *next_reply(const char *name, redisContext *c) {
  void *r = NULL;
  if (redisGetReply(c, &r) != REDIS_OK) fail(name, "redisGetReply: %d %s", c->err, c->errstr);
  return (redisReply *)r;
}

static redisContext *connect_or_die(const char *name, int port) {
  struct timeval tv = {5, 0};
  redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (c == NULL || c->err) fail(name, "connect: %s", c ? c->errstr : "out of memory");
  if (redisSetTimeout(c, tv) != REDIS_OK) fail(name, "redisSetTimeout: %s", c->errstr);
  return c;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PORT\n", argv[0]);
    return 2;
  }
  int port = atoi(argv[1]);
  redisContext *c = connect_or_die("connect", port);
  ok("connect");

  expect_status("ping", c, redisCommand(c, "PING"), "PONG");
  redisReply *r = redisCommand(c, "DEL hs:lock hs:bin hs:p");
  expect_type("del-setup", c, r, REDIS_REPLY_INTEGER);
  freeReplyObject(r);

  /* The lock recipe: acquire, a second acquirer refused, renew, release. */
  expect_status("set-nx-px", c, redisCommand(c, "SET hs:lock %s NX PX 30000", "tok-A"), "OK");
  expect_nil("set-nx-px-held", c, redisCommand(c, "SET hs:lock %s NX PX 30000", "tok-B"));
  expect_string("get", c, redisCommand(c, "GET hs:lock"), "tok-A", 5);
  expect_int_range("pttl", c, redisCommand(c, "PTTL hs:lock"), 1, 30000);
  expect_status("set-ifeq-renew", c,
                redisCommand(c, "SET hs:lock %s IFEQ %s PX 50000", "tok-A", "tok-A"), "OK");
  expect_int_range("pttl-renewed", c, redisCommand(c, "PTTL hs:lock"), 30001, 50000);
  expect_nil("set-ifeq-not-owner", c,
             redisCommand(c, "SET hs:lock %s IFEQ %s PX 50000", "tok-B", "tok-B"));
  expect_int("pexpire", c, redisCommand(c, "PEXPIRE hs:lock 20000"), 1);
  expect_int_range("pttl-after-pexpire", c, redisCommand(c, "PTTL hs:lock"), 1, 20000);
  expect_int("delifeq-not-owner", c, redisCommand(c, "DELIFEQ hs:lock %s", "tok-B"), 0);
  expect_string("get-still-held", c, redisCommand(c, "GET hs:lock"), "tok-A", 5);
  expect_int("delifeq-owner", c, redisCommand(c, "DELIFEQ hs:lock %s", "tok-A"), 1);
  expect_nil("get-released", c, redisCommand(c, "GET hs:lock"));
  expect_int("pttl-missing", c, redisCommand(c, "PTTL hs:lock"), -2);

  /* DIGEST and DELEX: the digest is 16 hex digits, and IFDEQ matches it. */
  expect_status("set-for-digest", c, redisCommand(c, "SET hs:lock %s PX 30000", "tok-C"), "OK");
  r = expect_type("digest", c, redisCommand(c, "DIGEST hs:lock"), REDIS_REPLY_STRING);
  if (r->len != 16 || strspn(r->str, "0123456789abcdef") != 16) {
    fail("digest", "'%s' is not 16 lower-case hex digits", r->str);
  }
  char digest[17];
  memcpy(digest, r->str, 17);
  freeReplyObject(r);
  ok("digest");
  expect_nil("digest-missing", c, redisCommand(c, "DIGEST hs:nokey"));
  expect_int("delex-ifdne-same", c, redisCommand(c, "DELEX hs:lock IFDNE %s", digest), 0);
  expect_int("delex-ifne-same", c, redisCommand(c, "DELEX hs:lock IFNE %s", "tok-C"), 0);
  expect_int("delex-ifeq-other", c, redisCommand(c, "DELEX hs:lock IFEQ %s", "tok-D"), 0);
  expect_int("delex-ifdeq", c, redisCommand(c, "DELEX hs:lock IFDEQ %s", digest), 1);
  expect_int("exists-after-delex", c, redisCommand(c, "EXISTS hs:lock"), 0);

  /* Binary-safe values (%b): NUL, CR and LF inside a token survive. */
  const char bin[] = {'t', '\0', 'o', '\r', '\n', 'k'};
  expect_status("set-binary", c,
                redisCommand(c, "SET hs:bin %b NX PX 30000", bin, sizeof(bin)), "OK");
  expect_string("get-binary", c, redisCommand(c, "GET hs:bin"), bin, sizeof(bin));
  expect_int("delifeq-binary", c, redisCommand(c, "DELIFEQ hs:bin %b", bin, sizeof(bin)), 1);

  /* Pipelining: queue ten commands, then read ten replies, in order. */
  redisAppendCommand(c, "SET hs:p %s NX PX 30000", "p1");
  redisAppendCommand(c, "SET hs:p %s NX PX 30000", "p2");
  redisAppendCommand(c, "GET hs:p");
  redisAppendCommand(c, "DELIFEQ hs:p %s", "p2");
  redisAppendCommand(c, "PEXPIRE hs:p 10000");
  redisAppendCommand(c, "DELIFEQ hs:p %s", "p1");
  redisAppendCommand(c, "GET hs:p");
  redisAppendCommand(c, "GET");
  redisAppendCommand(c, "TIME");
  redisAppendCommand(c, "ECHO %s", "done");
  expect_status("pipe-set-nx", c, next_reply("pipe-set-nx", c), "OK");
  expect_nil("pipe-set-nx-held", c, next_reply("pipe-set-nx-held", c));
  expect_string("pipe-get", c, next_reply("pipe-get", c), "p1", 2);
  expect_int("pipe-delifeq-other", c, next_reply("pipe-delifeq-other", c), 0);
  expect_int("pipe-pexpire", c, next_reply("pipe-pexpire", c), 1);
  expect_int("pipe-delifeq-owner", c, next_reply("pipe-delifeq-owner", c), 1);
  expect_nil("pipe-get-released", c, next_reply("pipe-get-released", c));
  expect_error("pipe-error", c, next_reply("pipe-error", c),
               "ERR wrong number of arguments for 'get' command");
  r = expect_type("pipe-time", c, next_reply("pipe-time", c), REDIS_REPLY_ARRAY);
  if (r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING ||
      r->element[1]->type != REDIS_REPLY_STRING || atoll(r->element[0]->str) < 1600000000) {
    fail("pipe-time", "TIME is not [seconds, microseconds]");
  }
  freeReplyObject(r);
  ok("pipe-time");
  expect_string("pipe-echo", c, next_reply("pipe-echo", c), "done", 4);

  /* A script runs (Lua): the tutorials' compare-and-delete. */
  r = expect_type("eval", c,
                  redisCommand(c, "EVAL %s 1 k %s",
                               "if redis.call('get', KEYS[1]) == ARGV[1] then return "
                               "redis.call('del', KEYS[1]) else return 0 end",
                               "nobody"),
                  REDIS_REPLY_INTEGER);
  if (r->integer != 0) fail("eval", "got %lld, want 0", r->integer);
  freeReplyObject(r);
  ok("eval");

  /* HELLO 2 answers the server's facts as a flat array (RESP2 map). */
  r = expect_type("hello-2", c, redisCommand(c, "HELLO 2"), REDIS_REPLY_ARRAY);
  if (r->elements != 14 || strcmp(r->element[0]->str, "server") != 0 ||
      strcmp(r->element[4]->str, "proto") != 0 || r->element[5]->integer != 2) {
    fail("hello-2", "unexpected HELLO 2 reply (%zu elements)", r->elements);
  }
  freeReplyObject(r);
  ok("hello-2");
  redisFree(c);

  /* hiredis 0.14 predates RESP3: after HELLO 3 the server answers with a
   * RESP3 map ('%'), which this reader cannot parse. A client limitation,
   * shown here so the compatibility table's claim is checked. */
  c = connect_or_die("hello-3-unsupported", port);
  r = redisCommand(c, "HELLO 3");
  if (r != NULL) fail("hello-3-unsupported", "hiredis 0.14 parsed a HELLO 3 reply (type %s)",
                      type_name(r->type));
  if (c->err != REDIS_ERR_PROTOCOL || strstr(c->errstr, "\"%\"") == NULL) {
    fail("hello-3-unsupported", "want a protocol error on '%%', got %d: %s", c->err, c->errstr);
  }
  redisFree(c);
  ok("hello-3-unsupported");

  printf("hiredis_smoke: %d checks passed\n", checks);
  return 0;
}
