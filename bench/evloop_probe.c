/*
 * evloop_probe.c: the gateway's event loop (src/gateway/evloop.c) stripped
 * to one REST read, so its ceiling on this machine (bench/run, section 2).
 * Not the gateway: one thread
 * with epoll answers every HTTP request on 127.0.0.1:PORT with the
 * gateway's own statement for version/describe of bench$read
 * (bench/pgbench/gw_describe.sql), pipelined over NPG libpq connections,
 * so that the requests of many clients that are ready at one wake-up go
 * to a backend together.  It does no routing, JSON, authentication or
 * metrics, and it stops with an error rather than answer wrongly (a
 * failed query, a response that does not fit the socket).  A client keeps
 * one backend (so its answers stay in order); an answer for a client that
 * has closed meanwhile is dropped, not sent to a later owner of its fd.
 *
 *   evloop_probe PORT CONNINFO NPG
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "probe_statement.h"

#define QMAX 4096

typedef struct Client
{
	int			fd;
	char		buf[8192];
	size_t		len;
} Client;

typedef struct Pg
{
	PGconn	   *conn;
	int			q[QMAX];		/* client fds waiting, FIFO */
	unsigned	qgen[QMAX];		/* ... and their fds' generations */
	int			head, n;
} Pg;

static Client *clients[65536];
static unsigned gens[65536];	/* bumped when an fd's client closes */
static Pg  *pgs;
static int	npg;
static int	ep;

static void
send_response(int fd, const char *body, size_t blen)
{
	char		hdr[256];
	int			h = snprintf(hdr, sizeof(hdr),
							 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n", blen);
	struct iovec iov[2] = {{hdr, (size_t) h}, {(void *) body, blen}};
	struct msghdr m = {0};
	ssize_t		k;

	m.msg_iov = iov;
	m.msg_iovlen = 2;
	k = sendmsg(fd, &m, MSG_NOSIGNAL);
	if (k < 0 && (errno == EPIPE || errno == ECONNRESET))
		return;					/* the client went away; it reads no more */
	if (k != (ssize_t) (h + blen))
	{
		perror("evloop_probe: sendmsg (short or failed)");
		exit(1);
	}
}

static void
pg_read(Pg *p)
{
	if (!PQconsumeInput(p->conn))
	{
		fprintf(stderr, "evloop_probe: %s", PQerrorMessage(p->conn));
		exit(1);
	}
	while (p->n > 0 && !PQisBusy(p->conn))
	{
		PGresult   *r = PQgetResult(p->conn);

		if (r == NULL)
			continue;			/* end of one query's results */
		if (PQresultStatus(r) == PGRES_PIPELINE_SYNC)
		{
			PQclear(r);
			p->head = (p->head + 1) % QMAX;
			p->n--;
			continue;
		}
		if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		{
			fprintf(stderr, "evloop_probe: query: %s", PQresultErrorMessage(r));
			exit(1);
		}
		if (clients[p->q[p->head]] && gens[p->q[p->head]] == p->qgen[p->head])
			send_response(p->q[p->head], PQgetvalue(r, 0, 0), PQgetlength(r, 0, 0));
		PQclear(r);
	}
}

static void
client_read(Client *c)
{
	for (;;)
	{
		ssize_t		k = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
		char	   *end;

		if (k == 0 || (k < 0 && errno != EAGAIN))
		{
			close(c->fd);
			clients[c->fd] = NULL;
			gens[c->fd]++;
			free(c);
			return;
		}
		if (k < 0)
			return;
		c->len += k;
		while ((end = memmem(c->buf, c->len, "\r\n\r\n", 4)) != NULL)
		{
			size_t		head = end + 4 - c->buf;
			char	   *cl = memmem(c->buf, head, "Content-Length:", 15);
			size_t		body = cl ? strtoul(cl + 15, NULL, 10) : 0;
			Pg		   *p;

			if (c->len < head + body)
				break;
			p = &pgs[c->fd % npg];
			if (p->n == QMAX)
			{
				fprintf(stderr, "evloop_probe: more than %d requests in flight\n", QMAX);
				exit(1);
			}
			if (!PQsendQueryPrepared(p->conn, "d", 0, NULL, NULL, NULL, 0) ||
				!PQpipelineSync(p->conn))
			{
				fprintf(stderr, "evloop_probe: send: %s", PQerrorMessage(p->conn));
				exit(1);
			}
			p->q[(p->head + p->n) % QMAX] = c->fd;
			p->qgen[(p->head + p->n) % QMAX] = gens[c->fd];
			p->n++;
			memmove(c->buf, c->buf + head + body, c->len - head - body);
			c->len -= head + body;
		}
	}
}

int
main(int argc, char **argv)
{
	int			lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int			one = 1;
	struct sockaddr_in a = {0};
	struct epoll_event ev, evs[256];

	if (argc != 4 || (npg = atoi(argv[3])) < 1)
	{
		fprintf(stderr, "usage: evloop_probe PORT CONNINFO NPG\n");
		return 2;
	}
	pgs = calloc(npg, sizeof(Pg));
	ep = epoll_create1(0);
	for (int i = 0; i < npg; i++)
	{
		PGresult   *r;

		pgs[i].conn = PQconnectdb(argv[2]);
		if (PQstatus(pgs[i].conn) != CONNECTION_OK)
		{
			fprintf(stderr, "evloop_probe: %s", PQerrorMessage(pgs[i].conn));
			return 1;
		}
		r = PQprepare(pgs[i].conn, "d", SQL, 0, NULL);
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
		{
			fprintf(stderr, "%s", PQerrorMessage(pgs[i].conn));
			return 1;
		}
		PQclear(r);
		PQenterPipelineMode(pgs[i].conn);
		PQsetnonblocking(pgs[i].conn, 1);
		ev.events = EPOLLIN;
		ev.data.u64 = (1ULL << 32) | i;
		epoll_ctl(ep, EPOLL_CTL_ADD, PQsocket(pgs[i].conn), &ev);
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_family = AF_INET;
	a.sin_port = htons(atoi(argv[1]));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *) &a, sizeof(a)) || listen(lfd, 1024))
	{
		perror("evloop_probe: listen");
		return 1;
	}
	ev.events = EPOLLIN;
	ev.data.u64 = 2ULL << 32;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	for (;;)
	{
		int			n = epoll_wait(ep, evs, 256, -1);

		for (int i = 0; i < n; i++)
		{
			unsigned	kind = evs[i].data.u64 >> 32;
			unsigned	id = evs[i].data.u64 & 0xffffffff;

			if (kind == 2)
			{
				int			fd;

				while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0)
				{
					if (fd >= (int) (sizeof(clients) / sizeof(clients[0])))
					{
						close(fd);
						continue;
					}
					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
					clients[fd] = calloc(1, sizeof(Client));
					clients[fd]->fd = fd;
					ev.events = EPOLLIN;
					ev.data.u64 = fd;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
				}
			}
			else if (kind == 1)
				pg_read(&pgs[id]);
			else if (clients[id])
				client_read(clients[id]);
		}
		/* one flush per wake-up: the batch goes out together */
		for (int i = 0; i < npg; i++)
			if (pgs[i].n > 0)
				PQflush(pgs[i].conn);
	}
}
