// Package engine is tunecon's benchmark engine: the library that problem
// scenarios, the tunecon command, the tests and the portal's workers share.
//
// A run goes through four phases with hard deadlines: initialize (the
// target's POST /initialize), pre-check (a strict validation pass; any error
// fails the run), load (virtual users driven by the scenario, with an adaptive
// load controller) and final check (end-state consistency). Every failure of
// the target is an *Error with a code and a Class; one place (Rules) turns
// classes into deductions and a pass/fail verdict. The engine never prints and
// never exits: it returns a Result, and the caller reports it.
package engine

// Version is the engine's version, recorded in every result.
const Version = "0.3.0"
