/*-------------------------------------------------------------------------
 *
 * client_paths.h
 *	  Manifest paths in the one form Lance clients use (client_paths.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_CLIENT_PATHS_H
#define LANCE_GATEWAY_CLIENT_PATHS_H

extern const char *gw_client_manifest_path(const char *location);
extern char *gw_client_paths(char *result);

#endif							/* LANCE_GATEWAY_CLIENT_PATHS_H */
