# A stand-in for the `claude` CLI (for `check-agent --claude-cli`) that answers initialize, then
# prints a progress line and a JSON line with no "type" on stdout, and ends its turn without ever
# naming its session (no system/init line).
while read -r line; do
  case "$line" in
    *'"subtype":"initialize"'*)
      id=$(printf '%s' "$line" | sed 's/.*"request_id":"\([^"]*\)".*/\1/')
      printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{"commands":[],"models":[],"claude_code_version":"0.0.0-fake"}}}\n' "$id"
      ;;
    *'"type":"user"'*)
      printf 'Loading the model...\n'
      printf '{"progress":50}\n'
      printf '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"Hi"}\n'
      ;;
  esac
done
