# Streams a little of the first prompt and then never answers it.
. "$(dirname "$0")/common.sh"
initialize
new_session
receive
say "Thinking"
# Waits, without answering, until the checker closes stdin.
cat >/dev/null
