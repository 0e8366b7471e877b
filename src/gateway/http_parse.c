/*-------------------------------------------------------------------------
 *
 * http_parse.c
 *	  HTTP/1.1 request parsing without I/O, so that it can be fuzzed
 *	  (test/fuzz/fuzz_http.c).
 *
 *	  The request head is parsed strictly (RFC 9112): "METHOD SP
 *	  origin-form SP HTTP/1.x", then header fields "name: value" whose
 *	  names are tokens.  Lines may end in CRLF or a bare LF; a CR anywhere
 *	  else, control characters, obsolete line folding, whitespace before a
 *	  colon, a bad or ambiguous Content-Length and any transfer coding but
 *	  "chunked" are errors.  Limits: the request target (414), the header
 *	  section (431) and the body (413).  The request line is checked as
 *	  its bytes arrive, so garbage is answered without waiting for the
 *	  rest of the head.
 *
 *	  Chunked bodies are decoded in place and incrementally; the decoded
 *	  bytes never overtake the raw ones.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_parse.h"
#include "pathid.h"

#define MSG_MALFORMED_LINE \
	"malformed request line: expected \"METHOD /path HTTP/1.1\""
#define MSG_VERSION \
	"unsupported HTTP version: this server speaks HTTP/1.1 and HTTP/1.0"
#define MSG_BARE_CR "a CR not followed by LF in the request"

enum
{
	CH_SIZE,					/* first hex digit of a chunk size */
	CH_SIZE_MORE,				/* further digits, extension or end of line */
	CH_EXT,						/* chunk extension (ignored) */
	CH_SIZE_LF,					/* LF after the size line's CR */
	CH_DATA,					/* chunk data */
	CH_DATA_CR,					/* CRLF after the data */
	CH_DATA_LF,
	CH_TRAILER_START,			/* start of a trailer line or the last CRLF */
	CH_TRAILER,					/* trailer line (ignored) */
	CH_TRAILER_LF,
	CH_END_LF,					/* LF of the final empty line */
	CH_DONE
};

/*
 * fail
 *		Record a parse error; returns GW_HTTP_ERROR.
 */
static GwHttpResult
fail(GwHttpError *err, int status, const char *message)
{
	err->status = status;
	err->message = message;
	return GW_HTTP_ERROR;
}

/*
 * is_tchar
 *		True for the characters of an RFC 9110 token.
 */
static bool
is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/*
 * is_ctl
 *		True for control characters other than HTAB.
 */
