package checks

// A goroutine starts with a 2 KiB stack, and the runtime sizes new stacks
// from the average it measures at garbage collections, which a run does not
// have (cmd/doctor's GC settings). A node's goroutine then grows 2, 4, 8,
// 16 KiB deep inside client-go's request path and JSON decoding: each growth
// copies the stack, and its cost is the frames it adjusts. Growing it once,
// first, copies one shallow frame. In an A/B of 40 runs on the small cluster,
// doctor's CPU went from 31.7 to 30.7 ms (bench/RESULTS.md, "Speed session
// 4"); frames of 15 and 31 KiB measured the same within noise.

// stackGrowth is the frame growStack takes: the runtime doubles the stack
// until the frame fits above what is already used, to 16 KiB.
const stackGrowth = 7 << 10

// growSink is never true: it only makes growStack's frame real.
var growSink bool

// growStack takes stackGrowth of stack in one growth.
//
//go:noinline
func growStack() {
	var buf [stackGrowth]byte
	if growSink {
		for i := range buf {
			buf[i] = byte(i)
		}
		println(buf[len(buf)-1])
	}
}
