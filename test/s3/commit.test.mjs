// Manifest finalization for tables in a bucket: the staging object a writer
// put becomes the canonical _versions/ object through the catalog, with the
// guarantees of local disk.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { req, ok, assertError, fresh, psql, v2Name, mkNamespace, mkTable, startGateway, stop, GW_DB } from "../rest/lib.mjs";
import { s3, md5etag, keyOf, listKeys, BUCKET, S3 } from "./s3lib.mjs";

/** Put a staging object for version of table t; returns {key, uri, bytes}. */
async function putStaging(t, version, content) {
  const bytes = Buffer.from(content ?? `manifest ${version} ${Math.random()}`);
  const key = `${keyOf(t.location)}/_versions/${v2Name(version)}-${fresh("u")}`;
  const r = await s3("PUT", key, { body: bytes });
  assert.equal(r.status, 200, `staging PUT: ${r.body}`);
  return { key, uri: `s3://${BUCKET}/${key}`, bytes };
}

async function createVersion(t, version, { content, form = "rel", base, extra = {} } = {}) {
  const st = await putStaging(t, version, content);
  const res = await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`, {
    body: { version, manifest_path: form === "uri" ? st.uri : st.key, naming_scheme: "V2", ...extra },
    base,
  });
  return { res, st };
}

const canonicalKey = (t, version) => `${keyOf(t.location)}/_versions/${v2Name(version)}`;
const rows = (t) =>
  psql(`SELECT version || ':' || coalesce(e_tag, '') FROM lance_namespace.table_versions
         WHERE id = string_to_array('${t.id}', '$') ORDER BY version`);

describe("tables in a bucket", () => {
  it("DeclareTable assigns a location under the s3:// root", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    assert.equal(t.location, `s3://${BUCKET}/warehouse/${ns}/${t.name}.lance`);
  });

  it("CreateTableVersion makes the staging bytes the canonical object, returns size and ETag, removes staging", async () => {
    const t = await mkTable(await mkNamespace());
    const { res, st } = await createVersion(t, 1);
    const body = ok(res);
    assert.equal(body.version.version, 1);
    assert.equal(body.version.manifest_path, canonicalKey(t, 1), "the key, as the client named its staging object");
    assert.equal(body.version.manifest_size, st.bytes.length);
    assert.equal(body.version.e_tag, md5etag(st.bytes));
    const got = await s3("GET", canonicalKey(t, 1));
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, st.bytes, "canonical holds exactly the staging bytes");
    assert.equal(got.headers.etag, body.version.e_tag);
    assert.equal((await s3("HEAD", st.key)).status, 404, "staging object removed");
    assert.equal(rows(t), `1:${md5etag(st.bytes)}`, "the catalog records the version and its e_tag");
    const d = ok(await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: 1 } }));
    assert.equal(d.version.e_tag, md5etag(st.bytes));
  });

  it("accepts an s3:// staging URI and answers with the key, as every route does", async () => {
    const t = await mkTable(await mkNamespace());
    const { res } = await createVersion(t, 1, { form: "uri" });
    assert.equal(ok(res).version.manifest_path, canonicalKey(t, 1));
    const d = ok(await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: 1 } }));
    assert.equal(d.version.manifest_path, canonicalKey(t, 1));
    const l = ok(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { body: {} }));
    assert.deepEqual(l.versions.map((v) => v.manifest_path), [canonicalKey(t, 1)]);
  });

  it("a second manifest for a committed version gets 409 and leaves the winner's bytes", async () => {
    const t = await mkTable(await mkNamespace());
    const first = await createVersion(t, 1, { content: "winner" });
    ok(first.res);
    const second = await createVersion(t, 1, { content: "loser" });
    assertError(second.res, 409, 14);
    assert.deepEqual((await s3("GET", canonicalKey(t, 1))).body, Buffer.from("winner"));
    assert.equal((await s3("HEAD", second.st.key)).status, 200, "the loser's staging object is its own");
  });

  it("a retry after a lost reply gets the same answer (staging gone or still there)", async () => {
    const t = await mkTable(await mkNamespace());
    const st = await putStaging(t, 1, "first");
    const body = { version: 1, manifest_path: st.key, naming_scheme: "V2" };
    const a = ok(await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`, { body }));
    const b = ok(await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`, { body }));
    assert.deepEqual(b.version, a.version);
    // the staging object is back (a retry before the first removed it)
    await s3("PUT", st.key, { body: st.bytes });
    const c = ok(await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`, { body }));
    assert.deepEqual(c.version, a.version);
    assert.deepEqual((await s3("GET", canonicalKey(t, 1))).body, st.bytes);
  });

  it("replaces an orphaned canonical object of a version the catalog does not have", async () => {
    const t = await mkTable(await mkNamespace());
    ok((await createVersion(t, 1)).res);
    await s3("PUT", canonicalKey(t, 2), { body: Buffer.from("orphan of a crash") });
    const { res, st } = await createVersion(t, 2, { content: "the real one" });
    ok(res);
    assert.deepEqual((await s3("GET", canonicalKey(t, 2))).body, st.bytes);
  });

  it("refuses a staging object outside the table's _versions directory, writing nothing", async () => {
    const t = await mkTable(await mkNamespace());
    const other = await mkTable(await mkNamespace());
    const st = await putStaging(other, 1);
    const res = await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`, {
      body: { version: 1, manifest_path: st.key, naming_scheme: "V2" },
    });
    assertError(res, 400, 13);
    assert.equal((await s3("HEAD", canonicalKey(t, 1))).status, 404);
    assert.equal(rows(t), "");
  });

  it("a missing staging object is 400 and no version", async () => {
    const t = await mkTable(await mkNamespace());
    const res = await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`, {
      body: { version: 1, manifest_path: `${keyOf(t.location)}/_versions/${v2Name(1)}-nope`, naming_scheme: "V2" },
    });
    assertError(res, 400, 13);
    assert.equal(rows(t), "");
  });

  it("BatchCreateTableVersions and BatchCommitTables finalize every manifest", async () => {
    const ns = await mkNamespace();
    const a = await mkTable(ns);
    const b = await mkTable(ns);
    const sa = await putStaging(a, 1);
    const sb = await putStaging(b, 1);
    ok(await req("POST", `/v1/table/version/batch-create`, {
      body: {
        entries: [
          { id: [ns, a.name], version: 1, manifest_path: sa.key, naming_scheme: "V2" },
          { id: [ns, b.name], version: 1, manifest_path: sb.key, naming_scheme: "V2" },
        ],
      },
    }));
    assert.deepEqual((await s3("GET", canonicalKey(a, 1))).body, sa.bytes);
    assert.deepEqual((await s3("GET", canonicalKey(b, 1))).body, sb.bytes);
    const sc = await putStaging(a, 2);
    ok(await req("POST", `/v1/table/batch-commit`, {
      body: { operations: [{ create_table_version: { id: [ns, a.name], version: 2, manifest_path: sc.key, naming_scheme: "V2" } }] },
    }));
    assert.deepEqual((await s3("GET", canonicalKey(a, 2))).body, sc.bytes);
  });

  it("--sweep removes an orphaned canonical object above the latest version, and nothing committed", async () => {
    const t = await mkTable(await mkNamespace());
    ok((await createVersion(t, 1)).res);
    await s3("PUT", canonicalKey(t, 5), { body: Buffer.from("orphan") });
    const g = await startGateway(["--db", GW_DB, "--root", `s3://${BUCKET}/warehouse`, "--sweep", "--sweep-min-age", "0"], {
      expectExit: true,
      env: { AWS_ENDPOINT_URL_S3: S3 },
    });
    assert.equal(g.exitCode, 0, g.log());
    assert.equal((await s3("HEAD", canonicalKey(t, 5))).status, 404, "orphan removed");
    assert.equal((await s3("HEAD", canonicalKey(t, 1))).status, 200, "committed version kept");
    const keys = await listKeys(`${keyOf(t.location)}/_versions/`);
    assert.deepEqual(keys, [canonicalKey(t, 1)]);
  });

  it("--sweep retires a version whose object a client's cleanup deleted, never the latest", async () => {
    const t = await mkTable(await mkNamespace());
    for (const v of [1, 2, 3]) ok((await createVersion(t, v)).res);
    assert.equal((await s3("DELETE", canonicalKey(t, 1))).status, 204);
    assert.equal((await s3("DELETE", canonicalKey(t, 3))).status, 204);
    // describe does not check a bucket per request (documented): the sweep does
    ok(await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: 1 } }));
    const g = await startGateway(["--db", GW_DB, "--root", `s3://${BUCKET}/warehouse`, "--sweep", "--sweep-min-age", "0"], {
      expectExit: true,
      env: { AWS_ENDPOINT_URL_S3: S3 },
    });
    assert.equal(g.exitCode, 0, g.log());
    assert.deepEqual(rows(t).split("\n").map((r) => r.split(":")[0]), ["2", "3"], "1 retired; 3 is above the latest on disk");
    assertError(await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: 1 } }), 404, 11);
  });

  it("version/list leaves out the versions whose objects a client's cleanup deleted, on each page and on a branch; those below a later manifest are retired", async () => {
    const t = await mkTable(await mkNamespace());
    for (const v of [1, 2, 3, 4, 5, 6]) ok((await createVersion(t, v)).res);
    const list = async (body = {}) => ok(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { body }));
    const nums = (r) => r.versions.map((v) => v.version);
    const versions = (branch = "main") => psql(`SELECT version FROM lance_namespace.table_versions
      WHERE id = string_to_array('${t.id}', '$') AND branch = '${branch}' ORDER BY version`).split("\n").filter(Boolean).map(Number);
    const pages = async (body) => {
      const out = [];
      let token;
      for (let i = 0; i < 20; i++) {
        const r = await list({ ...body, limit: 2, ...(token ? { page_token: token } : {}) });
        assert.ok(r.versions.length <= 2, JSON.stringify(r));
        out.push(nums(r));
        token = r.page_token;
        if (!token) return out;
      }
      assert.fail("the pages did not end");
    };
    assert.deepEqual(nums(await list()), [1, 2, 3, 4, 5, 6]);
    for (const v of [1, 3, 4]) assert.equal((await s3("DELETE", canonicalKey(t, v))).status, 204);
    assert.deepEqual(await pages({}), [[2], [], [5, 6]]);
    assert.deepEqual(versions(), [2, 5, 6], "the list retired 1, 3 and 4");
    assertError(await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: 3 } }), 404, 11);
    // the latest's object deleted: not handed out, its row kept (no later manifest)
    assert.equal((await s3("DELETE", canonicalKey(t, 6))).status, 204);
    assert.deepEqual(nums(ok(await req("GET", `/v1/table/${t.enc}/version/list?delimiter=%24&descending=true`))), [5, 2]);
    assert.deepEqual(versions(), [2, 5, 6]);
    // a branch: its manifests under tree/dev/_versions
    ok(await req("POST", `/v1/table/${t.enc}/branches/create?delimiter=%24`, { body: { name: "dev" } }));
    const devKey = (v) => `${keyOf(t.location)}/tree/dev/_versions/${v2Name(v)}`;
    for (const v of [7, 8, 9]) {
      const key = `${devKey(v)}-${fresh("u")}`;
      assert.equal((await s3("PUT", key, { body: Buffer.from(`dev ${v}`) })).status, 200);
      ok(await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`, { body: { version: v, branch: "dev", manifest_path: key } }));
    }
    assert.deepEqual(nums(await list({ branch: "dev" })), [7, 8, 9]);
    assert.equal((await s3("DELETE", devKey(8))).status, 204);
    assert.deepEqual(nums(await list({ branch: "dev" })), [7, 9]);
    assert.deepEqual(versions("dev"), [7, 9]);
  });

  it("RegisterTable imports the versions already in the bucket, with their ETags; the next commit lands at latest + 1", async () => {
    const ns = await mkNamespace();
    const name = fresh("plain");
    const location = `s3://${BUCKET}/warehouse/${ns}/${name}.lance`;
    const bodies = {};
    for (const v of [1, 2]) {
      bodies[v] = Buffer.from(`manifest ${v} written without the catalog`);
      await s3("PUT", `warehouse/${ns}/${name}.lance/_versions/${v2Name(v)}`, { body: bodies[v] });
    }
    const t = { id: `${ns}$${name}`, enc: encodeURIComponent(`${ns}$${name}`), name, location };
    ok(await req("POST", `/v1/table/${t.enc}/register?delimiter=%24`, { body: { location } }));
    assert.equal(rows(t), `1:${md5etag(bodies[1])}\n2:${md5etag(bodies[2])}`);
    assertError((await createVersion(t, 2)).res, 409, 14);
    ok((await createVersion(t, 3)).res);
  });

  it("DropTable deletes every object under the table's prefix, and only those; outside the root it is refused", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns, "drop");
    ok((await createVersion(t, 1)).res);
    const prefix = keyOf(t.location);
    await s3("PUT", `${prefix}/data/deep/x.lance`, { body: Buffer.from("data") });
    await s3("PUT", `${prefix}x/keep`, { body: Buffer.from("a sibling whose name extends it") });
    ok(await req("POST", `/v1/table/${t.enc}/drop`));
    assert.deepEqual(await listKeys(`${prefix}/`), [], "the table's objects are gone");
    assert.equal((await s3("HEAD", `${prefix}x/keep`)).status, 200, "the sibling stays");
    assertError(await req("POST", `/v1/table/${t.enc}/describe`), 404, 4);

    // registered outside s3://BUCKET/warehouse: refused, nothing changes
    const name = fresh("ext");
    const key = `elsewhere/${name}.lance/_versions/1.manifest`;
    await s3("PUT", key, { body: Buffer.from("m") });
    const id = encodeURIComponent(`${ns}$${name}`);
    ok(await req("POST", `/v1/table/${id}/register?delimiter=%24`, { body: { location: `s3://${BUCKET}/elsewhere/${name}.lance` } }));
    assertError(await req("POST", `/v1/table/${id}/drop?delimiter=%24`), 403, 15);
    assert.equal((await s3("HEAD", key)).status, 200);
    ok(await req("POST", `/v1/table/${id}/describe?delimiter=%24`));
  });

  it("two gateways on one database and bucket: one winner per version, every loser a 409", async () => {
    const g2 = await startGateway(["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", `s3://${BUCKET}/warehouse`, "--quiet"], {
      env: { AWS_ENDPOINT_URL_S3: S3 },
    });
    assert.ok(g2.url, g2.log());
    try {
      const t = await mkTable(await mkNamespace());
      for (let v = 1; v <= 5; v++) {
        const attempts = await Promise.all(
          Array.from({ length: 6 }, (_, i) => createVersion(t, v, { content: `v${v} writer ${i}`, base: i % 2 ? g2.url : undefined })),
        );
        const winners = attempts.filter((a) => a.res.status === 200);
        const losers = attempts.filter((a) => a.res.status !== 200);
        assert.equal(winners.length, 1, `version ${v}: ${attempts.map((a) => a.res.status)}`);
        for (const l of losers) assertError(l.res, 409, 14);
        const got = await s3("GET", canonicalKey(t, v));
        assert.deepEqual(got.body, winners[0].st.bytes, "canonical holds the winner's bytes");
        assert.equal(winners[0].res.json.version.e_tag, md5etag(winners[0].st.bytes));
      }
    } finally {
      await stop(g2.proc);
    }
  });
});
