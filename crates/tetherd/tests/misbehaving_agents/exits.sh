# Crashes in the middle of the first prompt, with a stack trace on stderr.
. "$(dirname "$0")/common.sh"
initialize
new_session
receive
say "Hello"
echo "Error: model connection reset" >&2
echo "    at Agent.prompt (agent.js:42)" >&2
exit 3
