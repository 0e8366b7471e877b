// Table routes: declare, register, describe, exists, list, list all,
// rename, deregister (files stay) and drop (files go).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { req, ok, assertError, fresh, mkNamespace, mkTable, createVersion, psql, startGateway, stop, v2Name, writeStaging, sleep, ROOT, TMP, GW_DB } from "./lib.mjs";

describe("tables", () => {
  it("declares a table at <root>/<ns>/<name>.lance with managed versioning", async () => {
    const ns = await mkNamespace();
    const name = fresh("t");
    const d = ok(await req("POST", `/v1/table/${ns}$${name}/declare?delimiter=%24`, { body: {} }));
    assert.equal(d.location, path.join(fs.realpathSync(ROOT), ns, `${name}.lance`));
    assert.equal(d.managed_versioning, true);
    const desc = ok(await req("POST", `/v1/table/${ns}%24${name}/describe?delimiter=%24`, { body: {} }));
    assert.equal(desc.managed_versioning, true);
    assert.equal(desc.location, d.location);
    const uri = ok(await req("POST", `/v1/table/${ns}$${name}/describe?with_table_uri=true`));
    assert.ok(typeof uri.table_uri === "string" && uri.table_uri.length > 0);
    const e = await req("POST", `/v1/table/${ns}$${name}/exists`);
    assert.equal(e.status, 200);
  });

  it("exists honours version, in the body and as a query parameter (404 code 11 when that version is missing)", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    assertError(await req("POST", `/v1/table/${t.enc}/exists`, { body: { version: 1 } }), 404, 11);
    ok((await createVersion(t, 1)).res);
    assert.equal((await req("POST", `/v1/table/${t.enc}/exists`, { body: { version: 1 } })).status, 200);
    assert.equal((await req("POST", `/v1/table/${t.enc}/exists?version=1`)).status, 200);
    assertError(await req("POST", `/v1/table/${t.enc}/exists?version=2`), 404, 11);
    assertError(await req("POST", `/v1/table/${t.enc}/exists`, { body: { version: "1" } }), 400, 13);
    assert.equal((await req("POST", `/v1/table/${t.enc}/exists`)).status, 200);
  });

  it("declare conflicts: 409 code 5; missing namespace: 404 code 1", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    assertError(await req("POST", `/v1/table/${t.enc}/declare`, { body: {} }), 409, 5);
    assertError(await req("POST", `/v1/table/${fresh("nons")}$x/declare`, { body: {} }), 404, 1);
  });

  it("404 code 4 for a missing table", async () => {
    const ns = await mkNamespace();
    const id = `${ns}$${fresh("none")}`;
    assertError(await req("POST", `/v1/table/${id}/describe`), 404, 4);
    assertError(await req("POST", `/v1/table/${id}/exists`), 404, 4);
    assertError(await req("POST", `/v1/table/${id}/deregister`), 404, 4);
    assertError(await req("POST", `/v1/table/${id}/drop`), 404, 4);
    assertError(await req("POST", `/v1/table/${id}/version/list`, { body: null }), 404, 4);
    assertError(await req("POST", `/v1/table/${id}/version/describe`, { body: { version: 1 } }), 404, 4);
    assertError(await req("POST", `/v1/table/${id}/rename`, { body: { new_table_name: "zz" } }), 404, 4);
  });

  it("registers a table at a given location; duplicates are 409 code 5", async () => {
    const ns = await mkNamespace();
    const loc = path.join(ROOT, ns, "registered.lance");
    const r = ok(await req("POST", `/v1/table/${ns}$reg/register`, { body: { location: loc } }));
    assert.equal(r.location, loc);
    assertError(await req("POST", `/v1/table/${ns}$reg/register`, { body: { location: loc } }), 409, 5);
    ok(await req("POST", `/v1/table/${ns}$reg/describe`));
  });

  it("lists tables of a namespace with pagination, and all tables", async () => {
    const ns = await mkNamespace();
    const names = ["t0", "t1", "t2", "t3", "t4"];
    for (const n of names) await mkTable(ns, n);
    const all = ok(await req("GET", `/v1/namespace/${ns}/table/list?delimiter=%24`));
    assert.deepEqual(all.tables, names);
    const seen = [];
    let token;
    do {
      const q = "limit=2" + (token ? `&page_token=${encodeURIComponent(token)}` : "");
      const page = ok(await req("GET", `/v1/namespace/${ns}/table/list?${q}`));
      seen.push(...page.tables);
      token = page.page_token;
    } while (token);
    assert.deepEqual(seen, names);
    for (const target of ["/v1/table", "/v1/table/", "/v1/table?delimiter=%24"]) {
      const everything = ok(await req("GET", target));
      for (const n of names) assert.ok(everything.tables.includes(`${ns}$${n}`), `${target} lacks ${ns}$${n}`);
    }
    const hashed = ok(await req("GET", `/v1/table?delimiter=%23`));
    assert.ok(hashed.tables.includes(`${ns}#t0`));
    // walk all tables in pages
    const walked = [];
    token = undefined;
    do {
      const q = "limit=3" + (token ? `&page_token=${encodeURIComponent(token)}` : "");
      const page = ok(await req("GET", `/v1/table?${q}`));
      walked.push(...page.tables);
      token = page.page_token;
    } while (token);
    assert.equal(new Set(walked).size, walked.length);
    for (const n of names) assert.ok(walked.includes(`${ns}$${n}`));
  });

  it("include_declared=false hides tables without versions", async () => {
    const ns = await mkNamespace();
    const declared = await mkTable(ns, "declared");
    const written = await mkTable(ns, "written");
    ok((await createVersion(written, 1)).res);
    const withDeclared = ok(await req("GET", `/v1/namespace/${ns}/table/list?include_declared=true`));
    assert.deepEqual(withDeclared.tables, ["declared", "written"]);
    const onlyWritten = ok(await req("GET", `/v1/namespace/${ns}/table/list?include_declared=false`));
    assert.deepEqual(onlyWritten.tables, ["written"]);
    // ListAllTables honours it too
    const all = ok(await req("GET", `/v1/table?include_declared=false&limit=10000`));
    assert.ok(all.tables.includes(`${ns}$written`));
    assert.ok(!all.tables.includes(`${ns}$declared`));
    const allWithDeclared = ok(await req("GET", `/v1/table?limit=10000`));
    assert.ok(allWithDeclared.tables.includes(`${ns}$declared`));
    void declared;
  });

  it("renames a table, within and across namespaces", async () => {
    const ns = await mkNamespace();
    const ns2 = await mkNamespace();
    const t = await mkTable(ns, "old");
    await mkTable(ns, "taken");
    assertError(await req("POST", `/v1/table/${t.enc}/rename`, { body: { new_table_name: "taken" } }), 409, 5);
    ok(await req("POST", `/v1/table/${t.enc}/rename`, { body: { new_table_name: "new" } }));
    assertError(await req("POST", `/v1/table/${t.enc}/describe`), 404, 4);
    ok(await req("POST", `/v1/table/${ns}$new/describe`));
    ok(await req("POST", `/v1/table/${ns}$new/rename`, { body: { new_table_name: "moved", new_namespace_id: [ns2] } }));
    ok(await req("POST", `/v1/table/${ns2}$moved/describe`));
  });

  it("RegisterTable imports the versions already on disk (V1 and V2 names), with the registration", async () => {
    const ns = await mkNamespace();
    const base = path.join(fs.realpathSync(ROOT), ns);
    const put = (loc, name, content) => {
      fs.mkdirSync(path.join(loc, "_versions"), { recursive: true });
      fs.writeFileSync(path.join(loc, "_versions", name), content);
    };
    const v2loc = path.join(base, "written_v2.lance");
    for (const v of [1, 2, 3]) put(v2loc, v2Name(v), `v2 manifest ${v}`.repeat(v));
    put(v2loc, `${v2Name(4)}-staging-uuid`, "a writer's staging file");
    put(v2loc, "007.manifest", "not a canonical name");
    put(v2loc, ".gw-1-1.tmp", "temporary");
    put(v2loc, "3.manifest", "the V1 name of version 3: the V2 name wins");
    const v1loc = path.join(base, "written_v1.lance");
    for (const v of [1, 2]) put(v1loc, `${v}.manifest`, `v1 manifest ${v}`);

    const list = async (id) => ok(await req("POST", `/v1/table/${encodeURIComponent(id)}/version/list?delimiter=%24`, { body: {} })).versions;
    const t2 = { id: `${ns}$v2`, enc: encodeURIComponent(`${ns}$v2`), location: v2loc };
    const r2 = ok(await req("POST", `/v1/table/${t2.enc}/register?delimiter=%24`,
      { body: { location: v2loc, versions: [{ version: 99, manifest_path: "/etc/passwd" }] } }));
    assert.equal(r2.location, v2loc);
    const got2 = await list(t2.id);
    assert.deepEqual(got2.map((v) => v.version), [1, 2, 3], "the listing, not what the client sent");
    for (const v of got2) {
      assert.equal(v.manifest_path, path.join(v2loc, "_versions", v2Name(v.version)).slice(1));
      assert.equal(v.manifest_size, fs.statSync(path.join(v2loc, "_versions", v2Name(v.version))).size);
    }
    // the next commit lands at latest + 1; an imported version is taken
    assertError((await createVersion(t2, 3)).res, 409, 14);
    ok((await createVersion(t2, 4)).res);
    const d = ok(await req("POST", `/v1/table/${t2.enc}/describe`, { body: {} }));
    assert.equal(d.version, 4);

    const t1 = `${ns}$v1`;
    ok(await req("POST", `/v1/table/${encodeURIComponent(t1)}/register?delimiter=%24`, { body: { location: `${v1loc}/` } }));
    const got1 = await list(t1);
    assert.deepEqual(got1.map((v) => [v.version, path.basename(v.manifest_path)]), [[1, "1.manifest"], [2, "2.manifest"]]);
    assert.equal(psql(`SELECT string_agg(naming_scheme, ',' ORDER BY version) FROM lance_namespace.versions v
      JOIN lance_namespace.entries e ON e.id = v.table_id WHERE e.path = ARRAY['${ns}', 'v1']`), "V1,V1");

    // all or nothing: a registration that fails imports nothing
    assertError(await req("POST", `/v1/table/${encodeURIComponent(t1)}/register?delimiter=%24`, { body: { location: v2loc } }), 409, 5);
    assert.deepEqual((await list(t1)).map((v) => v.version), [1, 2]);
    // a table owns its location (issue 39): not even Overwrite moves t1 to
    // t2's; once t2 is deregistered, Overwrite replaces the history with the
    // listing of the new location
    assertError(await req("POST", `/v1/table/${encodeURIComponent(t1)}/register?delimiter=%24`, { body: { location: v2loc, mode: "Overwrite" } }), 409, 5);
    assertError(await req("POST", `/v1/table/${encodeURIComponent(`${ns}$twin`)}/register?delimiter=%24`, { body: { location: `${v2loc}/` } }), 409, 5);
    assertError(await req("POST", `/v1/table/${encodeURIComponent(`${ns}$inner`)}/declare?delimiter=%24`, { body: { location: `${v2loc}/inner.lance` } }), 409, 5);
    assert.deepEqual((await list(t1)).map((v) => v.version), [1, 2]);
    ok(await req("POST", `/v1/table/${t2.enc}/deregister?delimiter=%24`, { body: {} }));
    ok(await req("POST", `/v1/table/${encodeURIComponent(t1)}/register?delimiter=%24`, { body: { location: v2loc, mode: "Overwrite" } }));
    assert.deepEqual((await list(t1)).map((v) => v.version), [1, 2, 3, 4]);
    // an empty location: no versions
    const empty = path.join(base, "empty.lance");
    ok(await req("POST", `/v1/table/${encodeURIComponent(`${ns}$e`)}/register?delimiter=%24`, { body: { location: empty } }));
    assert.deepEqual(await list(`${ns}$e`), []);
  });

  it("a manifest a client's cleanup removed: describe answers 404 code 11 and retires the row; --sweep retires the rest", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns, fresh("clean"));
    for (const v of [1, 2, 3, 4, 5]) ok((await createVersion(t, v)).res);
    const file = (v) => path.join(t.location, "_versions", v2Name(v));
    const describe = (v) => req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: v } });
    // the catalog's rows (version/list leaves out what is gone: the next test)
    const list = async () => psql(`SELECT version FROM lance_namespace.table_versions
      WHERE id = ARRAY['${ns}', '${t.name}'] AND branch = 'main' ORDER BY version`).split("\n").filter(Boolean).map(Number);
    // cleanup removes the manifests of 1, 2 and 3 and keeps the latest
    for (const v of [1, 2, 3]) fs.unlinkSync(file(v));
    assertError(await describe(1), 404, 11);
    assert.deepEqual(await list(), [2, 3, 4, 5], "describe retired version 1");
    assert.equal(psql(`SELECT detail->>'version' || ' ' || (detail->>'reason') FROM lance_namespace.history
      WHERE operation = 'RetireTableVersion' AND id = ARRAY['${ns}', '${t.name}']`), "1 manifest not found");
    ok(await describe(4));
    // the latest manifest is never taken for removed (an unmounted disk must not empty the catalog)
    fs.unlinkSync(file(5));
    ok(await describe(5));
    // --dry-run lists, retires nothing
    const dry = await startGateway(["--db", GW_DB, "--root", ROOT, "--sweep", "--dry-run", "--sweep-min-age", "0"], { expectExit: true });
    // the sweep covers every table under the shared root: it must report nothing about this one
    assert.ok(dry.exitCode === 0 || !dry.log().includes(t.name), dry.log());
    assert.deepEqual(await list(), [2, 3, 4, 5]);
    // the sweep retires every version whose manifest is gone, below the latest on disk (4)
    const g = await startGateway(["--db", GW_DB, "--root", ROOT, "--sweep", "--sweep-min-age", "0"], { expectExit: true });
    assert.ok(g.exitCode === 0 || !g.log().includes(t.name), g.log());
    assert.deepEqual(await list(), [4, 5], g.log());
    assert.equal(psql(`SELECT string_agg(detail->>'version', ',' ORDER BY (detail->>'version')::int) FROM lance_namespace.history
      WHERE operation = 'RetireTableVersion' AND id = ARRAY['${ns}', '${t.name}']`), "1,2,3");
    assertError(await describe(2), 404, 11);
    // version/list hands out what is on disk (5's manifest, if describe could not rewrite it, is not)
    assert.deepEqual(ok(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { body: {} })).versions.map((v) => v.version),
      [4, 5].filter((v) => fs.existsSync(file(v))));
    assert.deepEqual(await list(), [4, 5]);
  });

  it("version/list leaves out every version whose manifest is gone, on each page and on a branch; those below a later manifest are retired, a missing latest is kept", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns, fresh("listgone"));
    const all = [1, 2, 3, 4, 5, 6, 7, 8];
    for (const v of all) ok((await createVersion(t, v)).res);
    const file = (v, dir = t.location) => path.join(dir, "_versions", v2Name(v));
    const list = async (body = {}) => ok(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { body }));
    const nums = (r) => r.versions.map((v) => v.version);
    const rows = (branch = "main") => psql(`SELECT version FROM lance_namespace.table_versions
      WHERE id = ARRAY['${ns}', '${t.name}'] AND branch = '${branch}' ORDER BY version`).split("\n").filter(Boolean).map(Number);
    // every page, following the tokens: at most limit versions each
    const pages = async (body) => {
      const out = [];
      let token;
      for (let i = 0; i < 20; i++) {
        const r = await list({ ...body, limit: 3, ...(token ? { page_token: token } : {}) });
        assert.ok(r.versions.length <= 3, JSON.stringify(r));
        out.push(nums(r));
        token = r.page_token;
        if (!token) return out;
      }
      assert.fail("the pages did not end");
    };
    // the loop has found every manifest (its presence cache is warm)
    assert.deepEqual(nums(await list()), all);
    assert.deepEqual((await pages({})).flat(), all);
    // a client's cleanup removes 2, 3, 5 and 6
    for (const v of [2, 3, 5, 6]) fs.unlinkSync(file(v));
    // the pages are the catalog's (a short page keeps its token): [1], [4], [7, 8]
    assert.deepEqual(await pages({}), [[1], [4], [7, 8]]);
    assert.deepEqual(rows(), [1, 4, 7, 8], "the list retired 2, 3, 5 and 6");
    assert.equal(psql(`SELECT string_agg(detail->>'version', ',' ORDER BY (detail->>'version')::int) FROM lance_namespace.history
      WHERE operation = 'RetireTableVersion' AND id = ARRAY['${ns}', '${t.name}']`), "2,3,5,6");
    assertError(await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: 5 } }), 404, 11);
    // GET with query parameters, descending
    const g = ok(await req("GET", `/v1/table/${t.enc}/version/list?delimiter=%24&descending=true`));
    assert.deepEqual(nums(g), [8, 7, 4, 1]);
    // the latest's manifest gone: not handed out, and not retired (no later manifest beside it);
    // once published, the catalog no longer holds its bytes to rewrite it
    for (let i = 0; psql(`SELECT count(*) FROM lance_namespace.publications p JOIN lance_namespace.entries e
      ON e.id = p.table_id WHERE e.path = ARRAY['${ns}', '${t.name}']`) !== "0"; i++) {
      assert.ok(i < 200, "the publisher did not prune the table's publications");
      await sleep(25);
    }
    fs.unlinkSync(file(8));
    assert.deepEqual(nums(await list()), [1, 4, 7]);
    assert.deepEqual(nums(await list({ descending: true, limit: 1 })), []);
    assert.deepEqual(rows(), [1, 4, 7, 8]);
    // a branch: its own manifests under tree/dev
    ok(await req("POST", `/v1/table/${t.enc}/branches/create?delimiter=%24`, { body: { name: "dev" } }));
    const dev = path.join(t.location, "tree", "dev");
    for (const v of [9, 10, 11, 12]) {
      const st = writeStaging(dev, v, `dev ${v}`);
      ok(await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`, { body: { version: v, branch: "dev", manifest_path: st.rel } }));
    }
    assert.deepEqual(nums(await list({ branch: "dev" })), [9, 10, 11, 12]);
    for (const v of [9, 11]) fs.unlinkSync(file(v, dev));
    assert.deepEqual(await pages({ branch: "dev" }), [[10], [12]]);
    assert.deepEqual(rows("dev"), [10, 12]);
    assert.deepEqual(nums(await list()), [1, 4, 7], "main is unaffected");
  });

  it("a manifest removed after describes found it: the next describe still sees it gone (the loop's presence cache follows removals, renames, moved directories and a replaced symbolic link)", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns, fresh("seen"));
    for (const v of [1, 2, 3, 4, 5]) ok((await createVersion(t, v)).res);
    const vdir = path.join(t.location, "_versions");
    const file = (v) => path.join(vdir, v2Name(v));
    const describe = (v) => req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: v } });
    for (const v of [1, 2, 3, 4, 5]) ok(await describe(v));
    // the gateway watches the directories above what it found, or this test proves nothing
    const fdinfo = `/proc/${process.env.GW_PID}/fdinfo`;
    const watches = fs.readdirSync(fdinfo).map((fd) => { try { return fs.readFileSync(path.join(fdinfo, fd), "utf8"); } catch { return ""; } })
      .join("").match(/^inotify wd:/gm) ?? [];
    assert.ok(watches.length >= 4, `inotify watches of the gateway: ${watches.length}`);
    fs.unlinkSync(file(1));
    assertError(await describe(1), 404, 11);
    fs.renameSync(file(2), `${file(2)}.moved`);
    assertError(await describe(2), 404, 11);
    // the directory moved aside, and a new one in its place without version 3
    fs.renameSync(vdir, `${vdir}.old`);
    fs.mkdirSync(vdir);
    for (const v of [4, 5]) fs.linkSync(path.join(`${vdir}.old`, v2Name(v)), file(v));
    assertError(await describe(3), 404, 11);
    ok(await describe(4));
    // a directory on the way that is a symbolic link, replaced by a directory without version 4
    fs.renameSync(vdir, `${vdir}.real`);
    fs.symlinkSync(`${vdir}.real`, vdir);
    ok(await describe(4));
    fs.unlinkSync(vdir);
    fs.mkdirSync(vdir);
    fs.linkSync(path.join(`${vdir}.real`, v2Name(5)), file(5));
    assertError(await describe(4), 404, 11);
    ok(await describe(5));
  });

  it("deregisters keeping the files; drops deleting them, catalog first, confined to the table's location", async () => {
    const ns = await mkNamespace();
    const t1 = await mkTable(ns, "a");
    const t2 = await mkTable(ns, "b");
    const v = await createVersion(t1, 1);
    ok(v.res);
    const dr = ok(await req("POST", `/v1/table/${t1.enc}/deregister`, { body: {} }));
    assert.equal(dr.location, t1.location);
    assertError(await req("POST", `/v1/table/${t1.enc}/exists`), 404, 4);
    assert.ok(fs.existsSync(path.join(t1.location, "_versions")), "deregister must keep files");

    // t2: versions, data files in subdirectories, a symbolic link to a file
    // outside the table, and a sibling whose name extends t2's
    ok((await createVersion(t2, 1)).res);
    ok((await createVersion(t2, 2)).res);
    fs.mkdirSync(path.join(t2.location, "data", "deep"), { recursive: true });
    fs.writeFileSync(path.join(t2.location, "data", "deep", "x.lance"), "data");
    const outside = path.join(TMP, fresh("outside"));
    fs.writeFileSync(outside, "keep me");
    fs.symlinkSync(outside, path.join(t2.location, "data", "link"));
    const sibling = `${t2.location}x`;
    fs.mkdirSync(sibling, { recursive: true });
    fs.writeFileSync(path.join(sibling, "keep"), "keep");
    const dropped = ok(await req("POST", `/v1/table/${t2.enc}/drop`));
    assert.equal(dropped.location, t2.location);
    assertError(await req("POST", `/v1/table/${t2.enc}/describe`), 404, 4);
    assert.ok(!fs.existsSync(t2.location), "drop must delete the table's files");
    assert.equal(fs.readFileSync(outside, "utf8"), "keep me", "a symbolic link is removed, not followed");
    assert.ok(fs.existsSync(path.join(sibling, "keep")), "only the table's own location goes");
    assert.equal(psql(`SELECT count(*) FROM lance_namespace.history WHERE operation = 'DropTable'
      AND detail->>'location' = '${t2.location}'`), "1");
    // deregistered files stay where they are
    assert.ok(fs.existsSync(path.join(t1.location, "_versions")));
  });

  it("refuses to drop a table registered outside the root (403 code 15, nothing changes) unless --drop-outside-root", async () => {
    const ns = await mkNamespace();
    const name = fresh("ext");
    const location = path.join(TMP, fresh("external"), `${name}.lance`);
    fs.mkdirSync(path.join(location, "_versions"), { recursive: true });
    fs.writeFileSync(path.join(location, "_versions", "1.manifest"), "m");
    const id = encodeURIComponent(`${ns}$${name}`);
    ok(await req("POST", `/v1/table/${id}/register?delimiter=%24`, { body: { location } }));
    const e = await req("POST", `/v1/table/${id}/drop?delimiter=%24`);
    assertError(e, 403, 15);
    assert.match(e.json.error, /outside the catalog root/);
    ok(await req("POST", `/v1/table/${id}/describe?delimiter=%24`));
    assert.ok(fs.existsSync(path.join(location, "_versions", "1.manifest")));
    assert.equal(psql(`SELECT count(*) FROM lance_namespace.history WHERE operation = 'DropTable'
      AND detail->>'location' = '${location}'`), "0");

    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", ROOT, "--drop-outside-root"]);
    try {
      ok(await req("POST", `/v1/table/${id}/drop?delimiter=%24`, { base: g.url }));
    } finally {
      await stop(g.proc);
    }
    assert.ok(!fs.existsSync(location), "--drop-outside-root: the data go");
    assert.ok(fs.existsSync(path.dirname(location)), "but nothing above the location");
  });

  it("--sweep deletes what a crash left of a dropped table, unless a table is there again", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns, fresh("c"));
    ok((await createVersion(t, 1)).res);
    const back = await mkTable(ns, fresh("r"));
    ok((await createVersion(back, 1)).res);
    // the catalog half of DropTable only, as if the gateway crashed before the files
    psql(`SELECT lance_namespace.lance_drop_table(ARRAY['${ns}', '${t.name}'])`);
    psql(`SELECT lance_namespace.lance_drop_table(ARRAY['${ns}', '${back.name}'])`);
    assert.ok(fs.existsSync(t.location));
    // a new table at the second location: its files are not leftovers
    ok(await req("POST", `/v1/table/${encodeURIComponent(`${ns}$${fresh("again")}`)}/register?delimiter=%24`,
      { body: { location: back.location } }));
    const g = await startGateway(["--db", GW_DB, "--root", ROOT, "--sweep", "--sweep-min-age", "0"], { expectExit: true });
    assert.equal(g.exitCode, 0, g.log());
    assert.ok(!fs.existsSync(t.location), "the sweep deletes the leftovers");
    assert.ok(fs.existsSync(path.join(back.location, "_versions")), "and leaves a table that is there again");
  });
});
