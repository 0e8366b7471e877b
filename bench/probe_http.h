/*
 * probe_http.h: what the REST floor probes (rest_floor.c, create_floor.c)
 * share: answering with JSON text, and serving on loopback until SIGTERM
 * or SIGINT.  Each probe is one program of one file, built by bench/run.
 */
#ifndef PROBE_HTTP_H
#define PROBE_HTTP_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

/*
 * probe_reply
 *		Queue an answer of JSON text (malloc'd, taken; NULL: no memory).
 */
static enum MHD_Result
probe_reply(struct MHD_Connection *conn, unsigned status, char *text)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (text == NULL)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(resp, "Content-Type", "application/json");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/*
 * probe_serve
 *		Serve on 127.0.0.1:port with libmicrohttpd's flags, saying
 *		"<name> listening on ..." once it listens, until SIGTERM or SIGINT.
 *		Non-zero if it cannot listen.
 */
static int
probe_serve(const char *name, const char *port, unsigned int flags,
			MHD_AccessHandlerCallback handler, MHD_RequestCompletedCallback completed)
{
	struct sockaddr_in addr;
	struct MHD_Daemon *d;
	sigset_t	set;
	int			sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons(atoi(port));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d = MHD_start_daemon(flags, 0, NULL, NULL, handler, NULL,
						 MHD_OPTION_SOCK_ADDR, &addr,
						 MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
						 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 120,
						 MHD_OPTION_END);
	if (d == NULL)
	{
		fprintf(stderr, "%s: cannot listen on 127.0.0.1:%s\n", name, port);
		return 1;
	}
	printf("%s listening on 127.0.0.1:%s\n", name, port);
	fflush(stdout);
	sigwait(&set, &sig);
	MHD_stop_daemon(d);
	return 0;
}

#endif							/* PROBE_HTTP_H */
