// The loops: reads of many clients share one pipelined database
// connection (src/gateway/server.c, pipeline.c); what may block goes to a
// worker (pool.c) while the connection waits, suspended, in its loop.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import {
  GW_URL, GW_DB, ROOT, req, ok, assertError, fresh, mkNamespace, mkTable, createVersion, psql, psqlBackground,
  startGateway, stop, sleep,
} from "./lib.mjs";

async function metric(name, base = GW_URL) {
  const r = await req("GET", "/metrics", { base });
  assert.equal(r.status, 200);
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(r.text);
  assert.ok(m, `no ${name}`);
  return Number(m[1]);
}

/** Wait until the loop's pipelined connection is up (reopened within a second of a loss). */
async function loopConnected(base = GW_URL) {
  for (let i = 0; i < 50 && (await metric("lance_gateway_loop_db_connected", base)) !== 1; i++) await sleep(100);
  assert.equal(await metric("lance_gateway_loop_db_connected", base), 1, "the loop's connection is down");
}

describe("the loops", () => {
  it("answers many clients' reads down one pipeline, each with its own answer, failures included", { timeout: 60_000 }, async () => {
    const names = [];
    for (let i = 0; i < 16; i++) {
      const ns = fresh("loop");
      ok(await req("POST", `/v1/namespace/${ns}/create`, { body: { properties: { n: String(i) } } }));
      names.push(ns);
    }
    await sleep(100);			// the workers that served the creates give their connections back
    await loopConnected();
    const answered = await metric("lance_gateway_loop_answered_total");
    const handoffs = await metric("lance_gateway_loop_handoffs_total");
    // 320 reads from up to 64 connections at once: a describe of each
    // namespace, and of a missing one, which fails inside the pipeline
    // between the others.  The calls of a wake-up share a Sync (up to
    // four; pipeline.c), so a failure makes the server skip the calls
    // after it, which the loop sends again: each still gets its own answer.
    const jobs = [];
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < names.length; i++) {
        jobs.push(req("POST", `/v1/namespace/${names[i]}/describe`, { body: {} }).then((r) => ({ i, r })));
        jobs.push(req("POST", `/v1/namespace/${names[i]}_missing/describe`, { body: {} }).then((r) => ({ i: -1, r })));
      }
    }
    for (const { i, r } of await Promise.all(jobs)) {
      if (i < 0) assertError(r, 404, 1);
      else {
        ok(r);
        assert.deepEqual(r.json.properties, { n: String(i) }, "an answer went to another request");
      }
    }
    assert.ok(await metric("lance_gateway_loop_answered_total") - answered >= jobs.length);
    assert.ok(await metric("lance_gateway_loop_handoffs_total") - handoffs < jobs.length / 10,
      "the reads went to workers");
    assert.equal(await metric("lance_gateway_loop_calls"), 0);
  });

  it("hands a commit to a worker and answers the reads on the same connection itself", async () => {
    const t = await mkTable(await mkNamespace());
    const handoffs = await metric("lance_gateway_loop_handoffs_total");
    for (let v = 1; v <= 3; v++) {
      await sleep(100);
      ok((await createVersion(t, v)).res);
      await sleep(100);
      const d = await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: v } });
      ok(d);
      assert.equal(d.json.version.version, v);
    }
    assert.ok(await metric("lance_gateway_loop_handoffs_total") - handoffs >= 3);
  });

  it("sends a response the client does not take at once, without a worker", async () => {
    // about 2.6 MB of namespace names: more than the socket takes while the
    // client does not read
    const parent = fresh("big");
    ok(await req("POST", `/v1/namespace/${parent}/create`, { body: {} }));
    psql(`SELECT lance_namespace.lance_create_namespace(ARRAY['${parent}', lpad(i::text, 250, 'x')])
            FROM generate_series(1, 10000) AS i`);
    const handoffs = await metric("lance_gateway_loop_handoffs_total");
    const u = new URL(GW_URL);
    const s = net.connect({ host: u.hostname, port: Number(u.port) });
    s.pause();
    const chunks = [];
    await new Promise((r) => s.on("connect", r));
    s.write(`GET /v1/namespace/${parent}/list?limit=10000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    await sleep(500);
    s.on("data", (c) => chunks.push(c));
    const closed = new Promise((r) => s.on("close", r));
    s.resume();
    await closed;
    const text = Buffer.concat(chunks).toString("utf8");
    const at = text.indexOf("\r\n\r\n");
    assert.match(text.slice(0, at), /^HTTP\/1\.1 200 /);
    const length = Number(/\r\ncontent-length: (\d+)\r\n/i.exec(text.slice(0, at + 2))[1]);
    const body = text.slice(at + 4);
    assert.equal(Buffer.byteLength(body), length);
    assert.ok(length > 2_000_000, `only ${length} bytes`);
    const list = JSON.parse(body);
    assert.equal(list.namespaces.length, 10000);
    assert.equal(await metric("lance_gateway_loop_handoffs_total"), handoffs, "the loop handed a read over");
    psql(`SELECT lance_namespace.lance_drop_namespace(ARRAY['${parent}'], behavior => 'Cascade')`);
  });

  it("moves a read that waits for a table lock to a worker, and answers the reads behind it", async () => {
    // a long lock wait, so that the reads below join the pipeline behind it
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", ROOT, "--quiet",
      "--loop-lock-wait-ms", "500"]);
    const t = await mkTable(await mkNamespace());
    ok((await createVersion(t, 1, { base: g.url })).res);
    const ns = await mkNamespace();
    const lockHeld = () => psql(`SELECT count(*) FROM pg_locks WHERE relation = 'lance_namespace.versions'::regclass
                                   AND mode = 'AccessExclusiveLock' AND granted`) === "1";
    const class55 = async () => {
      const r = await req("GET", "/metrics", { base: g.url });
      const m = /^lance_gateway_db_errors_total\{class="55"\} (\d+)$/m.exec(r.text);
      return m ? Number(m[1]) : 0;
    };
    const locker = psqlBackground(
      "BEGIN; LOCK TABLE lance_namespace.versions IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(4); COMMIT;",
    );
    try {
      await sleep(200);
      await loopConnected(g.url);
      for (let i = 0; i < 50 && !lockHeld(); i++) await sleep(50);
      assert.ok(lockHeld(), "the lock was not taken");
      const lockErrors = await class55();
      const handoffs = await metric("lance_gateway_loop_handoffs_total", g.url);
      // a read of the locked table waits at the head of the pipeline...
      let listed = false;
      const list = req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { base: g.url, body: {} })
        .then((r) => { listed = true; return r; });
      for (let i = 0; i < 50 && (await metric("lance_gateway_loop_calls", g.url)) < 1; i++) await sleep(20);
      // ...and reads of another table join the pipeline behind it
      const describes = [1, 2, 3].map(() => req("POST", `/v1/namespace/${ns}/describe`, { base: g.url, body: {} }));
      for (const r of await Promise.all(describes)) ok(r);
      assert.ok(lockHeld() && !listed, "the reads behind the waiting one were answered only after the lock");
      // the loop stands aside for a while: another read of the locked table
      // goes to a worker without waiting in the pipeline first
      const list2 = req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { base: g.url, body: {} });
      await sleep(700);
      assert.equal(await class55(), lockErrors + 1, "one lock wait ran out in the pipeline");
      // both lists are answered in full once the lock is gone
      for (const r of [await list, await list2]) {
        ok(r);
        assert.deepEqual(r.json.versions.map((v) => v.version), [1]);
      }
      assert.ok(await metric("lance_gateway_loop_handoffs_total", g.url) - handoffs >= 2);
    } finally {
      locker.kill();
      await stop(g.proc);
    }
  });

  it("answers 503 for the reads in a pipeline whose connection breaks, then reconnects", async () => {
    // no lock wait bound: the reads wait in the pipeline behind the lock
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", ROOT, "--quiet",
      "--loop-lock-wait-ms", "0"]);
    const ns = await mkNamespace();
    const locker = psqlBackground(
      "BEGIN; LOCK TABLE lance_namespace.entries IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3); COMMIT;",
    );
    try {
      await loopConnected(g.url);
      await sleep(300);
      // three reads wait in the loop's pipeline behind the lock
      const reads = [1, 2, 3].map(() => req("POST", `/v1/namespace/${ns}/describe`, { base: g.url, body: {} }));
      for (let i = 0; i < 50 && (await metric("lance_gateway_loop_calls", g.url)) < 3; i++) await sleep(50);
      assert.equal(await metric("lance_gateway_loop_calls", g.url), 3);
      // the loop's backend is the one waiting with the describe
      assert.equal(psql(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                          WHERE query LIKE '%rest_describe_namespace%' AND wait_event_type = 'Lock'
                            AND pid <> pg_backend_pid()`), "1");
      // their outcome is unknown to the gateway: 503, never a wrong answer
      for (const r of await Promise.all(reads)) assertError(r, 503, 17);
      assert.equal(await metric("lance_gateway_loop_calls", g.url), 0);
      locker.kill();
      await loopConnected(g.url);
      const answered = await metric("lance_gateway_loop_answered_total", g.url);
      ok(await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url, body: {} }));
      assert.equal(await metric("lance_gateway_loop_answered_total", g.url), answered + 2);	// the describe and a /metrics
    } finally {
      locker.kill();
      await stop(g.proc);
    }
  });

  it("with --loops 2, two loops share the connections, each with its own pipeline", async () => {
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", ROOT, "--quiet", "--loops", "2"]);
    try {
      for (let i = 0; i < 50 && (await metric("lance_gateway_loop_db_connected", g.url)) !== 2; i++) await sleep(100);
      assert.equal(await metric("lance_gateway_loop_db_connected", g.url), 2);
      const names = [];
      for (let i = 0; i < 8; i++) {
        const ns = fresh("loops");
        ok(await req("POST", `/v1/namespace/${ns}/create`, { base: g.url, body: { properties: { n: String(i) } } }));
        names.push(ns);
      }
      await sleep(100);
      const answered = await metric("lance_gateway_loop_answered_total", g.url);
      const jobs = [];
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < names.length; i++) {
          jobs.push(req("POST", `/v1/namespace/${names[i]}/describe`, { base: g.url, body: {} }).then((r) => ({ i, r })));
        }
      }
      for (const { i, r } of await Promise.all(jobs)) {
        ok(r);
        assert.deepEqual(r.json.properties, { n: String(i) }, "an answer went to another request");
      }
      assert.ok(await metric("lance_gateway_loop_answered_total", g.url) - answered >= jobs.length);
    } finally {
      await stop(g.proc);
    }
  });

  it("stops watching the listening socket while it is out of descriptors, and accepts again after", async () => {
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", ROOT, "--quiet"],
      { prefix: ["prlimit", "--nofile=48", "--"] });
    const u = new URL(g.url);
    const socks = [];
    const cpu = () => fs.readFileSync(`/proc/${g.proc.pid}/stat`, "utf8").split(") ")[1].split(" ")
      .slice(11, 13).reduce((a, b) => a + Number(b), 0);
    try {
      // more connections than descriptors: the rest wait in the backlog,
      // and the listening socket stays readable
      for (let i = 0; i < 80; i++) {
        const s = net.connect({ host: u.hostname, port: Number(u.port) });
        s.on("error", () => {});
        socks.push(s);
      }
      await sleep(1500);
      const before = cpu();
      await sleep(2000);
      const ticks = cpu() - before;
      assert.ok(ticks < 50, `the gateway spun on the listening socket: ${ticks} ticks of CPU in 2 s`);
      assert.match(g.log(), /Error accepting connection: Too many open files/);
      for (const s of socks) s.destroy();
      socks.length = 0;
      await sleep(2500);
      // new connections are accepted again, and reads answered
      assert.equal((await req("GET", "/health", { base: g.url })).status, 200);
      assertError(await req("POST", `/v1/namespace/${fresh("after")}/exists`, { base: g.url, body: {} }), 404, 1);
    } finally {
      for (const s of socks) s.destroy();
      await stop(g.proc);
    }
  });
});
