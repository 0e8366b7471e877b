/*-------------------------------------------------------------------------
 *
 * s3.c
 *	  S3 requests over libcurl.  libcurl does the HTTP and the SigV4
 *	  signature (CURLOPT_AWS_SIGV4 with the access key as user name and
 *	  the secret key as password); this file only builds URLs, adds the
 *	  S3 headers (x-amz-content-sha256, the session token, conditions),
 *	  retries what is worth retrying and maps what the store says to Lance
 *	  errors:
 *
 *	  - no answer (connection refused, timeout), 500, 502, 503, 504, 429
 *		and SlowDown are retried with exponential backoff and jitter, at
 *		most --s3-retries times; then 503, code 17 (ServiceUnavailable);
 *	  - 403 is 403, code 15 (PermissionDenied);
 *	  - other answers go back to the caller, which knows what a 404 or a
 *		412 means for its operation.
 *
 *	  Settings, strongest first: gateway options (--s3-endpoint, ...,
 *	  LANCE_GATEWAY_S3_*), then the standard AWS variables
 *	  (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS_REGION,
 *	  AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 *	  AWS_SESSION_TOKEN; AWS_ENDPOINT_URL_STS for vending).  With a custom endpoint, path-style addressing is
 *	  the default and http:// is accepted, as object_store does for local
 *	  servers; without one, https://s3.<region>.amazonaws.com with
 *	  virtual-hosted addressing.
 *
 *	  One curl handle per thread is kept (and cleaned up when the thread
 *	  ends), so connections are reused.
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "s3.h"

GwS3Settings gw_s3;

/* each thread's curl handle, cleaned up when the thread ends */
static pthread_key_t curl_key;
static pthread_once_t curl_key_once = PTHREAD_ONCE_INIT;

#define GW_S3_DEFAULT_MAX_BODY ((size_t) 256 << 20)

/*
 * env_first
 *		The first of two environment variables that is set and not empty.
 */
static const char *
env_first(const char *a, const char *b)
{
	const char *v = getenv(a);

	if ((v == NULL || v[0] == '\0') && b != NULL)
		v = getenv(b);
	return (v != NULL && v[0] != '\0') ? v : NULL;
}

/*
 * gw_s3_init
 *		Settle the S3 settings and initialise libcurl.  Called once, before
 *		any thread starts.
 */
