// Table versions: create (with manifest finalization), describe, list,
// delete, batch-create, confinement of file access, and 32 racers.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {
  req, ok, assertError, fresh, mkNamespace, mkTable, createVersion, writeStaging,
  versionsDir, v2Name, startGateway, stop, psql, holdLock, sleep, GW_URL, GW_DB, ROOT, TMP,
} from "./lib.mjs";

const canonicalOf = (t, v) => path.join(versionsDir(t.location), v2Name(v));

// Every staging path that leaves the table's _versions directory (by text,
// by a symbolic link to a file, by a symbolic link in place of _versions) is
// refused with 400 code 13, and nothing outside the root is touched.
async function checkConfinement(base) {
  const ns = await mkNamespace();
  const t = await mkTable(ns);
  const other = await mkTable(ns);
  const vdir = versionsDir(t.location);
  fs.mkdirSync(vdir, { recursive: true });
  const outside = fs.mkdtempSync(path.join(TMP, "outside-"));
  fs.writeFileSync(path.join(outside, "m"), "evil");
  fs.writeFileSync(path.join(t.location, "not_versions.manifest"), "x");
  const otherStaging = writeStaging(other.location, 1, "other");
  fs.symlinkSync(path.join(outside, "m"), path.join(vdir, "link.manifest-1"));
  const cases = [
    "/etc/passwd",
    "etc/passwd",
    path.join(outside, "m"),
    path.join(t.location, "not_versions.manifest"),
    path.join(vdir, "..", "not_versions.manifest"),
    `${vdir}/./x`,
    otherStaging.abs,
    path.join(vdir, "link.manifest-1"),
    path.join(vdir, "does-not-exist.manifest-1"),
    "",
  ];
  for (const p of cases) {
    const res = await req("POST", `/v1/table/${t.enc}/version/create`, { body: { version: 1, manifest_path: p }, base });
    assertError(res, 400, 13);
  }
  // a symlinked _versions directory that leaves the table
  const t3 = await mkTable(ns);
  fs.mkdirSync(t3.location, { recursive: true });
  fs.symlinkSync(outside, versionsDir(t3.location));
  const res = await req("POST", `/v1/table/${t3.enc}/version/create`, {
    body: { version: 1, manifest_path: path.join(versionsDir(t3.location), "m") },
    base,
  });
  assertError(res, 400, 13);
  assert.match(res.json.error, /symbolic link/);
  // a table directory that is itself a symbolic link, above _versions
  const t4 = await mkTable(ns);
  const elsewhere = fs.mkdtempSync(path.join(TMP, "elsewhere-"));
  fs.mkdirSync(path.join(elsewhere, "_versions"));
  fs.writeFileSync(path.join(elsewhere, "_versions", "stg.manifest-1"), "elsewhere");
  fs.mkdirSync(path.dirname(t4.location), { recursive: true });
  fs.symlinkSync(elsewhere, t4.location);
  const res4 = await req("POST", `/v1/table/${t4.enc}/version/create`, {
    body: { version: 1, manifest_path: path.join(versionsDir(t4.location), "stg.manifest-1") },
    base,
  });
  assertError(res4, 400, 13);
  assert.match(res4.json.error, /symbolic link/);
  assert.deepEqual(fs.readdirSync(path.join(elsewhere, "_versions")), ["stg.manifest-1"]);
  // a symbolic link that stays under the root: _versions of t5 is the
  // directory of another table, so a commit would write into that table
  const t5 = await mkTable(ns);
  fs.mkdirSync(t5.location, { recursive: true });
  fs.mkdirSync(path.dirname(otherStaging.abs), { recursive: true });
  fs.symlinkSync(path.relative(t5.location, path.dirname(otherStaging.abs)), versionsDir(t5.location));
  const res5 = await req("POST", `/v1/table/${t5.enc}/version/create`, {
    body: { version: 1, manifest_path: path.join(versionsDir(t5.location), path.basename(otherStaging.abs)) },
    base,
  });
  assertError(res5, 400, 13);
  assert.match(res5.json.error, /symbolic link/);
  assert.deepEqual(fs.readdirSync(path.dirname(otherStaging.abs)), [path.basename(otherStaging.abs)]);
  assert.equal(fs.readFileSync(path.join(outside, "m"), "utf8"), "evil");
  assert.deepEqual(fs.readdirSync(outside), ["m"]);
  assertError(await req("POST", `/v1/table/${t.enc}/version/describe`, { body: { version: 1 }, base }), 404, 11);
  assert.ok(fs.existsSync(otherStaging.abs));
}

