package trace

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Step is one stage of the timeline: when it was reached and how long after
// the one before.
type Step struct {
	Stage     Stage
	At        time.Time
	SincePrev time.Duration
	Detail    string
	// Skipped: the stage was not needed (the pod was placed on a node that
	// existed before it, so nothing had to scale up).
	Skipped bool
	// Inferred: the stage was not seen, but a later one proves it happened
	// (watch streams are not ordered with one another, and a fast change
	// can fall between two observations).
	Inferred bool
}

// Kind names a line of the trace.
type Kind string

const (
	KindStart      Kind = "start"       // the trace is watching
	KindStage      Kind = "stage"       // a stage was reached, skipped or inferred
	KindOverBudget Kind = "over-budget" // the stage waited for exceeded its budget
	KindExplain    Kind = "explain"     // what OnStuck returned for that stage
	KindNote       Kind = "note"        // a watch error, a stream that cannot be read
	KindVerdict    Kind = "verdict"     // the end
)

// Record is one line of output, before rendering.
type Record struct {
	Kind           Kind
	Step           // KindStage; Stage also names the stage of over-budget and explain
	Waited, Budget time.Duration
	Checks         []string
	Explain        []string
	Verdict        *Verdict
	Start          *Start
}

// Start is what the first line says.
type Start struct {
	Namespace string
	Pod       string // "" with Next
	Next      bool
	Nodes     int
	Poll      time.Duration
}

// Verdict is how a trace ended: Completed (it saw the job through to the
// cluster back at its nodes, exit 0) or stuck waiting for a stage (exit 2).
type Verdict struct {
	Completed bool
	// Stuck is the stage the trace was waiting for when it ended.
	Stuck Stage
	// Reason says why a stuck trace ended: the timeout, an interrupt, the
	// pod deleted or failed before it ran.
	Reason string
	// Detail is what the stuck stage waited on, as last seen.
	Detail string
	// Waited is how long the trace had been in the stuck stage.
	Waited    time.Duration
	Namespace string
	Pod       string
	// Phase is the pod's last phase.
	Phase    corev1.PodPhase
	Timeline []Step
	At       time.Time
	Duration time.Duration
}

// ExitCode is doctor's: 0 for a trace that saw the job through, 2 for one
// that ended stuck.
func (v Verdict) ExitCode() int {
	if v.Completed {
		return 0
	}
	return 2
}

func (v Verdict) String() string {
	if v.Completed {
		return fmt.Sprintf("completed in %s (pod %s %s)", round(v.Duration), v.Pod, v.Phase)
	}
	s := fmt.Sprintf("stuck in %d %s after %s: %s", int(v.Stuck), v.Stuck, round(v.Waited), v.Reason)
	if v.Detail != "" {
		s += " (" + v.Detail + ")"
	}
	return s
}

type nodeState struct {
	name     string
	created  time.Time
	seenAt   time.Time
	ready    bool
	readyAt  time.Time
	notReady string // the Ready condition's reason and message while not Ready
	live     bool   // its join was observed by this trace
}

type bufferedEvent struct {
	ev *corev1.Event
	at time.Time
}

// maxBuffered bounds the pod events kept before the followed pod is known;
// maxPassed the pods remembered as not followed, whose events are not kept.
const (
	maxBuffered = 512
	maxPassed   = 4096
)

// machine is the stage machine: pure state, fed objects and the time, and
// asked for the lines they make. It does no I/O.
type machine struct {
	namespace string
	podName   string
	next      bool
	runner    string
	poll      time.Duration
	budgets   map[Stage]time.Duration
	start     time.Time

	preexisting map[types.UID]bool
	// passed are the pods the watch showed that the trace will not follow
	// (not job pods, another runner's): their events are not buffered,
	// so a flood about them cannot push out the followed pod's own.
	passed     map[types.UID]bool
	pod        *corev1.Pod
	podDeleted bool
	deletedAt  time.Time
	baseline   int

	nodes         map[string]*nodeState
	everNew       map[string]bool // every node seen, by name: joined after the pod?
	nodesVisible  bool
	eventsVisible bool
	boots         []time.Duration

	buffered    []bufferedEvent
	decision    Decision
	decisionAt  time.Time
	decisionMsg string
	pulled      map[string]time.Time
	pulledMsg   string
	lastWarning string

	steps    [NumStages + 1]*Step
	cur      Stage
	curSince time.Time
	over     map[Stage]bool
	end      *Verdict
	out      []Record
}

