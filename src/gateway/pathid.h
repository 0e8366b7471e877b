/*-------------------------------------------------------------------------
 *
 * pathid.h
 *	  Percent-decoding and string identifiers of REST paths.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_PATHID_H
#define LANCE_GATEWAY_PATHID_H

#include <jansson.h>

#include "gateway.h"

extern char *gw_percent_decode(const char *s, size_t len, bool plus_is_space, GwError *err);
extern json_t *gw_parse_id(const char *id, const char *delimiter, GwError *err);
extern bool gw_valid_utf8(const char *s, size_t len);

#endif							/* LANCE_GATEWAY_PATHID_H */
