/*-------------------------------------------------------------------------
 *
 * client_paths.h
 *	  Manifest paths in the one form Lance clients use (client_paths.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_CLIENT_PATHS_H
#define LANCE_GATEWAY_CLIENT_PATHS_H

#include <jansson.h>

extern const char *gw_client_manifest_path(const char *location);
extern char *gw_client_paths(json_t *res, char *result);

#endif							/* LANCE_GATEWAY_CLIENT_PATHS_H */
