/*-------------------------------------------------------------------------
 *
 * manifest_rules.h
 *	  The names of a table's manifests, forward (version -> name) and
 *	  inverse (name -> version), defined once for the extension, which
 *	  computes canonical paths, and the gateway, which recognises them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_MANIFEST_RULES_H
#define LANCE_MANIFEST_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The directory of a table's (or branch's) manifests, below its location. */
#define LANCE_VERSIONS_DIR "_versions"

/* The directory of a branch other than main, below the table's location. */
#define LANCE_BRANCH_DIR "tree"

typedef enum LanceNamingScheme
{
	LANCE_NAMING_V1,			/* "<version>.manifest" */
	LANCE_NAMING_V2				/* "<20 digits: 2^64-1 - version>.manifest" */
} LanceNamingScheme;

extern int	lance_manifest_name(char *buf, size_t size, LanceNamingScheme scheme,
								int64_t version);
extern bool lance_manifest_version(const char *name, int64_t *version,
								   LanceNamingScheme *scheme);
extern const char *lance_manifest_client_path(const char *location);

#endif							/* LANCE_MANIFEST_RULES_H */
