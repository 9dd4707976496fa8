// Package lab reproduces the performance claims of hotpath's seeds on the
// machine it runs on and says, claim by claim, whether this machine agrees.
//
// An [Experiment] measures a "before" and an "after" arm (sometimes more)
// of code written to do the same work as the seed describes, repeats the
// measurement [Budget].Runs times with the arms interleaved, and compares
// the per-run ratios with the seed's claimed ratio. Each experiment also
// has a same-work check ([Experiment].Check): the arms must produce the
// same response bytes or the same parsed value, so the lab never compares
// code that does different work.
//
// Ratios are improvement factors: before/after for costs (ns/op, B/op,
// CPU per request) and after/before for throughput (req/s), so a ratio
// above 1 always means the "after" arm is better. [Judge] turns a claimed
// and a measured ratio into a [Verdict]; [Rule] states the rule in words
// for the report.
//
// [Experiments] lists every experiment in the report's order (each is
// defined in its own file, e<seed>_*.go, with its Check and Run), and
// [Select] picks some by ID or seed.
//
// [Run] runs a selection of experiments and returns a [Report], which
// [WriteJSON], [WriteMarkdown] and [WriteHTML] render. Servers that must
// not share the measuring process (so that their CPU time and allocations
// stay out of the client's figures) run in a child process started from
// the same binary (see [ChildEnv] and [ServeChild]); without a child
// command they run in-process and the report says so.
package lab
