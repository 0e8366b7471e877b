/*-------------------------------------------------------------------------
 *
 * durable_floor.c
 *	  The disk's ceiling for version/create: the file steps that the
 *	  gateway takes to make one staging manifest durable under its
 *	  canonical name, with no HTTP and no database, in the gateway's
 *	  order (src/gateway/storage_local.c):
 *		  write a 4 KiB staging file (the writer's part, not fsync'd);
 *		  open and fsync it; hard link it to the canonical name; fsync
 *		  the directory; unlink the staging name.
 *	  Each of N threads works in its own table directory, as the REST
 *	  benchmark's connections do, for S seconds.  Prints the operations
 *	  per second and the median and p99 latency of the durable part
 *	  (fsync to unlink) in microseconds:
 *
 *		  durable_floor DIR THREADS SECONDS
 *		  -> "ops_per_s p50_us p99_us"
 *
 *	  bench/run compiles it with cc and reports REST create against it.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MANIFEST_BYTES 4096
#define MAX_SAMPLES 1000000

typedef struct Worker
{
	pthread_t	thread;
	char		dir[4096];
	double		deadline;
	long		ops;
	long		nsamples;
	double	   *samples;		/* durable-part latency of each op, us */
	int			failed;
} Worker;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * one_op
 *		One commit's file steps.  Returns the seconds the durable part
 *		took, or -1 on an error (reported on stderr).
 */
static double
one_op(Worker *w, long n, const char *bytes)
{
	char		staging[4200];
	char		canonical[4200];
	double		t0;
	int			fd;
	int			dfd;

	snprintf(staging, sizeof(staging), "%s/%020ld.manifest-staging", w->dir, n);
	snprintf(canonical, sizeof(canonical), "%s/%020ld.manifest", w->dir, n);

	/* the writer: a new staging manifest, left in the page cache */
	fd = open(staging, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, bytes, MANIFEST_BYTES) != MANIFEST_BYTES || close(fd) != 0)
		goto fail;

	/* the gateway: make it durable under its canonical name */
	t0 = now_s();
	fd = open(staging, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0 || link(staging, canonical) != 0 || close(fd) != 0)
		goto fail;
	dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) != 0 || close(dfd) != 0 || unlink(staging) != 0)
		goto fail;
	return now_s() - t0;

fail:
	fprintf(stderr, "durable_floor: %s: %s\n", staging, strerror(errno));
	return -1;
}

static void *
worker_main(void *arg)
{
	Worker	   *w = arg;
	char		bytes[MANIFEST_BYTES];

	memset(bytes, 'm', sizeof(bytes));
	while (now_s() < w->deadline)
	{
		double		t = one_op(w, w->ops, bytes);

		if (t < 0)
		{
			w->failed = 1;
			break;
		}
		if (w->nsamples < MAX_SAMPLES)
			w->samples[w->nsamples++] = t * 1e6;
		w->ops++;
	}
	return NULL;
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
	int			nthreads;
	double		seconds;
	double		start;
	double		elapsed;
	Worker	   *w;
	double	   *all;
	long		total = 0;
	long		nall = 0;
	int			failed = 0;

	if (argc != 4 || (nthreads = atoi(argv[2])) < 1 || (seconds = atof(argv[3])) <= 0)
	{
		fprintf(stderr, "usage: durable_floor DIR THREADS SECONDS\n");
		return 2;
	}
	w = calloc(nthreads, sizeof(Worker));
	if (w == NULL)
		return 1;
	start = now_s();
	for (int i = 0; i < nthreads; i++)
	{
		snprintf(w[i].dir, sizeof(w[i].dir), "%s/t%d.lance", argv[1], i);
		if (mkdir(w[i].dir, 0755) != 0 && errno != EEXIST)
		{
			perror(w[i].dir);
			return 1;
		}
		strncat(w[i].dir, "/_versions", sizeof(w[i].dir) - strlen(w[i].dir) - 1);
		if ((mkdir(w[i].dir, 0755) != 0 && errno != EEXIST) ||
			(w[i].samples = malloc(sizeof(double) * MAX_SAMPLES)) == NULL)
		{
			perror(w[i].dir);
			return 1;
		}
		w[i].deadline = start + seconds;
	}
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0)
			return 1;
	for (int i = 0; i < nthreads; i++)
	{
		pthread_join(w[i].thread, NULL);
		total += w[i].ops;
		nall += w[i].nsamples;
		failed |= w[i].failed;
	}
	elapsed = now_s() - start;
	all = malloc(sizeof(double) * (nall > 0 ? nall : 1));
	if (all == NULL)
		return 1;
	nall = 0;
	for (int i = 0; i < nthreads; i++)
	{
		memcpy(all + nall, w[i].samples, sizeof(double) * w[i].nsamples);
		nall += w[i].nsamples;
	}
	qsort(all, nall, sizeof(double), cmp_double);
	if (failed || nall == 0)
		return 1;
	printf("%.0f %.0f %.0f\n", total / elapsed, all[nall / 2], all[(long) (nall * 0.99)]);
	return 0;
}
