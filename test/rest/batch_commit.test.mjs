// batch_commit.test.mjs: POST /v1/table/batch-commit (BatchCommitTables)
// with manifest finalization of its create_table_version operations:
// mixed operations, results in request order, all or nothing for rows and
// for canonical manifest files.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {
  req, ok, assertError, mkNamespace, mkTable, createVersion, writeStaging, versionsDir, v2Name, fresh,
} from "./lib.mjs";

const BC = "/v1/table/batch-commit";

function canonical(t, version) {
  return path.join(versionsDir(t.location), v2Name(version));
}

async function versions(t) {
  const res = ok(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { body: {} }));
  return (res.versions ?? []).map((v) => v.version).sort((a, b) => a - b);
}

async function exists(id) {
  return (await req("POST", `/v1/table/${encodeURIComponent(id)}/exists?delimiter=%24`, { body: {} })).status === 200;
}

describe("batch-commit", () => {
  it("is served (no longer 406); an empty batch commits nothing", async () => {
    const res = ok(await req("POST", BC, { body: { operations: [] } }));
    assert.deepEqual(res.results, []);
    assertError(await req("POST", BC, { body: { operations: "x" } }), 400, 13);
    assertError(await req("GET", BC), 405, 0);
  });

  it("runs mixed operations in one transaction and answers in request order", async () => {
    const ns = await mkNamespace();
    const t1 = await mkTable(ns);
    const t0 = await mkTable(ns);
    const gone = await mkTable(ns);
    for (let v = 1; v <= 3; v++) ok((await createVersion(t0, v)).res);
    const newName = fresh("t");
    const s1 = writeStaging(t1.location, 1, "manifest one");
    const s2 = writeStaging(t1.location, 2, "manifest two");
    const s3 = writeStaging(t0.location, 4, "manifest four");
    const body = { operations: [
      { create_table_version: { id: [ns, t1.name], version: 1, manifest_path: s1.rel, naming_scheme: "V2" } },
      { declare_table: { id: [ns, newName] } },
      { create_table_version: { id: [ns, t1.name], version: 2, manifest_path: s2.abs, naming_scheme: "V2" } },
      { delete_table_versions: { id: [ns, t0.name], ranges: [{ start_version: 1, end_version: 3 }] } },
      { create_table_version: { id: [ns, t0.name], version: 4, manifest_path: `file://${s3.abs}`, naming_scheme: "V2" } },
      { deregister_table: { id: [ns, gone.name] } },
    ] };
    const res = ok(await req("POST", BC, { body }));
    assert.equal(res.results.length, 6);
    assert.deepEqual(res.results.map((r) => Object.keys(r)[0]),
      ["create_table_version", "declare_table", "create_table_version", "delete_table_versions",
        "create_table_version", "deregister_table"]);
    assert.equal(typeof res.transaction_id, "string");
    // canonical paths come back as object-store paths, whatever form was sent
    const v1 = res.results[0].create_table_version.version;
    const v2 = res.results[2].create_table_version.version;
    const v4 = res.results[4].create_table_version.version;
    assert.equal(v1.version, 1);
    assert.equal(v1.manifest_path, canonical(t1, 1).slice(1));
    assert.equal(v2.manifest_path, canonical(t1, 2).slice(1));
    assert.equal(v4.manifest_path, canonical(t0, 4).slice(1));
    assert.equal(v1.manifest_size, s1.bytes.length);
    // files: canonical manifests hold the staging bytes; staging files are gone
    assert.equal(fs.readFileSync(canonical(t1, 1), "utf8"), "manifest one");
    assert.equal(fs.readFileSync(canonical(t1, 2), "utf8"), "manifest two");
    assert.equal(fs.readFileSync(canonical(t0, 4), "utf8"), "manifest four");
    for (const s of [s1, s2, s3]) assert.ok(!fs.existsSync(s.abs), `staging ${s.abs} left behind`);
    // rows
    assert.deepEqual(await versions(t1), [1, 2]);
    assert.deepEqual(await versions(t0), [3, 4]);
    assert.ok(await exists(`${ns}$${newName}`));
    assert.ok(!(await exists(gone.id)));
    assert.ok(res.results[1].declare_table.location);
  });

  it("applies nothing when the 3rd of 5 operations conflicts (409 code 14)", async () => {
    const ns = await mkNamespace();
    const a = await mkTable(ns);
    const b = await mkTable(ns);
    const c = await mkTable(ns);
    ok((await createVersion(c, 1)).res);
    const sa1 = writeStaging(a.location, 1);
    const sb1 = writeStaging(b.location, 1);
    const sc1 = writeStaging(c.location, 1);
    const sa2 = writeStaging(a.location, 2);
    const declared = fresh("t");
    const res = await req("POST", BC, { body: { operations: [
      { create_table_version: { id: [ns, a.name], version: 1, manifest_path: sa1.rel } },
      { create_table_version: { id: [ns, b.name], version: 1, manifest_path: sb1.rel } },
      { create_table_version: { id: [ns, c.name], version: 1, manifest_path: sc1.rel } },
      { create_table_version: { id: [ns, a.name], version: 2, manifest_path: sa2.rel } },
      { declare_table: { id: [ns, declared] } },
    ] } });
    assertError(res, 409, 14);
    assert.deepEqual(await versions(a), []);
    assert.deepEqual(await versions(b), []);
    assert.deepEqual(await versions(c), [1]);
    assert.ok(!(await exists(`${ns}$${declared}`)));
    // no canonical file of the batch's other versions; staging files stay for a retry
    assert.ok(!fs.existsSync(canonical(a, 1)));
    assert.ok(!fs.existsSync(canonical(b, 1)));
    assert.ok(!fs.existsSync(canonical(a, 2)));
    for (const s of [sa1, sb1, sc1, sa2]) assert.ok(fs.existsSync(s.abs));
  });

  it("removes the canonical files it already wrote when a later manifest fails", async () => {
    const ns = await mkNamespace();
    const a = await mkTable(ns);
    const b = await mkTable(ns);
    const sa = writeStaging(a.location, 1);
    const sb = writeStaging(b.location, 1);
    // the catalog accepts all three; the 3rd staging manifest's size is wrong
    const sa2 = writeStaging(a.location, 2, "twelve bytes");
    const res = await req("POST", BC, { body: { operations: [
      { create_table_version: { id: [ns, a.name], version: 1, manifest_path: sa.rel } },
      { create_table_version: { id: [ns, b.name], version: 1, manifest_path: sb.rel } },
      { create_table_version: { id: [ns, a.name], version: 2, manifest_path: sa2.rel, manifest_size: 99 } },
    ] } });
    assertError(res, 400, 13);
    assert.deepEqual(await versions(a), []);
    assert.deepEqual(await versions(b), []);
    assert.ok(!fs.existsSync(canonical(a, 1)), "canonical file of operation 1 left behind");
    assert.ok(!fs.existsSync(canonical(b, 1)), "canonical file of operation 2 left behind");
    assert.ok(fs.existsSync(sa.abs) && fs.existsSync(sb.abs));
    // the same batch with the right size then succeeds
    const fixed = ok(await req("POST", BC, { body: { operations: [
      { create_table_version: { id: [ns, a.name], version: 1, manifest_path: sa.rel } },
      { create_table_version: { id: [ns, b.name], version: 1, manifest_path: sb.rel } },
      { create_table_version: { id: [ns, a.name], version: 2, manifest_path: sa2.rel, manifest_size: 12 } },
    ] } }));
    assert.deepEqual(fixed.results.map((r) => r.create_table_version.version.version), [1, 1, 2]);
    assert.deepEqual(await versions(a), [1, 2]);
  });

  it("confines create_table_version manifests like version/create", async () => {
    const ns = await mkNamespace();
    const a = await mkTable(ns);
    const res = await req("POST", BC, { body: { operations: [
      { create_table_version: { id: [ns, a.name], version: 1, manifest_path: "/etc/passwd" } },
    ] } });
    assertError(res, 400, 13);
    assert.deepEqual(await versions(a), []);
    // an operation naming two kinds is the catalog's InvalidInput
    assertError(await req("POST", BC, { body: { operations: [
      { declare_table: { id: [ns, "x"] }, deregister_table: { id: [ns, a.name] } },
    ] } }), 400, 13);
  });
});
