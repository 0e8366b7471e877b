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

/* Most levels in an identifier. */
#define LANCE_MAX_ID_DEPTH		64

/* Page size of list operations called without a limit, and the largest. */
#define LANCE_DEFAULT_PAGE_SIZE 1000
#define LANCE_MAX_PAGE_SIZE		10000

/* Most entries, ranges or operations in one batch request. */
#define LANCE_MAX_BATCH_ENTRIES 10000

#endif							/* LANCE_LIMITS_H */
