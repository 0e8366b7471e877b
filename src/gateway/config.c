/*-------------------------------------------------------------------------
 *
 * config.c
 *	  The gateway's options, defined once: each is a row of "options"
 *	  (name, environment variable, type and range, default, one text),
 *	  from which come the defaults, the LANCE_GATEWAY_* environment, the
 *	  command line (which wins), --help (the text without markdown), and
 *	  the options table of src/gateway/README.md (--help-markdown prints
 *	  it; the REST suite checks that the README holds exactly that).
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"

GwConfig	gw_config;

typedef enum OptType
{
	OT_STRING,					/* char *, any text */
	OT_NAME,					/* char *, NULL when empty (unset) */
	OT_INT,						/* int within [min, max] */
	OT_LONG,					/* long within [min, max] */
	OT_BOOL,					/* bool; a flag on the command line, "0" off in the environment */
	OT_LISTEN,					/* HOST:PORT into listen_host, listen_port */
	OT_CHOICE,					/* char *, one of arg's "a|b|c" */
	OT_ADDRESSING,				/* path|virtual: 0|1 into s3_virtual_hosted */
	OT_INFO						/* --help, --help-markdown, --version: print, exit */
} OptType;

typedef struct GwOption
{
	const char *name;			/* the long option, without "--" */
	const char *env;			/* LANCE_GATEWAY_* variable, or NULL */
	OptType		type;
	size_t		offset;			/* of the field in GwConfig */
	const char *arg;			/* its argument, NULL for a flag */
	const char *dflt;			/* default value, applied as if given; NULL: none */
	long		min;
	long		max;
	const char *dflt_note;		/* the default in words */
	const char *env_note;		/* other variables read, in order */
	const char *text;			/* what it does: the README's markdown, --help's plain */
} GwOption;

#define F(field) offsetof(GwConfig, field)

