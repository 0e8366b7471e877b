/*-------------------------------------------------------------------------
 *
 * config.c
 *	  Command-line options and LANCE_GATEWAY_* environment variables (the
 *	  command line wins).
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

GwConfig	gw_config;

static const char *usage_text =
"Usage: " GW_PROGRAM " [OPTION]...\n"
"       " GW_PROGRAM " --sweep [--dry-run] [--sweep-min-age S] [OPTION]...\n"
"Serve the Lance Namespace REST API from a PostgreSQL lance_namespace catalog.\n"
"\n"
"  --listen HOST:PORT        address to listen on (default 127.0.0.1:2333)\n"
"  --db CONNINFO             libpq connection string or URI (default: libpq\n"
"                            defaults, PGHOST/PGPORT/... environment)\n"
"  --root DIR                catalog root directory for table data\n"
"  --pool N                  PostgreSQL connections (default 8)\n"
"  --pool-wait-ms MS         wait for a free connection before 503 (default 5000)\n"
"  --loops N                 loop threads, each answering reads over a\n"
"                            database connection of its own (default 1)\n"
"  --loop-lock-wait-ms MS    a read that waits this long for a table lock in\n"
"                            a loop's pipeline moves to a worker, so that the\n"
"                            reads behind it go on; 0: never (default 50)\n"
"  --max-body-bytes N        largest request body, else 413 (default 1048576)\n"
"  --max-url-bytes N         longest request target, else 414 (default 8192)\n"
"  --max-header-bytes N      largest header section, else 431 (default 16384)\n"
"  --max-batch-entries N     most entries/ranges/operations in one request,\n"
"                            else 400 (default " GW_STR(LANCE_MAX_BATCH_ENTRIES) ")\n"
"  --request-timeout S       a request body must arrive within S seconds of\n"
"                            its headers, else 408 (default 30)\n"
"  --idle-timeout S          close a connection with no traffic for S seconds\n"
"                            (default 120)\n"
"  --max-connections N       concurrent HTTP connections (default 256)\n"
"  --retries N               retries of serialization failures (default 5)\n"
"  --shutdown-timeout S      graceful shutdown budget in seconds (default 30)\n"
"  --startup-timeout S       wait this long for the database (default 30)\n"
"  --api-key KEY             require x-api-key: KEY or Authorization: Bearer KEY\n"
"  --db-auth                 map x-api-key / Bearer credentials to PostgreSQL\n"
"                            roles with lance_namespace.lance_authenticate()\n"
"                            and run each request as that role\n"
"  --anon-role ROLE          with --db-auth: role of requests without\n"
"                            credentials (default: such requests get 401)\n"
"  --force-insecure-bind     allow a non-loopback address without --api-key\n"
"                            or --db-auth\n"
"  --manifest-copy           finalize manifests by copying the staging file\n"
"                            instead of hard-linking it to the canonical name\n"
"  --no-openat2              open manifest directories one component at a\n"
"                            time (O_NOFOLLOW) instead of with openat2, as the\n"
"                            gateway does by itself where the kernel refuses it\n"
"  --quiet                   no access log\n"
"  --sweep                   do not serve: remove the manifest files that a\n"
"                            crash can orphan under --root (temporary .gw-*.tmp\n"
"                            files, canonical manifests of versions the catalog\n"
"                            does not have), print them, and exit\n"
"  --dry-run                 with --sweep: list those files, remove nothing\n"
"  --sweep-min-age S         with --sweep: keep files changed less than S\n"
"                            seconds ago (default 600)\n"
"  --help, --version\n"
"\n"
"Environment: LANCE_GATEWAY_LISTEN, LANCE_GATEWAY_DB, LANCE_GATEWAY_ROOT,\n"
"LANCE_GATEWAY_POOL, LANCE_GATEWAY_POOL_WAIT_MS, LANCE_GATEWAY_LOOPS,\n"
"LANCE_GATEWAY_LOOP_LOCK_WAIT_MS,\n"
"LANCE_GATEWAY_MAX_BODY_BYTES,\n"
"LANCE_GATEWAY_MAX_URL_BYTES, LANCE_GATEWAY_MAX_HEADER_BYTES,\n"
"LANCE_GATEWAY_MAX_BATCH_ENTRIES, LANCE_GATEWAY_REQUEST_TIMEOUT,\n"
"LANCE_GATEWAY_IDLE_TIMEOUT,\n"
"LANCE_GATEWAY_MAX_CONNECTIONS,\n"
"LANCE_GATEWAY_RETRIES, LANCE_GATEWAY_API_KEY, LANCE_GATEWAY_DB_AUTH=1,\n"
"LANCE_GATEWAY_ANON_ROLE,\n"
"LANCE_GATEWAY_FORCE_INSECURE_BIND=1, LANCE_GATEWAY_MANIFEST_COPY=1,\n"
"LANCE_GATEWAY_SWEEP_MIN_AGE.\n";

enum
{
	OPT_LISTEN = 256, OPT_DB, OPT_ROOT, OPT_POOL, OPT_POOL_WAIT, OPT_LOOPS, OPT_MAX_BODY,
	OPT_MAX_URL, OPT_MAX_CONN, OPT_RETRIES, OPT_SHUTDOWN, OPT_STARTUP,
	OPT_API_KEY, OPT_DB_AUTH, OPT_ANON_ROLE, OPT_INSECURE, OPT_QUIET, OPT_HELP,
	OPT_VERSION, OPT_MAX_HEADER, OPT_MAX_BATCH, OPT_REQ_TIMEOUT,
	OPT_IDLE_TIMEOUT, OPT_MANIFEST_COPY, OPT_NO_OPENAT2, OPT_SWEEP, OPT_DRY_RUN,
	OPT_SWEEP_MIN_AGE, OPT_LOOP_LOCK_WAIT
};

/*
 * parse_long
 *		Parse a decimal option value within [min, max]; exit on error.
 */
