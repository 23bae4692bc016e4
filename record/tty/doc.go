// Package tty records a terminal program as an agent trajectory: it runs the
// program in a private tmux server at a fixed size (80x24 by default), lets a
// seeded exploration policy press keys, and captures the screen, the cursor
// and a few facts read off the screen after every key.
//
// # Overview
//
// Record drives one episode:
//
//  1. Start a tmux server on a socket in a fresh temporary directory, with a
//     configuration that turns the status line off and keeps a dead pane
//     (remain-on-exit) so the program's last screen can still be captured,
//     and run the program in a detached session of exactly Width x Height.
//  2. Wait until the screen has settled (unchanged for Config.Settle, at most
//     Config.Startup) and record observation 0.
//  3. For each step: ask the Policy for an Action from the current screen,
//     send it with tmux send-keys (literal text with -l), poll capture-pane
//     until the screen and cursor are unchanged for Config.Settle (at most
//     Config.SettleMax), record the action, the new observation, its facts
//     and the step's timings.
//  4. Kill the tmux server (always, also on error and on cancellation) and
//     run the profile's cleanup (NetHack's save and lock files).
//
// A profile bundles what is specific to a program: how it is started (NetHack
// gets a player name, options and no prompts at startup; vim a clean
// configuration and a temporary file), its exploration policy and its facts.
// Profiles: generic, nethack, vim and bsdgames; ProfileFor picks one from
// the program's name.
//
// The recorder writes through a Sink (package recording's Writer in memowm),
// so this package knows nothing of files or trajectories.
//
// # Invariants
//
//   - Observations and actions alternate: Observe is called Steps+1 times and
//     Act Steps times, Act(t) between Observe(t) and Observe(t+1), except that
//     an episode whose program exits ends early, cleanly, after the
//     observation that shows the exit.
//   - Every observation has exactly Height rows of at most Width runes and a
//     cursor inside the screen (column <= Width, row < Height).
//   - The policy is deterministic: for the same profile, seed and sequence of
//     screens it returns the same actions. The recording as a whole is not
//     reproducible (programs have their own randomness and timing).
//   - The tmux server is killed before Record returns, whatever happened.
//   - Every Action has a memowm action kind: "key" with a Key, "type" with a
//     Text of at most 40 bytes, or "press-enter".
//   - Errors start with "record tty: ".
package tty
