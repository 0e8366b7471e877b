/*
 * lance_namespace 0.5.0 -> 0.6.0.
 *
 * Issue 39, integrity: a table owns its location, a committed manifest is
 * never touched, a version number is acknowledged once; the documented
 * low-privilege authenticator serves every route.  Each change below says
 * which part it is.
 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION lance_namespace UPDATE TO '0.6.0'" to load this file. \quit

SET search_path = pg_catalog, pg_temp;

/* ------------------------------------------------------------------------
 * A table owns its location (0.6.0, issue 39; src/table_location.c)
 *
 * No live table's location is, lies in or contains another's, on every
 * path that places a table: the entries_location_check trigger checks it
 * as the catalog's owner (a table the caller cannot see counts) with the
 * latest snapshot, after advisory locks that serialize overlapping
 * placements.  A role other than the catalog's owner places a table only
 * below its namespace's own location (the root location and the
 * namespace's names).  Locations are compared by their keys
 * (src/location_rules.c), which entries_location_key_idx indexes.
 * ------------------------------------------------------------------------ */

CREATE FUNCTION lance_namespace.lance_location_key(location text)
RETURNS text
AS 'MODULE_PATHNAME', 'lance_location_key_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

CREATE INDEX entries_location_key_idx ON lance_namespace.entries
	((lance_namespace.lance_location_key(location) COLLATE "C")) WHERE kind = 't';

CREATE FUNCTION lance_namespace.lance_entries_location_check()
RETURNS trigger
AS 'MODULE_PATHNAME', 'lance_entries_location_check'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;

CREATE TRIGGER entries_location_check BEFORE INSERT OR UPDATE OF location
	ON lance_namespace.entries
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_entries_location_check();

/*
 * Whether the current role could place table id at location now; the
 * gateway asks before it reads anything at a location a client named
 * (RegisterTable), so that a refusal comes before any I/O.
 */
CREATE FUNCTION lance_namespace.lance_check_table_location(id text[], location text)
RETURNS text
AS 'MODULE_PATHNAME', 'lance_check_table_location'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION lance_namespace.rest_check_table_location(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'lance_rest_binding'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

/*
 * Whether a live table other than except_table has a location that is,
 * lies in or contains location (--sweep asks before it deletes anything).
 * Answered as the catalog's owner, so not executable by PUBLIC: it would
 * tell a tenant where other tenants' tables are.
 */
CREATE FUNCTION lance_namespace.lance_location_taken(location text, except_table bigint DEFAULT NULL)
RETURNS boolean
AS 'MODULE_PATHNAME', 'lance_location_taken'
LANGUAGE C STABLE
SET search_path = pg_catalog, pg_temp;

REVOKE ALL ON FUNCTION lance_namespace.lance_location_taken(text, bigint) FROM PUBLIC;

/*
 * A version number is acknowledged once (0.6.0, issue 39;
 * src/version_check.c): a new version is above its branch's latest
 * (lance_versions_check), and a branch's latest version is not deleted
 * while the table and the branch live.
 */
CREATE FUNCTION lance_namespace.lance_versions_keep_latest()
RETURNS trigger
AS 'MODULE_PATHNAME', 'lance_versions_keep_latest'
LANGUAGE C
SET search_path = pg_catalog, pg_temp;

CREATE TRIGGER versions_keep_latest BEFORE DELETE ON lance_namespace.versions
	FOR EACH ROW EXECUTE FUNCTION lance_namespace.lance_versions_keep_latest();
