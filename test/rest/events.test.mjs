// events.test.mjs: the change feed over HTTP (GET /v1/events, Server-Sent
// Events): commit order, no events for rolled-back work, nothing lost
// under concurrent writers, filters, tenant isolation with --db-auth,
// heartbeats, reconnection after a PostgreSQL restart, slow clients and
// shutdown.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import path from "node:path";
import { spawnSync } from "node:child_process";
import {
  GW_URL, GW_DB, ROOT, TMP, PG_BINDIR, req, ok, assertError, fresh, psql, mkNamespace, mkTable,
  createVersion, writeStaging, startGateway, startAuthGateway, stop, sleep,
} from "./lib.mjs";
import { subscribe, eventsOf } from "./sse.mjs";

const base = ["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", ROOT, "--quiet"];

/** The stream's event id once every commit of table t has been sent before it. */
async function settledId(sub, t) {
  const [ns, name] = t.id.split("$");
  let id;
  await sub.until((s) => {
    if (s.lastEventId === undefined) return false;
    id = s.lastEventId;
    return psql(`SELECT count(*) FROM lance_namespace.lance_changes('${id}') WHERE id = ARRAY['${ns}','${name}']`) === "0";
  }, 15000, "an event id after the last commit");
  return id;
}

async function metric(url, name) {
  const text = (await req("GET", "/metrics", { base: url })).text;
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : NaN;
}

