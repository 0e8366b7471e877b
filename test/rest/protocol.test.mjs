// HTTP translation: path ids, delimiters and percent-encoding, bodies
// (missing, null, malformed, hostile), id mismatch, routes, methods,
// unsupported data operations, limits, and the error body shape.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { req, raw, ok, assertError, fresh, mkNamespace, mkTable, createVersion, psql } from "./lib.mjs";

describe("path ids and delimiters", () => {
  it("root is the delimiter alone, encoded or not", async () => {
    for (const target of ["/v1/namespace/$/list", "/v1/namespace/%24/list?delimiter=%24", "/v1/namespace/./list?delimiter=.",
      "/v1/namespace/%3A%3A/list?delimiter=%3A%3A"]) {
      const r = ok(await req("GET", target));
      assert.ok(Array.isArray(r.namespaces), target);
    }
  });

  it("splits on the delimiter given, percent-decoding first", async () => {
    const ns = await mkNamespace();
    ok(await req("POST", `/v1/namespace/${ns}.child/create?delimiter=.`));
    ok(await req("POST", `/v1/namespace/${ns}%24child/describe?delimiter=%24`));
    ok(await req("POST", `/v1/namespace/${ns}::child::leaf/create?delimiter=%3A%3A`));
    ok(await req("POST", `/v1/namespace/${ns}$child$leaf/describe`));
    const l = ok(await req("GET", `/v1/namespace/${ns}%2Echild/list?delimiter=%2E`));
    assert.deepEqual(l.namespaces, ["leaf"]);
    // with delimiter "#", a "$" is part of a name
    const t = ok(await req("POST", `/v1/table/${ns}%23a%24b/declare?delimiter=%23`, { body: {} }));
    assert.ok(t.location.endsWith("/a$b.lance"));
    ok(await req("POST", `/v1/table/${ns}%23a%24b/describe?delimiter=%23`));
  });

  it("names with spaces and non-ASCII characters round-trip", async () => {
    const name = `h\u00e9llo w\u00f6rld ${fresh("")}`;
    ok(await req("POST", `/v1/namespace/${encodeURIComponent(name)}/create`));
    ok(await req("POST", `/v1/namespace/${encodeURIComponent(name)}/describe`));
    const root = ok(await req("GET", `/v1/namespace/%24/list`));
    assert.ok(root.namespaces.includes(name));
    const t = await mkTable(name, "t\u00e9");
    ok(await req("POST", `/v1/table/${t.enc}/describe`));
  });

  it("bad encodings and names are 400 code 13", async () => {
    for (const target of [
      "/v1/namespace/a%zz/describe", "/v1/namespace/a%2/describe", "/v1/namespace/a%/describe",
      "/v1/namespace/a%00b/create", "/v1/namespace/%ff%fe/create", "/v1/namespace/%C3%28/create",
      "/v1/namespace/a%2Fb/create", "/v1/namespace/x/list?delimiter=", "/v1/namespace/x/list?limit=%zz",
      "/v1/namespace/a$$b/create", "/v1/namespace/$a/create",
    ]) {
      const r = await req("POST", target);
      assert.ok(r.status >= 400 && r.status < 500, `${target}: ${r.status} ${r.text}`);
      assertError(r, 400, 13);
    }
  });
});

