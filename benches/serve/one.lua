-- wrk script for benches/serve/run.sh: POST /classify with the body of the one file given after
-- `--` (the median-sized mail: the issue's "typical mail").
local body

function init(args)
  local f = assert(io.open(args[1], "rb"))
  body = f:read("*a")
  f:close()
end

function request()
  return wrk.format("POST", "/classify", { ["Content-Type"] = "message/rfc822" }, body)
end
