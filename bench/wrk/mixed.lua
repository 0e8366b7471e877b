-- mixed.lua: the memory soak.  Cycles through describe, list, health, an
-- unknown route (404), a bad body (400) and, every 10th request, a real
-- version/create (staging files as in create.lua, tables <prefix>T_0).
dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
local prefix = os.getenv("BENCH_PREFIX")
local root = os.getenv("BENCH_ROOT")
local n = 0
local v = tonumber(os.getenv("BENCH_VBASE") or "0")
local json = { ["Content-Type"] = "application/json" }

function request()
   n = n + 1
   local i = n % 10
   if i == 0 then
      v = v + 1
      local t = string.format("%s%d_0", prefix, tid)
      return wrk.format("POST", "/v1/table/bench%24" .. t .. "/version/create", json,
                        string.format('{"version":%d,"manifest_path":"%s/bench/%s.lance/_versions/stg-%d"}',
                                      v, root, t, v))
   elseif i == 1 or i == 5 then
      return wrk.format("POST", "/v1/table/bench%24read/version/describe", json, "{}")
   elseif i == 2 or i == 6 then
      return wrk.format("GET", "/v1/table/bench%24read/version/list?descending=true&limit=1")
   elseif i == 3 then
      return wrk.format("GET", "/v1/nope")
   elseif i == 4 then
      return wrk.format("POST", "/v1/table/bench%24read/describe", json, '{"id": [1')
   else
      return wrk.format("GET", "/health")
   end
end
