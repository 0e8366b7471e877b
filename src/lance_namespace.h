/*-------------------------------------------------------------------------
 *
 * lance_namespace.h
 *	  Shared declarations of the lance_namespace extension.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_NAMESPACE_H
#define LANCE_NAMESPACE_H

#include "postgres.h"

#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/jsonb.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

/* Lance error codes, their names, SQLSTATE and HTTP status (error_rules.c). */
#include "error_rules.h"

#define LANCE_SQLSTATE(code) \
	MAKE_SQLSTATE('L', 'N', '0', '0' + ((code) / 10), '0' + ((code) % 10))

/* Raise a Lance error: lance_error(LANCE_TABLE_NOT_FOUND, errmsg(...), ...) */
#define lance_error(code, ...) \
	ereport(ERROR, (errcode(LANCE_SQLSTATE(code)), __VA_ARGS__))

/* Limits (lance_limits.h) and the rules for names. */
#include "lance_limits.h"
#include "manifest_rules.h"
#include "name_rules.h"

#define LANCE_MAIN_BRANCH		"main"
#define LANCE_ROOT_ID			0
#define LANCE_NOTIFY_CHANNEL	"lance_namespace_commits"

/* lance_namespace.c */
extern bool lance_notify_commits;
extern char *lance_interface;


/* postgrest.c */
extern void lance_postgrest_init(void);

/* ident.c */
extern void lance_validate_name(const char *op, const char *what, const char *name, int len);
extern void lance_validate_path(const char *op, const char *what, const char *path);
extern void lance_validate_e_tag(const char *op, const char *e_tag);
extern ArrayType *lance_require_id(const char *op, const char *what, ArrayType *id,
								   bool allow_root);
extern void lance_check_id_shape(const char *op, const char *what, ArrayType *id);
extern ArrayType *lance_validate_id(const char *op, const char *what,
									ArrayType *id, bool allow_root);
extern ArrayType *lance_id_arg(FunctionCallInfo fcinfo, int argno, const char *op,
							   const char *what, bool allow_root);
extern char *lance_id_to_cstring(ArrayType *id, const char *delimiter);
extern ArrayType *lance_id_parent(ArrayType *id);
extern char *lance_id_last(ArrayType *id);
extern int	lance_id_depth(ArrayType *id);
extern ArrayType *lance_id_append(ArrayType *id, const char *name);
extern ArrayType *lance_cstring_to_id(const char *str, const char *delimiter, const char *op);
extern void lance_validate_delimiter(const char *op, const char *delimiter);

/* jsonutil.c */
extern Jsonb *lance_string_map_arg(FunctionCallInfo fcinfo, int argno, const char *op,
								   const char *field, bool empty_if_null);
extern bool lance_jsonb_is_null(Jsonb *jb);
extern Jsonb *lance_empty_object(void);
extern ArrayType *lance_request_id(Jsonb *req);
extern bool lance_request_field(Jsonb *req, const char *field, JsonbValue *out);
extern char *lance_request_text(Jsonb *req, const char *field);
extern const char *lance_jsonb_type_name(const JsonbValue *v);
extern bool lance_request_int64(Jsonb *req, const char *field, int64 *result);
extern bool lance_request_int32(Jsonb *req, const char *field, int32 *result);
extern bool lance_request_bool(Jsonb *req, const char *field, bool *result);
extern Jsonb *lance_request_json(Jsonb *req, const char *field);
extern ArrayType *lance_request_text_array(Jsonb *req, const char *field);
extern void lance_push_string(JsonbParseState **st, JsonbIteratorToken seq,
							  const char *s);
extern void lance_push_datum(JsonbParseState **st, Datum d, bool isnull, Oid typid);
extern void lance_check_string_map(const char *op, const char *field, Jsonb *jb);
extern bool lance_json_field(Jsonb *obj, const char *key, JsonbValue *out);
extern char *lance_json_text(Jsonb *obj, const char *key, const char *op);
extern bool lance_json_int64(Jsonb *obj, const char *key, const char *op, int64 *result);
extern ArrayType *lance_json_text_array(Jsonb *obj, const char *key);
extern Jsonb *lance_json_value(Jsonb *obj, const char *key);

/* pagetoken.c */
extern char *lance_page_token_encode(char kind, const char *value);
extern char *lance_page_token_decode(char kind, const char *token, const char *op);
extern int	lance_page_limit(FunctionCallInfo fcinfo, int argno, const char *op);
extern int	lance_check_page_limit(bool has_limit, int32 limit, const char *op);

