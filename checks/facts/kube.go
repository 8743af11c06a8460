package facts

import (
	"strings"

	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// KubeconfigRunners are the [[runners]] that load the kubeconfig: the
// Kubernetes executor with no host, which is the branch of the runner's
// getKubeClientConfig that calls client-go's default loading rules.
func KubeconfigRunners(cfg *runnerconfig.Config) []int {
	var out []int
	for i, r := range cfg.Runners {
		if r.Executor == "kubernetes" && (r.Kubernetes == nil || r.Kubernetes.Host == "") {
			out = append(out, i)
		}
	}
	return out
}

// EnvironmentValue finds NAME=value in a [[runners]] environment list, which
// reaches the job container and never the runner process.
func EnvironmentValue(env []string, name string) (string, bool) {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// ContextOf is [runners.kubernetes] context, "" when unset.
func ContextOf(r *runnerconfig.Runner) string {
	if r.Kubernetes != nil {
		return r.Kubernetes.Context
	}
	return ""
}
