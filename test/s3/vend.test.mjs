// Credential vending with STS (--vend-credentials sts), with the store's
// authorization checks on (moto's reset-auth): DeclareTable hands out
// temporary credentials with their expiry; they work for the table's
// prefix, and a forged session token is refused; the AssumeRole call
// carries a session policy confined to that prefix.  (moto evaluates the
// role's policies but not session policies, so refusal outside the prefix
// is checked on the policy text here, not by the store.)  The real client
// then writes a table with nothing but the vended options.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { req, ok, fresh, mkNamespace, startGateway, stop, GW_DB } from "../rest/lib.mjs";
import { s3, keyOf, startProxy, BUCKET, S3 } from "./s3lib.mjs";

const ROLE = "arn:aws:iam::123456789012:role/lance-tables";

/** An IAM/STS query API call to the server, signed with keys; returns the body text. */
function query(service, params, keys) {
  return new Promise((resolve, reject) => {
    const body = new URLSearchParams(params).toString();
    const p = spawn("curl", ["-s", "-X", "POST", "--aws-sigv4", `aws:amz:us-east-1:${service}`, "-u", `${keys.id}:${keys.secret}`,
      "-H", "content-type: application/x-www-form-urlencoded", "--data-binary", "@-", `${S3}/`], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (c) => (out += c));
    p.on("error", reject);
    p.on("close", () => resolve(out));
    p.stdin.end(body);
  });
}
const tag = (xml, t) => (new RegExp(`<${t}>([^<]*)</${t}>`).exec(xml) || [])[1];

function setAuth(count) {
  return new Promise((resolve, reject) => {
    const p = spawn("curl", ["-sf", "-o", "/dev/null", "-X", "POST", "-H", "content-type: text/plain", "--data-binary", count, `${S3}/moto-api/reset-auth`]);
    p.on("error", reject);
    p.on("close", (c) => (c === 0 ? resolve() : reject(new Error("reset-auth failed"))));
  });
}

