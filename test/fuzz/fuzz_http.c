/*-------------------------------------------------------------------------
 *
 * fuzz_http.c
 *	  libFuzzer target: the HTTP request parser of the gateway
 *	  (src/gateway/http_parse.c).
 *
 *	  Input: byte 0 picks the limits and how the bytes are split into
 *	  "reads"; the rest is what a client sent.  The head is parsed once in
 *	  one piece and once read by read, as the server does; both must agree.
 *	  After a complete head, the bytes that follow go to the chunked
 *	  decoder (read by read, compacting as the server does) and the query
 *	  string to the query splitter.  Checked: every error has a 4xx status
 *	  and a message; a parsed head's strings are NUL-terminated, its
 *	  fields' names are lower-case tokens and its values carry no control
 *	  characters; a decoded body is within its limit and never overtakes
 *	  the raw bytes.
 *
 *-------------------------------------------------------------------------
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_parse.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * check_error
 *		An error is a 4xx with a message.
 */
static void
check_error(const GwHttpError *err)
{
	assert(err->status == 400 || err->status == 413 || err->status == 414 ||
		   err->status == 431);
	assert(err->message != NULL && err->message[0] != '\0');
}

/*
 * check_head
 *		The properties of a parsed head.
 */
static void
check_head(const GwHttpHead *h, size_t len, const GwHttpLimits *lim)
{
	assert(h->head_len > 0 && h->head_len <= len);
	assert(h->method_len > 0 && h->method_len <= GW_HTTP_MAX_METHOD);
	assert(strlen(h->method) == h->method_len);
	assert(strlen(h->path) == h->path_len);
	assert(h->path_len <= lim->max_target);
	assert(h->path[0] == '/' || strcmp(h->path, "*") == 0);
	if (h->query)
		assert(strlen(h->query) == h->query_len);
	assert(h->minor == 0 || h->minor == 1);
	assert(!(h->chunked && h->has_length));
	assert(!h->has_length || h->content_length <= lim->max_body);
	assert(h->nfields >= 0 && h->nfields <= GW_HTTP_MAX_FIELDS);
	for (int i = 0; i < h->nfields; i++)
	{
		const GwHttpField *f = &h->fields[i];

		assert(f->name_len > 0 && strlen(f->name) == f->name_len);
		assert(strlen(f->value) == f->value_len);
		for (size_t k = 0; k < f->name_len; k++)
			assert(!(f->name[k] >= 'A' && f->name[k] <= 'Z') && f->name[k] != ':' &&
				   (unsigned char) f->name[k] > ' ');
		for (size_t k = 0; k < f->value_len; k++)
			assert((unsigned char) f->value[k] >= 0x20 || f->value[k] == '\t');
		if (f->value_len > 0)
			assert(f->value[0] != ' ' && f->value[f->value_len - 1] != ' ');
	}
}

/*
 * parse_in_pieces
 *		Parse the head read by read (reads of step bytes), as the server
 *		does.
 */
static GwHttpResult
parse_in_pieces(char *buf, size_t size, size_t step, const GwHttpLimits *lim,
				GwHttpHead *h, GwHttpError *err)
{
	GwHttpResult r = GW_HTTP_MORE;
	size_t		len = 0;

	gw_http_head_init(h);
	while (len < size)
	{
		len = len + step < size ? len + step : size;
		r = gw_http_parse_head(buf, len, lim, h, err);
		if (r != GW_HTTP_MORE)
			break;
	}
	return r;
}

/*
 * decode_body
 *		Feed buf[0..size) to the chunked decoder, read by read.
 */
static void
decode_body(char *buf, size_t size, size_t step, const GwHttpLimits *lim)
{
	GwHttpChunked ch;
	GwHttpError err;
	size_t		len = 0;		/* bytes "received", after compaction */
	size_t		fed = 0;		/* input bytes handed over so far */
	char	   *work = malloc(size + 1);

	if (work == NULL)
		return;
	gw_http_chunked_init(&ch);
	while (fed < size)
	{
		size_t		n = size - fed < step ? size - fed : step;
		GwHttpResult r;

		memcpy(work + len, buf + fed, n);
		len += n;
		fed += n;
		r = gw_http_chunked(&ch, work, len, lim, &err);
		assert(ch.out <= ch.in && ch.in <= len);
		assert(ch.out <= lim->max_body);
		if (r == GW_HTTP_ERROR)
		{
			check_error(&err);
			break;
		}
		if (r == GW_HTTP_DONE)
			break;
		assert(ch.in == len);
		gw_http_chunked_compact(&ch, work, &len);
		assert(len == ch.out);
	}
	free(work);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	GwHttpLimits lim;
	GwHttpHead *one;
	GwHttpHead *inc;
	GwHttpError e1;
	GwHttpError e2;
	GwHttpResult r1;
	GwHttpResult r2;
	char	   *a;
	char	   *b;
	size_t		step;

	if (size < 1)
		return 0;
	/* small limits so that the fuzzer reaches them */
	lim.max_target = (data[0] & 1) ? 64 : 4096;
	lim.max_fields = (data[0] & 2) ? 128 : 8192;
	lim.max_body = (data[0] & 4) ? 16 : 65536;
	step = 1 + (data[0] >> 3);
	data++;
	size--;

	one = malloc(sizeof(GwHttpHead));
	inc = malloc(sizeof(GwHttpHead));
	a = malloc(size + 1);
	b = malloc(size + 1);
	assert(one && inc && a && b);
	memcpy(a, data, size);
	memcpy(b, data, size);

	gw_http_head_init(one);
	r1 = size > 0 ? gw_http_parse_head(a, size, &lim, one, &e1) : GW_HTTP_MORE;
	r2 = parse_in_pieces(b, size, step, &lim, inc, &e2);
	assert(r1 == r2);
	if (r1 == GW_HTTP_ERROR)
	{
		check_error(&e1);
		check_error(&e2);
		assert(e1.status == e2.status);
	}
	else if (r1 == GW_HTTP_MORE)
		assert(size <= gw_http_head_max(&lim));
	else
	{
		check_head(one, size, &lim);
		check_head(inc, size, &lim);
		assert(one->head_len == inc->head_len && one->nfields == inc->nfields);
		assert(one->has_length == inc->has_length && one->chunked == inc->chunked &&
			   one->keep_alive == inc->keep_alive);

		decode_body(a + one->head_len, size - one->head_len, step, &lim);
		if (one->query)
		{
			GwError		err;
			json_t	   *q = json_object();

			gw_error_clear(&err);
			if (!gw_http_parse_query(one->query, one->query_len, q, &err))
				assert(err.code == GW_ERR_INVALID_INPUT);
			json_decref(q);
		}
	}
	free(one);
	free(inc);
	free(a);
	free(b);
	return 0;
}
