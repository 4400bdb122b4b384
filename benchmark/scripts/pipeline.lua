-- wrk script: every write carries `depth` pipelined GETs of keys key:000000000000 ..
-- key:<keys-1> (the keys shoal-load uses); wrk counts the requests in the string and
-- waits for that many responses before writing again.
--
--   wrk -t1 -c50 -d3s -s benchmark/scripts/pipeline.lua http://127.0.0.1:8080 -- 16 1000
local depth, keys = 1, 1000

function init(args)
  depth = tonumber(args[1]) or depth
  keys = tonumber(args[2]) or keys
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
  local r = {}
  for i = 1, depth do
    r[i] = wrk.format("GET", string.format("/kv/key:%012d", math.random(0, keys - 1)))
  end
  req = table.concat(r)
end

function request()
  return req
end