/* spiutil.c */
typedef enum LancePlanId
{
	PLAN_RESOLVE_ENTRY,
	PLAN_RESOLVE_ENTRY_KEY_SHARE,
	PLAN_RESOLVE_ENTRY_FOR_UPDATE,
	PLAN_INSERT_ENTRY,
	PLAN_SIBLING_KIND,
	PLAN_CHILD_EXISTS,
	PLAN_DELETE_ENTRY,
	PLAN_GET_SETTING,
	PLAN_INSERT_VERSION,
	PLAN_GET_VERSION,
	PLAN_LATEST_VERSION,
	PLAN_HAS_VERSIONS,
	PLAN_DELETE_VERSION_RANGE,
	PLAN_RETIRE_VERSION,
	PLAN_INSERT_PUBLICATION,
	PLAN_LOCATION_TAKEN,
	PLAN_LATEST_VERSION_NUMBER,
	PLAN_VERSION_NUMBER_EXISTS,
	PLAN_VERSION_KEEPS_LATEST,
	PLAN_LIST_NAMESPACES,
	PLAN_LIST_TABLES,
	PLAN_LIST_TABLES_CREATED,
	PLAN_LIST_ALL_TABLES,
	PLAN_LIST_ALL_TABLES_CREATED,
	PLAN_LIST_VERSIONS_ASC,
	PLAN_LIST_VERSIONS_DESC,
	PLAN_UPDATE_ENTRY_PROPERTIES,
	PLAN_RENAME_ENTRY,
	PLAN_REREGISTER_ENTRY,
	PLAN_DELETE_ALL_VERSIONS,
	PLAN_INSERT_HISTORY,
	PLAN_INSERT_HISTORY_LOG,
	PLAN_RECORD_VERSION,
	PLAN_MOVE_VERSION_RECORD,
	PLAN_MOVE_ALL_VERSION_RECORDS,
	PLAN_ENTRY_PATH,
	PLAN_GET_BRANCH,
	PLAN_GET_BRANCH_KEY_SHARE,
	PLAN_GET_BRANCH_FOR_UPDATE,
	PLAN_INSERT_BRANCH,
	PLAN_BRANCH_HAS_CHILDREN,
	PLAN_DELETE_BRANCH,
	PLAN_DELETE_BRANCH_VERSIONS,
	PLAN_DELETE_BRANCH_TAGS,
	PLAN_LIST_BRANCHES,
	PLAN_GET_TAG,
	PLAN_GET_TAG_FOR_UPDATE,
	PLAN_INSERT_TAG,
	PLAN_UPDATE_TAG,
	PLAN_DELETE_TAG,
	PLAN_LIST_TAGS,
	PLAN_TRANSACTION_HISTORY,
	PLAN_TRANSACTION_PROPERTIES,
	PLAN_SET_TRANSACTION_PROPERTY,
	PLAN_ADD_TRANSACTION_PROPERTY,
	PLAN_UNSET_TRANSACTION_PROPERTY,
	PLAN_DESCRIBE_TRANSACTION,
	PLAN_REST_DECLARE_TABLE,
	PLAN_REST_CREATE_TABLE_VERSION,
	PLAN_REST_DELETE_TABLE_VERSIONS,
	PLAN_REST_DEREGISTER_TABLE,
	PLAN_COUNT
} LancePlanId;

extern SPIPlanPtr lance_plan(LancePlanId id);
extern Datum lance_list_table_map(FunctionCallInfo fcinfo, const char *op, LancePlanId plan,
								  char token_kind,
								  void (*contents) (StringInfo buf, int row));
extern int	lance_exec(LancePlanId id, Datum *values, const char *nulls, bool read_only, long count);
extern int	lance_exec_as(Oid role, LancePlanId id, Datum *values, const char *nulls,
						  bool read_only, long count);
extern int	lance_exec_latest_as(Oid role, LancePlanId id, Datum *values, const char *nulls,
								 long count);
extern Datum lance_spi_value(int row, int col, bool *isnull);
extern Datum lance_spi_copy_value(int row, int col, bool *isnull, MemoryContext cxt);

/* table_location.c */
extern void lance_check_location(int64 table_id, ArrayType *path, const char *location);
extern bool lance_location_taken_by_other(int64 table_id, const char *location);

