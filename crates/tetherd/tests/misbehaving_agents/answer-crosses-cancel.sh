# Streams one update of the prompt to cancel and answers it with end_turn as the very next thing
# it prints after the checker's session/cancel. From the checker's side this cannot be told from
# an agent that finished its turn while the cancel was on its way, so it is not an accusation.
. "$(dirname "$0")/common.sh"
initialize
new_session
good_prompt
receive
say "One"
receive
end_prompt 3 end_turn
