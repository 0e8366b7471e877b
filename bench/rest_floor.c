/*
 * rest_floor.c: a floor probe, NOT a catalog (bench/run, section 5).
 *
 *   rest_floor PORT ROOT [FLUSH_LOG | pg:CONNINFO | pg2:CONNINFO]
 *
 * Serves on 127.0.0.1:PORT the REST routes that LanceDB's managed-
 * versioning client (connectNamespace "rest", bench/lancedb.mjs) calls, at
 * as little cost as a server can: one libmicrohttpd thread, state in this
 * process's memory, no database, no flush, no durability, no checks beyond
 * what the client needs.  version/create hard links the staged manifest to
 * its canonical name (the put-if-not-exists the gateway does too) without
 * any fsync.  What LanceDB's add costs through this server, against Lance's
 * own DirectoryNamespace in-process, is the price of the client's REST path
 * itself: no REST catalog can be cheaper.
 *
 * With FLUSH_LOG, each version/create also appends a record of the version
 * (about the size of a catalog's WAL for it) to that file and fdatasyncs it
 * before answering: one flush per commit, as any catalog that keeps its
 * promise of durability must make before it acknowledges (the gateway's is
 * its COMMIT's WAL flush).  Still not a catalog: the floor of a durable
 * REST catalog with this client on this disk.
 *
 * With pg:CONNINFO, each version/create instead makes the one round trip a
 * catalog kept in PostgreSQL cannot do without: the put-if-not-exists
 * INSERT ... ON CONFLICT DO NOTHING of target 3's baseline (bench/sql/
 * setup.sql's bench.raw_versions: versions' columns, defaults and primary
 * key, no foreign key, trigger or history) in its own transaction, whose
 * COMMIT waits for its WAL flush, on one connection (synchronous_commit as
 * the cluster has it); then the link, after the COMMIT, without a flush.
 * No function, no second round trip, no check: the floor of a durable
 * REST catalog that commits through PostgreSQL, with this client, on this
 * cluster.  Its rows have table ids from -1000000 down (-2000000 down
 * with pg2:), one a table.
 *
 * With pg2:CONNINFO, the order the gateway keeps instead (RELIABILITY.md,
 * "One flush per create"): BEGIN and the INSERT in one pipeline (one round
 * trip), the link while the row is uncommitted, then COMMIT (the second
 * round trip, with the flush): the floor of a catalog in PostgreSQL that
 * never lists a version before its file exists.
 *
 * Routes (anything else gets 406, so that a client needing more fails):
 *   POST /v1/namespace/{id}/create     POST /v1/table/{id}/declare
 *   POST /v1/table/{id}/version/list   POST /v1/table/{id}/version/create
 *   POST /v1/table/{id}/version/describe
 * On SIGTERM it prints "FLOOR requests=N creates=C create_median_us=U" (the
 * median time from a version/create's head to its answer sent, as the
 * gateway's access log measures it) and exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "probe_http.h"

static int flush_fd = -1;		/* FLUSH_LOG, or -1 */
static PGconn *pg;				/* pg: or pg2:CONNINFO, or NULL */
static bool pg_link_first;		/* pg2: link between the INSERT and COMMIT */

#define PG_TABLE_ID_BASE (-1000000)	/* the probe's rows: table_id base - index */
#define SQL_PUT \
	"INSERT INTO bench.raw_versions (table_id, branch, version, manifest_path," \
	" staging_manifest_path, manifest_size, naming_scheme, timestamp_millis)" \
	" VALUES ($1, 'main', $2, $3, $4, $5, 'V2'," \
	" (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint)" \
	" ON CONFLICT DO NOTHING RETURNING version"

#define MAX_TABLES 4096
#define MAX_BODY (1 << 20)

typedef struct Table
{
	char	   *key;			/* the id joined with '$' */
	char	   *location;		/* absolute directory of the table */
	json_t	   *versions;		/* array of version objects, ascending */
} Table;

typedef struct Req
{
	struct timespec start;		/* its head arrived */
	bool		create;			/* a version/create */
	char	   *body;
	size_t		len;
} Req;

static const char *root;
static char *namespaces[MAX_TABLES];
static int	nnamespaces;
static Table tables[MAX_TABLES];
static int	ntables;
static long served;
static double *create_us;
static int	ncreates;

/*
 * reply
 *		Queue a JSON answer (steals body).
 */
static enum MHD_Result
reply(struct MHD_Connection *conn, unsigned status, json_t *body)
{
	char	   *text = json_dumps(body, JSON_COMPACT);

	json_decref(body);
	return probe_reply(conn, status, text);
}

/*
 * error
 *		Queue an error answer in the shape of the gateway's.
 */