func newMachine(o Options, start time.Time) *machine {
	poll := o.PollTimeout
	if poll <= 0 {
		poll = DefaultPollTimeout
	}
	return &machine{
		namespace: o.Namespace, podName: o.Pod, next: o.Next, runner: o.RunnerName, poll: poll,
		budgets: o.Budgets, start: start, preexisting: map[types.UID]bool{}, passed: map[types.UID]bool{},
		nodes: map[string]*nodeState{}, everNew: map[string]bool{}, nodesVisible: true, eventsVisible: true,
		pulled: map[string]time.Time{}, cur: StageCreated, curSince: start, over: map[Stage]bool{},
	}
}

// take returns the lines made since the last call.
func (m *machine) take() []Record {
	out := m.out
	m.out = nil
	return out
}

func (m *machine) note(at time.Time, format string, args ...any) {
	m.out = append(m.out, Record{Kind: KindNote, Step: Step{At: at, Detail: fmt.Sprintf(format, args...)}})
}

// --- the first lists: what the cluster is when the trace starts ---

func (m *machine) initNodes(now time.Time, nodes []corev1.Node, visible bool) {
	m.nodesVisible = visible
	for i := range nodes {
		n := &nodes[i]
		st := &nodeState{name: n.Name, created: n.CreationTimestamp.Time, seenAt: n.CreationTimestamp.Time}
		st.ready, st.readyAt = nodeReady(n)
		st.notReady = notReadyDetail(n)
		// A node that became Ready within half an hour of its creation and
		// stayed so tells how long a node takes to boot here.
		if boot := st.readyAt.Sub(st.created); st.ready && boot > 0 && boot <= 30*time.Minute {
			m.boots = append(m.boots, boot)
		}
		m.nodes[n.Name] = st
	}
}

func (m *machine) initPods(now time.Time, pods []corev1.Pod) {
	var found *corev1.Pod
	for i := range pods {
		p := &pods[i]
		if m.next {
			m.preexisting[p.UID] = true
			continue
		}
		if p.Name == m.podName {
			found = p
		}
	}
	if found != nil {
		m.adopt(now, found, true)
	}
}

func (m *machine) initEvents(now time.Time, evs []corev1.Event, visible bool) {
	m.eventsVisible = visible
	if m.next {
		return // about pods that existed before the trace
	}
	for i := range evs {
		m.eventSeen(eventTime(&evs[i]), &evs[i], true)
	}
}

// --- the watches ---

func (m *machine) podChanged(now time.Time, p *corev1.Pod, deleted bool) {
	if m.end != nil {
		return
	}
	if m.pod == nil {
		if deleted || !m.wants(p) {
			if len(m.passed) < maxPassed {
				m.passed[p.UID] = true
			}
			return
		}
		m.adopt(now, p, false)
	} else if p.UID != m.pod.UID {
		return
	}
	m.pod = p
	if deleted && !m.podDeleted {
		m.podDeleted, m.deletedAt = true, now
	}
	m.evaluate(now, false)
}

// podsRelisted replaces what the pod watch knew after a relist (410 Gone):
// the followed pod absent from the list was deleted meanwhile.
func (m *machine) podsRelisted(now time.Time, pods []corev1.Pod) {
	if m.end != nil {
		return
	}
	if m.pod != nil {
		for i := range pods {
			if pods[i].UID == m.pod.UID {
				m.podChanged(now, &pods[i], false)
				return
			}
		}
		m.podChanged(now, m.pod, true)
		return
	}
	sort.SliceStable(pods, func(i, j int) bool { return pods[i].CreationTimestamp.Before(&pods[j].CreationTimestamp) })
	for i := range pods {
		if m.wants(&pods[i]) {
			m.podChanged(now, &pods[i], false)
			return
		}
	}
}

