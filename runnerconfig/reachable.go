package runnerconfig

// Waiting says whether the runner sets FF_WAIT_FOR_POD_TO_BE_REACHABLE, and
// where.
type Waiting struct {
	On     bool
	Source string // "[runners.feature_flags]", "[[runners]] environment", ""
}

// WaitsForReachable reads the flag as the runner resolves it
// (FeatureFlag: [runners.feature_flags], then the runner's
// environment entries, then the default off). A CI/CD variable of a
// project may still set it; doctor cannot see those.
func WaitsForReachable(r *Runner) Waiting {
	on, src := FeatureFlag(r, FFWaitForPodToBeReachable)
	if src == SourceDefault {
		return Waiting{On: on}
	}
	if src == SourceEnvironment {
		src = "[[runners]] environment"
	}
	return Waiting{On: on, Source: src}
}

// Consequence says what the flag changes for a job on an unattachable node.
func (w Waiting) Consequence() string {
	if w.On {
		return "FF_WAIT_FOR_POD_TO_BE_REACHABLE is set (" + w.Source + "), so a job polls pods/log every poll_interval " +
			"for poll_attempts and fails only with `timed out waiting for pod to become attachable` if the kubelet never answers."
	}
	// executors/kubernetes/kubernetes.go waitForPod and util.go
	// WaitForPodReachable, v19.3.0.
	return "The runner does not set FF_WAIT_FOR_POD_TO_BE_REACHABLE, so it attaches the moment the pod is Running and the job " +
		"fails at once; with the flag it polls pods/log every poll_interval for poll_attempts until the kubelet answers, " +
		"which rides out a certificate approved a few seconds late."
}
