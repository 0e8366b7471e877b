/*-------------------------------------------------------------------------
 *
 * vend.c
 *	  storage_options for tables in buckets.  DeclareTable and DescribeTable
 *	  answers for an "s3://" location get the options a Lance client
 *	  (object_store's AmazonS3 builder, whose option names these are) needs
 *	  to read and write the table with nothing configured on its side:
 *
 *	  - aws_endpoint, allow_http, aws_virtual_hosted_style_request (with a
 *		custom endpoint), aws_region: always, they are not secret;
 *	  - credentials, only as the operator says (--vend-credentials), and
 *		not when the request says "vend_credentials": false:
 *		- static: the gateway's own keys (aws_access_key_id,
 *		  aws_secret_access_key, aws_session_token);
 *		- sts: temporary keys from STS AssumeRole (--sts-role-arn) with an
 *		  inline session policy that allows object access under the
 *		  table's prefix only, and their expiry as expires_at_millis, so
 *		  that the client asks again before they expire (and, with
 *		  --sts-refresh-offset, refresh_offset_millis: how long before).
 *
 *	  Options the catalog itself returns win over these.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "s3.h"
#include "vend.h"

/*
 * set_default
 *		opts[key] = value unless the catalog set it.
 */
static void
set_default(json_t *opts, const char *key, const char *value)
{
	if (json_object_get(opts, key) == NULL)
		json_object_set_new(opts, key, json_string(value));
}

/*
 * json_escape_text
 *		s as the inside of a JSON string (no quotes), malloc'd.
 */
static char *
json_escape_text(const char *s)
{
	json_t	   *j = json_string(s);
	char	   *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	size_t		n;

	json_decref(j);
	if (text == NULL)
		return NULL;
	n = strlen(text);
	memmove(text, text + 1, n - 2);
	text[n - 2] = '\0';
	return text;
}

/*
 * session_policy
 *		An IAM policy that allows object access under bucket/key/ and
 *		listing that prefix only.  malloc'd.
 */
static char *
session_policy(const char *bucket, const char *key)
{
	char	   *k = json_escape_text(key);
	char	   *policy = NULL;

	if (k == NULL)
		return NULL;
	if (asprintf(&policy,
				 "{\"Version\":\"2012-10-17\",\"Statement\":["
				 "{\"Effect\":\"Allow\",\"Action\":[\"s3:GetObject\",\"s3:PutObject\","
				 "\"s3:DeleteObject\",\"s3:AbortMultipartUpload\",\"s3:ListMultipartUploadParts\"],"
				 "\"Resource\":\"arn:aws:s3:::%s/%s/*\"},"
				 "{\"Effect\":\"Allow\",\"Action\":\"s3:ListBucket\",\"Resource\":\"arn:aws:s3:::%s\","
				 "\"Condition\":{\"StringLike\":{\"s3:prefix\":[\"%s\",\"%s/*\"]}}}]}",
				 bucket, k, bucket, k, k) < 0)
		policy = NULL;
	free(k);
	return policy;
}

/*
 * parse_iso8601_ms
 *		"2026-12-01T06:43:26Z" (fraction optional) as Unix milliseconds.
 */
