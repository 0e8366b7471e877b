// lancedb.mjs: a real client's append latency.  node lancedb.mjs <target>
// <adds> <label>, where target is an http:// gateway URL (connectNamespace
// "rest": every add commits its version through the gateway and
// PostgreSQL), "dir:<directory>" (connectNamespace("dir", {root}): Lance's
// own DirectoryNamespace in-process, the catalog peer) or a directory
// (plain local LanceDB, no catalog).  Creates a fresh
// table, then calls table.add() with a 10-row batch <adds> times and
// prints "LANCEDB <label> median_ms=<m> p90_ms=<p> n=<adds>".
// Run from a directory whose node_modules holds @lancedb/lancedb
// (bench/run links test/interop/node_modules).
import * as lancedb from "@lancedb/lancedb";

const [target, addsArg, label] = process.argv.slice(2);
const adds = Number(addsArg);
const rows = (from, n) => Array.from({ length: n }, (_, i) => ({ id: from + i, tag: `r${from + i}`, score: (from + i) * 0.5 }));
const name = `t${process.pid}_${Date.now()}`;

let db;
let table;
if (target.startsWith("http")) {
  db = await lancedb.connectNamespace("rest", { uri: target });
  try { await db.createNamespace(["lancedb"]); } catch { /* exists */ }
  table = await db.createTable(name, rows(0, 10), ["lancedb"]);
} else if (target.startsWith("dir:")) {
  db = await lancedb.connectNamespace("dir", { root: target.slice(4) });
  try { await db.createNamespace(["lancedb"]); } catch { /* exists */ }
  table = await db.createTable(name, rows(0, 10), ["lancedb"]);
} else {
  db = await lancedb.connect(target);
  table = await db.createTable(name, rows(0, 10));
}
const times = [];
for (let i = 0; i < adds; i++) {
  const t0 = process.hrtime.bigint();
  await table.add(rows(10 + i * 10, 10));
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
if ((await table.countRows()) !== 10 + adds * 10) throw new Error("row count mismatch");
times.sort((a, b) => a - b);
const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
console.log(`LANCEDB ${label} median_ms=${q(0.5).toFixed(3)} p90_ms=${q(0.9).toFixed(3)} n=${adds}`);
