--
-- 12_auth: API keys and HS256 JWTs mapped to roles by lance_authenticate,
-- the extension's one SECURITY DEFINER function.
--
CREATE EXTENSION IF NOT EXISTS lance_namespace;
CREATE EXTENSION IF NOT EXISTS pgcrypto;
\set VERBOSITY terse
-- a run that stopped half-way may have left roles, keys and the secret
DO $$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['regress_lance_key_user', 'regress_lance_other_user',
							 'regress_lance_authenticator', 'regress_lance_plain',
							 'regress_lance_short_lived'] LOOP
		IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
			EXECUTE format('DROP OWNED BY %I', r);
			EXECUTE format('DROP ROLE %I', r);
		END IF;
	END LOOP;
END$$;
DELETE FROM lance_namespace.api_keys WHERE role_name::text LIKE 'regress_lance_%';
DELETE FROM lance_namespace.secrets;
CREATE ROLE regress_lance_key_user;
CREATE ROLE regress_lance_other_user;
CREATE ROLE regress_lance_authenticator;
CREATE ROLE regress_lance_plain;
-- both may use the schema (as a role with a lance_grant can)
GRANT USAGE ON SCHEMA lance_namespace TO regress_lance_authenticator, regress_lance_plain;

-- auth_try(key, token): the role, or the error with its detail (which says
-- what was wrong; the message never does)
CREATE FUNCTION pg_temp.auth_try(api_key text, bearer_token text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	RETURN COALESCE(lance_namespace.lance_authenticate(api_key, bearer_token)::text, '(null)');
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ' ' ||
		COALESCE(lance_namespace.lance_error_name(lance_namespace.lance_error_code(SQLSTATE)), '?') ||
		': ' || SQLERRM || COALESCE(' (' || NULLIF(detail, '') || ')', '');
END;
$$;

--
-- API keys
--
SELECT lance_namespace.lance_create_api_key('regress_lance_key_user', 'for the tests') AS key \gset
-- 'lnk_' and 24 random bytes in hex; the key itself is masked here
SELECT :'key' ~ '^lnk_[0-9a-f]{48}$' AS well_formed, length(:'key') AS length;
SELECT role_name, description, expires_at, created_by, length(key_hash) AS hash_bytes,
       key_hash = sha256(convert_to(:'key', 'UTF8')) AS stores_sha256
  FROM lance_namespace.api_keys WHERE role_name = 'regress_lance_key_user';
-- keys differ each time
SELECT lance_namespace.lance_create_api_key('regress_lance_key_user') AS key2 \gset
SELECT :'key' <> :'key2' AS distinct_keys;
SELECT pg_temp.auth_try(:'key', NULL);
SELECT pg_temp.auth_try(:'key2', '');
-- unknown, wrongly shaped and empty keys
SELECT pg_temp.auth_try('lnk_' || repeat('0', 48), NULL);
SELECT pg_temp.auth_try(upper(:'key'), NULL);
SELECT pg_temp.auth_try(:'key' || ' ', NULL);
SELECT pg_temp.auth_try('', NULL);
SELECT pg_temp.auth_try(NULL, NULL);
SELECT pg_temp.auth_try('', '');
-- expiry
SELECT lance_namespace.lance_create_api_key('regress_lance_key_user', 'expired',
       now() - interval '1 second') AS expired_key \gset
SELECT lance_namespace.lance_create_api_key('regress_lance_key_user', 'valid a while',
       now() + interval '1 hour') AS future_key \gset
SELECT pg_temp.auth_try(:'expired_key', NULL);
SELECT pg_temp.auth_try(:'future_key', NULL);
-- revocation
SELECT lance_namespace.lance_revoke_api_key(:'key2') AS revoked;
SELECT pg_temp.auth_try(:'key2', NULL);
SELECT lance_namespace.lance_revoke_api_key(:'key2') AS revoked_again;
SELECT lance_namespace.lance_revoke_api_key(NULL) AS revoked_null;
SELECT lance_namespace.lance_revoke_api_key('lnk_nope') AS revoked_unknown;
SELECT pg_temp.auth_try(:'key', NULL) AS other_key_still_works;
-- a key for a role that does not exist is refused when it is made
SELECT lance_try($$SELECT lance_namespace.lance_create_api_key('regress_lance_no_such_role')$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_api_key(NULL)$$);
-- a key whose role was dropped afterwards no longer authenticates
CREATE ROLE regress_lance_short_lived;
SELECT lance_namespace.lance_create_api_key('regress_lance_short_lived') AS orphan_key \gset
SELECT pg_temp.auth_try(:'orphan_key', NULL);
DROP ROLE regress_lance_short_lived;
SELECT pg_temp.auth_try(:'orphan_key', NULL);
SELECT lance_namespace.lance_revoke_api_key(:'orphan_key') AS orphan_revoked;

--
-- JWT secret
--
-- no secret yet: every token is refused
SELECT pg_temp.auth_try(NULL, 'eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoieCJ9.' || repeat('A', 43));
-- shorter than 32 characters, or NULL: InvalidInput
SELECT lance_try($$SELECT lance_namespace.lance_set_jwt_secret('too short')$$);
SELECT lance_try($$SELECT lance_namespace.lance_set_jwt_secret(NULL)$$);
SELECT lance_namespace.lance_set_jwt_secret('an-old-secret-of-at-least-32-chars');
SELECT lance_namespace.lance_set_jwt_secret('regress-secret-0123456789abcdefghij');
SELECT name, length(value) FROM lance_namespace.secrets;

--
-- HS256 tokens built in SQL
--
CREATE FUNCTION pg_temp.b64url(data bytea) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT rtrim(translate(encode(data, 'base64'), E'+/\n', '-_'), '=')
$$;
-- jwt(header, payload, secret, algorithm): header.payload.signature, with
-- header and payload as given (text, so that malformed JSON can be made)
CREATE FUNCTION pg_temp.jwt(header text, payload text,
                            secret text DEFAULT 'regress-secret-0123456789abcdefghij',
                            algorithm text DEFAULT 'sha256') RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT s || '.' || pg_temp.b64url(public.hmac(convert_to(s, 'UTF8'), convert_to(secret, 'UTF8'), algorithm))
  FROM (SELECT pg_temp.b64url(convert_to(header, 'UTF8')) || '.' ||
               pg_temp.b64url(convert_to(payload, 'UTF8')) AS s) t
$$;
SELECT extract(epoch FROM now())::bigint AS now_s \gset
\set hs256 '{"alg": "HS256", "typ": "JWT"}'

-- valid tokens
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', format('{"role": "regress_lance_key_user", "exp": %s}', :now_s + 3600)));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_other_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('{"alg":"HS256"}', format('{"role": "regress_lance_key_user", "nbf": %s, "iat": %s, "sub": "x"}', :now_s - 60, :now_s - 60)));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', format('{"role": "regress_lance_key_user", "exp": %s.5}', :now_s + 60)));
-- the signature of a well-known HS256 token, checked against pgcrypto
SELECT pg_temp.jwt('{"alg":"HS256","typ":"JWT"}', '{"sub":"1234567890","name":"John Doe","iat":1516239022}',
                   'your-256-bit-secret') =
       'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c'
       AS matches_reference;

