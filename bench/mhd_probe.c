/*
 * mhd_probe.c: the gateway's read path stripped to libmicrohttpd and one
 * pipelined backend, so the ceiling of that design on this machine
 * (bench/run, section 2).  Not the gateway: one thread runs one
 * libmicrohttpd daemon in external epoll mode with the gateway's options
 * (suspend/resume, its connection memory), and answers every HTTP request
 * on 127.0.0.1:PORT with the gateway's own statement for version/describe
 * of bench$read (bench/pgbench/gw_describe.sql, as evloop_probe.c sends
 * it), pipelined over one libpq connection: a request is suspended while
 * its statement is in the pipeline and resumed with its answer.  As the
 * gateway's loop does (src/gateway/pipeline.c), a Sync ends every
 * SYNC_EVERY statements and the last of each wake-up.  It does
 * no routing, JSON, authentication, metrics or manifest check, and it
 * stops with an error rather than answer wrongly (a failed query).  Set
 * beside evloop_probe.c (the same loop without libmicrohttpd), it tells
 * what the HTTP library itself costs a read.
 *
 *   mhd_probe PORT CONNINFO
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <libpq-fe.h>
#include <microhttpd.h>

#include "probe_statement.h"

/* the gateway's connection memory: --max-url-bytes, --max-header-bytes, slack */
#define CONN_MEMORY (8192 + 16384 + 16384)
#define QMAX 4096
#define SYNC_EVERY 4			/* as src/gateway/pipeline.c */

typedef struct Req
{
	struct MHD_Connection *conn;
	bool		sent;			/* its statement is in the pipeline */
	char	   *answer;			/* malloc'd, once its result came */
} Req;

static PGconn *pg;
static Req *queue[QMAX];		/* requests in the pipeline, FIFO */
static int	qhead, qlen;
static int	unsynced;		/* statements sent since the last Sync */

static void
die(const char *what)
{
	fprintf(stderr, "mhd_probe: %s: %s\n", what, pg ? PQerrorMessage(pg) : strerror(errno));
	exit(1);
}

/*
 * on_request
 *		libmicrohttpd's access handler: send the statement once the request
 *		is complete (suspended until its answer), then answer.
 */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
		   const char *version, const char *upload, size_t *upload_size, void **ctx)
{
	Req		   *r = *ctx;
	struct MHD_Response *resp;
	enum MHD_Result ok;

	(void) cls, (void) url, (void) method, (void) version, (void) upload;
	if (r == NULL)
	{
		*ctx = r = calloc(1, sizeof(Req));
		return r != NULL ? MHD_YES : MHD_NO;
	}
	if (*upload_size > 0)
	{
		*upload_size = 0;		/* the body is not needed */
		return MHD_YES;
	}
	if (!r->sent)
	{
		if (qlen == QMAX)
			die("pipeline full");
		if (PQsendQueryPrepared(pg, "d", 0, NULL, NULL, NULL, 0) != 1 ||
			(++unsynced == SYNC_EVERY && PQpipelineSync(pg) != 1))
			die("send");
		unsynced %= SYNC_EVERY;
		r->conn = conn;
		r->sent = true;
		queue[(qhead + qlen++) % QMAX] = r;
		MHD_suspend_connection(conn);
		return MHD_YES;
	}
	resp = MHD_create_response_from_buffer(strlen(r->answer), r->answer, MHD_RESPMEM_MUST_FREE);
	r->answer = NULL;
	MHD_add_response_header(resp, "Content-Type", "application/json");
	ok = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ok;
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **ctx, enum MHD_RequestTerminationCode toe)
{
	Req		   *r = *ctx;

	(void) cls, (void) conn, (void) toe;
	if (r != NULL)
		free(r->answer);
	free(r);
	*ctx = NULL;
}

/*
 * read_pipeline
 *		Take the results that arrived; resume each request as its
 *		statement's results end.
 */
static void
read_pipeline(void)
{
	static bool got;			/* the head's statement returned its row */

	if (PQconsumeInput(pg) != 1)
		die("read");
	while (PQisBusy(pg) == 0)
	{
		PGresult   *res = PQgetResult(pg);
		Req		   *r = qlen > 0 ? queue[qhead] : NULL;

		if (res == NULL && !got)
			break;				/* nothing more has arrived */
		if (res == NULL)
		{
			qhead = (qhead + 1) % QMAX;
			qlen--;
			got = false;
			MHD_resume_connection(r->conn);
		}
		else if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 && r != NULL)
		{
			r->answer = strdup(PQgetvalue(res, 0, 0));
			got = true;
		}
		else if (PQresultStatus(res) != PGRES_PIPELINE_SYNC)
			die("query");
		PQclear(res);
	}
}

int
main(int argc, char **argv)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	struct epoll_event ev = {.events = EPOLLIN};
	struct epoll_event evs[64];
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	PGresult   *res;
	int			ep;

	if (argc != 3)
	{
		fprintf(stderr, "usage: mhd_probe PORT CONNINFO\n");
		return 2;
	}
	pg = PQconnectdb(argv[2]);
	if (PQstatus(pg) != CONNECTION_OK)
		die("connect");
	res = PQprepare(pg, "d", SQL, 0, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		die("prepare");
	PQclear(res);
	if (PQsetnonblocking(pg, 1) != 0 || PQenterPipelineMode(pg) != 1)
		die("pipeline mode");
	addr.sin_port = htons((uint16_t) atoi(argv[1]));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, 0, NULL, NULL,
						 on_request, NULL,
						 MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &addr,
						 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) CONN_MEMORY,
						 MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
						 MHD_OPTION_END);
	if (d == NULL || (info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD)) == NULL)
		die("listen");
	ep = epoll_create1(0);
	ev.data.fd = info->epoll_fd;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, info->epoll_fd, &ev) != 0)
		die("epoll");
	ev.data.fd = PQsocket(pg);
	if (epoll_ctl(ep, EPOLL_CTL_ADD, PQsocket(pg), &ev) != 0)
		die("epoll");
	printf("mhd_probe listening on 127.0.0.1:%s\n", argv[1]);
	fflush(stdout);
	for (;;)
	{
		MHD_UNSIGNED_LONG_LONG ms = 1000;
		int			n;

		/* as the gateway's loop: libmicrohttpd may have work now (resumed) */
		if (MHD_get_timeout(d, &ms) != MHD_YES || ms > 1000)
			ms = 1000;
		n = epoll_wait(ep, evs, 64, (int) ms);

		for (int i = 0; i < n; i++)
			if (evs[i].data.fd == PQsocket(pg))
				read_pipeline();
		MHD_run(d);
		if ((unsynced > 0 && PQpipelineSync(pg) != 1) || PQflush(pg) < 0)
			die("flush");
		unsynced = 0;
	}
}
