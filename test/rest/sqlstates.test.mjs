// sqlstates.test.mjs: every SQLSTATE the gateway can receive from a real
// database condition reaches the client as the Lance code and HTTP status of
// the one shared rule (src/error_rules.c), never as a 500: a statement
// timeout and a read-only database are 503 / code 17 (retryable); a lock
// not available, a serialization failure, a deadlock and a unique violation
// (a rename race) are 409 / code 14; and a gateway whose database role may
// not log in, or may open no more connections, answers 503 / code 17.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import {
  GW_DB, ROOT, req, ok, assertError, fresh, mkNamespace, mkTable, createVersion, psql, psqlBackground,
  startGateway, stop, sleep, holdLock, writeStaging, versionsDir, v2Name,
} from "./lib.mjs";
import fs from "node:fs";
import path from "node:path";

const gateways = [];
after(async () => {
  for (const g of gateways) await stop(g.proc);
});

/** A gateway whose database sessions run with the given -c settings. */
async function gatewayWith(settings, extra = [], db = GW_DB) {
  const options = settings.map((s) => `-c ${s}`).join(" ");
  const g = await startGateway([
    "--listen", "127.0.0.1:0", "--db", `${db} options='${options}'`, "--root", ROOT, "--quiet",
    "--retries", "0", "--startup-timeout", "5", ...extra,
  ]);
  assert.ok(g.url, `gateway did not start: ${g.log()}`);
  gateways.push(g);
  return g;
}

const done = (p) => new Promise((r) => (p.exitCode !== null ? r() : p.on("exit", r)));

/** Start psql running sql in the background; resolves once it set application_name to its tag. */
async function session(sqlWithTag) {
  const tag = fresh("s");
  const p = psqlBackground(sqlWithTag(`SELECT pg_catalog.set_config('application_name', '${tag}', true);`));
  for (let i = 0; i < 200 && psql(`SELECT count(*) FROM pg_stat_activity WHERE application_name = '${tag}'`) !== "1"; i++)
    await sleep(25);
  assert.equal(psql(`SELECT count(*) FROM pg_stat_activity WHERE application_name = '${tag}'`), "1", "the session started");
  return p;
}

/** A path id as a SQL array literal. */
const pathOf = (ns, name) => `ARRAY['${ns}', '${name}']`;

/** SQL that waits (at most 5 s) until a backend running a statement like pattern waits for a lock. */
const untilWaiting = (pattern) =>
  `DO $$BEGIN FOR i IN 1..500 LOOP PERFORM pg_catalog.pg_stat_clear_snapshot(); ` +
  `EXIT WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity s USING (pid) ` +
  `WHERE NOT l.granted AND s.query LIKE '${pattern}'); PERFORM pg_catalog.pg_sleep(0.01); END LOOP; END$$;`;