static bool
is_ctl(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

/*
 * gw_http_head_max
 *		The most bytes a head within the limits can take: a buffer of this
 *		size always lets gw_http_parse_head() decide.
 */
size_t
gw_http_head_max(const GwHttpLimits *lim)
{
	return GW_HTTP_MAX_BLANK + 2 + GW_HTTP_MAX_METHOD + 1 + lim->max_target + 1 +
		8 + 2 + lim->max_fields + 2 + 16;
}

/*
 * gw_http_head_init
 *		Prepare a head for a new request.
 */
void
gw_http_head_init(GwHttpHead *h)
{
	h->method = NULL;
	h->method_len = 0;
	h->path = NULL;
	h->path_len = 0;
	h->query = NULL;
	h->query_len = 0;
	h->minor = 1;
	h->nfields = 0;
	h->head_len = 0;
	h->chunked = false;
	h->has_length = false;
	h->content_length = 0;
	h->keep_alive = false;
	h->expect_continue = false;
	h->line_start = 0;
	h->line_end = 0;
	h->scanned = 0;
}

/*
 * skip_blank
 *		Skip the empty lines that may precede a request line (RFC 9112
 *		2.2); *start is where the request line begins.
 */
static GwHttpResult
skip_blank(const char *buf, size_t len, size_t *start, GwHttpError *err)
{
	size_t		i = 0;

	for (;;)
	{
		if (i >= len)
			break;
		if (buf[i] == '\n')
			i++;
		else if (buf[i] == '\r')
		{
			if (i + 1 >= len)
				break;
			if (buf[i + 1] != '\n')
				return fail(err, 400, MSG_BARE_CR);
			i += 2;
		}
		else
		{
			*start = i;
			return GW_HTTP_DONE;
		}
		if (i > GW_HTTP_MAX_BLANK)
			return fail(err, 400, "too many empty lines before the request line");
	}
	*start = i;
	return GW_HTTP_MORE;
}

/*
 * scan_request_line
 *		Check the request line starting at buf[start] from left to right,
 *		so that a prefix that is already wrong fails at once and a prefix
 *		fails exactly as the whole line would.  On DONE the line's parts
 *		are stored in h.
 */
static GwHttpResult
scan_request_line(char *buf, size_t len, size_t start, const GwHttpLimits *lim,
				  GwHttpHead *h, GwHttpError *err)
{
	size_t		i = start;
	size_t		m_end;
	size_t		t_start;
	size_t		t_end;
	size_t		v_start;
	size_t		eol;
	const char *q;

	/* method: a token */
	while (i < len && is_tchar((unsigned char) buf[i]))
	{
		if (i - start >= GW_HTTP_MAX_METHOD)
			return fail(err, 400, "the request method is too long");
		i++;
	}
	if (i >= len)
		return GW_HTTP_MORE;
	if (buf[i] != ' ' || i == start)
		return fail(err, 400, MSG_MALFORMED_LINE);
	m_end = i++;

	/* request target: visible characters */
	t_start = i;
	while (i < len && buf[i] != ' ' && buf[i] != '\r' && buf[i] != '\n')
	{
		if (is_ctl((unsigned char) buf[i]) || buf[i] == '\t')
			return fail(err, 400, "control character in the request target");
		if (i - t_start >= lim->max_target)
			return fail(err, 414, "request target is too long");
		i++;
	}
	if (i >= len)
		return GW_HTTP_MORE;
	if (buf[i] != ' ' || i == t_start)
		return fail(err, 400, MSG_MALFORMED_LINE);
	t_end = i++;

	/* HTTP version: exactly eight characters */
	v_start = i;
	while (i < len && buf[i] != '\r' && buf[i] != '\n')
	{
		if (i - v_start >= 8)
			return fail(err, 400, strncmp(buf + v_start, "HTTP/", 5) == 0 ?
						MSG_VERSION : MSG_MALFORMED_LINE);
		i++;
	}
	if (i >= len)
		return GW_HTTP_MORE;
	eol = i;
	if (buf[i] == '\r')
	{
		if (i + 1 >= len)
			return GW_HTTP_MORE;
		if (buf[i + 1] != '\n')
			return fail(err, 400, MSG_BARE_CR);
		i++;
	}
	i++;
	if (eol - v_start == 8 && memcmp(buf + v_start, "HTTP/1.", 7) == 0 &&
		(buf[v_start + 7] == '0' || buf[v_start + 7] == '1'))
		h->minor = buf[v_start + 7] - '0';
	else if (eol - v_start >= 5 && memcmp(buf + v_start, "HTTP/", 5) == 0)
		return fail(err, 400, MSG_VERSION);
	else
		return fail(err, 400, MSG_MALFORMED_LINE);

	/* origin-form, or "*" for OPTIONS */
	if (buf[t_start] != '/' &&
		!(t_end - t_start == 1 && buf[t_start] == '*' &&
		  m_end - start == 7 && memcmp(buf + start, "OPTIONS", 7) == 0))
		return fail(err, 400, "the request target must be an absolute path (origin-form)");

	h->method = buf + start;
	h->method_len = m_end - start;
	h->path = buf + t_start;
	q = memchr(buf + t_start, '?', t_end - t_start);
	h->path_len = q ? (size_t) (q - (buf + t_start)) : t_end - t_start;
	h->query = q ? q + 1 : NULL;
	h->query_len = q ? (size_t) (buf + t_end - (q + 1)) : 0;
	h->line_start = start;
	h->line_end = i;
	h->scanned = i - 1;			/* the request line's LF */
	return GW_HTTP_DONE;
}

/*
 * find_head_end
 *		Look for the empty line that ends the header section.  Returns the
 *		offset just after it (0 if not there yet) and sets *fields_end to
 *		where the field lines end.  h->scanned is the LF where the search
 *		resumes.
 */
static size_t
find_head_end(const char *buf, size_t len, GwHttpHead *h, size_t *fields_end)
{
	size_t		k = h->scanned;

	for (;;)
	{
		const char *p;

		/* k is the LF that ends a line: does an empty line follow? */
		if (k + 1 >= len)
			break;
		if (buf[k + 1] == '\n')
		{
			*fields_end = k + 1;
			return k + 2;
		}
		if (buf[k + 1] == '\r')
		{
			if (k + 2 >= len)
				break;
			if (buf[k + 2] == '\n')
			{
				*fields_end = k + 1;
				return k + 3;
			}
		}
		p = memchr(buf + k + 1, '\n', len - k - 1);
		if (p == NULL)
			break;
		k = p - buf;
	}
	h->scanned = k;
	return 0;
}

/*
 * parse_length
 *		Content-Length: digits only, without overflow.
 */
static bool
parse_length(const char *v, size_t n, size_t *out)
{
	size_t		x = 0;

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
	{
		if (v[i] < '0' || v[i] > '9')
			return false;
		if (x > (SIZE_MAX - (size_t) (v[i] - '0')) / 10)
			return false;
		x = x * 10 + (size_t) (v[i] - '0');
	}
	*out = x;
	return true;
}

/*
 * connection_tokens
 *		Look for "close" and "keep-alive" in a Connection field value.
 */
static void
connection_tokens(const char *v, size_t n, bool *close, bool *keep)
{
	size_t		i = 0;

	while (i < n)
	{
		size_t		s;
		size_t		e;

		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		s = i;
		while (i < n && v[i] != ',')
			i++;
		e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e - s == 5 && strncasecmp(v + s, "close", 5) == 0)
			*close = true;
		else if (e - s == 10 && strncasecmp(v + s, "keep-alive", 10) == 0)
			*keep = true;
	}
}

