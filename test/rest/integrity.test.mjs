// Issue 39: a table owns its location, a committed manifest is never
// touched, a version number is acknowledged once, tried as an adversarial
// tenant would, through REST alone.  Tenants A and B have write on adv_a
// and adv_b only and call the gateway with their API keys (--db-auth),
// the gateway connecting as README's authenticator, granted what it says.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import {
  GW_DB, ROOT, assertError, createVersion, fresh, mkNamespace, mkTable, ok, psql, req,
  startGateway, startTenantPair, v2Name, writeStaging,
} from "./lib.mjs";

describe("integrity across tenants (issue 39)", () => {
  let g;
  let A;
  let B;
  let nsA;
  let nsB;
  let victim;
  const as = (who, method, target, body) =>
    req(method, target, { base: g.url, headers: { "x-api-key": who.key }, body: body ?? {} });
  const manifests = (t) => fs.readdirSync(path.join(t.location, "_versions")).filter((f) => f.endsWith(".manifest")).sort();

  before(async () => {
    ({ gw: g, A, B } = await startTenantPair());
    nsA = A.ns;
    nsB = B.ns;
    victim = await mkTable(nsA, "victim");
    for (const v of [1, 2]) ok((await createVersion(victim, v)).res);
  });
  after(async () => {
    await g.stop();
  });

  it("1: B cannot declare a table at A's location, so it cannot drop A's data", async () => {
    for (const location of [victim.location, `${victim.location}/`, `file://${victim.location}`,
      path.join(victim.location, "data"), path.dirname(victim.location)]) {
      const r = await as(B, "POST", `/v1/table/${encodeURIComponent(`${nsB}$evil`)}/declare?delimiter=%24`, { location });
      assertError(r, 403, 15);
      assert.ok(!r.text.includes(`${nsA}$`), `the refusal names no table of A's: ${r.text}`);
    }
    assertError(await as(B, "POST", `/v1/table/${encodeURIComponent(`${nsB}$evil`)}/drop?delimiter=%24`), 404, 4);
    assert.deepEqual(manifests(victim), [v2Name(2), v2Name(1)].sort());
  });

  it("2: B cannot register A's location to read its history, nor probe which of A's tables exist", async () => {
    const there = await as(B, "POST", `/v1/table/${encodeURIComponent(`${nsB}$spy`)}/register?delimiter=%24`, { location: victim.location });
    const missing = await as(B, "POST", `/v1/table/${encodeURIComponent(`${nsB}$spy`)}/register?delimiter=%24`,
      { location: path.join(path.dirname(victim.location), "nothing-here.lance") });
    assertError(there, 403, 15);
    assertError(missing, 403, 15);
    assert.equal(there.json.detail, missing.json.detail, "the same answer whether or not a dataset is there");
    assertError(await as(B, "POST", `/v1/table/${encodeURIComponent(`${nsB}$spy`)}/version/list?delimiter=%24`), 404, 4);
    // a bucket elsewhere is no better
    assertError(await as(B, "POST", `/v1/table/${encodeURIComponent(`${nsB}$spy`)}/register?delimiter=%24`,
      { location: "s3://another-bucket/adv_a/victim.lance" }), 403, 15);
    // B may place a table in its own namespace's directory
    ok(await as(B, "POST", `/v1/table/${encodeURIComponent(`${nsB}$own`)}/declare?delimiter=%24`,
      { location: path.join(ROOT, nsB, "own-place.lance") }));
  });

  it("3: two tables cannot share a location, so a commit of one cannot replace the other's manifest", async () => {
    const p = await mkNamespace();
    const w = await mkTable(p, "w");
    ok((await createVersion(w, 1, { content: "w one" })).res);
    for (const location of [w.location, `${w.location}//`, `file://${w.location}`, path.join(w.location, "tree", "x")]) {
      assertError(await req("POST", `/v1/table/${encodeURIComponent(`${p}$w_twin`)}/declare?delimiter=%24`, { body: { location } }), 409, 5);
    }
    assert.equal(fs.readFileSync(path.join(w.location, "_versions", v2Name(1)), "utf8"), "w one");
    // a sibling whose name only begins the same is its own place
    ok(await req("POST", `/v1/table/${encodeURIComponent(`${p}$w2`)}/declare?delimiter=%24`, { body: { location: `${w.location}2` } }));
  });

  it("4: --sweep leaves the manifests of a table whose location another shares (a catalog from before 0.6.0)", async () => {
    const p = await mkNamespace();
    const x = await mkTable(p, "x");
    for (const v of [1, 2]) ok((await createVersion(x, v)).res);
    psql(`ALTER TABLE lance_namespace.entries DISABLE TRIGGER entries_location_check;
      SELECT lance_namespace.lance_declare_table(ARRAY['${p}', 'x_twin'], '${x.location}');
      ALTER TABLE lance_namespace.entries ENABLE TRIGGER entries_location_check`);
    const s = await startGateway(["--db", GW_DB, "--root", ROOT, "--sweep", "--sweep-min-age", "0"], { expectExit: true });
    assert.deepEqual(manifests(x), [v2Name(1), v2Name(2)].sort(), s.log());
    // and DropTable of either is refused: deleting it would delete the other's data
    assertError(await req("POST", `/v1/table/${encodeURIComponent(`${p}$x_twin`)}/drop?delimiter=%24`, { body: {} }), 400, 13);
    assert.deepEqual(manifests(x), [v2Name(1), v2Name(2)].sort());
    ok(await req("POST", `/v1/table/${encodeURIComponent(`${p}$x_twin`)}/deregister?delimiter=%24`, { body: {} }));
  });

  it("4': B's DropTable refuses to delete a location that a table B cannot see shares", async () => {
    const mine = path.join(ROOT, nsB, "shared.lance");
    psql(`ALTER TABLE lance_namespace.entries DISABLE TRIGGER entries_location_check;
      SELECT lance_namespace.lance_declare_table(ARRAY['${nsA}', 'hidden'], '${mine}/inner');
      SELECT lance_namespace.lance_declare_table(ARRAY['${nsB}', 'shared'], '${mine}');
      ALTER TABLE lance_namespace.entries ENABLE TRIGGER entries_location_check`);
    const vdir = path.join(mine, "inner", "_versions");
    fs.mkdirSync(vdir, { recursive: true });
    fs.writeFileSync(path.join(vdir, v2Name(1)), "A's manifest");
    const r = await as(B, "POST", `/v1/table/${encodeURIComponent(`${nsB}$shared`)}/drop?delimiter=%24`);
    assertError(r, 400, 13);
    assert.doesNotMatch(r.text, /hidden/, "the refusal names no table B cannot see");
    assert.equal(fs.readFileSync(path.join(vdir, v2Name(1)), "utf8"), "A's manifest");
  });

  it("6: a version number is acknowledged once, after a delete too", async () => {
    const t = await mkTable(nsA, fresh("once"));
    for (const v of [1, 2, 3]) ok((await createVersion(t, v, { content: `one manifest ${v}` })).res);
    ok(await as(A, "POST", `/v1/table/${t.enc}/version/delete?delimiter=%24`, { ranges: [{ start_version: 1, end_version: 3 }] }));
    for (const v of [1, 2]) {
      const st = writeStaging(t.location, v, "another manifest");
      assertError(await as(A, "POST", `/v1/table/${t.enc}/version/create?delimiter=%24`,
        { version: v, manifest_path: st.rel, naming_scheme: "V2" }), 409, 14);
      assert.equal(fs.readFileSync(path.join(t.location, "_versions", v2Name(v)), "utf8"), `one manifest ${v}`);
    }
    // the latest is never deleted, by the route or by a tenant's direct DELETE
    assertError(await as(A, "POST", `/v1/table/${t.enc}/version/delete?delimiter=%24`, { ranges: [{ start_version: 3, end_version: 4 }] }), 400, 13);
    assert.match(psql(`SET ROLE ${A.role}; DO $$BEGIN
        DELETE FROM lance_namespace.versions v USING lance_namespace.entries e
         WHERE v.table_id = e.id AND e.path = ARRAY['${nsA}', '${t.name}'];
        RAISE NOTICE 'deleted';
      EXCEPTION WHEN OTHERS THEN RAISE NOTICE '%', SQLERRM; END$$; SELECT 'done'`), /done/);
    assert.equal(psql(`SELECT string_agg(version::text, ',') FROM lance_namespace.table_versions WHERE id = ARRAY['${nsA}', '${t.name}']`), "3");
    // and the next number works
    ok(await as(A, "POST", `/v1/table/${t.enc}/version/create?delimiter=%24`,
      { version: 4, manifest_path: writeStaging(t.location, 4, "four").rel, naming_scheme: "V2" }));
  });

  it("a table declared again where a dropped table's files were left meets none of them", async () => {
    const p = await mkNamespace();
    const t = await mkTable(p, "again");
    ok((await createVersion(t, 1, { content: "old one" })).res);
    // the catalog half of DropTable only, as if the gateway crashed before the files
    psql(`SELECT lance_namespace.lance_drop_table(ARRAY['${p}', 'again'])`);
    assertError(await req("POST", `/v1/table/${encodeURIComponent(`${p}$again`)}/declare?delimiter=%24`, { body: {} }), 409, 5);
    assertError(await req("POST", `/v1/table/${encodeURIComponent(`${p}$again`)}/describe?delimiter=%24`, { body: {} }), 404, 4);
    // once the leftovers are gone (--sweep, or by hand) it can be declared
    fs.rmSync(t.location, { recursive: true });
    const again = ok(await req("POST", `/v1/table/${encodeURIComponent(`${p}$again`)}/declare?delimiter=%24`, { body: {} }));
    assert.equal(again.location, t.location);
  });

  it("a branch deleted and created again under its name meets none of the old branch's manifests", async () => {
    const p = await mkNamespace();
    const t = await mkTable(p, "br");
    ok((await createVersion(t, 1)).res);
    ok(await req("POST", `/v1/table/${t.enc}/branches/create?delimiter=%24`, { body: { name: "dev" } }));
    const dev = path.join(t.location, "tree", "dev", "_versions");
    const st = writeStaging(path.join(t.location, "tree", "dev"), 2, "dev two");
    ok(await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`,
      { body: { version: 2, manifest_path: st.rel, naming_scheme: "V2", branch: "dev" } }));
    assert.ok(fs.existsSync(path.join(dev, v2Name(2))));
    ok(await req("POST", `/v1/table/${t.enc}/branches/delete?delimiter=%24`, { body: { name: "dev" } }));
    assert.ok(!fs.existsSync(path.join(dev, v2Name(2))), "the deleted branch's manifests go");
    // a leftover (a crash after the delete's COMMIT) keeps a new branch of that name from being created
    fs.mkdirSync(dev, { recursive: true });
    fs.writeFileSync(path.join(dev, v2Name(2)), "left over");
    assertError(await req("POST", `/v1/table/${t.enc}/branches/create?delimiter=%24`, { body: { name: "dev" } }), 409, 23);
    fs.rmSync(path.join(dev, v2Name(2)));
    ok(await req("POST", `/v1/table/${t.enc}/branches/create?delimiter=%24`, { body: { name: "dev" } }));
    // main's own files stayed
    assert.ok(fs.existsSync(path.join(t.location, "_versions", v2Name(1))));
  });
});