describe("SQLSTATE to Lance code and HTTP status, from real conditions", () => {
  it("57014 (statement timeout) is 503 with code 17, for a write and for a read", async () => {
    const ns = await mkNamespace();
    const g = await gatewayWith(["statement_timeout=200"], ["--loop-lock-wait-ms", "0"]);
    const holder = await holdLock("entries", 3000);
    try {
      const w = await req("POST", `/v1/namespace/${fresh("st")}/create`, { body: {}, base: g.url });
      assertError(w, 503, 17);
      assert.ok(w.headers["retry-after"], "a 503 says when to retry");
      assertError(await req("POST", `/v1/namespace/${ns}/describe`, { body: {}, base: g.url }), 503, 17);
    } finally {
      await done(holder);
    }
    ok(await req("POST", `/v1/namespace/${ns}/describe`, { body: {}, base: g.url }));
  });

  it("25006 (read-only transaction) is 503 with code 17; reads still work", async () => {
    const ns = await mkNamespace();
    const g = await gatewayWith(["default_transaction_read_only=on"]);
    assertError(await req("POST", `/v1/namespace/${fresh("ro")}/create`, { body: {}, base: g.url }), 503, 17);
    ok(await req("POST", `/v1/namespace/${ns}/describe`, { body: {}, base: g.url }));
  });

  it("55P03 (lock not available) is 409 with code 14", async () => {
    const g = await gatewayWith(["lock_timeout=200"]);
    const holder = await holdLock("entries", 3000);
    try {
      assertError(await req("POST", `/v1/namespace/${fresh("lt")}/create`, { body: {}, base: g.url }), 409, 14);
    } finally {
      await done(holder);
    }
  });

  it("40001 (serialization failure, retries exhausted) is 409 with code 14", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    ok((await createVersion(t, 1)).res);
    ok((await createVersion(t, 2)).res);
    ok(await req("POST", `/v1/table/${t.enc}/tags/create?delimiter=%24`, { body: { tag: "x", version: 1 } }));
    const g = await gatewayWith(["default_transaction_isolation=serializable"]);
    // a concurrent transaction changes the tag row and commits while the
    // gateway's serializable update waits for its row lock
    const tag = fresh("ser");
    const holder = psqlBackground(
      `BEGIN; SELECT pg_catalog.set_config('application_name', '${tag}', true); ` +
        `UPDATE lance_namespace.tags SET version = 2 WHERE name = 'x' AND table_id = ` +
        `(SELECT id FROM lance_namespace.entries WHERE path = ARRAY['${ns}', '${t.name}']); ` +
        `SELECT pg_sleep(1); COMMIT;`,
    );
    for (let i = 0; i < 200 && psql(`SELECT count(*) FROM pg_stat_activity WHERE application_name = '${tag}'`) !== "1"; i++)
      await sleep(25);
    await sleep(100);
    try {
      const r = await req("POST", `/v1/table/${t.enc}/tags/update?delimiter=%24`, { body: { tag: "x", version: 1 }, base: g.url });
      assertError(r, 409, 14);
    } finally {
      await done(holder);
    }
  });

  it("23505 (unique violation: a rename race) is 409 with code 14, and the loser keeps its name", async () => {
    const ns = await mkNamespace();
    const a = await mkTable(ns);
    const b = await mkTable(ns);
    const g = await gatewayWith([]);
    // a renames to "c" and holds its transaction open: b's rename to "c"
    // passes the name check, then waits on the unique index until a commits
    const holder = await session((tag) =>
      `BEGIN; SELECT lance_namespace.lance_rename_table(${pathOf(ns, a.name)}, 'c'); ${tag} ` +
        `${untilWaiting("%rest_rename_table%")} COMMIT;`);
    try {
      const r = await req("POST", `/v1/table/${b.enc}/rename?delimiter=%24`, { body: { new_table_name: "c" }, base: g.url });
      assertError(r, 409, 14);
      assert.match(r.text, /23505|duplicate key|unique/);
    } finally {
      await done(holder);
    }
    ok(await req("POST", `/v1/table/${b.enc}/describe?delimiter=%24`, { body: {} }));
    ok(await req("POST", `/v1/table/${encodeURIComponent(`${ns}$c`)}/describe?delimiter=%24`, { body: {} }));
  });

  it("40P01 (deadlock detected) is 409 with code 14, with nothing of the batch written", async () => {
    const ns = await mkNamespace();
    const a = await mkTable(ns);
    const b = await mkTable(ns);
    const g = await gatewayWith(["deadlock_timeout=300"]);
    const sa = writeStaging(a.location, 1);
    const sb = writeStaging(b.location, 1);
    // the session locks b's entry, waits until another backend waits for a
    // lock (the batch, which holds a's entry and wants b's), then asks for
    // a's: a cycle, found by the gateway's backend (the session's own
    // deadlock_timeout is longer)
    const holder = await session((tag) =>
      `BEGIN; SET LOCAL deadlock_timeout = '10s'; ` +
        `SELECT 1 FROM lance_namespace.entries WHERE path = ${pathOf(ns, b.name)} FOR UPDATE; ${tag} ` +
        `${untilWaiting("%batch_create%")} SELECT 1 FROM lance_namespace.entries WHERE path = ${pathOf(ns, a.name)} FOR UPDATE; COMMIT;`);
    try {
      const r = await req("POST", "/v1/table/version/batch-create", {
        base: g.url,
        body: { entries: [
          { id: [ns, a.name], version: 1, manifest_path: sa.rel, naming_scheme: "V2" },
          { id: [ns, b.name], version: 1, manifest_path: sb.rel, naming_scheme: "V2" },
        ] },
      });
      assertError(r, 409, 14);
      assert.match(r.text, /40P01|deadlock/);
    } finally {
      await done(holder);
    }
    // nothing half-written: no version, no canonical file, the staged files
    // kept for the client's retry
    for (const [t, st] of [[a, sa], [b, sb]]) {
      assertError(await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: 1 } }), 404, 11);
      assert.ok(!fs.existsSync(path.join(versionsDir(t.location), v2Name(1))), "no canonical manifest");
      assert.ok(fs.existsSync(st.abs), "the staged manifest is still there");
    }
    ok(await req("POST", "/v1/table/version/batch-create", {
      base: g.url,
      body: { entries: [
        { id: [ns, a.name], version: 1, manifest_path: sa.rel, naming_scheme: "V2" },
        { id: [ns, b.name], version: 1, manifest_path: sb.rel, naming_scheme: "V2" },
      ] },
    }));
  });

  for (const [state, attrs, refusal] of [
    ["28000", "NOLOGIN", /not permitted to log in|28000/],
    ["53300", "LOGIN CONNECTION LIMIT 0", /too many connections|53300/],
  ]) {
    it(`a role that may not connect (${state}: ${attrs}) leaves the gateway answering 503 with code 17, not 500`, async () => {
      const role = fresh("nologin");
      psql(`CREATE ROLE ${role} ${attrs}`);
      const g = await startGateway([
        "--listen", "127.0.0.1:0", "--db", `${GW_DB} user=${role}`, "--root", ROOT, "--quiet", "--startup-timeout", "0",
      ]);
      if (g.url) gateways.push(g);
      if (!g.url) {
        // a gateway may also refuse to start without its database: that is a
        // clear failure at start, not a 500 later
        assert.match(g.log(), refusal);
        return;
      }
      assertError(await req("POST", `/v1/namespace/${fresh("na")}/create`, { body: {}, base: g.url }), 503, 17);
    });
  }
});
