# Answers initialize twice.
. "$(dirname "$0")/common.sh"
initialize
send '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'
new_session
good_prompt
cancelled_prompt
