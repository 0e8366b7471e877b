// sqlstates.test.mjs: every SQLSTATE the gateway can receive from a real
// database condition reaches the client as the Lance code and HTTP status of
// the one shared rule (src/error_rules.c), never as a 500: a statement
// timeout and a read-only database are 503 / code 17 (retryable), a lock
// not available and a serialization failure are 409 / code 14, and a
// gateway whose database role may not log in answers 503 / code 17.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import {
  GW_DB, ROOT, req, ok, assertError, fresh, mkNamespace, mkTable, createVersion, psql, psqlBackground,
  startGateway, stop, sleep, holdLock,
} from "./lib.mjs";

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

  it("a role that may not log in (28000) leaves the gateway answering 503 with code 17, not 500", async () => {
    const role = fresh("nologin");
    psql(`CREATE ROLE ${role} NOLOGIN`);
    const g = await startGateway([
      "--listen", "127.0.0.1:0", "--db", `${GW_DB} user=${role}`, "--root", ROOT, "--quiet", "--startup-timeout", "0",
    ]);
    if (g.url) gateways.push(g);
    if (!g.url) {
      // a gateway may also refuse to start without its database: that is a
      // clear failure at start, not a 500 later
      assert.match(g.log(), /not permitted to log in|28000/);
      return;
    }
    assertError(await req("POST", `/v1/namespace/${fresh("na")}/create`, { body: {}, base: g.url }), 503, 17);
  });
});