describe("versions", () => {
  it("copies the staging manifest to the canonical path and answers in the client's form", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const { res, st } = await createVersion(t, 1, { form: "rel" });
    const body = ok(res);
    const canon = canonicalOf(t, 1);
    assert.equal(body.version.version, 1);
    // one spelling on every route: the object-store path (no leading "/"), as
    // LanceDB sends it and Lance's DirectoryNamespace answers
    assert.equal(body.version.manifest_path, canon.slice(1), "the object-store path");
    assert.equal(body.version.manifest_size, st.bytes.length, "size filled in from the file");
    assert.deepEqual(fs.readFileSync(canon), st.bytes);
    assert.ok(!fs.existsSync(st.abs), "staging file removed after commit");
    const cs = fs.statSync(canon);
    assert.equal(cs.ino, st.ino, "the canonical name is a hard link to the staging inode");
    assert.equal(cs.nlink, 1, "only the canonical name is left");

    const abs = await createVersion(t, 2, { form: "abs" });
    assert.equal(ok(abs.res).version.manifest_path, canonicalOf(t, 2).slice(1), "absolute in, the same spelling out");

    const d = ok(await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: 1 } }));
    assert.equal(d.version.manifest_path, canon.slice(1), "describe spells it as create did");
    assert.equal(d.version.manifest_size, st.bytes.length);
    const desc = ok(await req("POST", `/v1/table/${t.enc}/describe`));
    assert.equal(desc.version, 2);
  });

  it("replaces an orphan canonical file (an attempt that did not commit) by a link", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const canon = canonicalOf(t, 1);
    fs.mkdirSync(path.dirname(canon), { recursive: true });
    fs.writeFileSync(canon, "orphan of an attempt that did not commit");
    const { res, st } = await createVersion(t, 1, { content: "the committed manifest" });
    ok(res);
    assert.deepEqual(fs.readFileSync(canon), st.bytes);
    assert.equal(fs.statSync(canon).ino, st.ino);
    assert.deepEqual(fs.readdirSync(path.dirname(canon)).filter((f) => f.startsWith(".gw-")), [],
      "no temporary name left behind");
  });

  it("a duplicate version is 409 code 14 and describe returns the winner", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const first = await createVersion(t, 1, { content: "winner" });
    ok(first.res);
    const second = await createVersion(t, 1, { content: "loser!" });
    assertError(second.res, 409, 14);
    assert.equal(fs.readFileSync(canonicalOf(t, 1), "utf8"), "winner");
    assert.ok(fs.existsSync(second.st.abs), "a loser's staging file is left to its writer");
    const d = ok(await req("POST", `/v1/table/${t.enc}/version/describe`, { body: { version: 1 } }));
    assert.equal(d.version.manifest_size, 6);
  });

  it("32 concurrent racers on one version: one 200, 31 x 409 code 14", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const N = 32;
    const stagings = Array.from({ length: N }, (_, i) => writeStaging(t.location, 1, `racer ${i} ${"x".repeat(i)}`));
    const results = await Promise.all(
      stagings.map((st) =>
        req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`, {
          body: { version: 1, manifest_path: st.rel, manifest_size: st.bytes.length },
        }),
      ),
    );
    const winners = results.map((r, i) => [r, i]).filter(([r]) => r.status === 200);
    assert.equal(winners.length, 1, `statuses: ${results.map((r) => r.status).join(",")}`);
    for (const r of results) if (r.status !== 200) assertError(r, 409, 14);
    const w = winners[0][1];
    assert.deepEqual(fs.readFileSync(canonicalOf(t, 1)), stagings[w].bytes, "the winner's manifest is in place");
    const d = ok(await req("POST", `/v1/table/${t.enc}/version/describe`, { body: { version: 1 } }));
    assert.equal(d.version.manifest_size, stagings[w].bytes.length);
    const list = ok(await req("POST", `/v1/table/${t.enc}/version/list`, { body: null }));
    assert.equal(list.versions.length, 1);
  });

  it("manifest_size mismatch is 400 code 13 and records nothing", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const { res, st } = await createVersion(t, 1, { extra: { manifest_size: 99999 } });
    assertError(res, 400, 13);
    assert.ok(!fs.existsSync(canonicalOf(t, 1)));
    assert.ok(fs.existsSync(st.abs));
    assertError(await req("POST", `/v1/table/${t.enc}/version/describe`, { body: { version: 1 } }), 404, 11);
    // the correct size works
    ok((await createVersion(t, 1, { content: "12345", extra: { manifest_size: 5 } })).res);
  });

  it("confines file access to the table's _versions directory", async () => {
    await checkConfinement(GW_URL);
  });

  it("confines file access the same way with --no-openat2 (the walk by O_NOFOLLOW)", async () => {
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", ROOT, "--no-openat2"]);
    try {
      await checkConfinement(g.url);
      // and a version still commits through the fallback
      const t = await mkTable(await mkNamespace());
      const { res, st } = await createVersion(t, 1, { base: g.url, content: "walked" });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(fs.readFileSync(canonicalOf(t, 1)), st.bytes);
      assert.ok(!fs.existsSync(st.abs), "staging file removed after commit");
    } finally {
      await stop(g.proc);
    }
  });

  it("version/create input errors are 400 code 13, missing tables 404 code 4", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const st = writeStaging(t.location, 1);
    for (const body of [
      { manifest_path: st.rel },
      { version: "one", manifest_path: st.rel },
      { version: -1, manifest_path: st.rel },
      { version: 1 },
      { version: 1, manifest_path: 42 },
      { version: 1, manifest_path: st.rel, metadata: "nope" },
      { version: 1, manifest_path: st.rel, manifest_size: "big" },
      { version: 1.5, manifest_path: st.rel },
    ]) {
      assertError(await req("POST", `/v1/table/${t.enc}/version/create`, { body }), 400, 13);
    }
    assertError(await req("POST", `/v1/table/${ns}$nope/version/create`, { body: { version: 1, manifest_path: st.rel } }), 404, 4);
    assertError(await req("POST", `/v1/table/${fresh("nons")}$nope/version/create`, { body: { version: 1, manifest_path: st.rel } }), 404, 1);
    ok(await req("POST", `/v1/table/${t.enc}/version/create`, { body: { version: 1, manifest_path: st.rel } }));
  });

  it("lists versions (POST null body, GET, descending, pages) and deletes ranges", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    for (let v = 1; v <= 6; v++) ok((await createVersion(t, v)).res);
    const asc = ok(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { body: "null" }));
    assert.deepEqual(asc.versions.map((v) => v.version), [1, 2, 3, 4, 5, 6]);
    for (const v of asc.versions) {
      assert.ok(!v.manifest_path.startsWith("/"), v.manifest_path);
      assert.ok(fs.existsSync(`/${v.manifest_path}`), v.manifest_path);
    }
    const viaGet = ok(await req("GET", `/v1/table/${t.enc}/version/list`));
    assert.equal(viaGet.versions.length, 6);
    const desc = ok(await req("POST", `/v1/table/${t.enc}/version/list?descending=true`));
    assert.deepEqual(desc.versions.map((v) => v.version), [6, 5, 4, 3, 2, 1]);
    const seen = [];
    let token;
    do {
      const q = "limit=4&descending=true" + (token ? `&page_token=${encodeURIComponent(token)}` : "");
      const page = ok(await req("POST", `/v1/table/${t.enc}/version/list?${q}`));
      seen.push(...page.versions.map((v) => v.version));
      token = page.page_token;
    } while (token);
    assert.deepEqual(seen, [6, 5, 4, 3, 2, 1]);
    const latest = ok(await req("POST", `/v1/table/${t.enc}/version/describe`, { body: {} }));
    assert.equal(latest.version.version, 6);

    const del = ok(await req("POST", `/v1/table/${t.enc}/version/delete`, {
      body: { ranges: [{ start_version: 2, end_version: 4 }] },
    }));
    assert.equal(del.deleted_count, 2);
    assertError(await req("POST", `/v1/table/${t.enc}/version/describe`, { body: { version: 2 } }), 404, 11);
    const after = ok(await req("POST", `/v1/table/${t.enc}/version/list`));
    assert.deepEqual(after.versions.map((v) => v.version), [1, 4, 5, 6]);
    assertError(await req("POST", `/v1/table/${t.enc}/version/delete`, { body: { ranges: "all" } }), 400, 13);

    // a version number is acknowledged once (issue 39): a deleted number is
    // not created again, with its old bytes or others, and the canonical
    // file the delete kept is not touched
    const canon2 = canonicalOf(t, 2);
    const bytes2 = fs.readFileSync(canon2);
    const inode2 = fs.statSync(canon2).ino;
    assertError((await createVersion(t, 2, { content: bytes2 })).res, 409, 14);
    assertError((await createVersion(t, 2, { content: "other two" })).res, 409, 14);
    assert.deepEqual(fs.readFileSync(canon2), bytes2);
    assert.equal(fs.statSync(canon2).ino, inode2, "the kept file is not replaced");
    assertError(await req("POST", `/v1/table/${t.enc}/version/describe`, { body: { version: 2 } }), 404, 11);
    // nor is the latest version deleted (its number would be free again)
    assertError(await req("POST", `/v1/table/${t.enc}/version/delete`, { body: { ranges: [{ start_version: 5, end_version: -1 }] } }), 400, 13);
    assert.deepEqual(ok(await req("POST", `/v1/table/${t.enc}/version/list`)).versions.map((v) => v.version), [1, 4, 5, 6]);

    // a canonical file of a number never acknowledged (a crash before
    // COMMIT) with identical bytes is kept; with other bytes the catalog's
    // version wins
    const canon7 = canonicalOf(t, 7);
    fs.writeFileSync(canon7, "seven");
    const inode7 = fs.statSync(canon7).ino;
    ok((await createVersion(t, 7, { content: "seven" })).res);
    assert.equal(fs.statSync(canon7).ino, inode7, "the identical file is kept, not replaced");
    fs.writeFileSync(canonicalOf(t, 8), "a leftover");
    ok((await createVersion(t, 8, { content: "new eight" })).res);
    assert.equal(fs.readFileSync(canonicalOf(t, 8), "utf8"), "new eight");
  });

  it("batch-creates versions of several tables atomically", async () => {
    const ns = await mkNamespace();
    const a = await mkTable(ns);
    const b = await mkTable(ns);
    const sa = writeStaging(a.location, 1, "a1");
    const sb = writeStaging(b.location, 1, "b1");
    const res = ok(await req("POST", `/v1/table/version/batch-create?delimiter=%24`, {
      body: {
        entries: [
          { id: [ns, a.name], version: 1, manifest_path: sa.rel },
          { id: [ns, b.name], version: 1, manifest_path: sb.abs },
        ],
      },
    }));
    assert.equal(res.versions.length, 2);
    assert.equal(res.versions[0].manifest_path, canonicalOf(a, 1).slice(1));
    assert.equal(res.versions[1].manifest_path, canonicalOf(b, 1).slice(1));
    assert.equal(fs.readFileSync(canonicalOf(a, 1), "utf8"), "a1");
    assert.equal(fs.readFileSync(canonicalOf(b, 1), "utf8"), "b1");

    // a conflict on one entry fails the whole batch
    const sa2 = writeStaging(a.location, 2, "a2");
    const sb1 = writeStaging(b.location, 1, "b1 again");
    const conflict = await req("POST", `/v1/table/version/batch-create`, {
      body: {
        entries: [
          { id: [ns, a.name], version: 2, manifest_path: sa2.rel },
          { id: [ns, b.name], version: 1, manifest_path: sb1.rel },
        ],
      },
    });
    assertError(conflict, 409, 14);
    assertError(await req("POST", `/v1/table/${a.enc}/version/describe`, { body: { version: 2 } }), 404, 11);
    assert.ok(!fs.existsSync(canonicalOf(a, 2)), "no manifest left behind by a failed batch");
    assertError(await req("POST", `/v1/table/version/batch-create`, { body: { entries: "x" } }), 400, 13);
    assertError(await req("POST", `/v1/table/version/batch-create`, { body: {} }), 400, 13);
  });

  it("the catalog root is the gateway's --root", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    assert.ok(t.location.startsWith(fs.realpathSync(ROOT) + "/"));
  });

  // A create keeps its staging file and directory open from the read to the
  // removal (storage.h, read_staging); whatever the outcome, both are closed.
  it("a create closes the descriptors it kept, whatever its outcome", async () => {
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", ROOT, "--quiet", "--pool", "1"]);
    try {
      const ns = await mkNamespace();
      const t = await mkTable(ns);
      const other = await mkTable(ns);
      // the lowest of a few samples: the publisher opens files for an instant
      const fds = async () => {
        let low = Infinity;
        for (let i = 0; i < 5; i++) {
          await new Promise((r) => setTimeout(r, 100));
          low = Math.min(low, fs.readdirSync(`/proc/${g.proc.pid}/fd`).length);
        }
        return low;
      };
      ok((await createVersion(t, 1, { base: g.url })).res);	// opens the pool's connection
      const before = await fds();
      for (let v = 2; v <= 11; v++) ok((await createVersion(t, v, { base: g.url })).res);
      for (let v = 2; v <= 6; v++) assertError((await createVersion(t, v, { base: g.url })).res, 409, 14);
      for (let v = 12; v <= 16; v++) {
        const { res } = await createVersion(t, v, { base: g.url, extra: { manifest_size: 1 } });
        assertError(res, 400, 13);
      }
      for (let v = 12; v <= 16; v++) {
        const st = writeStaging(other.location, v, "elsewhere");	// another table's directory
        const res = await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`,
          { body: { version: v, manifest_path: st.abs }, base: g.url });
        assertError(res, 400, 13);
      }
      ok((await createVersion(t, 12, { base: g.url })).res);
      assert.equal(await fds(), before, "descriptors left open by creates");
    } finally {
      await stop(g.proc);
    }
  });

  it("a staging name replaced while its create waits keeps the bytes that were sent", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const sent = Buffer.from("the bytes the gateway read and sent ".repeat(8));
    const st = writeStaging(t.location, 1, sent);
    // the create's insert waits behind this lock, after the gateway read the file
    const holder = await holdLock("versions", 60000, { mode: "EXCLUSIVE" });
    const created = req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`,
      { body: { version: 1, manifest_path: st.rel, naming_scheme: "V2" } });
    try {
      let waiting = false;
      for (let i = 0; i < 400 && !waiting; i++) {
        waiting = psql(
          "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' " +
          "AND query LIKE '%rest_create_table_version%'") === "1";
        if (!waiting) await sleep(25);
      }
      assert.ok(waiting, "the create never waited for the lock");
      // a writer puts other bytes (another length too) under the staging name
      const other = `${st.abs}.other`;
      fs.writeFileSync(other, "a writer's other bytes");
      fs.renameSync(other, st.abs);
    } finally {
      holder.release();
    }
    const res = await created;
    const body = ok(res);
    const canonical = canonicalOf(t, 1);
    assert.deepEqual(fs.readFileSync(canonical), sent, "the canonical file holds the bytes that were sent");
    assert.equal(body.version.manifest_path, canonical.slice(1));
    const d = ok(await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: 1 } }));
    assert.equal(d.version.manifest_size, sent.length);
    assert.equal(d.version.manifest_path, canonical.slice(1));
    await new Promise((r) => (holder.exitCode !== null ? r() : holder.on("exit", r)));
  });
});