static long long
parse_iso8601_ms(const char *s)
{
	struct tm	tm;

	memset(&tm, 0, sizeof(tm));
	if (strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
		return 0;
	return (long long) timegm(&tm) * 1000;
}

/*
 * assume_role
 *		STS AssumeRole for the table at bucket/key; fills opts with the
 *		temporary credentials and expires_at_millis.
 */
static bool
assume_role(json_t *opts, const char *bucket, const char *key, GwError *err)
{
	char	   *policy = session_policy(bucket, key);
	char	   *epolicy = policy ? gw_s3_escape(policy, false) : NULL;
	char	   *erole = gw_s3_escape(gw_config.sts_role_arn, false);
	char	   *body = NULL;
	char	   *url = NULL;
	GwS3Response resp;
	GwS3Request req = {.method = "POST", .service = "sts",
	.content_type = "application/x-www-form-urlencoded"};
	const char *fields[] = {"AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"};
	const char *names[] = {"aws_access_key_id", "aws_secret_access_key", "aws_session_token", NULL};
	char	   *values[4] = {NULL, NULL, NULL, NULL};
	bool		ok = false;

	memset(&resp, 0, sizeof(resp));
	if (epolicy == NULL || erole == NULL ||
		asprintf(&body, "Action=AssumeRole&DurationSeconds=%d&Policy=%s&RoleArn=%s"
				 "&RoleSessionName=lance-namespace-gateway&Version=2011-06-15",
				 gw_config.sts_duration_s, epolicy, erole) < 0 ||
		asprintf(&url, "%s/", gw_s3.sts_endpoint) < 0)
	{
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
		goto done;
	}
	req.url = url;
	req.body = body;
	req.body_len = strlen(body);
	if (!gw_s3_send(&req, &resp, err))
		goto done;
	if (resp.status != 200)
	{
		gw_error_set(err, LANCE_SERVICE_UNAVAILABLE, "STS AssumeRole failed: HTTP %ld %s",
					 resp.status, resp.code);
		goto done;
	}
	for (int i = 0; i < 4; i++)
		if ((values[i] = gw_s3_xml_text(resp.body, fields[i], NULL)) == NULL)
		{
			gw_error_set(err, LANCE_SERVICE_UNAVAILABLE, "STS AssumeRole answered without %s", fields[i]);
			goto done;
		}
	for (int i = 0; i < 3; i++)
		json_object_set_new(opts, names[i], json_string(values[i]));
	{
		char		ms[32];

		snprintf(ms, sizeof(ms), "%lld", parse_iso8601_ms(values[3]));
		json_object_set_new(opts, "expires_at_millis", json_string(ms));
		if (gw_config.sts_refresh_offset_s > 0)
		{
			snprintf(ms, sizeof(ms), "%lld", (long long) gw_config.sts_refresh_offset_s * 1000);
			json_object_set_new(opts, "refresh_offset_millis", json_string(ms));
		}
	}
	ok = true;
done:
	for (int i = 0; i < 4; i++)
		free(values[i]);
	gw_s3_response_free(&resp);
	free(policy);
	free(epolicy);
	free(erole);
	free(body);
	free(url);
	return ok;
}

/*
 * gw_vend_storage_options
 *		Add storage_options to a DeclareTable or DescribeTable answer
 *		(result, malloc'd JSON text) for a table in a bucket.  Returns the
 *		new text (result freed), or NULL with err set when credentials that
 *		the operator asked for cannot be had.
 */
char *
gw_vend_storage_options(const json_t *request, char *result, GwError *err)
{
	json_t	   *res;
	json_t	   *jloc;
	json_t	   *jvend = json_object_get(request, "vend_credentials");
	json_t	   *opts;
	char		bucket[64];
	const char *key;
	char	   *text;

	/*
	 * Most tables are not in a bucket, and parsing every describe cost a
	 * tenth of the gateway's CPU.  PostgreSQL's JSON output escapes only
	 * quotes, backslashes and control characters, so a location in a
	 * bucket is the literal "s3:// in the text.
	 */
	if (strstr(result, "\"s3://") == NULL)
		return result;
	res = json_loads(result, 0, NULL);
	jloc = res ? json_object_get(res, "location") : NULL;
	if (!json_is_string(jloc) ||
		!gw_s3_split(json_string_value(jloc), bucket, sizeof(bucket), &key))
	{
		json_decref(res);
		return result;			/* not a table in a bucket */
	}
	opts = json_object_get(res, "storage_options");
	if (!json_is_object(opts))
	{
		opts = json_object();
		json_object_set_new(res, "storage_options", opts);
	}
	if (gw_s3.custom_endpoint)
	{
		set_default(opts, "aws_endpoint", gw_s3.endpoint);
		if (strncmp(gw_s3.endpoint, "http://", 7) == 0)
			set_default(opts, "allow_http", "true");
	}
	set_default(opts, "aws_region", gw_s3.region);
	set_default(opts, "aws_virtual_hosted_style_request", gw_s3.virtual_hosted ? "true" : "false");
	if (!json_is_false(jvend) && json_object_get(opts, "aws_access_key_id") == NULL)
	{
		if (strcmp(gw_config.vend_credentials, "static") == 0 && gw_s3.access_key)
		{
			json_object_set_new(opts, "aws_access_key_id", json_string(gw_s3.access_key));
			json_object_set_new(opts, "aws_secret_access_key", json_string(gw_s3.secret_key));
			if (gw_s3.session_token)
				json_object_set_new(opts, "aws_session_token", json_string(gw_s3.session_token));
		}
		else if (strcmp(gw_config.vend_credentials, "sts") == 0)
		{
			char	   *prefix = strndup(key, strlen(key));
			size_t		n = prefix ? strlen(prefix) : 0;

			while (n > 0 && prefix[n - 1] == '/')
				prefix[--n] = '\0';
			if (prefix == NULL || !assume_role(opts, bucket, prefix, err))
			{
				if (prefix == NULL)
					gw_error_set(err, LANCE_INTERNAL, "out of memory");
				free(prefix);
				json_decref(res);
				free(result);
				return NULL;
			}
			free(prefix);
		}
	}
	text = json_dumps(res, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(res);
	if (text == NULL)
		return result;
	free(result);
	return text;
}
