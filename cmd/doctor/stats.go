package main

import (
	"fmt"
	"io"
	"runtime/metrics"
	"syscall"

	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
)

// statsEnv names the variable that makes doctor print, on stderr as it
// exits, one line of what the run cost: bench/ reads it at every cluster
// size. Unset (every real run), nothing is read or printed.
const statsEnv = "DOCTOR_STATS"

// writeStats prints the stats line: the API answers' bytes on the wire,
// kept by the cut and decoded (keep.ProcessStats), the collector's cycles
// and allocations (runtime/metrics), and the process's CPU and peak RSS
// (getrusage).
func writeStats(w io.Writer) {
	s := keep.ProcessStats()
	m := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(m)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Fprintf(w, "doctor-stats: answers=%d wire_bytes=%d kept_bytes=%d decoded_bytes=%d gc_cycles=%d heap_allocs_bytes=%d user_ms=%d sys_ms=%d maxrss_kib=%d\n",
		s.Answers, s.Wire, s.Kept, s.Decoded, m[0].Value.Uint64(), m[1].Value.Uint64(),
		ru.Utime.Nano()/1e6, ru.Stime.Nano()/1e6, ru.Maxrss)
}
