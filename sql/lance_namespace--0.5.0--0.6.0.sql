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