bool
gw_s3_init(GwError *err)
{
	const char *v;
	size_t		n;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
	{
		gw_error_set(err, LANCE_INTERNAL, "cannot initialise libcurl");
		return false;
	}
	v = gw_config.s3_region ? gw_config.s3_region :
		env_first("AWS_REGION", "AWS_DEFAULT_REGION");
	gw_s3.region = strdup(v ? v : "us-east-1");
	v = gw_config.s3_endpoint ? gw_config.s3_endpoint :
		env_first("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
	if (v != NULL)
	{
		if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
		{
			gw_error_set(err, LANCE_INVALID_INPUT,
						 "S3 endpoint \"%s\" must start with http:// or https://", v);
			return false;
		}
		gw_s3.endpoint = strdup(v);
		gw_s3.custom_endpoint = true;
	}
	else
	{
		char		buf[256];

		snprintf(buf, sizeof(buf), "https://s3.%s.amazonaws.com", gw_s3.region);
		gw_s3.endpoint = strdup(buf);
	}
	n = strlen(gw_s3.endpoint);
	while (n > 0 && gw_s3.endpoint[n - 1] == '/')
		gw_s3.endpoint[--n] = '\0';
	gw_s3.virtual_hosted = gw_config.s3_virtual_hosted >= 0 ?
		gw_config.s3_virtual_hosted == 1 : !gw_s3.custom_endpoint;
	v = getenv("AWS_ACCESS_KEY_ID");
	if (v != NULL && v[0] != '\0')
	{
		const char *s = getenv("AWS_SECRET_ACCESS_KEY");

		if (s == NULL || s[0] == '\0')
		{
			gw_error_set(err, LANCE_INVALID_INPUT,
						 "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
			return false;
		}
		gw_s3.access_key = strdup(v);
		gw_s3.secret_key = strdup(s);
		v = getenv("AWS_SESSION_TOKEN");
		if (v != NULL && v[0] != '\0')
			gw_s3.session_token = strdup(v);
	}
	v = gw_config.sts_endpoint ? gw_config.sts_endpoint :
		env_first("AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL");
	if (v != NULL)
		gw_s3.sts_endpoint = strdup(v);
	else if (gw_s3.custom_endpoint)
		gw_s3.sts_endpoint = strdup(gw_s3.endpoint);	/* one server for both */
	else
	{
		char		buf[256];

		snprintf(buf, sizeof(buf), "https://sts.%s.amazonaws.com", gw_s3.region);
		gw_s3.sts_endpoint = strdup(buf);
	}
	n = strlen(gw_s3.sts_endpoint);
	while (n > 0 && gw_s3.sts_endpoint[n - 1] == '/')
		gw_s3.sts_endpoint[--n] = '\0';
	if (strcmp(gw_config.vend_credentials, "none") != 0 && gw_s3.access_key == NULL)
	{
		gw_error_set(err, LANCE_INVALID_INPUT,
					 "--vend-credentials %s needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
					 gw_config.vend_credentials);
		return false;
	}
	gw_s3.timeout_ms = gw_config.s3_timeout_ms;
	gw_s3.connect_timeout_ms = gw_config.s3_timeout_ms < 3000 ? gw_config.s3_timeout_ms : 3000;
	gw_s3.retries = gw_config.s3_retries;
	return true;
}

/*
 * gw_s3_split
 *		Split "s3://bucket/key" into bucket (copied) and key (pointing into
 *		uri, possibly empty).  False if uri is not of that form.
 */
bool
gw_s3_split(const char *uri, char *bucket, size_t bucketlen, const char **key)
{
	const char *b;
	const char *slash;
	size_t		n;

	if (strncmp(uri, "s3://", 5) != 0)
		return false;
	b = uri + 5;
	slash = strchr(b, '/');
	n = slash ? (size_t) (slash - b) : strlen(b);
	if (n == 0 || n >= bucketlen)
		return false;
	memcpy(bucket, b, n);
	bucket[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!((bucket[i] >= 'a' && bucket[i] <= 'z') || (bucket[i] >= '0' && bucket[i] <= '9') ||
			  bucket[i] == '-' || bucket[i] == '.'))
			return false;
	*key = slash ? slash + 1 : b + n;
	return true;
}

/*
 * gw_s3_escape
 *		Percent-encode s as SigV4 wants it: every byte but A-Z a-z 0-9
 *		- _ . ~ (and '/' when keep_slash).  malloc'd.
 */
char *
gw_s3_escape(const char *s, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	char	   *out = malloc(strlen(s) * 3 + 1);
	char	   *o = out;

	if (out == NULL)
		return NULL;
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
	{
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
			(*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' ||
			*p == '~' || (keep_slash && *p == '/'))
			*o++ = (char) *p;
		else
		{
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	return out;
}

/*
 * digest
 *		A message digest of data (EVP), as raw bytes; returns its length.
 */
static unsigned int
digest(const EVP_MD *md, const void *data, size_t len, unsigned char *out)
{
	unsigned int n = 0;

	if (!EVP_Digest(data, len, out, &n, md, NULL))
		return 0;
	return n;
}

/*
 * gw_s3_md5_etag
 *		The ETag S3 gives a single-part upload of data: the quoted hex MD5.
 */
void
gw_s3_md5_etag(const void *data, size_t len, char *etag, size_t etaglen)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = digest(EVP_md5(), data, len, md);
	char		hex[2 * EVP_MAX_MD_SIZE + 1];

	for (unsigned int i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	hex[2 * n] = '\0';
	snprintf(etag, etaglen, "\"%s\"", hex);
}

/*
 * gw_s3_xml_text
 *		The text of the first <tag>...</tag> in xml, with the five XML
 *		entities decoded, malloc'd; *next (if given) points past it.  NULL
 *		if there is none.  Enough for the flat answers of S3 and STS.
 */
char *
gw_s3_xml_text(const char *xml, const char *tag, const char **next)
{
	char		open[80];
	char		close[80];
	const char *s;
	const char *e;
	char	   *out;
	char	   *o;

	if (xml == NULL)
		return NULL;
	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	s = strstr(xml, open);
	if (s == NULL)
		return NULL;
	s += strlen(open);
	e = strstr(s, close);
	if (e == NULL)
		return NULL;
	if (next)
		*next = e + strlen(close);
	out = malloc(e - s + 1);
	if (out == NULL)
		return NULL;
	for (o = out; s < e; s++)
	{
		static const struct
		{
			const char *ent;
			char		c;
		}			ents[] = {
			{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}
		};
		bool		done = false;

		if (*s == '&')
			for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]); i++)
				if (strncmp(s, ents[i].ent, strlen(ents[i].ent)) == 0)
				{
					*o++ = ents[i].c;
					s += strlen(ents[i].ent) - 1;
					done = true;
					break;
				}
		if (!done)
			*o++ = *s;
	}
	*o = '\0';
	return out;
}

typedef struct BodyBuf
{
	GwS3Response *resp;
	size_t		max;
	bool		too_big;
} BodyBuf;

/*
 * on_body
 *		CURLOPT_WRITEFUNCTION: append to the response body.
 */
static size_t
on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	BodyBuf    *bb = arg;
	GwS3Response *r = bb->resp;
	size_t		n = size * nmemb;
	char	   *nb;

	if (r->len + n > bb->max)
	{
		bb->too_big = true;
		return 0;
	}
	nb = realloc(r->body, r->len + n + 1);
	if (nb == NULL)
		return 0;
	memcpy(nb + r->len, data, n);
	r->body = nb;
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

/*
 * on_header
 *		CURLOPT_HEADERFUNCTION: keep ETag and Content-Length.
 */
static size_t
on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	GwS3Response *r = arg;
	size_t		n = size * nmemb;
	size_t		vlen;
	const char *v;

	if (n > 5 && strncasecmp(data, "ETag:", 5) == 0)
	{
		v = data + 5;
		while (*v == ' ' || *v == '\t')
			v++;
		vlen = n - (v - data);
		while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
			vlen--;
		if (vlen < sizeof(r->etag))
		{
			memcpy(r->etag, v, vlen);
			r->etag[vlen] = '\0';
		}
	}
	else if (n > 15 && strncasecmp(data, "Content-Length:", 15) == 0)
		r->content_length = strtoll(data + 15, NULL, 10);
	else if (n > 5 && strncmp(data, "HTTP/", 5) == 0)
	{
		/* a new status line (after 100 Continue): start over */
		r->etag[0] = '\0';
		r->content_length = -1;
	}
	return n;
}

