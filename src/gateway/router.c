/*-------------------------------------------------------------------------
 *
 * router.c
 *	  From a parsed HTTP request to a route and its request model: the
 *	  route table (the extension's rest_routes and rest_query_parameters,
 *	  loaded at start by db.c, after the gateway's own routes), and the
 *	  request model of src/gateway/README.md, "Requests".
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "name_rules.h"
#include "router.h"

/* operations whose call comes with files (commit.c, table_files.c) */
static const struct
{
	const char *operation;
	GwRouteKind kind;
}			file_operations[] = {
	{"CreateTableVersion", GW_ROUTE_VERSION_CREATE},
	{"BatchCreateTableVersions", GW_ROUTE_BATCH_CREATE},
	{"BatchCommitTables", GW_ROUTE_BATCH_COMMIT},
	{"DropTable", GW_ROUTE_TABLE_DROP},
	{"RegisterTable", GW_ROUTE_TABLE_REGISTER},
	{"DeclareTable", GW_ROUTE_TABLE_DECLARE},
	{"CreateTableBranch", GW_ROUTE_BRANCH_CREATE},
	{"DeleteTableBranch", GW_ROUTE_BRANCH_DELETE},
};

/* Request arrays whose length is capped by --max-batch-entries. */
static const char *const batch_fields[] = {"entries", "ranges", "operations", NULL};

/* the gateway's own routes (no binding), then the extension's from gw_route_add */
GwRoute		gw_routes[GW_MAX_ROUTES] = {
	{"/health", GW_GET, GW_ROUTE_HEALTH, NULL, "Health", false, NULL},
	{"/ready", GW_GET, GW_ROUTE_READY, NULL, "Ready", false, NULL},
	{"/metrics", GW_GET, GW_ROUTE_METRICS, NULL, "Metrics", false, NULL},
	{"/v1/events", GW_GET, GW_ROUTE_EVENTS, NULL, "ChangeFeed", false, NULL},
};
int			gw_nroutes = 4;		/* the four above */

/* rest_query_parameters: name -> its type in the request model ("string", ...) */
static json_t *query_types;

/*
 * gw_method_bit
 *		GW_GET/GW_POST for an HTTP method name, 0 for any other.
 */
int
gw_method_bit(const char *method)
{
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return GW_GET;
	if (strcmp(method, "POST") == 0)
		return GW_POST;
	return 0;
}

/*
 * gw_route_add
 *		Add a route of the extension's rest_routes: its path, its methods
 *		(GW_GET | GW_POST; 0: others), its operation, its binding (lower-case
 *		letters, digits and '_': it is written into the call statement)
 *		and what the binding declares.  False, with err set, for a row the
 *		gateway cannot serve or one over GW_MAX_ROUTES.
 */
bool
gw_route_add(const char *path, int methods, const char *operation,
			 const char *binding, bool read_only, bool no_body, bool client_paths,
			 GwError *err)
{
	GwRoute		r = {NULL, methods, GW_ROUTE_CATALOG, NULL, NULL, client_paths, NULL};
	bool		ok = gw_nroutes < GW_MAX_ROUTES && methods != 0 && path[0] == '/' &&
		binding[0] != '\0' && strlen(binding) < 60 &&
		strspn(binding, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(binding);

	if (read_only)
		r.kind = no_body ? GW_ROUTE_EXISTS : GW_ROUTE_READ;
	for (size_t i = 0; i < sizeof(file_operations) / sizeof(file_operations[0]); i++)
		if (strcmp(file_operations[i].operation, operation) == 0)
			r.kind = file_operations[i].kind;
	r.pattern = strdup(path);
	r.operation = strdup(operation);
	r.function = strdup(binding);
	if (!ok || r.pattern == NULL || r.operation == NULL || r.function == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "lance_namespace.rest_routes: cannot serve %s (%s)",
					 path, binding);
		return false;
	}
	r.last = strcmp(strrchr(r.pattern, '/'), "/{id}") == 0 ? NULL : strrchr(r.pattern, '/') + 1;
	gw_routes[gw_nroutes++] = r;
	return true;
}

