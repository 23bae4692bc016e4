// Package web records a seeded exploration of a web site in headless
// Chromium as a recording folder (docs/recording-format.md): viewport
// screenshots, the actions between them in memowm's action schema, and
// ground-truth facts read off the page. It is the engine of
// 'memowm record web'.
//
// # Overview
//
// Site serves a folder of HTML (Debian's python3-doc, debian-reference,
// postgresql-doc-15...) on a random port of 127.0.0.1 with net/http, or
// points at pages already served at a URL. Browser drives one headless
// Chromium (Debian's chromium; nothing is installed at run time) through
// chromedp with exactly Flags, a fresh temporary profile and a fixed
// viewport. Policy picks each action from what observe.js reads of the
// page: it clicks visible links and text inputs at their positions on
// screen, turns the mouse wheel (raw Input.dispatchMouseEvent mouseWheel
// events), types words of the visible text into a focused input, presses
// Enter there, goes back, and loads pages it has seen. Record runs the loop
// and hands every screenshot, action, facts object and timing to a Sink (a
// *recording.Writer), and measures per-step times and screen changes.
//
// A step is: the action (act), waiting until a load it started has stopped
// and the scroll position and the DOM held still for two animation frames,
// at most about half a second (settle), the screenshot, and reading the
// page (facts). The accessibility tree is not
// read: it takes seconds on large pages.
//
// # Invariants
//
//   - The policy is a pure function of its seed and the pages it is shown:
//     the same seed and the same sequence of pages give the same actions,
//     whatever the browser's timing. (The pages themselves depend on the
//     browser, so two recordings of one site and seed agree only as far as
//     Chromium renders them alike.)
//   - Every recorded action is valid in memowm's schema: positions are
//     fractions in [0, 1] of the viewport, a scroll's dy a fraction of its
//     height, a payload at most 40 bytes (a goto's path is cut to 40 bytes;
//     the browser loads the whole path).
//   - Every screenshot is exactly the viewport's width x height; a
//     screenshot of another size ends the recording with an error.
//   - The policy follows only links to pages on the site that exist
//     (checked before the click); a page that turns out missing is left by
//     going back. The folder server never serves anything outside its
//     folder: ".." and symbolic links leading out are 404.
//   - No step waits longer than the timeout at one stage: an action, load,
//     screenshot or page read that fails or hangs is replaced by a return
//     to the start page, recorded as that goto; if the return fails too,
//     recording ends with an error.
//   - Record always closes Chromium (and any helper started with its
//     profile) and removes the temporary profile before returning, on
//     success, error or cancellation.
//   - Errors start with "record web: ".
package web
