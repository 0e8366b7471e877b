// lib.mjs: helpers of the REST suite (no dependencies beyond Node 20).
//
// req() sends one HTTP request with the exact request target given (no
// URL normalization), so tests control percent-encoding themselves.

import http from "node:http";
import net from "node:net";
import fs from "node:fs";
import path from "node:path";
import { spawn, spawnSync } from "node:child_process";
import assert from "node:assert/strict";

export const GW_URL = process.env.GW_URL;
export const ROOT = process.env.GW_ROOT;
export const TMP = process.env.GW_TMP;
export const GW_BIN = process.env.GW_BIN;
export const GW_DB = process.env.GW_DB;
export const PG_BINDIR = process.env.PG_BINDIR;

if (!GW_URL || !ROOT) {
  throw new Error("run the REST suite through test/rest/run (GW_URL/GW_ROOT unset)");
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request. body: undefined (none), a string (raw) or a value (JSON). */
export function req(method, target, { body, headers = {}, base = GW_URL, timeoutMs = 30000 } = {}) {
  const u = new URL(base);
  let data;
  if (body !== undefined) data = typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const h = { ...headers };
  if (data !== undefined) {
    h["content-type"] ??= "application/json";
    h["content-length"] = Buffer.byteLength(data);
  }
  return new Promise((resolve, reject) => {
    const r = http.request(
      { host: u.hostname, port: u.port, method, path: target, headers: h, agent, timeout: timeoutMs },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json;
          try { json = text.length ? JSON.parse(text) : undefined; } catch { json = undefined; }
          resolve({ status: res.statusCode, headers: res.headers, text, json });
        });
      },
    );
    r.on("timeout", () => r.destroy(new Error(`timeout: ${method} ${target}`)));
    r.on("error", reject);
    if (data !== undefined) r.write(data);
    r.end();
  });
}

/** Send raw bytes on a fresh TCP connection and return the raw answer. */
export function raw(bytes, { base = GW_URL, timeoutMs = 10000 } = {}) {
  const u = new URL(base);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port) });
    const chunks = [];
    const done = () => {
      const text = Buffer.concat(chunks).toString("latin1");
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      const bodyAt = text.indexOf("\r\n\r\n");
      resolve({ status: m ? Number(m[1]) : 0, text, body: bodyAt >= 0 ? text.slice(bodyAt + 4) : "" });
    };
    s.setTimeout(timeoutMs, () => s.destroy());
    s.on("data", (c) => chunks.push(c));
    s.on("close", done);
    s.on("error", () => {});
    s.end(bytes);
  });
}

/** Assert a JSON error answer: status, Lance code, and the body shape. */
export function assertError(res, status, code, instance) {
  assert.equal(res.status, status, `expected HTTP ${status}, got ${res.status}: ${res.text}`);
  assert.ok(res.json && typeof res.json === "object", `error body is not JSON: ${res.text}`);
  assert.equal(res.json.code, code, `expected code ${code}: ${res.text}`);
  assert.equal(typeof res.json.error, "string");
  assert.ok("detail" in res.json, "error body has no detail");
  assert.ok("instance" in res.json, "error body has no instance");
  if (instance !== undefined) assert.equal(res.json.instance, instance);
  assert.match(String(res.headers["content-type"]), /application\/json/);
}

/** Assert 200 and return the JSON body. */
export function ok(res) {
  assert.equal(res.status, 200, `expected 200, got ${res.status}: ${res.text}`);
  return res.json;
}

let uniq = 0;
/** A fresh name for this run. */
export function fresh(prefix = "n") {
  uniq += 1;
  return `${prefix}${process.pid}_${uniq}`;
}

