/*
 * create_floor.c: a floor probe of REST version/create, NOT a catalog
 * (bench/run, section 2).
 *
 *   create_floor PORT CONNINFO [gw]
 *
 * Serves POST /v1/table/{id}/version/create (and GET /health) on
 * 127.0.0.1:PORT with the least work that a REST catalog in PostgreSQL can
 * do for a create that is durable with one flush, as the gateway's is
 * (RELIABILITY.md, "One flush per create"):
 *   - read the staged manifest (its bytes must reach the WAL: nothing
 *     flushes the file);
 *   - BEGIN, the put-if-not-exists INSERT ... ON CONFLICT DO NOTHING of
 *     target 1's baseline (bench.raw_versions: no foreign key, trigger or
 *     creation record) and an INSERT of the bytes into bench.raw_held, in
 *     one pipeline (one round trip);
 *   - the hard link to the canonical name while the row is uncommitted, so
 *     that no version is listed before its file exists;
 *   - COMMIT (the second round trip, with the WAL flush), then the unlink
 *     of the staging name, then the answer.
 * A thread and a PostgreSQL connection per HTTP connection (libmicrohttpd's
 * thread-per-connection mode), no routing, no validation beyond what the
 * steps need, no audit, no confinement of paths, no publisher: the canonical
 * file is never flushed and the held bytes are never pruned.  Any catalog
 * that keeps the gateway's promises does all of this and more, so its rate
 * is a ceiling on theirs (the rows are truncated between runs by the
 * harness).  Table ids come from a hash of the table's name, from -3000000000
 * down.
 *
 * With "gw", the first round trip is the gateway's own create statement
 * instead (the catalog's binding rest_create_table_version with the bytes
 * as manifest_base64, as bench/pgbench/gw_create.sql sends it, into the
 * declared table of the URL): the catalog's PostgreSQL work with the least
 * HTTP and file handling around it, so that REST / this is the price of the
 * gateway's own handling (its routing, checks, workers and publisher).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <libpq-fe.h>
#include <openssl/evp.h>

#include "probe_http.h"

#define MAX_BODY (64 * 1024)
#define MAX_MANIFEST (16 * 1024 * 1024)

#define SQL_PUT \
	"INSERT INTO bench.raw_versions (table_id, branch, version, manifest_path," \
	" staging_manifest_path, manifest_size, naming_scheme, timestamp_millis)" \
	" VALUES ($1, 'main', $2, $3, $4, $5, 'V2'," \
	" (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint)" \
	" ON CONFLICT DO NOTHING RETURNING version"
#define SQL_HOLD \
	"INSERT INTO bench.raw_held (table_id, version, manifest) VALUES ($1, $2, $3)" \
	" ON CONFLICT DO NOTHING"

#define SQL_GW \
	"SELECT lance_namespace.rest_create_table_version($1::jsonb)::text"

static const char *conninfo;
static bool gw_mode;			/* the gateway's statement, not the bare INSERTs */
static pthread_key_t conn_key;	/* a connection's thread's PGconn */

typedef struct Req
{
	char	   *body;
	size_t		len;
} Req;

/*
 * error
 *		Queue an error answer in the shape of the gateway's.
 */
static enum MHD_Result
error(struct MHD_Connection *conn, unsigned status, int code, const char *msg)
{
	char	   *text;

	if (asprintf(&text, "{\"error\":\"%s\",\"code\":%d}", msg, code) < 0)
		return MHD_NO;
	return probe_reply(conn, status, text);
}

/*
 * db
 *		This thread's connection, opened and prepared on first use.
 */
static PGconn *
db(void)
{
	PGconn	   *tconn = pthread_getspecific(conn_key);
	PGresult   *r1;
	PGresult   *r2;
	bool		ok;

	if (tconn != NULL && PQstatus(tconn) == CONNECTION_OK)
		return tconn;
	PQfinish(tconn);
	tconn = PQconnectdb(conninfo);
	r1 = PQprepare(tconn, "put", SQL_PUT, 0, NULL);
	r2 = PQprepare(tconn, "hold", gw_mode ? SQL_GW : SQL_HOLD, 0, NULL);
	ok = PQresultStatus(r1) == PGRES_COMMAND_OK && PQresultStatus(r2) == PGRES_COMMAND_OK &&
		PQenterPipelineMode(tconn) == 1;
	PQclear(r1);
	PQclear(r2);
	if (!ok)
	{
		fprintf(stderr, "create_floor: %s", PQerrorMessage(tconn));
		PQfinish(tconn);
		tconn = NULL;
	}
	pthread_setspecific(conn_key, tconn);
	return tconn;
}

