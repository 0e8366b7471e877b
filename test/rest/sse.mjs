// sse.mjs: a Server-Sent Events client for the change-feed tests (not a
// test file itself).  subscribe() resolves once the gateway's first frame
// (the "subscribed" comment) arrived, so that commits made afterwards are
// sure to be delivered.

import http from "node:http";
import { GW_URL, sleep } from "./lib.mjs";

/** Parse one SSE frame (the text between blank lines). */
function parseFrame(frame) {
  const out = { comments: [], data: [] };
  for (const line of frame.split("\n")) {
    if (line.startsWith(":")) out.comments.push(line.slice(1).trim());
    else {
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? "" : line.slice(i + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") out.data.push(value);
      else out[field] = value;
    }
  }
  return out;
}

/**
 * GET /v1/events<query>.  Resolves {status, json} for an error answer, or
 * a subscription {events, comments, frames, ended, close(), until()}.
 */
export function subscribe(query = "", { base = GW_URL, headers = {}, timeoutMs = 10000 } = {}) {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no first frame from /v1/events${query}`)), timeoutMs);
    const r = http.request(
      { host: u.hostname, port: u.port, method: "GET", path: `/v1/events${query}`, agent: false,
        headers: { accept: "text/event-stream", ...headers } },
      (res) => {
        if (res.statusCode !== 200) {
          const chunks = [];
          res.on("data", (c) => chunks.push(c));
          res.on("end", () => {
            clearTimeout(timer);
            const text = Buffer.concat(chunks).toString("utf8");
            let json;
            try { json = JSON.parse(text); } catch { json = undefined; }
            resolve({ status: res.statusCode, headers: res.headers, text, json, close: () => {} });
          });
          return;
        }
        const sub = {
          status: 200, headers: res.headers, events: [], comments: [], frames: [], other: [], ended: false,
          lastEventId: undefined, ids: [],
          close: () => r.destroy(),
          /** Wait until pred(sub) holds. */
          async until(pred, ms = 15000, what = "condition") {
            const end = Date.now() + ms;
            while (!pred(sub)) {
              if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${sub.events.length} events, comments ${JSON.stringify(sub.comments.slice(-5))}`);
              await sleep(20);
            }
          },
        };
        let buf = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          buf += chunk;
          let i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const f = parseFrame(buf.slice(0, i));
            buf = buf.slice(i + 2);
            sub.frames.push(f);
            sub.comments.push(...f.comments);
            // as EventSource does: an id field (alone in its frame here) sets
            // the id that a reconnecting client sends as Last-Event-ID
            if (f.id !== undefined) { sub.lastEventId = f.id; sub.ids.push(f.id); }
            if (f.event === "commit") sub.events.push({ id: sub.lastEventId, event: f.event, data: JSON.parse(f.data.join("\n")) });
            else if (f.event !== undefined || f.data.length) sub.other.push(f);
            if (sub.frames.length === 1) {
              clearTimeout(timer);
              resolve(sub);
            }
          }
        });
        res.on("end", () => { sub.ended = true; });
        res.on("error", () => { sub.ended = true; });
        res.on("close", () => { sub.ended = true; });
      },
    );
    r.on("error", (e) => { clearTimeout(timer); reject(e); });
    r.end();
  });
}

/** Events of the subscription for table id (string form with "$"). */
export function eventsOf(sub, table) {
  return sub.events.filter((e) => e.data.table === table);
}