static const GwOption options[] = {
	{"listen", "LANCE_GATEWAY_LISTEN", OT_LISTEN, 0, "HOST:PORT", "127.0.0.1:2333", 0, 0, NULL, NULL,
	"address to listen on (`[::1]:2333` for IPv6; port 0 picks a free port, printed in the log)"},
	{"db", "LANCE_GATEWAY_DB", OT_STRING, F(db), "CONNINFO", "", 0, 0, "libpq defaults, PGHOST/PGPORT/...", NULL,
	"connection string or URI. It goes to libpq unchanged, so multi-host strings and `target_session_attrs` work"},
	{"root", "LANCE_GATEWAY_ROOT", OT_STRING, F(root), "DIR|s3://B/P", NULL, 0, 0, "(required)", NULL,
	"catalog root: a directory, or a bucket and key prefix (see below and \"Tables in buckets\")"},
	{"pool", "LANCE_GATEWAY_POOL", OT_INT, F(pool_size), "N", "8", 1, 1000, NULL, NULL,
	"PostgreSQL connections of the workers: writes, commits, `/ready`, and every request with `--db-auth`. Each loop's reads use one connection more, and the change feed one more"},
	{"loops", "LANCE_GATEWAY_LOOPS", OT_INT, F(loops), "N", "1", 1, GW_MAX_LOOPS, NULL, NULL,
	"loop threads, each a libmicrohttpd server on the same port (`SO_REUSEPORT`). Each accepts connections and answers reads over a pipelined database connection of its own; raise it where one core does not keep up with the reads"},
	{"loop-lock-wait-ms", "LANCE_GATEWAY_LOOP_LOCK_WAIT_MS", OT_INT, F(loop_lock_wait_ms), "MS", "50", 0, 600000, NULL, NULL,
	"the `lock_timeout` of the loops' pipelined connections (a shorter one already in effect, from `--db` or `ALTER ROLE`/`ALTER DATABASE ... SET`, is kept). A read that waits longer for a table lock there goes to a worker, so that the reads behind it go on (see \"Reads share one pipelined connection\" below). 0: no bound"},
	{"publish-interval-ms", "LANCE_GATEWAY_PUBLISH_INTERVAL_MS", OT_INT, F(publish_interval_ms), "MS", "100", 0, 3600000, NULL, NULL,
	"a create of a table under a local `--root` sends the staged manifest's bytes to the catalog with the version, so that the `COMMIT`'s WAL flush is the only flush it waits for; the canonical file is linked without a flush, and every MS milliseconds the publications since are made durable together (their writeback started at once, then flushed, sharing journal commits) and their bytes pruned from the catalog (RELIABILITY.md, \"One flush per create\"). 0: every create flushes its manifest file and directory before `COMMIT` (three flushes). Both keep every acknowledged version"},
	{"publish-backlog", "LANCE_GATEWAY_PUBLISH_BACKLOG", OT_INT, F(publish_backlog), "N", "1024", 1, 1000000, NULL, NULL,
	"the most creates whose manifests are pending publication at once (rows of `lance_namespace.publications`, and at most 64 MiB of their bytes). A create beyond them flushes its manifest before `COMMIT`, as with `--publish-interval-ms 0`, until the publisher catches up, so that what a stop flushes and a start checks stays bounded under any sustained load (RELIABILITY.md, \"One flush per create\")"},
	{"pool-wait-ms", "LANCE_GATEWAY_POOL_WAIT_MS", OT_INT, F(pool_wait_ms), "MS", "5000", 0, 600000, NULL, NULL,
	"how long a request waits for a free pooled connection before it gets 503"},
	{"max-body-bytes", "LANCE_GATEWAY_MAX_BODY_BYTES", OT_LONG, F(max_body_bytes), "N", "1048576", 1024, 1L << 30, NULL, NULL,
	"larger bodies get 413 (see below)"},
	{"max-url-bytes", "LANCE_GATEWAY_MAX_URL_BYTES", OT_LONG, F(max_url_bytes), "N", "8192", 256, 1L << 20, NULL, NULL,
	"longer request targets get 414"},
	{"max-header-bytes", "LANCE_GATEWAY_MAX_HEADER_BYTES", OT_LONG, F(max_header_bytes), "N", "16384", 1024, 1L << 20, NULL, NULL,
	"larger header sections get 431"},
	{"max-batch-entries", "LANCE_GATEWAY_MAX_BATCH_ENTRIES", OT_INT, F(max_batch_entries), "N", GW_STR(LANCE_MAX_BATCH_ENTRIES), 1, 1000000, NULL, NULL,
	"a body whose `entries`, `ranges` or `operations` array is longer gets 400 with code 13 (the extension's own cap is " GW_STR(LANCE_MAX_BATCH_ENTRIES) ", from the same `src/lance_limits.h`)"},
	{"request-timeout", "LANCE_GATEWAY_REQUEST_TIMEOUT", OT_INT, F(request_timeout_s), "S", "30", 1, 3600, NULL, NULL,
	"a request's body must have arrived S seconds after its head began to be served, else the connection is closed (see below)"},
	{"idle-timeout", "LANCE_GATEWAY_IDLE_TIMEOUT", OT_INT, F(idle_timeout_s), "S", "120", 1, 86400, NULL, NULL,
	"a connection without traffic for S seconds (libmicrohttpd's connection timeout) is closed (see below)"},
	{"max-connections", "LANCE_GATEWAY_MAX_CONNECTIONS", OT_INT, F(max_connections), "N", "256", 1, 100000, NULL, NULL,
	"concurrent HTTP connections (libmicrohttpd's connection limit, shared out among the loops); more wait in the listen backlog until one closes. If the process runs out of file descriptors first, libmicrohttpd says so on stderr and stops accepting until a connection closes"},
	{"retries", "LANCE_GATEWAY_RETRIES", OT_INT, F(max_retries), "N", "5", 0, 100, NULL, NULL,
	"retries of a transaction after a serialization failure or deadlock"},
	{"shutdown-timeout", NULL, OT_INT, F(shutdown_wait_s), "S", "30", 0, 3600, NULL, NULL,
	"time that in-flight requests get to finish after SIGTERM"},
	{"startup-timeout", NULL, OT_INT, F(startup_wait_s), "S", "30", 0, 3600, NULL, NULL,
	"how long start-up waits for the database"},
	{"api-key", "LANCE_GATEWAY_API_KEY", OT_NAME, F(api_key), "KEY", NULL, 0, 0, NULL, NULL,
	"if set, every route except `/health` and `/ready` needs `x-api-key: KEY` or `Authorization: Bearer KEY` (else 401, code 16)"},
	{"db-auth", "LANCE_GATEWAY_DB_AUTH", OT_BOOL, F(db_auth), NULL, NULL, 0, 0, NULL, NULL,
	"check credentials in the database instead (see below). Cannot be combined with `--api-key`"},
	{"anon-role", "LANCE_GATEWAY_ANON_ROLE", OT_NAME, F(anon_role), "ROLE", NULL, 0, 0, "such requests get 401", NULL,
	"with `--db-auth`, the role of requests that carry no credentials. Without it, such requests get 401"},
	{"force-insecure-bind", "LANCE_GATEWAY_FORCE_INSECURE_BIND", OT_BOOL, F(force_insecure_bind), NULL, NULL, 0, 0, NULL, NULL,
	"allow a non-loopback address without an API key"},
	{"quiet", NULL, OT_BOOL, F(quiet), NULL, NULL, 0, 0, NULL, NULL,
	"no access log"},
	{"manifest-copy", "LANCE_GATEWAY_MANIFEST_COPY", OT_BOOL, F(manifest_copy), NULL, NULL, 0, 0, NULL, NULL,
	"finalize a manifest by copying the staging file instead of hard-linking it (for storage where the canonical file must be a separate inode)"},
	{"no-openat2", "LANCE_GATEWAY_NO_OPENAT2", OT_BOOL, F(no_openat2), NULL, NULL, 0, 0, NULL, NULL,
	"open manifest directories one component at a time with `O_NOFOLLOW` instead of with `openat2` (the gateway does this by itself on kernels before 5.6 or where a seccomp filter refuses `openat2`; the rules are the same)"},
	{"drop-outside-root", "LANCE_GATEWAY_DROP_OUTSIDE_ROOT", OT_BOOL, F(drop_outside_root), NULL, NULL, 0, 0, NULL, NULL,
	"let DropTable delete the data of a table whose location lies outside `--root` (a registered table); without it such a drop is refused with 403 code 15 and nothing changes"},
	{"sweep", NULL, OT_BOOL, F(sweep), NULL, NULL, 0, 0, NULL, NULL,
	"do not serve: remove the manifest files that a crash can orphan under `--root`, print one line per file and a summary, and exit (see \"Orphaned files\" below)"},
	{"dry-run", NULL, OT_BOOL, F(dry_run), NULL, NULL, 0, 0, NULL, NULL,
	"with `--sweep`: list those files, remove nothing"},
	{"sweep-min-age", "LANCE_GATEWAY_SWEEP_MIN_AGE", OT_INT, F(sweep_min_age_s), "S", "600", 0, INT_MAX, NULL, NULL,
	"with `--sweep`: keep files whose inode changed (ctime) less than S seconds ago (objects: last modified)"},
	{"feed-poll-ms", "LANCE_GATEWAY_FEED_POLL_MS", OT_INT, F(feed_poll_ms), "MS", "100", 5, 60000, NULL, NULL,
	"how often `/v1/events` reads the commit history while someone subscribes (and at once, at most every 5 ms, after the gateway's own commits)"},
	{"sse-heartbeat-ms", "LANCE_GATEWAY_SSE_HEARTBEAT_MS", OT_LONG, F(sse_heartbeat_ms), "MS", "15000", 50, 3600000, NULL, NULL,
	"a `: heartbeat` comment is sent to an idle `/v1/events` stream this often"},
	{"sse-queue", "LANCE_GATEWAY_SSE_QUEUE", OT_INT, F(sse_queue), "N", "1024", 1, 1000000, NULL, NULL,
	"events the change feed keeps for all its subscribers together; a subscriber that falls further behind is disconnected"},
	{"sse-queue-bytes", "LANCE_GATEWAY_SSE_QUEUE_BYTES", OT_LONG, F(sse_queue_bytes), "N", "1048576", 1024, 1L << 30, NULL, NULL,
	"bytes of the events the change feed keeps for all its subscribers together; a subscriber that falls further behind is disconnected"},
	{"s3-endpoint", "LANCE_GATEWAY_S3_ENDPOINT", OT_NAME, F(s3_endpoint), "URL", NULL, 0, 0, "AWS S3 of the region", "`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`",
	"S3-compatible endpoint (MinIO, R2, Ceph RGW, GCS XML, moto). `http://` is accepted"},
	{"s3-region", "LANCE_GATEWAY_S3_REGION", OT_NAME, F(s3_region), "R", NULL, 0, 0, "us-east-1", "`AWS_REGION`, `AWS_DEFAULT_REGION`",
	"signing region"},
	{"s3-addressing", "LANCE_GATEWAY_S3_ADDRESSING", OT_ADDRESSING, F(s3_virtual_hosted), "path|virtual", NULL, 0, 0, "path with a custom endpoint, else virtual", NULL,
	"bucket in the path (`host/bucket/key`) or in the host name (`bucket.host/key`)"},
	{"s3-timeout-ms", "LANCE_GATEWAY_S3_TIMEOUT_MS", OT_LONG, F(s3_timeout_ms), "MS", "10000", 100, 600000, NULL, NULL,
	"deadline of one S3 request (connect: at most 3000)"},
	{"s3-retries", "LANCE_GATEWAY_S3_RETRIES", OT_INT, F(s3_retries), "N", "3", 0, 20, NULL, NULL,
	"retries of an S3 request that got no answer, a 5xx, 429 or `SlowDown`, with exponential backoff (100 ms doubling, at most 2 s, jittered); then 503 code 17"},
	{"vend-credentials", "LANCE_GATEWAY_VEND_CREDENTIALS", OT_CHOICE, F(vend_credentials), "none|static|sts", "none", 0, 0, NULL, NULL,
	"credentials put in the `storage_options` of DeclareTable and DescribeTable for tables in buckets (see \"Tables in buckets\")"},
	{"sts-role-arn", "LANCE_GATEWAY_STS_ROLE_ARN", OT_NAME, F(sts_role_arn), "ARN", NULL, 0, 0, NULL, NULL,
	"with `--vend-credentials sts`: the role that STS AssumeRole assumes"},
	{"sts-duration", "LANCE_GATEWAY_STS_DURATION", OT_INT, F(sts_duration_s), "S", "3600", 900, 43200, NULL, NULL,
	"lifetime of vended STS credentials (900 to 43200)"},
	{"sts-refresh-offset", "LANCE_GATEWAY_STS_REFRESH_OFFSET", OT_INT, F(sts_refresh_offset_s), "S", NULL, 0, 43200, "not sent (Lance's default: 60)", NULL,
	"with `sts`: vended as `refresh_offset_millis`, how long before `expires_at_millis` the client asks again"},
	{"sts-endpoint", "LANCE_GATEWAY_STS_ENDPOINT", OT_NAME, F(sts_endpoint), "URL", NULL, 0, 0, "the custom S3 endpoint, else AWS STS", "`AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL`",
	"STS endpoint"},
	{"help", NULL, OT_INFO, 0, NULL, NULL, 0, 0, NULL, NULL, "print this help and exit"},
	{"help-markdown", NULL, OT_INFO, 0, NULL, NULL, 0, 0, NULL, NULL, NULL},
	{"version", NULL, OT_INFO, 0, NULL, NULL, 0, 0, NULL, NULL, "print the version and exit"},
};