static enum MHD_Result
error(struct MHD_Connection *conn, unsigned status, int code, const char *detail, const char *msg)
{
	return reply(conn, status, json_pack("{s:s, s:i, s:s}", "error", msg, "code", code, "detail", detail));
}

/*
 * find_table
 *		The table of key, or NULL.
 */
static Table *
find_table(const char *key)
{
	for (int i = 0; i < ntables; i++)
		if (strcmp(tables[i].key, key) == 0)
			return &tables[i];
	return NULL;
}

/*
 * pg_step
 *		In pipeline mode: send sql (the prepared "put" when params is set)
 *		after a BEGIN if begin, then a Sync; true if every result is
 *		good; *rows: the rows of the last result.
 */
static bool
pg_step(bool begin, const char *sql, const char *const *params, int *rows)
{
	PGresult   *res;
	bool		ok = true;
	int			want = begin ? 2 : 1;

	if ((begin && PQsendQueryParams(pg, "BEGIN", 0, NULL, NULL, NULL, NULL, 0) != 1) ||
		(params != NULL ? PQsendQueryPrepared(pg, "put", 5, params, NULL, NULL, 0)
		 : PQsendQueryParams(pg, sql, 0, NULL, NULL, NULL, NULL, 0)) != 1 ||
		PQpipelineSync(pg) != 1)
		return false;
	for (int i = 0; i < want; i++)
	{
		res = PQgetResult(pg);
		ok = ok && (PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK);
		*rows = PQntuples(res);
		PQclear(res);
		PQclear(PQgetResult(pg));	/* the NULL that ends a statement's results */
	}
	res = PQgetResult(pg);
	ok = ok && PQresultStatus(res) == PGRES_PIPELINE_SYNC;
	PQclear(res);
	return ok;
}

/*
 * create_version
 *		Link the staged manifest to its canonical name, remember it, answer.
 */
static enum MHD_Result
create_version(struct MHD_Connection *conn, Table *t, json_t *body)
{
	const char *mp = json_string_value(json_object_get(body, "manifest_path"));
	const char *scheme = json_string_value(json_object_get(body, "naming_scheme"));
	json_int_t	version = json_integer_value(json_object_get(body, "version"));
	char		staging[PATH_MAX];
	char		canonical[PATH_MAX];
	char	   *slash;
	json_t	   *entry;
	struct timespec now;

	if (mp == NULL || version <= 0)
		return error(conn, 400, 13, "InvalidInput", "manifest_path and version are required");
	while (*mp == '/')
		mp++;
	snprintf(staging, sizeof(staging), "/%s", mp);
	slash = strrchr(staging, '/');
	if (strncmp(staging, t->location, strlen(t->location)) != 0 ||
		staging[strlen(t->location)] != '/' || slash - staging < 9 ||
		strncmp(slash - 9, "_versions", 9) != 0)
		return error(conn, 400, 13, "InvalidInput", "manifest_path is not in the table's _versions");
	if (scheme != NULL && strcmp(scheme, "V1") == 0)
		snprintf(canonical, sizeof(canonical), "%.*s/%" JSON_INTEGER_FORMAT ".manifest",
				 (int) (slash - staging), staging, version);
	else
		snprintf(canonical, sizeof(canonical), "%.*s/%020" PRIu64 ".manifest",
				 (int) (slash - staging), staging, UINT64_MAX - (uint64_t) version);
	if (pg != NULL)
	{
		char		tid[32], ver[32], size[32];
		const char *params[5] = {tid, ver, canonical, staging, size};
		PGresult   *res;
		bool		put;

		snprintf(tid, sizeof(tid), "%d", PG_TABLE_ID_BASE * (pg_link_first ? 2 : 1) - (int) (t - tables));
		snprintf(ver, sizeof(ver), "%" JSON_INTEGER_FORMAT, version);
		snprintf(size, sizeof(size), "%" JSON_INTEGER_FORMAT,
				 json_integer_value(json_object_get(body, "manifest_size")));
		if (pg_link_first)
		{
			int			rows = 0;
			bool		linked;

			if (!pg_step(true, NULL, params, &rows))
			{
				fprintf(stderr, "rest_floor: %s", PQerrorMessage(pg));
				return error(conn, 503, 17, "ServiceUnavailable", "the INSERT failed");
			}
			linked = rows == 1 && link(staging, canonical) == 0;
			if (!pg_step(false, linked ? "COMMIT" : "ROLLBACK", NULL, &rows))
			{
				fprintf(stderr, "rest_floor: %s", PQerrorMessage(pg));
				return error(conn, 503, 17, "ServiceUnavailable", "the COMMIT failed");
			}
			if (!linked)
				return error(conn, 409, 14, "ConcurrentModification", "the version exists");
			goto linked;
		}
		res = PQexecPrepared(pg, "put", 5, params, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			fprintf(stderr, "rest_floor: %s", PQerrorMessage(pg));
			PQclear(res);
			return error(conn, 503, 17, "ServiceUnavailable", "the INSERT failed");
		}
		put = PQntuples(res) == 1;
		PQclear(res);
		if (!put)
			return error(conn, 409, 14, "ConcurrentModification", "the version exists");
	}
	if (link(staging, canonical) != 0)
	{
		if (errno == EEXIST)
			return error(conn, 409, 14, "ConcurrentModification", "the version exists");
		return error(conn, 400, 13, "InvalidInput", strerror(errno));
	}
	if (flush_fd >= 0)
	{
		char		record[600];
		int			len = snprintf(record, sizeof(record), "%s %" JSON_INTEGER_FORMAT " %-500s\n",
								   canonical, version, "");

		if (write(flush_fd, record, (size_t) len) != len || fdatasync(flush_fd) != 0)
			return error(conn, 503, 17, "ServiceUnavailable", strerror(errno));
	}
linked:
	clock_gettime(CLOCK_REALTIME, &now);
	entry = json_pack("{s:I, s:s, s:O?, s:O?, s:I}",
					  "version", version, "manifest_path", canonical + 1,
					  "manifest_size", json_object_get(body, "manifest_size"),
					  "e_tag", json_object_get(body, "e_tag"),
					  "timestamp_millis", (json_int_t) now.tv_sec * 1000 + now.tv_nsec / 1000000);
	json_array_append(t->versions, entry);
	return reply(conn, 200, json_pack("{s:o}", "version", entry));
}

