/*-------------------------------------------------------------------------
 *
 * table_files.h
 *	  The files of a whole table: RegisterTable imports the versions on
 *	  disk, DropTable deletes a table's data.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_TABLE_FILES_H
#define LANCE_GATEWAY_TABLE_FILES_H

#include <jansson.h>

#include "db.h"
#include "gateway.h"
#include "storage.h"

extern char *gw_table_location_dir(const char *location);
extern bool gw_table_location_inside(const char *dir);
extern bool gw_table_remove_data(const char *dir, int64_t min_age_ms, long *removed,
								 GwError *err);
#define GW_MANIFEST_LOST	1
#define GW_MANIFEST_CLEANED 2
extern int	gw_manifest_missing(GwStorage *st, const char *path, int64_t version);
extern bool gw_describe_version_check(json_t *request, const GwRequestInfo *info,
									  const char *path, json_int_t version, GwError *err);
extern char *gw_declare_table(const char *function, json_t *request, const GwRequestInfo *info,
							  GwError *err);
extern char *gw_table_branch(const char *function, json_t *request, bool create,
							 const GwRequestInfo *info, GwError *err);
extern bool gw_list_versions_check(json_t *request, const GwRequestInfo *info,
								   const char *listed, char **result, GwError *err);
extern char *gw_register_table(const char *function, json_t *request,
							   const GwRequestInfo *info, GwError *err);
extern char *gw_drop_table(const char *function, json_t *request,
						   const GwRequestInfo *info, GwError *err);

#endif							/* LANCE_GATEWAY_TABLE_FILES_H */
