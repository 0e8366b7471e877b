/*-------------------------------------------------------------------------
 *
 * main.c
 *	  lance-namespace-gateway: start-up checks (bind safety, catalog root,
 *	  database reachable), the HTTP server, and graceful shutdown on
 *	  SIGTERM/SIGINT; or, with --sweep, the same catalog checks followed
 *	  by one sweep of orphaned manifest files (sweep.c).
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "commit.h"
#include "db.h"
#include "feed.h"
#include "pool.h"
#include "server_int.h"
#include "publish.h"
#include "table_files.h"

/* a failed start: exit with status 1 */
#define die(...) gw_fatal(1, __VA_ARGS__)

/*
 * resolve_listen
 *		Resolve --listen; refuse a non-loopback address without auth
 *		(loopback: 127.0.0.0/8 and ::1, and v4-mapped loopback).
 */
static struct addrinfo *
resolve_listen(void)
{
	struct addrinfo hints = {.ai_flags = AI_PASSIVE, .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res;
	int			rc = getaddrinfo(gw_config.listen_host, gw_config.listen_port, &hints, &res);
	const struct sockaddr_in6 *in6;
	bool		loopback;

	if (rc != 0)
		die("cannot resolve listen address %s: %s", gw_config.listen_host, gai_strerror(rc));
	in6 = (const struct sockaddr_in6 *) res->ai_addr;
	if (res->ai_addr->sa_family == AF_INET)
		loopback = (ntohl(((const struct sockaddr_in *) res->ai_addr)->sin_addr.s_addr) >> 24) == 127;
	else
		loopback = res->ai_addr->sa_family == AF_INET6 &&
			(IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
			 (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127));
	if (!loopback && gw_config.api_key == NULL &&
		!gw_config.db_auth && !gw_config.force_insecure_bind)
		die("refusing to listen on non-loopback address %s without authentication; "
			"set --api-key (LANCE_GATEWAY_API_KEY) or --db-auth, or pass --force-insecure-bind",
			gw_config.listen_host);
	return res;
}

/*
 * prepare_root
 *		Create the root directory if needed and return its real path.
 */
static char *
prepare_root(void)
{
	char		real[PATH_MAX];
	char		tmp[PATH_MAX];
	size_t		n;

	if (strncmp(gw_config.root, "s3://", 5) == 0)
	{
		/* a bucket and prefix: as given, without trailing slashes */
		n = strlen(gw_config.root);
		while (n > 5 && gw_config.root[n - 1] == '/')
			n--;
		return strndup(gw_config.root, n);
	}
	snprintf(tmp, sizeof(tmp), "%s", gw_config.root);
	/* mkdir -p */
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/')
		{
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	mkdir(tmp, 0755);
	if (realpath(gw_config.root, real) == NULL)
		die("root directory %s is not accessible: %s", gw_config.root, strerror(errno));
	return strdup(real);
}

/*
 * main
 */
int
main(int argc, char **argv)
{
	struct addrinfo *addr;
	sigset_t	sigs;
	char	   *root;
	char	   *catalog_root;
	char	   *catalog_dir;
	time_t		deadline;
	GwError		err;
	int			sig;
	int			port;

	setvbuf(stderr, NULL, _IOLBF, 0);
	json_object_seed(0);		/* before any thread creates JSON objects */
	gw_config_load(argc, argv);
	addr = gw_config.sweep ? NULL : resolve_listen();
	root = prepare_root();

	gw_error_clear(&err);
	if (!gw_storage_init(root, &err))
		die("%s", err.message);
	if (!gw_pool_init(gw_config.db, gw_config.sweep ? 1 : gw_config.pool_size))
		die("out of memory");
	/* wait for the database, then reconcile the catalog root location */
	deadline = time(NULL) + gw_config.startup_wait_s;
	for (;;)
	{
		/* the catalog's root location, set to root if it had none */
		gw_error_clear(&err);
		catalog_root = gw_db_value("SELECT COALESCE(lance_namespace.lance_root_location(),"
								   " lance_namespace.lance_set_root_location($1), $1)",
								   1, (const char *const *) &root, &err);
		if (catalog_root != NULL)
			break;
		if (err.code != LANCE_SERVICE_UNAVAILABLE || time(NULL) >= deadline)
		{
			fprintf(stderr, "%s: cannot use the catalog database: %s%s%s\n", GW_PROGRAM,
					err.message, err.detail[0] ? ": " : "", err.detail);
			if (err.code == LANCE_PERMISSION_DENIED)
				fprintf(stderr, "%s: hint: the catalog has no root location yet, and the gateway's "
						"role may not set it; as the catalog's owner run "
						"SELECT lance_namespace.lance_set_root_location('%s')\n", GW_PROGRAM, root);
			else if (strstr(err.message, "lance_namespace") != NULL ||
					 strstr(err.message, "does not exist") != NULL)
				fprintf(stderr, "%s: hint: run CREATE EXTENSION lance_namespace in that database\n",
						GW_PROGRAM);
			exit(1);
		}
		sleep(1);
	}
	/* root is prepare_root's: without file:// or a trailing '/' */
	catalog_dir = gw_table_location_dir(catalog_root);
	if (catalog_dir == NULL || strcmp(catalog_dir, root) != 0)
		die("the catalog's root location is %s but --root is %s; "
			"start the gateway with the catalog's root", catalog_root, root);
	free(catalog_dir);
	free(catalog_root);
	if (gw_config.sweep)
	{
		int			status = gw_sweep_run();

		gw_pool_shutdown();
		free(root);
		return status;
	}
	gw_error_clear(&err);
	if (!gw_db_load_routes(&err))
		die("%s: %s; hint: ALTER EXTENSION lance_namespace UPDATE (this gateway needs "
			LANCE_EXTVERSION ")",
			err.message, err.detail);

	/* every thread started from here on blocks these; main waits for them */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if (!gw_feed_start())
		die("cannot start the change-feed listener");
	/* publications a crash left unfinished are repaired before listening */
	if (!gw_publish_start())
		die("cannot publish the manifests the catalog holds");
	gw_commit_replay(root);

	if ((port = gw_server_start(addr->ai_addr)) < 0)
		die("cannot listen on %s:%s", gw_config.listen_host, gw_config.listen_port);
	fprintf(stderr, "%s %s: listening on %s:%d, root %s, pool %d\n", GW_PROGRAM, GW_VERSION,
			gw_config.listen_host, port, root, gw_config.pool_size);
	freeaddrinfo(addr);

	/* until SIGTERM or SIGINT; meanwhile, every 5 s, creates whose outcome waits */
	while ((sig = sigtimedwait(&sigs, NULL, &(struct timespec) {5, 0})) != SIGTERM &&
		   sig != SIGINT)
		gw_commit_resettle();

	fprintf(stderr, "%s: received %s, finishing in-flight requests\n", GW_PROGRAM,
			sig == SIGTERM ? "SIGTERM" : "SIGINT");
	gw_feed_stop();
	gw_server_stop();
	gw_publish_stop();
	gw_feed_join();
	gw_pool_shutdown();
	free(root);
	fprintf(stderr, "%s: stopped\n", GW_PROGRAM);
	return 0;
}
