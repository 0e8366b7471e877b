// Failures of the object store: unreachable, 5xx, throttled, slow, access
// denied.  Each is a clear error (503 code 17 after bounded retries, or 403
// code 15), never a 500 and never a half-committed version.  A proxy in
// front of the S3 server injects the faults; each test starts a gateway of
// its own that talks to the store through it.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { req, ok, assertError, fresh, psql, v2Name, mkNamespace, mkTable, startGateway, stop, GW_DB } from "../rest/lib.mjs";
import { s3, keyOf, startProxy, BUCKET } from "./s3lib.mjs";

const canonicalKey = (t, version) => `${keyOf(t.location)}/_versions/${v2Name(version)}`;
const rowCount = (t) =>
  Number(psql(`SELECT count(*) FROM lance_namespace.table_versions WHERE id = string_to_array('${t.id}', '$')`));

async function putStaging(t, version, content) {
  const bytes = Buffer.from(content ?? `manifest ${version} ${Math.random()}`);
  const key = `${keyOf(t.location)}/_versions/${v2Name(version)}-${fresh("u")}`;
  assert.equal((await s3("PUT", key, { body: bytes })).status, 200);
  return { key, bytes };
}

const create = (t, version, st, base, timeoutMs) =>
  req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`, {
    body: { version, manifest_path: st.key, naming_scheme: "V2" },
    base,
    timeoutMs,
  });

const isCanonicalPut = (r) => r.method === "PUT" && /\.manifest$/.test(r.url.split("?")[0]);

async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  return port;
}

describe("object store failures", () => {
  let proxy;
  let gw;
  before(async () => {
    proxy = await startProxy();
    gw = await startGateway(
      ["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", `s3://${BUCKET}/warehouse`, "--quiet",
        "--s3-retries", "2", "--s3-timeout-ms", "1500"],
      { env: { AWS_ENDPOINT_URL_S3: proxy.url } },
    );
    assert.ok(gw.url, gw.log());
  });
  after(async () => {
    if (gw?.proc) await stop(gw.proc);
    await proxy?.close();
  });

  it("a store answering 503 to everything: 503 code 17 after 3 attempts, no version", async () => {
    const t = await mkTable(await mkNamespace());
    const st = await putStaging(t, 1);
    proxy.log.length = 0;
    proxy.rule = () => ({ status: 503, code: "ServiceUnavailable" });
    const res = await create(t, 1, st, gw.url);
    proxy.rule = () => undefined;
    assertError(res, 503, 17);
    assert.ok(res.headers["retry-after"], "Retry-After is set");
    assert.equal(proxy.log.length, 3, `one request and two retries: ${proxy.log}`);
    assert.equal(rowCount(t), 0);
    assert.equal((await s3("HEAD", canonicalKey(t, 1))).status, 404);
  });

  it("a 500 on the canonical PUT: 503 code 17, no version and no canonical object", async () => {
    const t = await mkTable(await mkNamespace());
    const st = await putStaging(t, 1);
    proxy.rule = (r) => (isCanonicalPut(r) ? { status: 500, code: "InternalError" } : undefined);
    const res = await create(t, 1, st, gw.url);
    proxy.rule = () => undefined;
    assertError(res, 503, 17);
    assert.equal(rowCount(t), 0);
    assert.equal((await s3("HEAD", canonicalKey(t, 1))).status, 404);
    // the writer retries once the store is back: committed
    ok(await create(t, 1, st, gw.url));
    assert.deepEqual((await s3("GET", canonicalKey(t, 1))).body, st.bytes);
  });

  it("transient failures and throttling are retried: the commit succeeds", async () => {
    const t = await mkTable(await mkNamespace());
    const st = await putStaging(t, 1);
    let n = 0;
    proxy.rule = (r) => {
      if (!isCanonicalPut(r)) return undefined;
      n += 1;
      return n === 1 ? { status: 503, code: "SlowDown" } : n === 2 ? { status: 429, code: "TooManyRequests" } : undefined;
    };
    const res = await create(t, 1, st, gw.url);
    proxy.rule = () => undefined;
    ok(res);
    assert.equal(n, 3);
    assert.deepEqual((await s3("GET", canonicalKey(t, 1))).body, st.bytes);
  });

  it("a store slower than --s3-timeout-ms: 503 code 17, no version", async () => {
    const t = await mkTable(await mkNamespace());
    const st = await putStaging(t, 1);
    proxy.rule = (r) => (isCanonicalPut(r) ? { hang: true } : undefined);
    const res = await create(t, 1, st, gw.url);
    proxy.rule = () => undefined;
    assertError(res, 503, 17);
    assert.equal(rowCount(t), 0);
  });

  it("access denied: 403 code 15, no version", async () => {
    const t = await mkTable(await mkNamespace());
    const st = await putStaging(t, 1);
    proxy.rule = (r) => (isCanonicalPut(r) ? { status: 403, code: "AccessDenied" } : undefined);
    const res = await create(t, 1, st, gw.url);
    proxy.rule = () => undefined;
    assertError(res, 403, 15);
    assert.equal(rowCount(t), 0);
    assert.equal((await s3("HEAD", canonicalKey(t, 1))).status, 404);
  });

  it("a client that gave up waiting retries and gets the truthful answer", async () => {
    const t = await mkTable(await mkNamespace());
    const st = await putStaging(t, 1);
    proxy.rule = (r) => (isCanonicalPut(r) ? { delayMs: 600 } : undefined);
    const first = create(t, 1, st, gw.url, 100).catch((e) => e);
    const e = await first;
    assert.ok(e instanceof Error, "the first attempt timed out on the client");
    proxy.rule = () => undefined;
    // the retry waits for the first attempt, which holds the version's row
    const res = await create(t, 1, st, gw.url);
    const body = ok(res);
    assert.equal(body.version.version, 1);
    assert.equal(rowCount(t), 1);
    assert.deepEqual((await s3("GET", canonicalKey(t, 1))).body, st.bytes);
  });

  it("a batch that fails after a manifest was written removes that object, and only if it is still ours", async () => {
    const ns = await mkNamespace();
    const a = await mkTable(ns);
    const b = await mkTable(ns);
    const batch = async (sa, sb) =>
      req("POST", `/v1/table/version/batch-create`, {
        base: gw.url,
        body: {
          entries: [
            { id: [ns, a.name], version: 1, manifest_path: sa.key, naming_scheme: "V2" },
            // a wrong size: the catalog accepts the batch, finalization refuses it
            { id: [ns, b.name], version: 1, manifest_path: sb.key, manifest_size: sb.bytes.length + 1, naming_scheme: "V2" },
          ],
        },
      });
    const sa = await putStaging(a, 1, "a1");
    const sb = await putStaging(b, 1, "b1");
    assertError(await batch(sa, sb), 400, 13);
    assert.equal(rowCount(a) + rowCount(b), 0);
    assert.equal((await s3("HEAD", canonicalKey(a, 1))).status, 404, "a's canonical object was removed");
    assert.equal((await s3("HEAD", sa.key)).status, 200, "staging kept for a retry");

    // again, but someone replaces a's canonical object before the undo
    let replaced = false;
    proxy.rule = (r) => {
      if (!replaced && r.method === "HEAD" && r.url.split("?")[0].endsWith(canonicalKey(a, 1))) {
        replaced = true;
        return { before: s3("PUT", canonicalKey(a, 1), { body: Buffer.from("someone else's") }) };
      }
      return undefined;
    };
    assertError(await batch(sa, sb), 400, 13);
    proxy.rule = () => undefined;
    assert.ok(replaced);
    const got = await s3("GET", canonicalKey(a, 1));
    assert.equal(got.status, 200, "an object that is no longer ours is not removed");
    assert.deepEqual(got.body, Buffer.from("someone else's"));
  });

  it("an unreachable endpoint: 503 code 17, no version", async () => {
    const port = await freePort();
    const down = await startGateway(
      ["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", `s3://${BUCKET}/warehouse`, "--quiet",
        "--s3-retries", "1", "--s3-timeout-ms", "1000"],
      { env: { AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}` } },
    );
    assert.ok(down.url, down.log());
    try {
      const t = await mkTable(await mkNamespace());
      const st = await putStaging(t, 1);
      const res = await create(t, 1, st, down.url);
      assertError(res, 503, 17);
      assert.equal(rowCount(t), 0);
    } finally {
      await stop(down.proc);
    }
  });

  it("SIGKILL during a stream of commits loses no acknowledged version", async () => {
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", `s3://${BUCKET}/warehouse`, "--quiet"], {
      env: { AWS_ENDPOINT_URL_S3: proxy.url },
    });
    assert.ok(g.url, g.log());
    const t = await mkTable(await mkNamespace());
    const acked = new Map();
    let killed = false;
    // slow the canonical PUTs a little so that the kill lands mid-commit
    proxy.rule = (r) => (isCanonicalPut(r) ? { delayMs: 20 } : undefined);
    const writer = (async () => {
      for (let v = 1; v <= 200 && !killed; v++) {
        const st = await putStaging(t, v);
        let res;
        try {
          res = await create(t, v, st, g.url, 5000);
        } catch {
          break;
        }
        if (res.status !== 200) break;
        acked.set(v, st.bytes);
      }
    })();
    while (acked.size < 5) await new Promise((r) => setTimeout(r, 10));
    g.proc.kill("SIGKILL");
    killed = true;
    await writer;
    proxy.rule = () => undefined;
    assert.ok(acked.size >= 5);
    const versions = psql(`SELECT string_agg(version::text, ',' ORDER BY version) FROM lance_namespace.table_versions
                            WHERE id = string_to_array('${t.id}', '$')`).split(",").map(Number);
    for (const [v, bytes] of acked) {
      assert.ok(versions.includes(v), `acknowledged version ${v} is in the catalog`);
      assert.deepEqual((await s3("GET", canonicalKey(t, v))).body, bytes, `version ${v}'s canonical object`);
    }
    // every version the catalog has is readable, acknowledged or not
    for (const v of versions) assert.equal((await s3("HEAD", canonicalKey(t, v))).status, 200, `version ${v}`);
  });
});