/*
 * parse_field_line
 *		One header field line buf[pos..eol) (without its line ending) into
 *		h->fields.
 */
static GwHttpResult
parse_field_line(char *buf, size_t pos, size_t eol, GwHttpHead *h, GwHttpError *err)
{
	size_t		i = pos;
	size_t		vs;
	size_t		ve;
	GwHttpField *f;

	if (buf[pos] == ' ' || buf[pos] == '\t')
		return fail(err, 400, "obsolete line folding (a header line starting with whitespace) is not accepted");
	while (i < eol && is_tchar((unsigned char) buf[i]))
		i++;
	if (i == eol || memchr(buf + i, ':', eol - i) == NULL)
		return fail(err, 400, "a header line without a colon");
	if (buf[i] != ':')
		return fail(err, 400, (buf[i] == ' ' || buf[i] == '\t') ?
					"whitespace between a header field name and its colon" :
					"invalid character in a header field name");
	if (i == pos)
		return fail(err, 400, "empty header field name");
	vs = i + 1;
	while (vs < eol && (buf[vs] == ' ' || buf[vs] == '\t'))
		vs++;
	ve = eol;
	while (ve > vs && (buf[ve - 1] == ' ' || buf[ve - 1] == '\t'))
		ve--;
	for (size_t k = vs; k < ve; k++)
		if (is_ctl((unsigned char) buf[k]))
			return fail(err, 400, buf[k] == '\r' ? MSG_BARE_CR :
						"control character in a header field value");
	if (h->nfields >= GW_HTTP_MAX_FIELDS)
		return fail(err, 431, "too many header fields");
	for (size_t k = pos; k < i; k++)
		if (buf[k] >= 'A' && buf[k] <= 'Z')
			buf[k] = (char) (buf[k] - 'A' + 'a');
	f = &h->fields[h->nfields++];
	f->name = buf + pos;
	f->name_len = i - pos;
	f->value = buf + vs;
	f->value_len = ve - vs;
	return GW_HTTP_DONE;
}

