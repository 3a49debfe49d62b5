// Package portal is the contest portal's domain: the contest, its teams, the
// benchmark jobs and their states, the workers that run them, and the errors
// the portal reports as classified data. It holds types and rules only; the
// adapters live below it:
//
//   - portal/store keeps them in a database, SQLite ("sqlite:PATH") or
//     PostgreSQL ("postgres://..."), with its own versioned schema and
//     River's tables, the same statements on both;
//   - portal/queue queues jobs in River and runs them in process with the
//     engine, exactly as `tunecon try` does;
//   - portal/web serves the pages, the JSON API and the staff's export,
//     through the store and the queue.
//
// The command uses them: `tunecon portal migrate` creates or upgrades the
// database, `tunecon portal` serves the contest (running benchmarks in
// process unless --workers 0), and `tunecon worker` runs a queue that works
// jobs, in a process of its own.
//
// # Job states
//
// Every job ends in exactly one of three final states:
//
//   - finished: the benchmark ran to its end and gave the contestant's
//     verdict, passed or failed (a target that never answers is the
//     contestant's fault: the engine's phase deadlines fail it, and the job is
//     finished and failed);
//   - errored: an infrastructure fault that is not the team's (the
//     benchmarker's internal error, a worker lost on the job's last attempt,
//     the job's hard deadline passing because the benchmarker hung); shown as
//     such and re-runnable by staff;
//   - cancelled: staff stopped it.
//
// Before that a job is queued or running. Transitions lists every legal move;
// the store refuses any other with a *TransitionError.
package portal
