/*-------------------------------------------------------------------------
 *
 * s3paths.c
 *	  Manifest paths of tables in buckets as Lance clients read them.  The
 *	  catalog records "s3://BUCKET/KEY"; a Lance client takes the
 *	  manifest_path of DescribeTableVersion and ListTableVersions as a path
 *	  relative to its object store's root (object_store's Path), which for
 *	  a bucket is the key.  So those answers carry the key, as
 *	  CreateTableVersion's answer does for a client that named its staging
 *	  object by key (commit.c).  Local paths are left as they are.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "s3.h"
#include "vend.h"

/*
 * key_form
 *		Replace version.manifest_path "s3://BUCKET/KEY" by KEY.
 */
static void
key_form(json_t *version)
{
	json_t	   *jpath = json_object_get(version, "manifest_path");
	char		bucket[64];
	const char *key;

	if (json_is_string(jpath) &&
		gw_s3_split(json_string_value(jpath), bucket, sizeof(bucket), &key) && key[0])
		json_object_set_new(version, "manifest_path", json_string(key));
}

/*
 * gw_s3_client_paths
 *		Rewrite the manifest paths of a DescribeTableVersion ("version")
 *		or ListTableVersions ("versions") answer (malloc'd JSON text);
 *		returns the new text (result freed) or result unchanged.
 */
char *
gw_s3_client_paths(char *result)
{
	json_t	   *res = json_loads(result, 0, NULL);
	json_t	   *versions;
	json_t	   *v;
	size_t		i;
	char	   *text;

	if (res == NULL || strstr(result, "s3://") == NULL)
	{
		json_decref(res);
		return result;
	}
	if (json_is_object(json_object_get(res, "version")))
		key_form(json_object_get(res, "version"));
	versions = json_object_get(res, "versions");
	json_array_foreach(versions, i, v)
		key_form(v);
	text = json_dumps(res, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(res);
	if (text == NULL)
		return result;
	free(result);
	return text;
}