/*
 * interpret_fields
 *		Message framing (Content-Length, Transfer-Encoding) and connection
 *		handling (Connection, Expect) from the parsed fields.
 */
static GwHttpResult
interpret_fields(GwHttpHead *h, const GwHttpLimits *lim, GwHttpError *err)
{
	bool		close = false;
	bool		keep = false;
	bool		te = false;

	for (int i = 0; i < h->nfields; i++)
	{
		const GwHttpField *f = &h->fields[i];

		if (f->name_len == 14 && memcmp(f->name, "content-length", 14) == 0)
		{
			size_t		n;

			if (!parse_length(f->value, f->value_len, &n))
				return fail(err, 400, "invalid Content-Length");
			if (h->has_length && n != h->content_length)
				return fail(err, 400, "conflicting Content-Length values");
			h->has_length = true;
			h->content_length = n;
		}
		else if (f->name_len == 17 && memcmp(f->name, "transfer-encoding", 17) == 0)
		{
			if (te || f->value_len != 7 || strncasecmp(f->value, "chunked", 7) != 0)
				return fail(err, 400, "unsupported Transfer-Encoding: only \"chunked\" is accepted");
			te = true;
		}
		else if (f->name_len == 10 && memcmp(f->name, "connection", 10) == 0)
			connection_tokens(f->value, f->value_len, &close, &keep);
		else if (f->name_len == 6 && memcmp(f->name, "expect", 6) == 0)
		{
			if (f->value_len == 12 && strncasecmp(f->value, "100-continue", 12) == 0)
				h->expect_continue = true;
		}
	}
	if (te && h->has_length)
		return fail(err, 400, "Content-Length and Transfer-Encoding together");
	if (te && h->minor == 0)
		return fail(err, 400, "Transfer-Encoding in an HTTP/1.0 request");
	if (h->has_length && h->content_length > lim->max_body)
		return fail(err, 413, "request body is too large");
	h->chunked = te;
	h->keep_alive = h->minor >= 1 ? !close : (keep && !close);
	return GW_HTTP_DONE;
}

/*
 * gw_http_parse_head
 *		Parse the head of a request from buf[0..len), the bytes received
 *		so far.  Call again with more bytes while it returns MORE (h keeps
 *		its position).  On DONE, h->head_len bytes are the head and the
 *		strings of h are NUL-terminated in buf.
 */
GwHttpResult
gw_http_parse_head(char *buf, size_t len, const GwHttpLimits *lim, GwHttpHead *h,
				   GwHttpError *err)
{
	GwHttpResult r;
	size_t		end;
	size_t		fields_end = 0;
	size_t		pos;

	if (h->line_end == 0)
	{
		size_t		start;

		r = skip_blank(buf, len, &start, err);
		if (r != GW_HTTP_DONE)
			return r;
		r = scan_request_line(buf, len, start, lim, h, err);
		if (r != GW_HTTP_DONE)
			return r;
	}

	end = find_head_end(buf, len, h, &fields_end);
	if (end == 0)
	{
		/* the field lines will end at len - 1 or later */
		if (len - h->line_end > lim->max_fields + 1)
			return fail(err, 431, "request header section is too large");
		return GW_HTTP_MORE;
	}
	if (fields_end - h->line_end > lim->max_fields)
		return fail(err, 431, "request header section is too large");

	for (pos = h->line_end; pos < fields_end;)
	{
		const char *lf = memchr(buf + pos, '\n', fields_end - pos);
		size_t		eol = (size_t) (lf - buf);
		size_t		next = eol + 1;

		if (eol > pos && buf[eol - 1] == '\r')
			eol--;
		if (eol == pos)
			return fail(err, 400, MSG_BARE_CR); /* cannot happen: ends the head */
		r = parse_field_line(buf, pos, eol, h, err);
		if (r != GW_HTTP_DONE)
			return r;
		pos = next;
	}
	r = interpret_fields(h, lim, err);
	if (r != GW_HTTP_DONE)
		return r;

	/* NUL-terminate the strings in place; the head is consumed */
	((char *) h->method)[h->method_len] = '\0';
	((char *) h->path)[h->path_len] = '\0';
	if (h->query)
		((char *) h->query)[h->query_len] = '\0';
	for (int i = 0; i < h->nfields; i++)
	{
		((char *) h->fields[i].name)[h->fields[i].name_len] = '\0';
		((char *) h->fields[i].value)[h->fields[i].value_len] = '\0';
	}
	h->head_len = end;
	return GW_HTTP_DONE;
}

