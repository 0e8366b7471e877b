// rest_floor.mjs: a floor probe, NOT a catalog.  node rest_floor.mjs <port>
// <root> serves, on 127.0.0.1:<port>, the REST routes that LanceDB's
// managed-versioning client (connectNamespace "rest", bench/lancedb.mjs)
// calls, at as little cost as a server can: state in this process's
// memory, no database, no flush, no durability, no checks beyond what the
// client needs to work.  version/create hard links the staged manifest to
// its canonical name (the put-if-not-exists that the gateway does too),
// without any fsync.  What LanceDB's add costs through this server, against
// Lance's own DirectoryNamespace in-process, is the price of the client's
// REST path itself: no REST catalog can be cheaper than this one.
//
// Routes (anything else gets 406, so a client that needs more fails loudly):
//   POST /v1/namespace/{id}/create     POST /v1/table/{id}/declare
//   POST /v1/table/{id}/version/list   POST /v1/table/{id}/version/create
//   POST /v1/table/{id}/version/describe
// On SIGTERM it prints "FLOOR requests=<n> creates=<c> create_median_us=<us>"
// (the requests served, and the median time from a version/create's head
// to its answer, in this process) and exits.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";

const [portArg, rootArg] = process.argv.slice(2);
if (!portArg || !rootArg) {
  console.error("usage: node rest_floor.mjs <port> <root>");
  process.exit(2);
}
const root = path.resolve(rootArg);
const namespaces = new Set();
const tables = new Map();	// "ns$name" -> { location, versions: Map(version -> entry) }
let served = 0;
const createUs = [];	// per version/create: head arrived -> answer written

function reply(res, status, body) {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function error(res, status, code, detail, message) {
  reply(res, status, { error: message, code, detail });
}

// canonical manifest name of a version: V2 names count down from u64::MAX
function canonicalName(version, scheme) {
  if (scheme === "V1")
    return `${version}.manifest`;
  return (18446744073709551615n - BigInt(version)).toString().padStart(20, "0") + ".manifest";
}

function versionList(t, query) {
  let list = [...t.versions.values()].sort((a, b) => a.version - b.version);
  if (query.get("descending") === "true")
    list.reverse();
  const limit = Number(query.get("limit") || 0);
  if (limit > 0)
    list = list.slice(0, limit);
  return { versions: list };
}

function createVersion(res, t, body) {
  const staging = "/" + String(body.manifest_path || "").replace(/^\/+/, "");
  const dir = path.dirname(staging);
  if (path.basename(dir) !== "_versions" || !staging.startsWith(t.location + "/"))
    return error(res, 400, 13, "InvalidInput", `manifest_path ${body.manifest_path} is not in the table's _versions`);
  const canonical = path.join(dir, canonicalName(body.version, body.naming_scheme));
  try {
    fs.linkSync(staging, canonical);
  } catch (e) {
    if (e.code === "EEXIST")
      return error(res, 409, 14, "ConcurrentModification", `version ${body.version} exists`);
    return error(res, 400, 13, "InvalidInput", `staging manifest ${staging}: ${e.code}`);
  }
  const entry = {
    version: body.version,
    manifest_path: canonical.slice(1),
    manifest_size: body.manifest_size,
    e_tag: body.e_tag,
    timestamp_millis: Date.now(),
  };
  t.versions.set(body.version, entry);
  reply(res, 200, { version: entry });
}

function route(req, res, body) {
  const url = new URL(req.url, "http://x");
  const delim = url.searchParams.get("delimiter") || "$";
  const m = url.pathname.match(/^\/v1\/(namespace|table)\/([^/]+)\/(.+)$/);
  if (req.method !== "POST" || m === null)
    return error(res, 406, 0, "Unsupported", `${req.method} ${url.pathname} is not served by the floor probe`);
  const id = decodeURIComponent(m[2]).split(delim);
  const key = id.join("$");
  const op = `${m[1]}/${m[3]}`;
  if (op === "namespace/create") {
    if (namespaces.has(key))
      return error(res, 409, 2, "NamespaceAlreadyExists", `namespace ${key} exists`);
    namespaces.add(key);
    return reply(res, 200, { properties: {} });
  }
  if (op === "table/declare") {
    if (tables.has(key))
      return error(res, 409, 5, "TableAlreadyExists", `table ${key} exists`);
    const location = path.join(root, ...id.slice(0, -1), id[id.length - 1] + ".lance");
    tables.set(key, { location, versions: new Map() });
    return reply(res, 200, { location, properties: {}, managed_versioning: true });
  }
  const t = tables.get(key);
  if (t === undefined)
    return error(res, 404, 4, "TableNotFound", `table ${key} not found`);
  if (op === "table/version/list")
    return reply(res, 200, versionList(t, url.searchParams));
  if (op === "table/version/create")
    return createVersion(res, t, body);
  if (op === "table/version/describe") {
    const v = t.versions.get(Number(body.version));
    return v ? reply(res, 200, { version: v }) : error(res, 404, 11, "TableVersionNotFound", `version ${body.version} not found`);
  }
  return error(res, 406, 0, "Unsupported", `${op} is not served by the floor probe`);
}

const server = http.createServer({ keepAliveTimeout: 60000 }, (req, res) => {
  const t0 = process.hrtime.bigint();
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    served++;
    let body = {};
    try {
      const text = Buffer.concat(chunks).toString();
      body = text && text !== "null" ? JSON.parse(text) : {};
    } catch {
      return error(res, 400, 13, "InvalidInput", "the body is not JSON");
    }
    route(req, res, body || {});
    if (req.url.includes("/version/create"))
      createUs.push(Number(process.hrtime.bigint() - t0) / 1000);
  });
});

process.on("SIGTERM", () => {
  createUs.sort((a, b) => a - b);
  const med = createUs.length ? createUs[Math.floor(createUs.length / 2)].toFixed(0) : "nan";
  console.log(`FLOOR requests=${served} creates=${createUs.length} create_median_us=${med}`);
  process.exit(0);
});
server.listen(Number(portArg), "127.0.0.1", () => {
  console.log(`rest_floor listening on 127.0.0.1:${portArg}`);
});
