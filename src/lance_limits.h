/*-------------------------------------------------------------------------
 *
 * lance_limits.h
 *	  The catalog's limits, defined once for the extension, the gateway
 *	  and the fuzz harness.  The configuration view reports them from here
 *	  (lance_limits()).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_LIMITS_H
#define LANCE_LIMITS_H

/* Longest name (namespace, table, branch, tag), in bytes. */
#define LANCE_MAX_NAME_BYTES	255

/* Longest delimiter of a string identifier, in bytes. */
#define LANCE_MAX_DELIMITER_BYTES	16

/*
 * Longest path the catalog records from a caller (a location, a root
 * location, a staging manifest path), and longest e_tag of a version, in
 * bytes.
 */
#define LANCE_MAX_PATH_BYTES	4096
#define LANCE_MAX_E_TAG_BYTES	1024

/* Most levels in an identifier. */
#define LANCE_MAX_ID_DEPTH		64

/* Page size of list operations called without a limit, and the largest. */
#define LANCE_DEFAULT_PAGE_SIZE 1000
#define LANCE_MAX_PAGE_SIZE		10000

/* Most entries, ranges or operations in one batch request. */
#define LANCE_MAX_BATCH_ENTRIES 10000

/*
 * Most bytes of a staged manifest that a create may send for the catalog to
 * hold until its file is durable ("manifest_base64", kept in
 * lance_namespace.publications), and most for all the manifests of one
 * request.  The gateway sends larger ones' files flushed instead.
 */
#define LANCE_MAX_HELD_MANIFEST_BYTES	1048576 /* 1 MiB */
#define LANCE_MAX_HELD_REQUEST_BYTES	8388608 /* 8 MiB */

#endif							/* LANCE_LIMITS_H */