/*
 * gw_http_chunked_init
 *		Prepare a decoder for a new chunked body.
 */
void
gw_http_chunked_init(GwHttpChunked *c)
{
	memset(c, 0, sizeof(*c));
	c->state = CH_SIZE;
}

/*
 * size_line_done
 *		A chunk-size line ended: start its data, or the trailer section
 *		after the last chunk.
 */
static GwHttpResult
size_line_done(GwHttpChunked *c, const GwHttpLimits *lim, GwHttpError *err)
{
	if (c->size == 0)
	{
		c->state = CH_TRAILER_START;
		return GW_HTTP_MORE;
	}
	if (c->size > lim->max_body - c->out)
		return fail(err, 413, "request body is too large");
	c->remaining = c->size;
	c->state = CH_DATA;
	return GW_HTTP_MORE;
}

/*
 * gw_http_chunked
 *		Decode the chunked body in buf[0..len) (the bytes after the head
 *		received so far) in place: the data is moved down to buf[0..c->out).
 *		DONE once the last chunk and the trailer section arrived; the body's
 *		raw bytes end at c->in.  Chunk extensions and trailer fields are
 *		skipped.
 */
GwHttpResult
gw_http_chunked(GwHttpChunked *c, char *buf, size_t len, const GwHttpLimits *lim,
				GwHttpError *err)
{
	while (c->in < len && c->state != CH_DONE)
	{
		unsigned char ch = (unsigned char) buf[c->in];
		GwHttpResult r = GW_HTTP_MORE;
		int			v;
		size_t		n;

		switch (c->state)
		{
			case CH_SIZE:
				if ((v = gw_hexval(ch)) < 0)
					return fail(err, 400, "malformed chunk size");
				c->size = (size_t) v;
				c->digits = 1;
				c->line_bytes = 1;
				c->state = CH_SIZE_MORE;
				c->in++;
				break;
			case CH_SIZE_MORE:
				if ((v = gw_hexval(ch)) >= 0)
				{
					if (++c->digits > 16)
						return fail(err, 400, "chunk size is too large");
					c->size = c->size * 16 + (size_t) v;
					c->line_bytes++;
					c->in++;
				}
				else if (ch == ';' || ch == ' ' || ch == '\t')
				{
					c->state = CH_EXT;
					c->line_bytes++;
					c->in++;
				}
				else if (ch == '\r')
				{
					c->state = CH_SIZE_LF;
					c->in++;
				}
				else if (ch == '\n')
				{
					c->in++;
					r = size_line_done(c, lim, err);
				}
				else
					return fail(err, 400, "malformed chunk size");
				break;
			case CH_EXT:
				if (ch == '\r')
					c->state = CH_SIZE_LF;
				else if (ch == '\n')
					r = size_line_done(c, lim, err);
				else if (is_ctl(ch))
					return fail(err, 400, "control character in a chunk extension");
				else if (++c->line_bytes > GW_HTTP_MAX_CHUNK_EXT)
					return fail(err, 400, "chunk extension is too long");
				c->in++;
				break;
			case CH_SIZE_LF:
				if (ch != '\n')
					return fail(err, 400, "chunk size line not ended by CRLF");
				c->in++;
				r = size_line_done(c, lim, err);
				break;
			case CH_DATA:
				n = len - c->in;
				if (n > c->remaining)
					n = c->remaining;
				memmove(buf + c->out, buf + c->in, n);
				c->out += n;
				c->in += n;
				c->remaining -= n;
				if (c->remaining == 0)
					c->state = CH_DATA_CR;
				break;
			case CH_DATA_CR:
				if (ch == '\r')
					c->state = CH_DATA_LF;
				else if (ch == '\n')
					c->state = CH_SIZE;
				else
					return fail(err, 400, "chunk data not followed by CRLF");
				c->in++;
				break;
			case CH_DATA_LF:
				if (ch != '\n')
					return fail(err, 400, "chunk data not followed by CRLF");
				c->state = CH_SIZE;
				c->in++;
				break;
			case CH_TRAILER_START:
				if (ch == '\r')
					c->state = CH_END_LF;
				else if (ch == '\n')
					c->state = CH_DONE;
				else if (is_ctl(ch))
					return fail(err, 400, "control character in a trailer field");
				else
				{
					if (++c->trailer_bytes > lim->max_fields)
						return fail(err, 431, "trailer section is too large");
					c->state = CH_TRAILER;
				}
				c->in++;
				break;
			case CH_TRAILER:
				if (ch == '\r')
					c->state = CH_TRAILER_LF;
				else if (ch == '\n')
					c->state = CH_TRAILER_START;
				else if (is_ctl(ch))
					return fail(err, 400, "control character in a trailer field");
				else if (++c->trailer_bytes > lim->max_fields)
					return fail(err, 431, "trailer section is too large");
				c->in++;
				break;
			case CH_TRAILER_LF:
				if (ch != '\n')
					return fail(err, 400, MSG_BARE_CR);
				c->state = CH_TRAILER_START;
				c->in++;
				break;
			case CH_END_LF:
				if (ch != '\n')
					return fail(err, 400, "chunked body not ended by CRLF");
				c->state = CH_DONE;
				c->in++;
				break;
		}
		if (r == GW_HTTP_ERROR)
			return r;
	}
	return c->state == CH_DONE ? GW_HTTP_DONE : GW_HTTP_MORE;
}