func (m *machine) nodeChanged(now time.Time, n *corev1.Node, deleted bool) {
	if m.end != nil {
		return
	}
	if deleted {
		delete(m.nodes, n.Name)
		m.evaluate(now, false)
		return
	}
	st := m.nodes[n.Name]
	if st == nil {
		st = &nodeState{name: n.Name, created: n.CreationTimestamp.Time, seenAt: now, live: true}
		m.nodes[n.Name] = st
		m.classify(st, false)
	}
	ready, _ := nodeReady(n)
	if ready && !st.ready {
		st.readyAt = now
		if boot := now.Sub(st.seenAt); st.live && boot > 0 {
			m.boots = append(m.boots, boot) // joined, then Ready: a boot seen whole
		}
	}
	st.ready = ready
	st.notReady = notReadyDetail(n)
	m.evaluate(now, false)
}

func (m *machine) nodesRelisted(now time.Time, nodes []corev1.Node) {
	if m.end != nil {
		return
	}
	present := map[string]bool{}
	for i := range nodes {
		present[nodes[i].Name] = true
		m.nodeChanged(now, &nodes[i], false)
	}
	for name := range m.nodes {
		if !present[name] {
			delete(m.nodes, name)
		}
	}
	m.evaluate(now, false)
}

func (m *machine) eventChanged(now time.Time, ev *corev1.Event) {
	if m.end != nil {
		return
	}
	m.eventSeen(now, ev, false)
}

func (m *machine) eventSeen(at time.Time, ev *corev1.Event, hist bool) {
	if ev.InvolvedObject.Kind != "Pod" {
		return
	}
	if m.pod == nil {
		if uid := ev.InvolvedObject.UID; uid != "" && (m.preexisting[uid] || m.passed[uid]) {
			return // about a pod the trace will not follow
		}
		m.buffer(ev, at)
		return
	}
	if !m.about(ev) {
		return
	}
	m.applyEvent(at, ev)
	m.evaluate(at, hist)
}

// buffer keeps ev until the followed pod is known, at most maxBuffered in
// all. When full, the oldest event of the pod with the most is dropped, so
// a flood about one pod (or a few) pushes out its own events, not the few
// of the pod the trace is about to follow.
func (m *machine) buffer(ev *corev1.Event, at time.Time) {
	if len(m.buffered) == maxBuffered {
		count := map[string]int{}
		most := ""
		for _, b := range m.buffered {
			k := eventSubject(b.ev)
			count[k]++
			if count[k] > count[most] {
				most = k
			}
		}
		for i, b := range m.buffered {
			if eventSubject(b.ev) == most {
				m.buffered = append(m.buffered[:i], m.buffered[i+1:]...)
				break
			}
		}
	}
	m.buffered = append(m.buffered, bufferedEvent{ev: ev, at: at})
}

// eventSubject is the pod an event is about, as the event names it.
func eventSubject(ev *corev1.Event) string {
	o := ev.InvolvedObject
	return o.Namespace + "/" + o.Name + "/" + string(o.UID)
}

// about says whether ev is about the followed pod: the same pod, not one of
// the same name. An event that names its pod's UID is the pod's when the
// UID is; one without (a component that leaves it out) is the pod's only
// when it is from the pod's lifetime, so no event about an earlier pod of
// that name (a job pod recreated, a flood about the one before) counts.
func (m *machine) about(ev *corev1.Event) bool {
	o := ev.InvolvedObject
	if o.Name != m.pod.Name || o.Namespace != "" && o.Namespace != m.pod.Namespace {
		return false
	}
	if o.UID != "" {
		return o.UID == m.pod.UID
	}
	return !eventTime(ev).Before(m.pod.CreationTimestamp.Truncate(time.Second))
}

func (m *machine) applyEvent(at time.Time, ev *corev1.Event) {
	if d := ScaleDecision(ev); d != NoDecision && (m.decision == NoDecision || m.decision == NoScaleUp && d == ScaleUp) {
		if m.decision == NoDecision {
			m.decisionAt = at
		}
		m.decision, m.decisionMsg = d, ev.Reason+": "+ev.Message
	}
	if c := pulledContainer(ev); c != "" {
		m.pulled[c] = at
		m.pulledMsg = ev.Message
	}
	if ev.Type == corev1.EventTypeWarning {
		m.lastWarning = ev.Reason + ": " + ev.Message
	}
}

func (m *machine) wants(p *corev1.Pod) bool {
	if !m.next {
		return p.Name == m.podName
	}
	return !m.preexisting[p.UID] && IsJobPod(p) && fromRunner(p, m.runner)
}

