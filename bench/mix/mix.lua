-- mix.lua: wrk script sending the mix of bench/mix/mix.jsonl (GET /, POST
-- /echo and PUT /discard with body.json as their body, weights 5:3:2, in
-- the order hotpath load's smooth weighted round-robin spreads them), so
-- bench/load.sh can compare both generators on the same mix:
--
--   bash bench/load.sh --targets bench/mix/mix.jsonl --wrk-script bench/mix/mix.lua

local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"

init = function(args)
  local f = assert(io.open(dir .. "body.json", "rb"))
  local body = f:read("*a")
  f:close()
  local get = wrk.format("GET", "/", {})
  local post = wrk.format("POST", "/echo", {["Content-Type"] = "application/json"}, body)
  local put = wrk.format("PUT", "/discard", {}, body)
  order = {get, post, put, get, get, post, get, put, post, get}
  n = 0
end

request = function()
  n = n % #order + 1
  return order[n]
end