/*
 * gw_http_chunked_compact
 *		Drop the raw bytes already decoded, so that the buffer holds only
 *		the decoded data and what is still to be decoded.
 */
void
gw_http_chunked_compact(GwHttpChunked *c, char *buf, size_t *len)
{
	if (c->in == c->out)
		return;
	memmove(buf + c->out, buf + c->in, *len - c->in);
	*len -= c->in - c->out;
	c->in = c->out;
}

/*
 * gw_http_parse_query
 *		Query parameters into obj: split on '&' and then the first '=',
 *		'+' is a space, each part percent-decoded.  A parameter without
 *		'=' has the empty value, an empty part (as in "a=1&&b=2") is the
 *		empty name, a final empty part adds nothing, and a later duplicate
 *		wins.  False with err set on bad encoding.
 */
bool
gw_http_parse_query(const char *query, size_t len, json_t *obj, GwError *err)
{
	size_t		pos = 0;

	while (pos < len)
	{
		const char *seg = query + pos;
		const char *amp = memchr(seg, '&', len - pos);
		size_t		seglen = amp ? (size_t) (amp - seg) : len - pos;
		const char *eq = memchr(seg, '=', seglen);
		size_t		klen = eq ? (size_t) (eq - seg) : seglen;
		char	   *k;
		char	   *v;

		k = gw_percent_decode(seg, klen, true, err);
		if (k == NULL)
			return false;
		v = eq ? gw_percent_decode(eq + 1, seglen - klen - 1, true, err)
			: gw_percent_decode("", 0, true, err);
		if (v == NULL)
		{
			free(k);
			return false;
		}
		json_object_set_new(obj, k, json_string(v));
		free(k);
		free(v);
		pos += seglen + 1;
	}
	return true;
}
