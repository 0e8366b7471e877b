/*-------------------------------------------------------------------------
 *
 * manifest_rules.c
 *	  Lance's manifest file names, both ways.
 *
 * V2 (the default): the version's distance from 2^64-1, zero-padded to 20
 * digits, so that names sort newest first; V1: the version in decimal.
 * Both end in ".manifest".  lance_manifest_version accepts exactly the
 * names lance_manifest_name makes ("007.manifest", or a 20-digit name
 * beyond the bigint range, is no version's name).  A REST answer gives a
 * manifest's location in the form Lance clients use (lance_manifest_client_path).
 * Pure C: the extension (version_ops.c, rest_bindings.c) and the gateway
 * (sweep.c, commit.c) compile this file.
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "manifest_rules.h"

#define MANIFEST_SUFFIX ".manifest"

/*
 * lance_manifest_name
 *		The file name of version (>= 0) in scheme, into buf; returns what
 *		snprintf returns.
 */
int
lance_manifest_name(char *buf, size_t size, LanceNamingScheme scheme, int64_t version)
{
	if (scheme == LANCE_NAMING_V1)
		return snprintf(buf, size, "%" PRId64 MANIFEST_SUFFIX, version);
	return snprintf(buf, size, "%020" PRIu64 MANIFEST_SUFFIX, UINT64_MAX - (uint64_t) version);
}

/*
 * parse_digits
 *		The value of n decimal digits at s; false if it exceeds 2^64-1.
 */
static bool
parse_digits(const char *s, size_t n, uint64_t *value)
{
	uint64_t	v = 0;

	for (size_t i = 0; i < n; i++)
	{
		unsigned	d = (unsigned) (s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*value = v;
	return true;
}

/*
 * lance_manifest_version
 *		Whether name is the manifest name of a version in either scheme;
 *		if so, *version and (when not NULL) *scheme say which.
 */
bool
lance_manifest_version(const char *name, int64_t *version, LanceNamingScheme *scheme)
{
	size_t		digits = strspn(name, "0123456789");
	uint64_t	v = 0;

	if (digits == 0 || strcmp(name + digits, MANIFEST_SUFFIX) != 0)
		return false;
	if (digits == 20)
	{
		if (!parse_digits(name, digits, &v) || UINT64_MAX - v > (uint64_t) INT64_MAX)
			return false;
		*version = (int64_t) (UINT64_MAX - v);
		if (scheme)
			*scheme = LANCE_NAMING_V2;
		return true;
	}
	if (digits > 19 || (digits > 1 && name[0] == '0') ||
		!parse_digits(name, digits, &v) || v > (uint64_t) INT64_MAX)
		return false;
	*version = (int64_t) v;
	if (scheme)
		*scheme = LANCE_NAMING_V1;
	return true;
}

/*
 * lance_manifest_client_path
 *		The object store's path of a recorded manifest location, the form
 *		every TableVersion answer on REST carries (as Lance clients and
 *		Lance's DirectoryNamespace use it): a pointer to the key of
 *		"s3://BUCKET/KEY" or past the leading "/" of a file path; location
 *		itself for anything else.
 */
const char *
lance_manifest_client_path(const char *location)
{
	if (strncmp(location, "s3://", 5) == 0)
	{
		const char *key = strchr(location + 5, '/');

		return key != NULL && key[1] != '\0' ? key + 1 : location;
	}
	if (location[0] == '/')
		return location + 1;
	return location;
}
