/*-------------------------------------------------------------------------
 *
 * dispatch.h
 *	  From a parsed HTTP request to a response, independent of the HTTP
 *	  library.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_DISPATCH_H
#define LANCE_GATEWAY_DISPATCH_H

#include <jansson.h>

#include "gateway.h"

typedef struct GwHttpRequest
{
	const char *method;
	const char *path;			/* raw (still percent-encoded) path */
	json_t	   *query;			/* decoded query parameters, name -> string */
	json_t	   *headers;		/* lower-cased header name -> value */
	const char *body;
	size_t		body_len;
} GwHttpRequest;

typedef struct GwResponse
{
	int			status;
	char	   *body;			/* malloc'd, NULL for none */
	bool		retry_after;
	const char *allow;			/* Allow header for 405, or NULL */
	const char *content_type;	/* NULL: application/json */
	const struct GwRoute *route;	/* matched route entry (metrics), or NULL */
	void	   *stream;			/* change-feed subscriber (feed.c), or NULL */
} GwResponse;

extern void gw_dispatch(const GwHttpRequest *req, GwResponse *resp);
extern void gw_respond_error(GwResponse *resp, const GwError *err, const char *instance);

#endif							/* LANCE_GATEWAY_DISPATCH_H */
