# Starts a tool call, moves it to in_progress, and ends the turn without completing it.
. "$(dirname "$0")/common.sh"
initialize
new_session
receive
send '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"read-1","title":"Read README.md","kind":"read","status":"pending"}}}'
send '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"read-1","status":"in_progress"}}}'
send '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"read-2","title":"Read notes.md","kind":"read","status":"completed"}}}'
end_prompt 2 end_turn
cancelled_prompt
