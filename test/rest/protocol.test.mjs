// HTTP translation: path ids, delimiters and percent-encoding, bodies
// (missing, null, malformed, hostile), id mismatch, routes, methods,
// unsupported data operations, limits, and the error body shape; and the
// HTTP server (libmicrohttpd) as the gateway uses it: keep-alive,
// pipelining, chunked request bodies, Expect: 100-continue, HTTP/1.0,
// bytes that are not HTTP and the connection limit.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import {
  GW_URL, GW_DB, ROOT, req, raw, ok, assertError, fresh, mkNamespace, mkTable, createVersion, psql,
  startGateway, stop, sleep,
} from "./lib.mjs";

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
  it("unknown routes are 406 code 0 (Unsupported), as the code's status says, not 404", async () => {
    for (const target of ["/", "/v1", "/v1/nothing", "/v1/namespace/x/frobnicate", "/v2/namespace/x/list",
      "/v1/table/x/version/frob", "/v1/table/x/tags/frob", "/v1/table/x/branches/frob", "/v1/transaction/x/frob"]) {
      assertError(await req("POST", target), 406, 0, target);
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
    const r4 = await req("POST", "/health", { body: {} });
    assert.equal(r4.status, 405);
    assert.equal(r4.headers.allow, "GET");
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

  it("a request over the header limit is a JSON 431; bytes that are not HTTP get at most the library's 400", async () => {
    // HTTP that breaks the gateway's limit: the gateway's JSON answer
    const big = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"h".repeat(20000)}\r\n\r\n`);
    assert.equal(big.status, 431, big.text.slice(0, 300));
    assert.match(big.text, /\r\nContent-Type: application\/json\r\n/i);
    const body = JSON.parse(big.body);
    assert.equal(body.code, 13);
    for (const k of ["error", "detail", "instance"]) assert.ok(k in body, `no ${k}`);
    // bytes that are not HTTP (or break its framing): libmicrohttpd answers
    // 400 or closes; never a success, never a 5xx, and the gateway lives on
    for (const bytes of [
      "\x00\x01\x02 garbage\r\n\r\n",
      "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
      "POST /v1/namespace/a/create HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\"",
      "GET /health HTTP/2.0\r\nHost: x\r\n\r\n",
    ]) {
      const r = await raw(bytes, { timeoutMs: 2000 });
      const shown = JSON.stringify(bytes.slice(0, 40));
      assert.ok(r.status === 0 || r.status === 400 || r.status === 505, `${shown}: ${r.text.slice(0, 300)}`);
    }
    assert.equal((await req("GET", "/health")).status, 200);
  });
});

/** Parse one HTTP response at the start of buf (latin1), or null if incomplete. */
function parseResponse(buf, { head = false } = {}) {
  const text = buf.toString("latin1");
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const lines = text.slice(0, end).split("\r\n");
  const m = /^HTTP\/1\.1 (\d{3}) [^\r\n]+$/.exec(lines[0]);
  if (!m) throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify(text.slice(0, 80))}`);
  const headers = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(":");
    headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  const status = Number(m[1]);
  let pos = end + 4;
  let body = "";
  if (status === 100 || head) {
    // no body
  } else if (headers["transfer-encoding"] === "chunked") {
    for (;;) {
      const eol = text.indexOf("\r\n", pos);
      if (eol < 0) return null;
      const size = parseInt(text.slice(pos, eol), 16);
      if (text.length < eol + 2 + size + 2) return null;
      body += text.slice(eol + 2, eol + 2 + size);
      pos = eol + 2 + size + 2;
      if (size === 0) break;
    }
  } else if (headers["content-length"] !== undefined) {
    const n = Number(headers["content-length"]);
    if (text.length < pos + n) return null;
    body = text.slice(pos, pos + n);
    pos += n;
  }
  let json;
  try { json = JSON.parse(body); } catch { json = undefined; }
  return { status, headers, body, json, length: pos };
}

/** A raw client connection: write bytes, read responses one by one. */
function connect(base = GW_URL) {
  const u = new URL(base);
  const s = net.connect({ host: u.hostname, port: Number(u.port) });
  let buf = Buffer.alloc(0);
  let closed = false;
  let waiters = [];
  const wake = () => { const w = waiters; waiters = []; for (const f of w) f(); };
  s.on("data", (c) => { buf = Buffer.concat([buf, c]); wake(); });
  s.on("close", () => { closed = true; wake(); });
  s.on("error", () => {});
  async function until(pred, ms, what) {
    const end = Date.now() + ms;
    for (;;) {
      const v = pred();
      if (v || closed) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => { waiters.push(r); setTimeout(r, 50); });
    }
  }
  return {
    write: (b) => s.write(b),
    destroy: () => s.destroy(),
    get closed() { return closed; },
    get pending() { return buf.length; },
    /** The next complete response; null if the connection closed first. */
    async response({ ms = 10000, head = false } = {}) {
      const r = await until(() => parseResponse(buf, { head }), ms, "a response");
      if (r) buf = buf.subarray(r.length);
      return r;
    },
    async waitClosed(ms = 5000) {
      await until(() => closed, ms, "the server to close the connection");
      return closed;
    },
  };
}

function assertJsonError(r, status, code) {
  assert.ok(r, "no response");
  assert.equal(r.status, status, r.body);
  assert.match(r.headers["content-type"] ?? "", /^application\/json/);
  assert.equal(r.json?.code, code, r.body);
  for (const k of ["error", "detail", "instance"]) assert.ok(k in r.json, `no ${k}: ${r.body}`);
}

describe("the HTTP server", () => {
  it("keeps a connection alive across requests, and HEAD has no body", async () => {
    const c = connect();
    try {
      for (let i = 0; i < 3; i++) {
        c.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
        const r = await c.response();
        assert.equal(r.status, 200);
        assert.deepEqual(r.json, { status: "ok" });
        assert.equal(r.headers.connection, undefined);
        assert.match(r.headers.date ?? "", /GMT$/);
      }
      c.write("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n");
      const h = await c.response({ head: true });
      assert.equal(h.status, 200);
      assert.equal(h.headers["content-length"], "15");
      // a HEAD body would break the framing of the next response
      c.write("GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      const r = await c.response();
      assertJsonError(r, 406, 0);
      assert.equal(r.json.instance, "/nope");
      assert.equal(r.headers.connection, "close");
      assert.ok(await c.waitClosed());
      assert.equal(c.pending, 0);
    } finally {
      c.destroy();
    }
  });

  it("answers pipelined requests in order on one connection", async () => {
    const ns = fresh("pipe");
    const body = JSON.stringify({ properties: { k: "v" } });
    const c = connect();
    try {
      c.write(`GET /health HTTP/1.1\r\nHost: x\r\n\r\n` +
        `POST /v1/namespace/${ns}/create HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
        `POST /v1/namespace/${ns}/describe HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n` +
        `GET /nope?x=1 HTTP/1.1\r\nHost: x\r\n\r\n`);
      assert.deepEqual((await c.response()).json, { status: "ok" });
      assert.equal((await c.response()).status, 200);
      const d = await c.response();
      assert.equal(d.status, 200, d.body);
      assert.deepEqual(d.json.properties, { k: "v" });
      const r = await c.response();
      assertJsonError(r, 406, 0);
      assert.equal(r.json.instance, "/nope");
      assert.ok(!c.closed);
    } finally {
      c.destroy();
    }
  });

  it("reads chunked request bodies, arriving in pieces", async () => {
    const ns = fresh("chunk");
    const body = JSON.stringify({ properties: { owner: "chunked", pad: "p".repeat(3000) } });
    const c = connect();
    try {
      c.write(`POST /v1/namespace/${ns}/create HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const parts = [body.slice(0, 10), body.slice(10, 2000), body.slice(2000)];
      for (const [i, p] of parts.entries()) {
        const frame = `${p.length.toString(16)}${i === 1 ? ";ext=1" : ""}\r\n${p}\r\n`;
        c.write(frame.slice(0, 3));
        await sleep(20);
        c.write(frame.slice(3));
      }
      c.write("0\r\nX-Trailer: ignored\r\n\r\n");
      const r = await c.response();
      assert.equal(r.status, 200, r.body);
      c.write(`POST /v1/namespace/${ns}/describe HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`);
      const d = await c.response();
      assert.equal(d.status, 200, d.body);
      assert.equal(d.json.properties.owner, "chunked");
      assert.equal(d.json.properties.pad.length, 3000);
      // a bad chunk size breaks the framing: libmicrohttpd's 400, and the
      // connection ends
      c.write(`POST /v1/namespace/${ns}/describe HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`);
      const bad = await c.response();
      if (bad) assert.equal(bad.status, 400, bad.body);
      assert.ok(await c.waitClosed());
    } finally {
      c.destroy();
    }
    // Node's own client sends a body without Content-Length chunked
    const u = new URL(GW_URL);
    const res = await new Promise((resolve, reject) => {
      const r = http.request({ host: u.hostname, port: u.port, method: "POST", path: `/v1/namespace/${ns}/describe`, agent: false },
        (resp) => {
          let text = "";
          resp.on("data", (d) => { text += d; });
          resp.on("end", () => resolve({ status: resp.statusCode, json: JSON.parse(text) }));
        });
      r.on("error", reject);
      r.write("{\"id\":");
      r.write(`["${ns}"]}`);
      r.end();
    });
    assert.equal(res.status, 200);
    assert.equal(res.json.properties.owner, "chunked");
  });

  it("sends 100 Continue before reading a body, and not for a refused one", async () => {
    const ns = fresh("cont");
    const body = JSON.stringify({ properties: { a: "b" } });
    const c = connect();
    try {
      c.write(`POST /v1/namespace/${ns}/create HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n` +
        `Content-Length: ${body.length}\r\n\r\n`);
      const cont = await c.response();
      assert.equal(cont.status, 100);
      assert.equal(c.pending, 0);
      c.write(body);
      const r = await c.response();
      assert.equal(r.status, 200, r.body);
      // the body is already there: the library may still send its 100 first
      c.write(`POST /v1/namespace/${ns}/describe HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n` +
        "Content-Length: 2\r\n\r\n{}");
      let d = await c.response();
      if (d.status === 100) d = await c.response();
      assert.equal(d.status, 200, d.body);
      assert.deepEqual(d.json.properties, { a: "b" });
    } finally {
      c.destroy();
    }
    const c2 = connect();
    try {
      c2.write(`POST /v1/namespace/${ns}/describe HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n` +
        "Content-Length: 100000000\r\n\r\n");
      const r = await c2.response();
      assertJsonError(r, 413, 13);
      assert.equal(r.headers.connection, "close");
      assert.ok(await c2.waitClosed());
    } finally {
      c2.destroy();
    }
  });

  it("speaks HTTP/1.0: closes by default, keeps alive on request", async () => {
    const c = connect();
    try {
      c.write("GET /health HTTP/1.0\r\n\r\n");
      const r = await c.response();
      assert.equal(r.status, 200);
      assert.equal(r.headers.connection, "close");
      assert.ok(await c.waitClosed());
    } finally {
      c.destroy();
    }
    const k = connect();
    try {
      for (let i = 0; i < 2; i++) {
        k.write("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        const r = await k.response();
        assert.equal(r.status, 200);
        assert.equal(r.headers.connection.toLowerCase(), "keep-alive");
      }
      k.write("GET /nope HTTP/1.0\r\n\r\n");
      assertJsonError(await k.response(), 406, 0);
      assert.ok(await k.waitClosed());
    } finally {
      k.destroy();
    }
  });

  it("closes the connection when garbage follows a good request", async () => {
    const c = connect();
    try {
      c.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
      assert.equal((await c.response()).status, 200);
      c.write("NOT HTTP AT ALL\r\n\r\n");
      const r = await c.response();
      if (r) assert.equal(r.status, 400, r.body);
      assert.ok(await c.waitClosed());
    } finally {
      c.destroy();
    }
  });

  it("keeps a connection beyond --max-connections waiting until a slot is free", async () => {
    const g = await startGateway(["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", ROOT, "--quiet",
      "--max-connections", "1"]);
    const hold = connect(g.url);
    let c;
    try {
      hold.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
      assert.equal((await hold.response()).status, 200);
      c = connect(g.url);
      c.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
      // the held connection is served again; the other one is not taken
      for (let i = 0; i < 3; i++) {
        hold.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
        assert.equal((await hold.response()).status, 200);
      }
      assert.equal(c.pending, 0, "a connection beyond the limit was served");
      hold.destroy();
      const r = await c.response();
      assert.equal(r?.status, 200, "the slot was not freed");
    } finally {
      hold.destroy();
      c?.destroy();
      await stop(g.proc);
    }
  });
});

describe("what SQL sees of a request", () => {
  // src/gateway/README.md: request.headers (a JSON object with lower-cased
  // names), request.method and request.path are set for the call as
  // PostgREST sets them, and lance_namespace.interface is rest.  A trigger
  // on the catalog's entries records them while CreateNamespace inserts.
  it("request.headers, request.method, request.path and the interface", async () => {
    psql(`CREATE TABLE public.seen_requests (name text, headers text, method text, path text, interface text);
          GRANT ALL ON public.seen_requests TO PUBLIC;
          CREATE FUNCTION public.seen_request() RETURNS trigger LANGUAGE plpgsql AS $f$
          BEGIN
            INSERT INTO public.seen_requests VALUES (NEW.name, current_setting('request.headers', true),
              current_setting('request.method', true), current_setting('request.path', true),
              current_setting('lance_namespace.interface', true));
            RETURN NULL;
          END $f$;
          CREATE TRIGGER seen_request AFTER INSERT ON lance_namespace.entries
            FOR EACH ROW EXECUTE FUNCTION public.seen_request();`);
    try {
      const ns = fresh("seen");
      const target = `/v1/namespace/${ns}/create`;
      // header values go out as latin1: these are the bytes of UTF-8 text,
      // and two bytes that are not UTF-8
      const r = await req("POST", target, {
        headers: {
          Host: "gw.example", "X-Quote": 'a"b\\c', "X-Tab": "a\tb", "X-MiXeD-Case": "v", "X-Dup": ["1", "2"],
          "X-Utf8": Buffer.from("h\u00e9llo \u2713", "utf8").toString("latin1"), "X-Not-Utf8": "\xff\xfe",
        },
      });
      assert.equal(r.status, 200, r.text);
      const row = psql(`SELECT json_build_array(headers::jsonb, method, path, interface)
                          FROM public.seen_requests WHERE name = '${ns}'`);
      assert.ok(row, "the trigger saw no insert of the namespace");
      const [h, method, path, iface] = JSON.parse(row);
      assert.equal(method, "POST");
      assert.equal(path, target);
      assert.equal(iface, "rest");
      assert.equal(h.host, "gw.example");
      assert.equal(h["x-quote"], 'a"b\\c');
      assert.equal(h["x-tab"], "a\tb");
      assert.equal(h["x-mixed-case"], "v");
      assert.equal(h["x-utf8"], "h\u00e9llo \u2713");
      assert.equal(h["x-dup"], "2", "the last of two fields of one name");
      assert.ok(!("x-not-utf8" in h), "a value that is not UTF-8 is left out");
      for (const k of Object.keys(h)) assert.equal(k, k.toLowerCase());
    } finally {
      psql(`DROP TRIGGER seen_request ON lance_namespace.entries;
            DROP FUNCTION public.seen_request(); DROP TABLE public.seen_requests;`);
    }
  });
});
