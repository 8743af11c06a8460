package keep

import (
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"

	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// What a server says in free text (a pod's status.message, a condition's,
// a container's waiting message, an event's, a node condition's, a CSR
// condition's) is kept as what a check classifies of it, never as the
// text: the spans of it that documented messages of Kubernetes' own
// components match, each hole of them (a resource, a quantity, a count, a
// name, an image, a duration) holding a value of its class, and "…" for
// everything between them that no documented message accounts for. A
// message the kubelet, the scheduler, the eviction manager or the
// autoscaler wrote reads as it was written; a log tail, a token pasted into
// a condition, another team's message, reads as "…". A container's
// terminated.message is its log tail under FallbackToLogsOnError: of it
// only whether it says "exec format error" is kept (Terminated).
//
// The cut applies these where every answer arrives (Kinds' Transforms),
// live and in analyze alike, and the checks read each message through the
// same function (Message, Terminated, Reason), so a run on whole answers
// concludes what a cut one does: each is idempotent, what it keeps being
// itself what it keeps.

// Elided stands for text no documented message accounts for.
const Elided = "…"

// hole classes: what a hole of a documented message may hold. Each is a
// value of a kind that names or counts, never free text.
const (
	hRes     = `[A-Za-z0-9][A-Za-z0-9./_-]{0,62}`                                   // a resource name: cpu, ephemeral-storage, nvidia.com/gpu
	hQty     = `[+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?` // a resource.Quantity as it prints
	hNum     = `[0-9]{1,12}`
	hName    = `[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?` // a DNS subdomain: a pod, node or container name
	hWord    = `[A-Za-z][A-Za-z0-9]{0,63}`              // a reason, a plugin, a condition type
	hDur     = `(?:[0-9]+(?:\.[0-9]+)?(?:ns|us|µs|ms|s|m|h)){1,6}`
	hImage   = `[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}` // an image reference (the pod's spec has it anyway)
	hUID     = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	hTaintK  = `[A-Za-z0-9][A-Za-z0-9./_-]{0,252}`
	hTaintV  = `(?:[A-Za-z0-9._-]{0,63}|…)` // a taint's value: not kept (elided)
	hWordSet = `\[?` + hWord + `(?:[ ,]{1,2}` + hWord + `)*\]?`
)

// piece is one documented message, or a part of one that components
// concatenate, as a regular expression whose groups are its holes.
type piece struct {
	// needle is the longest literal every match holds: the expression
	// runs only on a message that contains it, and is compiled only then.
	needle string
	// compiled is the expression, compiled at its first use: all of them
	// cost a fresh process 11 to 14 ms, which a warm run paid on its
	// critical path (bench/RESULTS.md), where its answers' messages (node
	// conditions) need five small ones.
	compiled func() *compiledPiece
}

// compiledPiece is a piece's expression and the roles of its groups.
type compiledPiece struct {
	re *regexp.Regexp
	// checked are the groups LooksSecret must not hold (names, words);
	// elide the groups written as "…" whatever they hold (a taint's value).
	checked, elide []int
}

// pieceDefs are the documented messages, by where they are written. A
// group is a hole: (?P<c>…) checked, (?P<e>…) elided, plain (…) kept.
var pieceDefs = []string{
	// kube-scheduler, FitError.Error (pkg/scheduler/framework/types.go,
	// kubernetes v1.37.2): "0/%v nodes are available: <reasons>." with
	// each reason counted ("%v %v") and joined by ", ", then a
	// PostFilter's message ("preemption: …", default_preemption.go).
	`0/` + hNum + ` nodes are available`,
	hNum + ` Insufficient ` + `(?P<c>` + hRes + `)`,
	hNum + ` Too many pods`,
	hNum + ` node\(s\) (?:didn't match Pod's node affinity/selector|didn't match the requested node name|were unschedulable|had untolerated taint\(s\)|` +
		`had taints that the pod didn't tolerate|didn't have free ports for the requested pod ports|didn't match pod affinity rules|` +
		`didn't match pod anti-affinity rules|didn't satisfy existing pods anti-affinity rules|didn't match pod topology spread constraints|` +
		`had no available volume zone|had no available disk|exceed max volume count|did not have enough free storage|` +
		`didn't find available persistent volumes to bind|didn't match PersistentVolume's node affinity|had volume node affinity conflict|` +
		`unavailable due to one or more pvc\(s\) bound to non-existent pv\(s\)|had unknown conditions|` +
		`unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod|` +
		`didn't match scheduler-enforced node affinity|didn't match Pod's required features|had resize preemption disabled)`,
	// before v1.27 the taint itself was named: "{key: value}"; its value
	// is not kept.
	hNum + ` node\(s\) had untolerated taint \{(?P<c>` + hTaintK + `): (?P<e>` + hTaintV + `)\}`,
	hNum + ` node\(s\) didn't satisfy plugin(?:\(s\))? (?P<c>` + hWordSet + `)(?: simultaneously)?`,
	`(?:` + hNum + ` )?(?:Preemption is not helpful for scheduling|No preemption victims found for incoming (?:pod|preemptor))`,
	`pod has unbound immediate PersistentVolumeClaims`,
	`preemption:`,
	// the kubelet's eviction manager (pkg/kubelet/eviction/helpers.go,
	// kubernetes v1.37.2): nodeLowMessageFmt, nodeConditionMessageFmt,
	// thresholdMetMessageFmt, containerMessageFmt, podMessageFmt,
	// containerEphemeralStorageMessageFmt, podEphemeralStorageMessageFmt,
	// emptyDirMessageFmt, each ending in ". ".
	`The node was low on resource: (?P<c>` + hRes + `)\.`,
	`The node had condition: (?P<c>` + hWordSet + `)\.`,
	`Threshold quantity: ` + hQty + `, available: ` + hQty + `\.`,
	`(?:Container|Pod) (?P<c>` + hName + `) was using ` + hQty + `, request is ` + hQty + `, has larger consumption of (?P<c>` + hRes + `)\.`,
	`Container (?P<c>` + hName + `) exceeded its local ephemeral storage limit "` + hQty + `"\.`,
	`Pod ephemeral local storage usage exceeds the total limit of containers ` + hQty + `\.`,
	`Usage of EmptyDir volume "(?P<c>` + hName + `)" exceeds the limit "` + hQty + `"\.`,
	// disruption (DisruptionTarget conditions, Preempted events), v1.37.2:
	// pkg/controller/tainteviction, pkg/controller/podgc,
	// pkg/kubelet/preemption, pkg/scheduler/framework/preemption,
	// pkg/registry/core/pod/storage/eviction.go, nodeshutdown.
	`Taint manager: deleting due to NoExecute taint`,
	`PodGC: node no longer exists`,
	`Eviction API: evicting`,
	`Pod was preempted by Kubelet to accommodate a critical pod\.`,
	`Preempted in order to admit critical pod`,
	`(?P<c>` + hName + `): preempting to accommodate a higher priority (?:pod|podgroup)`,
	`Preempted by (?:pod|podgroup|` + hWord + `) ` + hUID + ` on node (?P<c>` + hName + `)`,
	`Pod was terminated in response to imminent node shutdown\.`,
	`Pod was rejected as the node is shutting down\.`,
	`Pod was rejected:`,
	`Node didn't have enough resource: (?P<c>` + hRes + `), requested: ` + hNum + `, used: ` + hNum + `, capacity: ` + hNum,
	// the kubelet's image manager (pkg/kubelet/images/image_manager.go,
	// v1.37.2) and container runtime manager
	// (pkg/kubelet/kuberuntime/kuberuntime_manager.go,
	// kuberuntime_container.go): events and waiting messages.
	`Pulling image "` + hImage + `"`,
	`Back-off pulling image "` + hImage + `"`,
	`Failed to pull image "` + hImage + `":`,
	`Successfully pulled image "` + hImage + `" in ` + hDur + ` \(` + hDur + ` including waiting\)\. Image size: ` + hNum + ` bytes\.`,
	`Container image "` + hImage + `" already present on machine(?: and can be accessed by the pod)?`,
	`Container image "` + hImage + `" is not present with pull policy of Never`,
	`Error: (?P<c>` + hWord + `)`,
	`Container created`, `Container started`,
	`Created container:? (?P<c>` + hName + `)`, `Started container (?P<c>` + hName + `)`, `Stopping container (?P<c>` + hName + `)`,
	`back-off ` + hDur + ` restarting failed container=(?P<c>` + hName + `) pod=(?P<c>` + hName + `)_(?P<c>` + hName + `)\(` + hUID + `\)`,
	`Back-off restarting failed container (?P<c>` + hName + `) in pod (?P<c>` + hName + `)_(?P<c>` + hName + `)\(` + hUID + `\)`,
	`back-off ` + hDur,
	`Pod sandbox changed, it will be killed and re-created\.`,
	`containers with (?:unready status|incomplete status): \[(?P<c>` + hName + `(?: ` + hName + `)*)\]`,
	// what container runtimes and registries answer a pull with, as the
	// kubelet quotes it after "Failed to pull image …:" (containerd's and
	// CRI-O's errors, the registry's): the spans image-pull's reader needs.
	`rpc error: code = (?P<c>` + hWord + `) desc =`,
	`failed to pull and unpack image "` + hImage + `"`,
	`failed to resolve reference "` + hImage + `"`,
	`pull access denied`, `repository does not exist or may require authorization`, `insufficient_scope`, `authorization failed`,
	`manifest unknown`, `not found`, `unauthorized`, `401 Unauthorized`, `403 Forbidden`, `toomanyrequests`, `too many requests`,
	`no match for platform in manifest`, `x509: certificate signed by unknown authority`, `x509: certificate has expired or is not yet valid`,
	`i/o timeout`, `no such host`, `connection refused`, `connection reset by peer`, `context deadline exceeded`, `TLS handshake timeout`,
	`couldn't parse image (?:name|reference)`, `invalid reference format`, `exec format error`,
	// the kubelet's node conditions (pkg/kubelet/nodestatus/setters.go,
	// v1.37.2) and the node lifecycle controller's.
	`kubelet is posting ready status`, `kubelet has sufficient memory available`, `kubelet has insufficient memory available`,
	`kubelet has no disk pressure`, `kubelet has disk pressure`, `kubelet has sufficient PID available`, `kubelet has insufficient PID available`,
	`Kubelet stopped posting node status\.`, `container runtime network not ready`, `container runtime is down`,
	`PLEG is not healthy: pleg was last seen active ` + hDur + ` ago; threshold is ` + hDur,
	`NetworkReady=false reason:(?P<c>` + hWord + `) message:`, `Network plugin returns error:`, `cni plugin not initialized`,
	// cluster-autoscaler's events (status/eventing_scale_up_processor.go):
	// the node groups of a scale-up, and why none scaled.
	`pod triggered scale-up: \[(?:\{(?P<c>` + hName + `) ` + hNum + `->` + hNum + ` \(max: ` + hNum + `\)\}(?:, )?)+\]`,
	`pod didn't trigger scale-up:`,
	hNum + ` max node group size reached`, hNum + ` node\(s\) didn't match Pod's node affinity/selector`,
}

// separators may stand between two pieces and stay: what the documented
// messages put between the parts they join.
var separators = map[string]bool{"": true, " ": true, ", ": true, ". ": true, ".": true, ": ": true, "; ": true, " (": true, ")": true, ") ": true}

var pieces = sync.OnceValue(func() []piece { return newPieces(pieceDefs, compilePiece) })

// newPieces are the pieces of defs, each compiled by compile at its first
// use.
func newPieces(defs []string, compile func(string) *compiledPiece) []piece {
	out := make([]piece, len(defs))
	for i, d := range defs {
		out[i] = piece{needle: needle(d), compiled: sync.OnceValue(func() *compiledPiece { return compile(d) })}
	}
	return out
}

// compilePiece compiles a piece's expression, leftmost-longest, and sorts
// its groups by role.
func compilePiece(def string) *compiledPiece {
	re := regexp.MustCompile(def)
	re.Longest()
	c := &compiledPiece{re: re}
	for j, n := range re.SubexpNames() {
		switch n {
		case "c":
			c.checked = append(c.checked, j)
		case "e":
			c.elide = append(c.elide, j)
		}
	}
	return c
}

// needle is the longest literal of the expression's top-level sequence.
func needle(expr string) string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return ""
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	best := ""
	for _, sub := range subs {
		if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 && len(string(sub.Rune)) > len(best) {
			best = string(sub.Rune)
		}
	}
	return best
}