// adopt makes p the followed pod: the nodes there are now are the cluster
// at N, unless they were created after it.
func (m *machine) adopt(now time.Time, p *corev1.Pod, hist bool) {
	m.pod = p
	for _, st := range m.nodes {
		m.classify(st, true)
	}
	for _, st := range m.nodes {
		if !m.everNew[st.name] {
			m.baseline++
		}
	}
	buffered := m.buffered
	m.buffered = nil
	for _, b := range buffered {
		if m.about(b.ev) {
			m.applyEvent(b.at, b.ev)
		}
	}
	m.evaluate(now, hist)
}

// classify records whether a node joined after the followed pod was
// created. Creation timestamps have whole seconds: a node there when the
// pod is first seen joined after it only if created in a later second; one
// that appears later joined after it unless created in an earlier second
// (its event was late).
func (m *machine) classify(st *nodeState, known bool) {
	if m.pod == nil {
		return
	}
	if _, done := m.everNew[st.name]; done {
		return
	}
	pod, node := m.pod.CreationTimestamp.Truncate(time.Second), st.created.Truncate(time.Second)
	if known {
		m.everNew[st.name] = node.After(pod)
	} else {
		m.everNew[st.name] = !node.Before(pod)
	}
}

// --- stages ---

func (m *machine) last() Stage {
	for s := Stage(NumStages); s >= 1; s-- {
		if m.steps[s] != nil {
			return s
		}
	}
	return 0
}

// evaluate reaches every stage the state now proves, in order. hist: the
// state is what the first lists found, so stage times come from the
// objects' own timestamps.
func (m *machine) evaluate(now time.Time, hist bool) {
	if m.end != nil || m.pod == nil {
		return
	}
	p := m.pod
	at := func(t time.Time) time.Time {
		if hist && !t.IsZero() {
			return t
		}
		return now
	}
	m.reach(StageCreated, at(p.CreationTimestamp.Time), fmt.Sprintf("pod %s/%s %s, cluster at %d nodes", p.Namespace, p.Name, phase(p), m.baseline))

	if m.decision != NoDecision {
		d := m.decisionMsg
		if m.decision == NoScaleUp {
			d = "no scale-up: " + d
		}
		m.reach(StageScaleDecision, m.decisionAt, d)
	}
	if st := m.newNode(false); st != nil {
		m.reach(StageNodeJoined, at2(hist, st.created, st.seenAt, now), fmt.Sprintf("node %s joined, cluster at %d nodes", st.name, len(m.nodes)))
	}
	if st := m.newNode(true); st != nil {
		d := fmt.Sprintf("node %s Ready", st.name)
		if boot := st.readyAt.Sub(st.seenAt); st.live && boot > 0 {
			d += fmt.Sprintf(", %s after it joined", round(boot))
		}
		m.reach(StageNodeReady, at2(hist, st.readyAt, st.readyAt, now), d)
	}
	if node := p.Spec.NodeName; node != "" {
		d := "placed on node " + node
		if m.onOldNode() {
			d += ", which existed before the pod"
		}
		m.reach(StageScheduled, at(scheduledAt(p)), d)
	}
	if p.Spec.NodeName != "" && m.imagesPulled(p) {
		d := "every container's image is on the node"
		if m.pulledMsg != "" {
			d = "Pulled: " + m.pulledMsg
		}
		m.reach(StageImagesPulled, at(m.lastPulled()), d)
	}
	if m.endedBeforeRunning(now) {
		return
	}
	if runningReady(p) {
		d := "Running"
		if containerStatus(p, BuildContainer) != nil {
			d += ", build container ready"
		}
		m.reach(StageRunning, at(readySince(p)), d)
	}
	if d, ok := m.finished(p); ok {
		m.reach(StageFinished, now, d)
	}
	if m.podDeleted {
		m.reach(StagePodDeleted, m.deletedAt, "pod deleted")
		switch {
		case !m.nodesVisible:
			m.reachSkipped(StageScaledDown, now, "the nodes cannot be listed with this credential")
		case m.scaledDown():
			m.reach(StageScaledDown, now, fmt.Sprintf("cluster back at %d nodes", len(m.nodes)))
		}
	}
	if m.steps[StageScaledDown] != nil && m.end == nil {
		m.end = m.verdict(now, true, "")
	}
}