/*
 * build_url
 *		The request URL for bucket/key (path-style or virtual-hosted).
 */
static char *
build_url(const GwS3Request *req)
{
	const char *ep = gw_s3.endpoint;
	const char *hostpart = strstr(ep, "://") + 3;
	char	   *ekey = gw_s3_escape(req->key ? req->key : "", true);
	size_t		len;
	char	   *url;

	if (ekey == NULL)
		return NULL;
	len = strlen(ep) + strlen(req->bucket) + strlen(ekey) + (req->query ? strlen(req->query) : 0) + 8;
	url = malloc(len);
	if (url != NULL)
	{
		if (gw_s3.virtual_hosted)
			snprintf(url, len, "%.*s%s.%s/%s%s%s", (int) (hostpart - ep), ep, req->bucket,
					 hostpart, ekey, req->query ? "?" : "", req->query ? req->query : "");
		else
			snprintf(url, len, "%s/%s/%s%s%s", ep, req->bucket, ekey,
					 req->query ? "?" : "", req->query ? req->query : "");
	}
	free(ekey);
	return url;
}

/*
 * add_header
 *		Append "name: value" to a curl header list.
 */
static struct curl_slist *
add_header(struct curl_slist *h, const char *name, const char *value)
{
	char		buf[4096];
	struct curl_slist *n;

	snprintf(buf, sizeof(buf), "%s: %s", name, value);
	n = curl_slist_append(h, buf);
	if (n == NULL)
	{
		curl_slist_free_all(h);
		return NULL;
	}
	return n;
}

