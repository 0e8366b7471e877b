/*
 * lance_namespace 0.2.0 -> 0.3.0 (issue 19: a commit path with one flush).
 *
 * - publications: the bytes of manifests that a gateway's CreateTableVersion
 *   ratified before their canonical file was durable, kept in the version's
 *   transaction and pruned once the file is (src/gateway/publish.c).  The
 *   catalog's C code writes it as the owner; a row goes with its version.
 *
 * The result equals a fresh 0.3.0 install (test/t/033_upgrade_paths.pl).
 */

\echo Use "ALTER EXTENSION lance_namespace UPDATE TO '0.3.0'" to load this file. \quit

/*
 * Manifests ratified but not yet durably published (issue 19).  A gateway
 * committing to a local --root sends the staged manifest's bytes with
 * CreateTableVersion; the catalog keeps them here, in the transaction that
 * inserts the version, so that the WAL flush of COMMIT is the only flush a
 * create waits for.  The canonical file is then a publication that can be
 * redone from these bytes: the gateway links it before COMMIT without
 * flushing, makes publications durable in groups (syncfs) and then deletes
 * their rows; its start-up, DescribeTableVersion and --sweep rewrite a
 * canonical file that is missing or differs from the row's bytes
 * (src/gateway/publish.c, RELIABILITY.md).  Rows go with their version
 * (ON DELETE CASCADE).  Written by the catalog's C code as the owner, for
 * the version the caller's own call has just inserted; read and pruned by
 * the owner alone: no role is granted anything on this table.
 */
CREATE TABLE lance_namespace.publications (
	table_id	bigint NOT NULL,
	branch		text COLLATE "C" NOT NULL,
	version		bigint NOT NULL,
	manifest	bytea NOT NULL,
	CONSTRAINT publications_pkey PRIMARY KEY (table_id, branch, version),
	CONSTRAINT publications_version_fkey FOREIGN KEY (table_id, branch, version)
		REFERENCES lance_namespace.versions (table_id, branch, version) ON DELETE CASCADE
) WITH (toast_tuple_target = 8160);

/*
 * A manifest up to a page stays in its row, uncompressed (its bytes hardly
 * compress): one heap record per create instead of a TOAST row and its
 * index entry as well.
 */
ALTER TABLE lance_namespace.publications ALTER COLUMN manifest SET STORAGE EXTERNAL;
ALTER TABLE lance_namespace.publications ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON lance_namespace.publications FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('lance_namespace.publications', '');