static long
parse_long(const char *name, const char *value, long min, long max)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (errno != 0 || end == value || *end != '\0' || v < min || v > max)
	{
		fprintf(stderr, "%s: invalid value for %s: \"%s\" (expected %ld..%ld)\n",
				GW_PROGRAM, name, value, min, max);
		exit(2);
	}
	return v;
}

/*
 * set_listen
 *		Split HOST:PORT (or [V6]:PORT) into gw_config.listen_host/port.
 */
static void
set_listen(const char *value)
{
	const char *colon = strrchr(value, ':');
	char	   *host;

	if (colon == NULL || colon == value || colon[1] == '\0')
	{
		fprintf(stderr, "%s: --listen must be HOST:PORT, got \"%s\"\n", GW_PROGRAM, value);
		exit(2);
	}
	host = strndup(value, colon - value);
	if (host[0] == '[' && host[strlen(host) - 1] == ']')
	{
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	parse_long("--listen port", colon + 1, 0, 65535);
	free(gw_config.listen_host);
	free(gw_config.listen_port);
	gw_config.listen_host = host;
	gw_config.listen_port = strdup(colon + 1);
}

/*
 * apply
 *		Apply one option value (from the environment or the command line).
 */
static void
apply(int opt, const char *name, const char *value)
{
	switch (opt)
	{
		case OPT_LISTEN:
			set_listen(value);
			break;
		case OPT_DB:
			free(gw_config.db);
			gw_config.db = strdup(value);
			break;
		case OPT_ROOT:
			free(gw_config.root);
			gw_config.root = strdup(value);
			break;
		case OPT_POOL:
			gw_config.pool_size = (int) parse_long(name, value, 1, 1000);
			break;
		case OPT_POOL_WAIT:
			gw_config.pool_wait_ms = (int) parse_long(name, value, 0, 600000);
			break;
		case OPT_LOOPS:
			gw_config.loops = (int) parse_long(name, value, 1, GW_MAX_LOOPS);
			break;
		case OPT_LOOP_LOCK_WAIT:
			gw_config.loop_lock_wait_ms = (int) parse_long(name, value, 0, 600000);
			break;
		case OPT_MAX_BODY:
			gw_config.max_body_bytes = parse_long(name, value, 1024, 1L << 30);
			break;
		case OPT_MAX_URL:
			gw_config.max_url_bytes = parse_long(name, value, 256, 1L << 20);
			break;
		case OPT_MAX_HEADER:
			gw_config.max_header_bytes = parse_long(name, value, 1024, 1L << 20);
			break;
		case OPT_MAX_BATCH:
			gw_config.max_batch_entries = (int) parse_long(name, value, 1, 1000000);
			break;
		case OPT_REQ_TIMEOUT:
			gw_config.request_timeout_s = (int) parse_long(name, value, 1, 3600);
			break;
		case OPT_IDLE_TIMEOUT:
			gw_config.idle_timeout_s = (int) parse_long(name, value, 1, 86400);
			break;
		case OPT_MAX_CONN:
			gw_config.max_connections = (int) parse_long(name, value, 1, 100000);
			break;
		case OPT_RETRIES:
			gw_config.max_retries = (int) parse_long(name, value, 0, 100);
			break;
		case OPT_SHUTDOWN:
			gw_config.shutdown_wait_s = (int) parse_long(name, value, 0, 3600);
			break;
		case OPT_STARTUP:
			gw_config.startup_wait_s = (int) parse_long(name, value, 0, 3600);
			break;
		case OPT_API_KEY:
			free(gw_config.api_key);
			gw_config.api_key = value[0] ? strdup(value) : NULL;
			break;
		case OPT_DB_AUTH:
			gw_config.db_auth = (value == NULL || strcmp(value, "0") != 0);
			break;
		case OPT_ANON_ROLE:
			free(gw_config.anon_role);
			gw_config.anon_role = value[0] ? strdup(value) : NULL;
			break;
		case OPT_INSECURE:
			gw_config.force_insecure_bind = (value == NULL || strcmp(value, "0") != 0);
			break;
		case OPT_QUIET:
			gw_config.quiet = true;
			break;
		case OPT_MANIFEST_COPY:
			gw_config.manifest_copy = (value == NULL || strcmp(value, "0") != 0);
			break;
		case OPT_NO_OPENAT2:
			gw_config.no_openat2 = (value == NULL || strcmp(value, "0") != 0);
			break;
		case OPT_SWEEP:
			gw_config.sweep = true;
			break;
		case OPT_DRY_RUN:
			gw_config.dry_run = true;
			break;
		case OPT_SWEEP_MIN_AGE:
			gw_config.sweep_min_age_s = (int) parse_long(name, value, 0, INT_MAX);
			break;
	}
}

/*
 * gw_config_load
 *		Defaults, then environment, then command line.  Exits on --help,
 *		--version and on errors.
 */
void
gw_config_load(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"db", required_argument, NULL, OPT_DB},
		{"root", required_argument, NULL, OPT_ROOT},
		{"pool", required_argument, NULL, OPT_POOL},
		{"pool-wait-ms", required_argument, NULL, OPT_POOL_WAIT},
		{"loops", required_argument, NULL, OPT_LOOPS},
		{"loop-lock-wait-ms", required_argument, NULL, OPT_LOOP_LOCK_WAIT},
		{"max-body-bytes", required_argument, NULL, OPT_MAX_BODY},
		{"max-url-bytes", required_argument, NULL, OPT_MAX_URL},
		{"max-header-bytes", required_argument, NULL, OPT_MAX_HEADER},
		{"max-batch-entries", required_argument, NULL, OPT_MAX_BATCH},
		{"request-timeout", required_argument, NULL, OPT_REQ_TIMEOUT},
		{"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
		{"max-connections", required_argument, NULL, OPT_MAX_CONN},
		{"retries", required_argument, NULL, OPT_RETRIES},
		{"shutdown-timeout", required_argument, NULL, OPT_SHUTDOWN},
		{"startup-timeout", required_argument, NULL, OPT_STARTUP},
		{"api-key", required_argument, NULL, OPT_API_KEY},
		{"db-auth", no_argument, NULL, OPT_DB_AUTH},
		{"anon-role", required_argument, NULL, OPT_ANON_ROLE},
		{"force-insecure-bind", no_argument, NULL, OPT_INSECURE},
		{"quiet", no_argument, NULL, OPT_QUIET},
		{"manifest-copy", no_argument, NULL, OPT_MANIFEST_COPY},
		{"no-openat2", no_argument, NULL, OPT_NO_OPENAT2},
		{"sweep", no_argument, NULL, OPT_SWEEP},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"sweep-min-age", required_argument, NULL, OPT_SWEEP_MIN_AGE},
		{"help", no_argument, NULL, OPT_HELP},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0}
	};
	static const struct
	{
		const char *env;
		int			opt;
	}			envs[] = {
		{"LANCE_GATEWAY_LISTEN", OPT_LISTEN},
		{"LANCE_GATEWAY_DB", OPT_DB},
		{"LANCE_GATEWAY_ROOT", OPT_ROOT},
		{"LANCE_GATEWAY_POOL", OPT_POOL},
		{"LANCE_GATEWAY_POOL_WAIT_MS", OPT_POOL_WAIT},
		{"LANCE_GATEWAY_LOOPS", OPT_LOOPS},
		{"LANCE_GATEWAY_LOOP_LOCK_WAIT_MS", OPT_LOOP_LOCK_WAIT},
		{"LANCE_GATEWAY_MAX_BODY_BYTES", OPT_MAX_BODY},
		{"LANCE_GATEWAY_MAX_URL_BYTES", OPT_MAX_URL},
		{"LANCE_GATEWAY_MAX_HEADER_BYTES", OPT_MAX_HEADER},
		{"LANCE_GATEWAY_MAX_BATCH_ENTRIES", OPT_MAX_BATCH},
		{"LANCE_GATEWAY_REQUEST_TIMEOUT", OPT_REQ_TIMEOUT},
		{"LANCE_GATEWAY_IDLE_TIMEOUT", OPT_IDLE_TIMEOUT},
		{"LANCE_GATEWAY_MAX_CONNECTIONS", OPT_MAX_CONN},
		{"LANCE_GATEWAY_RETRIES", OPT_RETRIES},
		{"LANCE_GATEWAY_API_KEY", OPT_API_KEY},
		{"LANCE_GATEWAY_DB_AUTH", OPT_DB_AUTH},
		{"LANCE_GATEWAY_ANON_ROLE", OPT_ANON_ROLE},
		{"LANCE_GATEWAY_FORCE_INSECURE_BIND", OPT_INSECURE},
		{"LANCE_GATEWAY_MANIFEST_COPY", OPT_MANIFEST_COPY},
		{"LANCE_GATEWAY_NO_OPENAT2", OPT_NO_OPENAT2},
		{"LANCE_GATEWAY_SWEEP_MIN_AGE", OPT_SWEEP_MIN_AGE},
	};
	int			opt;

	gw_config.listen_host = strdup("127.0.0.1");
	gw_config.listen_port = strdup("2333");
	gw_config.db = strdup("");
	gw_config.pool_size = 8;
	gw_config.pool_wait_ms = 5000;
	gw_config.loops = 1;
	gw_config.loop_lock_wait_ms = 50;
	gw_config.max_body_bytes = 1048576;
	gw_config.max_url_bytes = 8192;
	gw_config.max_header_bytes = 16384;
	gw_config.max_batch_entries = LANCE_MAX_BATCH_ENTRIES;
	gw_config.request_timeout_s = 30;
	gw_config.idle_timeout_s = 120;
	gw_config.max_connections = 256;
	gw_config.max_retries = 5;
	gw_config.shutdown_wait_s = 30;
	gw_config.startup_wait_s = 30;
	gw_config.sweep_min_age_s = 600;

	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++)
	{
		const char *v = getenv(envs[i].env);

		if (v != NULL)
			apply(envs[i].opt, envs[i].env, v);
	}

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1)
	{
		if (opt == OPT_HELP)
		{
			fputs(usage_text, stdout);
			exit(0);
		}
		if (opt == OPT_VERSION)
		{
			printf("%s %s\n", GW_PROGRAM, GW_VERSION);
			exit(0);
		}
		if (opt == '?')
		{
			fprintf(stderr, "Try \"%s --help\" for more information.\n", GW_PROGRAM);
			exit(2);
		}
		for (int i = 0; longopts[i].name; i++)
			if (longopts[i].val == opt)
			{
				char		name[64];

				/* errors name the option as it was written */
				snprintf(name, sizeof(name), "--%s", longopts[i].name);
				apply(opt, name, optarg);
			}
	}
	if (optind < argc)
	{
		fprintf(stderr, "%s: unexpected argument \"%s\"\n", GW_PROGRAM, argv[optind]);
		exit(2);
	}
	if (gw_config.api_key != NULL && gw_config.db_auth)
	{
		fprintf(stderr, "%s: --api-key and --db-auth are alternatives; use one\n", GW_PROGRAM);
		exit(2);
	}
	if (gw_config.anon_role != NULL && !gw_config.db_auth)
	{
		fprintf(stderr, "%s: --anon-role needs --db-auth\n", GW_PROGRAM);
		exit(2);
	}
	if (gw_config.dry_run && !gw_config.sweep)
	{
		fprintf(stderr, "%s: --dry-run needs --sweep\n", GW_PROGRAM);
		exit(2);
	}
	if (gw_config.root == NULL || gw_config.root[0] == '\0')
	{
		fprintf(stderr, "%s: --root DIR (or LANCE_GATEWAY_ROOT) is required\n", GW_PROGRAM);
		exit(2);
	}
}