/*
 * build_headers
 *		The S3 headers of one request (curl adds Host, X-Amz-Date and
 *		Authorization when it signs).
 */
static struct curl_slist *
build_headers(const GwS3Request *req)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n;
	char		hex[2 * EVP_MAX_MD_SIZE + 1];
	struct curl_slist *h = NULL;

	n = digest(EVP_sha256(), req->body ? req->body : "", req->body ? req->body_len : 0, md);
	for (unsigned int i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	hex[2 * n] = '\0';
	h = add_header(h, "x-amz-content-sha256", hex);
	if (h && gw_s3.session_token)
		h = add_header(h, "x-amz-security-token", gw_s3.session_token);
	if (h && req->if_none_match)
		h = add_header(h, "If-None-Match", req->if_none_match);
	if (h && req->if_match)
		h = add_header(h, "If-Match", req->if_match);
	if (h && req->body)
		h = add_header(h, "Content-Type",
					   req->content_type ? req->content_type : "application/octet-stream");
	if (h && req->content_md5)
	{
		unsigned char b64[64];

		n = digest(EVP_md5(), req->body, req->body_len, md);
		EVP_EncodeBlock(b64, md, (int) n);
		h = add_header(h, "Content-MD5", (const char *) b64);
	}
	return h;
}

/*
 * retryable
 *		Whether a response (or its absence) is worth another attempt.
 */
static bool
retryable(const GwS3Response *r)
{
	return r->status == 0 || r->status == 429 || r->status == 500 || r->status == 502 ||
		r->status == 503 || r->status == 504 || strcmp(r->code, "SlowDown") == 0;
}

/*
 * backoff
 *		Sleep before retry number attempt (1, 2, ...): 100 ms doubling, at
 *		most 2 s, with up to half of it as jitter.
 */
static void
backoff(int attempt)
{
	long		ms = 100L << (attempt - 1 < 4 ? attempt - 1 : 4);
	struct timespec ts;

	if (ms > 2000)
		ms = 2000;
	ms = ms / 2 + (long) (random() % (ms / 2 + 1));
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

/*
 * perform_once
 *		One attempt; resp gets whatever came back (status 0: nothing).
 *		curl_err gets curl's error text.
 */
static void
perform_once(CURL *c, const GwS3Request *req, const char *url, struct curl_slist *headers,
			 GwS3Response *resp, char *curl_err)
{
	BodyBuf		bb = {resp, req->max_body ? req->max_body : GW_S3_DEFAULT_MAX_BODY, false};
	char		sigv4[160];
	CURLcode	rc;

	free(resp->body);
	memset(resp, 0, sizeof(*resp));
	resp->content_length = -1;
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, gw_s3.timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, gw_s3.connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &bb);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, resp);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (strcmp(req->method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (strcmp(req->method, "GET") != 0)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
	if (req->body)
	{
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) req->body_len);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body);
	}
	else if (strcmp(req->method, "PUT") == 0 || strcmp(req->method, "POST") == 0)
	{
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) 0);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
	}
	if (gw_s3.access_key)
	{
		snprintf(sigv4, sizeof(sigv4), "aws:amz:%s:%s", gw_s3.region,
				 req->service ? req->service : "s3");
		curl_easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4);
		curl_easy_setopt(c, CURLOPT_USERNAME, gw_s3.access_key);
		curl_easy_setopt(c, CURLOPT_PASSWORD, gw_s3.secret_key);
	}
	curl_err[0] = '\0';
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
	{
		if (curl_err[0] == '\0')
			snprintf(curl_err, CURL_ERROR_SIZE, "%s", curl_easy_strerror(rc));
		if (bb.too_big)
			snprintf(curl_err, CURL_ERROR_SIZE, "the object is larger than %zu bytes", bb.max);
		resp->status = 0;
		return;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	if (resp->status >= 300 && resp->body)
	{
		char	   *code = gw_s3_xml_text(resp->body, "Code", NULL);

		if (code)
			snprintf(resp->code, sizeof(resp->code), "%s", code);
		free(code);
	}
}

