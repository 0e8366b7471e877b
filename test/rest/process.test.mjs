// The gateway process: bind safety, API keys, catalog root check,
// environment configuration, pool exhaustion, PostgreSQL restarts,
// graceful SIGTERM and the access log.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import {
  req, ok, assertError, fresh, mkNamespace, mkTable, createVersion, versionsDir, v2Name,
  startGateway, startAuthGateway, stop, psql, holdLock, sleep, GW_DB, ROOT, TMP, PG_BINDIR,
} from "./lib.mjs";

const base = ["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", ROOT];

describe("gateway process", () => {
  it("refuses a non-loopback address without authentication", async () => {
    const g = await startGateway(["--listen", "0.0.0.0:0", "--db", GW_DB, "--root", ROOT], { expectExit: true });
    assert.notEqual(g.exitCode, 0);
    assert.match(g.log(), /non-loopback/);
  });

  it("listens on a non-loopback address with --force-insecure-bind", async () => {
    const g = await startGateway(["--listen", "0.0.0.0:0", "--db", GW_DB, "--root", ROOT, "--force-insecure-bind"]);
    try {
      assert.ok(g.url, `the gateway did not start: ${g.log()}`);
      assert.match(g.log(), /listening on 0\.0\.0\.0:\d+/);
      ok(await req("GET", "/health", { base: g.url }));
    } finally {
      assert.equal(await stop(g.proc), 0);
    }
  });

  it("has the extension's version: --version, the start-up line", async () => {
    const control = fs.readFileSync(new URL("../../lance_namespace.control", import.meta.url), "utf8");
    const version = /^default_version = '([^']+)'$/m.exec(control)[1];
    const r = spawnSync(process.env.GW_BIN, ["--version"], { encoding: "utf8" });
    assert.equal(r.status, 0);
    assert.equal(r.stdout, `lance-namespace-gateway ${version}\n`);
    assert.equal(psql("SELECT extversion FROM pg_extension WHERE extname = 'lance_namespace'"), version);
    const g = await startGateway(base);
    try {
      assert.match(g.log(), new RegExp(`^lance-namespace-gateway ${version.replaceAll(".", "\\.")}: listening on `, "m"));
    } finally {
      await stop(g.proc);
    }
  });

  it("refuses an option value out of its range, from the command line or the environment", () => {
    const gw = process.env.GW_BIN;
    for (const [args, env, name] of [
      [["--loops", "0"], {}, "--loops"],
      [["--loop-lock-wait-ms", "-1"], {}, "--loop-lock-wait-ms"],
      [["--pool", "ten"], {}, "--pool"],
      [[], { LANCE_GATEWAY_LOOP_LOCK_WAIT_MS: "600001" }, "LANCE_GATEWAY_LOOP_LOCK_WAIT_MS"],
      [[], { LANCE_GATEWAY_LOOPS: "65" }, "LANCE_GATEWAY_LOOPS"],
    ]) {
      const r = spawnSync(gw, [...base, ...args], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 10000 });
      assert.equal(r.status, 2, `${name}: exit ${r.status}`);
      assert.match(r.stderr, new RegExp(`invalid value for ${name}: .*\\(expected -?\\d+\\.\\.\\d+\\)`));
    }
  });

  it("options come from one table: --help lists each, the README's table is --help-markdown, env tunables are options", () => {
    const gw = process.env.GW_BIN;
    const md = spawnSync(gw, ["--help-markdown"], { encoding: "utf8" });
    assert.equal(md.status, 0);
    const readme = fs.readFileSync(new URL("../../src/gateway/README.md", import.meta.url), "utf8");
    const block = /<!-- options:[^\n]*-->\n([\s\S]*?)<!-- end of options -->/.exec(readme);
    assert.ok(block, "the README marks its generated options table");
    assert.equal(block[1], md.stdout, "src/gateway/README.md's options table is what --help-markdown prints");
    const help = spawnSync(gw, ["--help"], { encoding: "utf8" }).stdout;
    for (const [, opt] of md.stdout.matchAll(/^\| `(--[a-z0-9-]+)/gm)) assert.ok(help.includes(`  ${opt}`), `--help lacks ${opt}`);
    // the change feed's tunables are options like the rest: checked, not ignored
    for (const [env, bad] of [["LANCE_GATEWAY_FEED_POLL_MS", "1"], ["LANCE_GATEWAY_SSE_QUEUE", "0"]]) {
      const r = spawnSync(gw, [...base], { env: { ...process.env, [env]: bad }, encoding: "utf8", timeout: 10000 });
      assert.equal(r.status, 2, `${env}=${bad}: exit ${r.status}`);
      assert.match(r.stderr, new RegExp(`invalid value for ${env}`));
    }
  });

  it("refuses a --root other than the catalog's", async () => {
    const other = path.join(TMP, "other-root");
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", other], { expectExit: true });
    assert.notEqual(g.exitCode, 0);
    assert.match(g.log(), /root/);
  });

  it("fails clearly without the extension", async () => {
    spawnSync(path.join(PG_BINDIR, "createdb"), ["noext"]);
    const db = GW_DB.replace(/dbname=\S+/, "dbname=noext");
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", db, "--root", ROOT], { expectExit: true });
    assert.notEqual(g.exitCode, 0);
    assert.match(g.log(), /CREATE EXTENSION lance_namespace/);
  });

  it("serves the routes the extension declares (rest_routes), and needs them to start", async () => {
    // a catalog from before the route table: the gateway says what to do
    spawnSync(path.join(PG_BINDIR, "createdb"), ["oldext"]);
    const made = spawnSync(path.join(PG_BINDIR, "psql"), ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", "oldext", "-c",
      "CREATE EXTENSION lance_namespace VERSION '0.2.0'"], { encoding: "utf8" });
    assert.equal(made.status, 0, made.stderr);
    const db = GW_DB.replace(/dbname=\S+/, "dbname=oldext");
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", db, "--root", ROOT], { expectExit: true });
    assert.notEqual(g.exitCode, 0);
    assert.match(g.log(), /rest_routes[\s\S]*ALTER EXTENSION lance_namespace UPDATE/);
    // every route of the view is served with its methods: none is "no such route"
    const id = `${fresh("no_ns")}$t`;
    const rows = psql("SELECT path || ' ' || array_to_string(methods, ',') FROM lance_namespace.rest_routes").split("\n");
    assert.ok(rows.length >= 30, `${rows.length} routes`);
    for (const row of rows) {
      const [p, methods] = row.split(" ");
      for (const m of methods.split(",")) {
        const r = await req(m, p.replace("{id}", encodeURIComponent(id)), { body: m === "POST" ? {} : undefined });
        assert.ok(r.status !== 406 && r.status !== 405, `${m} ${p}: ${r.status} ${r.text}`);
      }
    }
    // and a method the view does not list is refused with the methods it does
    const r = await req("GET", `/v1/table/${encodeURIComponent(id)}/describe`);
    assert.equal(r.status, 405);
  });

  it("requires the API key when one is configured", async () => {
    const g = await startGateway(base, { env: { LANCE_GATEWAY_API_KEY: "s3cret" } });
    try {
      assertError(await req("GET", "/v1/namespace/%24/list", { base: g.url }), 401, 16);
      assertError(await req("GET", "/v1/namespace/%24/list", { base: g.url, headers: { "x-api-key": "wrong" } }), 401, 16);
      // same length but one byte off, a prefix, and the key with a byte more
      for (const k of ["s3creT", "s3cre", "s3crett"])
        assertError(await req("GET", "/v1/namespace/%24/list", { base: g.url, headers: { "x-api-key": k } }), 401, 16);
      ok(await req("GET", "/v1/namespace/%24/list", { base: g.url, headers: { "x-api-key": "s3cret" } }));
      ok(await req("GET", "/v1/namespace/%24/list", { base: g.url, headers: { authorization: "Bearer s3cret" } }));
      ok(await req("GET", "/health", { base: g.url }));
    } finally {
      assert.equal(await stop(g.proc), 0);
    }
  });

  it("--db-auth runs each request as the role its credential maps to", async () => {
    const ns = await mkNamespace();
    // README's authenticator, and a tenant that may read ns (README's statements)
    const g = await startAuthGateway();
    const { role, key } = await g.tenant({ ns, privilege: "read", create: false, prefix: "gw_reader" });
    try {
      assertError(await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url }), 401, 16);
      assertError(await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url, headers: { "x-api-key": "lnk_wrong" } }), 401, 16);
      ok(await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url, headers: { "x-api-key": key } }));
      const denied = await req("POST", `/v1/namespace/${ns}$child/create`, { base: g.url, headers: { "x-api-key": key } });
      assert.ok(denied.status === 403 || denied.status === 404, `${denied.status} ${denied.text}`);
      assert.ok(denied.json.code === 15 || denied.json.code === 1, denied.text);
      ok(await req("GET", "/ready", { base: g.url }));
    } finally {
      await stop(g.proc);
    }
    const anon = await startAuthGateway(["--anon-role", role]);
    psql(`GRANT ${role} TO ${anon.role}`);
    try {
      ok(await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url.replace(/:\d+$/, ":" + new URL(anon.url).port) }));
    } finally {
      await stop(anon.proc);
    }
  });

  it("closes a route whose operation the role may not EXECUTE: 403 code 15", async () => {
    const ns = await mkNamespace();
    const fn = "lance_namespace.lance_describe_namespace(text[])";
    const g = await startAuthGateway();
    const { key } = await g.tenant({ ns, privilege: "read", create: false, prefix: "gw_noexec" });
    const headers = { "x-api-key": key };
    try {
      ok(await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url, headers }));
      psql(`REVOKE EXECUTE ON FUNCTION ${fn} FROM PUBLIC`);
      try {
        const denied = await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url, headers });
        assertError(denied, 403, 15);
        assert.match(denied.json.error, /permission denied for function lance_describe_namespace/);
        ok(await req("POST", `/v1/namespace/${ns}/exists`, { base: g.url, headers }));
      } finally {
        psql(`GRANT EXECUTE ON FUNCTION ${fn} TO PUBLIC`);
      }
      ok(await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url, headers }));
    } finally {
      await stop(g.proc);
    }
  });

  it("takes its configuration from LANCE_GATEWAY_* variables", async () => {
    const g = await startGateway([], {
      env: { LANCE_GATEWAY_LISTEN: "127.0.0.1:0", LANCE_GATEWAY_DB: GW_DB, LANCE_GATEWAY_ROOT: ROOT, LANCE_GATEWAY_POOL: "2" },
    });
    try {
      assert.match(g.log(), /pool 2/);
      ok(await req("GET", "/v1/namespace/%24/list", { base: g.url }));
    } finally {
      await stop(g.proc);
    }
  });

  it("passes a multi-host conninfo with target_session_attrs to libpq", async () => {
    const db = `host=${path.join(TMP, "no-such-dir")},${process.env.PGHOST} port=1,${process.env.PGPORT} ` +
      `dbname=${process.env.PGDATABASE} target_session_attrs=read-write`;
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", db, "--root", ROOT]);
    try {
      ok(await req("GET", "/v1/namespace/%24/list", { base: g.url }));
    } finally {
      await stop(g.proc);
    }
  });

  it("answers 503 code 17 with Retry-After when the pool is exhausted", async () => {
    // the pool serves the connection threads: writes and commits (reads
    // go down the event loop's own pipelined connection)
    const g = await startGateway([...base, "--pool", "1", "--pool-wait-ms", "200"]);
    const ns = await mkNamespace();
    const locker = await holdLock("entries", 3000);
    try {
      const blocked = req("POST", `/v1/namespace/${ns}/drop`, { base: g.url });
      await sleep(300);
      const r = await req("POST", `/v1/namespace/${ns}_other/create`, { base: g.url });
      assertError(r, 503, 17);
      assert.ok(r.headers["retry-after"], "Retry-After header");
      ok(await blocked);
    } finally {
      locker.release();
      await stop(g.proc);
    }
  });

  it("--manifest-copy finalizes by copying: a new canonical inode with the staging bytes", async () => {
    const g = await startGateway([...base, "--manifest-copy"]);
    try {
      const t = await mkTable(await mkNamespace());
      const { res, st } = await createVersion(t, 1, { base: g.url, content: "copied manifest" });
      assert.equal(res.status, 200, res.text);
      const canon = path.join(versionsDir(t.location), v2Name(1));
      assert.deepEqual(fs.readFileSync(canon), st.bytes);
      assert.notEqual(fs.statSync(canon).ino, st.ino, "a copy, not a link");
      assert.ok(!fs.existsSync(st.abs), "staging file removed after commit");
      // an orphan canonical file (an attempt that did not commit) is replaced
      const orphan = path.join(versionsDir(t.location), v2Name(2));
      fs.writeFileSync(orphan, "orphan of a failed attempt");
      const second = await createVersion(t, 2, { base: g.url, content: "the committed one" });
      assert.equal(second.res.status, 200, second.res.text);
      assert.deepEqual(fs.readFileSync(orphan), second.st.bytes);
      // a canonical file that already holds the same bytes (a retry) is kept
      const same = path.join(versionsDir(t.location), v2Name(3));
      fs.writeFileSync(same, "the same bytes");
      const ino = fs.statSync(same).ino;
      const third = await createVersion(t, 3, { base: g.url, content: "the same bytes" });
      assert.equal(third.res.status, 200, third.res.text);
      assert.equal(fs.statSync(same).ino, ino, "the identical file is kept, not copied over");
    } finally {
      await stop(g.proc);
    }
  });

  it("finishes in-flight requests on SIGTERM", async () => {
    const g = await startGateway(base);
    const ns = await mkNamespace();
    const locker = await holdLock("entries", 1500);
    const inflight = req("POST", `/v1/namespace/${ns}/describe`, { base: g.url });
    await sleep(300);
    const exited = stop(g.proc);
    const r = await inflight;
    assert.equal(r.status, 200, r.text);
    assert.equal(await exited, 0);
    assert.match(g.log(), /POST \/v1\/namespace\/\S+\/describe 200 [0-9.]+ms/);
    assert.match(g.log(), /stopped/);
    locker.release();
  });

  it("keeps a create's intent in --intents-dir, settled once it is answered", async () => {
    const dir = path.join(TMP, fresh("intents"));
    const g = await startGateway([...base, "--intents-dir", dir]);
    try {
      assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
      const t = await mkTable(await mkNamespace());
      const { res } = await createVersion(t, 1, { base: g.url, content: "intent elsewhere" });
      assert.equal(res.status, 200, res.text);
      const files = fs.readdirSync(dir);
      assert.ok(files.length >= 1, "no intent file in --intents-dir");
      for (const f of files) {
        assert.match(f, new RegExp(`^${g.proc.pid}-\\w{6}\\.intent$`));
        const text = fs.readFileSync(path.join(dir, f), "utf8");
        assert.equal(text[0], "#", `not settled: ${text}`);
        assert.match(text, /"canonical":/, "the record names the canonical manifest");
      }
    } finally {
      await stop(g.proc);
    }
  });

  it("stops after --shutdown-timeout seconds although a request is still running", async () => {
    const g = await startGateway([...base, "--shutdown-timeout", "1"]);
    const ns = await mkNamespace();
    const locker = await holdLock("entries", 15000);
    try {
      const inflight = req("POST", `/v1/namespace/${ns}/describe`, { base: g.url }).catch((e) => e);
      await sleep(500);
      const t0 = Date.now();
      assert.equal(await stop(g.proc), 0);
      // well before the lock ends (15 s) and the default timeout (30 s)
      assert.ok(Date.now() - t0 < 8000, `stopping took ${Date.now() - t0} ms`);
      assert.match(g.log(), /1 requests still running at shutdown/);
      const r = await inflight;
      assert.ok(r instanceof Error, `the request was answered: ${r.status} ${r.text}`);
    } finally {
      locker.release();
    }
  });

  it("survives a PostgreSQL restart: 503 while down, then reconnects", async () => {
    const g = await startGateway([...base, "--pool", "2"]);
    try {
      const ns = await mkNamespace();
      ok(await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url }));
      ok(await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url }));
      const pgctl = path.join(PG_BINDIR, "pg_ctl");
      assert.equal(spawnSync(pgctl, ["-D", process.env.PGDATA, "-m", "fast", "-w", "stop"]).status, 0);
      const down = await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url });
      assertError(down, 503, 17);
      assert.ok(down.headers["retry-after"]);
      assertError(await req("GET", "/ready", { base: g.url }), 503, 17);
      ok(await req("GET", "/health", { base: g.url }));
      const opts = `-p ${process.env.PGPORT} -k ${process.env.PGHOST} -c listen_addresses= -c fsync=off`;
      assert.equal(spawnSync(pgctl, ["-D", process.env.PGDATA, "-w", "-l", path.join(TMP, "postgres.log"), "-o", opts, "start"]).status, 0);
      // the event loop reopens its own connection by itself (/metrics needs no database)
      const metric = async (name) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec((await req("GET", "/metrics", { base: g.url })).text)[1]);
      for (let i = 0; i < 50 && (await metric("lance_gateway_loop_db_connected")) !== 1; i++) await sleep(100);
      assert.equal(await metric("lance_gateway_loop_db_connected"), 1, "the loop did not reconnect");
      const answered = await metric("lance_gateway_loop_answered_total");
      // stale pooled connections are replaced transparently
      for (let i = 0; i < 4; i++) ok(await req("POST", `/v1/namespace/${ns}/describe`, { base: g.url }));
      assert.ok(await metric("lance_gateway_loop_answered_total") >= answered + 4, "the reads did not go down the loop's pipeline");
      ok(await req("GET", "/ready", { base: g.url }));
    } finally {
      await stop(g.proc);
    }
  });

  it("logs one access line per request", async () => {
    const g = await startGateway(base);
    try {
      await req("GET", "/health", { base: g.url });
      await req("GET", "/nope", { base: g.url });
      await sleep(100);
      assert.match(g.log(), /^GET \/health 200 [0-9.]+ms$/m);
      assert.match(g.log(), /^GET \/nope 406 [0-9.]+ms$/m);
    } finally {
      await stop(g.proc);
    }
  });
});
void fs;
void fresh;
