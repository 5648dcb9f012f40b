#!/bin/sh
# A scripted MCP server over stdio that misbehaves on purpose, one way per
# tool (tests/src/upstream/mcp_client_test.cpp, upstream_test.cpp and
# tests/e2e/upstreams_misbehaving.test.mjs). Like scripted.sh it answers each
# line by its method, taking the id from the line, and appends every line it
# reads to $RECEIVED (default /dev/null). Its tools:
#   asks_first         sends sampling/createMessage, then (0.3 s later) progress and its result
#   asks_many          sends 10 sampling/createMessage at once, then (0.3 s later) its result
#   floods             sends $FLOOD (default 100000) log messages in a burst, then its result
#   floods_stderr      writes $FLOOD (default 100000) lines to stderr, then its result
#   logs_big           sends a log message whose data is 10000 characters, then its result
#   text_not_string    answers a text block whose "text" is 5
#   structured_string  answers a string structuredContent
#   is_error_yes       answers "isError": "yes"
#   repeated_key       answers a text block with "text" twice
#   bad_utf8           answers text holding the byte 0xFF
#   deep               answers structuredContent nested 300 levels deep
#   too_deep           answers structuredContent nested 5000 levels deep
#   truncated          answers with the first half of a response
#   not_json           answers with a line that is not JSON
#   oversized          answers with a 2 MiB line
#   fine               answers {"content":[{"type":"text","text":"fine"}]}
RECEIVED=${RECEIVED:-/dev/null}
FLOOD=${FLOOD:-100000}
tool() {
  printf '{"name":"%s","description":"%s","inputSchema":{"type":"object"}}' "$1" "$2"
}
# `n` copies of the character `c`.
repeat() { head -c "$1" /dev/zero | tr '\0' "$2"; }
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$RECEIVED"
  id=$(printf '%s' "$line" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
  head='{"jsonrpc":"2.0","id":'"$id"',"result":'
  case "$line" in
    *'"method":"server/discover"'*)  # a legacy server: the era probe's method is unknown
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id" ;;
    *'"method":"initialize"'*)
      printf '%s{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"misbehaving","version":"1.0"}}}\n' "$head" ;;
    *'"method":"tools/list"'*)
      printf '%s{"tools":[' "$head"
      sep=''
      for name in asks_first asks_many floods floods_stderr logs_big text_not_string structured_string is_error_yes repeated_key \
                  bad_utf8 deep too_deep truncated not_json oversized fine; do
        printf '%s' "$sep"; tool "$name" "Misbehaves: $name."; sep=','
      done
      printf ']}}\n' ;;
    *'"method":"tools/call"'*'"name":"asks_first"'*)
      printf '{"jsonrpc":"2.0","id":"sampling-1","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"well?"}}],"maxTokens":10}}\n'
      sleep 0.3  # the request reaches the client before the rest comes
      printf '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1}}\n' "$id"
      printf '%s{"content":[{"type":"text","text":"answered"}]}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"asks_many"'*)
      for n in 1 2 3 4 5 6 7 8 9 10; do
        printf '{"jsonrpc":"2.0","id":"sampling-%s","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}\n' "$n"
      done
      sleep 0.3
      printf '%s{"content":[{"type":"text","text":"asked"}]}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"floods"'*)
      yes '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood"}}' | head -n "$FLOOD"
      printf '%s{"content":[{"type":"text","text":"survived"}]}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"floods_stderr"'*)
      yes 'stderr flood' | head -n "$FLOOD" >&2
      printf '%s{"content":[{"type":"text","text":"survived stderr"}]}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"logs_big"'*)
      printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'
      repeat 10000 'a'; printf '"}}\n'
      printf '%s{"content":[{"type":"text","text":"logged"}]}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"text_not_string"'*)
      printf '%s{"content":[{"type":"text","text":5}]}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"structured_string"'*)
      printf '%s{"content":[{"type":"text","text":"x"}],"structuredContent":"yes"}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"is_error_yes"'*)
      printf '%s{"content":[{"type":"text","text":"x"}],"isError":"yes"}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"repeated_key"'*)
      printf '%s{"content":[{"type":"text","text":"one","text":"two"}]}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"bad_utf8"'*)
      printf '%s{"content":[{"type":"text","text":"bad \377 byte"}]}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"deep"'*)
      printf '%s{"content":[],"structuredContent":{"deep":' "$head"
      repeat 300 '['; repeat 300 ']'; printf '}}}\n' ;;
    *'"method":"tools/call"'*'"name":"too_deep"'*)
      printf '%s{"content":[],"structuredContent":{"deep":' "$head"
      repeat 5000 '['; repeat 5000 ']'; printf '}}}\n' ;;
    *'"method":"tools/call"'*'"name":"truncated"'*)
      printf '%s{"content":[{"type":"te\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"not_json"'*)
      printf 'this is not JSON\n' ;;
    *'"method":"tools/call"'*'"name":"oversized"'*)
      printf '%s{"content":[{"type":"text","text":"' "$head"
      repeat 2097152 'a'; printf '"}]}}\n' ;;
    *'"method":"tools/call"'*)
      printf '%s{"content":[{"type":"text","text":"fine"}]}}\n' "$head" ;;
  esac
done