/*
 * curl_handle_free
 *		pthread key destructor: the ending thread's curl handle.
 */
static void
curl_handle_free(void *h)
{
	curl_easy_cleanup(h);
}

/*
 * make_curl_key
 */
static void
make_curl_key(void)
{
	(void) pthread_key_create(&curl_key, curl_handle_free);
}

/*
 * thread_curl
 *		This thread's curl handle, created on first use (NULL if that fails).
 */
static CURL *
thread_curl(void)
{
	CURL	   *c;

	pthread_once(&curl_key_once, make_curl_key);
	c = pthread_getspecific(curl_key);
	if (c == NULL && (c = curl_easy_init()) != NULL &&
		pthread_setspecific(curl_key, c) != 0)
	{
		curl_easy_cleanup(c);
		c = NULL;
	}
	return c;
}

/*
 * gw_s3_send
 *		Send a request with retries.  True when the store answered with a
 *		status the caller is to judge (2xx, 3xx, 4xx but 403 and 429); false
 *		with err set otherwise (503 code 17 after the retries, 403 code 15).
 *		resp is filled in either case; free it with gw_s3_response_free.
 */
bool
gw_s3_send(const GwS3Request *req, GwS3Response *resp, GwError *err)
{
	char		curl_err[CURL_ERROR_SIZE];
	struct curl_slist *headers;
	char	   *url;
	int			attempt;
	CURL	   *c = thread_curl();

	memset(resp, 0, sizeof(*resp));
	if (c == NULL)
	{
		gw_error_set(err, LANCE_INTERNAL, "cannot create a curl handle");
		return false;
	}
	url = req->url ? strdup(req->url) : build_url(req);
	headers = build_headers(req);
	if (url == NULL || headers == NULL)
	{
		free(url);
		curl_slist_free_all(headers);
		gw_error_set(err, LANCE_INTERNAL, "out of memory");
		return false;
	}
	for (attempt = 0;; attempt++)
	{
		perform_once(c, req, url, headers, resp, curl_err);
		if (!retryable(resp) || attempt >= gw_s3.retries)
			break;
		backoff(attempt + 1);
	}
	curl_slist_free_all(headers);
	if (retryable(resp))
	{
		gw_error_set(err, LANCE_SERVICE_UNAVAILABLE, "the object store is unavailable");
		if (resp->status == 0)
			gw_error_detail(err, "%s %s: %s (after %d attempts)", req->method, url, curl_err,
							attempt + 1);
		else
			gw_error_detail(err, "%s %s: HTTP %ld %s (after %d attempts)", req->method, url,
							resp->status, resp->code, attempt + 1);
		free(url);
		return false;
	}
	if (resp->status == 403)
	{
		gw_error_set(err, LANCE_PERMISSION_DENIED, "the object store denied access");
		gw_error_detail(err, "%s %s: %s", req->method, url,
						resp->code[0] ? resp->code : "AccessDenied");
		free(url);
		return false;
	}
	free(url);
	return true;
}

/*
 * gw_s3_fail
 *		err for an answer the caller did not expect: 404 of a bucket, a
 *		bad request, ...  A 4xx is the request's fault (InvalidInput); a
 *		status that should not happen is a store failure (503).
 */
void
gw_s3_fail(const GwS3Response *resp, const char *what, const char *uri, GwError *err)
{
	if (resp->status >= 400 && resp->status < 500)
		gw_error_set(err, LANCE_INVALID_INPUT, "%s %s: the object store answered %ld %s",
					 what, uri, resp->status, resp->code);
	else
		gw_error_set(err, LANCE_SERVICE_UNAVAILABLE, "%s %s: unexpected answer %ld from the object store",
					 what, uri, resp->status);
}

/*
 * gw_s3_response_free
 */
void
gw_s3_response_free(GwS3Response *resp)
{
	free(resp->body);
	resp->body = NULL;
	resp->len = 0;
}