/*
 * version_list
 *		The table's versions, descending and limited as the query asks.
 */
static enum MHD_Result
version_list(struct MHD_Connection *conn, Table *t)
{
	const char *d = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "descending");
	const char *l = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "limit");
	bool		desc = d != NULL && strcmp(d, "true") == 0;
	size_t		n = json_array_size(t->versions);
	size_t		limit = l != NULL && atol(l) > 0 ? (size_t) atol(l) : n;
	json_t	   *out = json_array();

	for (size_t i = 0; i < n && i < limit; i++)
		json_array_append(out, json_array_get(t->versions, desc ? n - 1 - i : i));
	return reply(conn, 200, json_pack("{s:o}", "versions", out));
}

/*
 * route
 *		Answer a complete request.  url is decoded by libmicrohttpd.
 */
static enum MHD_Result
route(struct MHD_Connection *conn, const char *url, json_t *body)
{
	const char *delim = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "delimiter");
	char		key[1024];
	const char *kind;
	const char *id;
	const char *op;
	size_t		idlen;
	Table	   *t;

	if (strncmp(url, "/v1/namespace/", 14) == 0)
		kind = "namespace", id = url + 14;
	else if (strncmp(url, "/v1/table/", 10) == 0)
		kind = "table", id = url + 10;
	else
		return error(conn, 406, 0, "Unsupported", "not served by the floor probe");
	op = strchr(id, '/');
	if (op == NULL || (idlen = op - id) >= sizeof(key))
		return error(conn, 406, 0, "Unsupported", "not served by the floor probe");
	op++;
	/* the id joined with '$' whatever the delimiter */
	memcpy(key, id, idlen);
	key[idlen] = '\0';
	if (delim != NULL && strlen(delim) == 1)
		for (char *c = key; *c; c++)
			if (*c == delim[0])
				*c = '$';

	if (strcmp(kind, "namespace") == 0 && strcmp(op, "create") == 0)
	{
		for (int i = 0; i < nnamespaces; i++)
			if (strcmp(namespaces[i], key) == 0)
				return error(conn, 409, 2, "NamespaceAlreadyExists", "the namespace exists");
		if (nnamespaces == MAX_TABLES)
			return error(conn, 503, 17, "ServiceUnavailable", "the probe is full");
		namespaces[nnamespaces++] = strdup(key);
		return reply(conn, 200, json_pack("{s:{}}", "properties"));
	}
	if (strcmp(kind, "table") != 0)
		return error(conn, 406, 0, "Unsupported", "not served by the floor probe");
	if (strcmp(op, "declare") == 0)
	{
		char		loc[PATH_MAX];

		if (find_table(key) != NULL)
			return error(conn, 409, 5, "TableAlreadyExists", "the table exists");
		if (ntables == MAX_TABLES)
			return error(conn, 503, 17, "ServiceUnavailable", "the probe is full");
		snprintf(loc, sizeof(loc), "%s/%s.lance", root, key);
		for (char *c = loc + strlen(root); *c; c++)
			if (*c == '$')
				*c = '/';
		tables[ntables].key = strdup(key);
		tables[ntables].location = strdup(loc);
		tables[ntables].versions = json_array();
		ntables++;
		return reply(conn, 200, json_pack("{s:s, s:{}, s:b}", "location", loc, "properties",
										  "managed_versioning", 1));
	}
	t = find_table(key);
	if (t == NULL)
		return error(conn, 404, 4, "TableNotFound", "the table does not exist");
	if (strcmp(op, "version/list") == 0)
		return version_list(conn, t);
	if (strcmp(op, "version/create") == 0)
		return create_version(conn, t, body);
	if (strcmp(op, "version/describe") == 0)
	{
		json_int_t	v = json_integer_value(json_object_get(body, "version"));

		for (size_t i = 0; i < json_array_size(t->versions); i++)
		{
			json_t	   *e = json_array_get(t->versions, i);

			if (json_integer_value(json_object_get(e, "version")) == v)
				return reply(conn, 200, json_pack("{s:O}", "version", e));
		}
		return error(conn, 404, 11, "TableVersionNotFound", "the version does not exist");
	}
	return error(conn, 406, 0, "Unsupported", "not served by the floor probe");
}