func at2(hist bool, histT, liveT, now time.Time) time.Time {
	if hist && !histT.IsZero() {
		return histT
	}
	if !liveT.IsZero() {
		return liveT
	}
	return now
}

// endedBeforeRunning ends the trace stuck when the pod is deleted, or
// fails, before it ever ran: the runner gave up on it (poll_timeout), the
// job was cancelled, or the kubelet refused it.
func (m *machine) endedBeforeRunning(now time.Time) bool {
	p := m.pod
	if m.steps[StageRunning] != nil || p.Status.Phase == corev1.PodRunning || ran(p) {
		return false
	}
	var reason string
	switch {
	case m.podDeleted || p.DeletionTimestamp != nil:
		reason = fmt.Sprintf("the pod was deleted while waiting for %s: the runner gave up on it (poll_timeout %s) or the job was cancelled", m.cur, m.poll)
	case p.Status.Phase == corev1.PodFailed:
		reason = "the pod failed before it ran"
		if r := strings.TrimSpace(p.Status.Reason + ": " + p.Status.Message); r != ":" {
			reason += ": " + strings.Trim(r, ": ")
		}
	default:
		return false
	}
	m.end = m.verdict(now, false, reason)
	return true
}

func (m *machine) finished(p *corev1.Pod) (string, bool) {
	switch {
	case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		d := "pod " + string(p.Status.Phase)
		if t := buildTerminated(p); t != nil {
			d += fmt.Sprintf(", build exited %d", t.ExitCode)
		}
		return d, true
	case buildTerminated(p) != nil:
		return fmt.Sprintf("build container exited %d", buildTerminated(p).ExitCode), true
	case p.DeletionTimestamp != nil:
		return "the runner deleted the pod after the job (Terminating)", true
	}
	return "", false
}

func (m *machine) scaledDown() bool {
	if len(m.nodes) > m.baseline {
		return false
	}
	for name := range m.nodes {
		if m.everNew[name] {
			return false
		}
	}
	return true
}

// newNode is the node that joined for the pod: the one it is placed on when
// that one joined after it, else the first that joined (and, with ready,
// is Ready).
func (m *machine) newNode(ready bool) *nodeState {
	if st := m.nodes[m.pod.Spec.NodeName]; st != nil && m.everNew[st.name] && (!ready || st.ready) {
		return st
	}
	var best *nodeState
	for _, st := range m.nodes {
		if !m.everNew[st.name] || ready && !st.ready {
			continue
		}
		if best == nil || st.seenAt.Before(best.seenAt) || st.seenAt.Equal(best.seenAt) && st.name < best.name {
			best = st
		}
	}
	return best
}

// onOldNode: the pod is placed on a node that existed before it.
func (m *machine) onOldNode() bool {
	isNew, known := m.everNew[m.pod.Spec.NodeName]
	return known && !isNew
}

func (m *machine) imagesPulled(p *corev1.Pod) bool {
	names := containerNames(p)
	if len(names) == 0 {
		return false
	}
	for _, n := range names {
		if _, ok := m.pulled[n]; !ok && !statusPulled(containerStatus(p, n)) {
			return false
		}
	}
	return true
}

func (m *machine) lastPulled() time.Time {
	var t time.Time
	for _, at := range m.pulled {
		if at.After(t) {
			t = at
		}
	}
	return t
}

func readySince(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.ContainersReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	if cs := containerStatus(p, BuildContainer); cs != nil && cs.State.Running != nil {
		return cs.State.Running.StartedAt.Time
	}
	return time.Time{}
}

// reach marks s reached at at, first filling the stages before it that were
// not seen: skipped when the pod went to a node that needed no scale-up,
// inferred otherwise.
func (m *machine) reach(s Stage, at time.Time, detail string) {
	if m.steps[s] != nil {
		return
	}
	for j := m.last() + 1; j < s; j++ {
		d, skipped := m.fill(j)
		m.record(j, at, d, skipped, !skipped)
	}
	m.record(s, at, detail, false, false)
}

