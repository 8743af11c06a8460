package kubefacts

import (
	"path"
	"sort"
	"strings"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/socialwebcomputer/doctor/internal/hostio"
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

// ContextFor is the context a runner's client-go is told: --context when
// the operator gave one, else [runners.kubernetes] context.
func ContextFor(env *hostio.Env, r *runnerconfig.Runner) string {
	if env.ContextOverride != "" {
		return env.ContextOverride
	}
	return ContextOf(r)
}

// ContextOf is [runners.kubernetes] context, "" when unset.
func ContextOf(r *runnerconfig.Runner) string {
	if r.Kubernetes != nil {
		return r.Kubernetes.Context
	}
	return ""
}

// DefaultRootConfigDir is /etc/gitlab-runner, where the guide installs the
// kubeconfig.
const DefaultRootConfigDir = "/etc/gitlab-runner"

// CandidateKubeconfigs are the files under dirs (and one level below) that
// parse as kubeconfigs with a cluster: what a fix can name when the runner
// is given none. Sorted, de-duplicated, at most 200 entries looked at.
func CandidateKubeconfigs(env *hostio.Env, dirs ...string) []string {
	var out []string
	seen := map[string]bool{}
	looked := 0
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		ents, err := env.ReadDir(dir)
		if err != nil {
			return
		}
		for _, ent := range ents {
			if looked++; looked > 200 {
				return
			}
			p := path.Join(dir, ent.Name())
			if ent.IsDir() {
				if depth > 0 {
					walk(p, depth-1)
				}
				continue
			}
			ext := path.Ext(p)
			if seen[p] || (ext != ".yaml" && ext != ".yml" && !strings.Contains(ent.Name(), "kubeconfig")) {
				continue
			}
			seen[p] = true
			if b, err := env.ReadFile(p); err == nil {
				if cfg, err := clientcmd.Load(b); err == nil && len(cfg.Clusters) > 0 {
					out = append(out, p)
				}
			}
		}
	}
	for _, d := range dirs {
		walk(d, 1)
	}
	sort.Strings(out)
	return out
}
