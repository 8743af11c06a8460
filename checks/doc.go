// Package checks is doctor's engine: a check (Check) probes one documented
// cause, a fact (Fact) computes a value once per run for every node that
// requires it, and Run executes a catalog of them as one validated DAG,
// each node under its own deadline, per runner where a fact is per runner.
// What a node sees of the outside world comes through its Pass's Env
// (internal/hostio); what it reports passes through internal/redact.
package checks
