-- wrk script: POSTs tools/call of test_simple_text within one MCP session,
-- or, with SESSION_ID "modern", as stateless 2026-07-28 requests (each
-- carrying its _meta and the MCP-Protocol-Version, Mcp-Method and Mcp-Name
-- headers; no session).
--
--   wrk ... -s tools_call.lua URL -- SESSION_ID [LIMIT_PER_THREAD] [BEARER_TOKEN]
--
-- Every request has an id of its own (thread index * 1e9 + count): the session
-- is shared by all connections, and a server refuses an id already in flight.
-- Each answer is checked (status 200 and the tool's text in the body). With
-- LIMIT_PER_THREAD, a thread stops after that many answers and prints
-- "limit reached" (the driver then interrupts wrk, whose main thread otherwise
-- sleeps the whole -d). done() prints one line "RESULT {json}" for the driver.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("index", #threads)
end

function init(args)
  local session = args[1]
  limit = tonumber(args[2] or "0")
  modern = session == "modern"
  if modern then
    headers = {
      ["Content-Type"] = "application/json",
      ["Accept"] = "application/json, text/event-stream",
      ["MCP-Protocol-Version"] = "2026-07-28",
      ["Mcp-Method"] = "tools/call",
      ["Mcp-Name"] = "test_simple_text",
    }
    params = '{"name":"test_simple_text","arguments":{},"_meta":{' ..
      '"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
      '"io.modelcontextprotocol/clientCapabilities":{},' ..
      '"io.modelcontextprotocol/clientInfo":{"name":"http-bench","version":"0"}}}'
  else
    headers = {
      ["Content-Type"] = "application/json",
      ["Accept"] = "application/json, text/event-stream",
      ["MCP-Protocol-Version"] = "2025-06-18",
      ["Mcp-Session-Id"] = session,
    }
    params = '{"name":"test_simple_text","arguments":{}}'
  end
  if args[3] and args[3] ~= "" then
    headers["Authorization"] = "Bearer " .. args[3]
  end
  sent = 0
  answered = 0
  wrong = 0
  first_wrong = ""
end

function request()
  sent = sent + 1
  local id = string.format("%d", index * 1000000000 + sent)
  return wrk.format("POST", nil, headers,
    '{"jsonrpc":"2.0","id":' .. id ..
    ',"method":"tools/call","params":' .. params .. '}')
end

function response(status, headers, body)
  answered = answered + 1
  if status ~= 200 or not string.find(body, "This is a simple text response for testing.", 1, true) then
    wrong = wrong + 1
    -- The first wrong answer of each thread is kept, to be shown.
    if wrong == 1 then
      first_wrong = string.format("%d %s", status, string.sub(body or "", 1, 300))
    end
  end
  if limit > 0 and answered == limit then
    io.write("limit reached\n")
    io.flush()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local answered_total, wrong_total, first_wrong_any = 0, 0, ""
  for _, thread in ipairs(threads) do
    answered_total = answered_total + thread:get("answered")
    wrong_total = wrong_total + thread:get("wrong")
    if first_wrong_any == "" then first_wrong_any = thread:get("first_wrong") or "" end
  end
  -- As a JSON string: quotes, backslashes and control characters escaped.
  local quoted = string.gsub(first_wrong_any, '[%c"\\]', function(c)
    return string.format("\\u%04x", string.byte(c))
  end)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%d,"duration_us":%d,"answered":%d,"wrong":%d,"first_wrong":"%s",' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"mean":%.1f,"max":%d}}\n',
    summary.requests, summary.duration, answered_total, wrong_total, quoted,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean, latency.max))
end