// span is one piece matched in a message, and what is kept of it.
type span struct {
	start, end int
	kept       string
}

// Message is what is kept of a server's free-text message: the documented
// pieces of it, joined as they were where what stood between them is a
// separator they use, and by "…" where it is anything else. A message of
// which nothing is documented is "…"; "" is "".
func Message(s string) string { return keptOf(pieces(), s) }

// keptOf is Message with the pieces ps.
func keptOf(ps []piece, s string) string {
	if s == "" || s == Elided {
		return s
	}
	var spans []span
	for _, p := range ps {
		if !strings.Contains(s, p.needle) {
			continue
		}
		c := p.compiled()
		for _, m := range c.re.FindAllStringSubmatchIndex(s, -1) {
			if sp, ok := c.kept(s, m); ok {
				spans = append(spans, sp)
			}
		}
	}
	// Leftmost, then longest, and none overlapping: the same spans on every
	// reading, the kept text's included.
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		if sp.start < at {
			continue
		}
		gap := s[at:sp.start]
		switch {
		case separators[gap]:
			b.WriteString(gap)
		case at == 0:
			b.WriteString(Elided + " ")
		default:
			b.WriteString(" " + Elided + " ")
		}
		b.WriteString(sp.kept)
		at = sp.end
	}
	switch rest := s[at:]; {
	case at == 0:
		return Elided
	case separators[rest]:
		b.WriteString(rest)
	default:
		b.WriteString(" " + Elided)
	}
	return b.String()
}

