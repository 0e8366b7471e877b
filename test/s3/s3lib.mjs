// s3lib.mjs: helpers of the S3 suite: plain (unsigned) requests to the
// test's S3 server, path-style, and a fault-injecting proxy in front of it.
import http from "node:http";
import crypto from "node:crypto";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

let seq = 0;

export const S3 = process.env.S3_ENDPOINT;
export const BUCKET = process.env.S3_BUCKET;

/**
 * One request to the S3 server, signed by curl (--aws-sigv4) with the
 * suite's keys: {status, headers, body (Buffer)}.
 */
export function s3(method, key, { body, headers = {}, base = S3, bucket = BUCKET, query = "" } = {}) {
  const pathPart = `/${bucket}${key === undefined ? "" : "/" + key.split("/").map(encodeURIComponent).join("/")}${query ? "?" + query : ""}`;
  const tmp = path.join(os.tmpdir(), `s3lib-${process.pid}-${++seq}`);
  const args = ["-s", "-g", "-o", tmp, "-w", "%{http_code} %header{etag}", "-X", method, "--aws-sigv4", "aws:amz:us-east-1:s3",
    "-u", `${process.env.AWS_ACCESS_KEY_ID}:${process.env.AWS_SECRET_ACCESS_KEY}`,
    "-H", "content-type: application/octet-stream"];
  args.push("-H", `x-amz-content-sha256: ${crypto.createHash("sha256").update(body ?? Buffer.alloc(0)).digest("hex")}`);
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  if (method === "HEAD") args.push("-I");
  if (body !== undefined) args.push("--data-binary", "@-");
  args.push(`${base}${pathPart}`);
  return new Promise((resolve, reject) => {
    const p = spawn("curl", args, { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (c) => (out += c));
    p.on("error", reject);
    p.on("close", () => {
      const [code, ...etag] = out.split(" ");
      let data = Buffer.alloc(0);
      try {
        data = fs.readFileSync(tmp);
        fs.unlinkSync(tmp);
      } catch {}
      resolve({ status: Number(code), headers: { etag: etag.join(" ") }, body: method === "HEAD" ? Buffer.alloc(0) : data });
    });
    if (body !== undefined) p.stdin.end(body);
    else p.stdin.end();
  });
}

export const md5etag = (bytes) => `"${crypto.createHash("md5").update(bytes).digest("hex")}"`;

/** The key of an s3://bucket/key location. */
export function keyOf(uri) {
  const m = /^s3:\/\/([^/]+)\/(.*)$/.exec(uri);
  if (!m) throw new Error(`not an s3 location: ${uri}`);
  return m[2];
}

/** Keys under a prefix (ListObjectsV2, one page is enough here). */
export async function listKeys(prefix) {
  const r = await s3("GET", undefined, { query: `list-type=2&prefix=${encodeURIComponent(prefix)}` });
  return [...r.body.toString().matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]);
}

/**
 * A proxy in front of the S3 server.  proxy.rule(req) decides per request:
 * undefined (forward), {status, code} (answer that error), {delayMs}
 * (forward after a delay), {before: promise} (forward once it settles),
 * {hang: true} (never answer).  proxy.log lists
 * "METHOD path" of every request seen; proxy.onBody(req, body), if set, sees
 * every request body.
 */
export async function startProxy() {
  const target = new URL(S3);
  const proxy = { rule: () => undefined, log: [], url: "" };
  const server = http.createServer((req, res) => {
    proxy.log.push(`${req.method} ${req.url}`);
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      proxy.onBody?.(req, Buffer.concat(chunks));
      const rule = proxy.rule(req) || {};
      if (rule.hang) return;
      if (rule.status) {
        res.writeHead(rule.status, { "content-type": "application/xml" });
        res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${rule.code || "InternalError"}</Code><Message>injected</Message></Error>`);
        return;
      }
      const forward = () => {
        const f = http.request(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
          (up) => {
            res.writeHead(up.statusCode, up.headers);
            up.pipe(res);
          },
        );
        f.on("error", () => {
          res.writeHead(502);
          res.end();
        });
        f.end(Buffer.concat(chunks));
      };
      if (rule.before) rule.before.then(forward, forward);
      else if (rule.delayMs) setTimeout(forward, rule.delayMs);
      else forward();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  proxy.url = `http://127.0.0.1:${server.address().port}`;
  proxy.close = () => {
    server.closeAllConnections?.();
    return new Promise((r) => server.close(r));
  };
  return proxy;
}
