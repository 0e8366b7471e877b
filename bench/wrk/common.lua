-- common.lua: loaded by every bench script.  Numbers each wrk thread and
-- prints one machine-readable summary line that bench/run parses.
local threads = {}
local next_tid = 0

function setup(thread)
   thread:set("tid", next_tid)
   next_tid = next_tid + 1
   table.insert(threads, thread)
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      "WRK requests=%d duration_us=%d non2xx=%d sockerr=%d p50_us=%d p99_us=%d mean_us=%.0f\n",
      summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
      latency:percentile(50), latency:percentile(99), latency.mean))
end