/*
 * gw_binding_client_paths
 *		Whether binding serves a route whose answers are table versions.
 */
bool
gw_binding_client_paths(const char *binding)
{
	for (int i = 0; i < gw_nroutes; i++)
		if (gw_routes[i].client_paths && strcmp(gw_routes[i].function, binding) == 0)
			return true;
	return false;
}

/*
 * gw_query_parameter_add
 *		Add a query parameter of rest_query_parameters and its type.
 */
bool
gw_query_parameter_add(const char *name, const char *type, GwError *err)
{
	if (query_types == NULL)
		query_types = json_object();
	if ((strcmp(type, "string") == 0 || strcmp(type, "integer") == 0 || strcmp(type, "boolean") == 0) &&
		json_object_set_new(query_types, name, json_string(type)) == 0)
		return true;
	gw_error_set(err, LANCE_INTERNAL, "query parameter %s of type %s cannot be served", name, type);
	return false;
}

/*
 * match_one
 *		Match path[0..len) against a route's pattern, segment by segment;
 *		*id and *idlen: its {id} segment.
 */
static bool
match_one(const char *pattern, const char *path, size_t len, const char **id, size_t *idlen)
{
	const char *end = path + len;

	while (*pattern == '/' && path < end && *path == '/')
	{
		const char *seg = ++path;
		size_t		n = strcspn(++pattern, "/");

		while (path < end && *path != '/')
			path++;
		if (n == 4 && strncmp(pattern, "{id}", 4) == 0)
		{
			*id = seg;
			*idlen = path - seg;
		}
		else if ((size_t) (path - seg) != n || strncmp(pattern, seg, n) != 0)
			return false;
		pattern += n;
	}
	return *pattern == '\0' && path == end;
}

/*
 * gw_route_match
 *		Find the route of a raw request path (one trailing slash ignored).
 *		On GW_MATCH_OK, *route is set and *raw_id is a malloc'd copy of the
 *		still percent-encoded {id} segment (or NULL); GW_MATCH_METHOD sets
 *		*route too.
 */
GwMatch
gw_route_match(const char *path, int method, const GwRoute **route, char **raw_id)
{
	size_t		len = strlen(path);
	const char *last;

	if (len > 1 && path[len - 1] == '/')
		len--;
	last = memrchr(path, '/', len);
	last = last ? last + 1 : path;
	*route = NULL;
	*raw_id = NULL;
	for (int i = 0; i < gw_nroutes; i++)
	{
		const char *id = NULL;
		size_t		idlen = 0;
		const GwRoute *r = &gw_routes[i];

		/* the last segment (known since gw_route_add) spares match_one most routes */
		if ((r->last != NULL && (r->last[0] != last[0] || strncmp(r->last, last, path + len - last) != 0 ||
								 r->last[path + len - last] != '\0')) ||
			!match_one(r->pattern, path, len, &id, &idlen))
			continue;
		*route = r;
		if ((r->methods & method) == 0)
			return GW_MATCH_METHOD;
		if (id != NULL)
			*raw_id = strndup(id, idlen);
		return GW_MATCH_OK;
	}
	return GW_MATCH_NONE;
}

/*
 * too_deep
 *		Whether parsed JSON text nests deeper than GW_MAX_JSON_DEPTH.
 */
static bool
too_deep(const char *s, size_t len)
{
	int			depth = 0;
	bool		in_string = false;

	for (size_t i = 0; i < len; i++)
	{
		if (in_string && s[i] == '\\')
			i++;
		else if (s[i] == '"')
			in_string = !in_string;
		else if (!in_string && (s[i] == '[' || s[i] == '{') && ++depth > GW_MAX_JSON_DEPTH)
			return true;
		else if (!in_string && (s[i] == ']' || s[i] == '}'))
			depth--;
	}
	return false;
}

/*
 * gw_parse_body
 *		Parse the request body into a JSON object (new reference).
 */