describe("request bodies", () => {
  it("missing, empty, whitespace and null bodies count as {}", async () => {
    const ns = await mkNamespace();
    for (const body of [undefined, "", "   \n", "null", " null "]) {
      ok(await req("POST", `/v1/namespace/${ns}/describe?delimiter=%24`, { body }));
    }
    const t = await mkTable(ns);
    ok(await req("POST", `/v1/table/${t.enc}/version/list?delimiter=%24`, { body: "null" }));
  });

  it("an id in the body must match the path", async () => {
    const ns = await mkNamespace();
    ok(await req("POST", `/v1/namespace/${ns}/describe`, { body: { id: [ns] } }));
    ok(await req("POST", `/v1/namespace/${ns}/describe`, { body: { id: null } }));
    for (const id of [["other"], [ns, "x"], [], ns, 5, [[ns]]]) {
      assertError(await req("POST", `/v1/namespace/${ns}/describe`, { body: { id } }), 400, 13, `/v1/namespace/${ns}/describe`);
    }
  });

  it("malformed or non-object JSON is 400 code 13", async () => {
    const ns = await mkNamespace();
    for (const body of ["{", "{\"a\":}", "[1,2]", "\"str\"", "42", "true", "{\"a\":1,\"a\":2}", "{'a':1}",
      "{\"a\":\"\\u0000\"}", Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), "{\"a\":1} trailing", "{\"properties\": NaN}"]) {
      assertError(await req("POST", `/v1/namespace/${ns}/describe`, { body }), 400, 13);
    }
  });

  it("wrong field types are 400 code 13", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const cases = [
      ["POST", `/v1/namespace/${fresh("w")}/create`, { properties: [1, 2] }],
      ["POST", `/v1/namespace/${fresh("w")}/create`, { properties: "x" }],
      ["POST", `/v1/namespace/${fresh("w")}/create`, { mode: 7 }],
      ["POST", `/v1/namespace/${ns}/list`, { limit: "ten" }],
      ["POST", `/v1/namespace/${ns}/list`, { page_token: 5 }],
      ["POST", `/v1/table/${t.enc}/describe`, { version: "latest" }],
      ["POST", `/v1/table/${t.enc}/describe?with_table_uri=perhaps`, {}],
      ["POST", `/v1/table/${t.enc}/rename`, { new_table_name: 3 }],
      ["POST", `/v1/table/${t.enc}/rename`, {}],
      ["POST", `/v1/table/${t.enc}/version/list?descending=sometimes`, {}],
      ["POST", `/v1/table/${t.enc}/version/describe`, { version: 1e30 }],
      ["POST", `/v1/table/${t.enc}/version/describe`, { version: 123456789012345678901234567890 }],
      ["POST", `/v1/table/${t.enc}/register`, { location: ["a"] }],
    ];
    for (const [m, target, body] of cases) {
      const r = await req(m, target, { body });
      assertError(r, 400, 13);
    }
  });

  it("hostile inputs get JSON 4xx, never 5xx", async () => {
    const ns = await mkNamespace();
    const deep = "[".repeat(100000) + "]".repeat(100000);
    const deepObj = "{\"a\":".repeat(200) + "1" + "}".repeat(200);
    const bodies = [
      `{"id": ${deep}}`,
      deepObj,
      JSON.stringify({ properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, "v".repeat(10)])) }),
      JSON.stringify({ properties: { k: "\ud800" } }),
      JSON.stringify({ mode: "x".repeat(60000) }),
    ];
    for (const body of bodies) {
      const r = await req("POST", `/v1/namespace/${fresh("h")}/create`, { body });
      assert.ok(r.status < 500, `status ${r.status}: ${r.text.slice(0, 200)}`);
      if (r.status !== 200) assert.equal(typeof r.json?.code, "number", r.text.slice(0, 200));
    }
    const longName = "n".repeat(5000);
    const r = await req("POST", `/v1/namespace/${longName}/create`);
    assert.ok(r.status >= 400 && r.status < 500, `${r.status}`);
    assert.equal(typeof r.json?.code, "number");
    const manyParts = Array.from({ length: 500 }, () => "a").join("$");
    const r2 = await req("POST", `/v1/namespace/${manyParts}/create`);
    assert.ok(r2.status >= 400 && r2.status < 500, `${r2.status}`);
    const r3 = await req("POST", `/v1/table/${ns}$t/declare`, { body: { properties: { a: { b: 1 } } } });
    assert.ok(r3.status >= 400 && r3.status < 500, `${r3.status} ${r3.text}`);
  });

  it("an oversized body is 413 JSON, an oversized target 414 JSON", async () => {
    const big = JSON.stringify({ properties: { k: "x".repeat(200000) } });
    const r = await req("POST", `/v1/namespace/${fresh("big")}/create`, { body: big });
    assertError(r, 413, 13);
    const chunked = await raw(
      `POST /v1/namespace/${fresh("big")}/create HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
      Array.from({ length: 40 }, () => `1000\r\n${"x".repeat(4096)}\r\n`).join("") + "0\r\n\r\n",
    );
    assert.equal(chunked.status, 413);
    assert.equal(JSON.parse(chunked.body).code, 13);
    const longTarget = `/v1/namespace/${"a".repeat(20000)}/describe`;
    const r2 = await req("POST", longTarget);
    assertError(r2, 414, 13);
  });
});

describe("routes", () => {
  it("unknown routes are 404 JSON", async () => {
    for (const target of ["/", "/v1", "/v1/nothing", "/v1/namespace/x/frobnicate", "/v2/namespace/x/list", "/v1/table/x/version/frob"]) {
      const r = await req("POST", target);
      assert.equal(r.status, 404, target);
      assert.equal(typeof r.json?.code, "number", target);
      assert.equal(r.json.instance, target);
    }
  });

  it("data operations are 406 code 0", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const ops = ["insert", "merge_insert", "update", "delete", "query", "count_rows", "create", "explain_plan",
      "analyze_plan", "add_columns", "alter_columns", "drop_columns", "stats", "restore", "create_index",
      "create_scalar_index", "index/list", "index/idx/stats", "index/idx/drop", "tags/frob", "branches/frob",
      "schema_metadata/update", "update_field_metadata", "backfill_column"];
    for (const op of ops) {
      assertError(await req("POST", `/v1/table/${t.enc}/${op}`, { body: "{}" }), 406, 0);
    }
    // (batch-commit is served: batch_commit.test.mjs)
    for (const target of ["/v1/transaction/abc/frob",
      "/v1/materialized_view/x/create", "/v1/materialized_view/x/refresh"]) {
      assertError(await req("POST", target, { body: {} }), 406, 0);
    }
  });

  it("a wrong method is 405 JSON with Allow", async () => {
    const ns = await mkNamespace();
    const r = await req("GET", `/v1/namespace/${ns}/create`);
    assert.equal(r.status, 405);
    assert.equal(typeof r.json.code, "number");
    assert.equal(r.headers.allow, "POST");
    const r2 = await req("DELETE", `/v1/namespace/${ns}/list`);
    assert.equal(r2.status, 405);
    assert.equal(r2.headers.allow, "GET, POST");
    const r3 = await req("PUT", `/v1/table/${ns}$x/describe`, { body: {} });
    assert.equal(r3.status, 405);
  });

  it("health and readiness", async () => {
    assert.deepEqual(ok(await req("GET", "/health")), { status: "ok" });
    assert.equal((await req("GET", "/ready")).status, 200);
  });

  it("requests run with the REST interface recorded in the catalog history", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    ok((await createVersion(t, 1)).res);
    let rows;
    try {
      rows = psql(`SELECT count(*) FILTER (WHERE interface = 'rest'), count(*) FROM lance_namespace.history WHERE id[1] = '${ns}'`);
    } catch (e) {
      return; // no history in this catalog version
    }
    const [rest, all] = rows.split("|").map(Number);
    assert.ok(all >= 1, `history rows: ${rows}`);
    assert.equal(rest, all, `every history row of ${ns} says rest: ${rows}`);
  });

  it("garbage on the socket does not crash the gateway", async () => {
    await raw("\x00\x01\x02 garbage\r\n\r\n");
    await raw("GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n");
    await raw("POST /v1/namespace/a/create HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\"");
    await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"h".repeat(100000)}\r\n\r\n`);
    assert.equal((await req("GET", "/health")).status, 200);
  });
});