#define NOPTIONS (sizeof(options) / sizeof(options[0]))
#define OPT_BASE 256			/* getopt values: OPT_BASE + index */

/* a wrong option value or combination: exit with status 2 */
#define bad_usage(...) gw_fatal(2, __VA_ARGS__)

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
		bad_usage("invalid value for %s: \"%s\" (expected %ld..%ld)", name, value, min, max);
	return v;
}

/*
 * set_listen
 *		Split HOST:PORT (or [V6]:PORT) into gw_config.listen_host/port.
 */
static void
set_listen(const char *name, const char *value)
{
	const char *colon = strrchr(value, ':');
	char	   *host;

	if (colon == NULL || colon == value || colon[1] == '\0')
		bad_usage("%s must be HOST:PORT, got \"%s\"", name, value);
	host = strndup(value, colon - value);
	if (host[0] == '[' && host[strlen(host) - 1] == ']')
	{
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	parse_long(name, colon + 1, 0, 65535);
	free(gw_config.listen_host);
	free(gw_config.listen_port);
	gw_config.listen_host = host;
	gw_config.listen_port = strdup(colon + 1);
}

/*
 * is_choice
 *		Whether value is one of the "|"-separated choices.
 */
static bool
is_choice(const char *choices, const char *value)
{
	char		all[64];
	char		one[64];

	snprintf(all, sizeof(all), "|%s|", choices);
	snprintf(one, sizeof(one), "|%s|", value);
	return strlen(value) < sizeof(one) - 2 && strstr(all, one) != NULL;
}

/*
 * apply
 *		Apply an option's value (NULL: a flag); errors call it name.
 */
static void
apply(const GwOption *o, const char *name, const char *value)
{
	char	   *field = (char *) &gw_config + o->offset;

	switch (o->type)
	{
		case OT_CHOICE:
		case OT_ADDRESSING:
			if (!is_choice(o->arg, value))
				bad_usage("%s must be one of %s, got \"%s\"", name, o->arg, value);
			if (o->type == OT_ADDRESSING)
			{
				*(int *) field = strcmp(value, "virtual") == 0;
				break;
			}
			/* FALLTHROUGH */
		case OT_STRING:
		case OT_NAME:
			free(*(char **) field);
			*(char **) field = o->type == OT_NAME && value[0] == '\0' ? NULL : strdup(value);
			break;
		case OT_INT:
			*(int *) field = (int) parse_long(name, value, o->min, o->max);
			break;
		case OT_LONG:
			*(long *) field = parse_long(name, value, o->min, o->max);
			break;
		case OT_BOOL:
			*(bool *) field = (value == NULL || strcmp(value, "0") != 0);
			break;
		case OT_LISTEN:
			set_listen(name, value);
			break;
		case OT_INFO:
			break;
	}
}

/*
 * print_help
 *		--help: each option's text and default, plain and wrapped.
 */
static void
print_help(void)
{
	printf("Usage: %s [OPTION]...\n"
		   "       %s --sweep [--dry-run] [--sweep-min-age S] [OPTION]...\n"
		   "Serve the Lance Namespace REST API from a PostgreSQL lance_namespace catalog.\n\n",
		   GW_PROGRAM, GW_PROGRAM);
	for (const GwOption *o = options; o < options + NOPTIONS; o++)
	{
		char		head[64];
		char		text[2048];
		int			col = 0;

		if (o->text == NULL)
			continue;
		snprintf(head, sizeof(head), "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		if (o->dflt_note && o->dflt_note[0] == '(')
			snprintf(text, sizeof(text), "%s %s", o->text, o->dflt_note);
		else if (o->dflt_note || (o->dflt && o->dflt[0]))
			snprintf(text, sizeof(text), "%s (default %s)", o->text, o->dflt_note ? o->dflt_note : o->dflt);
		else
			snprintf(text, sizeof(text), "%s", o->text);
		printf("  %-24s ", head);
		for (const char *p = text; *p; p += strspn(p, " "))
		{
			int			len = (int) strcspn(p, " ");

			if (col > 0 && col + 1 + len > 50)
			{
				printf("\n%27s", "");
				col = 0;
			}
			putchar(' ');
			col += len + 1;
			for (; len > 0; len--, p++)
				if (*p != '`')
					putchar(*p);
		}
		putchar('\n');
	}
	printf("\nEvery option with a variable in src/gateway/README.md can also be set in the\n"
		   "environment (LANCE_GATEWAY_...); the command line wins.  S3 credentials:\n"
		   "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN.\n");
}

/*
 * print_markdown
 *		--help-markdown: the options table of src/gateway/README.md.
 */
static void
print_markdown(void)
{
	printf("| option | environment | default | meaning |\n|---|---|---|---|\n");
	for (size_t i = 0; i < NOPTIONS; i++)
	{
		const GwOption *o = &options[i];

		if (o->type == OT_INFO)
			continue;
		printf("| `--%s%s", o->name, o->arg ? " " : "");
		for (const char *p = o->arg ? o->arg : ""; *p; p++)
			printf(*p == '|' ? "\\|" : "%c", *p);
		printf("` | ");
		if (o->env)
			printf("`%s%s`", o->env, o->type == OT_BOOL ? "=1" : "");
		if (o->env_note)
			printf(", else %s", o->env_note);
		printf(" | ");
		if (o->dflt_note)
			printf("%s", o->dflt_note);
		else if (o->dflt && o->dflt[0])
			printf("`%s`", o->dflt);
		else
			printf("%s", o->type == OT_BOOL ? "off" : "none");
		printf(" | %s |\n", o->text);
	}
}

/*
 * gw_config_load
 *		Defaults, environment, command line; exits on --help or an error.
 */
void
gw_config_load(int argc, char **argv)
{
	struct option longopts[NOPTIONS + 1];
	int			opt;

	memset(&gw_config, 0, sizeof(gw_config));
	gw_config.s3_virtual_hosted = -1;
	for (size_t i = 0; i < NOPTIONS; i++)
	{
		const char *v = options[i].env ? getenv(options[i].env) : NULL;

		longopts[i].name = options[i].name;
		longopts[i].has_arg = options[i].arg ? required_argument : no_argument;
		longopts[i].flag = NULL;
		longopts[i].val = OPT_BASE + (int) i;
		/* an option writes only its own fields: its default, then its variable */
		if (options[i].dflt != NULL)
			apply(&options[i], options[i].name, options[i].dflt);
		if (v != NULL)
			apply(&options[i], options[i].env, v);
	}
	memset(&longopts[NOPTIONS], 0, sizeof(longopts[NOPTIONS]));

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1)
	{
		const GwOption *o;
		char		name[64];

		if (opt < OPT_BASE || opt >= OPT_BASE + (int) NOPTIONS)
		{
			fprintf(stderr, "Try \"%s --help\" for more information.\n", GW_PROGRAM);
			exit(2);
		}
		o = &options[opt - OPT_BASE];
		if (strcmp(o->name, "help") == 0)
			print_help();
		else if (strcmp(o->name, "help-markdown") == 0)
			print_markdown();
		else if (o->type == OT_INFO)
			printf("%s %s\n", GW_PROGRAM, GW_VERSION);
		if (o->type == OT_INFO)
			exit(0);
		/* errors name the option as it was written */
		snprintf(name, sizeof(name), "--%s", o->name);
		apply(o, name, optarg);
	}
	if (optind < argc)
		bad_usage("unexpected argument \"%s\"", argv[optind]);
	if (gw_config.api_key != NULL && gw_config.db_auth)
		bad_usage("--api-key and --db-auth are alternatives; use one");
	if (gw_config.anon_role != NULL && !gw_config.db_auth)
		bad_usage("--anon-role needs --db-auth");
	if (gw_config.dry_run && !gw_config.sweep)
		bad_usage("--dry-run needs --sweep");
	if (gw_config.root == NULL || gw_config.root[0] == '\0')
		bad_usage("--root DIR (or LANCE_GATEWAY_ROOT) is required");
	if (strcmp(gw_config.vend_credentials, "sts") == 0 && gw_config.sts_role_arn == NULL)
		bad_usage("--vend-credentials sts needs --sts-role-arn");
}
