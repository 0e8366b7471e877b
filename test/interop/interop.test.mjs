// Real-client interop: an unmodified LanceDB (npm @lancedb/lancedb) writer
// commits every table version through the gateway and PostgreSQL.
import { describe, it, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import * as lancedb from "@lancedb/lancedb";

const URI = process.env.GW_URL;
const PG_BINDIR = process.env.PG_BINDIR;
const NS = "interop";

function psql(sql) {
  const r = spawnSync(path.join(PG_BINDIR, "psql"), ["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-F", "\t", "-c", sql], {
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`psql failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** The catalog's rows for a table: [{version, manifest_path}] by version. */
function catalogVersions(table) {
  const out = psql(
    `SELECT version, manifest_path FROM lance_namespace.table_versions
      WHERE id = ARRAY['${NS}', '${table}'] AND branch = 'main' ORDER BY version`,
  );
  return out ? out.split("\n").map((l) => {
    const [v, p] = l.split("\t");
    return { version: Number(v), manifest_path: p };
  }) : [];
}

/** Check catalog rows against the client's history and the files. */
async function checkCatalog(tbl, name) {
  const client = (await tbl.listVersions()).map((v) => v.version);
  const rows = catalogVersions(name);
  const versions = rows.map((r) => r.version);
  assert.deepEqual(versions, client, "catalog versions == client commits");
  assert.deepEqual(versions, Array.from({ length: versions.length }, (_, i) => i + 1), "no gaps");
  for (const r of rows) assert.ok(fs.existsSync(r.manifest_path), `manifest file ${r.manifest_path}`);
  // no manifest on disk that the catalog does not know
  const dir = path.dirname(rows[0].manifest_path);
  const onDisk = fs.readdirSync(dir).filter((f) => /^\d+\.manifest$/.test(f)).sort();
  assert.deepEqual(onDisk, rows.map((r) => path.basename(r.manifest_path)).sort(), "manifests on disk == catalog rows");
  return rows;
}

const rows = (from, n, tag) => Array.from({ length: n }, (_, i) => ({ id: from + i, tag, score: (from + i) * 0.5 }));

describe("LanceDB through the REST gateway", () => {
  let db;
  before(async () => {
    db = await lancedb.connectNamespace("rest", { uri: URI });
  });

  it("creates a namespace and a table, appends twice, reads back", async () => {
    await db.createNamespace([NS]);
    const ns = await db.listNamespaces();
    assert.ok(ns.namespaces.includes(NS));
    const t = await db.createTable("events", rows(0, 10, "a"), [NS]);
    assert.equal(await t.countRows(), 10);
    await t.add(rows(10, 5, "b"));
    await t.add(rows(15, 7, "c"));
    assert.equal(await t.countRows(), 22);
    assert.equal(await t.version(), 3);
    const got = await t.query().where("tag = 'b'").toArray();
    assert.deepEqual(got.map((r) => r.id).sort((x, y) => x - y), [10, 11, 12, 13, 14]);
    assert.deepEqual(await db.tableNames([NS]), ["events"]);
    await checkCatalog(t, "events");
  });

  it("checks out older versions", async () => {
    const t = await db.openTable("events", [NS]);
    const expected = { 1: 10, 2: 15, 3: 22 };
    for (const [v, n] of Object.entries(expected)) {
      await t.checkout(Number(v));
      assert.equal(await t.countRows(), n, `version ${v}`);
    }
    await t.checkoutLatest();
    assert.equal(await t.countRows(), 22);
  });

  it("reopens from a fresh connection", async () => {
    const db2 = await lancedb.connectNamespace("rest", { uri: URI });
    const t = await db2.openTable("events", [NS]);
    assert.equal(await t.countRows(), 22);
    assert.equal(await t.version(), 3);
    const all = await t.query().toArray();
    assert.equal(new Set(all.map((r) => r.id)).size, 22);
  });

  it("two concurrent writers: every append survives", async () => {
    const dbA = await lancedb.connectNamespace("rest", { uri: URI });
    const dbB = await lancedb.connectNamespace("rest", { uri: URI });
    const tA = await dbA.openTable("events", [NS]);
    const tB = await dbB.openTable("events", [NS]);
    const writes = [];
    for (let i = 0; i < 4; i++) {
      writes.push(tA.add(rows(1000 + i * 10, 3, `A${i}`)));
      writes.push(tB.add(rows(2000 + i * 10, 3, `B${i}`)));
    }
    await Promise.all(writes);
    const db3 = await lancedb.connectNamespace("rest", { uri: URI });
    const t = await db3.openTable("events", [NS]);
    assert.equal(await t.countRows(), 22 + 8 * 3);
    const ids = new Set((await t.query().toArray()).map((r) => r.id));
    for (let i = 0; i < 4; i++) {
      for (let k = 0; k < 3; k++) {
        assert.ok(ids.has(1000 + i * 10 + k), `writer A row ${1000 + i * 10 + k}`);
        assert.ok(ids.has(2000 + i * 10 + k), `writer B row ${2000 + i * 10 + k}`);
      }
    }
    assert.equal(await t.version(), 3 + 8);
    await checkCatalog(t, "events");
  });

  it("restores an old version as a new commit", async () => {
    const t = await db.openTable("events", [NS]);
    const before = await t.version();
    await t.checkout(2);
    await t.restore();
    assert.equal(await t.countRows(), 15);
    assert.equal(await t.version(), before + 1);
    const fresh = await (await lancedb.connectNamespace("rest", { uri: URI })).openTable("events", [NS]);
    assert.equal(await fresh.countRows(), 15);
    const rowsInCatalog = await checkCatalog(fresh, "events");
    assert.equal(rowsInCatalog.length, before + 1);
  });

  it("the catalog's versions describe the table's history", async () => {
    const t = await db.openTable("events", [NS]);
    const versions = await t.listVersions();
    const res = await fetch(`${URI}/v1/table/${NS}%24events/version/list?delimiter=%24`, { method: "POST", body: "null" });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.deepEqual(body.versions.map((v) => v.version), versions.map((v) => v.version));
    // the object-store path LanceDB itself sends (no leading "/"), on list as on create
    for (const v of body.versions) {
      assert.ok(!v.manifest_path.startsWith("/"), v.manifest_path);
      assert.ok(fs.existsSync(`/${v.manifest_path}`), v.manifest_path);
      assert.equal(fs.statSync(`/${v.manifest_path}`).size, v.manifest_size);
    }
  });

  it("registers a table plain LanceDB wrote: opens it, appends, checks out and restores through the namespace", async () => {
    const dir = path.join(fs.realpathSync(process.env.GW_ROOT), "plain");
    const plain = await lancedb.connect(dir);
    const p = await plain.createTable("legacy", rows(0, 4, "p"));
    await p.add(rows(4, 4, "q"));
    await p.add(rows(8, 2, "r"));
    assert.equal(await p.version(), 3);
    const location = path.join(dir, "legacy.lance");
    const res = await fetch(`${URI}/v1/table/${NS}%24legacy/register?delimiter=%24`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ location }),
    });
    assert.equal(res.status, 200, await res.text());
    assert.deepEqual(catalogVersions("legacy").map((r) => r.version), [1, 2, 3], "the existing versions are imported");

    const t = await db.openTable("legacy", [NS]);
    assert.equal(await t.version(), 3);
    assert.equal(await t.countRows(), 10);
    await t.add(rows(10, 5, "s"));
    assert.equal(await t.version(), 4);
    assert.equal(await t.countRows(), 15);
    await checkCatalog(t, "legacy");
    await t.checkout(1);
    assert.equal(await t.countRows(), 4);
    await t.restore();
    assert.equal(await t.version(), 5);
    const again = await (await lancedb.connectNamespace("rest", { uri: URI })).openTable("legacy", [NS]);
    assert.equal(await again.countRows(), 4);
    assert.equal((await checkCatalog(again, "legacy")).length, 5);
  });

  it("after the client's cleanup of old versions, the catalog hands out no manifest that is gone", async () => {
    const t = await db.createTable("cleaned", rows(0, 2, "x"), [NS]);
    for (let i = 0; i < 6; i++) await t.add(rows(2 + i * 2, 2, "y"));
    const before = catalogVersions("cleaned");
    assert.equal(before.length, 7);
    await new Promise((r) => setTimeout(r, 50));
    await t.optimize({ cleanupOlderThan: new Date() });
    const all = catalogVersions("cleaned");
    const gone = all.filter((r) => !fs.existsSync(r.manifest_path)).map((r) => r.version);
    assert.ok(gone.length > 0, "cleanup removed old manifests");
    const describe = (v) => fetch(`${URI}/v1/table/${NS}%24cleaned/version/describe?delimiter=%24`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ version: v }),
    });
    // describe of a removed version: TableVersionNotFound, and the row is retired
    const res = await describe(gone[0]);
    assert.equal(res.status, 404, await res.text());
    assert.ok(!catalogVersions("cleaned").some((r) => r.version === gone[0]));
    assert.equal(psql(`SELECT count(*) FROM lance_namespace.history WHERE operation = 'RetireTableVersion'
      AND id = ARRAY['${NS}', 'cleaned']`), "1");
    // the sweep retires the rest: the catalog's versions are the manifests on disk
    const sweep = spawnSync(process.env.GW_BIN, ["--db", process.env.GW_DB, "--root", process.env.GW_ROOT, "--sweep", "--sweep-min-age", "0"],
      { encoding: "utf8" });
    assert.equal(sweep.status, 0, sweep.stderr);
    const left = catalogVersions("cleaned");
    for (const r of left) assert.ok(fs.existsSync(r.manifest_path), `${r.manifest_path} is on disk`);
    assert.deepEqual(left.map((r) => r.version), all.filter((r) => !gone.includes(r.version)).map((r) => r.version));
    for (const v of gone) assert.equal((await describe(v)).status, 404);
    // the client carries on: its history is the catalog's, and it appends
    const again = await (await lancedb.connectNamespace("rest", { uri: URI })).openTable("cleaned", [NS]);
    assert.deepEqual((await again.listVersions()).map((v) => v.version), left.map((r) => r.version));
    assert.equal(await again.countRows(), 14);
    await again.add(rows(100, 1, "z"));
    assert.equal(await again.countRows(), 15);
  });

  it("after every delete the catalog allows, the client's commit loop goes on (a version number is acknowledged once)", async () => {
    const t = await db.createTable("deleted", rows(0, 2, "d"), [NS]);
    for (let i = 0; i < 4; i++) await t.add(rows(2 + i * 2, 2, "d"));
    const del = (ranges) => fetch(`${URI}/v1/table/${NS}%24deleted/version/delete?delimiter=%24`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ranges }),
    });
    // older versions may go; the latest (5) may not, by any range
    assert.equal((await del([{ start_version: 2, end_version: 4 }])).status, 200);
    for (const ranges of [[{ start_version: 5, end_version: 6 }], [{ start_version: 0, end_version: -1 }]]) {
      const r = await del(ranges);
      assert.equal(r.status, 400, await r.text());
    }
    assert.deepEqual(catalogVersions("deleted").map((r) => r.version), [1, 4, 5]);
    // the writer goes on at 6, 7, and a fresh connection at 8, each once
    await t.add(rows(10, 1, "d"));
    await t.add(rows(11, 1, "d"));
    const again = await (await lancedb.connectNamespace("rest", { uri: URI })).openTable("deleted", [NS]);
    await again.add(rows(12, 1, "d"));
    assert.equal(await again.countRows(), 13);
    assert.deepEqual(catalogVersions("deleted").map((r) => r.version), [1, 4, 5, 6, 7, 8]);
    // and after deleting all but the latest, two writers race without losing a row
    assert.equal((await del([{ start_version: 0, end_version: 8 }])).status, 200);
    const other = await (await lancedb.connectNamespace("rest", { uri: URI })).openTable("deleted", [NS]);
    await Promise.all([again.add(rows(20, 1, "r")), other.add(rows(21, 1, "r"))]);
    // each writer's handle reads the version it committed; a fresh one reads the latest
    const fresh = await (await lancedb.connectNamespace("rest", { uri: URI })).openTable("deleted", [NS]);
    assert.equal(await fresh.countRows(), 15);
    assert.deepEqual(catalogVersions("deleted").map((r) => r.version), [8, 9, 10]);
  });

  it("after the client's cleanup, version/list through the REST route hands out exactly the manifests on disk", async () => {
    const t = await db.createTable("listed", rows(0, 2, "x"), [NS]);
    for (let i = 0; i < 8; i++) await t.add(rows(2 + i * 2, 2, "y"));
    assert.equal(catalogVersions("listed").length, 9);
    const list = async (q = "") => {
      const res = await fetch(`${URI}/v1/table/${NS}%24listed/version/list?delimiter=%24${q}`);
      assert.equal(res.status, 200);
      return (await res.json()).versions;
    };
    // the gateway has found every manifest (its presence cache is warm)
    assert.deepEqual((await list()).map((v) => v.version), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await new Promise((r) => setTimeout(r, 50));
    await t.optimize({ cleanupOlderThan: new Date() });
    const dir = path.dirname(catalogVersions("listed")[0].manifest_path);
    const onDisk = () => fs.readdirSync(dir).filter((f) => /^\d+\.manifest$/.test(f)).sort();
    const listed = await list();
    // the cleanup removed the manifests of 1 to 8 (at least): none of them is handed out
    assert.ok(listed.length > 0 && listed.every((v) => v.version >= 9), JSON.stringify(listed));
    assert.deepEqual(listed.map((v) => path.basename(v.manifest_path)).sort(), onDisk(), "version/list == manifests on disk");
    for (const v of listed) assert.ok(fs.existsSync(`/${v.manifest_path}`), v.manifest_path);
    // the rows of what is gone are retired; the client's history is what is listed
    assert.deepEqual(catalogVersions("listed").map((r) => r.version), listed.map((v) => v.version));
    const again = await (await lancedb.connectNamespace("rest", { uri: URI })).openTable("listed", [NS]);
    assert.deepEqual((await again.listVersions()).map((v) => v.version), listed.map((v) => v.version));
    await again.add(rows(100, 1, "z"));
    assert.equal(await again.countRows(), 19);
  });

  it("drops a table: the catalog entry, then its files", async () => {
    const t = await db.createTable("scratch", rows(0, 3, "s"), [NS]);
    const loc = catalogVersions("scratch")[0].manifest_path;
    await t.add(rows(3, 3, "s"));
    await db.dropTable("scratch", [NS]);
    assert.ok(!(await db.tableNames([NS])).includes("scratch"));
    assert.ok(!fs.existsSync(loc), "the manifests are gone");
    assert.ok(!fs.existsSync(path.dirname(path.dirname(loc))), "and the table's directory");
  });
});