func (m *machine) reachSkipped(s Stage, at time.Time, detail string) {
	if m.steps[s] == nil {
		for j := m.last() + 1; j < s; j++ {
			d, skipped := m.fill(j)
			m.record(j, at, d, skipped, !skipped)
		}
		m.record(s, at, detail, true, false)
	}
}

func (m *machine) fill(j Stage) (detail string, skipped bool) {
	node := m.pod.Spec.NodeName
	switch {
	case j >= StageScaleDecision && j <= StageNodeReady && node != "" && m.onOldNode():
		return fmt.Sprintf("no scale-up needed: the pod was placed on node %s, which existed before it", node), true
	case j == StageScaleDecision:
		d := "no scale-decision event was seen"
		if !m.eventsVisible {
			d = "the events cannot be read with this credential"
		}
		if st := m.newNode(false); st != nil {
			return d + "; node " + st.name + " joined", false
		}
		return d + "; the pod was placed on node " + node, false
	case (j == StageNodeJoined || j == StageNodeReady) && !m.nodesVisible:
		return fmt.Sprintf("the nodes cannot be listed with this credential; the pod was placed on %s", node), false
	case j == StageNodeJoined:
		return fmt.Sprintf("the pod was placed on node %s, which joined unseen", node), false
	case j == StageNodeReady:
		return fmt.Sprintf("node %s: Ready not seen before the pod was placed on it", node), false
	case j == StageScheduled:
		return "placed on node " + node, false
	case j == StageImagesPulled:
		return "the containers started, so their images are on the node", false
	case j == StageRunning:
		return "Running not seen: the job ran between two observations", false
	case j == StageFinished:
		return "the pod was deleted while it ran: the runner's cleanup after the job", false
	}
	return "not seen", false
}

func (m *machine) record(s Stage, at time.Time, detail string, skipped, inferred bool) {
	var prev time.Time
	if l := m.last(); l > 0 {
		prev = m.steps[l].At
	} else if at.After(m.start) {
		prev = m.start // the wait for the next job pod
	} else {
		prev = at // a pod that existed before the trace
	}
	if at.Before(prev) {
		at = prev
	}
	st := &Step{Stage: s, At: at, SincePrev: at.Sub(prev), Detail: detail, Skipped: skipped, Inferred: inferred}
	m.steps[s] = st
	m.out = append(m.out, Record{Kind: KindStage, Step: *st})
	m.cur, m.curSince = s+1, at
}

// --- budgets ---

// DefaultPollTimeout is the runner's poll_timeout when config.toml sets
// none (gitlab-runner v19.2.1 common/consts.go KubernetesPollTimeout = 180).
const DefaultPollTimeout = 180 * time.Second

// DefaultBudget is the budget of stage s before any flag: how long the
// trace waits in s (from the moment the stage before it was reached)
// before it calls the stage stuck. Stages 2 to 7 also share poll_timeout,
// counted from the pod's creation (DefaultBudgets' doc). ok is false for a
// stage with no budget of its own.
func DefaultBudget(s Stage, poll time.Duration, boots []time.Duration) (time.Duration, bool) {
	switch s {
	case StageScaleDecision, StageScheduled:
		return clamp(poll/6, 30*time.Second, 2*time.Minute), true
	case StageNodeReady:
		if len(boots) == 0 {
			return 0, false
		}
		return max(30*time.Second, 2*median(boots)), true
	case StagePodDeleted:
		return 2 * time.Minute, true
	case StageScaledDown:
		return 20 * time.Minute, true
	}
	return 0, false
}

// deadline is when the stage the trace waits for is over budget, the
// budget itself and where it comes from.
func (m *machine) deadline() (dl time.Time, budget time.Duration, why string, ok bool) {
	if m.end != nil || m.cur > NumStages {
		return time.Time{}, 0, "", false
	}
	s := m.cur
	if b, set := m.budgets[s]; set {
		if b <= 0 {
			return time.Time{}, 0, "", false
		}
		return m.curSince.Add(b), b, "budget " + b.String() + " (flag)", true
	}
	if b, has := DefaultBudget(s, m.poll, m.boots); has {
		dl, budget, ok = m.curSince.Add(b), b, true
		why = "budget " + round(b).String()
		if s == StageNodeReady {
			why += fmt.Sprintf(" (twice the median of %d node boots seen)", len(m.boots))
		}
	}
	if s >= StageScaleDecision && s <= StageRunning && m.steps[StageCreated] != nil {
		if c := m.steps[StageCreated].At.Add(m.poll); !ok || c.Before(dl) {
			dl, budget, ok = c, c.Sub(m.curSince), true
			why = fmt.Sprintf("poll_timeout %s since the pod was created: the runner stops waiting (timed out waiting for pod to start)", m.poll)
		}
	}
	return dl, budget, why, ok
}

