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
#define GW_VERSION "0.1.0"

#include "error_rules.h"
#include "lance_limits.h"

/* Short names of the Lance error codes of error_rules.h that the gateway raises. */
#define GW_ERR_UNSUPPORTED			LANCE_UNSUPPORTED
#define GW_ERR_NAMESPACE_NOT_FOUND	LANCE_NAMESPACE_NOT_FOUND
#define GW_ERR_TABLE_NOT_FOUND		LANCE_TABLE_NOT_FOUND
#define GW_ERR_VERSION_NOT_FOUND	LANCE_TABLE_VERSION_NOT_FOUND
#define GW_ERR_INVALID_INPUT		LANCE_INVALID_INPUT
#define GW_ERR_CONCURRENT_MOD		LANCE_CONCURRENT_MODIFICATION
#define GW_ERR_PERMISSION_DENIED	LANCE_PERMISSION_DENIED
#define GW_ERR_UNAUTHENTICATED		LANCE_UNAUTHENTICATED
#define GW_ERR_UNAVAILABLE			LANCE_SERVICE_UNAVAILABLE
#define GW_ERR_INTERNAL				LANCE_INTERNAL

/* A macro's value as a string literal. */
#define GW_STR_(x) #x
#define GW_STR(x) GW_STR_(x)

#define GW_MAX_LOOPS	64		/* --loops at most */

/* Run-time configuration, filled from the command line and environment. */
typedef struct GwConfig
{
	char	   *listen_host;	/* host part of --listen */
	char	   *listen_port;	/* port part of --listen */
	char	   *db;				/* libpq conninfo string or URI */
	char	   *root;			/* catalog root directory */
	char	   *api_key;		/* required x-api-key / bearer token, or NULL */
	bool		db_auth;		/* map credentials to roles in the database */
	char	   *anon_role;		/* role of requests without credentials */
	int			pool_size;		/* number of PostgreSQL connections */
	int			loops;			/* loop threads, each with a connection */
	int			loop_lock_wait_ms;	/* lock_timeout of the loops' connections */
	int			pool_wait_ms;	/* how long a request waits for a connection */
	int			publish_interval_ms;	/* group publications this often; 0: flush each */
	int			publish_backlog;	/* most pending publications; then flush */
	long		max_body_bytes; /* larger request bodies get 413 */
	long		max_url_bytes;	/* longer request targets get 414 */
	long		max_header_bytes;	/* larger header sections get 431 */
	int			max_batch_entries;	/* longer entries/ranges/operations: 400 */
	int			request_timeout_s;	/* per-request deadline (408) */
	int			idle_timeout_s; /* close connections idle this long */
	int			max_connections;	/* concurrent HTTP connections */
	int			max_retries;	/* retries of 40001/40P01 transactions */
	int			shutdown_wait_s;	/* graceful shutdown budget */
	int			startup_wait_s; /* how long to wait for the database */
	bool		force_insecure_bind;
	bool		quiet;			/* no access log */
	bool		manifest_copy;	/* copy staging manifests, never hard-link */
	bool		no_openat2;		/* confine paths by walking, not openat2 */
	bool		drop_outside_root;	/* DropTable may delete outside --root */
	bool		sweep;			/* --sweep: remove orphaned files, then exit */
	bool		dry_run;		/* with --sweep: list, remove nothing */
	int			sweep_min_age_s;	/* files younger than this are kept */
	int			feed_poll_ms;	/* /v1/events: history polls while subscribed */
	long		sse_heartbeat_ms;	/* /v1/events: idle heartbeat */
	int			sse_queue;		/* /v1/events: events kept for subscribers */
	long		sse_queue_bytes;	/* /v1/events: bytes of those events */
	char	   *s3_endpoint;	/* NULL: AWS_ENDPOINT_URL_S3 / _URL / AWS */
	char	   *s3_region;		/* NULL: AWS_REGION / AWS_DEFAULT_REGION */
	int			s3_virtual_hosted;	/* 1 virtual-hosted, 0 path, -1 default */
	long		s3_timeout_ms;	/* one S3 request */
	int			s3_retries;		/* retries of an S3 request */
	char	   *vend_credentials;	/* none, static or sts */
	char	   *sts_role_arn;	/* role that vended credentials assume */
	int			sts_duration_s; /* lifetime of vended credentials */
	int			sts_refresh_offset_s;	/* vended refresh_offset_millis / 1000; 0: none */
	char	   *sts_endpoint;	/* NULL: AWS_ENDPOINT_URL_STS / _URL / S3's */
} GwConfig;

/* An error to send back: Lance error code, HTTP status and texts. */
typedef struct GwError
{
	int			code;			/* Lance error code, -1 = none */
	int			status;			/* HTTP status (0 = derive from code) */
	char		message[1024];
	char		detail[1024];	/* empty = JSON null */
} GwError;

extern GwConfig gw_config;

/*
 * gw_ms_since
 *		Milliseconds from t to now (CLOCK_MONOTONIC).
 */
static inline long
gw_ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000L + (now.tv_nsec - t->tv_nsec) / 1000000L;
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

#endif							/* LANCE_GATEWAY_H */
