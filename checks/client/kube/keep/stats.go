package keep

import "sync/atomic"

// What the cut saw this process, for doctor's stats line (DOCTOR_STATS,
// cmd/doctor): two atomic adds an answer, nothing a run pays for.
var wireBytes, keptBytes, answers atomic.Int64

// Stats is what the process's API answers came to: Wire, the bytes the
// server sent (bodies, before the cut); Kept, the bytes client-go was
// given to decode (after it); Decoded, what the kept objects take once
// decoded, as the run's budget counts them (MaxRunDecoded); Answers, the
// bodies cut.
type Stats struct {
	Answers, Wire, Kept, Decoded int64
}

// ProcessStats is Stats for every answer this process cut.
func ProcessStats() Stats {
	return Stats{Answers: answers.Load(), Wire: wireBytes.Load(), Kept: keptBytes.Load(), Decoded: process.Decoded()}
}

// count adds one cut answer body to the process's stats.
func count(wire, kept int) {
	answers.Add(1)
	wireBytes.Add(int64(wire))
	keptBytes.Add(int64(kept))
}