/*
 * drop
 *		Close this thread's connection after a failure.
 */
static void
drop(PGconn *pg)
{
	PQfinish(pg);
	pthread_setspecific(conn_key, NULL);
}

/*
 * results
 *		Read n statements' results and the Sync after them; true if all
 *		succeeded.  *rows: the first statement's rows.
 */
static bool
results(PGconn *pg, int n, int *rows)
{
	bool		ok = true;
	PGresult   *res;

	for (int i = 0; i < n; i++)
	{
		res = PQgetResult(pg);
		ok = ok && (PQresultStatus(res) == PGRES_COMMAND_OK ||
					PQresultStatus(res) == PGRES_TUPLES_OK);
		if (i == 1)
			*rows = PQntuples(res);
		PQclear(res);
		PQclear(PQgetResult(pg));	/* the NULL after a statement's results */
	}
	res = PQgetResult(pg);
	ok = ok && PQresultStatus(res) == PGRES_PIPELINE_SYNC;
	PQclear(res);
	return ok;
}

/*
 * read_file
 *		The whole file at path (malloc'd) and its size, or NULL.
 */
static char *
read_file(const char *path, size_t *len)
{
	int			fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat sb;
	char	   *buf = NULL;
	size_t		off = 0;

	if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size <= MAX_MANIFEST &&
		(buf = malloc(sb.st_size + 1)) != NULL)
	{
		while (off < (size_t) sb.st_size)
		{
			ssize_t		k = read(fd, buf + off, sb.st_size - off);

			if (k <= 0)
				break;
			off += k;
		}
		if (off != (size_t) sb.st_size)
		{
			free(buf);
			buf = NULL;
		}
	}
	if (fd >= 0)
		close(fd);
	*len = off;
	return buf;
}

/*
 * table_id
 *		A table id from the name in the URL (FNV-1a), from -3000000000 down.
 */
static long long
table_id(const char *name, size_t len)
{
	uint64_t	h = 14695981039346656037ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char) name[i]) * 1099511628211ULL;
	return -3000000000LL - (long long) (h % 1000000000ULL);
}

/*
 * gw_request
 *		The gateway's request JSON for the catalog's binding (malloc'd).
 */
static char *
gw_request(const char *name, size_t len, json_int_t version, const char *staging,
		   const char *bytes, size_t n)
{
	char	   *b64 = malloc(4 * ((n + 2) / 3) + 1);
	char	   *key = strndup(name, len);
	char	   *sep = key ? strchr(key, '$') : NULL;
	json_t	   *j;
	char	   *text = NULL;

	if (b64 != NULL && sep != NULL)
	{
		EVP_EncodeBlock((unsigned char *) b64, (const unsigned char *) bytes, (int) n);
		*sep = '\0';
		j = json_pack("{s:[s,s], s:I, s:s, s:I, s:s}", "id", key, sep + 1, "version", version,
					  "manifest_path", staging, "manifest_size", (json_int_t) n,
					  "manifest_base64", b64);
		text = json_dumps(j, JSON_COMPACT);
		json_decref(j);
	}
	free(b64);
	free(key);
	return text;
}

/*
 * create_version
 *		The create's steps (see the top of this file), then the answer.
 */
