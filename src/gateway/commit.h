/*-------------------------------------------------------------------------
 *
 * commit.h
 *	  Manifest finalization around CreateTableVersion and
 *	  BatchCreateTableVersions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_COMMIT_H
#define LANCE_GATEWAY_COMMIT_H

#include <jansson.h>

#include "db.h"
#include "storage.h"

extern char *gw_commit_versions(const char *function, json_t *request, bool batch,
								const GwRequestInfo *info, GwError *err);
extern char *gw_commit_operations(const char *function, json_t *request,
								  const GwRequestInfo *info, GwError *err);
extern void gw_commit_replay(const char *root);

#endif							/* LANCE_GATEWAY_COMMIT_H */
