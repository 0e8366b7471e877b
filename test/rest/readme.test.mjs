// readme.test.mjs: README.md's psql walkthrough and its REST examples with
// curl, run as a new user would copy them, each in a database of its own
// (the REST one behind a gateway of its own): every statement and request
// succeeds, except the errors that the README shows, which must be the
// errors the catalog gives, word for word.  The README's paths under
// scripts/run's root (/var/tmp/lance_namespace/data) and its gateway URL
// become this run's.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { PG_BINDIR, TMP, startGateway, stop } from "./lib.mjs";

const README = fs.readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const RUN_ROOT = "/var/tmp/lance_namespace/data";

/** The first ```lang block of the section headed `heading` (that starts with `first`, if given). */
function block(heading, lang, first = "") {
  const at = README.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `README.md has a section "${heading}"`);
  const from = first ? README.indexOf("```" + lang + "\n" + first, at) : at;
  assert.ok(from >= 0, `README.md's "${heading}" has a block that starts with ${first}`);
  const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(README.slice(from));
  assert.ok(m, `README.md's "${heading}" has a ${lang} block`);
  return m[1];
}

/** Run a program; {status, stdout, stderr}. */
function run(cmd, args, opts = {}) {
  return spawnSync(cmd, args, { encoding: "utf8", ...opts });
}

/** A database of its own with the extension; its conninfo. */
function database(name) {
  const psql = path.join(PG_BINDIR, "psql");
  let r = run(psql, ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", `CREATE DATABASE ${name}`]);
  assert.equal(r.status, 0, r.stderr);
  r = run(psql, ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", name, "-c", "CREATE EXTENSION lance_namespace"]);
  assert.equal(r.status, 0, r.stderr);
  return `host=${process.env.PGHOST} port=${process.env.PGPORT} dbname=${name}`;
}

describe("README.md, as a new user runs it", () => {
  it("the psql walkthrough: every statement works, and its one error is the catalog's, word for word", () => {
    const sql = block("## psql walkthrough", "sql");
    const db = database("readme_psql");
    const r = run(path.join(PG_BINDIR, "psql"), ["-X", "-d", db, "-f", "-"], { input: sql });
    assert.equal(r.status, 0, r.stderr);
    // what psql printed for errors, without its "psql:<stdin>:LINE: " prefix
    const got = r.stderr.split("\n").map((l) => l.replace(/^psql:<stdin>:\d+: /, "")).filter((l) => l !== "");
    // what the README shows for them: its "-- ERROR:", "-- DETAIL:", "-- HINT:" lines
    const shown = sql.split("\n").filter((l) => /^-- (ERROR|DETAIL|HINT):/.test(l)).map((l) => l.slice(3));
    assert.ok(shown.length > 0, "the walkthrough shows an error");
    assert.deepEqual(got, shown);
    // and the statements ran: the namespaces it made are gone, its history is there
    const h = run(path.join(PG_BINDIR, "psql"), ["-X", "-A", "-t", "-d", db, "-c",
      "SELECT string_agg(DISTINCT operation, ',' ORDER BY operation) FROM lance_namespace.commit_history"]);
    assert.equal(h.status, 0, h.stderr);
    for (const op of ["CreateNamespace", "DeclareTable", "CreateTableVersion", "RenameTable", "DropNamespace"]) {
      assert.match(h.stdout, new RegExp(`\\b${op}\\b`), `the history records ${op}`);
    }
  });

  describe("the REST examples with curl", () => {
    let gw;
    let root;
    before(async () => {
      const db = database("readme_rest");
      root = path.join(TMP, "readme_root");
      fs.mkdirSync(root, { recursive: true });
      const r = run(path.join(PG_BINDIR, "psql"), ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db, "-c",
        `SELECT lance_namespace.lance_set_root_location('${root}')`]);
      assert.equal(r.status, 0, r.stderr);
      gw = await startGateway(["--listen", "127.0.0.1:0", "--db", db, "--root", root]);
      assert.ok(gw.url, `the gateway started: ${gw.log()}`);
    });
    after(async () => {
      if (gw?.proc) await stop(gw.proc);
    });

    it("every request answers 2xx, and the version it creates is there", () => {
      const sh = block("## REST gateway", "sh", "B=http://127.0.0.1:2333\n")
        .replace("B=http://127.0.0.1:2333", `B=${gw.url}`)
        .replaceAll(RUN_ROOT, root)
        .replaceAll(RUN_ROOT.slice(1), root.slice(1));
      const calls = (sh.match(/^\s*curl |; curl /gm) ?? []).length;
      assert.ok(calls >= 10, `the block has its curl examples (${calls})`);
      const out = path.join(TMP, "readme_curl");
      fs.mkdirSync(out, { recursive: true });
      // each curl prints its status and what it was asked, then its body
      const shim = `set -u
curl() {
  local code
  code=$(command curl -sS -o "${out}/body" -w '%{http_code}' "$@") || code=000
  printf '%s %s\\n' "$code" "$*" >>"${out}/statuses"
  cat "${out}/body" >>"${out}/bodies" 2>/dev/null; echo >>"${out}/bodies"
}
`;
      const r = run("bash", ["-c", shim + sh]);
      assert.equal(r.status, 0, r.stderr);
      const lines = fs.readFileSync(path.join(out, "statuses"), "utf8").trim().split("\n");
      assert.equal(lines.length, calls, "every curl ran");
      for (const l of lines) assert.match(l, /^2\d\d /, `${l}\n${fs.readFileSync(path.join(out, "bodies"), "utf8")}`);
      const bodies = fs.readFileSync(path.join(out, "bodies"), "utf8");
      assert.match(bodies, /"manifest_path":\s*"[^"]*prod\/users\.lance\/_versions\/18446744073709551614\.manifest"/,
        "the create and the describe name the canonical manifest");
      // the drop at the end deleted the table's files
      assert.ok(!fs.existsSync(path.join(root, "prod", "users.lance")), "DropTable removed the table's directory");
    });
  });
});
