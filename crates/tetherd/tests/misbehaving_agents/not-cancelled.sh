# Ignores session/cancel and ends the cancelled prompt with end_turn.
. "$(dirname "$0")/common.sh"
initialize
new_session
good_prompt
receive
say "One"
receive
say "Two"
end_prompt 3 end_turn