describe("vended STS credentials", () => {
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  let gwKeys;
  let gw;
  let proxy;
  before(async () => {
    // an IAM user for the gateway, and the role it hands out (auth still off)
    const user = fresh("gw");
    await query("iam", { Action: "CreateUser", UserName: user, Version: "2010-05-08" }, saved);
    const key = await query("iam", { Action: "CreateAccessKey", UserName: user, Version: "2010-05-08" }, saved);
    gwKeys = { id: tag(key, "AccessKeyId"), secret: tag(key, "SecretAccessKey") };
    assert.ok(gwKeys.id && gwKeys.secret, key);
    const all = JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "*", Resource: "*" }] });
    await query("iam", { Action: "PutUserPolicy", UserName: user, PolicyName: "all", PolicyDocument: all, Version: "2010-05-08" }, saved);
    const trust = JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Principal: { AWS: "*" }, Action: "sts:AssumeRole" }] });
    await query("iam", { Action: "CreateRole", RoleName: "lance-tables", AssumeRolePolicyDocument: trust, Version: "2010-05-08" }, saved);
    const s3all = JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "s3:*", Resource: "*" }] });
    await query("iam", { Action: "PutRolePolicy", RoleName: "lance-tables", PolicyName: "s3", PolicyDocument: s3all, Version: "2010-05-08" }, saved);
    proxy = await startProxy();
    proxy.onBody = (r, b) => {
      const policy = new URLSearchParams(b.toString()).get("Policy");
      if (policy) proxy.lastPolicy = policy;
    };
    gw = await startGateway(
      ["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", `s3://${BUCKET}/warehouse`,
        "--vend-credentials", "sts", "--sts-role-arn", ROLE, "--sts-endpoint", proxy.url, "--sts-duration", "900"],
      { env: { AWS_ENDPOINT_URL_S3: S3, AWS_ACCESS_KEY_ID: gwKeys.id, AWS_SECRET_ACCESS_KEY: gwKeys.secret } },
    );
    assert.ok(gw.url, gw.log());
    await setAuth("0");		// from now on moto checks every request
    process.env.AWS_ACCESS_KEY_ID = gwKeys.id;
    process.env.AWS_SECRET_ACCESS_KEY = gwKeys.secret;
  });
  after(async () => {
    await setAuth("inf");
    process.env.AWS_ACCESS_KEY_ID = saved.id;
    process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    if (gw?.proc) await stop(gw.proc);
    await proxy?.close();
  });

  it("the store refuses unknown keys now (the check is on)", async () => {
    process.env.AWS_ACCESS_KEY_ID = "nobody";
    const denied = await s3("HEAD", "warehouse/x");
    process.env.AWS_ACCESS_KEY_ID = gwKeys.id;
    assert.equal(denied.status, 403);
  });

  it("DeclareTable vends temporary credentials confined to the table, with their expiry", async () => {
    const ns = await mkNamespace();
    const name = fresh("t");
    proxy.log.length = 0;
    const body = ok(await req("POST", `/v1/table/${ns}%24${name}/declare?delimiter=%24`, { body: {}, base: gw.url }));
    const o = body.storage_options;
    assert.equal(o.aws_endpoint, S3);
    assert.equal(o.allow_http, "true");
    assert.equal(o.aws_virtual_hosted_style_request, "false");
    assert.ok(o.aws_access_key_id && o.aws_access_key_id !== gwKeys.id, "temporary keys, not the gateway's");
    assert.ok(o.aws_secret_access_key && o.aws_session_token);
    const exp = Number(o.expires_at_millis);
    assert.ok(exp > Date.now() && exp <= Date.now() + 900 * 1000 + 60000, `expires_at_millis ${o.expires_at_millis}`);
    assert.equal(proxy.log.length, 1, "one AssumeRole call");

    // the session policy: the table's prefix, nothing else
    const prefix = keyOf(body.location);
    const policy = JSON.parse(proxy.lastPolicy);
    const objects = policy.Statement.find((s) => [].concat(s.Action).includes("s3:GetObject"));
    assert.equal(objects.Resource, `arn:aws:s3:::${BUCKET}/${prefix}/*`);
    const list = policy.Statement.find((s) => [].concat(s.Action).includes("s3:ListBucket"));
    assert.deepEqual(list.Condition.StringLike["s3:prefix"], [prefix, `${prefix}/*`]);
    assert.equal(policy.Statement.length, 2);

    // the vended credentials work on the table's prefix
    const saveId = process.env.AWS_ACCESS_KEY_ID;
    const saveSecret = process.env.AWS_SECRET_ACCESS_KEY;
    process.env.AWS_ACCESS_KEY_ID = o.aws_access_key_id;
    process.env.AWS_SECRET_ACCESS_KEY = o.aws_secret_access_key;
    try {
      const put = await s3("PUT", `${prefix}/data/x.lance`, { body: Buffer.from("x"), headers: { "x-amz-security-token": o.aws_session_token } });
      assert.equal(put.status, 200, put.body.toString());
      const get = await s3("GET", `${prefix}/data/x.lance`, { headers: { "x-amz-security-token": o.aws_session_token } });
      assert.equal(get.status, 200);
      const bad = await s3("GET", `${prefix}/data/x.lance`, { headers: { "x-amz-security-token": "forged" } });
      assert.ok([400, 403].includes(bad.status), `a forged session token is refused: ${bad.status}`);
    } finally {
      process.env.AWS_ACCESS_KEY_ID = saveId;
      process.env.AWS_SECRET_ACCESS_KEY = saveSecret;
    }
  });

  it("DescribeTable with vend_credentials false hands out no credentials", async () => {
    const ns = await mkNamespace();
    const name = fresh("t");
    ok(await req("POST", `/v1/table/${ns}%24${name}/declare?delimiter=%24`, { body: {}, base: gw.url }));
    const d = ok(await req("POST", `/v1/table/${ns}%24${name}/describe?delimiter=%24`, { body: { vend_credentials: false }, base: gw.url }));
    assert.equal(d.storage_options.aws_access_key_id, undefined);
    assert.equal(d.storage_options.aws_endpoint, S3);
  });

  it("LanceDB writes a table with only the vended temporary credentials", async () => {
    // moto 5.2.1 rejects the signature of any ListObjectsV2 whose prefix
    // has a "/" (it re-encodes the query), which Lance lists: so the
    // store's checks are off again here; the client still has nothing but
    // the vended endpoint and temporary credentials.
    await setAuth("inf");
    const require = createRequire(new URL("../interop/package.json", import.meta.url));
    const lancedb = require("@lancedb/lancedb");
    const env = {};
    for (const k of Object.keys(process.env)) if (k.startsWith("AWS_")) { env[k] = process.env[k]; delete process.env[k]; }
    try {
      const db = await lancedb.connectNamespace("rest", { uri: gw.url });
      const ns = fresh("sts");
      await db.createNamespace([ns]);
      const t = await db.createTable("t", [{ id: 1 }, { id: 2 }], [ns]);
      await t.add([{ id: 3 }]);
      assert.equal(await t.countRows(), 3);
      assert.equal(await t.version(), 2);
    } finally {
      Object.assign(process.env, env);
    }
  });

  it("LanceDB asks the gateway again for credentials that are about to expire", async () => {
    // refresh_offset_millis larger than the credentials' lifetime: they are
    // always about to expire, so a client that refreshes asks on every use
    const g = await startGateway(
      ["--listen", "127.0.0.1:0", "--db", GW_DB, "--root", `s3://${BUCKET}/warehouse`, "--quiet",
        "--vend-credentials", "sts", "--sts-role-arn", ROLE, "--sts-endpoint", proxy.url, "--sts-duration", "900",
        "--sts-refresh-offset", "3600"],
      { env: { AWS_ENDPOINT_URL_S3: S3, AWS_ACCESS_KEY_ID: gwKeys.id, AWS_SECRET_ACCESS_KEY: gwKeys.secret } },
    );
    assert.ok(g.url, g.log());
    const require = createRequire(new URL("../interop/package.json", import.meta.url));
    const lancedb = require("@lancedb/lancedb");
    const env = {};
    for (const k of Object.keys(process.env)) if (k.startsWith("AWS_")) { env[k] = process.env[k]; delete process.env[k]; }
    try {
      await setAuth("inf");
      const db = await lancedb.connectNamespace("rest", { uri: g.url });
      const ns = fresh("refresh");
      await db.createNamespace([ns]);
      const t = await db.createTable("t", [{ id: 1 }], [ns]);
      const before = proxy.log.length;
      for (let i = 0; i < 3; i++) {
        await t.add([{ id: 10 + i }]);
        assert.equal(await t.countRows(), 2 + i);
      }
      const after = proxy.log.length;
      console.log(`# AssumeRole calls: ${before} after create, ${after} after 3 adds and counts`);
      assert.ok(after > before, "the client asked for new credentials (DescribeTable -> AssumeRole)");
    } finally {
      Object.assign(process.env, env);
      await stop(g.proc);
    }
  });
});
