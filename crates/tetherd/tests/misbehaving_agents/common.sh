# Shared by the scripted agents that `tetherd check-agent` is tested against. Each script plays
# one ACP conversation with the checker line by line, knowing the ids the checker uses
# (initialize 0, session/new 1, the prompt 2, the prompt it cancels 3), and misbehaves in one way.

# Reads the checker's next message (a request or a notification) into $line; ends the script
# when the checker has closed stdin.
receive() {
  IFS= read -r line || exit 0
}

send() {
  printf '%s\n' "$1"
}

# Answers initialize (id 0).
initialize() {
  receive
  send '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false},"agentInfo":{"name":"scripted","version":"1.0"}}}'
}

# Answers session/new (id 1) with the session "s1".
new_session() {
  receive
  send '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}'
}

# Streams one chunk of agent text in the session "s1".
say() {
  send '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"'"$1"'"}}}}'
}

# Ends the prompt with id $1 with the stop reason $2.
end_prompt() {
  send '{"jsonrpc":"2.0","id":'"$1"',"result":{"stopReason":"'"$2"'"}}'
}

# The first prompt (id 2), streamed and ended well.
good_prompt() {
  receive
  say "Hello"
  end_prompt 2 end_turn
}

# The second prompt (id 3): one update, then the checker's session/cancel, then `cancelled`.
cancelled_prompt() {
  receive
  say "One"
  receive
  end_prompt 3 cancelled
}
