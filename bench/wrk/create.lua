-- create.lua: POST /v1/table/{id}/version/create to distinct tables with
-- increasing versions.  Thread T spreads its requests over BENCH_K tables
-- <BENCH_PREFIX>T_0 .. <BENCH_PREFIX>T_{K-1} in namespace "bench"; request n
-- of a thread goes to table n mod K at version n div K + 1.  The staging
-- manifest <root>/bench/<table>.lance/_versions/stg-<version> is created by
-- bench/run beforehand (a real file: the gateway checks it, copies it to the
-- canonical path with fsync, and removes it after COMMIT).  bench/run gives
-- each thread one connection, so a table's versions arrive in order: the
-- catalog refuses a version below a table's latest.
dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
local prefix = os.getenv("BENCH_PREFIX")
local root = os.getenv("BENCH_ROOT")
local K = tonumber(os.getenv("BENCH_K"))
local n = 0
local headers = { ["Content-Type"] = "application/json" }

function request()
   local k = n % K
   local v = math.floor(n / K) + 1
   n = n + 1
   local t = string.format("%s%d_%d", prefix, tid, k)
   local body = string.format('{"version":%d,"manifest_path":"%s/bench/%s.lance/_versions/stg-%d"}',
                              v, root, t, v)
   return wrk.format("POST", "/v1/table/bench%24" .. t .. "/version/create", headers, body)
end