/* catalog.c */
typedef struct LanceEntry
{
	int64		id;
	char		kind;			/* 'r', 'n' or 't' */
	char	   *location;		/* tables only */
	Jsonb	   *properties;
	bool		declared;
} LanceEntry;

typedef enum LanceLock
{
	LANCE_LOCK_NONE,			/* read with the statement's snapshot */
	LANCE_LOCK_NONE_FRESH,		/* no lock, but a fresh snapshot, as writers
								 * read */
	LANCE_LOCK_KEY_SHARE,
	LANCE_LOCK_FOR_UPDATE
} LanceLock;

/* entry_probe.c: the LANCE_LOCK_NONE_FRESH and LANCE_LOCK_NONE lookups without SPI */
extern int	lance_probe_entry(ArrayType *path, bool fresh, LanceEntry *entry);
extern int	lance_probe_latest_version(int64 table_id, const char *branch, int64 *latest);

/* catalog_oids.c: the catalog's relations, looked up once per backend */
#define LANCE_ENTRY_NCOLS 5
typedef struct LanceCatalogOids
{
	Oid			entries;		/* lance_namespace.entries */
	Oid			entries_path_key;	/* its unique index on path */
	AttrNumber	entry_attnums[LANCE_ENTRY_NCOLS];	/* id, kind, location,
													 * properties, declared */
	AttrNumber	entry_path;		/* path */
	bool		history_has_session_role;	/* 0.2.0 on */
	Oid			versions;		/* lance_namespace.versions */
	Oid			versions_pkey;	/* its primary key (table_id, branch,
								 * version) */
} LanceCatalogOids;

extern const LanceCatalogOids *lance_catalog_oids(void);

extern bool lance_lookup_entry(ArrayType *path, LanceLock lock, LanceEntry *entry);
extern int64 lance_resolve_namespace(const char *op, ArrayType *id, LanceLock lock,
									 LanceEntry *entry);
extern void lance_resolve_table(const char *op, ArrayType *id, LanceLock lock,
								LanceEntry *entry);
extern void lance_raise_missing_table(const char *op, ArrayType *id);
extern void lance_check_lock_denied(const char *op, ArrayType *id, LanceLock lock);
extern LanceLock lance_commit_lock(void);
extern void lance_raise_name_taken(const char *op, ArrayType *id, int64 parent_id,
								   const char *name, char kind);
extern char *lance_get_setting(const char *name);
extern char *lance_default_table_location(const char *op, ArrayType *id);
extern char *lance_text_arg(FunctionCallInfo fcinfo, int argno);
extern char *lance_join_path(const char *base, const char *rest);
extern Datum lance_form_result(TupleDesc tupdesc, Datum *values, bool *nulls,
							   MemoryContext outer);

/* namespace_ops.c */
extern bool lance_mode_matches(const char *given, const char *name);
extern bool lance_insert_entry(int64 parent_id, char kind, ArrayType *path,
							   Jsonb *properties, const char *location, bool declared);
extern bool lance_delete_entry(int64 id);
extern Datum lance_list_names(FunctionCallInfo fcinfo, const char *op, LancePlanId plan,
							  int64 parent_id, char token_kind, const char *token, int limit,
							  MemoryContext outer);

/* history.c */
extern char *lance_transaction_id(void);
extern void lance_json_id(StringInfo buf, ArrayType *id);
extern Jsonb *lance_version_history_detail(const char *branch, int64 version,
											 const char *manifest_path);
extern void lance_version_committed(ArrayType *id, const char *branch, int64 version,
									const char *manifest_path, int64 timestamp_millis);

/* txn_ops.c */
extern char *lance_transaction_arg(FunctionCallInfo fcinfo, int argno, const char *op,
								   uint64 *xid);
extern void lance_append_transaction_properties(StringInfo buf, const char *xid, bool first);

/* audit.c */
extern void lance_audit_init(void);
extern void lance_operation_begin(void);
extern void lance_operation_end(void);
extern bool lance_in_operation(void);
extern void lance_clearing_begin(void);
extern void lance_clearing_end(void);
extern bool lance_clearing_versions(void);
extern void lance_audit_version(int64 table_id, ArrayType *path, TimestampTz at);
extern Oid	lance_catalog_owner(void);
extern bool lance_is_owner_of(Relation rel);
extern const char *lance_effective_interface(void);
extern void lance_record(const char *op, ArrayType *id, const char *detail);
extern void lance_record_version(ArrayType *id, TimestampTz at, const char *branch,
								 int64 version, const char *manifest_path);
