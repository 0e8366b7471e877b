// tenants.test.mjs: the documented setup is the tested setup (issue 39,
// items 11 and 12).  A gateway that connects as README's low-privilege
// authenticator (startAuthGateway in lib.mjs runs README's own statements)
// starts, serves every route to a tenant with an API key, and streams each
// tenant the change feed of its own subtree only; a feed poll that the
// database refuses is retried with bounded backoff, never as a reconnect
// storm.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import {
  req, ok, assertError, fresh, psql, writeStaging, startAuthGateway, startTenantPair, startGateway, stop,
  sleep, readmeAuthSql, GW_DB, ROOT, PG_BINDIR, TMP,
} from "./lib.mjs";
import { subscribe, eventsOf } from "./sse.mjs";

/** A counter or gauge of the gateway's /metrics (0 if absent). */
async function metric(base, name) {
  const text = (await req("GET", "/metrics", { base })).text;
  const m = new RegExp(`^${name} (\\d+)$`, "m").exec(text);
  return m ? Number(m[1]) : 0;
}

/** Declare table name in the tenant's namespace through its own key. */
async function declare(t, name = fresh("t")) {
  const id = `${t.ns}$${name}`;
  const body = ok(await t.req("POST", `/v1/table/${encodeURIComponent(id)}/declare?delimiter=%24`, { body: {} }));
  return { id, enc: encodeURIComponent(id), name, location: body.location };
}

/** Create version v of table tb through the tenant's key. */
async function commit(t, tb, v) {
  const st = writeStaging(tb.location, v);
  return ok(await t.req("POST", `/v1/table/${tb.enc}/version/create?delimiter=%24`,
    { body: { version: v, manifest_path: st.rel, naming_scheme: "V2" } }));
}

