-- describe.lua: POST /v1/table/bench$read/version/describe (latest version).
dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
wrk.method = "POST"
wrk.path = "/v1/table/bench%24read/version/describe"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