extern bool lance_versions_carry_records(TupleDesc desc);
extern bool lance_restoring(Relation rel);
extern HeapTuple lance_version_record(Relation rel, HeapTuple tuple);
extern HeapTuple lance_version_record_cleared(Relation rel, HeapTuple tuple);
extern void lance_move_version_record(Relation rel, HeapTuple old);

/*
 * LANCE_MOVE_VERSION_RECORDS(from)
 *		The statement that moves the creation records of the version rows
 *		"from" selects (as v) to the log, each as the CreateTableVersion row
 *		that the history view reads from the row itself: one definition for
 *		a changed row, a deleted statement's rows and a TRUNCATE (0.4.0's
 *		history view, sql/lance_namespace--0.4.0.sql, is the same mapping;
 *		15_version_records checks that the history reads the same before
 *		and after each move).
 */
#define LANCE_MOVE_VERSION_RECORDS(from) \
	"INSERT INTO lance_namespace.history_log" \
	" (transaction_id, at, role, interface, operation, id, detail, session_role)" \
	" SELECT v.transaction_id, v.created_at, v.created_by, COALESCE(v.interface, 'sql')," \
	"  'CreateTableVersion', COALESCE(v.table_path, '{}')," \
	"  jsonb_build_object('branch', v.branch, 'version', v.version," \
	"                     'manifest_path', v.manifest_path), v.session_role " \
	from " AND v.transaction_id IS NOT NULL ORDER BY v.created_at"

/* branch_ops.c */
typedef struct LanceBranch
{
	const char *name;			/* "main" for the main branch */
	bool		is_main;
	char	   *parent_branch;	/* NULL when the parent is main */
	int64		parent_version;
	int64		manifest_size;
} LanceBranch;

extern void lance_resolve_branch(const char *op, int64 table_id, const char *branch,
								 LanceLock lock, LanceBranch *out);
extern bool lance_find_version(int64 table_id, const LanceBranch *branch, bool latest,
							   int64 version, const char **found_branch);
extern char *lance_branch_dir(const char *location, const char *branch);

/* version_ops.c */
typedef struct LanceVersionRequest
{
	ArrayType  *id;
	bool		has_version;
	int64		version;
	char	   *manifest_path;
	bool		has_size;
	int64		manifest_size;
	char	   *e_tag;
	Jsonb	   *metadata;
	char	   *naming_scheme;
	char	   *branch;
	bytea	   *manifest;		/* the staged bytes to keep until the
								 * canonical file is durable, or NULL */
} LanceVersionRequest;

extern void lance_validate_version_request(const char *op, LanceVersionRequest *req);
extern char *lance_canonical_manifest_path(const char *location, const char *scheme,
										   int64 version);
extern void lance_create_version_spi(const char *op, LanceVersionRequest *req);
extern bytea *lance_json_manifest_bytes(Jsonb *obj, const char *op, int64 *held);
extern HeapTuple lance_create_version_core(const char *op, LanceVersionRequest *req,
										   TupleDesc tupdesc, MemoryContext outcxt);

/* rest_acl.c: EXECUTE on the operation a REST binding calls */
typedef struct LanceFunctionRef
{
	const char *name;			/* in schema lance_namespace */
	int			nargs;
	Oid			argtypes[8];
	Oid			oid;			/* looked up, valid for generation */
	uint64		generation;
} LanceFunctionRef;

extern Oid	lance_function_oid(LanceFunctionRef *ref);
extern void lance_check_execute(Oid fn);

/* Called by lance_batch_create_spi after each version it creates */
typedef void (*LanceBatchEmit) (int position, void *arg);
extern int	lance_batch_count(const char *op, Jsonb *entries);
extern int	lance_batch_create_spi(const char *op, Jsonb *entries, LanceBatchEmit emit,
								   void *arg);
extern void lance_describe_version_spi(const char *op, ArrayType *id, bool has_version,
									   int64 version, const char *branch_name);
extern int	lance_list_versions_spi(const char *op, ArrayType *id, const char *branch_name,
									const char *token, int limit, bool descending,
									MemoryContext cxt, char **next_token);

#endif							/* LANCE_NAMESPACE_H */
