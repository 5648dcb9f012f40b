#!/bin/sh
# A scripted MCP server over stdio that speaks the 2026-07-28 protocol, for
# tests/src/upstream/mcp_client_modern_test.cpp and upstream_modern_test.cpp.
# Like scripted.sh it answers each line by its method, taking the id from the
# line, and appends every line it reads to $RECEIVED. It sends no requests:
# its questions come in input_required results (MRTR).
#
# server/discover: a DiscoverResult naming 2026-07-28 (tools and resources
# with listChanged, resources with subscribe); with DISCOVER=unsupported,
# -32022 whose data.supported is $SUPPORTED (a JSON array); with
# DISCOVER=error, -32603; with DISCOVER=late, the first one is answered only
# after a second. initialize: -32022 naming 2026-07-28 (a modern-only
# server); with LEGACY=1 it is answered as a 2025-11-25 server answers it.
# subscriptions/listen: acknowledged, and never answered.
#
# Tools (tools/call):
#   echo           answers "echoed"
#   ask            input_required: "who" (elicitation/create), requestState
#                  "state-1"; with inputResponses, the answer: its
#                  structuredContent holds them and the requestState it got
#   ask_twice      "first" (state "after-first"), then "second" (state
#                  "after-second"), then the answer
#   ask_sampling   input_required: "llm" (sampling/createMessage), no state
#   ask_forever    input_required again and again
#   odd_type       answers resultType "deferred"
#   slow           reports progress and never answers
#   change         says notifications/tools/list_changed on the subscription,
#                  after which tools/list also holds "third"
RECEIVED=${RECEIVED:-/dev/null}
SUPPORTED=${SUPPORTED:-'["2026-07-28"]'}
listen=''
changed=0
late=${DISCOVER:-}
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$RECEIVED"
  id=$(printf '%s' "$line" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
  head='{"jsonrpc":"2.0","id":'"$id"',"result":'
  state=$(printf '%s' "$line" | sed -n 's/.*"requestState":"\([^"]*\)".*/\1/p')
  case "$line" in
    *'"method":"server/discover"'*)
      case "$late" in
        unsupported)
          printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":%s,"requested":"2026-07-28"}}}\n' "$id" "$SUPPORTED" ;;
        error)
          printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"Internal error"}}\n' "$id" ;;
        *)
          [ "$late" = late ] && { sleep 1; late=''; }
          printf '%s{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern","version":"2.0"}}}}\n' "$head" ;;
      esac ;;
    *'"method":"initialize"'*)
      if [ -n "${LEGACY:-}" ]; then
        printf '%s{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"modern-as-legacy","version":"2.0"}}}\n' "$head"
      else
        printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}\n' "$id"
      fi ;;
    *'"method":"subscriptions/listen"'*)
      listen=$id
      printf '{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"notifications":{"toolsListChanged":true}}}\n' "$id" ;;
    *'"method":"tools/list"'*)
      third=''
      [ "$changed" = 1 ] && third=',{"name":"third","description":"Third.","inputSchema":{"type":"object"}}'
      printf '%s{"resultType":"complete","tools":[{"name":"echo","description":"Echoes.","inputSchema":{"type":"object"}},{"name":"ask","description":"Asks.","inputSchema":{"type":"object"}}%s]}}\n' "$head" "$third" ;;
    *'"method":"tools/call"'*'"name":"echo"'*)
      printf '%s{"resultType":"complete","content":[{"type":"text","text":"echoed"}]}}\n' "$head" ;;
    *'"method":"tools/call"'*'"inputResponses"'*'"name":"ask"'*)
      responses=$(printf '%s' "$line" | sed -n 's/.*"inputResponses":\(.*\),"name":"ask".*/\1/p')
      printf '%s{"resultType":"complete","content":[{"type":"text","text":"asked"}],"structuredContent":{"responses":%s,"state":"%s"}}}\n' "$head" "$responses" "$state" ;;
    *'"method":"tools/call"'*'"name":"ask"'*)
      printf '%s{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"state-1"}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"ask_twice"'*)
      case "$state" in
        after-first)
          printf '%s{"resultType":"input_required","inputRequests":{"second":{"method":"elicitation/create","params":{"message":"And?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"after-second"}}\n' "$head" ;;
        after-second)
          responses=$(printf '%s' "$line" | sed -n 's/.*"inputResponses":\(.*\),"name":"ask_twice".*/\1/p')
          printf '%s{"resultType":"complete","content":[{"type":"text","text":"asked twice"}],"structuredContent":{"responses":%s}}}\n' "$head" "$responses" ;;
        *)
          printf '%s{"resultType":"input_required","inputRequests":{"first":{"method":"elicitation/create","params":{"message":"First?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"after-first"}}\n' "$head" ;;
      esac ;;
    *'"method":"tools/call"'*'"inputResponses"'*'"name":"ask_sampling"'*)
      printf '%s{"resultType":"complete","content":[{"type":"text","text":"sampled"}]}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"ask_sampling"'*)
      printf '%s{"resultType":"input_required","inputRequests":{"llm":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Hi?"}}],"maxTokens":10}}}}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"ask_forever"'*)
      printf '%s{"resultType":"input_required","inputRequests":{"again":{"method":"elicitation/create","params":{"message":"Again?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"round"}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"odd_type"'*)
      printf '%s{"resultType":"deferred"}}\n' "$head" ;;
    *'"method":"tools/call"'*'"name":"slow"'*)
      printf '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1,"total":4,"message":"one"}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"change"'*)
      changed=1
      printf '{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s}}}\n' "${listen:-0}"
      printf '%s{"resultType":"complete","content":[{"type":"text","text":"changed"}]}}\n' "$head" ;;
  esac
done