/*
 * on_request
 *		libmicrohttpd's access handler: gather the body, then route.
 */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
		   const char *version, const char *upload, size_t *upload_size, void **ctx)
{
	Req		   *r = *ctx;
	json_t	   *body;
	enum MHD_Result ret;

	(void) cls;
	(void) version;
	if (r == NULL)
	{
		*ctx = r = calloc(1, sizeof(Req));
		clock_gettime(CLOCK_MONOTONIC, &r->start);
		return MHD_YES;
	}
	if (*upload_size > 0)
	{
		if (r->len + *upload_size > MAX_BODY)
			return MHD_NO;
		r->body = realloc(r->body, r->len + *upload_size + 1);
		memcpy(r->body + r->len, upload, *upload_size);
		r->len += *upload_size;
		*upload_size = 0;
		return MHD_YES;
	}
	served++;
	if (strcmp(method, "POST") != 0)
		return error(conn, 406, 0, "Unsupported", "not served by the floor probe");
	if (r->body != NULL)
		r->body[r->len] = '\0';
	body = r->body != NULL ? json_loads(r->body, JSON_DECODE_ANY, NULL) : NULL;
	if (r->body != NULL && body == NULL)
		return error(conn, 400, 13, "InvalidInput", "the body is not JSON");
	r->create = strstr(url, "/version/create") != NULL;
	ret = route(conn, url, body != NULL ? body : json_null());
	json_decref(body);
	return ret;
}

/*
 * on_completed
 *		A request ended: the time of a version/create, and its memory.
 */
static void
on_completed(void *cls, struct MHD_Connection *conn, void **ctx, enum MHD_RequestTerminationCode toe)
{
	Req		   *r = *ctx;

	(void) cls;
	(void) conn;
	(void) toe;
	if (r != NULL)
	{
		if (r->create)
		{
			struct timespec end;

			clock_gettime(CLOCK_MONOTONIC, &end);
			create_us = realloc(create_us, (ncreates + 1) * sizeof(double));
			create_us[ncreates++] = (end.tv_sec - r->start.tv_sec) * 1e6 +
				(end.tv_nsec - r->start.tv_nsec) / 1e3;
		}
		free(r->body);
		free(r);
		*ctx = NULL;
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	if (argc != 3 && argc != 4)
	{
		fprintf(stderr, "usage: rest_floor PORT ROOT [FLUSH_LOG | pg:CONNINFO | pg2:CONNINFO]\n");
		return 2;
	}
	if (argc == 4 && (strncmp(argv[3], "pg:", 3) == 0 || strncmp(argv[3], "pg2:", 4) == 0))
	{
		PGresult   *res;

		pg_link_first = argv[3][2] == '2';
		pg = PQconnectdb(strchr(argv[3], ':') + 1);
		res = PQstatus(pg) == CONNECTION_OK ? PQprepare(pg, "put", SQL_PUT, 0, NULL) : NULL;
		if (PQresultStatus(res) != PGRES_COMMAND_OK ||
			(pg_link_first && PQenterPipelineMode(pg) != 1))
		{
			fprintf(stderr, "rest_floor: %s", PQerrorMessage(pg));
			return 2;
		}
		PQclear(res);
	}
	else if (argc == 4 && (flush_fd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0600)) < 0)
	{
		fprintf(stderr, "rest_floor: %s: %s\n", argv[3], strerror(errno));
		return 2;
	}
	root = realpath(argv[2], NULL);
	if (root == NULL)
	{
		fprintf(stderr, "rest_floor: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	if (probe_serve("rest_floor", argv[1], MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL,
					on_request, on_completed) != 0)
		return 1;
	qsort(create_us, ncreates, sizeof(double), cmp_double);
	printf("FLOOR requests=%ld creates=%d create_median_us=%.0f\n", served, ncreates,
		   ncreates ? create_us[ncreates / 2] : 0.0);
	return 0;
}
