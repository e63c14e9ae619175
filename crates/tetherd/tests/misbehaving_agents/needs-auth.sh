# Needs a login: session/new answers "authentication required", as real agents without a key do.
. "$(dirname "$0")/common.sh"
receive
send '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[{"id":"api-key","name":"API key"},{"id":"login","name":"Log in"}]}}'
receive
send '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Authentication required"}}'
cat >/dev/null
