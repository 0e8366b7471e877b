/*-------------------------------------------------------------------------
 *
 * client_paths.c
 *	  Manifest paths as Lance clients read and write them: relative to
 *	  the object store's root (a file path without its leading "/", a
 *	  bucket's key), as Lance's DirectoryNamespace answers.  Every
 *	  TableVersion the gateway returns carries that form, whatever form
 *	  the request used; SQL reports the recorded location itself.
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client_paths.h"

/*
 * gw_client_manifest_path
 *		The object-store path of a recorded manifest location: a pointer
 *		into location (the key of "s3://BUCKET/KEY", or the file path
 *		without its leading "/"); location itself for anything else.
 */
const char *
gw_client_manifest_path(const char *location)
{
	if (strncmp(location, "s3://", 5) == 0)
	{
		const char *key = strchr(location + 5, '/');

		return key != NULL && key[1] != '\0' ? key + 1 : location;
	}
	if (location[0] == '/')
		return location + 1;
	return location;
}

/*
 * client_form
 *		Replace version.manifest_path by its object-store path; true if
 *		that changed it.
 */
static bool
client_form(json_t *version)
{
	json_t	   *jpath = json_object_get(version, "manifest_path");

	if (json_is_string(jpath))
	{
		const char *path = json_string_value(jpath);
		const char *client = gw_client_manifest_path(path);

		if (client != path)
		{
			json_object_set_new(version, "manifest_path", json_string(client));
			return true;
		}
	}
	return false;
}

/*
 * gw_client_paths
 *		Rewrite the manifest paths of a DescribeTableVersion ("version")
 *		or ListTableVersions ("versions") answer, res (parsed from result,
 *		malloc'd JSON text); returns the new text (result freed), or
 *		result itself when no path changes.
 */
char *
gw_client_paths(json_t *res, char *result)
{
	json_t	   *versions;
	json_t	   *v;
	size_t		i;
	bool		changed = false;
	char	   *text;

	if (json_is_object(json_object_get(res, "version")))
		changed |= client_form(json_object_get(res, "version"));
	versions = json_object_get(res, "versions");
	json_array_foreach(versions, i, v)
		changed |= client_form(v);
	if (!changed)
		return result;
	text = json_dumps(res, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (text == NULL)
		return result;
	free(result);
	return text;
}
