/*-------------------------------------------------------------------------
 *
 * request.h
 *	  Building the request model (jsonb argument of rest_<op>) from the
 *	  HTTP body, the path id and the query parameters.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_REQUEST_H
#define LANCE_GATEWAY_REQUEST_H

#include <jansson.h>

#include "gateway.h"

#define GW_MAX_JSON_DEPTH 64

extern json_t *gw_parse_body(const char *body, size_t len, GwError *err);
extern bool gw_parse_query(const char *query, size_t len, json_t *obj, GwError *err);
extern json_t *gw_build_request(json_t *body, const char *raw_id,
								json_t *query, GwError *err);

#endif							/* LANCE_GATEWAY_REQUEST_H */
