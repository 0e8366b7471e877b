// shapes.test.mjs: every route's 200 response, and error bodies, checked
// against the response schema spec.yaml gives it.  The schemas come from
// test/rest/spec/shapes.json (scripts/gen-spec-shapes extracts them from
// spec.yaml), so the suite does not need the spec itself.  The check is
// strict where the spec is: types (an array is not a string, null is not a
// string unless the schema is nullable), required fields, item and map value
// types, minimums; and every field a response sends must be one the schema
// names (a misspelt or invented field fails).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { req, mkNamespace, mkTable, createVersion, writeStaging, fresh } from "./lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SPEC = JSON.parse(fs.readFileSync(path.join(HERE, "spec", "shapes.json"), "utf8"));

/** Problems of value v against schema s, as "path: what" strings. */
function check(v, s, at = "$", out = []) {
  if (s.$ref) return check(v, SPEC.schemas[s.$ref.split("/").pop()], at, out);
  if (v === null) {
    if (!s.nullable) out.push(`${at}: null where the spec says ${s.type ?? "a value"}`);
    return out;
  }
  const t = s.type;
  const actual = Array.isArray(v) ? "array" : typeof v;
  if (t === "integer" && !(typeof v === "number" && Number.isInteger(v))) out.push(`${at}: ${actual}, not integer`);
  else if (t === "number" && typeof v !== "number") out.push(`${at}: ${actual}, not number`);
  else if (t === "string" && typeof v !== "string") out.push(`${at}: ${actual}, not string`);
  else if (t === "boolean" && typeof v !== "boolean") out.push(`${at}: ${actual}, not boolean`);
  else if (t === "array" && !Array.isArray(v)) out.push(`${at}: ${actual}, not array`);
  else if (t === "object" && (typeof v !== "object" || Array.isArray(v))) out.push(`${at}: ${actual}, not object`);
  if (out.length) return out;
  if (s.minimum !== undefined && typeof v === "number" && v < s.minimum) out.push(`${at}: ${v} < ${s.minimum}`);
  if (s.minLength !== undefined && typeof v === "string" && v.length < s.minLength) out.push(`${at}: shorter than ${s.minLength}`);
  if (Array.isArray(v) && s.items) v.forEach((x, i) => check(x, s.items, `${at}[${i}]`, out));
  if (actual === "object" && !Array.isArray(v)) {
    for (const r of s.required ?? []) if (!(r in v)) out.push(`${at}: required field ${r} missing`);
    for (const [k, x] of Object.entries(v)) {
      if (s.properties && k in s.properties) check(x, s.properties[k], `${at}.${k}`, out);
      else if (s.additionalProperties && typeof s.additionalProperties === "object") check(x, s.additionalProperties, `${at}.${k}`, out);
      else if (s.properties) out.push(`${at}: field ${k} is not in the schema`);
    }
  }
  return out;
}

/** Call a route and check its 200 body against the route's schema. */
async function shaped(method, template, target, body) {
  const r = await req(method, target, { body });
  assert.equal(r.status, 200, `${method} ${target}: ${r.status} ${r.text}`);
  const name = SPEC.routes[`${method} ${template}`] ?? SPEC.routes[`POST ${template}`];
  assert.ok(name, `no schema for ${template}`);
  const problems = check(r.json, { $ref: name });
  assert.deepEqual(problems, [], `${template} (${name}): ${r.text}`);
  return r.json;
}

/** Check an error body against ErrorResponse (and the four fields we promise). */
function errorShaped(r) {
  assert.ok(r.status >= 400, r.text);
  assert.deepEqual(check(r.json, { $ref: "ErrorResponse" }), [], r.text);
  for (const k of ["error", "code", "detail", "instance"]) assert.ok(k in r.json, `error body lacks ${k}: ${r.text}`);
}

