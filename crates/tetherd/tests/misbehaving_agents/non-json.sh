# Prints a progress line on stdout, where only JSON-RPC belongs.
. "$(dirname "$0")/common.sh"
initialize
new_session
receive
say "Hello"
send 'Loading model weights... done'
end_prompt 2 end_turn
cancelled_prompt
