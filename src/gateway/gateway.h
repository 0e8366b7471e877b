/*-------------------------------------------------------------------------
 *
 * gateway.h
 *	  Shared declarations of lance-namespace-gateway, the HTTP front end
 *	  that serves the Lance Namespace REST routes on top of the
 *	  lance_namespace extension's rest_* SQL functions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_H
#define LANCE_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define GW_PROGRAM "lance-namespace-gateway"
#define GW_UNUSED __attribute__((unused))	/* a callback's parameter it ignores */
#define GW_VERSION LANCE_EXTVERSION	/* one version: the Makefile's EXTVERSION */

#include "error_rules.h"
#include "lance_limits.h"

/* A macro's value as a string literal. */
#define GW_STR_(x) #x
#define GW_STR(x) GW_STR_(x)

#define GW_MAX_LOOPS	64		/* --loops at most */

/*
 * The options, defined once: X(name, environment variable, type, field,
 * argument, default, min, max, default in words, other variables read,
 * text).  config.c makes of them the parsing, --help and the README's
 * table; each is a field of GwConfig, of its type's C type (GW_FIELD_*).
 */
#define GW_OPTIONS(X) \
	X("listen", "LANCE_GATEWAY_LISTEN", LISTEN, listen_host, "HOST:PORT", "127.0.0.1:2333", 0, 0, NULL, NULL, \
	  "address to listen on (`[::1]:2333` for IPv6; port 0 picks a free port, printed in the log)") \
	X("db", "LANCE_GATEWAY_DB", STRING, db, "CONNINFO", "", 0, 0, "libpq defaults, PGHOST/PGPORT/...", NULL, \
	  "connection string or URI. It goes to libpq unchanged, so multi-host strings and `target_session_attrs` work") \
	X("root", "LANCE_GATEWAY_ROOT", STRING, root, "DIR|s3://B/P", NULL, 0, 0, "(required)", NULL, \
	  "catalog root: a directory, or a bucket and key prefix (see below and \"Tables in buckets\")") \
	X("pool", "LANCE_GATEWAY_POOL", INT, pool_size, "N", "8", 1, 1000, NULL, NULL, \
	  "PostgreSQL connections of the workers: writes, commits, `/ready`, and every request with `--db-auth`. Each loop's reads use one connection more, and the change feed one more") \
	X("loops", "LANCE_GATEWAY_LOOPS", INT, loops, "N", "1", 1, GW_MAX_LOOPS, NULL, NULL, \
	  "loop threads, each a libmicrohttpd server on the same port (`SO_REUSEPORT`). Each accepts connections and answers reads over a pipelined database connection of its own; raise it where one core does not keep up with the reads") \
	X("loop-lock-wait-ms", "LANCE_GATEWAY_LOOP_LOCK_WAIT_MS", INT, loop_lock_wait_ms, "MS", "50", 0, 600000, NULL, NULL, \
	  "the `lock_timeout` of the loops' pipelined connections (a shorter one already in effect, from `--db` or `ALTER ROLE`/`ALTER DATABASE ... SET`, is kept). A read that waits longer for a table lock there goes to a worker, so that the reads behind it go on (see \"Reads share one pipelined connection\" below). 0: no bound") \
	X("publish-interval-ms", "LANCE_GATEWAY_PUBLISH_INTERVAL_MS", INT, publish_interval_ms, "MS", "100", 0, 3600000, NULL, NULL, \
	  "a create of a table under a local `--root` sends the staged manifest's bytes to the catalog with the version, so that the `COMMIT`'s WAL flush is the only flush it waits for; the canonical file is linked without a flush, and every MS milliseconds the publications since are made durable together (their writeback started at once, then flushed, sharing journal commits) and their bytes pruned from the catalog (RELIABILITY.md, \"One flush per create\"). 0: every create flushes its manifest file and directory before `COMMIT` (three flushes). Both keep every acknowledged version") \
	X("publish-backlog", "LANCE_GATEWAY_PUBLISH_BACKLOG", INT, publish_backlog, "N", "1024", 1, 1000000, NULL, NULL, \
	  "the most creates whose manifests are pending publication at once (rows of `lance_namespace.publications`, and at most 64 MiB of their bytes). A create beyond them flushes its manifest before `COMMIT`, as with `--publish-interval-ms 0`, until the publisher catches up, so that what a stop flushes and a start checks stays bounded under any sustained load (RELIABILITY.md, \"One flush per create\")") \
	X("pool-wait-ms", "LANCE_GATEWAY_POOL_WAIT_MS", INT, pool_wait_ms, "MS", "5000", 0, 600000, NULL, NULL, \
	  "how long a request waits for a free pooled connection before it gets 503") \
	X("max-body-bytes", "LANCE_GATEWAY_MAX_BODY_BYTES", LONG, max_body_bytes, "N", "1048576", 1024, 1L << 30, NULL, NULL, \
	  "larger bodies get 413 (see below)") \
	X("max-url-bytes", "LANCE_GATEWAY_MAX_URL_BYTES", LONG, max_url_bytes, "N", "8192", 256, 1L << 20, NULL, NULL, \
	  "longer request targets get 414") \
	X("max-header-bytes", "LANCE_GATEWAY_MAX_HEADER_BYTES", LONG, max_header_bytes, "N", "16384", 1024, 1L << 20, NULL, NULL, \
	  "larger header sections get 431") \
	X("max-batch-entries", "LANCE_GATEWAY_MAX_BATCH_ENTRIES", INT, max_batch_entries, "N", GW_STR(LANCE_MAX_BATCH_ENTRIES), 1, 1000000, NULL, NULL, \
	  "a body whose `entries`, `ranges` or `operations` array is longer gets 400 with code 13 (the extension's own cap is " GW_STR(LANCE_MAX_BATCH_ENTRIES) ", from the same `src/lance_limits.h`)") \
	X("request-timeout", "LANCE_GATEWAY_REQUEST_TIMEOUT", INT, request_timeout_s, "S", "30", 1, 3600, NULL, NULL, \
	  "a request's body must have arrived S seconds after its head began to be served, else the connection is closed (see below)") \
	X("idle-timeout", "LANCE_GATEWAY_IDLE_TIMEOUT", INT, idle_timeout_s, "S", "120", 1, 86400, NULL, NULL, \
	  "a connection without traffic for S seconds (libmicrohttpd's connection timeout) is closed (see below)") \
	X("max-connections", "LANCE_GATEWAY_MAX_CONNECTIONS", INT, max_connections, "N", "256", 1, 100000, NULL, NULL, \
	  "concurrent HTTP connections (libmicrohttpd's connection limit, shared out among the loops); more wait in the listen backlog until one closes. If the process runs out of file descriptors first, libmicrohttpd says so on stderr and stops accepting until a connection closes") \
	X("retries", "LANCE_GATEWAY_RETRIES", INT, max_retries, "N", "5", 0, 100, NULL, NULL, \
	  "retries of a transaction after a serialization failure or deadlock") \
	X("shutdown-timeout", NULL, INT, shutdown_wait_s, "S", "30", 0, 3600, NULL, NULL, \
	  "time that in-flight requests get to finish after SIGTERM") \
	X("startup-timeout", NULL, INT, startup_wait_s, "S", "30", 0, 3600, NULL, NULL, \
	  "how long start-up waits for the database") \
	X("api-key", "LANCE_GATEWAY_API_KEY", NAME, api_key, "KEY", NULL, 0, 0, NULL, NULL, \
	  "if set, every route except `/health` and `/ready` needs `x-api-key: KEY` or `Authorization: Bearer KEY` (else 401, code 16)") \
	X("db-auth", "LANCE_GATEWAY_DB_AUTH", BOOL, db_auth, NULL, NULL, 0, 0, NULL, NULL, \
	  "check credentials in the database instead (see below). Cannot be combined with `--api-key`") \
	X("anon-role", "LANCE_GATEWAY_ANON_ROLE", NAME, anon_role, "ROLE", NULL, 0, 0, "such requests get 401", NULL, \
	  "with `--db-auth`, the role of requests that carry no credentials. Without it, such requests get 401") \
	X("force-insecure-bind", "LANCE_GATEWAY_FORCE_INSECURE_BIND", BOOL, force_insecure_bind, NULL, NULL, 0, 0, NULL, NULL, \
	  "allow a non-loopback address without an API key") \
	X("quiet", NULL, BOOL, quiet, NULL, NULL, 0, 0, NULL, NULL, \
	  "no access log") \
	X("manifest-copy", "LANCE_GATEWAY_MANIFEST_COPY", BOOL, manifest_copy, NULL, NULL, 0, 0, NULL, NULL, \
	  "finalize a manifest by copying the staging file instead of hard-linking it (for storage where the canonical file must be a separate inode)") \
	X("no-openat2", "LANCE_GATEWAY_NO_OPENAT2", BOOL, no_openat2, NULL, NULL, 0, 0, NULL, NULL, \
	  "open manifest directories one component at a time with `O_NOFOLLOW` instead of with `openat2` (the gateway does this by itself on kernels before 5.6 or where a seccomp filter refuses `openat2`; the rules are the same)") \
	X("drop-outside-root", "LANCE_GATEWAY_DROP_OUTSIDE_ROOT", BOOL, drop_outside_root, NULL, NULL, 0, 0, NULL, NULL, \
	  "let DropTable delete the data of a table whose location lies outside `--root` (a registered table); without it such a drop is refused with 403 code 15 and nothing changes") \
	X("intents-dir", "LANCE_GATEWAY_INTENTS_DIR", NAME, intents_dir, "DIR", NULL, 0, 0, "`<root>/.lance-gateway/intents` under a local root, else none", NULL, \
	  "a create records here each canonical manifest it links until its `COMMIT`'s outcome is known (a few files, one per request in flight, reused); start-up settles what a gateway that died left, removing each such manifest whose version did not commit, and so does a gateway that outlives the catalog, once it is back (see \"Manifest finalization\"). None: those manifests wait for `--sweep`") \
	X("sweep", NULL, BOOL, sweep, NULL, NULL, 0, 0, NULL, NULL, \
	  "do not serve: remove the manifest files that a crash can orphan under `--root`, print one line per file and a summary, and exit (see \"Orphaned files\" below)") \
	X("dry-run", NULL, BOOL, dry_run, NULL, NULL, 0, 0, NULL, NULL, \
	  "with `--sweep`: list those files, remove nothing") \
	X("sweep-min-age", "LANCE_GATEWAY_SWEEP_MIN_AGE", INT, sweep_min_age_s, "S", "600", 0, INT_MAX, NULL, NULL, \
	  "with `--sweep`: keep files whose inode changed (ctime) less than S seconds ago (objects: last modified)") \
	X("feed-poll-ms", "LANCE_GATEWAY_FEED_POLL_MS", INT, feed_poll_ms, "MS", "100", 5, 60000, NULL, NULL, \
	  "how often `/v1/events` reads the commit history while someone subscribes (and at once, at most every 5 ms, after the gateway's own commits)") \
	X("sse-heartbeat-ms", "LANCE_GATEWAY_SSE_HEARTBEAT_MS", LONG, sse_heartbeat_ms, "MS", "15000", 50, 3600000, NULL, NULL, \
	  "a `: heartbeat` comment is sent to an idle `/v1/events` stream this often") \
	X("sse-queue", "LANCE_GATEWAY_SSE_QUEUE", INT, sse_queue, "N", "1024", 1, 1000000, NULL, NULL, \
	  "events the change feed keeps for all its subscribers together; a subscriber that falls further behind is disconnected") \
	X("sse-queue-bytes", "LANCE_GATEWAY_SSE_QUEUE_BYTES", LONG, sse_queue_bytes, "N", "1048576", 1024, 1L << 30, NULL, NULL, \
	  "bytes of the events the change feed keeps for all its subscribers together; a subscriber that falls further behind is disconnected") \
	X("s3-endpoint", "LANCE_GATEWAY_S3_ENDPOINT", NAME, s3_endpoint, "URL", NULL, 0, 0, "AWS S3 of the region", "`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`", \
	  "S3-compatible endpoint (MinIO, R2, Ceph RGW, GCS XML, moto). `http://` is accepted") \
	X("s3-region", "LANCE_GATEWAY_S3_REGION", NAME, s3_region, "R", NULL, 0, 0, "us-east-1", "`AWS_REGION`, `AWS_DEFAULT_REGION`", \
	  "signing region") \
	X("s3-addressing", "LANCE_GATEWAY_S3_ADDRESSING", ADDRESSING, s3_virtual_hosted, "path|virtual", NULL, 0, 0, "path with a custom endpoint, else virtual", NULL, \
	  "bucket in the path (`host/bucket/key`) or in the host name (`bucket.host/key`)") \
	X("s3-timeout-ms", "LANCE_GATEWAY_S3_TIMEOUT_MS", LONG, s3_timeout_ms, "MS", "10000", 100, 600000, NULL, NULL, \
	  "deadline of one S3 request (connect: at most 3000)") \
	X("s3-retries", "LANCE_GATEWAY_S3_RETRIES", INT, s3_retries, "N", "3", 0, 20, NULL, NULL, \
	  "retries of an S3 request that got no answer, a 5xx, 429 or `SlowDown`, with exponential backoff (100 ms doubling, at most 2 s, jittered); then 503 code 17") \
	X("vend-credentials", "LANCE_GATEWAY_VEND_CREDENTIALS", CHOICE, vend_credentials, "none|static|sts", "none", 0, 0, NULL, NULL, \
	  "credentials put in the `storage_options` of DeclareTable and DescribeTable for tables in buckets (see \"Tables in buckets\")") \
	X("sts-role-arn", "LANCE_GATEWAY_STS_ROLE_ARN", NAME, sts_role_arn, "ARN", NULL, 0, 0, NULL, NULL, \
	  "with `--vend-credentials sts`: the role that STS AssumeRole assumes") \
	X("sts-duration", "LANCE_GATEWAY_STS_DURATION", INT, sts_duration_s, "S", "3600", 900, 43200, NULL, NULL, \
	  "lifetime of vended STS credentials (900 to 43200)") \
	X("sts-refresh-offset", "LANCE_GATEWAY_STS_REFRESH_OFFSET", INT, sts_refresh_offset_s, "S", NULL, 0, 43200, "not sent (Lance's default: 60)", NULL, \
	  "with `sts`: vended as `refresh_offset_millis`, how long before `expires_at_millis` the client asks again") \
	X("sts-endpoint", "LANCE_GATEWAY_STS_ENDPOINT", NAME, sts_endpoint, "URL", NULL, 0, 0, "the custom S3 endpoint, else AWS STS", "`AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL`", \
	  "STS endpoint")

