# Sends an update for a session it never created.
. "$(dirname "$0")/common.sh"
initialize
new_session
receive
send '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"someone-else","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}}'
say "Hello"
end_prompt 2 end_turn
cancelled_prompt
