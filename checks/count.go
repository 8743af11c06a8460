package checks

import "fmt"

// Count is n with its noun: "1 node", "3 nodes", "0 nodes". Findings are
// read as sentences; "1 nodes" reads as a slip.
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