#define GW_FIELD_STRING(f)		char *f;
#define GW_FIELD_NAME(f)		char *f;	/* NULL when unset */
#define GW_FIELD_CHOICE(f)		char *f;
#define GW_FIELD_INT(f)			int f;
#define GW_FIELD_LONG(f)		long f;
#define GW_FIELD_BOOL(f)		bool f;
#define GW_FIELD_ADDRESSING(f)	int f;	/* 1 virtual-hosted, 0 path, -1 default */
#define GW_FIELD_LISTEN(f)		char *f; \
								char *listen_port;
#define GW_OPTION_FIELD(name, env, type, field, ...) GW_FIELD_##type(field)

/* Run-time configuration, filled from the command line and environment. */
typedef struct GwConfig
{
	GW_OPTIONS(GW_OPTION_FIELD)
} GwConfig;

/* An error to send back: Lance error code, HTTP status and texts. */
typedef struct GwError
{
	int			code;			/* Lance error code, -1 = none */
	int			status;			/* HTTP status (0 = derive from code) */
	char		message[1024];
	char		detail[1024];	/* empty: the code's name is sent */
} GwError;

extern GwConfig gw_config;

/*
 * gw_ms_since
 *		Milliseconds from t to now (CLOCK_MONOTONIC), with their fraction.
 */
static inline double
gw_ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000.0 + (now.tv_nsec - t->tv_nsec) / 1e6;
}

/* config.c */
extern void gw_config_load(int argc, char **argv);

/* errors.c */
extern void gw_error_set(GwError *err, int code, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
extern void gw_error_detail(GwError *err, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));
extern char *gw_error_body(const GwError *err, const char *instance);
extern void gw_error_clear(GwError *err);
extern void gw_fatal(int status, const char *fmt,...)
			__attribute__((format(printf, 2, 3), noreturn));

/* sweep.c: --sweep; the exit status */
extern int	gw_sweep_run(void);

#endif							/* LANCE_GATEWAY_H */
