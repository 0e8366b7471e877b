/*-------------------------------------------------------------------------
 *
 * commit.h
 *	  Manifest finalization around CreateTableVersion,
 *	  BatchCreateTableVersions and BatchCommitTables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_COMMIT_H
#define LANCE_GATEWAY_COMMIT_H

#include <jansson.h>

#include "router.h"
#include "storage.h"

extern char *gw_commit(const char *function, json_t *request, GwRouteKind kind,
					   const GwRequestInfo *info, GwError *err);
extern void gw_commit_replay(const char *root);
extern void gw_commit_resettle(void);

#endif							/* LANCE_GATEWAY_COMMIT_H */
