#!/bin/sh
# A scripted MCP server over stdio for tests/src/upstream/mcp_client_test.cpp: it
# answers each line by its method, taking the id from the line, and appends
# every line it reads to the file $RECEIVED. tools/list comes in two pages;
# the second holds two tools that break the tool contract (a name with a
# space, a schema that refers outside itself). The tool "slow" reports
# progress and never answers; "talks" sends a log message, a ping and a
# roots/list request before it answers; "asks_many" sends ten
# elicitation/create requests, then answers half a second later;
# "asks_and_waits" sends one elicitation/create and never answers. For
# tests/src/upstream/upstream_test.cpp:
# "crash" exits at once; "crash_once" exits the first time it is called (a
# marker file beside $RECEIVED remembers) and answers after; "hang" never
# answers; "change" says notifications/tools/list_changed, after which
# tools/list also holds "third". With LOGGING set it also declares the
# logging capability (and answers logging/setLevel). server/discover (the
# 2026-07-28 era probe) gets -32601, as a legacy server answers a method it
# does not know; with DISCOVER=silent it gets no answer at all.
changed=0
capabilities='{"tools":{}}'
[ -n "${LOGGING:-}" ] && capabilities='{"tools":{},"logging":{}}'
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$RECEIVED"
  id=$(printf '%s' "$line" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
  case "$line" in
    *'"method":"server/discover"'*)
      [ "${DISCOVER:-}" = silent ] && continue
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id" ;;
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":%s,"serverInfo":{"name":"scripted","version":"1.0"}}}\n' "$id" "$capabilities" ;;
    *'"method":"logging/setLevel"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
    *'"method":"tools/list"'*'"cursor":"page-2"'*)
      third=''
      [ "$changed" = 1 ] && third='{"name":"third","description":"Third.","inputSchema":{"type":"object"}},'
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s{"name":"second","description":"Second.","inputSchema":{"type":"object"}},{"name":"bad name","description":"Bad.","inputSchema":{"type":"object"}},{"name":"outside","description":"Refers outside.","inputSchema":{"type":"object","properties":{"a":{"$ref":"https://example.com/schema.json"}}}}]}}\n' "$id" "$third" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"first","description":"First.","inputSchema":{"type":"object"}}],"nextCursor":"page-2"}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"slow"'*)
      printf '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1,"total":4,"message":"one"}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"talks"'*)
      printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","data":"careful"}}\n'
      printf '{"jsonrpc":"2.0","id":"ping-1","method":"ping"}\n'
      printf '{"jsonrpc":"2.0","id":"roots-1","method":"roots/list"}\n'
      sleep 0.2
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"talked"}]}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"asks_many"'*)
      for n in 1 2 3 4 5 6 7 8 9 10; do
        printf '{"jsonrpc":"2.0","id":"ask-%s","method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object","properties":{}}}}\n' "$n"
      done
      sleep 0.5
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"asked"}]}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"asks_and_waits"'*)
      printf '{"jsonrpc":"2.0","id":"ask-w","method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object","properties":{}}}}\n' ;;
    *'"method":"tools/call"'*'"name":"crash"'*)
      exit 1 ;;
    *'"method":"tools/call"'*'"name":"crash_once"'*)
      if [ ! -e "$RECEIVED.crashed" ]; then : > "$RECEIVED.crashed"; exit 1; fi
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"called"}]}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"hang"'*)
      ;;
    *'"method":"tools/call"'*'"name":"change"'*)
      changed=1
      printf '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"changed"}]}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"fails"'*)
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"no such tool"}}\n' "$id" ;;
    *'"method":"tools/call"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"called"}],"structuredContent":{"ok":true},"isError":false}}\n' "$id" ;;
  esac
done