describe("README's authenticator", () => {
  it("is all the gateway needs: README's grants, nothing more", () => {
    const { authenticator, tenant } = readmeAuthSql();
    // least privilege: no table of the catalog is granted to the authenticator
    assert.doesNotMatch(authenticator, /GRANT\s+(SELECT|INSERT|UPDATE|DELETE|ALL)/i);
    assert.match(authenticator, /NOINHERIT/);
    assert.match(tenant, /GRANT tenant_a TO lance_gateway/);
  });

  it("starts the gateway and serves every route to a tenant with an API key", async () => {
    const { gw, A, B } = await startTenantPair();
    try {
      assert.ok(gw.url, gw.log());
      // the authenticator itself reads no catalog table
      assert.equal(psql(`SELECT has_table_privilege('${gw.role}', 'lance_namespace.settings', 'SELECT')`), "f");
      assert.equal(psql(`SELECT has_table_privilege('${gw.role}', 'lance_namespace.history_log', 'SELECT')`), "f");
      const served = new Set();
      const call = async (method, route, target, body) => {
        served.add(route);
        const r = await A.req(method, target, body === undefined ? {} : { body });
        assert.equal(r.status, 200, `${method} ${target}: ${r.status} ${r.text}`);
        return r.json;
      };
      const ns = A.ns;
      const N = "/v1/namespace/{id}";
      const T = "/v1/table/{id}";
      const child = `${ns}$${fresh("c")}`;
      await call("POST", `${N}/create`, `/v1/namespace/${encodeURIComponent(child)}/create`, {});
      await call("GET", `${N}/list`, `/v1/namespace/${ns}/list`);
      await call("POST", `${N}/describe`, `/v1/namespace/${ns}/describe`, {});
      await call("POST", `${N}/exists`, `/v1/namespace/${ns}/exists`, {});
      await call("POST", `${N}/drop`, `/v1/namespace/${encodeURIComponent(child)}/drop`, {});
      const t = await declare(A);
      served.add(`${T}/declare`);
      await call("GET", `${N}/table/list`, `/v1/namespace/${ns}/table/list`);
      await call("GET", "/v1/table", "/v1/table");
      await call("POST", `${T}/describe`, `/v1/table/${t.enc}/describe`, {});
      await call("POST", `${T}/exists`, `/v1/table/${t.enc}/exists`, {});
      const s1 = writeStaging(t.location, 1, "one");
      const created = await call("POST", `${T}/version/create`, `/v1/table/${t.enc}/version/create`,
        { version: 1, manifest_path: s1.rel, naming_scheme: "V2" });
      const s2 = writeStaging(t.location, 2, "two");
      await call("POST", "/v1/table/version/batch-create", "/v1/table/version/batch-create",
        { entries: [{ id: [ns, t.name], version: 2, manifest_path: s2.rel, naming_scheme: "V2" }] });
      await call("POST", `${T}/version/describe`, `/v1/table/${t.enc}/version/describe`, { version: 1 });
      await call("GET", `${T}/version/list`, `/v1/table/${t.enc}/version/list`);
      await call("POST", `${T}/tags/create`, `/v1/table/${t.enc}/tags/create`, { tag: "a", version: 1 });
      await call("POST", `${T}/tags/version`, `/v1/table/${t.enc}/tags/version`, { tag: "a" });
      await call("GET", `${T}/tags/list`, `/v1/table/${t.enc}/tags/list`);
      await call("POST", `${T}/tags/update`, `/v1/table/${t.enc}/tags/update`, { tag: "a", version: 2 });
      await call("POST", `${T}/tags/delete`, `/v1/table/${t.enc}/tags/delete`, { tag: "a" });
      await call("POST", `${T}/branches/create`, `/v1/table/${t.enc}/branches/create`, { name: "b1", from_version: 1 });
      await call("GET", `${T}/branches/list`, `/v1/table/${t.enc}/branches/list`);
      await call("POST", `${T}/branches/delete`, `/v1/table/${t.enc}/branches/delete`, { name: "b1" });
      await call("POST", `${T}/version/delete`, `/v1/table/${t.enc}/version/delete`,
        { ranges: [{ start_version: 1, end_version: 1 }] });
      const txid = created.transaction_id;
      assert.ok(txid, JSON.stringify(created));
      await call("POST", "/v1/transaction/{id}/describe", `/v1/transaction/${txid}/describe`, {});
      await call("POST", "/v1/transaction/{id}/alter", `/v1/transaction/${txid}/alter`,
        { actions: [{ setPropertyAction: { key: "k", value: "v" } }] });
      const s3 = writeStaging(t.location, 3, "three");
      await call("POST", "/v1/table/batch-commit", "/v1/table/batch-commit",
        { operations: [{ create_table_version: { id: [ns, t.name], version: 3, manifest_path: s3.rel, naming_scheme: "V2" } }] });
      const newName = fresh("r");
      await call("POST", `${T}/rename`, `/v1/table/${t.enc}/rename`, { new_table_name: newName });
      const renamed = encodeURIComponent(`${ns}$${newName}`);
      await call("POST", `${T}/deregister`, `/v1/table/${renamed}/deregister`, {});
      const loc = path.join(fs.realpathSync(ROOT), ns, `${fresh("reg")}.lance`);
      await call("POST", `${T}/register`, `/v1/table/${encodeURIComponent(`${ns}$${fresh("reg")}`)}/register`, { location: loc });
      const x = await declare(A);
      await call("POST", `${T}/drop`, `/v1/table/${x.enc}/drop`, {});
      // every route of the catalog's route table was served
      const routes = psql("SELECT string_agg(path, ' ' ORDER BY path) FROM lance_namespace.rest_routes").split(" ");
      assert.deepEqual(routes.filter((r) => !served.has(r)), [], "routes not exercised");
      // the gateway's own routes
      ok(await req("GET", "/ready", { base: gw.url }));
      ok(await req("GET", "/health", { base: gw.url }));
      assert.equal((await req("GET", "/metrics", { base: gw.url })).status, 200);
      const sub = await subscribe("", { base: gw.url, headers: A.headers });
      assert.equal(sub.status, 200, sub.text);
      sub.close();
      // and B, with write on its own namespace only, sees nothing of A's
      assertError(await B.req("POST", `/v1/namespace/${ns}/describe`, { body: {} }), 404, 1);
      assertError(await req("POST", `/v1/namespace/${ns}/describe`, { base: gw.url }), 401, 16);
    } finally {
      await gw.stop();
    }
  });

  it("says what to run when the catalog has no root location yet", async () => {
    // a database of its own, without a root: the authenticator may not set one
    const db = fresh("noroot");
    psql(`CREATE DATABASE ${db}`);
    const conn = GW_DB.replace(/dbname=\S+/, `dbname=${db}`);
    const role = fresh("gw_auth");
    const psqlDb = (sql) => {
      const r = spawnSync(path.join(PG_BINDIR, "psql"), ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", sql],
        { encoding: "utf8" });
      assert.equal(r.status, 0, r.stderr);
    };
    psqlDb("CREATE EXTENSION lance_namespace");
    psqlDb(`CREATE ROLE ${role} LOGIN NOINHERIT; GRANT USAGE ON SCHEMA lance_namespace TO ${role};` +
      ` GRANT EXECUTE ON FUNCTION lance_namespace.lance_authenticate(text, text) TO ${role}`);
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", `${conn} user=${role}`, "--root", ROOT, "--db-auth"],
      { expectExit: true });
    assert.notEqual(g.exitCode, 0);
    assert.match(g.log(), /hint: the catalog has no root location yet.*lance_set_root_location\('/);
  });
});

describe("the change feed under README's authenticator", () => {
  it("streams each tenant its own subtree's events only, and a REVOKE holds by the next poll", async () => {
    const { gw, A, B } = await startTenantPair();
    // C: a role with an API key and no grant at all (its polls are refused)
    const C = fresh("tenant_c");
    psql(`CREATE ROLE ${C} NOLOGIN; GRANT ${C} TO ${gw.role}`);
    const keyC = psql(`SELECT lance_namespace.lance_create_api_key('${C}')`);
    const subs = [];
    try {
      const a = await subscribe("", { base: gw.url, headers: A.headers });
      const b = await subscribe("", { base: gw.url, headers: B.headers });
      // a filter naming the other tenant's namespace does not widen what A sees
      const a2 = await subscribe(`?namespace=${B.ns}`, { base: gw.url, headers: A.headers });
      const c = await subscribe("", { base: gw.url, headers: { "x-api-key": keyC } });
      for (const s of [a, b, a2, c]) assert.equal(s.status, 200, s.text);
      subs.push(a, b, a2, c);
      const tA = await declare(A);
      const tB = await declare(B);
      for (let v = 1; v <= 3; v++) {
        await commit(A, tA, v);
        await commit(B, tB, v);
      }
      await a.until((s) => eventsOf(s, tA.id).length >= 3, 15000, "A's events");
      await b.until((s) => eventsOf(s, tB.id).length >= 3, 15000, "B's events");
      // a commit after everything else: once it arrived, nothing else is pending
      const tA2 = await declare(A);
      await commit(A, tA2, 1);
      await a.until((s) => eventsOf(s, tA2.id).length >= 1, 15000, "A's last event");
      await sleep(300);
      assert.deepEqual(eventsOf(a, tA.id).map((e) => e.data.version), [1, 2, 3]);
      assert.deepEqual(eventsOf(b, tB.id).map((e) => e.data.version), [1, 2, 3]);
      for (const e of a.events) assert.equal(e.data.id[0], A.ns, `A received ${e.data.table}`);
      for (const e of b.events) assert.equal(e.data.id[0], B.ns, `B received ${e.data.table}`);
      assert.equal(a2.events.length, 0, JSON.stringify(a2.events));
      assert.equal(c.events.length, 0, JSON.stringify(c.events));
      assert.ok((await metric(gw.url, "lance_gateway_sse_events_withheld_total")) >= 6);
      // no reconnect storm: C's refused polls are C's alone
      for (const s of [a, b, c]) assert.ok(!s.other.some((f) => f.event === "reconnected"), JSON.stringify(s.other));
      assert.equal(await metric(gw.url, "lance_gateway_feed_reconnects_total"), 0);
      assert.equal((gw.log().match(new RegExp(`role "${C}" may not read`, "g")) ?? []).length, 1, gw.log());

      // REVOKE: A's next commit (made by the owner) is no longer A's to see
      A.revoke(A.ns, "write");
      const st = writeStaging(tA.location, 4);
      ok(await req("POST", `/v1/table/${tA.enc}/version/create?delimiter=%24`,
        { body: { version: 4, manifest_path: st.rel, naming_scheme: "V2" } }));
      await commit(B, tB, 4);
      await b.until((s) => eventsOf(s, tB.id).length >= 4, 15000, "B's marker");
      await sleep(300);
      assert.deepEqual(eventsOf(a, tA.id).map((e) => e.data.version), [1, 2, 3], "A still sees its revoked subtree");
      // C's refused polls back off (100 ms doubling to 5 s), not one per poll:
      // the server logs each refusal
      const pglog = path.join(TMP, "postgres.log");
      const refusals = () => (fs.readFileSync(pglog, "utf8").match(/permission denied for schema lance_namespace/g) ?? []).length;
      const r0 = refusals();
      await sleep(2000);
      assert.ok(refusals() - r0 <= 3, `${refusals() - r0} refused polls of C in 2 s`);
      // C, granted now, gets the commits it may read from then on (its refused
      // polls are tried again with backoff, from where they were refused)
      psql(`SELECT lance_namespace.lance_grant('${C}', ARRAY['${B.ns}'], 'read')`);
      await commit(B, tB, 5);
      await c.until((s) => eventsOf(s, tB.id).some((e) => e.data.version === 5), 15000, "C's event after its grant");
      for (const e of c.events) assert.equal(e.data.id[0], B.ns, `C received ${e.data.table}`);
      assert.match(gw.log(), new RegExp(`role "${C}" may read the commit history again`));
      // and a resuming subscriber of A catches up on nothing it may no longer read
      const since = a.lastEventId;
      assert.ok(since);
      const again = await subscribe(`?since=${encodeURIComponent(a.ids[0])}`, { base: gw.url, headers: A.headers });
      subs.push(again);
      await sleep(300);
      assert.ok(!eventsOf(again, tA.id).some((e) => e.data.version === 4), JSON.stringify(again.events));
    } finally {
      for (const s of subs) s.close();
      await gw.stop();
    }
  });
});

describe("the change feed when the database refuses its polls", () => {
  it("says so once and retries with bounded backoff: no reconnect storm", async () => {
    // a gateway role that may start the gateway but not read the history
    const role = fresh("gw_nohist");
    psql(`CREATE ROLE ${role} LOGIN NOINHERIT; GRANT USAGE ON SCHEMA lance_namespace TO ${role};` +
      ` GRANT SELECT ON lance_namespace.settings TO ${role}`);
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", `${GW_DB} user=${role}`, "--root", ROOT]);
    assert.ok(g.url, g.log());
    try {
      const sub = await subscribe("", { base: g.url });
      assert.equal(sub.status, 200, sub.text);
      const polls0 = await metric(g.url, "lance_gateway_feed_polls_total");
      const connects0 = await metric(g.url, "lance_gateway_db_connects_total");
      await sleep(2000);
      const polls = (await metric(g.url, "lance_gateway_feed_polls_total")) - polls0;
      const connects = (await metric(g.url, "lance_gateway_db_connects_total")) - connects0;
      const reconnected = sub.other.filter((f) => f.event === "reconnected").length;
      assert.equal(reconnected, 0, `${reconnected} reconnected frames in 2 s`);
      assert.equal(await metric(g.url, "lance_gateway_feed_reconnects_total"), 0);
      assert.ok(connects <= 1, `${connects} connections in 2 s`);
      // backoff: 100 ms doubling (0.1, 0.3, 0.7, 1.5 s, ...), not every 100 ms
      assert.ok(polls <= 8, `${polls} polls in 2 s`);
      assert.equal(sub.comments.filter((c) => /cannot read the commit history/.test(c)).length, 1,
        JSON.stringify(sub.comments));
      assert.equal((g.log().match(/refused the poll/g) ?? []).length, 1, g.log());
      // once the role may read, the same connection polls again and the stream goes on
      const nsName = fresh("fr");
      ok(await req("POST", `/v1/namespace/${nsName}/create`, { body: {} }));
      psql(`SELECT lance_namespace.lance_grant('${role}', ARRAY['${nsName}'], 'read')`);
      const tid = `${nsName}$t`;
      const t = ok(await req("POST", `/v1/table/${encodeURIComponent(tid)}/declare?delimiter=%24`, { body: {} }));
      const st = writeStaging(t.location, 1);
      ok(await req("POST", `/v1/table/${encodeURIComponent(tid)}/version/create?delimiter=%24`,
        { body: { version: 1, manifest_path: st.rel, naming_scheme: "V2" } }));
      await sub.until((s) => eventsOf(s, tid).length >= 1, 15000, "the event after the grant");
      assert.match(g.log(), /change feed: polling again/);
      assert.equal(await metric(g.url, "lance_gateway_feed_reconnects_total"), 0);
      sub.close();
    } finally {
      await stop(g.proc);
    }
  });
});
