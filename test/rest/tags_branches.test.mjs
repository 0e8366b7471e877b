// Tags, branches and transactions: routed to the catalog's rest_* functions.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { req, ok, assertError, mkNamespace, mkTable, createVersion, writeStaging } from "./lib.mjs";

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
    // CreateTableTagResponse: an object with at most context and a string transaction_id
    assert.ok(created !== null && typeof created === "object" && !Array.isArray(created), JSON.stringify(created));
    for (const k of Object.keys(created)) assert.ok(["transaction_id", "context"].includes(k), `unexpected field ${k}`);
    if ("transaction_id" in created) assert.equal(typeof created.transaction_id, "string");
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
  it("creates, lists and deletes branches with every error code", async () => {
    const t = await tableWithVersions(2);
    const br = (action, body) => req("POST", `/v1/table/${t.enc}/branches/${action}?delimiter=%24`, { body });
    const created = ok(await br("create", { name: "dev", from_version: 1 }));
    assert.match(created.transaction_id, /^[0-9]+$/);
    assertError(await br("create", { name: "dev", from_version: 1 }), 409, 23);
    assertError(await br("create", { name: "main" }), 409, 23);
    assertError(await br("create", { name: "x", from_branch: "nope" }), 404, 22);
    assertError(await br("create", { name: "x", from_version: 99 }), 404, 11);
    assertError(await br("create", { name: "a//b" }), 400, 13);
    assertError(await br("create", {}), 400, 13);
    ok(await br("create", { name: "feature/x", from_branch: "dev" }));
    const list = ok(await br("list", null));
    assert.deepEqual(Object.keys(list.branches).sort(), ["dev", "feature/x"]);
    assert.equal(list.branches.dev.parentVersion, 1);
    assert.equal(list.branches.dev.parentBranch, undefined);
    assert.equal(list.branches["feature/x"].parentBranch, "dev");
    assert.equal(typeof list.branches.dev.createAt, "number");
    const page = ok(await req("POST", `/v1/table/${t.enc}/branches/list?limit=1`, { body: null }));
    assert.deepEqual(Object.keys(page.branches), ["dev"]);
    assert.ok(page.page_token);
    // dev has a dependent branch: InvalidTableState
    assertError(await br("delete", { name: "dev" }), 409, 19);
    assertError(await br("delete", { name: "nope" }), 404, 22);
    assertError(await br("delete", { name: "main" }), 400, 13);
    ok(await br("delete", { name: "feature/x" }));
    ok(await br("delete", { name: "dev" }));
    assert.deepEqual(ok(await br("list", null)).branches, {});
    assertError(await req("POST", `/v1/table/nope%24t/branches/list`, { body: null }), 404, 1);
  });

  it("versions are branch-scoped: describe falls back to the branch point, list is the branch's own", async () => {
    const t = await tableWithVersions(2);
    ok(await req("POST", `/v1/table/${t.enc}/branches/create`, { body: { name: "dev" } }));
    const v = (action, body) => req("POST", `/v1/table/${t.enc}/version/${action}?delimiter=%24`, { body });
    // the branch starts at main's latest (2): describe-latest gives it
    assert.equal(ok(await v("describe", { branch: "dev" })).version.version, 2);
    assert.deepEqual(ok(await v("list", { branch: "dev" })).versions, []);
    // a version on dev must come after the branch point
    const low = writeStaging(`${t.location}/tree/dev`, 2, "dev two");
    assertError(await v("create", { version: 2, branch: "dev", manifest_path: low.rel }), 400, 13);
    const st = writeStaging(`${t.location}/tree/dev`, 3, "dev three");
    const made = ok(await v("create", { version: 3, branch: "dev", manifest_path: st.rel }));
    assert.ok(made.version.manifest_path.includes("/tree/dev/_versions/"), made.version.manifest_path);
    assert.equal(ok(await v("describe", { branch: "dev" })).version.version, 3);
    assert.deepEqual(ok(await v("list", { branch: "dev" })).versions.map((x) => x.version), [3]);
    // main is unaffected
    assert.equal(ok(await v("describe", {})).version.version, 2);
    assertError(await v("describe", { branch: "nope" }), 404, 22);
    assertError(await v("list", { branch: "nope" }), 404, 22);
  });
});

describe("transactions", () => {
  it("describes the transaction of a commit; unknown ids are 404 code 10; alter sets properties, all or none", async () => {
    const t = await tableWithVersions(1);
    const created = ok(await req("POST", `/v1/table/${t.enc}/tags/create`, { body: { tag: "x", version: 1 } }));
    assert.match(created.transaction_id, /^[0-9]+$/);
    const d = ok(await req("POST", `/v1/transaction/${created.transaction_id}/describe`, { body: {} }));
    assert.equal(d.status, "Succeeded");
    assert.equal(d.properties.operation, "CreateTableTag");
    assert.equal(d.properties.interface, "rest");
    assertError(await req("POST", `/v1/transaction/999999999/describe`, { body: {} }), 404, 10);
    assertError(await req("POST", `/v1/transaction/abc/describe`, { body: {} }), 404, 10);
    const alter = (actions) => req("POST", `/v1/transaction/${created.transaction_id}/alter`, { body: { actions } });
    // a committed transaction's status can be confirmed, not changed
    assertError(await alter([{ setStatusAction: { status: "Canceled" } }]), 400, 13);
    const a = ok(await alter([{ setStatusAction: { status: "Succeeded" } },
      { setPropertyAction: { key: "ticket", value: "T-1" } }]));
    assert.equal(a.status, "Succeeded");
    assert.equal(a.properties.ticket, "T-1");
    // all or none: the failing second action leaves the first unapplied
    assertError(await alter([{ setPropertyAction: { key: "more", value: "x" } },
      { setPropertyAction: { key: "ticket", value: "T-2", mode: "Fail" } }]), 400, 13);
    const d2 = ok(await req("POST", `/v1/transaction/${created.transaction_id}/describe`, { body: {} }));
    assert.equal(d2.properties.ticket, "T-1");
    assert.ok(!("more" in d2.properties));
    assertError(await req("POST", `/v1/transaction/999999999/alter`,
      { body: { actions: [{ setStatusAction: { status: "Succeeded" } }] } }), 404, 10);
  });
});