json_t *
gw_parse_body(const char *body, size_t len, GwError *err)
{
	json_error_t jerr;
	json_t	   *v;
	size_t		i;

	for (i = 0; i < len && isspace((unsigned char) body[i]); i++)
		;
	if (i == len)
		return json_object();

	v = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (v == NULL)
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "malformed JSON request body");
		gw_error_detail(err, "%s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
		return NULL;
	}
	if (json_is_null(v))
	{
		json_decref(v);
		return json_object();
	}
	if (!json_is_object(v))
		gw_error_set(err, LANCE_INVALID_INPUT, "request body must be a JSON object");
	else if (too_deep(body, len))
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "request body is nested deeper than %d levels", GW_MAX_JSON_DEPTH);
	else
	{
		/* the first array over --max-batch-entries (0, unset: no cap) */
		for (i = 0; batch_fields[i]; i++)
			if (gw_config.max_batch_entries > 0 &&
				json_array_size(json_object_get(v, batch_fields[i])) > (size_t) gw_config.max_batch_entries)
				break;
		if (batch_fields[i] == NULL)
			return v;
		gw_error_set(err, LANCE_INVALID_INPUT, "%s has more than %d elements",
					 batch_fields[i], gw_config.max_batch_entries);
	}
	json_decref(v);
	return NULL;
}

/*
 * gw_valid_utf8
 *		True if s[0..len) is well-formed UTF-8 without NUL bytes: the
 *		extension's rule, PostgreSQL's own check (src/name_rules.c).
 */
bool
gw_valid_utf8(const char *s, size_t len)
{
	return len <= INT_MAX && lance_valid_utf8(s, (int) len);
}

/*
 * gw_percent_decode
 *		Decode %XY escapes (and '+' as a space when asked, for query
 *		strings).  Malformed escapes, NUL bytes and invalid UTF-8 are
 *		InvalidInput.  Returns a malloc'd string or NULL with err set.
 */
char *
gw_percent_decode(const char *s, size_t len, bool plus_is_space, GwError *err)
{
	char	   *out = malloc(len + 1);
	size_t		o = 0;
	const char *bad = out == NULL ? "out of memory" : NULL;

	for (size_t i = 0; i < len && bad == NULL; i++)
	{
		char		hex[3] = {0};

		/* the gateway never calls setlocale: isxdigit is [0-9a-fA-F] */
		if (s[i] == '%' && (i + 2 >= len || !isxdigit((unsigned char) s[i + 1]) ||
							!isxdigit((unsigned char) s[i + 2])))
			bad = "malformed percent-encoding in request target";
		else if (s[i] != '%')
			out[o++] = s[i] == '+' && plus_is_space ? ' ' : s[i];
		else
		{
			memcpy(hex, s + i + 1, 2);
			out[o++] = (char) strtol(hex, NULL, 16);
			i += 2;
		}
	}
	if (bad == NULL && !gw_valid_utf8(out, o))
		bad = "request target is not valid UTF-8 or contains a NUL byte";
	if (bad == NULL)
	{
		out[o] = '\0';
		return out;
	}
	gw_error_set(err, out == NULL ? LANCE_INTERNAL : LANCE_INVALID_INPUT, "%s", bad);
	free(out);
	return NULL;
}

/*
 * gw_parse_id
 *		Split a decoded string identifier into a JSON array of strings by
 *		the extension's rules (src/name_rules.c: the delimiter's, the split):
 *		the empty string or the delimiter alone is the root.  The catalog
 *		validates the names.
 */
json_t *
gw_parse_id(const char *id, const char *delimiter, GwError *err)
{
	LanceIdSegment segments[LANCE_MAX_ID_DEPTH];
	const char *problem = lance_delimiter_problem(delimiter);
	json_t	   *arr;
	int			n;

	if (problem != NULL)
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "%s", problem);
		return NULL;
	}
	n = lance_split_id(id, delimiter, segments, LANCE_MAX_ID_DEPTH);
	if (n < 0)
	{
		gw_error_set(err, LANCE_INVALID_INPUT, "id has more than %d levels", LANCE_MAX_ID_DEPTH);
		return NULL;
	}
	arr = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(arr, json_stringn(segments[i].start, segments[i].len));
	return arr;
}

/*
 * typed_query_value
 *		A query parameter's value (qv) as its type (README, "Requests"):
 *		a new reference, or NULL with err set.
 */
