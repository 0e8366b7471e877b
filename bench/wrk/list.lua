-- list.lua: GET /v1/table/bench$read/version/list?descending=true&limit=1.
dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
wrk.method = "GET"
wrk.path = "/v1/table/bench%24read/version/list?descending=true&limit=1"