// checkBudget makes the over-budget line once per stage.
func (m *machine) checkBudget(now time.Time) (Stage, bool) {
	dl, budget, why, ok := m.deadline()
	if !ok || now.Before(dl) || m.over[m.cur] {
		return 0, false
	}
	s := m.cur
	m.over[s] = true
	detail := why
	if w := m.waitingOn(); w != "" {
		detail += "; " + w
	}
	m.out = append(m.out, Record{Kind: KindOverBudget, Step: Step{Stage: s, At: now, Detail: detail},
		Waited: now.Sub(m.curSince), Budget: budget, Checks: StageChecks[s]})
	return s, true
}

// waitingOn says what the current stage waits on, as last seen.
func (m *machine) waitingOn() string {
	p := m.pod
	if p == nil {
		if m.next {
			return "no new job pod in " + m.namespace
		}
		return fmt.Sprintf("no pod %s in %s", m.podName, m.namespace)
	}
	switch m.cur {
	case StageScaleDecision:
		w := "no scale-decision event about the pod"
		if !m.eventsVisible {
			w = "the events cannot be read with this credential"
		}
		if m.lastWarning != "" {
			w += "; last warning " + m.lastWarning
		}
		return w
	case StageNodeJoined:
		return fmt.Sprintf("%d nodes; %s", len(m.nodes), m.decisionMsg)
	case StageNodeReady:
		if st := m.newNode(false); st != nil {
			return fmt.Sprintf("node %s not Ready: %s", st.name, st.notReady)
		}
	case StageScheduled:
		if m.lastWarning != "" {
			return "last warning " + m.lastWarning
		}
		return fmt.Sprintf("%d nodes, the pod is not placed", len(m.nodes))
	case StageImagesPulled, StageRunning:
		if w := waitingDetail(p); w != "" {
			return w
		}
		if m.lastWarning != "" {
			return "last warning " + m.lastWarning
		}
		return "phase " + string(p.Status.Phase)
	case StageFinished:
		return "the pod is Running; the job has not ended"
	case StagePodDeleted:
		if p.DeletionTimestamp != nil {
			return "Terminating since " + p.DeletionTimestamp.UTC().Format(time.RFC3339)
		}
		return "phase " + string(p.Status.Phase) + ", not deleted"
	case StageScaledDown:
		names := make([]string, 0, len(m.nodes))
		for n := range m.nodes {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Sprintf("%d nodes remain (%s), %d before the pod", len(m.nodes), strings.Join(names, ", "), m.baseline)
	}
	return ""
}

// verdict is the trace's end as of now.
func (m *machine) verdict(now time.Time, completed bool, reason string) *Verdict {
	v := &Verdict{Completed: completed, Namespace: m.namespace, Pod: m.podName, At: now, Duration: now.Sub(m.start)}
	if m.pod != nil {
		v.Pod, v.Phase = m.pod.Name, m.pod.Status.Phase
	}
	for s := Stage(1); s <= NumStages; s++ {
		if m.steps[s] != nil {
			v.Timeline = append(v.Timeline, *m.steps[s])
		}
	}
	if !completed {
		v.Stuck, v.Reason, v.Detail, v.Waited = m.cur, reason, m.waitingOn(), now.Sub(m.curSince)
		if v.Stuck > NumStages {
			v.Stuck = NumStages
		}
	}
	return v
}

func notReadyDetail(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return strings.Trim(fmt.Sprintf("Ready=%s %s %s", c.Status, c.Reason, c.Message), " ")
		}
	}
	return "no Ready condition yet"
}

func phase(p *corev1.Pod) string {
	if p.Status.Phase == "" {
		return string(corev1.PodPending)
	}
	return string(p.Status.Phase)
}

func clamp(d, lo, hi time.Duration) time.Duration { return min(max(d, lo), hi) }

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