describe("response shapes against spec.yaml", () => {
  it("the checker itself finds wrong types, nulls, unknown and missing fields", () => {
    assert.ok(check({ transaction_id: "x" }, { $ref: "DropNamespaceResponse" }).length > 0);
    assert.ok(check({ code: 1, detail: null }, { $ref: "ErrorResponse" }).length > 0);
    assert.ok(check({ versions: [{ version: 1 }] }, { $ref: "ListTableVersionsResponse" }).length > 0);
    assert.ok(check({ version: { version: 1, manifest_path: "p", bogus: 1 } }, { $ref: "DescribeTableVersionResponse" }).length > 0);
    assert.deepEqual(check({ transaction_id: ["x"] }, { $ref: "DropNamespaceResponse" }), []);
  });

  it("namespace routes", async () => {
    const ns = fresh("shp");
    const I = "/v1/namespace/{id}";
    await shaped("POST", `${I}/create`, `/v1/namespace/${ns}/create`, { properties: { a: "b" } });
    await shaped("POST", `${I}/describe`, `/v1/namespace/${ns}/describe`, {});
    await shaped("GET", `${I}/list`, `/v1/namespace/${ns}/list`);
    await shaped("GET", `${I}/list`, `/v1/namespace/%24/list?limit=1`);
    await shaped("GET", `${I}/table/list`, `/v1/namespace/${ns}/table/list`);
    await shaped("GET", "/v1/table", "/v1/table");
    await shaped("POST", `${I}/drop`, `/v1/namespace/${ns}/drop`, {});
  });

  it("table routes", async () => {
    const ns = await mkNamespace();
    const T = "/v1/table/{id}";
    const id = `${ns}$${fresh("t")}`;
    const enc = encodeURIComponent(id);
    const declared = await shaped("POST", `${T}/declare`, `/v1/table/${enc}/declare`, {});
    await shaped("POST", `${T}/describe`, `/v1/table/${enc}/describe`, {});
    await shaped("POST", `${T}/describe`, `/v1/table/${enc}/describe?with_table_uri=true&check_declared=true`, {});
    const rid = `${ns}$${fresh("r")}`;
    await shaped("POST", `${T}/register`, `/v1/table/${encodeURIComponent(rid)}/register`,
      { location: `${path.dirname(declared.location)}/${fresh("reg")}.lance` });
    await shaped("POST", `${T}/rename`, `/v1/table/${encodeURIComponent(rid)}/rename`, { new_table_name: fresh("rn") });
    const did = `${ns}$${fresh("d")}`;
    await shaped("POST", `${T}/declare`, `/v1/table/${encodeURIComponent(did)}/declare`, {});
    await shaped("POST", `${T}/deregister`, `/v1/table/${encodeURIComponent(did)}/deregister`, {});
    const xid = `${ns}$${fresh("x")}`;
    await shaped("POST", `${T}/declare`, `/v1/table/${encodeURIComponent(xid)}/declare`, {});
    await shaped("POST", `${T}/drop`, `/v1/table/${encodeURIComponent(xid)}/drop`, {});
  });

  it("version, tag, branch and transaction routes", async () => {
    const ns = await mkNamespace();
    const t = await mkTable(ns);
    const T = "/v1/table/{id}";
    const s1 = writeStaging(t.location, 1, "one");
    const created = await shaped("POST", `${T}/version/create`, `/v1/table/${t.enc}/version/create?delimiter=%24`,
      { version: 1, manifest_path: s1.rel });
    ok2(await createVersion(t, 2));
    await shaped("POST", `${T}/version/describe`, `/v1/table/${t.enc}/version/describe`, { version: 1 });
    await shaped("POST", `${T}/version/list`, `/v1/table/${t.enc}/version/list`, {});
    await shaped("POST", `${T}/version/list`, `/v1/table/${t.enc}/version/list?limit=1&descending=true`, {});
    const s3 = writeStaging(t.location, 3, "three");
    await shaped("POST", "/v1/table/version/batch-create", "/v1/table/version/batch-create",
      { entries: [{ id: [ns, t.name], version: 3, manifest_path: s3.rel }] });
    await shaped("POST", `${T}/tags/create`, `/v1/table/${t.enc}/tags/create`, { tag: "a", version: 1 });
    await shaped("POST", `${T}/tags/version`, `/v1/table/${t.enc}/tags/version`, { tag: "a" });
    await shaped("POST", `${T}/tags/list`, `/v1/table/${t.enc}/tags/list`, {});
    await shaped("POST", `${T}/tags/update`, `/v1/table/${t.enc}/tags/update`, { tag: "a", version: 2 });
    await shaped("POST", `${T}/tags/delete`, `/v1/table/${t.enc}/tags/delete`, { tag: "a" });
    await shaped("POST", `${T}/branches/create`, `/v1/table/${t.enc}/branches/create`, { name: "b1", from_version: 1 });
    await shaped("POST", `${T}/branches/list`, `/v1/table/${t.enc}/branches/list`, {});
    await shaped("POST", `${T}/branches/delete`, `/v1/table/${t.enc}/branches/delete`, { name: "b1" });
    await shaped("POST", `${T}/version/delete`, `/v1/table/${t.enc}/version/delete`,
      { ranges: [{ start_version: 3, end_version: 3 }] });
    const txid = created.transaction_id ?? (await req("POST", `/v1/table/${t.enc}/tags/create`, { body: { tag: "z", version: 1 } })).json.transaction_id;
    assert.ok(txid, "a mutating route reports a transaction id");
    await shaped("POST", "/v1/transaction/{id}/describe", `/v1/transaction/${txid}/describe`, {});
    await shaped("POST", "/v1/transaction/{id}/alter", `/v1/transaction/${txid}/alter`,
      { actions: [{ setPropertyAction: { key: "k", value: "v" } }] });
    const s4 = writeStaging(t.location, 4, "four");
    await shaped("POST", "/v1/table/batch-commit", "/v1/table/batch-commit",
      { operations: [{ create_table_version: { id: [ns, t.name], version: 4, manifest_path: s4.rel } }] });
  });

  it("error bodies: strings where the spec says string, never null", async () => {
    const ns = await mkNamespace();
    errorShaped(await req("POST", `/v1/namespace/${ns}_missing/describe`, { body: {} }));
    errorShaped(await req("POST", `/v1/namespace/${ns}/create`, { body: {} }));
    errorShaped(await req("POST", "/v1/nothing/here"));
    errorShaped(await req("POST", `/v1/namespace/${ns}/list?limit=x`));
    errorShaped(await req("GET", `/v1/namespace/${ns}/drop`));
  });
});

function ok2({ res }) {
  assert.equal(res.status, 200, res.text);
}