-- bad signatures
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}', 'another-secret-0123456789abcdefghij'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}', 'an-old-secret-of-at-least-32-chars'));
-- a payload swapped under another token's signature
SELECT pg_temp.auth_try(NULL, split_part(t1, '.', 1) || '.' || split_part(t2, '.', 2) || '.' || split_part(t1, '.', 3))
  FROM (SELECT pg_temp.jwt(:'hs256', '{"role": "regress_lance_other_user"}') AS t1,
               pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}') AS t2) t;
-- a truncated signature, and none
SELECT pg_temp.auth_try(NULL, left(t, length(t) - 2)) FROM pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}') t;
SELECT pg_temp.auth_try(NULL, split_part(t, '.', 1) || '.' || split_part(t, '.', 2) || '.')
  FROM pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}') t;

-- algorithms other than HS256
SELECT pg_temp.auth_try(NULL, split_part(t, '.', 1) || '.' || split_part(t, '.', 2) || '.')
  FROM pg_temp.jwt('{"alg": "none"}', '{"role": "regress_lance_key_user"}') t;
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('{"alg": "none"}', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('{"alg": "HS512"}', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('{"alg": "HS512"}', '{"role": "regress_lance_key_user"}', algorithm => 'sha512'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('{"alg": "hs256"}', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('{"typ": "JWT"}', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('{"alg": 256}', '{"role": "regress_lance_key_user"}'));

-- time claims
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', format('{"role": "regress_lance_key_user", "exp": %s}', :now_s - 10)));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', format('{"role": "regress_lance_key_user", "exp": "%s"}', :now_s + 3600)));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', format('{"role": "regress_lance_key_user", "nbf": %s}', :now_s + 3600)));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user", "nbf": true}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user", "exp": null}'));

-- the role claim
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"sub": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": ""}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": 42}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": ["regress_lance_key_user"]}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_no_such_role"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', format('{"role": "%s"}', repeat('r', 100))));

-- malformed tokens
SELECT pg_temp.auth_try(NULL, 'abc');
SELECT pg_temp.auth_try(NULL, split_part(t, '.', 1) || '.' || split_part(t, '.', 2))
  FROM pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}') t;
SELECT pg_temp.auth_try(NULL, t || '.x') FROM pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}') t;
SELECT pg_temp.auth_try(NULL, '!!!.' || split_part(t, '.', 2) || '.' || split_part(t, '.', 3))
  FROM pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}') t;
