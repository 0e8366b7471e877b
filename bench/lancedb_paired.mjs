// lancedb_paired.mjs: LanceDB table.add() latency of several targets in one
// process, interleaved add by add.  node lancedb_paired.mjs <adds> <label>=<target> ...
// target as in lancedb.mjs (http:// URL, dir:<directory>, or a directory).
// Each step adds 10 rows to every target's table once, in a rotating order,
// so that the targets' adds of one step ran within a few ms of each other;
// prints each target's median ("PAIRED <label> median_ms=<m>") and, for
// every pair of targets, the median over the steps of the ratio of their
// adds ("PAIRED_RATIO <a>/<b> <ratio>").  Run from a directory whose
// node_modules holds @lancedb/lancedb (bench/run, section 5).
import * as lancedb from "@lancedb/lancedb";

const [addsArg, ...specs] = process.argv.slice(2);
const adds = Number(addsArg);
const rows = (from, n) => Array.from({ length: n }, (_, i) => ({ id: from + i, tag: `r${from + i}`, score: (from + i) * 0.5 }));
const name = `p${process.pid}_${Date.now()}`;

async function open(target) {
  if (target.startsWith("http") || target.startsWith("dir:")) {
    const db = target.startsWith("http")
      ? await lancedb.connectNamespace("rest", { uri: target })
      : await lancedb.connectNamespace("dir", { root: target.slice(4) });
    try { await db.createNamespace(["lancedb"]); } catch { /* exists */ }
    return db.createTable(name, rows(0, 10), ["lancedb"]);
  }
  const db = await lancedb.connect(target);
  return db.createTable(name, rows(0, 10));
}

const clients = [];
for (const s of specs) {
  const eq = s.indexOf("=");
  clients.push({ label: s.slice(0, eq), table: await open(s.slice(eq + 1)), times: [] });
}
for (let i = 0; i < adds; i++) {
  for (let k = 0; k < clients.length; k++) {
    const c = clients[(i + k) % clients.length];
    const t0 = process.hrtime.bigint();
    await c.table.add(rows(10 + i * 10, 10));
    c.times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
for (const c of clients) {
  if ((await c.table.countRows()) !== 10 + adds * 10) throw new Error(`row count mismatch: ${c.label}`);
  console.log(`PAIRED ${c.label} median_ms=${median(c.times).toFixed(3)}`);
}
for (const c of clients)
  for (const b of clients)
    if (b !== c)
      console.log(`PAIRED_RATIO ${c.label}/${b.label} ${median(c.times.map((t, i) => t / b.times[i])).toFixed(3)}`);
