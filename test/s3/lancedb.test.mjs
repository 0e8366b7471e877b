// The real client on a bucket: @lancedb/lancedb 0.39.0 (test/interop's
// pinned copy) and 0.31.0 (test/s3/lancedb-0.31, pinned there), each through
// connectNamespace("rest") with no storage options and no AWS
// settings of its own: it reads and writes the bucket with what the catalog
// vends (storage_options of DeclareTable / DescribeTable).  Every committed
// version is in the catalog, its canonical object holds exactly the staging
// bytes the client wrote, and no staging object is left.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { psql, startGateway, stop, GW_DB, fresh } from "../rest/lib.mjs";
import { s3, md5etag, keyOf, listKeys, BUCKET, S3 } from "./s3lib.mjs";

// The gateway gets the keys; the client process must not see them.
const GW_ENV = {
  AWS_ENDPOINT_URL_S3: S3,
  AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID,
  AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
};
const CLIENTS = [
  ["0.39.0", createRequire(new URL("../interop/package.json", import.meta.url))("@lancedb/lancedb")],
  ["0.31.0", createRequire(new URL("./lancedb-0.31/package.json", import.meta.url))("@lancedb/lancedb")],
];

let NS;
const rows = (from, n, tag) => Array.from({ length: n }, (_, i) => ({ id: from + i, tag, score: (from + i) * 0.5 }));

function catalogRows(table) {
  const out = psql(`SELECT version || E'\\t' || manifest_path || E'\\t' || coalesce(e_tag, '') || E'\\t' || coalesce(manifest_size, -1)
                      FROM lance_namespace.table_versions
                     WHERE id = ARRAY['${NS}', '${table}'] AND branch = 'main' ORDER BY version`);
  return out ? out.split("\n").map((l) => {
    const [v, p, e, s] = l.split("\t");
    return { version: Number(v), manifest_path: p, e_tag: e, size: Number(s) };
  }) : [];
}

/** Catalog == client history; every canonical object is there with its ETag; no staging left. */
async function checkBucket(tbl, name) {
  const client = (await tbl.listVersions()).map((v) => v.version);
  const cat = catalogRows(name);
  assert.deepEqual(cat.map((r) => r.version), client, "catalog versions == client versions");
  for (const r of cat) {
    assert.match(r.manifest_path, /^s3:\/\//);
    const got = await s3("GET", keyOf(r.manifest_path));
    assert.equal(got.status, 200, `canonical ${r.manifest_path}`);
    assert.equal(got.body.length, r.size, "recorded size");
    assert.equal(md5etag(got.body), r.e_tag, "recorded e_tag is the MD5 of the canonical bytes");
  }
  const dir = keyOf(cat[0].manifest_path).replace(/\/[^/]*$/, "/");
  const keys = await listKeys(dir);
  assert.deepEqual(keys.filter((k) => !/\/\d+\.manifest$/.test(k)), [], "no staging object left");
  assert.deepEqual(keys.sort(), cat.map((r) => keyOf(r.manifest_path)).sort(), "manifests in the bucket == catalog rows");
  return cat;
}

for (const [clientVersion, lancedb] of CLIENTS) describe(`LanceDB ${clientVersion} on a bucket through the gateway`, () => {
  let gw;
  before(async () => {
    NS = fresh("lance");
    for (const k of Object.keys(process.env)) if (k.startsWith("AWS_")) delete process.env[k];
    gw = await startGateway(
      ["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", `s3://${BUCKET}/warehouse`, "--vend-credentials", "static"],
      { env: GW_ENV },
    );
    assert.ok(gw.url, gw.log());
  });
  after(async () => {
    if (gw?.proc) await stop(gw.proc);
  });

  it("creates a table in the bucket, appends, reads back", async () => {
    const db = await lancedb.connectNamespace("rest", { uri: gw.url });
    await db.createNamespace([NS]);
    const t = await db.createTable("events", rows(0, 10, "a"), [NS]);
    await t.add(rows(10, 5, "b"));
    assert.equal(await t.countRows(), 15);
    assert.equal(await t.version(), 2);
    const cat = await checkBucket(t, "events");
    assert.equal(cat[0].manifest_path.startsWith(`s3://${BUCKET}/warehouse/${NS}/events.lance/_versions/`), true);
  });

  it("loses a race with a real 409, retries, and both appends are there", async () => {
    const db1 = await lancedb.connectNamespace("rest", { uri: gw.url });
    const db2 = await lancedb.connectNamespace("rest", { uri: gw.url });
    const a = await db1.openTable("events", [NS]);
    const b = await db2.openTable("events", [NS]);
    const before = await a.version();
    const conflicts = () => (gw.log().match(/version\/create 409 /g) || []).length;
    const seen = conflicts();
    // concurrent appends through two connections: the catalog lets one
    // commit each version; the others get 409, rebase and retry
    const writes = [];
    for (let i = 0; i < 4; i++) {
      writes.push(a.add(rows(100 + i * 10, 3, `x${i}`)));
      writes.push(b.add(rows(200 + i * 10, 3, `y${i}`)));
    }
    await Promise.all(writes);
    assert.ok(conflicts() > seen, "the loser got a real 409 from the gateway");
    await a.checkoutLatest();
    assert.equal(await a.version(), before + 8);
    assert.equal(await a.countRows(), 15 + 24);
    await checkBucket(a, "events");
  });

  it("restores an old version and reopens from a fresh connection", async () => {
    const db = await lancedb.connectNamespace("rest", { uri: gw.url });
    const t = await db.openTable("events", [NS]);
    const latest = await t.version();
    await t.checkout(1);
    await t.restore();
    assert.equal(await t.countRows(), 10);
    assert.equal(await t.version(), latest + 1, "restore is a new commit");
    const fresh2 = await lancedb.connectNamespace("rest", { uri: gw.url });
    const t2 = await fresh2.openTable("events", [NS]);
    assert.equal(await t2.countRows(), 10);
    assert.equal(await t2.version(), await t.version());
    await checkBucket(t2, "events");
  });
});
