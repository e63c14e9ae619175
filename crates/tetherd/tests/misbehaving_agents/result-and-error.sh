# Answers session/new with both a result and an error.
. "$(dirname "$0")/common.sh"
initialize
receive
send '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"},"error":{"code":-32603,"message":"oops"}}'
good_prompt
cancelled_prompt
