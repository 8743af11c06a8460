package configfacts

import (
	"fmt"
	"os"
	"strings"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// RunnerPath is where doctor reads a path the runner opens: through
// /proc/<pid>/root when that shows it (doctor beside the runner's
// container, on its node or in a debug container, sees the container's
// mounts there), else under the root as given (doctor in the runner's own
// container, or a fixture).
func RunnerPath(env *hostio.Env, proc *hostfacts.Process, p string) string {
	if proc == nil || p == "" || p[0] != '/' {
		return p
	}
	via := fmt.Sprintf("/proc/%d/root%s", proc.PID, p)
	vst, err := env.Stat(via)
	if err != nil {
		return p
	}
	// Doctor in the runner's own mount namespace sees the same file both
	// ways: keep the path the runner names.
	if st, err := env.Stat(p); err == nil && os.SameFile(st, vst) {
		return p
	}
	return via
}

func orPath(p, def string) string {
	if p != "" {
		return p
	}
	return def
}

// podMount says, for a path in a pod's container, which kubelet volume
// holds it, from /proc/<pid>/mountinfo: an emptyDir is filled at start
// (the guide's init container copies config.toml from a Secret into one),
// so what is changed there is lost on the next start. "" when not a
// kubelet volume or unknown.
func podMount(env *hostio.Env, proc *hostfacts.Process, p string) string {
	b, err := env.ReadProc(fmt.Sprintf("/proc/%d/mountinfo", proc.PID))
	if err != nil {
		return ""
	}
	best, root := "", ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := f[4]
		if (p == mp || strings.HasPrefix(p, strings.TrimSuffix(mp, "/")+"/")) && len(mp) > len(best) {
			best, root = mp, f[3]
		}
	}
	for _, kind := range []string{"kubernetes.io~empty-dir", "kubernetes.io~secret", "kubernetes.io~configmap"} {
		if _, vol, ok := strings.Cut(root, "/volumes/"+kind+"/"); ok {
			what := strings.TrimPrefix(kind, "kubernetes.io~")
			note := fmt.Sprintf(" (%s is the pod's %s volume %q", best, what, strings.SplitN(vol, "/", 2)[0])
			if what == "empty-dir" {
				note += ": filled when the pod starts, by an init container, so change the file at its source, the Secret it is copied from"
			}
			return note + ")"
		}
	}
	return ""
}
