/*-------------------------------------------------------------------------
 *
 * http_parse.h
 *	  HTTP/1.1 request parsing without I/O (RFC 9110, RFC 9112): the
 *	  request head, chunked request bodies and the query string.  Every
 *	  error carries the HTTP status to answer with (400, 413, 414 or 431)
 *	  and a message for the JSON error body.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_HTTP_PARSE_H
#define LANCE_GATEWAY_HTTP_PARSE_H

#include <jansson.h>

#include "gateway.h"

#define GW_HTTP_MAX_FIELDS		128 /* header fields of one request */
#define GW_HTTP_MAX_METHOD		32	/* bytes of a method name */
#define GW_HTTP_MAX_BLANK		32	/* empty lines' bytes before a request */
#define GW_HTTP_MAX_CHUNK_EXT	4096	/* bytes of one chunk-size line */

typedef enum GwHttpResult
{
	GW_HTTP_DONE,				/* complete */
	GW_HTTP_MORE,				/* valid so far; needs more bytes */
	GW_HTTP_ERROR				/* malformed or over a limit: see GwHttpError */
} GwHttpResult;

typedef struct GwHttpLimits
{
	size_t		max_target;		/* request target bytes, else 414 */
	size_t		max_fields;		/* header section bytes, else 431 */
	size_t		max_body;		/* body bytes, else 413 */
} GwHttpLimits;

typedef struct GwHttpError
{
	int			status;			/* 400, 413, 414 or 431 */
	const char *message;		/* static text */
} GwHttpError;

typedef struct GwHttpField
{
	const char *name;			/* lower-cased */
	size_t		name_len;
	const char *value;			/* without surrounding whitespace */
	size_t		value_len;
} GwHttpField;

/*
 * A request head.  gw_http_head_init() prepares one; gw_http_parse_head()
 * is then called with the bytes received so far (always from the start of
 * the request) until it returns DONE or ERROR.  On DONE the method, the
 * path, the query and every field name and value are NUL-terminated in
 * place in the caller's buffer.
 */
typedef struct GwHttpHead
{
	const char *method;
	size_t		method_len;
	const char *path;			/* the request target up to '?' (NULL until
								 * the request line is complete) */
	size_t		path_len;
	const char *query;			/* after the first '?', or NULL */
	size_t		query_len;
	int			minor;			/* HTTP/1.minor */
	GwHttpField fields[GW_HTTP_MAX_FIELDS];
	int			nfields;
	size_t		head_len;		/* bytes of the head, blank line included */

	/* message framing and connection handling, from the fields */
	bool		chunked;		/* Transfer-Encoding: chunked */
	bool		has_length;		/* Content-Length given */
	size_t		content_length;
	bool		keep_alive;		/* the connection may serve another request */
	bool		expect_continue;	/* Expect: 100-continue */

	/* parser state between calls */
	size_t		line_start;		/* where the request line starts */
	size_t		line_end;		/* after its LF, 0 while incomplete */
	size_t		scanned;		/* the LF where the blank-line search resumes */
} GwHttpHead;

/* An incremental chunked-body decoder; see gw_http_chunked(). */
typedef struct GwHttpChunked
{
	int			state;
	size_t		in;				/* raw bytes consumed */
	size_t		out;			/* decoded bytes written */
	size_t		remaining;		/* data bytes left in the current chunk */
	size_t		size;			/* chunk size being read */
	int			digits;
	size_t		line_bytes;		/* bytes of the current size/trailer line */
	size_t		trailer_bytes;
} GwHttpChunked;

extern size_t gw_http_head_max(const GwHttpLimits *lim);
extern void gw_http_head_init(GwHttpHead *h);
extern GwHttpResult gw_http_parse_head(char *buf, size_t len, const GwHttpLimits *lim,
									   GwHttpHead *h, GwHttpError *err);
extern void gw_http_chunked_init(GwHttpChunked *c);
extern GwHttpResult gw_http_chunked(GwHttpChunked *c, char *buf, size_t len,
									const GwHttpLimits *lim, GwHttpError *err);
extern void gw_http_chunked_compact(GwHttpChunked *c, char *buf, size_t *len);
extern bool gw_http_parse_query(const char *query, size_t len, json_t *obj, GwError *err);

#endif							/* LANCE_GATEWAY_HTTP_PARSE_H */
