// types.test.mjs: strict JSON types on every route.  A JSON value of the
// wrong type (a string where the spec says integer or boolean, a number
// where it says boolean) is 400 with code 13, the same in the single and
// the batch forms; query parameters, which are text, get the type the spec
// gives them, and one that does not parse is 400 code 13 too.  An identity
// in a body (REST carries it in headers) is refused, not ignored.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  req, ok, assertError, mkNamespace, mkTable, createVersion, writeStaging,
} from "./lib.mjs";

describe("strict JSON types", () => {
  it("a number given as a string is 400 code 13 in create, describe, batch-create and tags", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    // create: version and manifest_size as strings
    const s1 = writeStaging(t.location, 1, "12345");
    assertError(await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`,
      { body: { version: "1", manifest_path: s1.rel } }), 400, 13);
    assertError(await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`,
      { body: { version: 1, manifest_path: s1.rel, manifest_size: "5" } }), 400, 13);
    // nothing was committed by either
    assertError(await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: 1 } }), 404, 11);
    // the same request with JSON numbers works
    ok(await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`,
      { body: { version: 1, manifest_path: s1.rel, manifest_size: 5 } }));
    assertError(await req("POST", `/v1/table/${t.enc}/version/describe?delimiter=%24`, { body: { version: "1" } }), 400, 13);
    // batch-create: the same rule for its entries
    const s2 = writeStaging(t.location, 2, "two");
    assertError(await req("POST", `/v1/table/version/batch-create`,
      { body: { entries: [{ id: [ns, t.name], version: "2", manifest_path: s2.rel }] } }), 400, 13);
    assertError(await req("POST", `/v1/table/version/batch-create`,
      { body: { entries: [{ id: [ns, t.name], version: 2, manifest_path: s2.rel, manifest_size: "3" }] } }), 400, 13);
    // tags
    assertError(await req("POST", `/v1/table/${t.enc}/tags/create?delimiter=%24`, { body: { tag: "a", version: "1" } }), 400, 13);
    ok(await req("POST", `/v1/table/${t.enc}/tags/create?delimiter=%24`, { body: { tag: "a", version: 1 } }));
  });

  it("a boolean given as a string or a number is 400 code 13", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    ok((await createVersion(t, 1)).res);
    assertError(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { body: { descending: "true" } }), 400, 13);
    assertError(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { body: { descending: 1 } }), 400, 13);
    assertError(await req("POST", `/v1/table/${t.enc}/describe?delimiter=%24`, { body: { check_declared: "true" } }), 400, 13);
    assertError(await req("POST", `/v1/namespace/${ns}/table/list`, { body: { limit: "10" } }), 400, 13);
    ok(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { body: { descending: true } }));
  });

  it("query parameters get the spec's types; one that does not parse is 400 code 13", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    for (let v = 1; v <= 3; v++) ok((await createVersion(t, v)).res);
    const desc = ok(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24&descending=true&limit=2`));
    assert.deepEqual(desc.versions.map((v) => v.version), [3, 2]);
    const asc = ok(await req("GET", `/v1/table/${t.enc}/version/list?delimiter=%24&descending=FALSE&limit=1`));
    assert.deepEqual(asc.versions.map((v) => v.version), [1]);
    for (const q of ["limit=abc", "limit=1.5", "limit=", "limit=%2B1", "limit=99999999999999999999", "descending=yes", "descending="]) {
      const r = await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24&${q}`);
      assertError(r, 400, 13);
      assert.match(r.json.error, /query parameter/, q);
    }
    assertError(await req("POST", `/v1/namespace/${ns}/table/list?include_declared=maybe`), 400, 13);
    // a body field still wins over the query parameter of the same name
    const both = ok(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24&limit=1`, { body: { limit: 2 } }));
    assert.equal(both.versions.length, 2);
  });

  it("an identity in the body is refused (400 code 13): on REST it travels in headers", async () => {
    const ns = await mkNamespace();
    const r = await req("POST", `/v1/namespace/${ns}/describe`, { body: { identity: { api_key: "k" } } });
    assertError(r, 400, 13);
    assert.match(r.json.error, /x-api-key/);
    ok(await req("POST", `/v1/namespace/${ns}/describe`, { body: { identity: null } }));
  });

  it("load_detailed_metadata true is 406 code 0 (the catalog does not open datasets), false is served", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    assertError(await req("POST", `/v1/table/${t.enc}/describe`, { body: { load_detailed_metadata: true } }), 406, 0);
    assertError(await req("POST", `/v1/table/${t.enc}/describe?load_detailed_metadata=true`), 406, 0);
    ok(await req("POST", `/v1/table/${t.enc}/describe`, { body: { load_detailed_metadata: false } }));
  });
});
