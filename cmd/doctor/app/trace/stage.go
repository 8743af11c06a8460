package trace

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Stage is one step of a job pod's life on a cluster that rests at zero
// nodes, in the order the guide's "Verify" step 3 reads them.
type Stage int

const (
	StageCreated       Stage = iota + 1 // the job pod exists, Pending, with the cluster at N nodes
	StageScaleDecision                  // a scale decision about the pod was seen (an event)
	StageNodeJoined                     // a node created after the pod joined
	StageNodeReady                      // that node is Ready
	StageScheduled                      // the pod is bound to a node
	StageImagesPulled                   // every container's image is on the node
	StageRunning                        // phase Running, the build container ready
	StageFinished                       // the job ended (terminal phase, build exited, or the runner's cleanup began)
	StagePodDeleted                     // the pod is gone
	StageScaledDown                     // the cluster is back at the N nodes it had before the pod
)

// NumStages is how many stages a trace follows.
const NumStages = 10

var stageNames = [...]string{"", "created", "scale-decision", "node-joined", "node-ready", "scheduled",
	"images-pulled", "running", "finished", "pod-deleted", "scaled-down"}

// Stages lists every stage in order.
func Stages() []Stage {
	out := make([]Stage, NumStages)
	for i := range out {
		out[i] = Stage(i + 1)
	}
	return out
}

func (s Stage) String() string {
	if s < 1 || s > NumStages {
		return fmt.Sprintf("stage(%d)", int(s))
	}
	return stageNames[s]
}

// Valid reports whether s is one of the ten stages.
func (s Stage) Valid() bool { return s >= 1 && s <= NumStages }

// MarshalText writes a stage as its name.
func (s Stage) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads what ParseStage reads.
func (s *Stage) UnmarshalText(b []byte) error {
	v, err := ParseStage(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseStage reads a stage by name (node-ready) or number (4).
func ParseStage(s string) (Stage, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if n, err := strconv.Atoi(s); err == nil && Stage(n).Valid() {
		return Stage(n), nil
	}
	for i := 1; i <= NumStages; i++ {
		if stageNames[i] == s {
			return Stage(i), nil
		}
	}
	return 0, fmt.Errorf("unknown stage %q: want one of %s (or 1-%d)", s, strings.Join(stageNames[1:], ", "), NumStages)
}

// StageChecks are the doctor checks that explain a trace stuck waiting for
// a stage: what the CLI runs (OnStuck) when the stage exceeds its budget.
//
//   - created: no job pod appeared: the runner is down, not fed jobs, or
//     cannot create pods in its namespace.
//   - scale-decision, node-joined: nothing rented a node (the guide's "Job
//     stays pending, no node appears"), a pause pod holds the decision, or,
//     on a cluster with nodes, the pod fits none of them and nothing scales
//     for it (pending-unschedulable, which says nothing at zero nodes).
//   - node-ready: a node joined and never became Ready; pending-no-node says
//     how long the pod has waited against poll_timeout.
//   - scheduled: a node exists and the pod does not fit it ("Pod Pending
//     forever on a node that exists").
//   - images-pulled: "ImagePullBackOff after a node boot".
//   - running, finished: the pod is about to run or runs and the job hangs
//     at "Preparing the environment": the exec upgrade; a running job that
//     never ends may also be stuck at its clone (node-local DNS, GitLab
//     reachability).
//   - pod-deleted: the runner that should clean up is gone.
//   - scaled-down: "The cluster never returns to zero".
var StageChecks = map[Stage][]string{
	StageCreated:       {"runner-process", "runner-service", "runner-token", "namespace", "runner-rbac"},
	StageScaleDecision: {"pending-no-node", "pending-unschedulable", "scale-to-zero"},
	StageNodeJoined:    {"pending-no-node", "pending-unschedulable", "scale-to-zero"},
	StageNodeReady:     {"pending-no-node"},
	StageScheduled:     {"pending-unschedulable"},
	StageImagesPulled:  {"image-pull"},
	StageRunning:       {"exec-upgrade"},
	StageFinished:      {"exec-upgrade", "node-local-dns", "gitlab-reachability"},
	StagePodDeleted:    {"runner-process", "runner-service"},
	StageScaledDown:    {"scale-to-zero"},
}

// ParseBudgets reads --budget flags, each STAGE=DURATION (node-ready=5m,
// 4=5m); a duration of 0 turns the stage's budget off.
func ParseBudgets(flags []string) (map[Stage]time.Duration, error) {
	out := map[Stage]time.Duration{}
	for _, f := range flags {
		for _, part := range strings.Split(f, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			name, val, ok := strings.Cut(part, "=")
			if !ok {
				return nil, fmt.Errorf("--budget %q: want STAGE=DURATION, e.g. node-ready=5m", part)
			}
			s, err := ParseStage(name)
			if err != nil {
				return nil, fmt.Errorf("--budget %q: %w", part, err)
			}
			d, err := time.ParseDuration(strings.TrimSpace(val))
			if err != nil {
				if n, e := strconv.Atoi(strings.TrimSpace(val)); e == nil {
					d, err = time.Duration(n)*time.Second, nil
				}
			}
			if err != nil || d < 0 {
				return nil, fmt.Errorf("--budget %q: want a duration (90s, 5m) or whole seconds", part)
			}
			out[s] = d
		}
	}
	return out, nil
}

// FormatBudgets writes budgets back as STAGE=DURATION, in stage order.
func FormatBudgets(b map[Stage]time.Duration) string {
	keys := make([]Stage, 0, len(b))
	for s := range b {
		keys = append(keys, s)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	parts := make([]string, len(keys))
	for i, s := range keys {
		parts[i] = s.String() + "=" + b[s].String()
	}
	return strings.Join(parts, ",")
}
