-- wrk script for scripts/bench-worker.sh: POST /v1/recall, cycling through the queries in
-- $BENCH_QUERIES (one JSON string per line, already escaped), with $BENCH_TOKEN. Prints
-- p50/p95/p99 in milliseconds; a bad answer is reported on stderr (and fails the benchmark).
local queries = {}
local token = os.getenv("BENCH_TOKEN")
local i = 0
local bad = 0

function init(args)
  for line in io.lines(os.getenv("BENCH_QUERIES")) do
    if #line > 0 then queries[#queries + 1] = line end
  end
end

function request()
  i = i % #queries + 1
  return wrk.format("POST", "/v1/recall", {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. token,
  }, '{"query":' .. queries[i] .. ',"limit":10}')
end

function response(status, headers, body)
  -- Correctness inside the loop: every answer is a 200 with at least one result.
  if status ~= 200 or not string.find(body, '"rrfScore"', 1, true) then
    if bad == 0 then io.stderr:write("wrk: bad answer " .. status .. ": " .. body:sub(1, 200) .. "\n") end
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status + summary.errors.timeout
  io.write(string.format("wrk: %.2f %.2f %.2f %d %d\n",
    latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, summary.requests, errors))
end
