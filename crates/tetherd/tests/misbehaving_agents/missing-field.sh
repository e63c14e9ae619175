# Sends an agent_message_chunk without its required `content`.
. "$(dirname "$0")/common.sh"
initialize
new_session
receive
send '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","text":"Hello"}}}'
end_prompt 2 end_turn
cancelled_prompt
