# Answers a request the client never sent.
. "$(dirname "$0")/common.sh"
initialize
send '{"jsonrpc":"2.0","id":42,"result":{}}'
new_session
good_prompt
cancelled_prompt