SELECT pg_temp.auth_try(NULL, t || '=') FROM pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}') t;
SELECT pg_temp.auth_try(NULL, '..');
SELECT pg_temp.auth_try(NULL, repeat('a', 9000));
-- headers and payloads that are not JSON objects
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('not json', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('{not json', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('{"alg": "HS256"', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('["HS256"]', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('{"alg": "HS256", "x": "\u0000"}', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt('{"alg": "HS256", "x": 1e999999}', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, '.' || split_part(t, '.', 2) || '.' || split_part(t, '.', 3))
  FROM pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}') t;
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', 'regress_lance_key_user'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user", "exp": 1e999999}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', ''));
-- a header that is not valid UTF-8
SELECT pg_temp.auth_try(NULL, t || '.' || pg_temp.b64url(public.hmac(convert_to(t, 'UTF8'), convert_to('regress-secret-0123456789abcdefghij', 'UTF8'), 'sha256')))
  FROM (SELECT pg_temp.b64url('\x7b22616c67223a224853323536222c2278223a22ff227d'::bytea) || '.' ||
               pg_temp.b64url(convert_to('{"role": "regress_lance_key_user"}', 'UTF8')) AS t) s;

--
-- Key and token together: both must be valid and name the same role.
--
SELECT pg_temp.auth_try(:'key', pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(:'key', pg_temp.jwt(:'hs256', '{"role": "regress_lance_other_user"}'));
SELECT pg_temp.auth_try(:'key', pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}', 'another-secret-0123456789abcdefghij'));
SELECT pg_temp.auth_try('lnk_nope', pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(:'key', '');
SELECT pg_temp.auth_try('', pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}'));
-- a new secret invalidates tokens signed with the old one
SELECT lance_namespace.lance_set_jwt_secret('rotated-secret-0123456789abcdefghij');
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}'));
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_key_user"}', 'rotated-secret-0123456789abcdefghij'));

--
-- Who may do what
--
-- lance_authenticate is the only SECURITY DEFINER function of the extension
SELECT p.oid::regprocedure AS security_definer
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
 WHERE e.extname = 'lance_namespace' AND p.prosecdef;
SELECT proconfig FROM pg_proc WHERE oid = 'lance_namespace.lance_authenticate(text, text)'::regprocedure;
SELECT has_function_privilege('regress_lance_plain', 'lance_namespace.lance_authenticate(text, text)', 'EXECUTE') AS plain_may_execute,
       has_table_privilege('regress_lance_plain', 'lance_namespace.api_keys', 'SELECT') AS plain_reads_keys,
       has_table_privilege('regress_lance_plain', 'lance_namespace.secrets', 'SELECT') AS plain_reads_secrets;

-- an ordinary role: not allowed to authenticate, nor to read or make credentials
SET ROLE regress_lance_plain;
SELECT pg_temp.auth_try(:'key', NULL);
SELECT lance_try($$SELECT * FROM lance_namespace.api_keys$$);
SELECT lance_try($$SELECT * FROM lance_namespace.secrets$$);
SELECT lance_try($$SELECT lance_namespace.lance_create_api_key('regress_lance_plain')$$);
SELECT lance_try($$SELECT lance_namespace.lance_revoke_api_key('lnk_nope')$$);
SELECT lance_try($$SELECT lance_namespace.lance_set_jwt_secret('plain-secret-0123456789abcdefghijkl')$$);
RESET ROLE;

-- the gateway's authenticator, once granted EXECUTE, maps credentials but
-- still reads neither the key hashes nor the secret
GRANT EXECUTE ON FUNCTION lance_namespace.lance_authenticate(text, text) TO regress_lance_authenticator;
SET ROLE regress_lance_authenticator;
SELECT pg_temp.auth_try(:'key', NULL);
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_other_user"}', 'rotated-secret-0123456789abcdefghij'));
SELECT pg_temp.auth_try('lnk_nope', NULL);
SELECT pg_temp.auth_try(NULL, pg_temp.jwt(:'hs256', '{"role": "regress_lance_other_user"}'));
SELECT lance_try($$SELECT * FROM lance_namespace.api_keys$$);
SELECT lance_try($$SELECT value FROM lance_namespace.secrets$$);
-- search_path does not reach into the SECURITY DEFINER function
SET search_path = public;
SELECT pg_temp.auth_try(:'key', NULL);
RESET search_path;
RESET ROLE;

--
-- Clean up
--
REVOKE EXECUTE ON FUNCTION lance_namespace.lance_authenticate(text, text) FROM regress_lance_authenticator;
SELECT lance_namespace.lance_revoke_api_key(:'key') AS key_revoked,
       lance_namespace.lance_revoke_api_key(:'expired_key') AS expired_revoked,
       lance_namespace.lance_revoke_api_key(:'future_key') AS future_revoked;
SELECT count(*) AS keys_left FROM lance_namespace.api_keys WHERE role_name::text LIKE 'regress_lance_%';
DELETE FROM lance_namespace.secrets;
DROP OWNED BY regress_lance_key_user, regress_lance_other_user, regress_lance_authenticator, regress_lance_plain;
DROP ROLE regress_lance_key_user, regress_lance_other_user, regress_lance_authenticator, regress_lance_plain;
DROP EXTENSION pgcrypto;
