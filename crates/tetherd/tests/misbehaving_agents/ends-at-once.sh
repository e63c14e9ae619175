# A correct agent that answers every prompt with end_turn at once, streaming nothing: the prompt
# to cancel is over before a cancel could reach it, so cancellation cannot be checked.
. "$(dirname "$0")/common.sh"
initialize
new_session
receive
end_prompt 2 end_turn
receive
end_prompt 3 end_turn
