-- wrk script for benches/serve/run.sh: POST /classify with the bodies of the files given after
-- `--`, in rotation (each wrk thread starts at its own file).
local bodies = {}
local i = 0

function init(args)
  for _, path in ipairs(args) do
    local f = assert(io.open(path, "rb"))
    bodies[#bodies + 1] = f:read("*a")
    f:close()
  end
  i = math.random(#bodies)
end

function request()
  i = i % #bodies + 1
  return wrk.format("POST", "/classify", { ["Content-Type"] = "message/rfc822" }, bodies[i])
end
