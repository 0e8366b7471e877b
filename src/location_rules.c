/*-------------------------------------------------------------------------
 *
 * location_rules.c
 *	  The comparable form of a table location, as pure functions that
 *	  build into the extension, the gateway and the fuzz harness.
 *
 * A location key is what two locations that name the same place have in
 * common:
 *	- "file:///p" and "/p" are the local path "/p";
 *	- a URI's scheme is lower-cased ("s3a" is "s3": the same objects), and
 *	  its authority (the bucket) must not be empty;
 *	- runs of "/" are one, and a trailing "/" is dropped.
 * A location is refused (the reason is returned) when it is neither an
 * absolute path nor a URI, names no directory below "/", has a "." or
 * ".." segment, or, in a URI, a "%", "?", "#" or "\" (a client's URL
 * parser would decode or cut them, so that the key would not be the place
 * the client writes to).  One key lies within another when it equals it
 * or continues it after a "/".
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "location_rules.h"

/*
 * scheme_length
 *		The length of location's URI scheme when it begins with
 *		"scheme://" (RFC 3986 3.1), else 0.
 */
static size_t
scheme_length(const char *location)
{
	size_t		n = 0;
	char		c = location[0];

	if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
		return 0;
	for (n = 1; location[n] != '\0'; n++)
	{
		c = location[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'))
			break;
	}
	return strncmp(location + n, "://", 3) == 0 ? n : 0;
}

/*
 * lance_location_key
 *		Write the key of a table location into buf (size bytes: at least
 *		strlen(location) + 1 are always enough) and return NULL, or return
 *		why the location is not a table location.
 */
const char *
lance_location_key(const char *location, char *buf, size_t size)
{
	const char *p = location;
	size_t		out = 0;
	size_t		scheme;
	bool		uri = false;
	int			segments = 0;

	if (size < strlen(location) + 1)
		return "is too long";
	if (strncmp(p, "file://", 7) == 0)
		p += 7;
	else if ((scheme = scheme_length(p)) > 0)
	{
		size_t		i;
		size_t		auth;
		/* s3a://: the same objects as s3:// */
		size_t		keep = (scheme == 3 && (p[0] | 0x20) == 's' && p[1] == '3' &&
							(p[2] | 0x20) == 'a') ? 2 : scheme;

		for (i = 0; i < keep; i++)
			buf[out++] = (p[i] >= 'A' && p[i] <= 'Z') ? p[i] - 'A' + 'a' : p[i];
		p += scheme + 3;
		memcpy(buf + out, "://", 3);
		out += 3;
		auth = strcspn(p, "/");
		if (auth == 0)
			return "has no bucket or host";
		if (strcspn(p, "%?#\\") < strlen(p))
			return "has a \"%\", \"?\", \"#\" or \"\\\"";
		memcpy(buf + out, p, auth);
		out += auth;
		p += auth;
		uri = true;
	}
	if (!uri && p[0] != '/')
		return "is neither an absolute path nor a URI";
	while (*p != '\0')
	{
		size_t		len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (len == 0)
			break;
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return "has a \".\" or \"..\" segment";
		buf[out++] = '/';
		memcpy(buf + out, p, len);
		out += len;
		p += len;
		segments++;
	}
	if (!uri && segments == 0)
		return "names no directory below \"/\"";
	buf[out] = '\0';
	return NULL;
}

/*
 * lance_location_within
 *		Whether key equals outer or lies below it (both location keys).
 */
bool
lance_location_within(const char *key, const char *outer)
{
	size_t		n = strlen(outer);

	return strncmp(key, outer, n) == 0 && (key[n] == '\0' || key[n] == '/');
}

/*
 * lance_location_depth
 *		How many shorter keys a key lies within: its proper prefixes that
 *		end before a "/" (for "s3://b/x/y": "s3://b" and "s3://b/x"; for
 *		"/p/q": "/p").
 */
int
lance_location_depth(const char *key)
{
	const char *p = strstr(key, "://");
	int			depth = 0;

	p = (p != NULL) ? p + 3 : key + 1;
	for (; *p != '\0'; p++)
		if (*p == '/')
			depth++;
	return depth;
}

/*
 * lance_location_prefix
 *		The length of the depth-th (from 1) of the keys that key lies within
 *		(see lance_location_depth).
 */
size_t
lance_location_prefix(const char *key, int depth)
{
	const char *start = strstr(key, "://");
	const char *p;

	p = (start != NULL) ? start + 3 : key + 1;
	for (; *p != '\0'; p++)
		if (*p == '/' && --depth == 0)
			return (size_t) (p - key);
	return strlen(key);
}
