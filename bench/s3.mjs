// bench/s3.mjs: CreateTableVersion on a bucket against the floor of the same
// store, side by side in one run.  Run by `LANCE_S3_BENCH=1 test/s3/run`
// (which starts PostgreSQL, moto and a gateway with an s3:// root).
//
//   candidate: POST version/create through the gateway (GET staging, catalog
//              INSERT, conditional PUT of the canonical object, COMMIT,
//              DELETE staging), one client, one connection;
//   floor:     the bare conditional PUT (If-None-Match: *) of the same bytes
//              to a fresh key of the same store, from the same client;
//   floor 2:   the object-store work the design cannot avoid: GET staging +
//              conditional PUT + DELETE staging, sequential.
// Rounds are interleaved (floor, candidate, floor 2, ...), BENCH_REPEAT
// rounds of BENCH_OPS operations; the table quotes medians of ops/s.  The
// writer's own staging PUT is not timed.  The floor's requests are
// unsigned (moto takes anonymous writes); the gateway's are SigV4-signed.
import http from "node:http";

const GW = process.env.GW_URL;
const S3 = new URL(process.env.S3_ENDPOINT);
const BUCKET = process.env.S3_BUCKET;
const OPS = Number(process.env.BENCH_OPS || 200);
const REPEAT = Number(process.env.BENCH_REPEAT || 3);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const bytes = Buffer.alloc(1200, "m");	// a small manifest

function request(base, method, path, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: base.hostname, port: base.port, method, path, agent, headers: {
      ...(body ? { "content-length": Buffer.byteLength(body), "content-type": "application/octet-stream" } : {}), ...headers } },
    (res) => {
      const c = [];
      res.on("data", (d) => c.push(d));
      res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(c) }));
    });
    r.on("error", reject);
    if (body) r.write(body);
    r.end();
  });
}

const gw = new URL(GW);
const json = (m, p, b) => request(gw, m, p, Buffer.from(JSON.stringify(b)), { "content-type": "application/json" });
const ns = `bench${process.pid}`;
await json("POST", `/v1/namespace/${ns}/create`, {});
const t = JSON.parse((await json("POST", `/v1/table/${ns}%24t/declare?delimiter=%24`, {})).body);
const key = t.location.replace(/^s3:\/\/[^/]+\//, "");
let version = 0;
let n = 0;
const name = (v) => (18446744073709551615n - BigInt(v)).toString().padStart(20, "0") + ".manifest";

async function candidate() {
  let spent = 0n;
  for (let i = 0; i < OPS; i++) {
    version += 1;
    const staging = `${key}/_versions/${name(version)}-${++n}`;
    await request(S3, "PUT", `/${BUCKET}/${staging}`, bytes);
    const t0 = process.hrtime.bigint();
    const r = await json("POST", `/v1/table/${ns}%24t/version/create?delimiter=%24`, { version, manifest_path: staging });
    spent += process.hrtime.bigint() - t0;
    if (r.status !== 200) throw new Error(`version/create: ${r.status} ${r.body}`);
  }
  return OPS / (Number(spent) / 1e9);
}

async function floor() {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < OPS; i++) {
    const r = await request(S3, "PUT", `/${BUCKET}/floor/${process.pid}/${++n}`, bytes, { "if-none-match": "*" });
    if (r.status !== 200) throw new Error(`PUT: ${r.status}`);
  }
  return OPS / (Number(process.hrtime.bigint() - t0) / 1e9);
}

async function floor2() {
  let spent = 0n;
  for (let i = 0; i < OPS; i++) {
    const staging = `/${BUCKET}/floor2/${process.pid}/${++n}-staging`;
    await request(S3, "PUT", staging, bytes);
    const t0 = process.hrtime.bigint();
    await request(S3, "GET", staging);
    const r = await request(S3, "PUT", `/${BUCKET}/floor2/${process.pid}/${n}`, bytes, { "if-none-match": "*" });
    await request(S3, "DELETE", staging);
    spent += process.hrtime.bigint() - t0;
    if (r.status !== 200) throw new Error(`PUT: ${r.status}`);
  }
  return OPS / (Number(spent) / 1e9);
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const res = { c: [], f: [], f2: [] };
await floor();		// warm-up
await candidate();
for (let r = 0; r < REPEAT; r++) {
  res.f.push(await floor());
  res.c.push(await candidate());
  res.f2.push(await floor2());
}
const c = median(res.c);
const f = median(res.f);
const f2 = median(res.f2);
console.log(`| 5 S3      | version/create on a bucket (moto), 1 conn: REST / the bare conditional PUT of the same bytes, ops/s | ${c.toFixed(0)} | ${f.toFixed(0)} | ${(c / f).toFixed(2)} | - | - |`);
console.log(`| 5 S3      | version/create on a bucket (moto), 1 conn: REST / GET staging + conditional PUT + DELETE staging, ops/s | ${c.toFixed(0)} | ${f2.toFixed(0)} | ${(c / f2).toFixed(2)} | - | - |`);