static json_t *
typed_query_value(const char *name, const char *type, json_t *qv, GwError *err)
{
	const char *text = json_string_value(qv);

	if (text == NULL || strcmp(type, "string") == 0)
		return json_incref(qv);
	if (strcmp(type, "integer") == 0)
	{
		const char *p = text + (text[0] == '-');
		char	   *end;
		long long	val;

		errno = 0;
		val = strtoll(text, &end, 10);
		if (*p >= '0' && *p <= '9' && *end == '\0' && errno == 0)
			return json_integer(val);
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "query parameter \"%s\" must be an integer", name);
	}
	else
	{
		if (strcasecmp(text, "true") == 0 || strcmp(text, "1") == 0)
			return json_true();
		if (strcasecmp(text, "false") == 0 || strcmp(text, "0") == 0)
			return json_false();
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "query parameter \"%s\" must be true or false", name);
	}
	gw_error_detail(err, "Got \"%.200s\".", text);
	return NULL;
}

/*
 * gw_build_request
 *		Merge the decoded path id and query parameters into the body.
 *		Takes ownership of body; returns it or NULL with err set.
 */
json_t *
gw_build_request(json_t *body, const char *raw_id, json_t *query, GwError *err)
{
	json_t	   *jdelim = json_object_get(query, "delimiter");
	const char *delimiter = json_is_string(jdelim) ? json_string_value(jdelim) : "$";
	json_t	   *identity = json_object_get(body, "identity");
	const char *name;
	json_t	   *qv;

	if (raw_id != NULL)
	{
		char	   *decoded = gw_percent_decode(raw_id, strlen(raw_id), false, err);
		json_t	   *id = decoded ? gw_parse_id(decoded, delimiter, err) : NULL;
		json_t	   *body_id = json_object_get(body, "id");

		free(decoded);
		if (id != NULL && body_id != NULL && !json_is_null(body_id) && !json_equal(body_id, id))
		{
			json_decref(id);
			id = NULL;
			gw_error_set(err, LANCE_INVALID_INPUT,
						 "the id in the request body does not match the id in the path");
		}
		if (id == NULL)
			goto fail;
		json_object_set_new(body, "id", id);
	}
	/* the spec's Identity travels in headers on REST: one in the body is refused, not ignored */
	if (identity != NULL && !json_is_null(identity))
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "identity is not read from the request body: send the API key in the "
					 "x-api-key header or the token in the Authorization header");
		goto fail;
	}
	/* the query parameters and their types are the extension's */
	json_object_foreach(query, name, qv)
	{
		json_t	   *type = json_object_get(query_types, name);
		json_t	   *bv = json_object_get(body, name);
		json_t	   *typed;

		if (type == NULL || (bv != NULL && !json_is_null(bv)))
			continue;
		if ((typed = typed_query_value(name, json_string_value(type), qv, err)) == NULL)
			goto fail;
		json_object_set_new(body, name, typed);
	}
	return body;

fail:
	json_decref(body);
	return NULL;
}

/*
 * gw_parse_query
 *		Query parameters into obj: split on '&' and the first '=', '+' a
 *		space, percent-decoded; a later duplicate wins.  False with err
 *		set on bad encoding.
 */
bool
gw_parse_query(const char *query, size_t len, json_t *obj, GwError *err)
{
	size_t		pos = 0;

	while (pos < len)
	{
		const char *seg = query + pos;
		const char *amp = memchr(seg, '&', len - pos);
		size_t		seglen = amp ? (size_t) (amp - seg) : len - pos;
		const char *eq = memchr(seg, '=', seglen);
		size_t		klen = eq ? (size_t) (eq - seg) : seglen;
		char	   *k;
		char	   *v;

		k = gw_percent_decode(seg, klen, true, err);
		v = k ? gw_percent_decode(eq ? eq + 1 : "", eq ? seglen - klen - 1 : 0, true, err) : NULL;
		if (v != NULL)
			json_object_set_new(obj, k, json_string(v));
		free(k);
		free(v);
		if (v == NULL)
			return false;
		pos += seglen + 1;
	}
	return true;
}