describe("change feed (GET /v1/events)", () => {
  it("streams each committed version of one writer as an event, in the order committed", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const sub = await subscribe(`?namespace=${ns}`);
    try {
      assert.match(String(sub.headers["content-type"]), /^text\/event-stream/);
      assert.ok(sub.comments.some((c) => /subscribed/.test(c)), JSON.stringify(sub.comments));
      const txids = [];
      for (let v = 1; v <= 4; v++) {
        const { res } = await createVersion(t, v);
        txids.push(ok(res).transaction_id);
      }
      // two versions in one transaction (batch-create) follow in order
      const s5 = writeStaging(t.location, 5);
      const s6 = writeStaging(t.location, 6);
      const batch = ok(await req("POST", "/v1/table/version/batch-create", {
        body: { entries: [
          { id: [ns, t.name], version: 5, manifest_path: s5.rel, naming_scheme: "V2" },
          { id: [ns, t.name], version: 6, manifest_path: s6.rel, naming_scheme: "V2" },
        ] },
      }));
      await sub.until((s) => s.events.length >= 6, 15000, "6 events");
      await sleep(200);
      assert.equal(sub.events.length, 6);
      assert.deepEqual(sub.events.map((e) => e.data.version), [1, 2, 3, 4, 5, 6]);
      // the event id is a cursor: nothing of this table lies after the last one
      assert.match(await settledId(sub, t), /^\d+:\d+:(\d+(,\d+)*)?$/);
      assert.equal(psql(`SELECT count(*) FROM lance_namespace.lance_changes('${sub.ids[0]}') WHERE id = ARRAY['${ns}','${t.name}']`), "6");
      for (const e of sub.events) {
        assert.equal(e.event, "commit");
        assert.deepEqual(e.data.id, [ns, t.name]);
        assert.equal(e.data.table, `${ns}$${t.name}`);
        assert.equal(e.data.branch ?? "main", e.data.branch ?? "main");
        assert.equal(typeof e.data.manifest_path, "string");
        assert.equal(typeof e.data.timestamp_millis, "number");
      }
      assert.deepEqual(sub.events.slice(0, 4).map((e) => e.data.transaction_id), txids);
      assert.equal(sub.events[4].data.transaction_id, sub.events[5].data.transaction_id);
      if (batch.transaction_id) assert.equal(sub.events[4].data.transaction_id, batch.transaction_id);
    } finally {
      sub.close();
    }
  });

  it("sends nothing for a rolled-back transaction", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const sub = await subscribe(`?table=${encodeURIComponent(t.id)}`);
    try {
      const st = writeStaging(t.location, 1);
      psql(`BEGIN; SELECT lance_namespace.lance_create_table_version(ARRAY['${ns}','${t.name}'], 1, '${st.abs}'); ROLLBACK;`);
      // version 1 is still free: the rollback really happened
      const { res } = await createVersion(t, 1);
      const txid = ok(res).transaction_id;
      await sub.until((s) => s.events.length >= 1, 15000, "the committed version");
      await sleep(300);
      assert.equal(sub.events.length, 1, JSON.stringify(sub.events));
      assert.equal(sub.events[0].data.version, 1);
      assert.equal(sub.events[0].data.transaction_id, txid);
    } finally {
      sub.close();
    }
  });

  it("loses nothing while 8 writers commit 25 versions each", async () => {
    const ns = await mkNamespace();
    const tables = [];
    for (let w = 0; w < 8; w++) tables.push(await mkTable(ns));
    const subs = [];
    for (let i = 0; i < 4; i++) subs.push(await subscribe(`?namespace=${ns}`));
    try {
      await Promise.all(tables.map(async (t) => {
        for (let v = 1; v <= 25; v++) ok((await createVersion(t, v)).res);
      }));
      for (const s of subs) await s.until((x) => x.events.length >= 200, 30000, "200 events");
      await sleep(300);
      const seq0 = subs[0].events.map((e) => `${e.data.table} ${e.data.version}`);
      for (const s of subs) {
        assert.equal(s.events.length, 200);
        // every subscriber sees the same events in the same order
        assert.deepEqual(s.events.map((e) => `${e.data.table} ${e.data.version}`), seq0);
        for (const t of tables) {
          assert.deepEqual(eventsOf(s, t.id).map((e) => e.data.version), Array.from({ length: 25 }, (_, i) => i + 1));
        }
      }
    } finally {
      for (const s of subs) s.close();
    }
  });

  it("filters by namespace subtree and by table, with any delimiter", async () => {
    const a = await mkNamespace();
    const child = "kid";
    ok(await req("POST", `/v1/namespace/${a}$${child}/create`, { body: {} }));
    const c = await mkNamespace();
    const t1 = await mkTable(`${a}$${child}`);
    const t2 = await mkTable(a);
    const t3 = await mkTable(c);
    const all = await subscribe("");
    const nsA = await subscribe(`?namespace=${a}`);
    const nsChild = await subscribe(`?namespace=${encodeURIComponent(`${a}$${child}`)}`);
    const dotted = await subscribe(`?namespace=${a}.${child}&delimiter=.`);
    const tab = await subscribe(`?table=${encodeURIComponent(t2.id)}`);
    const rootNs = await subscribe(`?namespace=%24`);
    const subs = [all, nsA, nsChild, dotted, tab, rootNs];
    try {
      const mine = (s) => s.events.filter((e) => [t1.id, t2.id, t3.id].includes(e.data.table)).map((e) => `${e.data.table}@${e.data.version}`);
      let k = 0;
      for (const [t, v] of [[t1, 1], [t2, 1], [t3, 1], [t1, 2]]) {
        ok((await createVersion(t, v)).res);
        k++;
        await all.until((s) => mine(s).length >= k, 15000, `event ${k}`);
      }
      await sleep(300);
      const ev = (t, v) => `${t.id}@${v}`;
      assert.deepEqual(mine(all), [ev(t1, 1), ev(t2, 1), ev(t3, 1), ev(t1, 2)]);
      assert.deepEqual(mine(rootNs), mine(all));
      assert.deepEqual(nsA.events.map((e) => `${e.data.table}@${e.data.version}`), [ev(t1, 1), ev(t2, 1), ev(t1, 2)]);
      assert.deepEqual(nsChild.events.map((e) => `${e.data.table}@${e.data.version}`), [ev(t1, 1), ev(t1, 2)]);
      assert.deepEqual(dotted.events.map((e) => `${e.data.table}@${e.data.version}`), [ev(t1, 1), ev(t1, 2)]);
      assert.deepEqual(tab.events.map((e) => `${e.data.table}@${e.data.version}`), [ev(t2, 1)]);
    } finally {
      for (const s of subs) s.close();
    }
  });

  it("rejects a malformed filter with 400", async () => {
    const r1 = await subscribe("?table=%24");
    assertError(r1, 400, 13);
    const r2 = await subscribe("?namespace=a%ZZ");
    assertError(r2, 400, 13);
    assertError(await req("POST", "/v1/events"), 405, 0);
  });

  it("resumes from Last-Event-ID, or ?since=, with exactly the commits it missed", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const other = await mkTable(ns);
    const first = await subscribe(`?table=${encodeURIComponent(t.id)}`);
    let cursor;
    try {
      for (let v = 1; v <= 2; v++) ok((await createVersion(t, v)).res);
      cursor = await settledId(first, t);
      assert.deepEqual(first.events.map((e) => e.data.version), [1, 2]);
    } finally {
      first.close();
    }
    // committed while no one listens; the other table is filtered out
    for (let v = 3; v <= 5; v++) ok((await createVersion(t, v)).res);
    ok((await createVersion(other, 1)).res);
    const resumes = await metric(GW_URL, "lance_gateway_sse_resumes_total");
    const again = await subscribe(`?table=${encodeURIComponent(t.id)}`, { headers: { "last-event-id": cursor } });
    const viaQuery = await subscribe(`?table=${encodeURIComponent(t.id)}&since=${encodeURIComponent(cursor)}`);
    try {
      ok((await createVersion(t, 6)).res);
      for (const s of [again, viaQuery]) {
        await s.until((x) => x.events.length >= 4, 15000, "the missed commits and a new one");
      }
      await sleep(300);
      for (const s of [again, viaQuery]) {
        assert.deepEqual(s.events.map((e) => e.data.version), [3, 4, 5, 6]);
        assert.ok(s.comments.some((c) => /subscribed/.test(c)));
        assert.equal(s.other.length, 0, JSON.stringify(s.other));
      }
      assert.equal((await metric(GW_URL, "lance_gateway_sse_resumes_total")) - resumes, 2);
    } finally {
      again.close();
      viaQuery.close();
    }
  });

  it("refuses a malformed cursor with 400, and resets on one the database does not know", async () => {
    for (const bad of ["abc", "1:2", "1:2:3:", "1::", ":1:", "1:2:,", "1:2:3,,4", "1".repeat(21) + ":1:"]) {
      assertError(await subscribe("", { headers: { "last-event-id": bad } }), 400, 13);
      assertError(await subscribe(`?since=${encodeURIComponent(bad)}`), 400, 13);
    }
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    // from the future (a restored database), and refused by pg_snapshot (xmin > xmax)
    let version = 0;
    for (const cursor of ["999999999999:999999999999:", "5:3:"]) {
      const s = await subscribe(`?namespace=${ns}`, { headers: { "last-event-id": cursor } });
      try {
        await s.until((x) => x.other.some((f) => f.event === "reset"), 10000, `a reset for ${cursor}`);
        assert.match(JSON.parse(s.other.find((f) => f.event === "reset").data.join("\n")).message, /missed/);
        ok((await createVersion(t, ++version)).res);   // and the stream goes on
        await s.until((x) => x.events.length >= 1, 15000, "the next commit");
      } finally {
        s.close();
      }
    }
  });

  it("tells a client that is too far behind to re-read, and goes on from there", async () => {
    const g = await startGateway([...base, "--pool", "2"], { env: { LANCE_GATEWAY_SSE_QUEUE: "8" } });
    try {
      const ns = await mkNamespace();
      const t = await mkTable(ns);
      const cursor = psql("SELECT lance_namespace.lance_changes_cursor()");
      for (let v = 1; v <= 7; v++) ok((await createVersion(t, v, { base: g.url })).res);
      const s = await subscribe(`?namespace=${ns}`, { base: g.url, headers: { "last-event-id": cursor } });
      try {
        await s.until((x) => x.other.some((f) => f.event === "reset"), 10000, "the reset");
        assert.match(JSON.parse(s.other[0].data.join("\n")).message, /more than 6 commits/);
        assert.equal(s.events.length, 0);
        ok((await createVersion(t, 8, { base: g.url })).res);
        await s.until((x) => x.events.length >= 1, 15000, "the next commit");
        assert.deepEqual(s.events.map((e) => e.data.version), [8]);
      } finally {
        s.close();
      }
      // six fit: they are sent
      const c6 = psql("SELECT lance_namespace.lance_changes_cursor()");
      for (let v = 9; v <= 14; v++) ok((await createVersion(t, v, { base: g.url })).res);
      const s6 = await subscribe(`?namespace=${ns}`, { base: g.url, headers: { "last-event-id": c6 } });
      try {
        await s6.until((x) => x.events.length >= 6, 10000, "six commits");
        assert.deepEqual(s6.events.map((e) => e.data.version), [9, 10, 11, 12, 13, 14]);
        assert.equal(s6.other.length, 0);
      } finally {
        s6.close();
      }
    } finally {
      await stop(g.proc);
    }
  });

  it("needs the API key when one is configured, and sends heartbeats", async () => {
    const g = await startGateway(base, { env: { LANCE_GATEWAY_API_KEY: "k3y", LANCE_GATEWAY_SSE_HEARTBEAT_MS: "200" } });
    try {
      assertError(await subscribe("", { base: g.url }), 401, 16);
      const t0 = Date.now();
      const sub = await subscribe("", { base: g.url, headers: { "x-api-key": "k3y" } });
      const beats = () => sub.comments.filter((c) => c === "heartbeat").length;
      await sub.until(() => beats() >= 2, 5000, "heartbeats");
      await sleep(600);
      // one per 200 ms of silence, not a read buffer full of them each time
      assert.ok(beats() <= (Date.now() - t0) / 200 + 1, `${beats()} heartbeats in ${Date.now() - t0} ms`);
      sub.close();
    } finally {
      assert.equal(await stop(g.proc), 0);
    }
  });

  it("with --db-auth, delivers only events of tables the subscriber may read", async () => {
    const nsA = await mkNamespace();
    const nsB = await mkNamespace();
    const tA = await mkTable(nsA);
    const tB = await mkTable(nsB);
    // README's authenticator; A may read nsA, B may write nsB (README's statements)
    const g = await startAuthGateway();
    const { key: keyA } = await g.tenant({ ns: nsA, privilege: "read", create: false, prefix: "gw_feed_a" });
    const { key: keyB } = await g.tenant({ ns: nsB, privilege: "write", create: false, prefix: "gw_feed_b" });
    const subs = [];
    try {
      assertError(await subscribe("", { base: g.url }), 401, 16);
      assertError(await subscribe("", { base: g.url, headers: { "x-api-key": "lnk_wrong" } }), 401, 16);
      const a = await subscribe("", { base: g.url, headers: { "x-api-key": keyA } });
      const b = await subscribe("", { base: g.url, headers: { "x-api-key": keyB } });
      // a filter naming the other tenant's namespace does not help
      const a2 = await subscribe(`?namespace=${nsB}`, { base: g.url, headers: { "x-api-key": keyA } });
      for (const s of [a, b, a2]) assert.equal(s.status, 200, s.text);
      subs.push(a, b, a2);
      for (let v = 1; v <= 3; v++) {
        ok((await createVersion(tA, v)).res);
        ok((await createVersion(tB, v)).res);
      }
      await a.until((s) => eventsOf(s, tA.id).length >= 3, 15000, "A's events");
      await b.until((s) => eventsOf(s, tB.id).length >= 3, 15000, "B's events");
      // a commit after everything else: once it arrived, nothing else is pending
      const tA2 = await mkTable(nsA);
      ok((await createVersion(tA2, 1)).res);
      await a.until((s) => eventsOf(s, tA2.id).length >= 1, 15000, "A's last event");
      await sleep(300);
      assert.deepEqual(eventsOf(a, tA.id).map((e) => e.data.version), [1, 2, 3]);
      assert.deepEqual(eventsOf(b, tB.id).map((e) => e.data.version), [1, 2, 3]);
      for (const e of a.events) assert.ok(e.data.id[0] === nsA, `A received ${e.data.table}`);
      for (const e of b.events) assert.ok(e.data.id[0] === nsB, `B received ${e.data.table}`);
      assert.equal(a2.events.length, 0, JSON.stringify(a2.events));
      assert.ok((await metric(g.url, "lance_gateway_sse_events_withheld_total")) >= 6);
    } finally {
      for (const s of subs) s.close();
      await stop(g.proc);
    }
  });

  it("tells subscribers about a PostgreSQL restart and loses no commit across it", async () => {
    const g = await startGateway([...base, "--pool", "2"], { env: { LANCE_GATEWAY_SSE_HEARTBEAT_MS: "300" } });
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const sub = await subscribe(`?namespace=${ns}`, { base: g.url });
    try {
      ok((await createVersion(t, 1)).res);
      await sub.until((s) => s.events.length >= 1, 15000, "first event");
      const pgctl = path.join(PG_BINDIR, "pg_ctl");
      assert.equal(spawnSync(pgctl, ["-D", process.env.PGDATA, "-m", "fast", "-w", "stop"]).status, 0);
      await sub.until((s) => s.comments.some((c) => /lost its database connection/.test(c)), 10000, "the lost comment");
      const opts = `-p ${process.env.PGPORT} -k ${process.env.PGHOST} -c listen_addresses= -c fsync=off -c max_connections=100`;
      assert.equal(spawnSync(pgctl, ["-D", process.env.PGDATA, "-w", "-l", path.join(TMP, "postgres.log"), "-o", opts, "start"]).status, 0);
      // committed at once, while the feed is still reconnecting (backoff):
      // the poller's cursor outlived its connection, so this one follows
      const st = writeStaging(t.location, 2);
      psql(`SELECT lance_namespace.lance_create_table_version(ARRAY['${ns}','${t.name}'], 2, '${st.abs}')`);
      await sub.until((s) => s.other.some((f) => f.event === "reconnected"), 15000, "the reconnected event");
      let res;
      for (let i = 0; i < 20; i++) {
        res = (await createVersion(t, 3, { base: g.url })).res;
        if (res.status !== 503) break;
        await sleep(250);
      }
      ok(res);
      await sub.until((s) => s.events.length >= 3, 15000, "the events after the restart");
      assert.deepEqual(sub.events.map((e) => e.data.version), [1, 2, 3]);
      assert.ok((await metric(g.url, "lance_gateway_feed_reconnects_total")) >= 1);
      assert.equal(await metric(g.url, "lance_gateway_feed_connected"), 1);
      assert.ok(!sub.ended);
    } finally {
      sub.close();
      await stop(g.proc);
    }
  });

  it("disconnects a client that does not keep up instead of buffering without bound", async () => {
    // the queue absorbs a burst of one batch (250 events) for a client that
    // reads; a client that stops reading fills its socket, then the queue
    const g = await startGateway([...base, "--pool", "2"], { env: { LANCE_GATEWAY_SSE_QUEUE: "400", LANCE_GATEWAY_SSE_HEARTBEAT_MS: "60000" } });
    const ns = await mkNamespace(fresh("slow_consumer_namespace_with_a_long_name_").padEnd(100, "n"));
    const t = await mkTable(ns, fresh("table_with_a_long_name_").padEnd(100, "t"));
    const u = new URL(g.url);
    const sock = net.connect({ host: u.hostname, port: Number(u.port) });
    let got = "";
    let closed = false;
    sock.on("data", (c) => { got += c.toString("latin1"); });
    sock.on("close", () => { closed = true; });
    sock.on("error", () => {});
    sock.write(`GET /v1/events?namespace=${ns} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`);
    const healthy = await subscribe(`?namespace=${ns}`, { base: g.url });
    try {
      for (let i = 0; i < 50 && !/subscribed/.test(got); i++) await sleep(20);
      sock.pause(); // stop reading: the kernel buffers fill, then the gateway's queue
      let version = 0;
      for (let round = 0; round < 40; round++) {
        const entries = [];
        for (let i = 0; i < 250; i++) {
          version++;
          const st = writeStaging(t.location, version, `m${version}`.padEnd(64, "x"));
          entries.push({ id: [ns, t.name], version, manifest_path: st.rel, naming_scheme: "V2" });
        }
        ok(await req("POST", "/v1/table/version/batch-create", { base: g.url, body: { entries } }));
        if ((await metric(g.url, "lance_gateway_sse_slow_disconnects_total")) >= 1) break;
      }
      assert.ok((await metric(g.url, "lance_gateway_sse_slow_disconnects_total")) >= 1, "the slow client was not disconnected");
      // the healthy subscriber kept everything
      await healthy.until((s) => s.events.length >= version, 30000, `${version} events`);
      assert.equal(healthy.events.length, version);
      sock.resume();
      for (let i = 0; i < 250 && !closed; i++) await sleep(20);
      assert.ok(closed, "the slow client's stream did not end");
      assert.match(got, /did not keep up/);
    } finally {
      sock.destroy();
      healthy.close();
      await stop(g.proc);
    }
  });

  it("ends streams and exits 0 on SIGTERM", async () => {
    const g = await startGateway(base);
    const sub = await subscribe("", { base: g.url });
    const t0 = Date.now();
    assert.equal(await stop(g.proc), 0);
    assert.ok(Date.now() - t0 < 10000, "shutdown waited for the stream");
    await sub.until((s) => s.ended, 5000, "the end of the stream");
    assert.ok(sub.comments.some((c) => /shutting down/.test(c)), JSON.stringify(sub.comments));
  });
});
