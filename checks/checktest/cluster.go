//go:build integration

package checktest

import (
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// OwnerDID is the cluster owner a Live runner's certificate names (CN),
// as getKubeconfig hands it out.
const OwnerDID = "did:plc:ewvi7nxzyoun6zhxrhs64oiz"

// Live is a real cluster for a check's live cases: kube-apiserver and etcd
// on loopback (testkit/testenv), shaped as the gateway shapes a
// tenant cluster (the owners' group bound to cluster-admin), and a host
// whose runner holds an owner's kubeconfig for it.
type Live struct {
	*testenv.Env
	Root *testroot.Root
	// Opts are given to every Check of the cluster (Cluster's opts): the
	// gate of a check that reads it (apigatetest.With).
	Opts []Option
}

// Cluster starts a Live cluster for t (stopped when t ends) and lays out a
// host whose runner runs config (testroot.GuideConfig when "") with a
// kubeconfig for the owner valid 12 hours. Shape the cluster with Env's
// helpers (EnsureNamespace, CreatePod, Apply...) before Check reads it.
// A missing binary or a failed start fails the test: build the binaries
// with `bash scripts/build-tools.sh`.
func Cluster(t *testing.T, config string, opts ...Option) *Live {
	t.Helper()
	env := testenv.Start(t)
	env.BindOwnersToClusterAdmin()
	if config == "" {
		config = testroot.GuideConfig
	}
	root := testroot.New(t)
	root.GuideRunner(config, env.OwnerKubeconfigBytes(OwnerDID, time.Now().Add(12*time.Hour)))
	return &Live{Env: env, Root: root, Opts: opts}
}

// Check runs c against the live host and cluster: Check with Root(l.Root.Dir)
// and the cluster's Opts.
func (l *Live) Check(t testing.TB, c *checks.Check, opts ...Option) []checks.CheckResult {
	t.Helper()
	all := append(append([]Option{Root(l.Root.Dir)}, l.Opts...), opts...)
	return Check(t, c, all...)
}

// Kubeconfig is a kubeconfig for cert and key at the cluster, for a case
// that gives the runner another identity (testroot.Root.GuideRunner).
func (l *Live) Kubeconfig(certPEM, keyPEM []byte) []byte {
	return testpki.Kubeconfig("tenant-ci", l.URL, l.CAPEM, certPEM, keyPEM)
}
