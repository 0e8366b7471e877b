/*-------------------------------------------------------------------------
 *
 * auth.c
 *	  Credentials: API keys stored hashed, and HS256 JSON Web Tokens.
 *
 * lance_authenticate() maps the spec's identity (the x-api-key header or an
 * Authorization: Bearer token) to a PostgreSQL role, as PostgREST does.
 * It is the extension's one SECURITY DEFINER function: the gateway's
 * low-privilege authenticator role must be able to map a credential to a
 * role without being able to read the key hashes or the JWT secret.  It
 * reads only lance_namespace.api_keys and lance_namespace.secrets and
 * returns only a role name.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "common/base64.h"
#include "common/cryptohash.h"
#include "common/hmac.h"
#include "common/jsonapi.h"
#include "common/sha2.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "lance_namespace.h"

#define API_KEY_PREFIX "lnk_"
#define API_KEY_RANDOM_BYTES 24

/*
 * unauthenticated
 *		Raise Unauthenticated (16) with a message that does not say which
 *		part of a credential was wrong.
 */
static void
unauthenticated(const char *why)
{
	lance_error(LANCE_UNAUTHENTICATED,
				errmsg("Authenticate: invalid credentials"),
				errdetail_internal("%s", why));
}

/*
 * key_sha256
 *		SHA-256 of data as a bytea.
 */
static bytea *
key_sha256(const char *data, size_t len)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	bytea	   *out = palloc(VARHDRSZ + PG_SHA256_DIGEST_LENGTH);

	if (ctx == NULL || pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) data, len) < 0 ||
		pg_cryptohash_final(ctx, (uint8 *) VARDATA(out), PG_SHA256_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute SHA-256");
	pg_cryptohash_free(ctx);
	SET_VARSIZE(out, VARHDRSZ + PG_SHA256_DIGEST_LENGTH);
	return out;
}

PG_FUNCTION_INFO_V1(lance_create_api_key);

/*
 * lance_create_api_key(role_name, description, expires_at) returns text
 *		Make a new API key for a role.  Only its SHA-256 is stored; the key
 *		itself is returned once.  The caller needs INSERT on api_keys (the
 *		catalog's owner has it).
 */
