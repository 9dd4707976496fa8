-- pipeline.lua: wrk script that writes DEPTH requests per write on each
-- connection (HTTP/1.1 pipelining) and so keeps DEPTH requests in flight.
-- wrk counts every response, so Requests/sec is responses per second.
--
--   wrk -t1 -c50 -d10s -s bench/pipeline.lua http://127.0.0.1:8080/ -- 16
--
-- DEPTH is the first argument after "--" (default 16).

init = function(args)
  local depth = tonumber(args[1]) or 16
  local r = {}
  for i = 1, depth do
    r[i] = wrk.format(nil)
  end
  req = table.concat(r)
end

request = function()
  return req
end
