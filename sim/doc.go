// Package sim is a seeded synthetic web/GUI world: memowm's embedded default
// data.
//
// # Overview
//
// A site of Config.Pages pages is drawn from Config.WorldSeed. Every page is 32
// widget slots (DefaultShape.Slots): a title, site-wide navigation links, a tab
// bar, a ticking clock, a rotating ad banner, and a body of text inputs,
// checkboxes, buttons, list rows, in-page links, static text and a status line.
// An agent acts in a browser with tabs and history: clicking a link or typing a
// URL loads a page; typing changes one input; scrolling shifts a list; back
// returns to the previous page as it was left.
//
// The world has the structure MemoWM exploits. Navigation, titles and static
// text are predictable and persistent; the clock and the ad are unpredictable
// but irrelevant to any question; typed values, selections and checkboxes are
// unpredictable and important, and the questions (trajectory.Question) ask
// about them.
//
// A fixed encoder, also drawn from WorldSeed, maps each slot's latent content to
// a Dim-dimensional vector: a slot-position embedding, a widget-kind embedding
// and a content embedding, plus Gaussian jitter drawn per observation. Equal
// content gives nearly equal vectors, as a real screen encoder would.
//
// # Invariants
//
//   - Episode i depends only on (Seed, i) and the world on WorldSeed: the same
//     Config gives identical episodes, questions and files.
//   - The shape is trajectory.Shape with Slots = 32; Dim is free (512 default).
//   - Each observation's facts (JSON) are the ground truth the questions ask
//     about, so every answer can be checked against the trajectory itself.
//   - EpisodeRows makes Episode's episode without its states, bit for bit
//     (State replays the episode's random stream), and WriteFile writes
//     through it: memory grows with an episode's actions and facts (a few
//     hundred bytes an observation) and, when quantizing, its codes, never
//     with its states.
package sim
