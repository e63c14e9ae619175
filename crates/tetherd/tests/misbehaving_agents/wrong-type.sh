# Sends a tool call whose title is a number, and asks permission with options that are not a list.
. "$(dirname "$0")/common.sh"
initialize
new_session
receive
send '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":42,"status":"completed"}}}'
send '{"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":"allow"}}'
receive
end_prompt 2 end_turn
cancelled_prompt
