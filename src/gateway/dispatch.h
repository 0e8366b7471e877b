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

#include "db.h"
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
	const char *allow;			/* Allow header for 405, or NULL */
	const char *content_type;	/* NULL: application/json */
	const struct GwRoute *route;	/* matched route entry (metrics), or NULL */
	void	   *stream;			/* change-feed subscriber (feed.c), or NULL */
} GwResponse;

/* A route's call: its request model and the request facts SQL sees. */
typedef struct GwCall
{
	const struct GwRoute *route;
	json_t	   *request;		/* the request model */
	char	   *request_text;	/* its text, once gw_call_text made it */
	char	   *headers_text;	/* the headers as JSON (request.headers) */
	GwRequestInfo info;			/* points into the call and the request */
} GwCall;

typedef enum GwDispatchStep
{
	GW_DISPATCH_DONE,			/* the response is ready */
	GW_DISPATCH_CALL,			/* a read: the loop runs the call's statement */
	GW_DISPATCH_WORK			/* a worker runs the call: gw_dispatch_run */
} GwDispatchStep;

extern GwDispatchStep gw_dispatch_begin(const GwHttpRequest *req, GwResponse *resp,
										GwCall *call);
extern void gw_dispatch_run(GwCall *call, const GwHttpRequest *req, GwResponse *resp);
extern void gw_dispatch_finish(GwCall *call, char *result, const GwError *err,
							   GwResponse *resp);
extern const char *gw_call_text(GwCall *call, GwError *err);
extern void gw_call_free(GwCall *call);
extern void gw_respond_error(GwResponse *resp, const GwError *err, const char *instance);
extern void gw_credentials(json_t *headers, const char **api_key, const char **bearer);
extern const char *gw_client_manifest_path(const char *location);

#endif							/* LANCE_GATEWAY_DISPATCH_H */