Datum
lance_create_api_key(PG_FUNCTION_ARGS)
{
	const char *op = "CreateApiKey";
	char	   *role = PG_ARGISNULL(0) ? NULL : pstrdup(NameStr(*PG_GETARG_NAME(0)));
	uint8		random[API_KEY_RANDOM_BYTES];
	StringInfoData key;
	Datum		values[4];
	char		nulls[4] = "    ";
	Oid			types[4] = {BYTEAOID, NAMEOID, TEXTOID, TIMESTAMPTZOID};
	int			i;

	if (role == NULL || !SearchSysCacheExists1(AUTHNAME, CStringGetDatum(role)))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: role \"%s\" does not exist", op, role ? role : ""));
	if (!pg_strong_random(random, sizeof(random)))
		elog(ERROR, "could not generate random bytes");
	initStringInfo(&key);
	appendStringInfoString(&key, API_KEY_PREFIX);
	for (i = 0; i < API_KEY_RANDOM_BYTES; i++)
		appendStringInfo(&key, "%02x", random[i]);

	values[0] = PointerGetDatum(key_sha256(key.data, key.len));
	values[1] = DirectFunctionCall1(namein, CStringGetDatum(role));
	if (PG_ARGISNULL(1))
		nulls[2] = 'n';
	else
		values[2] = PG_GETARG_DATUM(1);
	if (PG_ARGISNULL(2))
		nulls[3] = 'n';
	else
		values[3] = PG_GETARG_DATUM(2);
	SPI_connect();
	if (SPI_execute_with_args("INSERT INTO lance_namespace.api_keys"
							  " (key_hash, role_name, description, expires_at)"
							  " VALUES ($1, $2, $3, $4)",
							  4, types, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not store the API key");
	SPI_finish();
	PG_RETURN_TEXT_P(cstring_to_text(key.data));
}

PG_FUNCTION_INFO_V1(lance_revoke_api_key);

/*
 * lance_revoke_api_key(api_key text) returns boolean
 *		Delete a key; false when it was not known.
 */
Datum
lance_revoke_api_key(PG_FUNCTION_ARGS)
{
	char	   *key = lance_text_arg(fcinfo, 0);
	Datum		values[1];
	Oid			types[1] = {BYTEAOID};
	bool		found;

	if (key == NULL)
		PG_RETURN_BOOL(false);
	values[0] = PointerGetDatum(key_sha256(key, strlen(key)));
	SPI_connect();
	if (SPI_execute_with_args("DELETE FROM lance_namespace.api_keys WHERE key_hash = $1",
							  1, types, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not revoke the API key");
	found = SPI_processed > 0;
	SPI_finish();
	PG_RETURN_BOOL(found);
}

/*
 * api_key_role
 *		The role an API key maps to; Unauthenticated for an unknown or
 *		expired key.  Connected to SPI.
 */
static char *
api_key_role(const char *key)
{
	Datum		values[1];
	Oid			types[1] = {BYTEAOID};
	bool		isnull;

	values[0] = PointerGetDatum(key_sha256(key, strlen(key)));
	if (SPI_execute_with_args("SELECT role_name::text FROM lance_namespace.api_keys"
							  " WHERE key_hash = $1"
							  " AND (expires_at IS NULL OR expires_at > pg_catalog.now())",
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up the API key");
	if (SPI_processed == 0)
		unauthenticated("unknown or expired API key");
	return TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0],
											 SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * base64url_decode
 *		Decode one base64url part of a JWT; NULL when malformed.
 */
static char *
base64url_decode(const char *in, int len, int *outlen)
{
	char	   *std = palloc(len + 4);
	char	   *out;
	int			i;

	for (i = 0; i < len; i++)
	{
		char		c = in[i];

		if (c == '-')
			c = '+';
		else if (c == '_')
			c = '/';
		else if (c == '=' || c == '+' || c == '/')
			return NULL;
		std[i] = c;
	}
	while (i % 4 != 0)
		std[i++] = '=';
	out = palloc(pg_b64_dec_len(i) + 1);
	*outlen = pg_b64_decode(std, i, out, pg_b64_dec_len(i));
	if (*outlen < 0)
		return NULL;
	out[*outlen] = '\0';
	return out;
}

/*
 * json_number_check
 *		Scalar callback of json_object_from's validation: flag a number
 *		whose exponent could overflow numeric when jsonb_in converts it.
 */
static void
json_number_check(void *state, char *token, JsonTokenType tokentype)
{
	char	   *e;

	if (tokentype == JSON_TOKEN_NUMBER &&
		((e = strpbrk(token, "eE")) != NULL && (strlen(e + 1) > 4 || abs(atoi(e + 1)) > 1000)))
		*(bool *) state = false;
}

/*
 * json_object_from
 *		Parse JSON text that must be an object; NULL otherwise.  The text
 *		comes from a credential, so it is validated first: whatever is wrong
 *		with it must be Unauthenticated, not an error of jsonb_in.
 */
static Jsonb *
json_object_from(const char *text, int len)
{
	Jsonb	   *jb;
	JsonLexContext *lex;
	JsonSemAction sem = {0};
	bool		ok = true;

	if (len <= 0 || memchr(text, '\0', len) != NULL || text[0] != '{' ||
		!pg_verify_mbstr(GetDatabaseEncoding(), text, len, true))
		return NULL;
	sem.semstate = &ok;
	sem.scalar = json_number_check;
	lex = makeJsonLexContextCstringLen((char *) text, len, GetDatabaseEncoding(), true);
	if (pg_parse_json(lex, &sem) != JSON_SUCCESS || !ok)
		return NULL;
	jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
	return JB_ROOT_IS_OBJECT(jb) ? jb : NULL;
}

/*
 * json_string
 *		A string field of a JSON object; NULL when absent or not a string.
 */
static char *
json_string(Jsonb *obj, const char *key)
{
	JsonbValue	v;

	if (!lance_json_field(obj, key, &v) || v.type != jbvString)
		return NULL;
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/*
 * jwt_role
 *		Verify an HS256 JWT with the catalog's secret and return its "role"
 *		claim.  "exp" and "nbf" (seconds since the epoch) are enforced when
 *		present.  Connected to SPI.
 */
static char *
jwt_role(const char *token)
{
	const char *dot1 = strchr(token, '.');
	const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
	char	   *header;
	char	   *payload;
	char	   *sig;
	int			hlen,
				plen,
				slen;
	Jsonb	   *hdr;
	Jsonb	   *claims;
	char	   *alg;
	char	   *role;
	char	   *secret;
	bool		isnull;
	uint8		mac[PG_SHA256_DIGEST_LENGTH];
	pg_hmac_ctx *ctx;
	int			diff = 0;
	int			i;
	double		now = (double) GetCurrentTimestamp() / USECS_PER_SEC +
		(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
	JsonbValue	v;

	if (dot1 == NULL || dot2 == NULL || strchr(dot2 + 1, '.') != NULL || strlen(token) > 8192)
		unauthenticated("malformed token");
	header = base64url_decode(token, dot1 - token, &hlen);
	payload = base64url_decode(dot1 + 1, dot2 - dot1 - 1, &plen);
	sig = base64url_decode(dot2 + 1, strlen(dot2 + 1), &slen);
	if (header == NULL || payload == NULL || sig == NULL || slen != PG_SHA256_DIGEST_LENGTH)
		unauthenticated("malformed token");
	hdr = json_object_from(header, hlen);
	if (hdr == NULL)
		unauthenticated("malformed token header");
	alg = json_string(hdr, "alg");
	if (alg == NULL || strcmp(alg, "HS256") != 0)
		unauthenticated("token algorithm is not HS256");

	if (SPI_execute("SELECT value FROM lance_namespace.secrets WHERE name = 'jwt_secret'",
					true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the JWT secret");
	if (SPI_processed == 0)
		unauthenticated("no JWT secret is configured");
	secret = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0],
											   SPI_tuptable->tupdesc, 1, &isnull));
	ctx = pg_hmac_create(PG_SHA256);
	if (ctx == NULL || pg_hmac_init(ctx, (const uint8 *) secret, strlen(secret)) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) token, dot2 - token) < 0 ||
		pg_hmac_final(ctx, mac, sizeof(mac)) < 0)
		elog(ERROR, "could not compute HMAC-SHA256");
	pg_hmac_free(ctx);
	for (i = 0; i < PG_SHA256_DIGEST_LENGTH; i++)
		diff |= mac[i] ^ (uint8) sig[i];
	if (diff != 0)
		unauthenticated("bad token signature");

	claims = json_object_from(payload, plen);
	if (claims == NULL)
		unauthenticated("malformed token claims");
	if (lance_json_field(claims, "exp", &v))
	{
		if (v.type != jbvNumeric ||
			DatumGetFloat8(DirectFunctionCall1(numeric_float8,
											   NumericGetDatum(v.val.numeric))) <= now)
			unauthenticated("token expired");
	}
	if (lance_json_field(claims, "nbf", &v))
	{
		if (v.type != jbvNumeric ||
			DatumGetFloat8(DirectFunctionCall1(numeric_float8,
											   NumericGetDatum(v.val.numeric))) > now)
			unauthenticated("token not yet valid");
	}
	role = json_string(claims, "role");
	if (role == NULL || role[0] == '\0')
		unauthenticated("token has no role claim");
	return role;
}

PG_FUNCTION_INFO_V1(lance_authenticate);

/*
 * lance_authenticate(api_key text, bearer_token text) returns name
 *		The role that a credential maps to, or NULL when none is given.  An
 *		invalid credential is Unauthenticated (16); so is a role that does
 *		not exist.  When both are given, both must be valid and agree.
 */
Datum
lance_authenticate(PG_FUNCTION_ARGS)
{
	char	   *key = lance_text_arg(fcinfo, 0);
	char	   *token = lance_text_arg(fcinfo, 1);
	char	   *role = NULL;
	MemoryContext outer = CurrentMemoryContext;
	Datum		result = (Datum) 0;

	if (key != NULL && key[0] == '\0')
		key = NULL;
	if (token != NULL && token[0] == '\0')
		token = NULL;
	if (key == NULL && token == NULL)
		PG_RETURN_NULL();
	SPI_connect();
	if (key != NULL)
		role = api_key_role(key);
	if (token != NULL)
	{
		char	   *jrole = jwt_role(token);

		if (role != NULL && strcmp(role, jrole) != 0)
			unauthenticated("API key and token name different roles");
		role = jrole;
	}
	if (strlen(role) >= NAMEDATALEN || !SearchSysCacheExists1(AUTHNAME, CStringGetDatum(role)))
		unauthenticated("the credential's role does not exist");
	{
		MemoryContext old = MemoryContextSwitchTo(outer);

		result = DirectFunctionCall1(namein, CStringGetDatum(role));
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	PG_RETURN_DATUM(result);
}
