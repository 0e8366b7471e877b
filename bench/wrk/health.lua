-- health.lua: GET /health (no database).
dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
wrk.method = "GET"
wrk.path = "/health"