/** psql -c sql, returning trimmed unaligned output. */
export function psql(sql) {
  const r = spawnSync(path.join(PG_BINDIR, "psql"), ["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], {
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`psql failed: ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * Start psql with a script in the background; returns the child.  quiet:
 * its errors are not shown (a session the test ends on purpose).
 */
export function psqlBackground(sql, { quiet = false } = {}) {
  return spawn(path.join(PG_BINDIR, "psql"), ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], {
    stdio: ["ignore", "ignore", quiet ? "ignore" : "inherit"],
  });
}

/**
 * Hold a lock on a catalog table for ms (mode: a LOCK TABLE mode); resolves
 * with the psql child once the lock is held.  release() ends it sooner.
 */
export async function holdLock(table, ms, { mode = "ACCESS EXCLUSIVE" } = {}) {
  const tag = fresh("lk");
  const p = psqlBackground(
    `BEGIN; LOCK TABLE lance_namespace.${table} IN ${mode} MODE; ` +
      `SELECT pg_catalog.set_config('application_name', '${tag}', true); SELECT pg_sleep(${ms / 1000}); COMMIT;`,
    { quiet: true },
  );
  p.release = () =>
    psql(`SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '${tag}'`);
  for (let i = 0; i < 200; i++) {
    if (psql(`SELECT count(*) FROM pg_stat_activity WHERE application_name = '${tag}'`) === "1") return p;
    await sleep(25);
  }
  throw new Error("the lock holder did not start");
}

/** Directory of a table's manifests. */
export function versionsDir(location) {
  return path.join(location, "_versions");
}

/** The V2 manifest file name of a version. */
export function v2Name(version) {
  return (18446744073709551615n - BigInt(version)).toString().padStart(20, "0") + ".manifest";
}

/**
 * Write a staging manifest for version of a table at location, as a
 * LanceDB writer does; returns {abs, rel, bytes}.
 */
export function writeStaging(location, version, content) {
  const dir = versionsDir(location);
  fs.mkdirSync(dir, { recursive: true });
  const bytes = Buffer.from(content ?? `manifest ${version} ${Math.random()}`);
  const abs = path.join(dir, `${v2Name(version)}-${fresh("u")}`);
  fs.writeFileSync(abs, bytes);
  return { abs, rel: abs.slice(1), bytes };
}

/** Create a namespace (200 expected) and return its name. */
export async function mkNamespace(name = fresh("ns")) {
  ok(await req("POST", `/v1/namespace/${encodeURIComponent(name)}/create?delimiter=%24`, { body: {} }));
  return name;
}

/** Declare a table in namespace ns; returns {id, location}. */
export async function mkTable(ns, name = fresh("t")) {
  const id = `${ns}$${name}`;
  const body = ok(await req("POST", `/v1/table/${encodeURIComponent(id)}/declare?delimiter=%24`, { body: {} }));
  return { id, enc: encodeURIComponent(id), name, location: body.location };
}

/** Create a version through the gateway with a fresh staging file. */
export async function createVersion(t, version, { content, form = "rel", extra = {}, base = GW_URL } = {}) {
  const st = writeStaging(t.location, version, content);
  st.ino = fs.statSync(st.abs).ino;
  const res = await req("POST", `/v1/table/${t.enc}/version/create?delimiter=%24`, {
    body: { version, manifest_path: form === "abs" ? st.abs : st.rel, naming_scheme: "V2", ...extra },
    base,
  });
  return { res, st };
}

const children = new Set();
process.on("exit", () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

/**
 * Start another gateway process; resolves {proc, url, log()} once it
 * listens, or {proc, exitCode, log()} if it exits (or is killed after 20 s;
 * a run that is expected to exit, such as --sweep over every table of the
 * suite's shared root, after 120 s: the timer guards against a hang, it
 * does not time the run).
 * prefix: a command run in front of it that execs it (prlimit), so that
 * proc.pid is the gateway's.
 */
export function startGateway(args, { env = {}, expectExit = false, prefix = [] } = {}) {
  return new Promise((resolve) => {
    // prefix: a command that execs the gateway (e.g. prlimit ... --), same pid
    const argv = [...prefix, GW_BIN, ...args];
    const proc = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
    children.add(proc);
    let log = "";
    let settled = false;
    const timer = setTimeout(() => proc.kill("SIGKILL"), expectExit ? 120000 : 20000);
    proc.stderr.on("data", (c) => {
      log += c.toString();
      const m = /listening on (?:127\.0\.0\.1|0\.0\.0\.0):(\d+)/.exec(log);
      if (m && !settled && !expectExit) {
        settled = true;
        clearTimeout(timer);
        resolve({ proc, url: `http://127.0.0.1:${m[1]}`, log: () => log });
      }
    });
    proc.on("exit", (code, signal) => {
      clearTimeout(timer);
      children.delete(proc);
      if (!settled) {
        settled = true;
        resolve({ proc, exitCode: code ?? signal, log: () => log });
      }
    });
  });
}

/** Stop a child with SIGTERM (SIGKILL after 20 s); resolves its exit code. */
export function stop(proc) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve(proc.exitCode ?? proc.signalCode);
    const timer = setTimeout(() => proc.kill("SIGKILL"), 20000);
    proc.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal);
    });
    proc.kill("SIGTERM");
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------
// Tenants under README's authenticator (issue 39, item 11).
//
// README.md's "Credentials (for the gateway)" has two SQL blocks: the
// authenticator (set once by the catalog's owner) and a tenant.  The
// helpers below run exactly those blocks, with only their names replaced
// by this run's (the authenticator lance_gateway, the role tenant_a, the
// namespace adv_a, the privilege write, the root /srv/lance), so that a
// README that no longer starts the gateway fails the suite.

const README_PATH = new URL("../../README.md", import.meta.url);

