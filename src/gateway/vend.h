/*-------------------------------------------------------------------------
 *
 * vend.h
 *	  storage_options (endpoint, region, credentials) for tables in
 *	  buckets, added to DeclareTable and DescribeTable answers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_VEND_H
#define LANCE_GATEWAY_VEND_H

#include <jansson.h>

#include "gateway.h"

extern char *gw_vend_storage_options(const json_t *request, char *result, GwError *err);

#endif							/* LANCE_GATEWAY_VEND_H */
