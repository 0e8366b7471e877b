-- table_describe.lua: POST /v1/table/bench$read/describe (DescribeTable,
-- which a LanceDB client sends when it opens a table).
dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
wrk.method = "POST"
wrk.path = "/v1/table/bench%24read/describe"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
