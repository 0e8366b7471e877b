// Tags, branches and transactions: routed to the catalog's rest_* functions.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { req, ok, assertError, mkNamespace, mkTable, createVersion } from "./lib.mjs";

async function tableWithVersions(n) {
  const ns = await mkNamespace();
  const t = await mkTable(ns);
  for (let v = 1; v <= n; v++) ok((await createVersion(t, v)).res);
  return t;
}

describe("tags", () => {
  it("creates, reads, lists, updates and deletes tags", async () => {
    const t = await tableWithVersions(2);
    const created = ok(await req("POST", `/v1/table/${t.enc}/tags/create?delimiter=%24`, { body: { tag: "v1", version: 1 } }));
    assert.equal(typeof created, "object");
    assertError(await req("POST", `/v1/table/${t.enc}/tags/create`, { body: { tag: "v1", version: 2 } }), 409, 9);
    assertError(await req("POST", `/v1/table/${t.enc}/tags/create`, { body: { tag: "v9", version: 99 } }), 404, 11);
    const got = ok(await req("POST", `/v1/table/${t.enc}/tags/version`, { body: { tag: "v1" } }));
    assert.equal(got.version, 1);
    ok(await req("POST", `/v1/table/${t.enc}/tags/create`, { body: { tag: "v2", version: 2 } }));
    const list = ok(await req("POST", `/v1/table/${t.enc}/tags/list`, { body: null }));
    assert.deepEqual(Object.keys(list.tags).sort(), ["v1", "v2"]);
    const paged = ok(await req("GET", `/v1/table/${t.enc}/tags/list?limit=1`));
    assert.equal(Object.keys(paged.tags).length, 1);
    assert.ok(paged.page_token);
    ok(await req("POST", `/v1/table/${t.enc}/tags/update`, { body: { tag: "v1", version: 2 } }));
    assert.equal(ok(await req("POST", `/v1/table/${t.enc}/tags/version`, { body: { tag: "v1" } })).version, 2);
    ok(await req("POST", `/v1/table/${t.enc}/tags/delete`, { body: { tag: "v1" } }));
    assertError(await req("POST", `/v1/table/${t.enc}/tags/version`, { body: { tag: "v1" } }), 404, 8);
    assertError(await req("POST", `/v1/table/${t.enc}/tags/delete`, { body: { tag: "v1" } }), 404, 8);
    assertError(await req("POST", `/v1/table/${t.enc}/tags/create`, { body: { version: 1 } }), 400, 13);
  });
});

describe("branches", () => {
  it("creates, lists and deletes branches", async () => {
    const t = await tableWithVersions(2);
    ok(await req("POST", `/v1/table/${t.enc}/branches/create`, { body: { name: "dev", from_version: 1 } }));
    const dup = await req("POST", `/v1/table/${t.enc}/branches/create`, { body: { name: "dev", from_version: 1 } });
    assert.equal(dup.status, 409, dup.text);
    assert.equal(typeof dup.json.code, "number");
    const list = ok(await req("POST", `/v1/table/${t.enc}/branches/list`, { body: null }));
    assert.ok(JSON.stringify(list.branches).includes("dev"), JSON.stringify(list));
    ok(await req("POST", `/v1/table/${t.enc}/branches/delete`, { body: { name: "dev" } }));
    const after = ok(await req("POST", `/v1/table/${t.enc}/branches/list`));
    assert.ok(!JSON.stringify(after.branches ?? {}).includes("dev"));
  });
});

describe("transactions", () => {
  it("describes the transaction of a commit; unknown ids are 404 code 10", async () => {
    const t = await tableWithVersions(1);
    const created = ok(await req("POST", `/v1/table/${t.enc}/tags/create`, { body: { tag: "x", version: 1 } }));
    if (created.transaction_id) {
      const d = ok(await req("POST", `/v1/transaction/${encodeURIComponent(created.transaction_id)}/describe`, { body: {} }));
      assert.equal(typeof d.status, "string");
    }
    const r = await req("POST", `/v1/transaction/999999999/describe`, { body: {} });
    assert.ok(r.status === 404 || r.status === 400, `${r.status} ${r.text}`);
    assert.ok(r.json.code === 10 || r.json.code === 13, r.text);
  });
});
