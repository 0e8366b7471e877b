// metrics.test.mjs: GET /metrics (Prometheus text format): it parses,
// counters move, and it answers without the database.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  GW_URL, GW_DB, ROOT, req, ok, assertError, mkNamespace, mkTable, createVersion, psqlBackground, startGateway, stop, sleep,
} from "./lib.mjs";
import { subscribe } from "./sse.mjs";

const base = ["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", ROOT, "--quiet"];

/** Parse the exposition text strictly; returns Map "name{labels}" -> value. */
function parse(text) {
  const types = new Map();
  const samples = new Map();
  assert.ok(text.endsWith("\n"));
  for (const line of text.split("\n").slice(0, -1)) {
    let m;
    if ((m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$/.exec(line))) continue;
    if ((m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line))) {
      assert.ok(!types.has(m[1]), `duplicate TYPE ${m[1]}`);
      types.set(m[1], m[2]);
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)$/.exec(line);
    assert.ok(m, `bad sample line: ${line}`);
    const value = Number(m[3]);
    assert.ok(!Number.isNaN(value), line);
    const family = m[1].replace(/_(bucket|sum|count)$/, "");
    assert.ok(types.has(m[1]) || (types.get(family) === "histogram"), `sample without TYPE: ${line}`);
    const key = m[1] + (m[2] ?? "");
    assert.ok(!samples.has(key), `duplicate sample ${key}`);
    samples.set(key, value);
  }
  return { types, samples };
}

async function scrape(url = GW_URL) {
  const res = await req("GET", "/metrics", { base: url });
  assert.equal(res.status, 200, res.text);
  assert.match(String(res.headers["content-type"]), /^text\/plain; version=0\.0\.4/);
  return parse(res.text);
}

const get = (s, key) => s.samples.get(key) ?? 0;

