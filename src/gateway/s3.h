/*-------------------------------------------------------------------------
 *
 * s3.h
 *	  A small S3 request layer over libcurl (which signs with SigV4 itself,
 *	  CURLOPT_AWS_SIGV4): endpoint, region, addressing and credentials from
 *	  the gateway options and the standard AWS environment variables;
 *	  bounded retries with backoff; store failures mapped to Lance errors.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_S3_H
#define LANCE_GATEWAY_S3_H

#include "gateway.h"

/* The S3 settings in force (after options and environment). */
typedef struct GwS3Settings
{
	char	   *endpoint;		/* scheme://host[:port], no trailing '/' */
	bool		custom_endpoint;	/* set by option or AWS_ENDPOINT_URL* */
	char	   *region;
	bool		virtual_hosted; /* bucket.host/key rather than host/bucket/key */
	char	   *access_key;		/* NULL: unsigned requests */
	char	   *secret_key;
	char	   *session_token;
	long		timeout_ms;		/* whole request */
	long		connect_timeout_ms;
	int			retries;		/* after the first attempt */
	char	   *sts_endpoint;	/* for --vend-credentials sts */
} GwS3Settings;

extern GwS3Settings gw_s3;

/* One response; body is malloc'd (NUL-terminated) or NULL. */
typedef struct GwS3Response
{
	long		status;			/* HTTP status, 0 if none was received */
	char		etag[80];		/* ETag header as sent, quotes included */
	int64_t		content_length; /* -1 if absent */
	char	   *body;
	size_t		len;
	char		code[64];		/* <Code> of an S3 error body, or "" */
} GwS3Response;

/* A request; fields left zero/NULL are not sent. */
typedef struct GwS3Request
{
	const char *method;			/* GET, HEAD, PUT, DELETE, POST */
	const char *bucket;
	const char *key;			/* unescaped; NULL for the bucket itself */
	const char *query;			/* already escaped and sorted, no '?' */
	const char *if_none_match;
	const char *if_match;
	const void *body;			/* PUT/POST payload */
	size_t		body_len;
	bool		content_md5;	/* send Content-MD5 of the body */
	const char *content_type;	/* default application/octet-stream */
	const char *service;		/* signing service, default "s3" */
	const char *url;			/* full URL instead of bucket/key */
	size_t		max_body;		/* refuse larger responses (0: 256 MiB) */
} GwS3Request;

extern bool gw_s3_init(GwError *err);
extern bool gw_s3_split(const char *uri, char *bucket, size_t bucketlen, const char **key);
extern bool gw_s3_send(const GwS3Request *req, GwS3Response *resp, GwError *err);
extern void gw_s3_response_free(GwS3Response *resp);
extern void gw_s3_fail(const GwS3Response *resp, const char *what, const char *uri,
					   GwError *err);
extern void gw_s3_md5_etag(const void *data, size_t len, char *etag, size_t etaglen);
extern char *gw_s3_escape(const char *s, bool keep_slash);
extern char *gw_s3_xml_text(const char *xml, const char *tag, const char **next);

#endif							/* LANCE_GATEWAY_S3_H */
