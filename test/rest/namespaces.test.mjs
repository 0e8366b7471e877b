// Namespace routes: create, list (GET and POST, pagination), describe,
// exists, drop, with their error codes.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { req, ok, assertError, fresh, mkNamespace } from "./lib.mjs";

describe("namespaces", () => {
  it("creates, describes and reports existence", async () => {
    const ns = fresh("ns");
    const created = ok(await req("POST", `/v1/namespace/${ns}/create?delimiter=%24`, { body: { properties: { owner: "alice" } } }));
    assert.deepEqual(created.properties, { owner: "alice" });
    const d = ok(await req("POST", `/v1/namespace/${ns}/describe?delimiter=%24`, { body: {} }));
    assert.deepEqual(d.properties, { owner: "alice" });
    const e = await req("POST", `/v1/namespace/${ns}/exists?delimiter=%24`);
    assert.equal(e.status, 200);
    assert.equal(e.text, "");
  });

  it("refuses a delimiter the extension refuses (src/name_rules.c) with 400 code 13", async () => {
    const ns = fresh("delim");
    // longer than 16 bytes, a control character (C0, DEL, C1), empty
    for (const [d, msg] of [["x".repeat(17), /longer than 16 bytes/], ["%09", /control character/],
                            ["%7F", /control character/], ["%C2%85", /control character/], ["", /must not be empty/]]) {
      const res = await req("POST", `/v1/namespace/${ns}/create?delimiter=${d}`, { body: {} });
      assertError(res, 400, 13);
      assert.match(res.json.error, msg);
    }
    // 16 bytes is the longest the extension takes, through REST as through SQL
    const d16 = "x".repeat(16);
    ok(await req("POST", `/v1/namespace/${ns}/create`, { body: {} }));
    ok(await req("POST", `/v1/namespace/${ns}${d16}child/create?delimiter=${d16}`, { body: {} }));
    ok(await req("POST", `/v1/namespace/${ns}%24child/describe?delimiter=%24`, { body: {} }));
  });

  it("409 code 2 when the namespace exists", async () => {
    const ns = await mkNamespace();
    assertError(await req("POST", `/v1/namespace/${ns}/create`, { body: {} }), 409, 2, `/v1/namespace/${ns}/create`);
  });

  it("404 code 1 for a missing namespace on every namespace route", async () => {
    const ns = fresh("missing");
    assertError(await req("POST", `/v1/namespace/${ns}/describe`), 404, 1);
    assertError(await req("POST", `/v1/namespace/${ns}/exists`), 404, 1);
    assertError(await req("POST", `/v1/namespace/${ns}/drop`), 404, 1);
    assertError(await req("GET", `/v1/namespace/${ns}/list`), 404, 1);
    assertError(await req("GET", `/v1/namespace/${ns}/table/list`), 404, 1);
    assertError(await req("POST", `/v1/namespace/${ns}$child/create`, { body: {} }), 404, 1);
  });

  it("lists child namespaces with GET and POST", async () => {
    const ns = await mkNamespace();
    ok(await req("POST", `/v1/namespace/${ns}$b/create`));
    ok(await req("POST", `/v1/namespace/${ns}$a/create`));
    const g = ok(await req("GET", `/v1/namespace/${ns}/list?delimiter=%24`));
    assert.deepEqual(g.namespaces, ["a", "b"]);
    const p = ok(await req("POST", `/v1/namespace/${ns}/list`, { body: null }));
    assert.deepEqual(p.namespaces, ["a", "b"]);
    const root = ok(await req("GET", `/v1/namespace/%24/list?delimiter=%24`));
    assert.ok(root.namespaces.includes(ns));
  });

  it("walks pages with limit and page_token", async () => {
    const ns = await mkNamespace();
    const names = [];
    for (let i = 0; i < 7; i++) {
      names.push(`c${i}`);
      ok(await req("POST", `/v1/namespace/${ns}$c${i}/create`));
    }
    for (const limit of [1, 2, 3, 7, 100]) {
      const seen = [];
      let token;
      let pages = 0;
      do {
        const q = `limit=${limit}` + (token ? `&page_token=${encodeURIComponent(token)}` : "");
        const page = ok(await req("GET", `/v1/namespace/${ns}/list?${q}`));
        assert.ok(page.namespaces.length <= limit);
        seen.push(...page.namespaces);
        token = page.page_token;
        pages += 1;
        assert.ok(pages < 20, "pagination does not terminate");
      } while (token);
      assert.deepEqual(seen, names, `limit ${limit}`);
    }
  });

  it("rejects bad pagination input with 400 code 13", async () => {
    const ns = await mkNamespace();
    assertError(await req("GET", `/v1/namespace/${ns}/list?page_token=bogus`), 400, 13);
    assertError(await req("GET", `/v1/namespace/${ns}/list?limit=-1`), 400, 13);
    assertError(await req("GET", `/v1/namespace/${ns}/list?limit=abc`), 400, 13);
    assertError(await req("GET", `/v1/namespace/${ns}/list?limit=99999999999999999999999`), 400, 13);
  });

  it("drops empty namespaces, refuses non-empty ones with 409 code 3", async () => {
    const ns = await mkNamespace();
    ok(await req("POST", `/v1/namespace/${ns}$inner/create`));
    assertError(await req("POST", `/v1/namespace/${ns}/drop`), 409, 3);
    ok(await req("POST", `/v1/namespace/${ns}$inner/drop`, { body: null }));
    ok(await req("POST", `/v1/namespace/${ns}/drop`));
    assertError(await req("POST", `/v1/namespace/${ns}/exists`), 404, 1);
  });
});