// kept is the match m of p in s as it is kept: refused when a checked
// hole looks like a secret, its elided holes written "…".
func (p *compiledPiece) kept(s string, m []int) (span, bool) {
	for _, g := range p.checked {
		if m[2*g] >= 0 && redact.LooksSecret(s[m[2*g]:m[2*g+1]]) {
			return span{}, false
		}
	}
	text := s[m[0]:m[1]]
	for k := len(p.elide) - 1; k >= 0; k-- {
		g := p.elide[k]
		if a, z := m[2*g], m[2*g+1]; a >= 0 && z > a {
			text = text[:a-m[0]] + Elided + text[z-m[0]:]
		}
	}
	return span{start: m[0], end: m[1], kept: text}, true
}

// execFormat is all a container's terminated message keeps: that it says
// the binary was for another architecture (node-arch), as the runtime
// writes it ("exec /bin/sh: exec format error").
const execFormat = "exec format error"

// Terminated is what is kept of a container's terminated.message, which is
// the tail of its log under terminationMessagePolicy FallbackToLogsOnError:
// "exec format error" when it says so, else nothing. Not one byte of the
// message itself.
func Terminated(s string) string {
	if strings.Contains(s, execFormat) {
		return execFormat
	}
	return ""
}

// reasonShape is a reason as the API conventions write one: a CamelCase
// word.
var reasonShape = lazyre.MustCompile(`^[A-Za-z][A-Za-z0-9]{0,63}$`)

// Reason is what is kept of a reason (a pod's, a condition's, a
// container state's, an event's): the word as it is, when it is one word
// of at most 64 letters and digits that does not look like a secret; else
// "…".
func Reason(s string) string {
	if s == "" || s == Elided || reasonShape().MatchString(s) && !redact.LooksSecret(s) {
		return s
	}
	return Elided
}