/**
 * README's two blocks: {authenticator, tenant}, as written there (the
 * blocks of its "### Credentials (for the gateway)" section that start with
 * the root location's SELECT and with CREATE ROLE tenant_a).
 */
export function readmeAuthSql() {
  const readme = fs.readFileSync(README_PATH, "utf8");
  const at = readme.indexOf("\n### Credentials (for the gateway)\n");
  if (at < 0) throw new Error('README.md has no section "### Credentials (for the gateway)"');
  const blockAt = (first) => {
    const from = readme.indexOf("```sql\n" + first, at);
    if (from < 0) throw new Error(`README.md's credentials section has no sql block that starts with ${first}`);
    return /```sql\n([\s\S]*?)```/.exec(readme.slice(from))[1];
  };
  return {
    authenticator: blockAt("SELECT lance_namespace.lance_set_root_location("),
    tenant: blockAt("CREATE ROLE tenant_a "),
  };
}

/** Replace README's placeholder names (whole words) by this run's. */
function readmeNames(sql, names) {
  let out = sql;
  for (const [from, to] of Object.entries(names)) {
    out = out.replace(new RegExp(`(?<![A-Za-z0-9_])${from.replace(/[/.]/g, "\\$&")}(?![A-Za-z0-9_])`, "g"), to);
  }
  return out;
}

/**
 * Start a gateway as README's authenticator, with --db-auth.
 *   const gw = await startAuthGateway(extraArgs, { env, prefix });
 * Runs README's authenticator block (a fresh authenticator role, the root
 * location set to this run's --root), then starts the gateway connecting
 * as that role (--db GW_DB user=<role> --root ROOT --db-auth ...extraArgs).
 * Resolves gw = {url, proc, log(), role, exitCode (if it exited), tenant(),
 * stop()}:
 *   gw.tenant({ns, privilege, create, prefix}) resolves a Tenant made by
 *     README's tenant block: a fresh role (prefix, default "tenant") with
 *     `privilege` (default "write") on namespace ns (default a fresh
 *     "adv..."; created first through the suite's superuser gateway unless
 *     create is false), a member of gw.role, and its API key;
 *   gw.stop() stops the gateway (resolves its exit code).
 * Tenant = {role, key, ns, headers, req(method, target, opts), grant(ns,
 *   privilege), revoke(ns, privilege)}; tenant.req is lib's req() against
 *   gw.url with the tenant's x-api-key.
 */
export async function startAuthGateway(args = [], { env = {}, prefix = [] } = {}) {
  const { authenticator, tenant } = readmeAuthSql();
  const role = fresh("gw_auth");
  const root = fs.realpathSync(ROOT);
  psql(readmeNames(authenticator, { lance_gateway: role, "/srv/lance": root }));
  const g = await startGateway(
    ["--listen", "127.0.0.1:0", "--db", `${GW_DB} user=${role}`, "--root", root, "--db-auth", ...args],
    { env, prefix },
  );
  g.role = role;
  g.stop = () => stop(g.proc);
  g.tenant = async ({ ns = fresh("adv"), privilege = "write", create = true, prefix: p = "tenant" } = {}) => {
    if (create) {
      const r = await req("POST", `/v1/namespace/${encodeURIComponent(ns)}/create?delimiter=%24`, { body: {} });
      if (r.status !== 200 && r.status !== 409) throw new Error(`cannot create namespace ${ns}: ${r.status} ${r.text}`);
    }
    const t = { role: fresh(p), ns };
    t.key = psql(readmeNames(tenant, { lance_gateway: role, tenant_a: t.role, adv_a: ns, write: privilege }));
    t.headers = { "x-api-key": t.key };
    t.req = (method, target, opts = {}) =>
      req(method, target, { ...opts, base: g.url, headers: { ...t.headers, ...(opts.headers ?? {}) } });
    t.grant = (n, priv = "write") => psql(`SELECT lance_namespace.lance_grant('${t.role}', ARRAY['${n}'], '${priv}')`);
    t.revoke = (n, priv = "write") => psql(`SELECT lance_namespace.lance_revoke('${t.role}', ARRAY['${n}'], '${priv}')`);
    return t;
  };
  return g;
}

/**
 * The usual pair: a gateway under README's authenticator, tenant A with
 * `write` on a fresh namespace adv_a..., tenant B with `write` on adv_b...
 * only.  Resolves {gw, A, B}; stop with gw.stop().
 */
export async function startTenantPair(args = [], opts = {}) {
  const gw = await startAuthGateway(args, opts);
  if (!gw.url) throw new Error(`the gateway under README's authenticator did not start: ${gw.log()}`);
  const A = await gw.tenant({ ns: fresh("adv_a"), prefix: "tenant_a" });
  const B = await gw.tenant({ ns: fresh("adv_b"), prefix: "tenant_b" });
  return { gw, A, B };
}