describe("metrics", () => {
  it("parses as Prometheus text and counts requests by route and status", async () => {
    const ns = await mkNamespace();
    const before = await scrape();
    for (let i = 0; i < 3; i++) ok(await req("POST", `/v1/namespace/${ns}/describe`, { body: {} }));
    assertError(await req("POST", `/v1/namespace/${ns}_missing/describe`, { body: {} }), 404, 1);
    await req("GET", "/nope");
    await sleep(100);
    const after = await scrape();
    const route = 'route="/v1/namespace/{id}/describe"';
    assert.equal(get(after, `lance_gateway_requests_total{${route},status="200"}`) -
      get(before, `lance_gateway_requests_total{${route},status="200"}`), 3);
    assert.equal(get(after, `lance_gateway_requests_total{${route},status="404"}`) -
      get(before, `lance_gateway_requests_total{${route},status="404"}`), 1);
    assert.ok(get(after, 'lance_gateway_requests_total{route="(unmatched)",status="406"}') >= 1);
    assert.ok(get(after, 'lance_gateway_db_errors_total{class="LN"}') > get(before, 'lance_gateway_db_errors_total{class="LN"}'));
    // histogram: cumulative buckets, +Inf equals count
    assert.equal(after.types.get("lance_gateway_request_duration_seconds"), "histogram");
    const buckets = [...after.samples].filter(([k]) => k.startsWith(`lance_gateway_request_duration_seconds_bucket{${route},`));
    assert.ok(buckets.length > 5);
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i][1] >= buckets[i - 1][1]);
    assert.equal(buckets[buckets.length - 1][0], `lance_gateway_request_duration_seconds_bucket{${route},le="+Inf"}`);
    const count = get(after, `lance_gateway_request_duration_seconds_count{${route}}`);
    assert.equal(buckets[buckets.length - 1][1], count);
    assert.equal(count - get(before, `lance_gateway_request_duration_seconds_count{${route}}`), 4);
    assert.ok(get(after, `lance_gateway_request_duration_seconds_sum{${route}}`) > 0);
    for (const name of ["lance_gateway_pool_size", "lance_gateway_pool_in_use", "lance_gateway_pool_waits_total",
      "lance_gateway_pool_wait_seconds_total", "lance_gateway_db_reconnects_total", "lance_gateway_db_connects_total",
      "lance_gateway_sse_subscribers", "lance_gateway_sse_events_sent_total", "lance_gateway_feed_connected"]) {
      assert.ok(after.samples.has(name), `missing ${name}`);
    }
    assert.equal(get(after, "lance_gateway_pool_size"), 8);
    assert.equal(get(after, "lance_gateway_feed_connected"), 1);
  });

  it("counts subscribers and events sent", async () => {
    const ns = await mkNamespace();
    const before = await scrape();
    const sub = await subscribe(`?namespace=${ns}`);
    try {
      const during = await scrape();
      assert.equal(get(during, "lance_gateway_sse_subscribers") - get(before, "lance_gateway_sse_subscribers"), 1);
      const t = await mkTable(ns);
      ok((await createVersion(t, 1)).res);
      await sub.until((s) => s.events.length >= 1, 10000, "event");
      await sleep(100);
      const after = await scrape();
      assert.ok(get(after, "lance_gateway_sse_events_sent_total") > get(before, "lance_gateway_sse_events_sent_total"));
      assert.ok(get(after, "lance_gateway_feed_commits_total") > get(before, "lance_gateway_feed_commits_total"));
      assert.ok(get(after, "lance_gateway_feed_polls_total") > get(before, "lance_gateway_feed_polls_total"));
    } finally {
      sub.close();
    }
    // a client that went away is noticed within a second, not at the next heartbeat
    let end;
    for (let i = 0; i < 40; i++) {
      end = await scrape();
      if (get(end, "lance_gateway_sse_subscribers") === get(before, "lance_gateway_sse_subscribers")) break;
      await sleep(100);
    }
    assert.equal(get(end, "lance_gateway_sse_subscribers"), get(before, "lance_gateway_sse_subscribers"));
    // with no subscriber the feed reads nothing (default poll: every 100 ms)
    assert.equal(get(end, "lance_gateway_sse_subscribers"), 0);
    await sleep(200);
    const idle = await scrape();
    const t2 = await mkTable(ns);
    ok((await createVersion(t2, 1)).res);
    await sleep(400);
    assert.equal(get(await scrape(), "lance_gateway_feed_polls_total"), get(idle, "lance_gateway_feed_polls_total"));
  });

  it("answers without a free database connection and shows pool waits", async () => {
    // no lock wait bound on the loop: its reads stay in the pipeline
    const g = await startGateway([...base, "--pool", "1", "--pool-wait-ms", "3000", "--loop-lock-wait-ms", "0"]);
    const ns = await mkNamespace();
    const tables = [await mkTable(ns), await mkTable(ns), await mkTable(ns)];
    const before = await scrape(g.url);
    const locker = psqlBackground(
      "BEGIN; LOCK TABLE lance_namespace.entries IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(1.5); COMMIT;",
    );
    try {
      await sleep(300);
      // commits run in connection threads on the pool (one connection);
      // reads go down the event loop's pipeline, which is not the pool's
      const commits = tables.map((t) => createVersion(t, 1, { base: g.url }));
      const reads = [1, 2].map(() => req("POST", `/v1/namespace/${ns}/describe`, { base: g.url, body: {} }));
      await sleep(300);
      const t0 = Date.now();
      const during = await scrape(g.url);
      assert.ok(Date.now() - t0 < 1000, "metrics waited for the database");
      assert.equal(get(during, "lance_gateway_pool_in_use"), 1);
      assert.equal(get(during, "lance_gateway_loop_calls"), 2);
      assert.equal(get(during, "lance_gateway_loop_db_connected"), 1);
      for (const r of await Promise.all(commits)) ok(r.res);
      for (const r of await Promise.all(reads)) ok(r);
      const after = await scrape(g.url);
      assert.ok(get(after, "lance_gateway_pool_waits_total") >= 2);
      assert.ok(get(after, "lance_gateway_pool_wait_seconds_total") > 0);
      assert.equal(get(after, "lance_gateway_pool_in_use"), 0);
      assert.equal(get(after, "lance_gateway_loop_calls"), 0);
      assert.ok(get(after, "lance_gateway_loop_answered_total") - get(before, "lance_gateway_loop_answered_total") >= 2);
      assert.ok(get(after, "lance_gateway_loop_handoffs_total") - get(before, "lance_gateway_loop_handoffs_total") >= 3);
    } finally {
      locker.kill();
      await stop(g.proc);
    }
  });

  it("needs the API key when one is configured", async () => {
    const g = await startGateway(base, { env: { LANCE_GATEWAY_API_KEY: "m3trics" } });
    try {
      assertError(await req("GET", "/metrics", { base: g.url }), 401, 16);
      ok(await req("GET", "/metrics", { base: g.url, headers: { authorization: "Bearer m3trics" } }));
    } finally {
      await stop(g.proc);
    }
  });
});