static enum MHD_Result
create_version(struct MHD_Connection *conn, const char *url, const char *body, size_t blen)
{
	json_t	   *j = json_loadb(body, blen, 0, NULL);
	const char *staging = json_string_value(json_object_get(j, "manifest_path"));
	json_int_t	version = json_integer_value(json_object_get(j, "version"));
	const char *name = url + strlen("/v1/table/");
	const char *end = strstr(name, "/version/create");
	const char *slash = staging ? strrchr(staging, '/') : NULL;
	char		canonical[PATH_MAX];
	char		tid[32], ver[32], size[32];
	const char *params[5] = {tid, ver, canonical, staging, size};
	int			lens[3] = {0, 0, 0};
	int			formats[3] = {0, 0, 1};
	const char *hold[3] = {tid, ver, NULL};
	PGconn	   *pg = db();
	char	   *bytes = NULL;
	char	   *request = NULL;
	size_t		n = 0;
	int			rows = 0;
	bool		linked;
	char	   *text;
	enum MHD_Result ret;

	if (slash == NULL || version <= 0 || end == NULL)
		ret = error(conn, 400, 13, "manifest_path and version are required");
	else if (pg == NULL)
		ret = error(conn, 503, 17, "no database connection");
	else if ((bytes = read_file(staging, &n)) == NULL)
		ret = error(conn, 400, 13, "the staging manifest cannot be read");
	else
	{
		snprintf(canonical, sizeof(canonical), "%.*s/%020" PRIu64 ".manifest",
				 (int) (slash - staging), staging, UINT64_MAX - (uint64_t) version);
		snprintf(tid, sizeof(tid), "%lld", table_id(name, end - name));
		snprintf(ver, sizeof(ver), "%" JSON_INTEGER_FORMAT, version);
		snprintf(size, sizeof(size), "%zu", n);
		hold[2] = bytes;
		lens[2] = (int) n;
		if (gw_mode)
			request = gw_request(name, end - name, version, staging, bytes, n);
		if ((gw_mode && request == NULL) ||
			PQsendQueryParams(pg, "BEGIN", 0, NULL, NULL, NULL, NULL, 0) != 1 ||
			(gw_mode && PQsendQueryPrepared(pg, "hold", 1, (const char *const *) &request,
											NULL, NULL, 0) != 1) ||
			(!gw_mode && (PQsendQueryPrepared(pg, "put", 5, params, NULL, NULL, 0) != 1 ||
						  PQsendQueryPrepared(pg, "hold", 3, hold, lens, formats, 0) != 1)) ||
			PQpipelineSync(pg) != 1 || !results(pg, gw_mode ? 2 : 3, &rows))
		{
			fprintf(stderr, "create_floor: %s", PQerrorMessage(pg));
			drop(pg);
			ret = error(conn, 503, 17, "the INSERT failed");
		}
		else
		{
			linked = rows == 1 && link(staging, canonical) == 0;
			if (PQsendQueryParams(pg, linked ? "COMMIT" : "ROLLBACK", 0, NULL, NULL, NULL, NULL, 0) != 1 ||
				PQpipelineSync(pg) != 1 || !results(pg, 1, &rows))
			{
				fprintf(stderr, "create_floor: %s", PQerrorMessage(pg));
				drop(pg);
				ret = error(conn, 503, 17, "the COMMIT failed");
			}
			else if (!linked)
				ret = error(conn, 409, 14, "the version exists");
			else
			{
				(void) unlink(staging);
				if (asprintf(&text, "{\"version\":{\"version\":%s,\"manifest_path\":\"%s\","
							 "\"manifest_size\":%s}}", ver, canonical, size) < 0)
					ret = MHD_NO;
				else
					ret = probe_reply(conn, 200, text);
			}
		}
	}
	free(bytes);
	free(request);
	json_decref(j);
	return ret;
}

/*
 * on_request
 *		libmicrohttpd's access handler: gather the body, then answer.
 */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
		   const char *version, const char *upload, size_t *upload_size, void **ctx)
{
	Req		   *r = *ctx;

	(void) cls;
	(void) version;
	if (r == NULL)
	{
		*ctx = r = calloc(1, sizeof(Req));
		return r != NULL ? MHD_YES : MHD_NO;
	}
	if (*upload_size > 0)
	{
		char	   *nb;

		if (r->len + *upload_size > MAX_BODY ||
			(nb = realloc(r->body, r->len + *upload_size)) == NULL)
			return MHD_NO;
		r->body = nb;
		memcpy(r->body + r->len, upload, *upload_size);
		r->len += *upload_size;
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "GET") == 0 && strcmp(url, "/health") == 0)
		return probe_reply(conn, 200, strdup("{\"status\":\"ok\"}"));
	if (strcmp(method, "POST") != 0 || strncmp(url, "/v1/table/", 10) != 0)
		return error(conn, 406, 0, "not served by the floor probe");
	return create_version(conn, url, r->body ? r->body : "", r->len);
}

/*
 * on_completed
 *		A request ended: its memory.
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
		free(r->body);
		free(r);
		*ctx = NULL;
	}
}

int
main(int argc, char **argv)
{
	if (argc != 3 && !(argc == 4 && strcmp(argv[3], "gw") == 0))
	{
		fprintf(stderr, "usage: create_floor PORT CONNINFO [gw]\n");
		return 2;
	}
	conninfo = argv[2];
	gw_mode = argc == 4;
	/* a connection's thread ends with it: so does its PGconn */
	pthread_key_create(&conn_key, (void (*) (void *)) PQfinish);
	return probe_serve("create_floor", argv[1], MHD_USE_THREAD_PER_CONNECTION |
					   MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, on_request, on_completed);
}
